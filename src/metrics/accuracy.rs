//! Accuracy tally: each decision against the exact limiter's (a shadow sliding-window log fed
//! the same arrivals), and the error of algorithms that estimate the rolling count.

use crate::algorithms::{KeyId, KeyedLimiter, Params, SlidingWindowLog};
use crate::time::Nanos;

pub(super) struct Accuracy {
    exact: KeyedLimiter<SlidingWindowLog>,
    wrongly_allowed: u64,
    wrongly_rejected: u64,
    /// Sum of |estimate − true| / true, floating point: it only feeds a reported mean.
    estimate_error_sum: f64,
    estimates: u64,
}

pub(super) struct AccuracyPart {
    pub wrongly_allowed: u64,
    pub wrongly_rejected: u64,
    pub mean_rate_error: Option<f64>,
}

impl Accuracy {
    pub fn new(policy: Params) -> Self {
        let exact = SlidingWindowLog::new(policy).expect("the policy was validated");
        Accuracy {
            exact: KeyedLimiter::new(exact),
            wrongly_allowed: 0,
            wrongly_rejected: 0,
            estimate_error_sum: 0.0,
            estimates: 0,
        }
    }

    /// One decision. `estimate` is the algorithm's estimate of the key's rolling count before
    /// it; `truth` gives the true count (asked only when there is an estimate).
    #[inline]
    pub fn on_decision(
        &mut self,
        key: KeyId,
        t: Nanos,
        admitted: bool,
        estimate: Option<f64>,
        truth: impl FnOnce() -> u64,
    ) {
        if let Some(estimate) = estimate {
            let truth = truth();
            if truth > 0 {
                self.estimate_error_sum += (estimate - truth as f64).abs() / truth as f64;
                self.estimates += 1;
            }
        }
        if self.exact.decide(key, t).outcome.is_admitted() != admitted {
            if admitted {
                self.wrongly_allowed += 1;
            } else {
                self.wrongly_rejected += 1;
            }
        }
    }

    pub fn sweep(&mut self, now: Nanos) {
        self.exact.evict_idle(now);
    }

    pub fn finish(&self) -> AccuracyPart {
        AccuracyPart {
            wrongly_allowed: self.wrongly_allowed,
            wrongly_rejected: self.wrongly_rejected,
            mean_rate_error: (self.estimates > 0)
                .then(|| self.estimate_error_sum / self.estimates as f64),
        }
    }
}
