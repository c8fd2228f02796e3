//! express-rate-limit 8.x with its default `MemoryStore` (`source/memory-store.ts`,
//! `increment`/`resetClient`; the decision is `totalHits > limit` in `source/rate-limit.ts`).
//!
//! A fixed window per key that starts at the key's first hit, on `Date.now()` (ms): the client's
//! `resetTime` is `now + windowMs`; a hit at or after `resetTime` starts a new window. Every hit
//! is counted, rejected ones included, so a client that keeps hammering stays blocked only until
//! `resetTime` (the count restarts then). The store's `setInterval(clearExpired, windowMs)` only
//! drops clients whose window already ended, which a later hit would restart anyway: it does not
//! change decisions, so it is not modelled.

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, at_ms, ms, policy_millis,
    retry_at_ms,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::Nanos;

/// `rateLimit({ windowMs, limit })` with the default memory store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpressRateLimit {
    window_ms: u64,
    limit: u64,
}

/// The store's `Client`: hits in the window and when the window ends (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpressState {
    pub(crate) total_hits: u64,
    pub(crate) reset_ms: u64,
}

impl ProfileDef for ExpressRateLimit {
    const NAME: &'static str = "express-rate-limit";
    const DESCRIPTION: &'static str = "npm express-rate-limit 8 (MemoryStore): fixed window from each key's first hit, ms clock, rejected hits counted";
    const WEIGHT: Weight = Weight::Requests(
        "the Store interface's increment(key) takes no weight: MemoryStore adds 1 to totalHits per request",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "windowMs",
            ty: ParamType::Duration,
            default: "policy window",
            doc: "windowMs: the window's length (an integer in ms, or a duration string)",
        },
        ParamSpec {
            name: "limit",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "limit: hits per window; the hit that makes the count exceed it is refused",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let window_ms = match args.millis("windowMs", true)? {
            Some(w) => w,
            None => policy_millis(policy.window, "windowMs")?,
        };
        let limit = args
            .count("limit", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        Ok(ExpressRateLimit { window_ms, limit })
    }
}

impl Limiter for ExpressRateLimit {
    type State = ExpressState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::ExpressRateLimit);

    fn new_state(&self, _now: Nanos) -> ExpressState {
        // A reset time in the past: the first hit starts a window, as `resetClient` does.
        ExpressState {
            total_hits: 0,
            reset_ms: 0,
        }
    }

    fn decide_n(&self, s: &mut ExpressState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        if s.reset_ms <= now_ms {
            *s = ExpressState {
                total_hits: 0,
                reset_ms: now_ms + self.window_ms,
            };
        }
        s.total_hits += 1;
        let reset_at = at_ms(s.reset_ms);
        if s.total_hits > self.limit {
            Decision {
                outcome: Outcome::Reject {
                    retry_after: retry_at_ms(now, s.reset_ms),
                },
                remaining: 0,
                reset_at,
            }
        } else {
            Decision::allow(self.limit - s.total_hits, reset_at)
        }
    }

    fn is_idle(&self, s: &ExpressState, now: Nanos) -> bool {
        ms(now) >= s.reset_ms
    }

    fn redis_bytes(_: &ExpressState) -> usize {
        // The npm package's Redis store keeps one counter key per client.
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    #[test]
    fn window_starts_at_first_hit_and_counts_rejections() {
        let e = ExpressRateLimit {
            window_ms: 1000,
            limit: 2,
        };
        let mut s = e.new_state(0);
        // First hit at 250.4 ms: window [250, 1250) on the ms clock.
        assert_eq!(
            e.decide(&mut s, 250 * MS + 400),
            Decision::allow(1, 1250 * MS)
        );
        assert_eq!(e.decide(&mut s, 900 * MS), Decision::allow(0, 1250 * MS));
        let d = e.decide(&mut s, 1249 * MS + 999_999);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!(s.total_hits, 3, "rejected hits count");
        // At 1250 ms sharp the window restarts: [1250, 2250).
        assert!(!e.is_idle(&s, 1250 * MS - 1));
        assert!(e.is_idle(&s, 1250 * MS));
        assert_eq!(e.decide(&mut s, 1250 * MS), Decision::allow(1, 2250 * MS));
    }
}
