//! Fixed window: one counter per aligned window `[k·W, (k+1)·W)`.
//!
//! The Redis equivalent is `INCR rl:{key}:{floor(now/W)}` with an `EXPIRE` of one window, checked
//! before the increment (a Lua script), so rejected requests are not counted. A request of cost
//! `c` is `INCRBY c`, admitted while the window's count stays within the limit.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common,
};
use crate::time::Nanos;

/// At most `limit` admissions per aligned window. Ignores `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWindow {
    limit: u64,
    window: Nanos,
}

/// Per-key state: the index of the window last seen and the admissions counted in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWindowState {
    pub(crate) window: u64,
    pub(crate) count: u64,
}

impl FixedWindow {
    /// Builds the limiter from `params`; `burst` is not used. Fails if `limit` or `window` is 0.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        Ok(FixedWindow {
            limit: params.limit,
            window: params.window,
        })
    }

    /// Start of the window after window `idx` (saturating at the end of time).
    fn window_end(&self, idx: u64) -> Nanos {
        idx.saturating_add(1).saturating_mul(self.window)
    }
}

impl Limiter for FixedWindow {
    type State = FixedWindowState;
    const KIND: AlgorithmKind = AlgorithmKind::FixedWindow;

    fn new_state(&self, now: Nanos) -> FixedWindowState {
        FixedWindowState {
            window: now / self.window,
            count: 0,
        }
    }

    fn decide_n(&self, s: &mut FixedWindowState, now: Nanos, cost: Cost) -> Decision {
        let idx = now / self.window;
        if idx != s.window {
            *s = FixedWindowState {
                window: idx,
                count: 0,
            };
        }
        // Either outcome leaves count > 0, so the key is back to initial when the window ends.
        let reset_at = self.window_end(idx);
        let cost = u64::from(cost);
        if cost > self.limit {
            let fresh_at = if s.count == 0 { now } else { reset_at };
            return beyond_capacity(now, fresh_at, self.limit.saturating_sub(s.count));
        }
        if s.count + cost <= self.limit {
            s.count += cost;
            Decision {
                outcome: Outcome::Allow,
                remaining: self.limit - s.count,
                reset_at,
            }
        } else {
            Decision {
                outcome: Outcome::Reject {
                    retry_after: reset_at - now,
                },
                remaining: self.limit.saturating_sub(s.count),
                reset_at,
            }
        }
    }

    /// The current window's count grows by `units`, past the limit if need be (`INCRBY`).
    fn charge(&self, s: &mut FixedWindowState, now: Nanos, units: Cost) {
        let idx = now / self.window;
        if idx != s.window {
            *s = FixedWindowState {
                window: idx,
                count: 0,
            };
        }
        s.count = s.count.saturating_add(u64::from(units));
    }

    /// The window's count drops by `units` while the window charged is still the key's.
    fn refund(&self, s: &mut FixedWindowState, _: Nanos, charged_at: Nanos, units: Cost) {
        if s.window == charged_at / self.window {
            s.count = s.count.saturating_sub(u64::from(units));
        }
    }

    fn redis_bytes(_: &FixedWindowState) -> usize {
        super::redis::STRING_KEY
    }

    const ESTIMATES: bool = true;

    /// The fixed window takes its current window's count for the rolling count.
    fn estimated_count(&self, s: &FixedWindowState, now: Nanos) -> Option<f64> {
        let current = s.window == now / self.window;
        Some(if current { s.count as f64 } else { 0.0 })
    }

    fn is_idle(&self, s: &FixedWindowState, now: Nanos) -> bool {
        // A zero count in a stale window decides exactly like a fresh state.
        s.count == 0 || now >= self.window_end(s.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC as S;

    fn fw(limit: u64, window: Nanos) -> FixedWindow {
        FixedWindow::new(Params {
            limit,
            window,
            burst: 0,
        })
        .unwrap()
    }

    #[test]
    fn counts_per_aligned_window() {
        // L = 3 per 10 s. Window 0 is [0, 10s).
        let f = fw(3, 10 * S);
        let mut s = f.new_state(2 * S);
        assert_eq!(f.decide(&mut s, 2 * S), Decision::allow(2, 10 * S));
        assert_eq!(f.decide(&mut s, 5 * S), Decision::allow(1, 10 * S));
        assert_eq!(f.decide(&mut s, 9 * S), Decision::allow(0, 10 * S));
        // Fourth in window 0 at 9.5 s: retry at 10 s, i.e. after 0.5 s. Not counted.
        let d = f.decide(&mut s, 9 * S + S / 2);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: S / 2 });
        assert_eq!((d.remaining, d.reset_at), (0, 10 * S));
        assert_eq!(s.count, 3);
        // 10 s is window 1 = [10s, 20s): a fresh quota, so 6 admissions in 1.5 s (boundary 2x).
        assert!(!f.is_idle(&s, 10 * S - 1));
        assert!(f.is_idle(&s, 10 * S));
        assert_eq!(f.decide(&mut s, 10 * S), Decision::allow(2, 20 * S));
        assert_eq!(
            s,
            FixedWindowState {
                window: 1,
                count: 1
            }
        );
    }

    #[test]
    fn skipping_windows_resets() {
        // L = 1 per 7 ns: t = 6 is window 0, t = 29 is window 4 (28..35).
        let f = fw(1, 7);
        let mut s = f.new_state(6);
        assert_eq!(f.decide(&mut s, 6), Decision::allow(0, 7));
        let d = f.decide(&mut s, 6);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!(f.decide(&mut s, 29), Decision::allow(0, 35));
        // Fresh state is idle right away.
        assert!(f.is_idle(&f.new_state(3), 3));
    }

    #[test]
    fn rejects_zero_parameters() {
        assert!(
            FixedWindow::new(Params {
                limit: 0,
                window: 1,
                burst: 0
            })
            .is_err()
        );
        assert!(
            FixedWindow::new(Params {
                limit: 1,
                window: 0,
                burst: 0
            })
            .is_err()
        );
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<FixedWindowState>(), 16);
    }
}
