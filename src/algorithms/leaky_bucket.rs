//! Leaky bucket as a shaper: each key has a queue of `burst` places that drains one request every
//! `W/L`; admitted requests leave the queue at exactly spaced departure times (`Delay`), a full
//! queue rejects.
//!
//! A request of cost `c` takes `c` places and `c` intervals of the drain: it is delayed until the
//! queue ahead of it has drained, and refused when fewer than `c` places are free.
//!
//! The state is one number, the next free departure slot (virtual scheduling, as nginx's
//! `limit_req` with `burst` and no `nodelay`). Times are scaled by `l` (with `g = gcd(L, W)`,
//! `l = L/g`, `w = W/g`) so the interval `W/L = w/l` ns is exactly `w` scaled units.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common, params_error,
};
use crate::time::{Nanos, gcd};

/// A queue of `burst` places draining `limit` requests per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakyBucket {
    /// Scaled units per nanosecond (`L/g`).
    scale: u64,
    /// The emission interval in scaled units (`W/g`).
    interval: u64,
    /// Scaled time a full queue takes to drain (`B·w`).
    depth: u128,
}

/// Per-key state: the scaled time (`ns · l`) of the next free departure slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakyBucketState {
    pub(crate) tat: u128,
}

impl LeakyBucket {
    /// Builds the limiter from `params`. Fails if `limit`, `window` or `burst` is 0, or if the
    /// longest delay or retry (a full queue plus one interval) does not fit in a `u64` of ns.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        let g = gcd(params.limit, params.window);
        let (scale, interval) = (params.limit / g, params.window / g);
        let depth = params.burst as u128 * interval as u128;
        // Every delay, retry and reset offset is at most (depth + w)/l ns: keep it in a u64.
        if (depth + interval as u128).div_ceil(scale as u128) > Nanos::MAX as u128 {
            return Err(params_error(
                Self::KIND,
                "burst × window / limit overflows 64 bits",
            ));
        }
        Ok(LeakyBucket {
            scale,
            interval,
            depth,
        })
    }

    fn scaled(&self, now: Nanos) -> u128 {
        now as u128 * self.scale as u128
    }

    /// Free places with `ahead` scaled time of the queue still to drain: `B − floor(ahead/w)`.
    fn places_left(&self, ahead: u128) -> u64 {
        let w = self.interval as u128;
        (self.depth / w).saturating_sub(ahead / w) as u64
    }

    /// A scaled span rounded up to whole nanoseconds (fits: see `new`).
    fn ns_ceil(&self, span: u128) -> Nanos {
        span.div_ceil(self.scale as u128) as Nanos
    }
}

impl Limiter for LeakyBucket {
    type State = LeakyBucketState;
    const KIND: AlgorithmKind = AlgorithmKind::LeakyBucket;

    fn new_state(&self, now: Nanos) -> LeakyBucketState {
        LeakyBucketState {
            tat: self.scaled(now),
        }
    }

    fn decide_n(&self, s: &mut LeakyBucketState, now: Nanos, cost: Cost) -> Decision {
        let n = self.scaled(now);
        // Units still queued depart at tat−w, tat−2w, …; floor(ahead/w) of them are ≥ n. A
        // request of cost c takes c places: it fits when floor(ahead/w) + c ≤ B, exactly when
        // ahead < (B − c + 1)·w.
        let ahead = s.tat.saturating_sub(n);
        let w = self.interval as u128;
        let units = cost as u128 * w;
        let Some(room) = (self.depth + w).checked_sub(units) else {
            let fresh_at = now.saturating_add(self.ns_ceil(ahead));
            return beyond_capacity(now, fresh_at, self.places_left(ahead));
        };
        if ahead >= room {
            // Admitted once ahead' = tat − n' < room, i.e. n' ≥ tat − room + 1, rounded up to
            // a whole ns; since n is a whole ns that is now + ceil((ahead − room + 1)/l).
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: self.ns_ceil(ahead - room + 1),
                },
                remaining: self.places_left(ahead),
                reset_at: now.saturating_add(self.ns_ceil(ahead)),
            };
        }
        // Departure slot max(tat, n) = n + ahead, leaving at ceil(slot / l) ns; its c units
        // hold the c slots from there.
        s.tat = n + ahead + units;
        let delay = self.ns_ceil(ahead);
        Decision {
            outcome: if delay == 0 {
                Outcome::Allow
            } else {
                Outcome::Delay(delay)
            },
            // The queue now holds floor(ahead/w) + c units departing at or after now.
            remaining: (self.depth / w - (ahead / w + cost as u128)) as u64,
            reset_at: now.saturating_add(self.ns_ceil(ahead + units)),
        }
    }

    /// The queue gives back `units` places: its next free slot moves `units` intervals
    /// earlier, never before `now` (a drained queue has nothing to give back).
    fn refund(&self, s: &mut LeakyBucketState, now: Nanos, _: Nanos, units: Cost) {
        let back = units as u128 * self.interval as u128;
        s.tat = s.tat.saturating_sub(back).max(self.scaled(now));
    }

    /// `units` more places taken behind the queue, beyond its depth if need be: later requests
    /// are refused until it has drained below the depth again.
    fn charge(&self, s: &mut LeakyBucketState, now: Nanos, units: Cost) {
        let more = units as u128 * self.interval as u128;
        s.tat = s.tat.max(self.scaled(now)) + more;
    }

    fn redis_bytes(_: &LeakyBucketState) -> usize {
        super::redis::STRING_KEY
    }

    fn is_idle(&self, s: &LeakyBucketState, now: Nanos) -> bool {
        s.tat <= self.scaled(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_MIN, NANOS_PER_SEC};

    fn lb(limit: u64, window: Nanos, burst: u64) -> LeakyBucket {
        LeakyBucket::new(Params {
            limit,
            window,
            burst,
        })
        .unwrap()
    }

    #[test]
    fn hundred_per_minute_queue_of_hundred() {
        // 100/min: l = 1, w = 600 ms. B = 100 requests at t = 0 depart at k·600 ms.
        let b = lb(100, NANOS_PER_MIN, 100);
        let mut s = b.new_state(0);
        let first = b.decide(&mut s, 0);
        assert_eq!(
            (first.outcome, first.remaining, first.reset_at),
            (Outcome::Allow, 99, 600 * MS)
        );
        for k in 1..100 {
            let d = b.decide(&mut s, 0);
            assert_eq!(d.outcome, Outcome::Delay(k * 600 * MS));
            assert_eq!(d.remaining, 99 - k);
        }
        // tat = 100·w = 60 s. The 101st is refused; the request departing at 0 counts as queued
        // at 0 and has left at 1 ns, when floor((100w − 1)/w) = 99 < 100: retry after 1 ns.
        let d = b.decide(&mut s, 0);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!((d.remaining, d.reset_at), (0, 60 * NANOS_PER_SEC));
        // At 1 ns it takes slot 60 s: delay 60 s − 1 ns; the queue is full again.
        let d = b.decide(&mut s, 1);
        assert_eq!(d.outcome, Outcome::Delay(60 * NANOS_PER_SEC - 1));
        assert_eq!((d.remaining, d.reset_at), (0, 60_600 * MS));
        assert!(!b.is_idle(&s, 60_600 * MS - 1));
        assert!(b.is_idle(&s, 60_600 * MS));
    }

    #[test]
    fn fractional_interval_rounds_departures_up() {
        // 3 per 10 ns: l = 3, w = 10, interval 10/3 ns. B = 2 (depth 20 scaled).
        let b = lb(3, 10, 2);
        let mut s = b.new_state(0);
        let d = b.decide(&mut s, 0);
        // Slot 0 → leaves now; tat = 10; queue holds floor(10/10) = 1; reset at ceil(10/3) = 4.
        assert_eq!((d.outcome, d.remaining, d.reset_at), (Outcome::Allow, 1, 4));
        // Slot 10 (3.33 ns) → leaves at 4 ns; tat = 20, full; reset at ceil(20/3) = 7.
        let d = b.decide(&mut s, 0);
        assert_eq!(
            (d.outcome, d.remaining, d.reset_at),
            (Outcome::Delay(4), 0, 7)
        );
        // ahead = 20 ≥ 20: retry at ceil((20 − 20 + 1)/3) = 1 ns.
        assert_eq!(
            b.decide(&mut s, 0).outcome,
            Outcome::Reject { retry_after: 1 }
        );
        // t = 1 (n = 3): ahead 17 < 20, slot 20 = 6.67 ns → leaves at 7, a delay of 6.
        assert_eq!(b.decide(&mut s, 1).outcome, Outcome::Delay(6));
        assert_eq!(s, LeakyBucketState { tat: 30 });
    }

    #[test]
    fn idle_queue_admits_immediately() {
        let b = lb(1, 100, 1);
        let mut s = b.new_state(5);
        assert_eq!(b.decide(&mut s, 5).outcome, Outcome::Allow);
        // B = 1: the request departing at 5 fills the queue until 6, then one slot at 105.
        assert_eq!(
            b.decide(&mut s, 5).outcome,
            Outcome::Reject { retry_after: 1 }
        );
        assert_eq!(b.decide(&mut s, 6).outcome, Outcome::Delay(99));
        assert_eq!(b.decide(&mut s, 500).outcome, Outcome::Allow);
    }

    #[test]
    fn rejects_overflowing_depth() {
        let p = Params {
            limit: 1,
            window: u64::MAX,
            burst: 2,
        };
        assert!(LeakyBucket::new(p).is_err());
        assert!(
            LeakyBucket::new(Params {
                limit: 2,
                burst: 1,
                ..p
            })
            .is_ok()
        );
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<LeakyBucketState>(), 16);
    }
}
