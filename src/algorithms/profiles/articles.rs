//! Two articles' own code, as written (docs/profiles.md quotes the lines and the titles in
//! full): from “Rate Limiting em Produção”, the in-memory `TokenBucketRateLimiter` and the Redis
//! `DistributedSlidingWindowRateLimiter`; from “Limitação de taxa de API”, the Lua
//! `rateLimitCheck` (fixed window) and the sliding counter. All read `Date.now()` (ms).

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, at_ms, first_ns, ms,
    policy_millis, retry_at_ms,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{DEFAULT_START, NANOS_PER_SEC, Nanos};
use std::collections::VecDeque;

const LIMIT: ParamSpec = ParamSpec {
    name: "limit",
    ty: ParamType::Count,
    default: "policy limit",
    doc: "requests per window (the article hard-codes 100)",
};
const WINDOW_MS: ParamSpec = ParamSpec {
    name: "windowMs",
    ty: ParamType::Duration,
    default: "policy window",
    doc: "the window (an integer in ms, or a duration string; the article uses 60000)",
};

fn limit_and_window(policy: Params, args: &Args<'_>) -> Result<(u64, u64), ProfileError> {
    let limit = args
        .count("limit", u32::MAX as u64)?
        .unwrap_or(policy.limit);
    let window = match args.millis("windowMs", true)? {
        Some(w) => w,
        None => policy_millis(policy.window, "windowMs")?,
    };
    Ok((limit, window))
}

fn refused(now: Nanos, until_ms: u64, reset_at: Nanos) -> Decision {
    Decision {
        outcome: Outcome::Reject {
            retry_after: retry_at_ms(now, until_ms),
        },
        remaining: 0,
        reset_at,
    }
}

// ---------------------------------------------------------------------------------------------

/// “Rate Limiting em Produção”'s `TokenBucketRateLimiter(capacity, refillRate)`, one instance
/// per key created on its first request: JS numbers (doubles), `elapsed = (now − lastRefill) /
/// 1000`, `tokens = Math.min(capacity, tokens + elapsed·refillRate)`, admit if `tokens >= 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArticleTokenBucket {
    capacity: f64,
    refill_rate: f64,
}

impl Eq for ArticleTokenBucket {}

/// One key's `TokenBucketRateLimiter` instance: its float `tokens` and `lastRefill`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArticleBucketState {
    pub(crate) tokens: f64,
    /// `lastRefill` (ms); `None` before the instance exists.
    pub last_refill: Option<u64>,
}

impl ProfileDef for ArticleTokenBucket {
    const NAME: &'static str = "article-float-token-bucket";
    const DESCRIPTION: &'static str = "the article “Rate Limiting em Produção”'s in-memory TokenBucketRateLimiter: float tokens refilled on each request, ms clock";
    const WEIGHT: Weight = Weight::Requests("the article's code counts one per request");
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "capacity",
            ty: ParamType::Count,
            default: "policy burst",
            doc: "the bucket's capacity, full at creation",
        },
        ParamSpec {
            name: "refillRate",
            ty: ParamType::Number,
            default: "policy limit / policy window in seconds (a double)",
            doc: "tokens per second",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let capacity = args
            .count("capacity", u32::MAX as u64)?
            .unwrap_or(policy.burst) as f64;
        let refill_rate = match args.number("refillRate")? {
            Some(r) => r,
            None => policy.limit as f64 / (policy.window as f64 / NANOS_PER_SEC as f64),
        };
        Ok(ArticleTokenBucket {
            capacity,
            refill_rate,
        })
    }
}

impl ArticleTokenBucket {
    /// `refill()` at `now_ms`, without storing.
    fn refilled(&self, s: &ArticleBucketState, now_ms: u64) -> f64 {
        match s.last_refill {
            None => self.capacity,
            Some(last) => {
                let elapsed = (now_ms - last) as f64 / 1000.0;
                self.capacity.min(s.tokens + elapsed * self.refill_rate)
            }
        }
    }
}

impl Limiter for ArticleTokenBucket {
    type State = ArticleBucketState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::ArticleTokenBucket);

    fn new_state(&self, _now: Nanos) -> ArticleBucketState {
        ArticleBucketState {
            tokens: self.capacity,
            last_refill: None,
        }
    }

    fn decide_n(&self, s: &mut ArticleBucketState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        s.tokens = self.refilled(s, now_ms);
        s.last_refill = Some(now_ms);
        let snapshot = *s;
        let full_at = first_ns(now, |x| self.refilled(&snapshot, ms(x)) >= self.capacity);
        if s.tokens >= 1.0 {
            s.tokens -= 1.0;
            let after = *s;
            let full_at = first_ns(now, |x| self.refilled(&after, ms(x)) >= self.capacity);
            Decision::allow(s.tokens as u64, full_at)
        } else {
            let at = first_ns(now, |x| self.refilled(&snapshot, ms(x)) >= 1.0);
            Decision {
                outcome: Outcome::Reject {
                    retry_after: (at - now).max(1),
                },
                remaining: 0,
                reset_at: full_at,
            }
        }
    }

    fn is_idle(&self, s: &ArticleBucketState, now: Nanos) -> bool {
        self.refilled(s, ms(now)) >= self.capacity
    }

    fn redis_bytes(_: &ArticleBucketState) -> usize {
        crate::algorithms::redis::SMALL_HASH_KEY
    }
}

// ---------------------------------------------------------------------------------------------

/// “Rate Limiting em Produção”'s `DistributedSlidingWindowRateLimiter`: one `MULTI` of
/// `ZREMRANGEBYSCORE key 0 (now − windowMs)`, `ZCARD`, `ZADD key now "now"`, `EXPIRE`; admitted if
/// the count (taken before the add) is under `maxRequests`. The add always runs, so refused
/// requests are logged too, and requests in the same millisecond share one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArticleRedisZsetLog {
    limit: u64,
    window_ms: u64,
}

/// The sorted set's members (distinct ms), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArticleLogState {
    pub(crate) members: VecDeque<u64>,
}

impl ProfileDef for ArticleRedisZsetLog {
    const NAME: &'static str = "article-redis-zset-log";
    const DESCRIPTION: &'static str = "the article “Rate Limiting em Produção”'s Redis sorted-set log: counted before the add, refused requests logged, same-ms requests collapse";
    const WEIGHT: Weight = Weight::Requests("the article's code counts one per request");
    const PARAMS: &'static [ParamSpec] = &[LIMIT, WINDOW_MS];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (limit, window_ms) = limit_and_window(policy, args)?;
        Ok(ArticleRedisZsetLog { limit, window_ms })
    }
}

impl ArticleRedisZsetLog {
    /// `(maxRequests, windowMs)`: what the article's Redis commands are called with.
    pub fn config(&self) -> (u64, u64) {
        (self.limit, self.window_ms)
    }
}

impl Limiter for ArticleRedisZsetLog {
    type State = ArticleLogState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::ArticleRedisZsetLog);

    fn new_state(&self, _now: Nanos) -> ArticleLogState {
        ArticleLogState::default()
    }

    fn decide_n(&self, s: &mut ArticleLogState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        // ZREMRANGEBYSCORE key 0 windowStart: scores ≤ now − windowMs go.
        if let Some(start) = now_ms.checked_sub(self.window_ms) {
            while s.members.front().is_some_and(|&m| m <= start) {
                s.members.pop_front();
            }
        }
        let count = s.members.len() as u64;
        if s.members.back() != Some(&now_ms) {
            s.members.push_back(now_ms);
        }
        let n = s.members.len();
        let reset_at = at_ms(s.members[n - 1] + self.window_ms);
        if count < self.limit {
            Decision::allow(self.limit.saturating_sub(n as u64), reset_at)
        } else {
            // Admitted once at most limit − 1 members are newer than x − windowMs.
            let oldest_blocking = s.members[n - self.limit as usize];
            refused(now, oldest_blocking + self.window_ms, reset_at)
        }
    }

    fn is_idle(&self, s: &ArticleLogState, now: Nanos) -> bool {
        s.members
            .back()
            .is_none_or(|&m| ms(now) >= m + self.window_ms)
    }

    fn heap_bytes(s: &ArticleLogState) -> usize {
        s.members.capacity() * size_of::<u64>()
    }

    fn redis_bytes(s: &ArticleLogState) -> usize {
        crate::algorithms::redis::sorted_set(s.members.len())
    }
}

// ---------------------------------------------------------------------------------------------

/// “Limitação de taxa de API”'s `rateLimitCheck` (Lua): `INCR key`, `PEXPIRE key ttlMs` when
/// the count is 1, refuse when `count > limit` (returning `PTTL`). A window from the key's first
/// hit; refused hits count; Redis deletes the key only once `now > expire time`, so a hit at
/// exactly the expire time still counts against the old window (and the returned PTTL of 0 is 1 ms
/// short).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArticleLuaFixedWindow {
    limit: u64,
    window_ms: u64,
}

/// One key's Redis string: the `INCR` count (refused hits included) and its expire time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArticleCounterState {
    pub(crate) count: u64,
    /// The key's expire time (ms); meaningless while `count` is 0.
    pub expires_at: u64,
}

impl ProfileDef for ArticleLuaFixedWindow {
    const NAME: &'static str = "article-redis-lua-fixed-window";
    const DESCRIPTION: &'static str = "the article “Limitação de taxa de API”'s Lua INCR + PEXPIRE on the first hit: window from the first hit, refused hits counted, inclusive expiry";
    const WEIGHT: Weight = Weight::Requests("the article's code counts one per request");
    const PARAMS: &'static [ParamSpec] = &[LIMIT, WINDOW_MS];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (limit, window_ms) = limit_and_window(policy, args)?;
        Ok(ArticleLuaFixedWindow { limit, window_ms })
    }
}

impl ArticleLuaFixedWindow {
    /// `(limit, ttlMs)`: the article's script arguments.
    pub fn config(&self) -> (u64, u64) {
        (self.limit, self.window_ms)
    }
}

impl Limiter for ArticleLuaFixedWindow {
    type State = ArticleCounterState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::ArticleLuaFixedWindow);

    fn new_state(&self, _now: Nanos) -> ArticleCounterState {
        ArticleCounterState::default()
    }

    fn decide_n(&self, s: &mut ArticleCounterState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        if s.count > 0 && now_ms > s.expires_at {
            *s = ArticleCounterState::default();
        }
        s.count += 1;
        if s.count == 1 {
            s.expires_at = now_ms + self.window_ms;
        }
        let reset_at = at_ms(s.expires_at + 1);
        if s.count > self.limit {
            refused(now, s.expires_at + 1, reset_at)
        } else {
            Decision::allow(self.limit - s.count, reset_at)
        }
    }

    fn is_idle(&self, s: &ArticleCounterState, now: Nanos) -> bool {
        s.count == 0 || ms(now) > s.expires_at
    }

    fn redis_bytes(_: &ArticleCounterState) -> usize {
        crate::algorithms::redis::STRING_KEY
    }
}

// ---------------------------------------------------------------------------------------------

/// “Limitação de taxa de API”'s sliding counter: windows `floor(now / windowMs)`,
/// `progress = (now % windowMs) / windowMs`, `estimated = previous·(1 − progress) + current`
/// (doubles), refuse when `estimated >= limit`; only admitted requests `INCR` the current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArticleSlidingCounter {
    limit: u64,
    window_ms: u64,
    /// The instant virtual time 0 stands for (ns since the Unix epoch): the windows are aligned
    /// to the epoch, as `Date.now()` reads it.
    epoch_ns: u64,
}

/// One key's two window counters: the current window's index (`floor(Date.now() / windowMs)`)
/// and the admitted requests in it and in the window before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArticleWindowsState {
    pub(crate) window: u64,
    pub(crate) current: u64,
    pub(crate) previous: u64,
}

impl ProfileDef for ArticleSlidingCounter {
    const NAME: &'static str = "article-sliding-counter";
    const DESCRIPTION: &'static str = "the article “Limitação de taxa de API”'s sliding counter: two aligned windows, previous weighted by (1 − (now % W) / W) in doubles";
    const WEIGHT: Weight = Weight::Requests("the article's code counts one per request");
    const PARAMS: &'static [ParamSpec] = &[LIMIT, WINDOW_MS];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (limit, window_ms) = limit_and_window(policy, args)?;
        Ok(ArticleSlidingCounter {
            limit,
            window_ms,
            epoch_ns: DEFAULT_START,
        })
    }
}

impl ArticleSlidingCounter {
    /// The same limiter with virtual time 0 at `epoch_ns` after the Unix epoch.
    pub fn starting_at(self, epoch_ns: u64) -> Self {
        Self { epoch_ns, ..self }
    }

    /// `Date.now()` at virtual time `now`.
    fn date_now(&self, now: Nanos) -> u64 {
        ms(self.epoch_ns.saturating_add(now))
    }

    /// The first virtual nanosecond at which `Date.now()` reads `date_ms`.
    fn at_date(&self, date_ms: u64) -> Nanos {
        at_ms(date_ms).saturating_sub(self.epoch_ns)
    }

    /// (previous, current) counts as seen at `now_ms`.
    fn counts(&self, s: &ArticleWindowsState, now_ms: u64) -> (u64, u64) {
        let w = now_ms / self.window_ms;
        match w.checked_sub(s.window) {
            Some(0) => (s.previous, s.current),
            Some(1) => (s.current, 0),
            _ => (0, 0),
        }
    }

    fn estimated(&self, s: &ArticleWindowsState, now_ms: u64) -> f64 {
        let (previous, current) = self.counts(s, now_ms);
        let progress = (now_ms % self.window_ms) as f64 / self.window_ms as f64;
        previous as f64 * (1.0 - progress) + current as f64
    }
}

impl Limiter for ArticleSlidingCounter {
    type State = ArticleWindowsState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::ArticleSlidingCounter);

    fn new_state(&self, now: Nanos) -> ArticleWindowsState {
        ArticleWindowsState {
            window: self.date_now(now) / self.window_ms,
            current: 0,
            previous: 0,
        }
    }

    fn decide_n(&self, s: &mut ArticleWindowsState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = self.date_now(now);
        let (previous, current) = self.counts(s, now_ms);
        *s = ArticleWindowsState {
            window: now_ms / self.window_ms,
            current,
            previous,
        };
        let idle_at = |s: &ArticleWindowsState| self.at_date((s.window + 2) * self.window_ms);
        if self.estimated(s, now_ms) >= self.limit as f64 {
            let snapshot = *s;
            let at = first_ns(now, |x| {
                self.estimated(&snapshot, self.date_now(x)) < self.limit as f64
            });
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: (at - now).max(1),
                },
                remaining: 0,
                reset_at: idle_at(s),
            };
        }
        s.current += 1;
        let left = self.limit as f64 - self.estimated(s, now_ms);
        Decision::allow(left.max(0.0).ceil() as u64, idle_at(s))
    }

    fn is_idle(&self, s: &ArticleWindowsState, now: Nanos) -> bool {
        self.date_now(now) / self.window_ms >= s.window + 2 || (s.current == 0 && s.previous == 0)
    }

    fn redis_bytes(s: &ArticleWindowsState) -> usize {
        (usize::from(s.current > 0) + usize::from(s.previous > 0))
            * crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    #[test]
    fn token_bucket_refills_in_doubles_per_request() {
        // capacity 2, 100 per minute → 1.6666666666666667 tokens/s.
        let b = ArticleTokenBucket {
            capacity: 2.0,
            refill_rate: 100.0 / 60.0,
        };
        let mut s = b.new_state(0);
        assert!(b.decide(&mut s, 0).outcome.is_admitted());
        assert!(b.decide(&mut s, 0).outcome.is_admitted());
        let d = b.decide(&mut s, 0);
        // 0.6 s · 1.6666666666666667 = 1.0 exactly: retry at 600 ms.
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 600 * MS
            }
        );
        assert!(b.decide(&mut s, 600 * MS).outcome.is_admitted());
    }

    #[test]
    fn redis_log_records_refusals_and_collapses_same_ms() {
        let l = ArticleRedisZsetLog {
            limit: 2,
            window_ms: 1000,
        };
        let mut s = l.new_state(0);
        // Same millisecond: one member, so the count stays 1 and all pass.
        for _ in 0..5 {
            assert!(l.decide(&mut s, 10 * MS + 3).outcome.is_admitted());
        }
        assert_eq!(s.members.len(), 1);
        assert!(l.decide(&mut s, 11 * MS).outcome.is_admitted());
        // Count 2 before the add: refused, and logged anyway.
        let d = l.decide(&mut s, 12 * MS);
        assert_eq!(s.members, [10, 11, 12]);
        // Admitted once only one member is newer than x − 1000: 11 ≤ x − 1000 → x = 1011.
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 999 * MS
            }
        );
        // Refusals keep the key blocked: each logs a member.
        assert!(!l.decide(&mut s, 1010 * MS).outcome.is_admitted());
        assert!(!l.decide(&mut s, 1011 * MS).outcome.is_admitted());
    }

    #[test]
    fn lua_fixed_window_expires_after_the_expire_time() {
        let f = ArticleLuaFixedWindow {
            limit: 1,
            window_ms: 1000,
        };
        let mut s = f.new_state(0);
        assert!(f.decide(&mut s, 500 * MS).outcome.is_admitted());
        // At exactly 1500 ms the key still exists (Redis expires when now > when).
        let d = f.decide(&mut s, 1500 * MS);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: MS });
        assert_eq!(s.count, 2);
        assert!(f.decide(&mut s, 1501 * MS).outcome.is_admitted());
    }

    #[test]
    fn sliding_counter_weights_in_doubles() {
        let c = ArticleSlidingCounter {
            limit: 10,
            window_ms: 1000,
            epoch_ns: DEFAULT_START,
        };
        let mut s = c.new_state(0);
        for _ in 0..10 {
            assert!(c.decide(&mut s, 900 * MS).outcome.is_admitted());
        }
        assert!(!c.decide(&mut s, 999 * MS).outcome.is_admitted());
        // At 1500 ms: 10 · (1 − 0.5) = 5 → 5 more.
        let admitted = (0..10)
            .filter(|_| c.decide(&mut s, 1500 * MS).outcome.is_admitted())
            .count();
        assert_eq!(admitted, 5);
    }

    #[test]
    fn sliding_counter_windows_are_aligned_to_the_unix_epoch() {
        // 1 per 7 s from 1735689593 s, 1 s past a multiple of 7 s: the window turns 6 s after
        // virtual 0, so hits at 0 and 6.5 s are in two windows, the first weighing
        // 1 − 0.5/7 < 1, and the second passes (from 2026-01-01, a multiple of 7 s, it would not).
        let c = ArticleSlidingCounter {
            limit: 1,
            window_ms: 7000,
            epoch_ns: DEFAULT_START,
        }
        .starting_at(1_735_689_593_000 * MS);
        let mut s = c.new_state(0);
        assert!(c.decide(&mut s, 0).outcome.is_admitted());
        assert!(!c.decide(&mut s, 5_999 * MS).outcome.is_admitted());
        assert!(!c.decide(&mut s, 6_000 * MS).outcome.is_admitted());
        assert!(c.decide(&mut s, 6_500 * MS).outcome.is_admitted());
    }
}
