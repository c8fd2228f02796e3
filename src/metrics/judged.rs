//! Per real client, against the intent: the exact limiter's verdicts (wrongly allowed and
//! rejected) and the rolling windows (violations, the worst window, needless and collateral
//! rejections), each client held to its own entitlement.
//!
//! While every request's client is its key (the common case: `key = "user"`) and the intent
//! gives every client the same entitlement, the per-key tallies already judge each client:
//! the recorder runs none of this. The first request whose client is not its key starts it
//! ([`Judged::from_keys`]: each client's state, and every count so far, is then its key's);
//! an intent with tiers starts it with the run.

use super::accuracy::{Accuracy, AccuracyPart};
use super::burst::{Bursts, BurstsPart};
use super::dense::Parts;
use super::intent::Bounds;
use super::per_key::KeyEntry;
use super::timelog::TimeLog;
use super::windows::History;
use crate::algorithms::Outcome;
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId};

/// One client's state: its log under the exact limiter of the intent, and its admissions.
#[derive(Debug, Default)]
pub(super) struct JudgedEntry {
    exact: TimeLog,
    history: History,
}

pub(super) struct Judged {
    accuracy: Accuracy,
    bursts: Bursts,
    clients: Vec<JudgedEntry>,
}

impl Judged {
    /// A judge of every client from the run's start; `clients`: those to make room for.
    pub fn new(bounds: Bounds, clients: usize) -> Self {
        Judged {
            accuracy: Accuracy::new(bounds.clone()),
            bursts: Bursts::new(bounds),
            clients: Vec::with_capacity(clients),
        }
    }

    /// The judge the per-key tallies have been so far, while each client was its key: their
    /// state of key `i` becomes client `i`'s.
    #[cold]
    pub fn from_keys(accuracy: &Accuracy, bursts: &Bursts, keys: &[KeyEntry]) -> Self {
        Judged {
            accuracy: accuracy.clone(),
            bursts: bursts.clone(),
            clients: keys
                .iter()
                .map(|k| JudgedEntry {
                    exact: k.exact.clone(),
                    history: k.history.clone(),
                })
                .collect(),
        }
    }

    /// One decision on a request of `a.client` (flags of [`super::harm`]).
    #[inline]
    pub fn on_decision(&mut self, a: &Arrival, outcome: Outcome, flags: u8) {
        let (t, client) = (a.time, a.client);
        self.bursts.judge_due(self.clients.as_mut_slice(), t);
        let e = super::dense::slot(&mut self.clients, client);
        let admitted = outcome.is_admitted();
        self.accuracy
            .on_decision(client, &mut e.exact, t, admitted, None, || 0);
        match outcome {
            Outcome::Allow => {
                self.bursts.on_admit(client, &mut e.history, t, a.source);
            }
            Outcome::Delay(_) => {} // admitted at its release
            Outcome::Reject { .. } => {
                self.bursts
                    .on_reject(client, &mut e.history, t, a.source, flags)
            }
        }
    }

    /// A delayed request of `client` from `source` reaches the backend at `time`.
    #[inline]
    pub fn on_admit(&mut self, client: ClientId, source: u16, time: Nanos) {
        self.bursts.judge_due(self.clients.as_mut_slice(), time);
        let e = super::dense::slot(&mut self.clients, client);
        self.bursts.on_admit(client, &mut e.history, time, source);
    }

    /// Frees what `now` allows.
    pub fn sweep(&mut self, now: Nanos) {
        self.bursts.sweep(self.clients.as_mut_slice(), now);
        self.accuracy.sweep(self.clients.as_mut_slice(), now);
    }

    pub fn finish(mut self) -> (AccuracyPart, BurstsPart) {
        let bursts = self.bursts.finish(self.clients.as_mut_slice());
        (self.accuracy.finish(), bursts)
    }
}

impl Parts<History> for [JudgedEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut History {
        &mut self[id as usize].history
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

impl Parts<TimeLog> for [JudgedEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut TimeLog {
        &mut self[id as usize].exact
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}
