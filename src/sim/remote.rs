//! Deciding through an external store (a real Redis) while the in-memory model runs beside it.
//!
//! The engine stays generic over [`Gate`]; a [`Shadowed`] gate asks the in-memory limiter first
//! (its state gives the accuracy estimate and the memory figures) and then the [`Remote`],
//! whose decision the run follows. The remote sees both decisions, so the same path serves
//! `rlsim run --store` (the remote's decision drives the run) and `rlsim verify` (each
//! decision compared). This module knows no Redis: the store module implements [`Remote`].

use super::engine::{Detail, Gate};
use crate::algorithms::{Decision, KeyId, KeyedLimiter, Limiter, LimiterSpec};
use crate::error::Result;
use crate::time::Nanos;
use crate::traffic::Arrival;

/// One algorithm's decisions made by an external store.
pub trait Remote: Send {
    /// Decides on `arrival` in the store. `model` is the in-memory limiter's decision for the
    /// same request; the returned decision is the one the run follows. A failure cannot stop
    /// the engine here: the remote keeps it, answers without the store from then on, and
    /// [`Remote::finish`] returns it.
    fn decide(&mut self, arrival: &Arrival, model: &Decision) -> Decision;

    /// After the run: what was compared, or the first failure. Called once.
    fn finish(&mut self) -> Result<Tally>;
}

/// Opens a [`Remote`] per algorithm of a run.
pub trait RemoteFactory: Sync {
    /// The remote for the contender named `name` (index `index` in the scenario), which
    /// runs `limiter`.
    fn open(&self, index: usize, name: &str, limiter: LimiterSpec) -> Result<Box<dyn Remote>>;
}

/// The in-memory limiter with a remote deciding beside it.
pub struct Shadowed<L: Limiter> {
    /// The in-memory model: its decisions give the accuracy estimate and the memory figures.
    pub keyed: KeyedLimiter<L>,
    /// The store, whose decisions the run follows.
    pub remote: Box<dyn Remote>,
}

impl<L: Limiter> Gate for Shadowed<L> {
    fn estimate(&self, arrival: &Arrival) -> Option<f64> {
        self.keyed.estimate(arrival.key, arrival.time)
    }

    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>) {
        let model = self.keyed.decide_n(arrival.key, arrival.time, arrival.cost);
        (self.remote.decide(arrival, &model), Detail::default())
    }

    fn evict_idle(&mut self, now: Nanos) {
        // Only the model's memory: the store's keys carry their own (virtual) expiry.
        self.keyed.evict_idle(now)
    }
}

/// The first decision on which the store and the model differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disagreement {
    /// 1-based position among the algorithm's decisions.
    pub request: u64,
    /// The request's time, in ns of virtual time.
    pub time: Nanos,
    /// The request's key.
    pub key: KeyId,
    /// The in-memory model's decision.
    pub model: Decision,
    /// The store's decision.
    pub store: Decision,
}

/// One algorithm's comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    /// The name of the algorithm compared.
    pub algorithm: String,
    /// The script that stored it; `None` when no script does (the model ran alone).
    pub script: Option<&'static str>,
    /// Decisions made by both.
    pub decisions: u64,
    /// Decisions equal in every field (outcome, retry-after or delay, remaining, reset).
    pub agreed: u64,
    /// Decisions whose admission (admitted or refused) agrees.
    pub admissions_agreed: u64,
    /// The first decision on which they differ in any field; `None` when all agreed.
    pub first: Option<Disagreement>,
}

impl Tally {
    /// An empty comparison of `algorithm`, stored by `script` (`None`: the model ran alone).
    pub fn new(algorithm: &str, script: Option<&'static str>) -> Tally {
        Tally {
            algorithm: algorithm.to_string(),
            script,
            decisions: 0,
            agreed: 0,
            admissions_agreed: 0,
            first: None,
        }
    }

    /// Counts one decision on `arrival` made by both, the model's `model` and the store's
    /// `store`, keeping the first on which they differ.
    pub fn record(&mut self, arrival: &Arrival, model: &Decision, store: &Decision) {
        self.decisions += 1;
        if model == store {
            self.agreed += 1;
        } else if self.first.is_none() {
            self.first = Some(Disagreement {
                request: self.decisions,
                time: arrival.time,
                key: arrival.key,
                model: *model,
                store: *store,
            });
        }
        if model.outcome.is_admitted() == store.outcome.is_admitted() {
            self.admissions_agreed += 1;
        }
    }

    /// Every decision agreed (vacuously so for an algorithm without a script).
    pub fn exact(&self) -> bool {
        self.agreed == self.decisions
    }
}
