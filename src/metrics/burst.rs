//! Windows tally: the algorithm's admitted history judged against the policy's rolling window:
//! policy violations, the worst burst (and its admissions, for the worst-moment chart) and
//! needless rejections. Each key's [`History`] lives with the key's other state and is passed
//! in; the [`Judge`] here holds the rest.

use super::dense::Parts;
use super::harm::Harm;
use super::intent::Bounds;
use super::windows::{History, Judge};
use crate::algorithms::KeyId;
use crate::time::Nanos;
use std::collections::VecDeque;

/// The rolling window holding the most admissions of one key, for its ceiling (the highest
/// `admitted / ceiling`).
#[derive(Debug, Clone, Copy)]
struct Worst {
    admitted: u64,
    ceiling: u64,
    key: KeyId,
    /// The admission that completed this window: the window is (end − W, end].
    end: Nanos,
}

/// Admission times of the worst window's key around it, in `(end − 2W, end + W]`: what the
/// worst-moment chart plots as a rolling count. Kept as the run goes because a key's
/// [`History`] is trimmed to `2W`; recording the worst key's admissions costs O(1), and
/// the history is copied only when the worst window moves to another key or after a gap.
#[derive(Debug, Default, Clone)]
struct WorstTrace {
    key: KeyId,
    /// Admissions are recorded up to this time.
    until: Nanos,
    times: VecDeque<Nanos>,
}

#[derive(Clone)]
pub(super) struct Bursts {
    windows: Judge,
    violations: u64,
    worst: Option<Worst>,
    trace: WorstTrace,
}

pub(super) struct BurstsPart {
    pub max_window_admitted: u64,
    /// `None` when nothing was admitted.
    pub worst_window_key: Option<KeyId>,
    pub worst_window_end_ns: Nanos,
    /// The ceiling of the worst window's key: `burst_factor = max_window_admitted / this`.
    pub worst_ceiling: u64,
    pub policy_violations: u64,
    pub needless_rejections: u64,
    pub worst_window_admissions: Vec<Nanos>,
    pub harm: Harm,
}

impl Bursts {
    pub fn new(bounds: Bounds) -> Self {
        Bursts {
            windows: Judge::with_bounds(bounds),
            violations: 0,
            worst: None,
            trace: WorstTrace::default(),
        }
    }

    /// Admissions in `(now−W, now]` so far of the key whose history is `h`: the true rolling
    /// count.
    #[inline(always)]
    pub fn count_now(&self, key: KeyId, h: &mut History, now: Nanos) -> u64 {
        self.windows.count_now(key, h, now)
    }

    /// Judges the rejections whose windows have all ended by `now` (before anything at `now`
    /// is recorded), against the keys' `histories`.
    #[inline(always)]
    pub fn judge_due(&mut self, histories: &mut (impl Parts<History> + ?Sized), now: Nanos) {
        self.windows.judge_due(histories, now);
    }

    /// A rejection of a request of `key` (history `h`) from `source`, with
    /// [`super::harm`] `flags`.
    #[inline(always)]
    pub fn on_reject(&mut self, key: KeyId, h: &mut History, t: Nanos, source: u16, flags: u8) {
        self.windows.reject(key, h, t, source, flags);
    }

    /// A request of `key` (history `h`) from `source` reaches the backend at `time`; times
    /// passed here never decrease. Returns the key's admissions in its rolling window, this
    /// one included.
    #[inline]
    pub fn on_admit(&mut self, key: KeyId, h: &mut History, time: Nanos, source: u16) -> u64 {
        let in_window = self.windows.admit(key, h, time);
        let ceiling = self.windows.bound(key).ceiling;
        if in_window > ceiling {
            self.violations += 1;
            self.windows.harm.on_violation(source);
        }
        let trace = &mut self.trace;
        let traced = self.worst.is_some() && trace.key == key && time <= trace.until;
        if traced {
            trace.times.push_back(time);
        }
        // in / ceiling > w.admitted / w.ceiling, exactly (both ceilings are at least 1 here
        // or the window would hold nothing over them).
        let worse = |w: Worst| {
            u128::from(in_window) * u128::from(w.ceiling.max(1))
                > u128::from(w.admitted) * u128::from(ceiling.max(1))
        };
        if self.worst.is_none_or(worse) {
            self.worst = Some(Worst {
                admitted: in_window,
                ceiling,
                key,
                end: time,
            });
            let window = self.windows.window();
            if !traced {
                // A new key, or admissions of this one went unrecorded: start from the history,
                // which holds (time − 2W, time], this admission included.
                trace.times.clear();
                trace.times.extend(h.recent());
                trace.key = key;
            }
            trace.until = time.saturating_add(window);
            // Keep the trace to (end − 2W, end + W]: drop what the new end leaves behind.
            let from = time.saturating_sub(window.saturating_mul(2));
            while trace.times.front().is_some_and(|&t| t <= from && from > 0) {
                trace.times.pop_front();
            }
        }
        in_window
    }

    /// Frees what `now` allows, in the keys' `histories`.
    pub fn sweep(&mut self, histories: &mut (impl Parts<History> + ?Sized), now: Nanos) {
        self.windows.sweep(histories, now);
    }

    pub fn finish(mut self, histories: &mut (impl Parts<History> + ?Sized)) -> BurstsPart {
        let needless = self.windows.finish(histories);
        let worst = self.worst.unwrap_or(Worst {
            admitted: 0,
            ceiling: self.windows.bound(0).ceiling,
            key: 0,
            end: 0,
        });
        BurstsPart {
            max_window_admitted: worst.admitted,
            worst_window_key: (worst.admitted > 0).then_some(worst.key),
            worst_window_end_ns: worst.end,
            worst_ceiling: worst.ceiling,
            policy_violations: self.violations,
            needless_rejections: needless,
            worst_window_admissions: self.trace.times.into(),
            harm: self.windows.harm,
        }
    }
}
