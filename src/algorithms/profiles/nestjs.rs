//! @nestjs/throttler 6.x with its default `ThrottlerStorageService` (`dist/throttler.service.js`,
//! `increment`; the guard in `throttler.guard.js` defaults `blockDuration` to `ttl`).
//!
//! Per key, a log of hit expiry times (`Date.now() + ttl`, ms). A hit first drops the expired
//! entries (`expiresAt > now` survive). With `blockDuration > 0` (the guard's default): a hit is
//! logged unless the key is blocked; when the log then holds more than `limit` entries the key
//! is blocked until `now + blockDuration` (that hit is refused and stays logged); while blocked
//! every hit is refused and not logged; the first hit at or after the block's end clears the log,
//! is logged, and passes. With `blockDuration = 0` it is a sliding log that never blocks: a hit
//! is refused, unlogged, while `limit` unexpired hits are logged. The per-key `expiresAt` only
//! feeds the `X-RateLimit-Reset` header. The sweeper (`evictIdleRecords`, every 60 s) removes only
//! records a later hit would treat as new, so it does not change decisions.

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, at_ms, ms, policy_millis,
    retry_at_ms,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::Nanos;
use std::collections::VecDeque;

/// `ThrottlerModule.forRoot([{ ttl, limit, blockDuration }])`, default in-memory storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestjsThrottler {
    ttl: u64,
    limit: u64,
    block: u64,
}

/// The storage's record of one key (one throttler).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NestjsState {
    /// Expiry times (ms) of the logged hits, oldest first.
    pub hits: VecDeque<u64>,
    /// `expiresAt` (ms): 0 for a key never seen.
    pub expires_at: u64,
    pub(crate) blocked: bool,
    /// `blockExpiresAt` (ms).
    pub block_expires_at: u64,
}

impl ProfileDef for NestjsThrottler {
    const NAME: &'static str = "nestjs-throttler";
    const DESCRIPTION: &'static str = "npm @nestjs/throttler 6 (in-memory storage): sliding log of hits on a ms clock, blocks for blockDuration once over the limit";
    const WEIGHT: Weight = Weight::Requests(
        "ThrottlerStorage.increment(key, ttl, limit, blockDuration, name) takes no weight: one logged hit per request",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "ttl",
            ty: ParamType::Duration,
            default: "policy window",
            doc: "ttl: how long a hit counts (an integer in ms, or a duration string)",
        },
        ParamSpec {
            name: "limit",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "limit: hits within ttl before the key is blocked",
        },
        ParamSpec {
            name: "blockDuration",
            ty: ParamType::Duration,
            default: "ttl (the guard's default); 0 turns blocking off",
            doc: "blockDuration: how long a key over the limit is refused (ms or duration string)",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let ttl = match args.millis("ttl", true)? {
            Some(t) => t,
            None => policy_millis(policy.window, "ttl")?,
        };
        let limit = args
            .count("limit", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let block = args.millis("blockDuration", false)?.unwrap_or(ttl);
        Ok(NestjsThrottler { ttl, limit, block })
    }
}

impl NestjsThrottler {
    /// From when the key's record behaves, and reports, as a new one.
    fn idle_at(&self, s: &NestjsState) -> u64 {
        let log = if s.blocked {
            s.block_expires_at
        } else {
            s.hits.back().copied().unwrap_or(0)
        };
        log.max(s.expires_at)
    }
}

impl Limiter for NestjsThrottler {
    type State = NestjsState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::NestjsThrottler);

    fn new_state(&self, _now: Nanos) -> NestjsState {
        NestjsState::default()
    }

    fn decide_n(&self, s: &mut NestjsState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        while s.hits.front().is_some_and(|&e| e <= now_ms) {
            s.hits.pop_front();
        }
        if s.expires_at <= now_ms {
            s.expires_at = now_ms + self.ttl;
        }
        let refused_until = if self.block == 0 {
            // incrementWithoutBlock: refused, unlogged, while `limit` hits are live.
            if (s.hits.len() as u64) < self.limit {
                s.hits.push_back(now_ms + self.ttl);
                None
            } else {
                s.hits.front().copied()
            }
        } else {
            if !s.blocked {
                s.hits.push_back(now_ms + self.ttl);
                if s.hits.len() as u64 > self.limit {
                    s.blocked = true;
                    s.block_expires_at = now_ms + self.block;
                }
            }
            if s.blocked && s.block_expires_at <= now_ms {
                s.blocked = false;
                s.hits.clear();
                s.hits.push_back(now_ms + self.ttl);
            }
            s.blocked.then_some(s.block_expires_at)
        };
        let reset_at = at_ms(self.idle_at(s));
        match refused_until {
            Some(until) => Decision {
                outcome: Outcome::Reject {
                    retry_after: retry_at_ms(now, until),
                },
                remaining: 0,
                reset_at,
            },
            None => Decision::allow(self.limit.saturating_sub(s.hits.len() as u64), reset_at),
        }
    }

    fn is_idle(&self, s: &NestjsState, now: Nanos) -> bool {
        ms(now) >= self.idle_at(s)
    }

    fn heap_bytes(s: &NestjsState) -> usize {
        s.hits.capacity() * size_of::<u64>()
    }

    fn redis_bytes(s: &NestjsState) -> usize {
        // The Redis storage packages keep the hits as a sorted set.
        crate::algorithms::redis::sorted_set(s.hits.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    #[test]
    fn over_the_limit_blocks_for_block_duration() {
        // limit 2 per 1000 ms, block 5000 ms.
        let n = NestjsThrottler {
            ttl: 1000,
            limit: 2,
            block: 5000,
        };
        let mut s = n.new_state(0);
        assert_eq!(n.decide(&mut s, 0), Decision::allow(1, 1000 * MS));
        assert_eq!(n.decide(&mut s, 10 * MS), Decision::allow(0, 1010 * MS));
        // Third hit: logged, count 3 > 2: blocked until 5020.
        let d = n.decide(&mut s, 20 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 5000 * MS
            }
        );
        assert_eq!(s.hits.len(), 3);
        // Long after the hits expire, still blocked; not logged.
        assert!(!n.decide(&mut s, 5019 * MS).outcome.is_admitted());
        assert_eq!(s.hits.len(), 0);
        // At the block's end: cleared, logged, admitted.
        assert_eq!(n.decide(&mut s, 5020 * MS), Decision::allow(1, 6020 * MS));
    }

    #[test]
    fn without_blocking_it_is_a_sliding_log() {
        let n = NestjsThrottler {
            ttl: 1000,
            limit: 2,
            block: 0,
        };
        let mut s = n.new_state(0);
        n.decide(&mut s, 0);
        n.decide(&mut s, 400 * MS);
        let d = n.decide(&mut s, 999 * MS);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: MS });
        assert_eq!(s.hits.len(), 2, "refused hits are not logged");
        // The first hit expires at 1000 ms (expiresAt > now survives).
        assert!(n.decide(&mut s, 1000 * MS).outcome.is_admitted());
        assert!(!n.decide(&mut s, 1001 * MS).outcome.is_admitted());
    }
}
