//! Fidelity profiles: rate limiters of real libraries, reproduced decision for decision.
//!
//! An exact algorithm (`gcra`, `fixed_window`, ...) is the textbook arithmetic. A profile is what
//! one library actually ships, edges included: its clock resolution, when its window starts,
//! whether rejected hits count, how it rounds. Each profile is one file implementing
//! [`Limiter`], and one variant of [`ProfileKind`], which owns its name, its
//! description and its native parameters (with the mapping from the policy's limit, window and
//! burst that fills in the parameters a scenario leaves out). See docs/profiles.md.
//!
//! A profile is configured from a table of native parameters (`[profile.nginx-limit-req]` in the
//! short form). A later `[[contender]]` rule takes the same keys, so the table shape is the
//! contract: [`ProfileKind::configure`] reads it whatever surrounds it.

mod articles;
mod envoy;
mod envoy_ratelimit;
mod express;
mod flexible;
mod go_rate;
mod governor;
mod guava;
mod haproxy;
mod nestjs;
mod nginx;
pub(crate) mod python_limits;

pub use articles::{
    ArticleBucketState, ArticleCounterState, ArticleLogState, ArticleLuaFixedWindow,
    ArticleRedisZsetLog, ArticleSlidingCounter, ArticleTokenBucket, ArticleWindowsState,
};
pub use envoy::{EnvoyLocal, EnvoyState};
pub use envoy_ratelimit::{EnvoyRatelimit, EnvoyRatelimitState, UNITS as ENVOY_RATELIMIT_UNITS};
pub use express::{ExpressRateLimit, ExpressState};
pub use flexible::{FlexibleState, RateLimiterFlexible};
pub use go_rate::{GoRate, GoRateState};
pub use governor::Governor;
pub use guava::{GuavaBursty, GuavaState, GuavaWarmup};
pub use haproxy::{HaproxyHttpReqRate, HaproxyState};
pub use nestjs::{NestjsState, NestjsThrottler};
pub use nginx::{NginxLimitReq, NginxState};
pub use python_limits::{
    LimitsFixedWindowState, LimitsMovingWindowState, LimitsSlidingWindowState,
    PythonLimitsFixedWindow, PythonLimitsMovingWindow, PythonLimitsSlidingWindow,
};

use super::{Limiter, LimiterVisitor, Params};
use crate::time::{self, NANOS_PER_MILLI, NANOS_PER_SEC, Nanos};
use std::fmt;

/// Every profile rlsim knows, in the order listings show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProfileKind {
    /// `governor`: the Rust crate governor's GCRA.
    Governor,
    /// `nginx-limit-req`: nginx's `limit_req` leaky bucket (burst, nodelay, delay=).
    NginxLimitReq,
    /// `express-rate-limit`: npm express-rate-limit's fixed window from each key's first hit.
    ExpressRateLimit,
    /// `nestjs-throttler`: npm @nestjs/throttler's in-memory sliding log with blocking.
    NestjsThrottler,
    /// `rate-limiter-flexible`: npm rate-limiter-flexible's in-memory fixed window.
    RateLimiterFlexible,
    /// `python-limits-moving-window`: Python `limits`' moving window (a log of admissions).
    PythonLimitsMovingWindow,
    /// `python-limits-fixed-window`: Python `limits`' fixed window from each key's first hit.
    PythonLimitsFixedWindow,
    /// `python-limits-sliding-window-counter`: Python `limits`' epoch-aligned sliding counter.
    PythonLimitsSlidingWindow,
    /// `go-x-time-rate`: Go's golang.org/x/time/rate float token bucket.
    GoXTimeRate,
    /// `envoy-local`: Envoy's local rate limit token bucket.
    EnvoyLocal,
    /// `guava-bursty`: Guava's `RateLimiter` (SmoothBursty).
    GuavaBursty,
    /// `guava-warmup`: Guava's `RateLimiter` with a warmup period (SmoothWarmingUp).
    GuavaWarmup,
    /// `haproxy-http-req-rate`: an HAProxy stick table's `http_req_rate` with a deny rule.
    HaproxyHttpReqRate,
    /// `article-float-token-bucket`: an article's in-memory float token bucket.
    ArticleTokenBucket,
    /// `article-redis-zset-log`: an article's Redis sorted-set log.
    ArticleRedisZsetLog,
    /// `article-redis-lua-fixed-window`: an article's Lua `INCR` + `PEXPIRE` fixed window.
    ArticleLuaFixedWindow,
    /// `article-sliding-counter`: an article's two-window sliding counter in doubles.
    ArticleSlidingCounter,
    /// `envoy-ratelimit`: the envoyproxy/ratelimit service's epoch-aligned fixed windows (Redis).
    EnvoyRatelimit,
}

/// The type of one native parameter, as a scenario writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    /// A positive integer.
    Count,
    /// A duration string (`60s`, `500ms`).
    Duration,
    /// `true` or `false`.
    Bool,
    /// An nginx rate: `10r/s` or `600r/m`.
    NginxRate,
    /// A Python `limits` rate string: `100/minute`, `10 per 30 seconds`.
    RateString,
    /// A positive number, integer or not (a JavaScript number).
    Number,
    /// One word of a fixed set (the parameter's doc lists them).
    Choice,
}

impl ParamType {
    /// The type's name as `rlsim algorithms` lists and serializes it (`count`, `nginx_rate`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Count => "count",
            ParamType::Duration => "duration",
            ParamType::Bool => "bool",
            ParamType::NginxRate => "nginx_rate",
            ParamType::RateString => "rate_string",
            ParamType::Number => "number",
            ParamType::Choice => "choice",
        }
    }
}

/// One native parameter of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ParamSpec {
    /// The parameter's key in the profile's table (the library's own name for it).
    pub name: &'static str,
    /// What kind of value it takes.
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// The default, or how it derives from the policy when the scenario omits it.
    pub default: &'static str,
    /// One line on what the parameter means in the library.
    pub doc: &'static str,
}

/// A parameter value as written in the scenario (TOML), before the profile checks it.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// A TOML integer.
    Int(i64),
    /// A TOML string (durations, rates, choices).
    Str(String),
    /// A TOML boolean.
    Bool(bool),
    /// A TOML float.
    Float(f64),
    /// Anything else (a float, an array, a table), described for the error message.
    Other(&'static str),
}

/// Why a profile's parameters are refused; `param` names the offending one, if any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ProfileError {
    /// The parameter the error is about; `None` when it is about the combination or the policy.
    pub param: Option<String>,
    /// What is wrong, as shown to the user.
    pub reason: String,
}

impl ProfileError {
    fn param(name: &str, reason: impl Into<String>) -> ProfileError {
        ProfileError {
            param: Some(name.to_string()),
            reason: reason.into(),
        }
    }

    fn general(reason: impl Into<String>) -> ProfileError {
        ProfileError {
            param: None,
            reason: reason.into(),
        }
    }
}

/// What a library does with a request's weight (GraphQL points, a batch, tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// The library takes a weight through this call (`check_n(n)`), and the profile reproduces
    /// what it does with it, its edges included.
    Takes(&'static str),
    /// The library counts requests, one each; why it cannot weigh one.
    Requests(&'static str),
}

/// What each profile file provides to the registry.
pub(crate) trait ProfileDef: Limiter + Sized {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const PARAMS: &'static [ParamSpec];
    /// Whether, and how, the library weighs a request.
    const WEIGHT: Weight;
    /// Builds the profile from the policy's parameters and the native ones the scenario gave.
    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError>;
}

impl ProfileKind {
    /// Every profile, in listing order.
    pub const ALL: [ProfileKind; 18] = [
        ProfileKind::Governor,
        ProfileKind::NginxLimitReq,
        ProfileKind::ExpressRateLimit,
        ProfileKind::NestjsThrottler,
        ProfileKind::RateLimiterFlexible,
        ProfileKind::PythonLimitsMovingWindow,
        ProfileKind::PythonLimitsFixedWindow,
        ProfileKind::PythonLimitsSlidingWindow,
        ProfileKind::GoXTimeRate,
        ProfileKind::EnvoyLocal,
        ProfileKind::GuavaBursty,
        ProfileKind::GuavaWarmup,
        ProfileKind::HaproxyHttpReqRate,
        ProfileKind::ArticleTokenBucket,
        ProfileKind::ArticleRedisZsetLog,
        ProfileKind::ArticleLuaFixedWindow,
        ProfileKind::ArticleSlidingCounter,
        ProfileKind::EnvoyRatelimit,
    ];

    /// The name scenarios use for the profile (`nginx-limit-req`).
    pub fn name(self) -> &'static str {
        match self {
            ProfileKind::Governor => Governor::NAME,
            ProfileKind::NginxLimitReq => NginxLimitReq::NAME,
            ProfileKind::ExpressRateLimit => ExpressRateLimit::NAME,
            ProfileKind::NestjsThrottler => NestjsThrottler::NAME,
            ProfileKind::RateLimiterFlexible => RateLimiterFlexible::NAME,
            ProfileKind::PythonLimitsMovingWindow => PythonLimitsMovingWindow::NAME,
            ProfileKind::PythonLimitsFixedWindow => PythonLimitsFixedWindow::NAME,
            ProfileKind::PythonLimitsSlidingWindow => PythonLimitsSlidingWindow::NAME,
            ProfileKind::GoXTimeRate => GoRate::NAME,
            ProfileKind::EnvoyLocal => EnvoyLocal::NAME,
            ProfileKind::EnvoyRatelimit => EnvoyRatelimit::NAME,
            ProfileKind::GuavaBursty => GuavaBursty::NAME,
            ProfileKind::GuavaWarmup => GuavaWarmup::NAME,
            ProfileKind::HaproxyHttpReqRate => HaproxyHttpReqRate::NAME,
            ProfileKind::ArticleTokenBucket => ArticleTokenBucket::NAME,
            ProfileKind::ArticleRedisZsetLog => ArticleRedisZsetLog::NAME,
            ProfileKind::ArticleLuaFixedWindow => ArticleLuaFixedWindow::NAME,
            ProfileKind::ArticleSlidingCounter => ArticleSlidingCounter::NAME,
        }
    }

    /// One line on what the profile reproduces (library, version, its edges).
    pub fn description(self) -> &'static str {
        match self {
            ProfileKind::Governor => Governor::DESCRIPTION,
            ProfileKind::NginxLimitReq => NginxLimitReq::DESCRIPTION,
            ProfileKind::ExpressRateLimit => ExpressRateLimit::DESCRIPTION,
            ProfileKind::NestjsThrottler => NestjsThrottler::DESCRIPTION,
            ProfileKind::RateLimiterFlexible => RateLimiterFlexible::DESCRIPTION,
            ProfileKind::PythonLimitsMovingWindow => PythonLimitsMovingWindow::DESCRIPTION,
            ProfileKind::PythonLimitsFixedWindow => PythonLimitsFixedWindow::DESCRIPTION,
            ProfileKind::PythonLimitsSlidingWindow => PythonLimitsSlidingWindow::DESCRIPTION,
            ProfileKind::GoXTimeRate => GoRate::DESCRIPTION,
            ProfileKind::EnvoyLocal => EnvoyLocal::DESCRIPTION,
            ProfileKind::EnvoyRatelimit => EnvoyRatelimit::DESCRIPTION,
            ProfileKind::GuavaBursty => GuavaBursty::DESCRIPTION,
            ProfileKind::GuavaWarmup => GuavaWarmup::DESCRIPTION,
            ProfileKind::HaproxyHttpReqRate => HaproxyHttpReqRate::DESCRIPTION,
            ProfileKind::ArticleTokenBucket => ArticleTokenBucket::DESCRIPTION,
            ProfileKind::ArticleRedisZsetLog => ArticleRedisZsetLog::DESCRIPTION,
            ProfileKind::ArticleLuaFixedWindow => ArticleLuaFixedWindow::DESCRIPTION,
            ProfileKind::ArticleSlidingCounter => ArticleSlidingCounter::DESCRIPTION,
        }
    }

    /// The native parameters the profile takes, in listing order.
    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            ProfileKind::Governor => Governor::PARAMS,
            ProfileKind::NginxLimitReq => NginxLimitReq::PARAMS,
            ProfileKind::ExpressRateLimit => ExpressRateLimit::PARAMS,
            ProfileKind::NestjsThrottler => NestjsThrottler::PARAMS,
            ProfileKind::RateLimiterFlexible => RateLimiterFlexible::PARAMS,
            ProfileKind::PythonLimitsMovingWindow => PythonLimitsMovingWindow::PARAMS,
            ProfileKind::PythonLimitsFixedWindow => PythonLimitsFixedWindow::PARAMS,
            ProfileKind::PythonLimitsSlidingWindow => PythonLimitsSlidingWindow::PARAMS,
            ProfileKind::GoXTimeRate => GoRate::PARAMS,
            ProfileKind::EnvoyLocal => EnvoyLocal::PARAMS,
            ProfileKind::EnvoyRatelimit => EnvoyRatelimit::PARAMS,
            ProfileKind::GuavaBursty => GuavaBursty::PARAMS,
            ProfileKind::GuavaWarmup => GuavaWarmup::PARAMS,
            ProfileKind::HaproxyHttpReqRate => HaproxyHttpReqRate::PARAMS,
            ProfileKind::ArticleTokenBucket => ArticleTokenBucket::PARAMS,
            ProfileKind::ArticleRedisZsetLog => ArticleRedisZsetLog::PARAMS,
            ProfileKind::ArticleLuaFixedWindow => ArticleLuaFixedWindow::PARAMS,
            ProfileKind::ArticleSlidingCounter => ArticleSlidingCounter::PARAMS,
        }
    }

    /// Whether the profile's library weighs a request, and how ([`Weight`]).
    pub fn weight(self) -> Weight {
        match self {
            ProfileKind::Governor => Governor::WEIGHT,
            ProfileKind::NginxLimitReq => NginxLimitReq::WEIGHT,
            ProfileKind::ExpressRateLimit => ExpressRateLimit::WEIGHT,
            ProfileKind::NestjsThrottler => NestjsThrottler::WEIGHT,
            ProfileKind::RateLimiterFlexible => RateLimiterFlexible::WEIGHT,
            ProfileKind::PythonLimitsMovingWindow => PythonLimitsMovingWindow::WEIGHT,
            ProfileKind::PythonLimitsFixedWindow => PythonLimitsFixedWindow::WEIGHT,
            ProfileKind::PythonLimitsSlidingWindow => PythonLimitsSlidingWindow::WEIGHT,
            ProfileKind::GoXTimeRate => GoRate::WEIGHT,
            ProfileKind::EnvoyLocal => EnvoyLocal::WEIGHT,
            ProfileKind::EnvoyRatelimit => EnvoyRatelimit::WEIGHT,
            ProfileKind::GuavaBursty => GuavaBursty::WEIGHT,
            ProfileKind::GuavaWarmup => GuavaWarmup::WEIGHT,
            ProfileKind::HaproxyHttpReqRate => HaproxyHttpReqRate::WEIGHT,
            ProfileKind::ArticleTokenBucket => ArticleTokenBucket::WEIGHT,
            ProfileKind::ArticleRedisZsetLog => ArticleRedisZsetLog::WEIGHT,
            ProfileKind::ArticleLuaFixedWindow => ArticleLuaFixedWindow::WEIGHT,
            ProfileKind::ArticleSlidingCounter => ArticleSlidingCounter::WEIGHT,
        }
    }

    /// Former names, still accepted: profiles once named after the article they transcribe
    /// (`seed-000-...`) are now named after what they are; old scenarios keep running.
    pub const ALIASES: [(&'static str, ProfileKind); 4] = [
        ("seed-000-token-bucket", ProfileKind::ArticleTokenBucket),
        ("seed-000-redis-log", ProfileKind::ArticleRedisZsetLog),
        ("seed-003-fixed-window", ProfileKind::ArticleLuaFixedWindow),
        (
            "seed-003-sliding-counter",
            ProfileKind::ArticleSlidingCounter,
        ),
    ];

    /// The profile named `name`, or formerly named so ([`ProfileKind::ALIASES`]).
    pub fn parse(name: &str) -> Option<ProfileKind> {
        ProfileKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .or_else(|| {
                ProfileKind::ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == name)
                    .map(|&(_, k)| k)
            })
    }

    /// Builds the profile from the policy's parameters and the native parameters `given`
    /// (name → value, as the scenario wrote them). A name the profile does not take is refused
    /// with the closest one it does take.
    pub fn configure(
        self,
        policy: Params,
        given: &[(String, ParamValue)],
    ) -> Result<Profile, ProfileError> {
        let specs = self.params();
        for (name, _) in given {
            if !specs.iter().any(|s| s.name == name) {
                let names = specs.iter().map(|s| s.name);
                let message = match crate::suggest::closest(name, names.clone()) {
                    Some(hint) => {
                        format!("`{self}` has no parameter `{name}`: did you mean `{hint}`?")
                    }
                    None => format!(
                        "`{self}` has no parameter `{name}` (it takes: {})",
                        names.collect::<Vec<_>>().join(", ")
                    ),
                };
                return Err(ProfileError::param(name, message));
            }
        }
        let args = Args { specs, given };
        Ok(match self {
            ProfileKind::Governor => Profile::Governor(Governor::build(policy, &args)?),
            ProfileKind::NginxLimitReq => {
                Profile::NginxLimitReq(NginxLimitReq::build(policy, &args)?)
            }
            ProfileKind::ExpressRateLimit => {
                Profile::ExpressRateLimit(ExpressRateLimit::build(policy, &args)?)
            }
            ProfileKind::NestjsThrottler => {
                Profile::NestjsThrottler(NestjsThrottler::build(policy, &args)?)
            }
            ProfileKind::RateLimiterFlexible => {
                Profile::RateLimiterFlexible(RateLimiterFlexible::build(policy, &args)?)
            }
            ProfileKind::PythonLimitsMovingWindow => {
                Profile::PythonLimitsMovingWindow(PythonLimitsMovingWindow::build(policy, &args)?)
            }
            ProfileKind::PythonLimitsFixedWindow => {
                Profile::PythonLimitsFixedWindow(PythonLimitsFixedWindow::build(policy, &args)?)
            }
            ProfileKind::PythonLimitsSlidingWindow => {
                Profile::PythonLimitsSlidingWindow(PythonLimitsSlidingWindow::build(policy, &args)?)
            }
            ProfileKind::GoXTimeRate => Profile::GoXTimeRate(GoRate::build(policy, &args)?),
            ProfileKind::EnvoyLocal => Profile::EnvoyLocal(EnvoyLocal::build(policy, &args)?),
            ProfileKind::EnvoyRatelimit => {
                Profile::EnvoyRatelimit(EnvoyRatelimit::build(policy, &args)?)
            }
            ProfileKind::GuavaBursty => Profile::GuavaBursty(GuavaBursty::build(policy, &args)?),
            ProfileKind::GuavaWarmup => Profile::GuavaWarmup(GuavaWarmup::build(policy, &args)?),
            ProfileKind::HaproxyHttpReqRate => {
                Profile::HaproxyHttpReqRate(HaproxyHttpReqRate::build(policy, &args)?)
            }
            ProfileKind::ArticleTokenBucket => {
                Profile::ArticleTokenBucket(ArticleTokenBucket::build(policy, &args)?)
            }
            ProfileKind::ArticleRedisZsetLog => {
                Profile::ArticleRedisZsetLog(ArticleRedisZsetLog::build(policy, &args)?)
            }
            ProfileKind::ArticleLuaFixedWindow => {
                Profile::ArticleLuaFixedWindow(ArticleLuaFixedWindow::build(policy, &args)?)
            }
            ProfileKind::ArticleSlidingCounter => {
                Profile::ArticleSlidingCounter(ArticleSlidingCounter::build(policy, &args)?)
            }
        })
    }
}

impl fmt::Display for ProfileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A configured profile, ready to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A configured [`ProfileKind::Governor`].
    Governor(Governor),
    /// A configured [`ProfileKind::NginxLimitReq`].
    NginxLimitReq(NginxLimitReq),
    /// A configured [`ProfileKind::ExpressRateLimit`].
    ExpressRateLimit(ExpressRateLimit),
    /// A configured [`ProfileKind::NestjsThrottler`].
    NestjsThrottler(NestjsThrottler),
    /// A configured [`ProfileKind::RateLimiterFlexible`].
    RateLimiterFlexible(RateLimiterFlexible),
    /// A configured [`ProfileKind::PythonLimitsMovingWindow`].
    PythonLimitsMovingWindow(PythonLimitsMovingWindow),
    /// A configured [`ProfileKind::PythonLimitsFixedWindow`].
    PythonLimitsFixedWindow(PythonLimitsFixedWindow),
    /// A configured [`ProfileKind::PythonLimitsSlidingWindow`].
    PythonLimitsSlidingWindow(PythonLimitsSlidingWindow),
    /// A configured [`ProfileKind::GoXTimeRate`].
    GoXTimeRate(GoRate),
    /// A configured [`ProfileKind::EnvoyLocal`].
    EnvoyLocal(EnvoyLocal),
    /// A configured [`ProfileKind::EnvoyRatelimit`].
    EnvoyRatelimit(EnvoyRatelimit),
    /// A configured [`ProfileKind::GuavaBursty`].
    GuavaBursty(GuavaBursty),
    /// A configured [`ProfileKind::GuavaWarmup`].
    GuavaWarmup(GuavaWarmup),
    /// A configured [`ProfileKind::HaproxyHttpReqRate`].
    HaproxyHttpReqRate(HaproxyHttpReqRate),
    /// A configured [`ProfileKind::ArticleTokenBucket`].
    ArticleTokenBucket(ArticleTokenBucket),
    /// A configured [`ProfileKind::ArticleRedisZsetLog`].
    ArticleRedisZsetLog(ArticleRedisZsetLog),
    /// A configured [`ProfileKind::ArticleLuaFixedWindow`].
    ArticleLuaFixedWindow(ArticleLuaFixedWindow),
    /// A configured [`ProfileKind::ArticleSlidingCounter`].
    ArticleSlidingCounter(ArticleSlidingCounter),
}

impl Profile {
    /// Which profile this is.
    pub fn kind(&self) -> ProfileKind {
        match self {
            Profile::Governor(_) => ProfileKind::Governor,
            Profile::NginxLimitReq(_) => ProfileKind::NginxLimitReq,
            Profile::ExpressRateLimit(_) => ProfileKind::ExpressRateLimit,
            Profile::NestjsThrottler(_) => ProfileKind::NestjsThrottler,
            Profile::RateLimiterFlexible(_) => ProfileKind::RateLimiterFlexible,
            Profile::PythonLimitsMovingWindow(_) => ProfileKind::PythonLimitsMovingWindow,
            Profile::PythonLimitsFixedWindow(_) => ProfileKind::PythonLimitsFixedWindow,
            Profile::PythonLimitsSlidingWindow(_) => ProfileKind::PythonLimitsSlidingWindow,
            Profile::GoXTimeRate(_) => ProfileKind::GoXTimeRate,
            Profile::EnvoyLocal(_) => ProfileKind::EnvoyLocal,
            Profile::EnvoyRatelimit(_) => ProfileKind::EnvoyRatelimit,
            Profile::GuavaBursty(_) => ProfileKind::GuavaBursty,
            Profile::GuavaWarmup(_) => ProfileKind::GuavaWarmup,
            Profile::HaproxyHttpReqRate(_) => ProfileKind::HaproxyHttpReqRate,
            Profile::ArticleTokenBucket(_) => ProfileKind::ArticleTokenBucket,
            Profile::ArticleRedisZsetLog(_) => ProfileKind::ArticleRedisZsetLog,
            Profile::ArticleLuaFixedWindow(_) => ProfileKind::ArticleLuaFixedWindow,
            Profile::ArticleSlidingCounter(_) => ProfileKind::ArticleSlidingCounter,
        }
    }

    /// The profile with virtual time 0 standing for `epoch_ns` after the Unix epoch: the
    /// scenario's start. Only profiles whose library reads the wall clock and aligns windows to
    /// it (or rounds its floats) keep it; the others count from virtual 0 (a library's own
    /// start, or a key's first hit), which an absolute time would not change.
    pub fn starting_at(self, epoch_ns: u64) -> Profile {
        match self {
            Profile::PythonLimitsMovingWindow(l) => {
                Profile::PythonLimitsMovingWindow(l.starting_at(epoch_ns))
            }
            Profile::PythonLimitsFixedWindow(l) => {
                Profile::PythonLimitsFixedWindow(l.starting_at(epoch_ns))
            }
            Profile::PythonLimitsSlidingWindow(l) => {
                Profile::PythonLimitsSlidingWindow(l.starting_at(epoch_ns))
            }
            Profile::ArticleSlidingCounter(l) => {
                Profile::ArticleSlidingCounter(l.starting_at(epoch_ns))
            }
            Profile::HaproxyHttpReqRate(l) => Profile::HaproxyHttpReqRate(l.starting_at(epoch_ns)),
            Profile::EnvoyRatelimit(l) => Profile::EnvoyRatelimit(l.starting_at(epoch_ns)),
            other => other,
        }
    }

    /// Calls `visitor` with the concrete limiter (see [`super::AlgorithmKind::visit`]).
    pub fn visit<V: LimiterVisitor>(self, visitor: V) -> V::Output {
        match self {
            Profile::Governor(l) => visitor.visit(l),
            Profile::NginxLimitReq(l) => visitor.visit(l),
            Profile::ExpressRateLimit(l) => visitor.visit(l),
            Profile::NestjsThrottler(l) => visitor.visit(l),
            Profile::RateLimiterFlexible(l) => visitor.visit(l),
            Profile::PythonLimitsMovingWindow(l) => visitor.visit(l),
            Profile::PythonLimitsFixedWindow(l) => visitor.visit(l),
            Profile::PythonLimitsSlidingWindow(l) => visitor.visit(l),
            Profile::GoXTimeRate(l) => visitor.visit(l),
            Profile::EnvoyLocal(l) => visitor.visit(l),
            Profile::EnvoyRatelimit(l) => visitor.visit(l),
            Profile::GuavaBursty(l) => visitor.visit(l),
            Profile::GuavaWarmup(l) => visitor.visit(l),
            Profile::HaproxyHttpReqRate(l) => visitor.visit(l),
            Profile::ArticleTokenBucket(l) => visitor.visit(l),
            Profile::ArticleRedisZsetLog(l) => visitor.visit(l),
            Profile::ArticleLuaFixedWindow(l) => visitor.visit(l),
            Profile::ArticleSlidingCounter(l) => visitor.visit(l),
        }
    }
}

/// The native parameters a scenario gave, read by type with the profile's own error messages.
pub(crate) struct Args<'a> {
    specs: &'static [ParamSpec],
    given: &'a [(String, ParamValue)],
}

impl Args<'_> {
    /// Whether the scenario gave `name`.
    pub fn has(&self, name: &str) -> bool {
        self.value(name).is_some()
    }

    fn value(&self, name: &str) -> Option<&ParamValue> {
        debug_assert!(
            self.specs.iter().any(|s| s.name == name),
            "`{name}` is not a declared parameter"
        );
        self.given.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, ProfileError> {
        match self.value(name) {
            None => Ok(None),
            Some(ParamValue::Int(v)) => Ok(Some(*v)),
            Some(other) => Err(ProfileError::param(
                name,
                format!("must be an integer, got {}", describe(other)),
            )),
        }
    }

    /// A positive integer, at most `max`.
    pub fn count(&self, name: &str, max: u64) -> Result<Option<u64>, ProfileError> {
        self.bounded(name, 1, max)
    }

    /// A non-negative integer, at most `max`.
    pub fn count_or_zero(&self, name: &str, max: u64) -> Result<Option<u64>, ProfileError> {
        self.bounded(name, 0, max)
    }

    /// An integer from `min` to `max`; the refusal states the whole range.
    fn bounded(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, ProfileError> {
        let Some(v) = self.int(name)? else {
            return Ok(None);
        };
        match u64::try_from(v) {
            Ok(u) if (min..=max).contains(&u) => Ok(Some(u)),
            _ => {
                let why = if v < 0 || (v as u64) < min {
                    "small"
                } else {
                    "large"
                };
                let range = crate::error::must_be("a whole number", min, max);
                Err(ProfileError::param(
                    name,
                    format!("{v} is too {why}: {range}"),
                ))
            }
        }
    }

    /// A positive finite number, integer or float.
    pub fn number(&self, name: &str) -> Result<Option<f64>, ProfileError> {
        let v = match self.value(name) {
            None => return Ok(None),
            Some(ParamValue::Int(i)) => *i as f64,
            Some(ParamValue::Float(f)) => *f,
            Some(other) => {
                return Err(ProfileError::param(
                    name,
                    format!("must be a number, got {}", describe(other)),
                ));
            }
        };
        if v.is_finite() && v > 0.0 {
            Ok(Some(v))
        } else {
            Err(ProfileError::param(
                name,
                format!("must be a positive number, got {v}"),
            ))
        }
    }

    pub fn bool(&self, name: &str) -> Result<Option<bool>, ProfileError> {
        match self.value(name) {
            None => Ok(None),
            Some(ParamValue::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(ProfileError::param(
                name,
                format!("must be true or false, got {}", describe(other)),
            )),
        }
    }

    pub fn str(&self, name: &str) -> Result<Option<&str>, ProfileError> {
        match self.value(name) {
            None => Ok(None),
            Some(ParamValue::Str(s)) => Ok(Some(s)),
            Some(other) => Err(ProfileError::param(
                name,
                format!("must be a string, got {}", describe(other)),
            )),
        }
    }

    fn whole(&self, name: &str, positive: bool) -> Result<Option<u64>, ProfileError> {
        if positive {
            self.count(name, u32::MAX as u64)
        } else {
            self.count_or_zero(name, u32::MAX as u64)
        }
    }

    /// A duration string; `positive` refuses zero.
    pub fn duration(&self, name: &str, positive: bool) -> Result<Option<Nanos>, ProfileError> {
        let Some(text) = self.str(name)? else {
            return Ok(None);
        };
        let parsed = if positive {
            time::parse_positive_duration(text)
        } else {
            time::parse_duration(text)
        };
        parsed
            .map(Some)
            .map_err(|e| ProfileError::param(name, e.to_string()))
    }

    /// A duration in the library's unit of milliseconds: an integer (the library's own number)
    /// or a duration string that must be a whole number of milliseconds.
    pub fn millis(&self, name: &str, positive: bool) -> Result<Option<u64>, ProfileError> {
        if let Some(ParamValue::Int(_)) = self.value(name) {
            return self.whole(name, positive);
        }
        match self.duration(name, positive)? {
            None => Ok(None),
            Some(ns) if !ns.is_multiple_of(NANOS_PER_MILLI) => Err(ProfileError::param(
                name,
                format!(
                    "must be a whole number of milliseconds (the library's unit), got {}",
                    time::format_duration(ns)
                ),
            )),
            Some(ns) => Ok(Some(ns / NANOS_PER_MILLI)),
        }
    }

    /// A duration in the library's unit of seconds: an integer (the library's own number) or a
    /// duration string that must be a whole number of seconds.
    pub fn seconds(&self, name: &str, positive: bool) -> Result<Option<u64>, ProfileError> {
        if let Some(ParamValue::Int(_)) = self.value(name) {
            return self.whole(name, positive);
        }
        match self.duration(name, positive)? {
            None => Ok(None),
            Some(ns) if !ns.is_multiple_of(NANOS_PER_SEC) => Err(ProfileError::param(
                name,
                format!(
                    "must be a whole number of seconds (the library's unit), got {}",
                    time::format_duration(ns)
                ),
            )),
            Some(ns) => Ok(Some(ns / NANOS_PER_SEC)),
        }
    }
}

fn describe(v: &ParamValue) -> String {
    match v {
        ParamValue::Int(i) => format!("the integer {i}"),
        ParamValue::Str(s) => format!("the string \"{s}\""),
        ParamValue::Bool(b) => format!("`{b}`"),
        ParamValue::Float(f) => format!("the number {f}"),
        ParamValue::Other(what) => format!("a {what}"),
    }
}

/// A policy window as whole milliseconds, for libraries whose unit is the millisecond; refuses
/// windows the library cannot express.
fn policy_millis(window: Nanos, what: &str) -> Result<u64, ProfileError> {
    if !window.is_multiple_of(NANOS_PER_MILLI) {
        return Err(ProfileError::general(format!(
            "the policy window {} is not a whole number of milliseconds; set `{what}`",
            time::format_duration(window)
        )));
    }
    Ok(window / NANOS_PER_MILLI)
}

/// A policy window as whole seconds, for libraries whose unit is the second.
fn policy_seconds(window: Nanos, what: &str) -> Result<u64, ProfileError> {
    if !window.is_multiple_of(NANOS_PER_SEC) {
        return Err(ProfileError::general(format!(
            "the policy window {} is not a whole number of seconds; set `{what}`",
            time::format_duration(window)
        )));
    }
    Ok(window / NANOS_PER_SEC)
}

/// The library's millisecond clock reading at virtual time `now` (truncation, as
/// `Date.now()` and `ngx_current_msec` truncate the system time).
fn ms(now: Nanos) -> u64 {
    now / NANOS_PER_MILLI
}

/// The first virtual nanosecond at which a millisecond clock reads `ms`.
fn at_ms(ms: u64) -> Nanos {
    ms.saturating_mul(NANOS_PER_MILLI)
}

/// A rejection's retry-after: from `now` to the first instant the clock reads `ms`, at least 1 ns.
fn retry_at_ms(now: Nanos, ms: u64) -> Nanos {
    at_ms(ms).saturating_sub(now).max(1)
}

/// The first virtual ns at or after `from` where `pred` holds, for a predicate that is false
/// then true; `Nanos::MAX` if it never holds.
fn first_ns(from: Nanos, pred: impl Fn(Nanos) -> bool) -> Nanos {
    if pred(from) {
        return from;
    }
    let mut step: Nanos = 1;
    let mut lo = from;
    let hi = loop {
        let probe = from.saturating_add(step);
        if pred(probe) {
            break probe;
        }
        if probe == Nanos::MAX {
            return Nanos::MAX;
        }
        lo = probe;
        step = step.saturating_mul(2);
    };
    // pred(lo) is false, pred(hi) true.
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MIN;

    fn policy() -> Params {
        Params {
            limit: 100,
            window: NANOS_PER_MIN,
            burst: 10,
        }
    }

    #[test]
    fn every_profile_builds_from_the_policy_alone() {
        for kind in ProfileKind::ALL {
            let p = kind.configure(policy(), &[]).unwrap();
            assert_eq!(p.kind(), kind);
            assert_eq!(ProfileKind::parse(kind.name()), Some(kind));
            assert!(!kind.description().is_empty());
        }
    }

    #[test]
    fn unknown_parameter_is_named_with_a_hint() {
        let e = ProfileKind::NginxLimitReq
            .configure(policy(), &[("brust".into(), ParamValue::Int(5))])
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("brust"));
        assert_eq!(
            e.reason,
            "`nginx-limit-req` has no parameter `brust`: did you mean `burst`?"
        );
    }

    #[test]
    fn wrong_type_is_named() {
        let e = ProfileKind::NginxLimitReq
            .configure(
                policy(),
                &[("nodelay".into(), ParamValue::Str("yes".into()))],
            )
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("nodelay"));
        assert_eq!(e.reason, "must be true or false, got the string \"yes\"");
    }

    #[test]
    fn parameter_names_are_unique_per_profile() {
        for kind in ProfileKind::ALL {
            let mut names: Vec<_> = kind.params().iter().map(|p| p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), kind.params().len(), "{kind}");
        }
    }
}
