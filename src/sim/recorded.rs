//! The recorded contender (`recorded = true`): it decides each replayed request as the trace
//! says production (or a probed service) decided it, so the harness judges that system against
//! the scenario's intent exactly as it judges a model.

use super::engine::{Capture, Detail, Gate};
use super::harness::{ARRIVAL_CAPTURE_LIMIT, Captured, Contest, Setup, time_gate};
use crate::algorithms::{Decision, MemoryUsage, Outcome, Params};
use crate::error::Result;
use crate::metrics::Timing;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace, Production, Verdict};

/// Production's decision of one arrival: refused when the record says its limiter refused and
/// the request was not served (a dry run's `would_refuse` was served), or, with a status only,
/// when that status is the contender's `refuse_status`.
pub(crate) fn production_refused(arrival: &Arrival, refuse_status: u16) -> bool {
    match arrival.logged.verdict() {
        Some(Verdict::Decided(p)) => p == Production::Refused,
        Some(v) => v.refused(refuse_status),
        None => false,
    }
}

/// Decides from the arrival's record; keeps no state.
pub(super) struct RecordedGate {
    refuse_status: u16,
    /// What a refusal's `Retry-After` is taken to be: the record holds none.
    retry_after: Nanos,
}

impl Gate for RecordedGate {
    fn estimate(&self, _: &Arrival) -> Option<f64> {
        None
    }
    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>) {
        let decision = if production_refused(arrival, self.refuse_status) {
            Decision {
                outcome: Outcome::Reject {
                    retry_after: self.retry_after,
                },
                remaining: 0,
                reset_at: arrival.time.saturating_add(self.retry_after),
            }
        } else {
            Decision::allow(0, arrival.time)
        };
        (decision, Detail::default())
    }
    fn evict_idle(&mut self, _: Nanos) {}
}

/// The recorded contender's part of a run.
pub(super) struct RecordedContest {
    pub params: Params,
    pub refuse_status: u16,
    pub capture: usize,
}

impl RecordedContest {
    /// `params` size the row's judgement (the policy's).
    pub fn new(setup: &Setup, params: Params) -> RecordedContest {
        RecordedContest {
            params,
            refuse_status: setup.contender.refuse_status,
            capture: if setup.timed {
                ARRIVAL_CAPTURE_LIMIT
            } else {
                0
            },
        }
    }
}

impl Contest for RecordedContest {
    type Gate = Captured<RecordedGate>;

    fn gate(&mut self, _: &Setup, _: &KeySpace) -> Result<Self::Gate> {
        let gate = RecordedGate {
            refuse_status: self.refuse_status,
            retry_after: self.params.window.max(1),
        };
        Ok(Captured::new(gate, self.capture))
    }
    fn params(&self) -> Params {
        self.params
    }
    fn evict_every(&self) -> Nanos {
        self.params.window
    }
    fn memory(&self, _: &mut Self::Gate) -> (MemoryUsage, MemoryUsage) {
        (MemoryUsage::default(), MemoryUsage::default())
    }
    fn time(self, mut gate: Self::Gate, _: &Capture) -> Timing {
        time_gate(&mut gate.gate, &gate.arrivals, self.params.window)
    }
}
