//! `[[contender]]` entries: whole limiter configurations as they are deployed (stacked rules,
//! which requests each applies to, bypass lists, warnings), validated into [`Stack`]s.
//!
//! The short form (`[policy]` + `algorithms`) is one contender per algorithm with one rule that
//! keys like the policy and applies to every request; such a contender has no [`Stack`] and runs
//! on the engine's single-limiter path, so its outputs are exactly what they always were.

use crate::algorithms::{Cost, LimiterSpec, Params};
use crate::policy::KeySpec;
use crate::time::Nanos;
use crate::traffic::{Arrivals, SourceSpec};
use ipnet::IpNet;

/// How a contender commits state when one of several applying rules refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Commit {
    /// Nothing is counted in any other rule unless every applying rule admits (nginx
    /// `limit_req` with several zones: `ngx_http_limit_req_handler` looks every zone up
    /// without accounting and accounts them all only once all passed). The refusing rule
    /// records its refusal as its algorithm does.
    AllOrNothing,
    /// Rules decide one after another and the first refusal stops: the rules before it, and
    /// the refusing one, have counted as their algorithm counts (NestJS `ThrottlerGuard`:
    /// each throttler's `storage.increment` runs before its own check).
    InOrder,
    /// Every applying rule decides and counts as its algorithm does, whether or not another
    /// refuses; the request is refused if any refuses (the envoyproxy/ratelimit service:
    /// `DoLimit` INCRBYs every descriptor's counter in one pipeline, then refuses if any is over
    /// its limit).
    EveryRule,
}

impl Commit {
    /// The name `commit = "..."` gives (`all_or_nothing`).
    pub fn name(self) -> &'static str {
        match self {
            Commit::AllOrNothing => "all_or_nothing",
            Commit::InOrder => "in_order",
            Commit::EveryRule => "every_rule",
        }
    }
}

/// A route pattern: an exact path, or a prefix ending in `*` (`/auth/*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route(pub String);

impl Route {
    /// Whether `endpoint` is the exact path, or starts with the prefix before the `*`.
    pub fn matches(&self, endpoint: &str) -> bool {
        crate::policy::route_matches(&self.0, endpoint)
    }
}

/// Which requests a rule applies to. Every condition set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matcher {
    /// Empty: every route.
    pub routes: Vec<Route>,
    /// Routes the rule never applies to, even when `routes` matches (NestJS `@SkipThrottle`).
    pub skip: Vec<Route>,
    /// `Some(true)`: only signed-in requests; `Some(false)`: only anonymous ones.
    pub signed_in: Option<bool>,
    /// `Some`: only requests of these tiers.
    pub tiers: Option<Vec<String>>,
    /// Requests of these tiers are left to another (per-tier) rule.
    pub not_tiers: Vec<String>,
    /// `Some`: only requests of these HTTP methods (a `Method::mask`). Checked per request
    /// ([`Matcher::takes_method`]); everything else per client.
    pub methods: Option<u8>,
    /// `Some(true)`: only requests carrying an API key; `Some(false)`: only those without.
    pub has_api_key: Option<bool>,
}

/// What a matcher looks at in a request.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The client's address as text (the `ip` key field), which `bypass.cidrs` is checked on.
    pub ip: &'a str,
    /// The request's user; empty (or `-` in a replayed log) when anonymous.
    pub user: &'a str,
    /// The request's API key; empty when it carries none.
    pub api_key: &'a str,
    /// The request's endpoint (path), which routes are matched against.
    pub endpoint: &'a str,
    /// The client's tier, looked up by source and user; `None` when it has none.
    pub tier: Option<&'a str>,
    /// The source's `signed_in` (generated traffic); `None` for a replayed trace.
    pub source_signed_in: Option<bool>,
}

impl Facts<'_> {
    /// Signed in: the server knows a user. A generated source's requests are signed in when
    /// the source says `signed_in = true`; a replayed record when it has a user (an empty user,
    /// or `-` as access logs write it, is anonymous), as the identity functions read them.
    pub fn signed_in(&self) -> bool {
        self.source_signed_in.unwrap_or(true) && !self.user.is_empty() && self.user != "-"
    }
}

/// What a source says of its requests' sign-in: `None` for a replayed trace.
pub fn source_signed_in(source: &SourceSpec) -> Option<bool> {
    (!matches!(source.arrivals, Arrivals::Replay { .. }))
        .then_some(source.population.network.signed_in)
}

impl Matcher {
    /// Whether the rule takes requests of method `code`.
    pub fn takes_method(&self, code: u8) -> bool {
        self.methods.is_none_or(|m| m & (1 << code) != 0)
    }

    /// Whether the rule applies to a request with facts `f`: every condition set holds. The
    /// method is not checked here ([`Matcher::takes_method`]).
    pub fn applies(&self, f: &Facts) -> bool {
        (self.routes.is_empty() || self.routes.iter().any(|r| r.matches(f.endpoint)))
            && !self.skip.iter().any(|r| r.matches(f.endpoint))
            && self.signed_in.is_none_or(|s| s == f.signed_in())
            && self.has_api_key.is_none_or(|h| h != f.api_key.is_empty())
            && self
                .tiers
                .as_ref()
                .is_none_or(|t| f.tier.is_some_and(|x| t.iter().any(|y| y == x)))
            && !f
                .tier
                .is_some_and(|x| self.not_tiers.iter().any(|y| y == x))
    }
}

/// One rule of a contender.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Unique within the contender; a per-tier entry is `<rule>/<tier>+<tier>`.
    pub name: String,
    /// Its algorithm, or a profile of a real library (its parameters derived from the rule's
    /// limit, window and burst, as `[policy]` derives a short-form profile's).
    pub limiter: LimiterSpec,
    /// What the rule's keys are made of (the policy's key unless the rule sets `key`).
    pub key: KeySpec,
    /// Which requests the rule applies to.
    pub matcher: Matcher,
    /// Warn once this many requests of the limit are used (`ceil(warn_at · limit)`).
    pub warn_from: Option<u64>,
    /// The rule's refusals admit the request, counted as would-refuse, and its delays are not
    /// served (the rule's own `dry_run`, else the contender's).
    pub dry_run: bool,
    /// The HTTP status the rule's refusals answer (its own `refuse_status`, else the
    /// contender's).
    pub refuse_status: u16,
    /// The rule counts requests, one each, whatever they weigh (`unit = "requests"`); else it
    /// weighs each by its cost.
    pub counts_requests: bool,
    /// The rule gives back what a response settles below the cost it charged, when the
    /// response ends (`refunds = true`, Shopify's refund; [`crate::algorithms::Limiter::refund`]).
    pub refunds: bool,
}

/// Requests no rule limits, counted as bypassed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bypass {
    /// Requests carrying one of these API keys.
    pub api_keys: Vec<String>,
    /// Requests from a client address in one of these networks.
    pub cidrs: Vec<IpNet>,
    /// Requests to an endpoint matching one of these patterns.
    pub routes: Vec<Route>,
}

impl Bypass {
    /// Whether the three lists are empty (nothing bypasses).
    pub fn is_empty(&self) -> bool {
        self.api_keys.is_empty() && self.cidrs.is_empty() && self.routes.is_empty()
    }

    /// Whether a request with facts `f` bypasses every rule: its API key, endpoint or client
    /// address is in a list.
    pub fn lets_through(&self, f: &Facts) -> bool {
        (!f.api_key.is_empty() && self.api_keys.iter().any(|k| k == f.api_key))
            || self.routes.iter().any(|r| r.matches(f.endpoint))
            || (!self.cidrs.is_empty()
                && f.ip
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| self.cidrs.iter().any(|c| c.contains(&ip))))
    }
}

/// A contender's rules, when it is more than one algorithm under the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    /// What is counted when an applying rule refuses.
    pub commit: Commit,
    /// The rules in file order; a rule's `per_tier` entries follow it, one rule each.
    pub rules: Vec<Rule>,
    /// The requests no rule limits.
    pub bypass: Bypass,
}

impl Rule {
    /// What a request of `cost` weighs under this rule: 1 when it counts requests.
    #[inline]
    pub fn weigh(&self, cost: Cost) -> Cost {
        if self.counts_requests { 1 } else { cost }
    }

    /// The limit, window and burst the rule's limiter was built from.
    pub fn params(&self) -> Params {
        self.limiter.params()
    }
}

impl Stack {
    /// Whether any rule only counts its refusals (its own `dry_run`, else the contender's: nginx
    /// `limit_req_dry_run`): the contender reports `would_refuse`.
    pub fn dry_runs(&self) -> bool {
        self.rules.iter().any(|r| r.dry_run)
    }
}

/// A window-long span, for the rules' idle eviction: the longest window of the stack.
pub fn longest_window(stack: &Stack) -> Nanos {
    stack
        .rules
        .iter()
        .map(|r| r.params().window)
        .max()
        .unwrap_or(1)
}
