//! rate-limiter-flexible 11.x `RateLimiterMemory` (`lib/RateLimiterMemory.js` `consume`,
//! `lib/component/MemoryStorage/MemoryStorage.js` `incrby`/`set`).
//!
//! A fixed window per key from its first hit: the record expires at `now + duration·1000` (ms).
//! Each `consume` adds its point while `expiresAt − now > 0`, else starts a new record at 1, so
//! rejected hits count. Over `points`, the hit is refused; with `blockDuration > 0` the first
//! refused hit (count ≤ points + 1) rewrites the record to expire at `now + blockDuration·1000`,
//! keeping the count: the block replaces the window's end, even when it ends sooner. The
//! record's deletion timer fires at its expiry, when `incrby` would restart it anyway.

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, at_ms, ms, policy_seconds, retry_at_ms,
};
use crate::algorithms::{AlgorithmKind, Decision, Limiter, Outcome, Params};
use crate::time::Nanos;

/// `new RateLimiterMemory({ points, duration, blockDuration })`, one point per `consume`.
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
    pub value: u64,
    /// `expiresAt` (ms); 0 for a key never seen.
    pub expires_at: u64,
}

impl ProfileDef for RateLimiterFlexible {
    const NAME: &'static str = "rate-limiter-flexible";
    const DESCRIPTION: &'static str = "npm rate-limiter-flexible 11 (RateLimiterMemory): fixed window from each key's first hit, ms clock, rejected hits counted, optional block";
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
            doc: "duration: the window (an integer in seconds, or a duration string)",
        },
        ParamSpec {
            name: "blockDuration",
            ty: ParamType::Duration,
            default: "0 (no block)",
            doc: "blockDuration: refuse the key this long after its first refusal (s or duration string)",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let points = args
            .count("points", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let duration = match args.seconds("duration", true)? {
            Some(d) => d,
            None => policy_seconds(policy.window, "duration")?,
        };
        let block = args.seconds("blockDuration", false)?.unwrap_or(0);
        Ok(RateLimiterFlexible {
            points,
            duration_ms: duration * 1000,
            block_ms: block * 1000,
        })
    }
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

    fn decide(&self, s: &mut FlexibleState, now: Nanos) -> Decision {
        let now_ms = ms(now);
        if s.expires_at > now_ms {
            s.value += 1;
        } else {
            *s = FlexibleState {
                value: 1,
                expires_at: now_ms + self.duration_ms,
            };
        }
        if s.value > self.points {
            if self.block_ms > 0 && s.value <= self.points + 1 {
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
            Decision::allow(self.points - s.value, at_ms(s.expires_at))
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
}
