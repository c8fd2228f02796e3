//! Deciding through an external store (a real Redis) while the in-memory model runs beside it.
//!
//! The engine stays generic over [`Gate`]; a [`Shadowed`] gate asks the in-memory limiter first
//! (its state gives the accuracy estimate and the memory figures) and then the [`Remote`],
//! whose decision the run follows. The remote sees both decisions, so the same path serves
//! `rlsim run --store` (the remote's decision drives the run) and `rlsim verify` (each
//! decision compared). This module knows no Redis: the store module implements [`Remote`].

use super::engine::{Detail, Gate};
use crate::algorithms::{Decision, KeyedLimiter, Limiter};
use crate::error::Result;
use crate::scenario::AlgorithmSpec;
use crate::time::Nanos;
use crate::traffic::Arrival;
use std::any::Any;

/// One algorithm's decisions made by an external store.
pub trait Remote: Send {
    /// Decides on `arrival` in the store. `model` is the in-memory limiter's decision for the
    /// same request; the returned decision is the one the run follows. A failure cannot stop
    /// the engine here: the remote keeps it, answers without the store from then on, and
    /// [`Remote::finish`] returns it.
    fn decide(&mut self, arrival: &Arrival, model: &Decision) -> Decision;

    /// After the run: the first failure, if any. Called once.
    fn finish(&mut self) -> Result<()>;
}

/// Opens a [`Remote`] per algorithm of a run.
pub trait RemoteFactory: Sync {
    /// The remote for the algorithm `spec` (index `index` in the scenario), whose concrete
    /// in-memory limiter is `limiter` (to read its configuration).
    fn open(
        &self,
        index: usize,
        spec: &AlgorithmSpec,
        limiter: &dyn Any,
    ) -> Result<Box<dyn Remote>>;
}

/// The in-memory limiter with a remote deciding beside it.
pub struct Shadowed<L: Limiter> {
    pub keyed: KeyedLimiter<L>,
    pub remote: Box<dyn Remote>,
}

impl<L: Limiter> Gate for Shadowed<L> {
    fn estimate(&self, arrival: &Arrival) -> Option<f64> {
        self.keyed.estimate(arrival.key, arrival.time)
    }

    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>) {
        let model = self.keyed.decide(arrival.key, arrival.time);
        (self.remote.decide(arrival, &model), Detail::default())
    }

    fn evict_idle(&mut self, now: Nanos) {
        // Only the model's memory: the store's keys carry their own (virtual) expiry.
        self.keyed.evict_idle(now)
    }
}
