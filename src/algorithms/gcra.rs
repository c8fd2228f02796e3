//! GCRA (generic cell rate algorithm), virtual-scheduling form: one "theoretical arrival time"
//! per key. Decision for decision it is the `governor` crate's algorithm (and redis-cell's
//! `CL.THROTTLE`): emission interval `T = floor(W/L)` ns, tolerance `τ = (B−1)·T`.
//!
//! A request at `now` conforms iff `now ≥ tat − τ`; it then moves `tat` to `max(tat, now) + T`.
//! A rejected request leaves the state untouched. A request of cost `n` is `n` cells at once
//! (governor's `check_n`): it conforms iff `now ≥ tat + (n−1)·T − τ` and moves `tat` by `n·T`;
//! `n` above the burst never conforms.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common, params_error,
};
use crate::time::Nanos;

/// GCRA with `burst` requests of tolerance at `limit` per `window` (interval rounded down to ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gcra {
    /// Emission interval `T` in ns.
    interval: Nanos,
    /// Burst tolerance `τ` in ns.
    tolerance: Nanos,
}

/// Per-key state: the theoretical arrival time of the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraState {
    pub(crate) tat: Nanos,
}

impl Gcra {
    /// Builds the limiter from `params`. Fails if `limit`, `window` or `burst` is 0, if
    /// `window / limit` rounds down to 0 ns, or if the tolerance `(burst − 1)·T` overflows a `u64`.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        let interval = params.window / params.limit;
        if interval == 0 {
            return Err(params_error(
                Self::KIND,
                "window / limit is under 1 ns: the emission interval would be 0",
            ));
        }
        let tolerance = (params.burst - 1).checked_mul(interval).ok_or_else(|| {
            params_error(Self::KIND, "(burst − 1) × window / limit overflows 64 bits")
        })?;
        Ok(Gcra {
            interval,
            tolerance,
        })
    }
}

impl Gcra {
    /// Further unit requests conforming at `now` with theoretical arrival time `tat`.
    #[inline]
    fn remaining(&self, tat: Nanos, now: Nanos) -> u64 {
        // Each conforms while max(tat, now) + k·T ≤ now + τ: the slack is τ − (tat − now), in
        // 64 bits (`now + τ` may not be).
        let slack = self.tolerance.checked_sub(tat.saturating_sub(now));
        slack.map_or(0, |x| x / self.interval + 1)
    }
}

impl Gcra {
    /// A request of one cell and `extra` ns of cells more (`(cost − 1)·T ≤ τ`). Always inlined:
    /// for a request of cost 1, `extra` is the constant 0 and this is the single-cell GCRA.
    #[inline(always)]
    fn decide_cells(&self, s: &mut GcraState, now: Nanos, extra: Nanos) -> Decision {
        let earliest = s.tat.saturating_add(extra).saturating_sub(self.tolerance);
        if now < earliest {
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: earliest - now,
                },
                // A single cell refused means none conforms now; a costly one may leave room.
                remaining: if extra == 0 {
                    0
                } else {
                    self.remaining(s.tat, now)
                },
                reset_at: s.tat,
            };
        }
        s.tat = s
            .tat
            .max(now)
            .saturating_add(self.interval)
            .saturating_add(extra);
        Decision {
            outcome: Outcome::Allow,
            remaining: self.remaining(s.tat, now),
            reset_at: s.tat,
        }
    }
}

impl Limiter for Gcra {
    type State = GcraState;
    const KIND: AlgorithmKind = AlgorithmKind::Gcra;

    fn new_state(&self, now: Nanos) -> GcraState {
        GcraState { tat: now }
    }

    #[inline]
    fn decide_n(&self, s: &mut GcraState, now: Nanos, cost: Cost) -> Decision {
        if cost == 1 {
            return self.decide_cells(s, now, 0);
        }
        // `cost` cells at once, as governor's `check_n`: the cells after the first weigh
        // (cost − 1)·T on top of the first, which τ must cover (else no state admits them).
        match (Nanos::from(cost) - 1).checked_mul(self.interval) {
            Some(extra) if extra <= self.tolerance => self.decide_cells(s, now, extra),
            // A stale state's `tat` is in the past: fresh from now, as an evicted key's.
            _ => beyond_capacity(now, s.tat.max(now), self.remaining(s.tat, now)),
        }
    }

    /// `units` cells back: the theoretical arrival time moves `units·T` earlier, never before
    /// `now` (Shopify's leaky bucket of points, whose level is `(tat − now)/T`, drops by them).
    fn refund(&self, s: &mut GcraState, now: Nanos, _: Nanos, units: Cost) {
        let back = Nanos::from(units).saturating_mul(self.interval);
        s.tat = s.tat.saturating_sub(back).max(now);
    }

    /// `units` cells at once, conforming or not: the theoretical arrival time moves `units·T`
    /// past `max(tat, now)`, so requests conform again once the debt has drained.
    fn charge(&self, s: &mut GcraState, now: Nanos, units: Cost) {
        let cells = Nanos::from(units).saturating_mul(self.interval);
        s.tat = s.tat.max(now).saturating_add(cells);
    }

    fn redis_bytes(_: &GcraState) -> usize {
        super::redis::STRING_KEY
    }

    fn is_idle(&self, s: &GcraState, now: Nanos) -> bool {
        now >= s.tat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_MIN};

    fn gcra(limit: u64, window: Nanos, burst: u64) -> Gcra {
        Gcra::new(Params {
            limit,
            window,
            burst,
        })
        .unwrap()
    }

    #[test]
    fn burst_of_three_at_hundred_per_minute() {
        // T = 60 s / 100 = 600 ms, τ = 2·T = 1200 ms.
        let g = gcra(100, NANOS_PER_MIN, 3);
        let mut s = g.new_state(0);
        // tat 600: (0 + 1200 − 600)/600 + 1 = 2 more; tat 1200: 0/600 + 1 = 1; tat 1800: none.
        assert_eq!(g.decide(&mut s, 0), Decision::allow(2, 600 * MS));
        assert_eq!(g.decide(&mut s, 0), Decision::allow(1, 1200 * MS));
        assert_eq!(g.decide(&mut s, 0), Decision::allow(0, 1800 * MS));
        // earliest = 1800 − 1200 = 600 ms; the state is not touched.
        let d = g.decide(&mut s, 0);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 600 * MS
            }
        );
        assert_eq!((d.remaining, d.reset_at), (0, 1800 * MS));
        assert_eq!(s, GcraState { tat: 1800 * MS });
        let d = g.decide(&mut s, 500 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 100 * MS
            }
        );
        // At 600 ms: tat = 1800 + 600 = 2400; (600 + 1200 − 2400) < 0 → remaining 0.
        assert_eq!(g.decide(&mut s, 600 * MS), Decision::allow(0, 2400 * MS));
        assert!(!g.is_idle(&s, 2400 * MS - 1));
        assert!(g.is_idle(&s, 2400 * MS));
        // Long after: tat = now + T as for a new key.
        assert_eq!(
            g.decide(&mut s, 10_000 * MS),
            Decision::allow(2, 10_600 * MS)
        );
    }

    #[test]
    fn interval_rounds_down() {
        // 3 per 10 ns: T = 3 (governor's `with_period(3ns)`), B = 1 so τ = 0.
        let g = gcra(3, 10, 1);
        let mut s = g.new_state(4);
        assert_eq!(g.decide(&mut s, 4), Decision::allow(0, 7));
        assert_eq!(
            g.decide(&mut s, 6).outcome,
            Outcome::Reject { retry_after: 1 }
        );
        assert_eq!(g.decide(&mut s, 7), Decision::allow(0, 10));
    }

    #[test]
    fn rejects_bad_parameters() {
        let p = Params {
            limit: 1,
            window: u64::MAX,
            burst: 2,
        };
        assert!(Gcra::new(p).is_ok());
        assert!(Gcra::new(Params { burst: 3, ..p }).is_err());
        assert!(
            Gcra::new(Params {
                limit: 11,
                window: 10,
                burst: 1
            })
            .is_err()
        );
        assert!(Gcra::new(Params { burst: 0, ..p }).is_err());
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<GcraState>(), 8);
    }
}
