//! Sliding window counter (Cloudflare's approximation): two fixed-window counters, the previous
//! one weighted by how much of it the sliding window `(now−W, now]` still overlaps.
//!
//! The Redis equivalent is two `INCR` keys (current and previous window). The estimate assumes
//! the previous window's requests were spread evenly over it, which is where its error comes from.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common,
};
use crate::time::Nanos;

/// Admits while `prev·(W−e)/W + curr < L`, `e` being the time elapsed in the current window; a
/// request of cost `c` while `prev·(W−e)/W + curr + c − 1 < L` (and adds `c` to `curr`).
/// Ignores `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindowCounter {
    limit: u64,
    window: Nanos,
}

/// Per-key state: the current window index and the admissions in it and in the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindowCounterState {
    pub(crate) window: u64,
    pub(crate) curr: u64,
    pub(crate) prev: u64,
}

impl SlidingWindowCounter {
    /// Builds the limiter from `params`; `burst` is not used. Fails if `limit` or `window` is 0.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        Ok(SlidingWindowCounter {
            limit: params.limit,
            window: params.window,
        })
    }

    /// Moves the state to window `i` (never earlier than its own).
    fn roll(s: &mut SlidingWindowCounterState, i: u64) {
        match i.saturating_sub(s.window) {
            0 => return,
            1 => (s.prev, s.curr) = (s.curr, 0),
            _ => (s.prev, s.curr) = (0, 0),
        }
        s.window = i;
    }

    /// When both counters have rolled out, seen from window `i` at `now`.
    fn reset_at(&self, s: &SlidingWindowCounterState, i: u64, now: Nanos) -> Nanos {
        if s.curr > 0 {
            self.start(i, 2)
        } else if s.prev > 0 {
            self.start(i, 1)
        } else {
            now
        }
    }

    /// Start of window `i + k` (saturating at the end of time).
    fn start(&self, i: u64, k: u64) -> Nanos {
        i.saturating_add(k).saturating_mul(self.window)
    }

    /// The exact wait after a reject at elapsed time `e` of the current window, assuming no
    /// other request comes in between. Rejects are not counted, so `prev` and `curr` stay fixed.
    /// A request of cost `c` needs `prev·(W−e') < (L−curr−c+1)·W`: it is a unit request on top
    /// of `c − 1` more admissions (`1 ≤ c ≤ L`).
    fn retry_after(&self, s: &SlidingWindowCounterState, e: u64, cost: u64) -> Nanos {
        let (l, w) = (self.limit as u128, self.window as u128);
        let (c, curr) = (cost as u128, s.curr as u128 + cost as u128 - 1);
        // Later in this window: prev·(W−e') < (L−curr)·W ⇔ W−e' < (L−curr)·W/prev
        // ⇔ e' ≥ W − ceil((L−curr)·W/prev) + 1. Being rejected at e means that e' > e.
        if curr < l && s.prev > 0 {
            let m = ((l - curr) * w).div_ceil(s.prev as u128);
            let e2 = (w + 1).saturating_sub(m);
            if e2 < w {
                return (e2 - e as u128) as Nanos;
            }
        }
        // Next window, where prev' = curr and curr' = 0: curr·(W−e') < (L−c+1)·W. As curr ≤ L
        // this holds from e' = 0, from e' = 1 for a unit request when curr = L, and at the
        // latest from e' = W, the start of the window after.
        let e2 = match s.curr {
            0 => 0,
            n => (w + 1).saturating_sub(((l - c + 1) * w).div_ceil(n as u128)) as Nanos,
        };
        self.window - e + e2
    }
}

impl Limiter for SlidingWindowCounter {
    type State = SlidingWindowCounterState;
    const KIND: AlgorithmKind = AlgorithmKind::SlidingWindowCounter;

    fn new_state(&self, now: Nanos) -> SlidingWindowCounterState {
        SlidingWindowCounterState {
            window: now / self.window,
            curr: 0,
            prev: 0,
        }
    }

    fn decide_n(&self, s: &mut SlidingWindowCounterState, now: Nanos, cost: Cost) -> Decision {
        let i = now / self.window;
        Self::roll(s, i);
        let e = now % self.window;
        let (l, w) = (self.limit as u128, self.window as u128);
        let cost = u64::from(cost);
        // prev·(W−e) + (curr + cost − 1)·W < L·W, in exact integers (curr ≤ L unless a charge
        // put the key in debt, which the first test refuses).
        let weight = s.prev as u128 * (w - e as u128);
        // Further unit admissions at `now`: curr + k < (L·W − weight)/W.
        let room = (l * w).saturating_sub(weight).div_ceil(w) as u64;
        if cost > self.limit {
            let reset_at = self.reset_at(s, i, now);
            return beyond_capacity(now, reset_at, room.saturating_sub(s.curr));
        }
        let admit =
            (s.curr + cost - 1) < self.limit && weight < (l - (s.curr + cost - 1) as u128) * w;
        let outcome = if admit {
            s.curr += cost;
            Outcome::Allow
        } else {
            Outcome::Reject {
                retry_after: self.retry_after(s, e, cost),
            }
        };
        Decision {
            outcome,
            remaining: room.saturating_sub(s.curr),
            reset_at: self.reset_at(s, i, now),
        }
    }

    /// The counter of the window charged drops by `units`, while the state still holds it
    /// (current or previous window).
    fn refund(&self, s: &mut SlidingWindowCounterState, _: Nanos, charged_at: Nanos, units: Cost) {
        let units = u64::from(units);
        match s.window.checked_sub(charged_at / self.window) {
            Some(0) => s.curr = s.curr.saturating_sub(units),
            Some(1) => s.prev = s.prev.saturating_sub(units),
            _ => {}
        }
    }

    /// The current window's counter grows by `units`, past the limit if need be; the
    /// weighted count stays above the limit until enough of it has slid out.
    fn charge(&self, s: &mut SlidingWindowCounterState, now: Nanos, units: Cost) {
        Self::roll(s, now / self.window);
        s.curr = s.curr.saturating_add(u64::from(units));
    }

    fn redis_bytes(s: &SlidingWindowCounterState) -> usize {
        // The previous window's key is kept while the current one fills.
        if s.prev > 0 {
            2 * super::redis::STRING_KEY
        } else {
            super::redis::STRING_KEY
        }
    }

    const ESTIMATES: bool = true;

    /// `prev·(W−e)/W + curr`, the quantity compared with the limit.
    fn estimated_count(&self, s: &SlidingWindowCounterState, now: Nanos) -> Option<f64> {
        let mut s = *s;
        let i = now / self.window;
        Self::roll(&mut s, i);
        let elapsed = now - i * self.window;
        let weight = (self.window - elapsed) as f64 / self.window as f64;
        Some(s.prev as f64 * weight + s.curr as f64)
    }

    fn is_idle(&self, s: &SlidingWindowCounterState, now: Nanos) -> bool {
        // Both counters must have rolled out; the same windows reset_at is computed from.
        let i = now / self.window;
        if s.curr > 0 {
            i >= s.window.saturating_add(2)
        } else if s.prev > 0 {
            i >= s.window.saturating_add(1)
        } else {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swc(limit: u64, window: Nanos) -> SlidingWindowCounter {
        SlidingWindowCounter::new(Params {
            limit,
            window,
            burst: 0,
        })
        .unwrap()
    }

    fn outcome_at(
        l: &SlidingWindowCounter,
        s: &mut SlidingWindowCounterState,
        t: Nanos,
    ) -> Outcome {
        l.decide(s, t).outcome
    }

    #[test]
    fn weights_previous_window() {
        // L = 10 per 100 ns. Ten at t = 10 fill window 0.
        let l = swc(10, 100);
        let mut s = l.new_state(10);
        for _ in 0..10 {
            assert!(l.decide(&mut s, 10).outcome.is_admitted());
        }
        // 11th: curr = L, so only window 1 helps: 10·(100−e') < 1000 ⇔ e' ≥ 1 → t = 101.
        let d = l.decide(&mut s, 10);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 91 });
        assert_eq!((d.remaining, d.reset_at), (0, 200));
        assert_eq!(
            outcome_at(&l, &mut s.clone(), 100),
            Outcome::Reject { retry_after: 1 }
        );
        // t = 101: 10·99 = 990 < 1000. Remaining ceil((1000−990)/100) − 1 = 0.
        let d = l.decide(&mut s, 101);
        assert_eq!(
            (d.outcome, d.remaining, d.reset_at),
            (Outcome::Allow, 0, 300)
        );
        // t = 150: 10·50 = 500, curr 1 → 600 < 1000. Remaining ceil(500/100) − 2 = 3.
        assert_eq!(l.decide(&mut s, 150).remaining, 3);
        for _ in 0..3 {
            assert!(l.decide(&mut s, 150).outcome.is_admitted());
        }
        // curr = 5: 500 + 500 = 1000 fails. Same window: 10·(100−e') < 500 ⇔ e' ≥ 51.
        let d = l.decide(&mut s, 150);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!(
            s,
            SlidingWindowCounterState {
                window: 1,
                curr: 5,
                prev: 10
            }
        );
        // 10·49 + 500 = 990 < 1000.
        assert_eq!(l.decide(&mut s, 151).outcome, Outcome::Allow);
    }

    #[test]
    fn retry_within_window_rounds_up() {
        // L = 3 per 10 ns: three at t = 5, then at t = 12 (e = 2): 3·8 = 24 < 30, curr = 1.
        let l = swc(3, 10);
        let mut s = l.new_state(5);
        for _ in 0..3 {
            l.decide(&mut s, 5);
        }
        assert_eq!(l.decide(&mut s, 12).remaining, 0); // ceil((30−24)/10) − 1 = 0
        // 24 + 10 = 34 ≥ 30. e' ≥ 10 − ceil(2·10/3) + 1 = 10 − 7 + 1 = 4 → wait 2.
        assert_eq!(
            outcome_at(&l, &mut s, 12),
            Outcome::Reject { retry_after: 2 }
        );
        // t = 13: 3·7 + 10 = 31 (rejected); t = 14: 3·6 + 10 = 28 (admitted).
        assert!(!outcome_at(&l, &mut s.clone(), 13).is_admitted());
        assert_eq!(outcome_at(&l, &mut s, 14), Outcome::Allow);
    }

    #[test]
    fn retry_in_next_window_when_previous_is_heavy() {
        // L = 4 per 2 ns: four at t = 0; at t = 3 (e = 1) 4·1 + 2c < 8 admits c = 0, 1.
        let l = swc(4, 2);
        let mut s = l.new_state(0);
        for _ in 0..4 {
            l.decide(&mut s, 0);
        }
        assert_eq!(l.decide(&mut s, 3).remaining, 1); // ceil((8−4)/2) − 1 = 1
        assert_eq!(outcome_at(&l, &mut s, 3), Outcome::Allow);
        // Same window needs e' ≥ 2 − ceil(2·2/4) + 1 = 2 = W: none. Window 2 (t = 4): prev = 2,
        // 2·(2−0) = 4 < 8 → wait 1.
        let d = l.decide(&mut s, 3);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!(d.reset_at, 6); // curr > 0 in window 1 → clear from window 3
        assert!(!l.is_idle(&s, 5));
        assert!(l.is_idle(&s, 6));
        assert_eq!(outcome_at(&l, &mut s, 4), Outcome::Allow);
    }

    #[test]
    fn skipped_windows_forget_everything() {
        let l = swc(2, 10);
        let mut s = l.new_state(0);
        l.decide(&mut s, 0);
        l.decide(&mut s, 0);
        let d = l.decide(&mut s, 25);
        assert_eq!(
            (d.outcome, d.remaining, d.reset_at),
            (Outcome::Allow, 1, 40)
        );
        assert_eq!(
            s,
            SlidingWindowCounterState {
                window: 2,
                curr: 1,
                prev: 0
            }
        );
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<SlidingWindowCounterState>(), 24);
    }
}
