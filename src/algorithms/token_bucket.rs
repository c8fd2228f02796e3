//! Token bucket: `burst` tokens of capacity, refilled continuously at `limit` per `window`,
//! one token per unit of cost. A key starts with a full bucket; a request costing more than
//! `burst` tokens is never admitted.
//!
//! The Redis equivalent is a hash `{tokens, last}` updated by a Lua script. Here tokens are kept
//! in exact integer units so that refill never rounds: with `g = gcd(L, W)`, `l = L/g` and
//! `w = W/g`, one token is `w` units and the bucket gains `l` units per nanosecond.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common, params_error,
};
use crate::time::{Nanos, gcd};

/// A token bucket of `burst` tokens refilled at `limit` per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    /// Units gained per nanosecond (`L/g`).
    refill: u64,
    /// Units in one token (`W/g`).
    token: u64,
    /// Units in a full bucket (`B·W/g`).
    capacity: u64,
}

/// Per-key state: the bucket level in units (`tokens · w`) as of time `last`. A level above
/// the capacity is a debt of `level − capacity` units (a charge took more than the bucket
/// held, [`Limiter::charge`]): the bucket is empty until refill has paid it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucketState {
    pub(crate) level: u64,
    pub(crate) last: Nanos,
}

impl TokenBucket {
    /// Builds the limiter from `params`. Fails if `limit`, `window` or `burst` is 0, or if the
    /// bucket's capacity in units (`burst · window / gcd(limit, window)`) overflows a `u64`.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        let g = gcd(params.limit, params.window);
        let (refill, token) = (params.limit / g, params.window / g);
        let capacity = params.burst.checked_mul(token).ok_or_else(|| {
            params_error(
                Self::KIND,
                "burst × window / gcd(limit, window) overflows 64 bits",
            )
        })?;
        Ok(TokenBucket {
            refill,
            token,
            capacity,
        })
    }

    /// The level the bucket has at `now` (refilled since `last`, capped at capacity).
    fn level_at(&self, s: &TokenBucketState, now: Nanos) -> u64 {
        let gained = self.refill as u128 * now.saturating_sub(s.last) as u128;
        (s.level as u128 + gained).min(self.capacity as u128) as u64
    }

    /// Nanoseconds until the level grows from `level` to `target` (`ceil` of the exact time).
    fn time_to(&self, level: u64, target: u64) -> Nanos {
        (target - level).div_ceil(self.refill)
    }

    /// The level at `now` of a key in debt at `last` (`Ok`, the debt paid back), or the units
    /// it still owes (`Err`).
    fn after_debt(&self, s: &TokenBucketState, now: Nanos) -> Result<u64, u64> {
        let owed = (s.level - self.capacity) as u128;
        let gained = self.refill as u128 * now.saturating_sub(s.last) as u128;
        match gained.checked_sub(owed) {
            Some(level) => Ok(level.min(self.capacity as u128) as u64),
            None => Err((owed - gained).min(u64::MAX as u128) as u64),
        }
    }

    /// The level at `now`, or the debt still owed, with the state brought to `now`.
    fn settle_to(&self, s: &mut TokenBucketState, now: Nanos) -> Result<u64, u64> {
        let level = if s.level > self.capacity {
            self.after_debt(s, now)
        } else {
            Ok(self.level_at(s, now))
        };
        s.level = match level {
            Ok(l) => l,
            Err(owed) => self.capacity.saturating_add(owed),
        };
        s.last = s.last.max(now);
        level
    }

    /// A request at `now` of a key in debt: refused while it still owes, decided as usual
    /// once paid back.
    #[cold]
    fn decide_in_debt(&self, s: &mut TokenBucketState, now: Nanos, cost: Cost) -> Decision {
        match self.settle_to(s, now) {
            Ok(_) => self.decide_n(s, now, cost),
            Err(owed) => {
                let need = Nanos::from(cost).saturating_mul(self.token);
                let wait = |units: u64| units.div_ceil(self.refill);
                Decision {
                    outcome: Outcome::Reject {
                        retry_after: wait(owed.saturating_add(need.min(self.capacity))),
                    },
                    remaining: 0,
                    reset_at: now.saturating_add(wait(owed.saturating_add(self.capacity))),
                }
            }
        }
    }
}

impl Limiter for TokenBucket {
    type State = TokenBucketState;
    const KIND: AlgorithmKind = AlgorithmKind::TokenBucket;

    fn new_state(&self, now: Nanos) -> TokenBucketState {
        TokenBucketState {
            level: self.capacity,
            last: now,
        }
    }

    fn decide_n(&self, s: &mut TokenBucketState, now: Nanos, cost: Cost) -> Decision {
        if s.level > self.capacity {
            return self.decide_in_debt(s, now, cost);
        }
        // Refilling is exact in units, so it is safe to store the refilled level on a reject too.
        s.level = self.level_at(s, now);
        s.last = now;
        let need = match Nanos::from(cost).checked_mul(self.token) {
            Some(need) if need <= self.capacity => need,
            _ => {
                let reset_at = now.saturating_add(self.time_to(s.level, self.capacity));
                return beyond_capacity(now, reset_at, s.level / self.token);
            }
        };
        let outcome = if s.level >= need {
            s.level -= need;
            Outcome::Allow
        } else {
            Outcome::Reject {
                retry_after: self.time_to(s.level, need),
            }
        };
        Decision {
            outcome,
            remaining: s.level / self.token,
            reset_at: now.saturating_add(self.time_to(s.level, self.capacity)),
        }
    }

    /// `units` tokens back into the bucket refilled to `now`, up to its capacity (first paying
    /// any debt).
    fn refund(&self, s: &mut TokenBucketState, now: Nanos, _: Nanos, units: Cost) {
        let back = u64::from(units).saturating_mul(self.token);
        s.level = match self.settle_to(s, now) {
            Ok(level) => level.saturating_add(back).min(self.capacity),
            Err(owed) if owed > back => self.capacity.saturating_add(owed - back),
            Err(owed) => (back - owed).min(self.capacity),
        };
    }

    /// `units` tokens out of the bucket refilled to `now`; what it lacks is owed.
    fn charge(&self, s: &mut TokenBucketState, now: Nanos, units: Cost) {
        let need = u64::from(units).saturating_mul(self.token);
        let owed = match self.settle_to(s, now) {
            Ok(level) if level >= need => {
                s.level = level - need;
                return;
            }
            Ok(level) => need - level,
            Err(owed) => owed.saturating_add(need),
        };
        s.level = self.capacity.saturating_add(owed);
    }

    fn redis_bytes(_: &TokenBucketState) -> usize {
        super::redis::SMALL_HASH_KEY
    }

    fn is_idle(&self, s: &TokenBucketState, now: Nanos) -> bool {
        if s.level > self.capacity {
            return self.after_debt(s, now) == Ok(self.capacity);
        }
        self.level_at(s, now) == self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_MIN};

    fn tb(limit: u64, window: Nanos, burst: u64) -> TokenBucket {
        TokenBucket::new(Params {
            limit,
            window,
            burst,
        })
        .unwrap()
    }

    fn decision(outcome: Outcome, remaining: u64, reset_at: Nanos) -> Decision {
        Decision {
            outcome,
            remaining,
            reset_at,
        }
    }

    #[test]
    fn burst_then_refill_per_minute() {
        // 100/min: g = gcd(100, 60e9) = 100, l = 1, w = 6e8 units = one token per 600 ms. B = 3.
        let b = tb(100, NANOS_PER_MIN, 3);
        assert_eq!((b.refill, b.token, b.capacity), (1, 600 * MS, 1800 * MS));
        let mut s = b.new_state(0);
        assert_eq!(b.decide(&mut s, 0), decision(Outcome::Allow, 2, 600 * MS));
        assert_eq!(b.decide(&mut s, 0), decision(Outcome::Allow, 1, 1200 * MS));
        assert_eq!(b.decide(&mut s, 0), decision(Outcome::Allow, 0, 1800 * MS));
        let reject = |retry_after| Outcome::Reject { retry_after };
        assert_eq!(
            b.decide(&mut s, 0),
            decision(reject(600 * MS), 0, 1800 * MS)
        );
        // At 300 ms half a token is back: 3e8 units, 3e8 to go.
        assert_eq!(
            b.decide(&mut s, 300 * MS),
            decision(reject(300 * MS), 0, 1800 * MS)
        );
        assert_eq!(
            b.decide(&mut s, 600 * MS),
            decision(Outcome::Allow, 0, 2400 * MS)
        );
        assert!(!b.is_idle(&s, 2400 * MS - 1));
        assert!(b.is_idle(&s, 2400 * MS));
    }

    #[test]
    fn fractional_rate_is_exact() {
        // 3 per 10 ns: l = 3, w = 10 (a token every 10/3 ns). B = 2, capacity 20 units.
        let b = tb(3, 10, 2);
        let mut s = b.new_state(0);
        b.decide(&mut s, 0);
        b.decide(&mut s, 0);
        // t = 1: level 3; needs 7 more units = ceil(7/3) = 3 ns.
        assert_eq!(
            b.decide(&mut s, 1).outcome,
            Outcome::Reject { retry_after: 3 }
        );
        // t = 3: 3 + 2·3 = 9 < 10; t = 4: 12 ≥ 10 → level 2, full after ceil(18/3) = 6 ns.
        assert!(!b.decide(&mut s.clone(), 3).outcome.is_admitted());
        assert_eq!(b.decide(&mut s, 4), decision(Outcome::Allow, 0, 10));
        assert_eq!(s, TokenBucketState { level: 2, last: 4 });
        assert!(b.is_idle(&s, 10));
        // Idle for a long time: capped at capacity, not more.
        assert_eq!(
            b.decide(&mut s, 1_000_000),
            decision(Outcome::Allow, 1, 1_000_004)
        );
    }

    #[test]
    fn rejects_overflowing_capacity() {
        let p = Params {
            limit: 1,
            window: u64::MAX,
            burst: 2,
        };
        assert!(TokenBucket::new(p).is_err());
        assert!(TokenBucket::new(Params { burst: 0, ..p }).is_err());
        assert!(TokenBucket::new(Params { burst: 1, ..p }).is_ok());
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<TokenBucketState>(), 16);
    }
}
