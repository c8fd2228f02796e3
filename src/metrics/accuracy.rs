//! Accuracy tally: each decision against the exact limiter's (a shadow sliding-window log fed
//! the same arrivals), and the error of algorithms that estimate the rolling count.
//!
//! The shadow is [`crate::algorithms::SlidingWindowLog`]'s arithmetic over a mostly inline log
//! per key, kept in the recorder's per-key entries (a unit test holds it to the real limiter):
//! no hashing and no allocation per key, which is what a million keys need.

use super::dense::Parts;
use super::intent::Bounds;
use super::timelog::TimeLog;
use crate::algorithms::KeyId;
use crate::time::Nanos;

/// The exact limiter: at most its bound's ceiling admissions per key in any window `(t−W, t]`.
/// Each key's log (its admissions still in the window, oldest first) lives with the key's
/// other state.
#[derive(Clone)]
struct ExactLog {
    bounds: Bounds,
    /// Keys whose log moved to the heap: the only ones a sweep has anything to free.
    spilled: Vec<KeyId>,
}

impl ExactLog {
    /// Whether the sliding window log admits a request of `key` (its log `log`) at `now`
    /// (and records it).
    #[inline(always)]
    fn admits(&mut self, key: KeyId, log: &mut TimeLog, now: Nanos) -> bool {
        let b = self.bounds.of(key);
        let window = b.window;
        while log.front().is_some_and(|t| t.saturating_add(window) <= now) {
            log.pop_front();
        }
        let admit = (log.len() as u64) < b.ceiling;
        if admit && log.push_back(now) {
            self.spilled.push(key);
        }
        admit
    }

    /// Drops the times of the heap logs that expired by `now`, as [`ExactLog::admits`] would
    /// on the key's next request, and moves the logs short enough back inline (inline logs
    /// hold nothing to free).
    fn sweep(&mut self, logs: &mut (impl Parts<TimeLog> + ?Sized), now: Nanos) {
        // The longest window: a sweep does not know the key (keeping more is harmless).
        let window = self.bounds.longest();
        super::dense::retain_entries(&mut self.spilled, logs, |log: &mut TimeLog| {
            while log.front().is_some_and(|t| t.saturating_add(window) <= now) {
                log.pop_front();
            }
            log.fit_inline()
        });
    }
}

#[derive(Clone)]
pub(super) struct Accuracy {
    exact: ExactLog,
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
    pub fn new(bounds: Bounds) -> Self {
        Accuracy {
            exact: ExactLog {
                bounds,
                spilled: Vec::new(),
            },
            wrongly_allowed: 0,
            wrongly_rejected: 0,
            estimate_error_sum: 0.0,
            estimates: 0,
        }
    }

    /// One decision on `key`, whose exact log is `log`. `estimate` is the algorithm's estimate
    /// of the key's rolling count before it; `truth` gives the true count (asked only when
    /// there is an estimate). Returns whether the exact limiter admitted the request.
    #[inline(always)]
    pub fn on_decision(
        &mut self,
        key: KeyId,
        log: &mut TimeLog,
        t: Nanos,
        admitted: bool,
        estimate: Option<f64>,
        truth: impl FnOnce() -> u64,
    ) -> bool {
        if let Some(estimate) = estimate {
            let truth = truth();
            if truth > 0 {
                self.estimate_error_sum += (estimate - truth as f64).abs() / truth as f64;
                self.estimates += 1;
            }
        }
        let exact = self.exact.admits(key, log, t);
        if exact != admitted {
            if admitted {
                self.wrongly_allowed += 1;
            } else {
                self.wrongly_rejected += 1;
            }
        }
        exact
    }

    /// Frees what `now` allows, in the keys' exact `logs`.
    pub fn sweep(&mut self, logs: &mut (impl Parts<TimeLog> + ?Sized), now: Nanos) {
        self.exact.sweep(logs, now);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{KeyedLimiter, Params, SlidingWindowLog};
    use proptest::prelude::*;

    proptest! {
        /// A key's offered traffic has exceeded the policy (more than L in a window, judged on
        /// its own window of offered times) exactly when the exact limiter has rejected one of
        /// its requests: the keys tally's ground truth (`metrics::keys`) rests on this.
        #[test]
        fn exceeding_the_policy_is_the_exact_limiters_first_rejection(
            limit in 0u64..5,
            gaps in proptest::collection::vec(0u64..40, 1..200),
            sweeps in proptest::collection::vec(any::<bool>(), 200),
        ) {
            let window = 100;
            let mut exact = ExactLog { bounds: Bounds::uniform(limit, window), spilled: Vec::new() };
            let mut demand = super::super::demand::Demand::new(limit, window, Vec::new());
            let mut logs = [TimeLog::default()];
            let mut offered = [super::super::demand::Offered::default()];
            let (mut exceeded, mut rejected) = (false, false);
            let mut t = 0;
            for (gap, sweep) in gaps.into_iter().zip(sweeps) {
                t += gap;
                if sweep {
                    exact.sweep(&mut logs[..], t);
                    demand.sweep(&mut offered[..], t);
                }
                rejected |= !exact.admits(0, &mut logs[0], t);
                demand.offer(0, &mut offered[0], &mut exceeded, t);
                prop_assert_eq!(exceeded, rejected);
            }
        }

        /// The shadow decides exactly as the sliding window log, sweeps included.
        #[test]
        fn the_shadow_is_the_sliding_window_log(
            limit in 1u64..5,
            window in 1u64..50,
            gaps in proptest::collection::vec((0u64..20, 0u32..3), 1..200),
        ) {
            let params = Params { limit, window, burst: limit };
            let mut real = KeyedLimiter::new(SlidingWindowLog::new(params).unwrap());
            let mut shadow = ExactLog { bounds: Bounds::uniform(limit, window), spilled: Vec::new() };
            let mut logs: Vec<TimeLog> = vec![TimeLog::default(); 3];
            let mut t = 0;
            for (gap, key) in gaps {
                t += gap;
                if gap % 7 == 0 {
                    shadow.sweep(logs.as_mut_slice(), t);
                }
                let admitted = real.decide(key, t).outcome.is_admitted();
                prop_assert_eq!(shadow.admits(key, &mut logs[key as usize], t), admitted);
            }
        }
    }
}
