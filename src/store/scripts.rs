//! The Lua scripts a Redis store runs, one per algorithm, and what binds one to a limiter.
//!
//! Each script decides one request of one key from the virtual time it is handed (`ARGV[1]`),
//! never from Redis's clock. Lua 5.1 numbers are doubles: integers are exact below 2^53, so a
//! [`Bound`] script knows the latest virtual time at which every value it computes stays
//! below 2^53 ([`Bound::max_now`]) and refuses a call past it instead of rounding (2^53 ns is
//! about 104 days of virtual time, shortened by the window the script adds to it).

use crate::algorithms::{AlgorithmKind, Decision, Outcome, Params, Profile};
use crate::time::{NANOS_PER_MILLI, Nanos, gcd};

/// Integers a Lua number holds exactly: below 2^53.
pub const EXACT: u64 = 1 << 53;

macro_rules! script {
    ($file:literal) => {
        concat!(
            include_str!("scripts/prelude.lua"),
            include_str!(concat!("scripts/", $file))
        )
    };
}

/// Every script rlsim ships: the six algorithms, then the two articles' as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum ScriptKind {
    FixedWindow,
    SlidingWindowLog,
    SlidingWindowCounter,
    TokenBucket,
    LeakyBucket,
    Gcra,
    ArticleRedisZsetLog,
    ArticleLuaFixedWindow,
}

impl ScriptKind {
    /// The algorithm (or profile) the script stores, as scenarios name it.
    pub fn name(self) -> &'static str {
        match self {
            ScriptKind::FixedWindow => "fixed_window",
            ScriptKind::SlidingWindowLog => "sliding_window_log",
            ScriptKind::SlidingWindowCounter => "sliding_window_counter",
            ScriptKind::TokenBucket => "token_bucket",
            ScriptKind::LeakyBucket => "leaky_bucket",
            ScriptKind::Gcra => "gcra",
            ScriptKind::ArticleRedisZsetLog => "article-redis-zset-log",
            ScriptKind::ArticleLuaFixedWindow => "article-redis-lua-fixed-window",
        }
    }

    /// The Lua source (the shared prelude, then the algorithm).
    pub fn source(self) -> &'static str {
        match self {
            ScriptKind::FixedWindow => script!("fixed_window.lua"),
            ScriptKind::SlidingWindowLog => script!("sliding_window_log.lua"),
            ScriptKind::SlidingWindowCounter => script!("sliding_window_counter.lua"),
            ScriptKind::TokenBucket => script!("token_bucket.lua"),
            ScriptKind::LeakyBucket => script!("leaky_bucket.lua"),
            ScriptKind::Gcra => script!("gcra.lua"),
            ScriptKind::ArticleRedisZsetLog => script!("article_redis_zset_log.lua"),
            ScriptKind::ArticleLuaFixedWindow => script!("article_redis_lua_fixed_window.lua"),
        }
    }

    /// Keys the script touches per rate-limit key: the article's Lua fixed window keeps its virtual
    /// expire time in a second key (`KEY:exp`).
    pub fn keys(self) -> usize {
        match self {
            ScriptKind::ArticleLuaFixedWindow => 2,
            _ => 1,
        }
    }

    /// Whether the script reads the time in milliseconds (the articles' `Date.now()`).
    fn millis(self) -> bool {
        matches!(
            self,
            ScriptKind::ArticleRedisZsetLog | ScriptKind::ArticleLuaFixedWindow
        )
    }
}

/// A script with one limiter's configuration: its arguments and its time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub kind: ScriptKind,
    /// `ARGV[3..]`.
    pub args: [u64; 3],
    /// The latest virtual time (ns) the script computes exactly.
    pub max_now: Nanos,
}

/// `kind` with `args`, exact until `margin` (the most any value exceeds `now` by, in the
/// script's time unit) past `now`; `what` names the margin when it is too large.
fn bound(
    kind: ScriptKind,
    args: [u64; 3],
    margin: Option<u64>,
    what: &'static str,
) -> Result<Bound, Unscripted> {
    let margin = margin
        .filter(|&m| m < EXACT / 2)
        .ok_or(Unscripted::TooLarge(what))?;
    Ok(Bound {
        kind,
        args,
        max_now: EXACT - 1 - margin,
    })
}

/// Why a limiter cannot run as a script.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unscripted {
    #[error("no Redis script stores this algorithm")]
    NoScript,
    #[error("its parameters give values past 2^53, which Lua's doubles cannot hold exactly: {0}")]
    TooLarge(&'static str),
}

impl Bound {
    /// The script for the limiter of `kind` built from `params`, or for `profile` (which a
    /// profile kind needs: its native parameters configure the script).
    pub fn for_limiter(
        kind: AlgorithmKind,
        params: Params,
        profile: Option<&Profile>,
    ) -> Result<Bound, Unscripted> {
        let (l, w, b) = (params.limit, params.window, params.burst);
        match kind {
            AlgorithmKind::FixedWindow => bound(
                ScriptKind::FixedWindow,
                [l, w, 0],
                w.checked_mul(2),
                "2 × window",
            ),
            AlgorithmKind::SlidingWindowLog => bound(
                ScriptKind::SlidingWindowLog,
                [l, w, 0],
                w.checked_mul(2),
                "2 × window",
            ),
            AlgorithmKind::SlidingWindowCounter => {
                // limit × window is compared with the weighted previous count.
                let margin = l.checked_add(3).and_then(|k| k.checked_mul(w));
                let what = "(limit + 3) × window";
                bound(ScriptKind::SlidingWindowCounter, [l, w, 0], margin, what)
            }
            AlgorithmKind::TokenBucket => {
                let g = gcd(l, w);
                let (refill, token) = (l / g, w / g);
                let capacity = b.checked_mul(token);
                let margin = capacity.and_then(|c| c.checked_add(token));
                let args = [refill, token, capacity.unwrap_or(0)];
                let what = "(burst + 1) × window / gcd(limit, window)";
                bound(ScriptKind::TokenBucket, args, margin, what)
            }
            AlgorithmKind::LeakyBucket => {
                let g = gcd(l, w);
                let (scale, interval) = (l / g, w / g);
                let depth = b.checked_mul(interval);
                let margin = depth.and_then(|d| d.checked_add(interval.checked_mul(2)?));
                let args = [scale, interval, depth.unwrap_or(0)];
                let what = "(burst + 2) × window / gcd(limit, window)";
                let mut bound = bound(ScriptKind::LeakyBucket, args, margin, what)?;
                // The script works in ns × scale.
                bound.max_now /= scale;
                Ok(bound)
            }
            AlgorithmKind::Gcra => {
                let interval = w / l;
                let tolerance = b.saturating_sub(1).checked_mul(interval);
                let margin = tolerance.and_then(|t| t.checked_add(interval.checked_mul(2)?));
                let args = [interval, tolerance.unwrap_or(0), 0];
                bound(
                    ScriptKind::Gcra,
                    args,
                    margin,
                    "(burst + 1) × window / limit",
                )
            }
            // Its periods come from a time zone's calendar, which the scripts do not carry.
            AlgorithmKind::CalendarWindow => Err(Unscripted::NoScript),
            AlgorithmKind::Profile(p) => match profile {
                Some(profile) => Bound::for_profile(profile),
                // Configured from the policy alone, as a scenario naming it without a table.
                None => match p.configure(params, &[]) {
                    Ok(profile) => Bound::for_profile(&profile),
                    Err(_) => Err(Unscripted::NoScript),
                },
            },
        }
    }

    /// The script of a profile: only the articles' Redis scripts are stored as written.
    fn for_profile(profile: &Profile) -> Result<Bound, Unscripted> {
        let (kind, (limit, window_ms), what) = match profile {
            Profile::ArticleRedisZsetLog(s) => {
                (ScriptKind::ArticleRedisZsetLog, s.config(), "2 × windowMs")
            }
            Profile::ArticleLuaFixedWindow(s) => {
                (ScriptKind::ArticleLuaFixedWindow, s.config(), "2 × ttlMs")
            }
            Profile::Governor(_)
            | Profile::NginxLimitReq(_)
            | Profile::ExpressRateLimit(_)
            | Profile::NestjsThrottler(_)
            | Profile::RateLimiterFlexible(_)
            | Profile::PythonLimitsMovingWindow(_)
            | Profile::PythonLimitsFixedWindow(_)
            | Profile::PythonLimitsSlidingWindow(_)
            | Profile::GoXTimeRate(_)
            | Profile::EnvoyLocal(_)
            | Profile::EnvoyRatelimit(_)
            | Profile::GuavaBursty(_)
            | Profile::GuavaWarmup(_)
            | Profile::HaproxyHttpReqRate(_)
            | Profile::ArticleTokenBucket(_)
            | Profile::ArticleSlidingCounter(_) => return Err(Unscripted::NoScript),
        };
        let mut bound = bound(kind, [limit, window_ms, 0], window_ms.checked_mul(2), what)?;
        bound.max_now = bound.max_now.saturating_mul(NANOS_PER_MILLI);
        Ok(bound)
    }

    /// `ARGV[1]` for a request at `now`: ns, or ms for the article scripts. `None` past
    /// [`Bound::max_now`].
    pub fn time_arg(&self, now: Nanos) -> Option<u64> {
        if now > self.max_now {
            return None;
        }
        Some(if self.kind.millis() {
            now / NANOS_PER_MILLI
        } else {
            now
        })
    }

    /// The decision a script's reply stands for, at `now`; `None` for a reply of the wrong
    /// shape.
    pub fn decode(&self, now: Nanos, reply: &[i64]) -> Option<Decision> {
        let &[a, b, c, d] = reply else { return None };
        let u = |x: i64| u64::try_from(x).ok();
        match self.kind {
            ScriptKind::ArticleRedisZsetLog => {
                // {count before the add, members after, newest member, blocking member}.
                let (limit, window_ms) = (self.args[0], self.args[1]);
                let reset_at = at_ms(u(c)? + window_ms);
                Some(if u(a)? < limit {
                    Decision::allow(limit.saturating_sub(u(b)?), reset_at)
                } else {
                    reject(retry_at_ms(now, u(d)? + window_ms), reset_at)
                })
            }
            ScriptKind::ArticleLuaFixedWindow => {
                // {allowed, PTTL or -1, count, expire time}.
                let limit = self.args[0];
                let (count, at) = (u(c)?, u(d)?);
                let reset_at = at_ms(at + 1);
                Some(match a {
                    1 => Decision::allow(limit - count, reset_at),
                    0 => reject(retry_at_ms(now, at + 1), reset_at),
                    _ => return None,
                })
            }
            _ => {
                let outcome = match (a, u(b)?) {
                    (0, 0) => Outcome::Allow,
                    (1, d) if d > 0 => Outcome::Delay(d),
                    (2, r) if r > 0 => Outcome::Reject { retry_after: r },
                    _ => return None,
                };
                Some(Decision {
                    outcome,
                    remaining: u(c)?,
                    reset_at: u(d)?,
                })
            }
        }
    }
}

fn reject(retry_after: Nanos, reset_at: Nanos) -> Decision {
    Decision {
        outcome: Outcome::Reject { retry_after },
        remaining: 0,
        reset_at,
    }
}

/// The first virtual nanosecond a millisecond clock reads `ms` (as the article profiles count).
fn at_ms(ms: u64) -> Nanos {
    ms.saturating_mul(NANOS_PER_MILLI)
}

fn retry_at_ms(now: Nanos, ms: u64) -> Nanos {
    at_ms(ms).saturating_sub(now).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::ProfileKind;
    use crate::time::NANOS_PER_MIN;

    fn params(limit: u64, window: Nanos, burst: u64) -> Params {
        Params {
            limit,
            window,
            burst,
        }
    }

    #[test]
    fn binds_the_derived_integers_of_each_algorithm() {
        let p = params(100, NANOS_PER_MIN, 25);
        let b = Bound::for_limiter(AlgorithmKind::TokenBucket, p, None).unwrap();
        // gcd(100, 60e9) = 100: 1 unit per ns, a token is 6e8 units, 25 of them.
        assert_eq!(b.args, [1, 600_000_000, 15_000_000_000]);
        assert_eq!(b.max_now, EXACT - 1 - 15_600_000_000);
        let b = Bound::for_limiter(AlgorithmKind::LeakyBucket, p, None).unwrap();
        assert_eq!(b.args, [1, 600_000_000, 15_000_000_000]);
        let b = Bound::for_limiter(AlgorithmKind::Gcra, p, None).unwrap();
        assert_eq!(b.args, [600_000_000, 24 * 600_000_000, 0]);
        assert_eq!(
            Bound::for_limiter(AlgorithmKind::FixedWindow, p, None)
                .unwrap()
                .max_now,
            EXACT - 1 - 2 * NANOS_PER_MIN
        );
    }

    #[test]
    fn refuses_what_doubles_cannot_hold_and_what_has_no_script() {
        // 10^6 per hour: limit × window = 3.6e18 > 2^53.
        let p = params(1_000_000, 3600 * 1_000_000_000, 1);
        assert!(matches!(
            Bound::for_limiter(AlgorithmKind::SlidingWindowCounter, p, None),
            Err(Unscripted::TooLarge(_))
        ));
        let governor = ProfileKind::Governor.configure(p, &[]).unwrap();
        let kind = AlgorithmKind::Profile(ProfileKind::Governor);
        let none = Err(Unscripted::NoScript);
        assert_eq!(Bound::for_limiter(kind, p, Some(&governor)), none);
        assert_eq!(Bound::for_limiter(kind, p, None), none);
        let article = AlgorithmKind::Profile(ProfileKind::ArticleLuaFixedWindow);
        let b = Bound::for_limiter(article, p, None).unwrap();
        assert_eq!(b.kind, ScriptKind::ArticleLuaFixedWindow);
    }

    #[test]
    fn time_is_ns_or_ms_and_bounded() {
        let p = params(10, 1_000_000_000, 1);
        let b = Bound::for_limiter(AlgorithmKind::FixedWindow, p, None).unwrap();
        assert_eq!(b.time_arg(1_234_567_891), Some(1_234_567_891));
        assert_eq!(b.time_arg(b.max_now + 1), None);
        let b = Bound {
            kind: ScriptKind::ArticleLuaFixedWindow,
            args: [10, 1000, 0],
            max_now: u64::MAX,
        };
        assert_eq!(b.time_arg(1_234_567_891), Some(1234));
    }

    #[test]
    fn decodes_replies() {
        let p = params(10, 1_000_000_000, 1);
        let b = Bound::for_limiter(AlgorithmKind::FixedWindow, p, None).unwrap();
        assert_eq!(
            b.decode(5, &[0, 0, 9, 1_000_000_000]),
            Some(Decision::allow(9, 1_000_000_000))
        );
        assert_eq!(b.decode(5, &[2, 7, 0, 12]), Some(reject(7, 12)));
        // Malformed: a reject without a retry, a negative count, the wrong length.
        assert_eq!(b.decode(5, &[2, 0, 0, 12]), None);
        assert_eq!(b.decode(5, &[0, 0, -1, 12]), None);
        assert_eq!(b.decode(5, &[0, 0, 1]), None);
        let seed = Bound {
            kind: ScriptKind::ArticleLuaFixedWindow,
            args: [1, 1000, 0],
            max_now: u64::MAX,
        };
        // Second hit at 1500.3 ms of a key that expires at 1500 ms: refused until 1501 ms.
        assert_eq!(
            seed.decode(1_500_300_000, &[0, 0, 2, 1500]),
            Some(reject(700_000, 1_501_000_000))
        );
    }
}
