//! rate-limiter-flexible 11.x `RateLimiterMemory` (`lib/RateLimiterMemory.js` `consume`,
//! `lib/component/MemoryStorage/MemoryStorage.js` `incrby`/`set`).
//!
//! A fixed window per key from its first hit: the record expires at `now + duration·1000` (ms).
//! Each `consume(key, cost)` adds its points while `expiresAt − now > 0`, else starts a new
//! record at `cost`, so rejected points count. Over `points`, the call is refused; with
//! `blockDuration > 0` the first refused call (count ≤ points + cost, i.e. the count was within
//! `points` before it) rewrites the record to expire at `now + blockDuration·1000`, keeping the
//! count: the block replaces the window's end, even when it ends sooner. The record's deletion
//! timer fires at its expiry, when `incrby` would restart it anyway.
//!
//! A cost above `points` is refused whatever the state, but, unlike rlsim's exact algorithms,
//! it is still added to the count (and may start the block): the library adds before it
//! compares. `remainingPoints` is `max(points − count, 0)`; `msBeforeNext` the record's expiry.
//!
//! `duration` and `blockDuration` may be fractional seconds, as the library takes them. Then
//! `duration·1000` is a double (`1.1 · 1000 = 1100.0000000000002`) and the record dies at the
//! first of `expiresAt = Date.now() + duration·1000` and its deletion timer, whose delay
//! Node (and the fake timers of the differential test) cut to whole milliseconds, at least 1:
//! the timer is never the later, so the window is `max(1, trunc(duration·1000))` ms, the timer
//! taken as firing on time.

use super::{
    Args, ParamSpec, ParamType, ParamValue, ProfileDef, ProfileError, Weight, at_ms, ms,
    policy_seconds, retry_at_ms,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::Nanos;

/// `new RateLimiterMemory({ points, duration, blockDuration })`, `consume(key, cost)` per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimiterFlexible {
    points: u64,
    /// `duration·1000`, ms.
    duration_ms: u64,
    /// `blockDuration·1000`, ms (0: no block).
    block_ms: u64,
}

/// The memory storage's `Record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlexibleState {
    /// Points consumed: negative after a `reward` of more than was consumed.
    pub(crate) value: i64,
    /// `expiresAt` (ms); 0 for a key never seen.
    pub expires_at: u64,
}

impl ProfileDef for RateLimiterFlexible {
    const NAME: &'static str = "rate-limiter-flexible";
    const DESCRIPTION: &'static str = "npm rate-limiter-flexible 11 (RateLimiterMemory): fixed window from each key's first hit, ms clock, rejected hits counted, optional block";
    const WEIGHT: Weight = Weight::Takes(
        "consume(key, points): the points are counted even when refused; above `points` always refused",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "points",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "points: consumptions allowed per duration",
        },
        ParamSpec {
            name: "duration",
            ty: ParamType::Duration,
            default: "policy window (whole seconds)",
            doc: "duration: the window (seconds, whole or fractional, or a duration string)",
        },
        ParamSpec {
            name: "blockDuration",
            ty: ParamType::Duration,
            default: "0 (no block)",
            doc: "blockDuration: refuse the key this long after its first refusal (seconds, whole or fractional, or a duration string)",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let points = args
            .count("points", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let duration_ms = match timer_ms(args, "duration", true)? {
            Some(d) => d,
            None => policy_seconds(policy.window, "duration")? * 1000,
        };
        let block_ms = timer_ms(args, "blockDuration", false)?.unwrap_or(0);
        Ok(RateLimiterFlexible {
            points,
            duration_ms,
            block_ms,
        })
    }
}

/// A duration in seconds as the library takes it (an integer, a fraction, or a duration string
/// read as its seconds), as the milliseconds a record lives: `duration·1000` in doubles, cut
/// to whole milliseconds and at least 1 (0 for a `blockDuration` of 0: no block).
fn timer_ms(args: &Args<'_>, name: &str, positive: bool) -> Result<Option<u64>, ProfileError> {
    let seconds = match args.value(name) {
        None => return Ok(None),
        Some(ParamValue::Float(_)) => args.number(name)?.expect("given"),
        Some(ParamValue::Int(_)) => return Ok(args.seconds(name, positive)?.map(|s| s * 1000)),
        Some(_) => match args.duration(name, positive)? {
            None => return Ok(None),
            Some(ns) => ns as f64 / 1e9,
        },
    };
    if seconds == 0.0 {
        return Ok(Some(0));
    }
    let ms = (seconds * 1000.0).trunc().max(1.0);
    if ms >= 2f64.powi(53) {
        return Err(ProfileError::param(
            name,
            format!("{seconds} s is too long"),
        ));
    }
    Ok(Some(ms as u64))
}

impl Limiter for RateLimiterFlexible {
    type State = FlexibleState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::RateLimiterFlexible);

    fn new_state(&self, _now: Nanos) -> FlexibleState {
        FlexibleState {
            value: 0,
            expires_at: 0,
        }
    }

    fn decide_n(&self, s: &mut FlexibleState, now: Nanos, cost: Cost) -> Decision {
        let (cost, points) = (i64::from(cost), self.points as i64);
        let now_ms = ms(now);
        // `incrby` adds before `consume` compares: refused points stay counted.
        if s.expires_at > now_ms {
            s.value += cost;
        } else {
            *s = FlexibleState {
                value: cost,
                expires_at: now_ms + self.duration_ms,
            };
        }
        if s.value > points {
            // Only the call that crossed `points` blocks (the count was within it before).
            if self.block_ms > 0 && s.value <= points + cost {
                s.expires_at = now_ms + self.block_ms;
            }
            Decision {
                outcome: Outcome::Reject {
                    retry_after: retry_at_ms(now, s.expires_at),
                },
                remaining: 0,
                reset_at: at_ms(s.expires_at),
            }
        } else {
            // `remainingPoints`: above `points` after a reward of more than was consumed.
            Decision::allow((points - s.value) as u64, at_ms(s.expires_at))
        }
    }

    /// `reward(key, units)`: `incrby(key, −units)`, which takes the points off a live record
    /// (below zero if it had fewer) and, for an expired or missing one, starts a record of
    /// `−units` points for a whole `duration`.
    fn refund(&self, s: &mut FlexibleState, now: Nanos, _: Nanos, units: Cost) {
        let now_ms = ms(now);
        if s.expires_at > now_ms {
            s.value -= i64::from(units);
        } else {
            *s = FlexibleState {
                value: -i64::from(units),
                expires_at: now_ms + self.duration_ms,
            };
        }
    }

    fn is_idle(&self, s: &FlexibleState, now: Nanos) -> bool {
        ms(now) >= s.expires_at
    }

    fn redis_bytes(_: &FlexibleState) -> usize {
        // RateLimiterRedis keeps one counter key with a TTL.
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    #[test]
    fn block_replaces_the_window_end() {
        // 2 points per 10 s, block 1 s: the block ends before the window would have.
        let f = RateLimiterFlexible {
            points: 2,
            duration_ms: 10_000,
            block_ms: 1000,
        };
        let mut s = f.new_state(0);
        assert_eq!(f.decide(&mut s, 0), Decision::allow(1, 10_000 * MS));
        assert_eq!(f.decide(&mut s, MS), Decision::allow(0, 10_000 * MS));
        let d = f.decide(&mut s, 2 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 1000 * MS
            }
        );
        // The fourth is refused but does not extend the block.
        let d = f.decide(&mut s, 500 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 502 * MS
            }
        );
        assert_eq!(s.value, 4);
        // At 1002 ms the record restarts: a fresh window of 10 s.
        assert_eq!(f.decide(&mut s, 1002 * MS), Decision::allow(1, 11_002 * MS));
    }

    fn reject(retry_ms: u64, reset_ms: u64) -> Decision {
        Decision {
            outcome: Outcome::Reject {
                retry_after: retry_ms * MS,
            },
            remaining: 0,
            reset_at: reset_ms * MS,
        }
    }

    #[test]
    fn a_cost_above_points_is_refused_and_still_counted() {
        // 3 points per 10 s. consume(k, 5) at 0 starts the record at 5 (`set(key, 5, 10)`),
        // 5 > 3: refused until the record expires at 10 000 ms.
        let f = RateLimiterFlexible {
            points: 3,
            duration_ms: 10_000,
            block_ms: 0,
        };
        let mut s = f.new_state(0);
        assert_eq!(f.decide_n(&mut s, 0, 5), reject(10_000, 10_000));
        assert_eq!(s.value, 5);
        // The 5 points stay: a unit at 1 ms makes 6 > 3, refused for the 9 999 ms left.
        assert_eq!(f.decide(&mut s, MS), reject(9_999, 10_000));
        // At 10 000 ms the record restarts at 1: 2 points left, until 20 000 ms.
        assert_eq!(
            f.decide(&mut s, 10_000 * MS),
            Decision::allow(2, 20_000 * MS)
        );
        // With a 2 s block, the costly call crosses `points` from 0 (5 <= 3 + 5): blocked
        // until 2 000 ms, sooner than the window's 10 000 ms.
        let b = RateLimiterFlexible {
            block_ms: 2000,
            ..f
        };
        let mut s = b.new_state(0);
        assert_eq!(b.decide_n(&mut s, 0, 5), reject(2000, 2000));
    }

    #[test]
    fn a_refused_costly_call_counts_and_blocks_once() {
        // 5 points per 10 s, block 1 s.
        let f = RateLimiterFlexible {
            points: 5,
            duration_ms: 10_000,
            block_ms: 1000,
        };
        let mut s = f.new_state(0);
        // 3 points at 0: count 3, 2 left.
        assert_eq!(f.decide_n(&mut s, 0, 3), Decision::allow(2, 10_000 * MS));
        // 3 more at 1 ms: count 6 > 5, and 6 <= 5 + 3 (it crossed): blocked until 1 001 ms.
        assert_eq!(f.decide_n(&mut s, MS, 3), reject(1000, 1001));
        assert_eq!(s.value, 6);
        // The refused 3 ate the 2 points left: a unit at 2 ms makes 7 > 5, and 7 > 5 + 1 so
        // the block is not renewed: 999 ms to go.
        assert_eq!(f.decide(&mut s, 2 * MS), reject(999, 1001));
        assert_eq!(s.value, 7);
        // At 1 001 ms the record restarts with the call's 2 points: 3 left until 11 001 ms.
        assert_eq!(
            f.decide_n(&mut s, 1001 * MS, 2),
            Decision::allow(3, 11_001 * MS)
        );
    }

    #[test]
    fn fractional_seconds_are_taken_as_the_library_takes_them() {
        use crate::algorithms::profiles::{Profile, ProfileKind};
        let policy = Params {
            limit: 1,
            window: 60 * crate::time::NANOS_PER_SEC,
            burst: 1,
        };
        let build = |duration: ParamValue, block: ParamValue| {
            let given = [
                ("duration".to_string(), duration),
                ("blockDuration".to_string(), block),
            ];
            match ProfileKind::RateLimiterFlexible.configure(policy, &given) {
                Ok(Profile::RateLimiterFlexible(f)) => Ok((f.duration_ms, f.block_ms)),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.reason),
            }
        };
        use ParamValue::{Float, Int, Str};
        // 1.5 s is 1500 ms; 1.1 · 1000 is 1100.0000000000002 in doubles, a 1100 ms timer;
        // under a millisecond, Node's timer waits 1 ms; "250ms" is 0.25 s.
        assert_eq!(build(Float(1.5), Int(0)), Ok((1500, 0)));
        assert_eq!(build(Float(1.1), Float(0.5)), Ok((1100, 500)));
        assert_eq!(build(Float(0.0004), Int(2)), Ok((1, 2000)));
        assert_eq!(
            build(Str("250ms".into()), Str("1.5s".into())),
            Ok((250, 1500))
        );
        assert!(build(Float(-1.0), Int(0)).unwrap_err().contains("positive"));
        assert!(build(Float(f64::NAN), Int(0)).is_err());
        // A fractional window decides like a whole one of its milliseconds.
        let f = RateLimiterFlexible {
            points: 1,
            duration_ms: build(Float(1.1), Int(0)).unwrap().0,
            block_ms: 0,
        };
        let mut s = f.new_state(0);
        assert!(f.decide(&mut s, 0).outcome.is_admitted());
        assert!(!f.decide(&mut s, 1099 * MS).outcome.is_admitted());
        assert!(f.decide(&mut s, 1100 * MS).outcome.is_admitted());
    }

    #[test]
    fn reward_takes_points_off_and_opens_a_record_of_its_own() {
        use crate::algorithms::KeyedLimiter;
        // 5 points per 10 s. 4 consumed, 6 rewarded: -2 consumed, 7 remaining.
        let f = RateLimiterFlexible {
            points: 5,
            duration_ms: 10_000,
            block_ms: 0,
        };
        let mut keyed = KeyedLimiter::new(f);
        assert_eq!(keyed.decide_n(0, 0, 4), Decision::allow(1, 10_000 * MS));
        keyed.refund(0, 100 * MS, 0, 6);
        assert_eq!(
            keyed.decide_n(0, 200 * MS, 7),
            Decision::allow(0, 10_000 * MS)
        );
        // After the record expires (and the key is evicted), a reward starts a record of -3
        // points for a whole duration, from the reward's time.
        keyed.evict_idle(10_000 * MS);
        assert_eq!(keyed.memory().live_keys, 0);
        keyed.refund(0, 12_000 * MS, 11_000 * MS, 3);
        assert_eq!(keyed.memory().live_keys, 1);
        assert_eq!(
            keyed.decide_n(0, 13_000 * MS, 8),
            Decision::allow(0, 22_000 * MS)
        );
        assert!(!keyed.decide(0, 13_000 * MS).outcome.is_admitted());
    }
}
