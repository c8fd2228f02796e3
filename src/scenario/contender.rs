//! `[[contender]]` entries: whole limiter configurations as they are deployed (stacked rules,
//! which requests each applies to, bypass lists, warnings), validated into [`Stack`]s.
//!
//! The short form (`[policy]` + `algorithms`) is one contender per algorithm with one rule that
//! keys like the policy and applies to every request; such a contender has no [`Stack`] and runs
//! on the engine's single-limiter path, so its outputs are exactly what they always were.

use super::raw::{RawKey, S};
use super::validate::Ctx;
use super::{Contender, Scenario, Shape};
use crate::algorithms::{AlgorithmKind, Params, Profile};
use crate::error::Result;
use crate::policy::{KeySpec, Policy};
use crate::time::Nanos;
use crate::traffic::method::Method;
use crate::traffic::{Arrivals, SourceSpec};
use ipnet::IpNet;
use serde::Deserialize;
use std::collections::HashSet;

/// One `[[contender]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawContender {
    pub name: S<String>,
    #[serde(default)]
    pub description: Option<S<String>>,
    /// `all_or_nothing` (nginx `limit_req`, the default) or `in_order` (NestJS throttler).
    #[serde(default)]
    pub commit: Option<S<String>>,
    #[serde(default)]
    pub bypass: Option<S<RawBypass>>,
    #[serde(default)]
    pub rule: Vec<S<RawRule>>,
    /// Replicas and a store (see `deployment.rs`); the contender must have one plain rule.
    #[serde(default)]
    pub deployment: Option<S<super::deployment::RawDeployment>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBypass {
    /// Allow-listed API keys / tokens (the request's `api_key`).
    #[serde(default)]
    pub api_keys: Vec<S<String>>,
    /// Allow-listed client addresses: CIDR blocks or single addresses.
    #[serde(default)]
    pub cidrs: Vec<S<String>>,
    /// Routes never limited (health checks): patterns as in a rule's `routes`.
    #[serde(default)]
    pub routes: Vec<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub name: S<String>,
    pub algorithm: S<String>,
    pub limit: S<i64>,
    pub window: S<String>,
    #[serde(default)]
    pub burst: Option<S<i64>>,
    /// Parsed exactly like `[policy] key`; default: the policy's key.
    #[serde(default)]
    pub key: Option<S<RawKey>>,
    /// Route patterns the rule applies to (default: every route).
    #[serde(default)]
    pub routes: Option<S<Vec<S<String>>>>,
    /// Routes the rule never applies to (NestJS `@SkipThrottle`).
    #[serde(default)]
    pub skip: Vec<S<String>>,
    /// Only signed-in (`true`) or only anonymous (`false`) requests.
    #[serde(default)]
    pub signed_in: Option<S<bool>>,
    /// Only requests of these HTTP methods (`["POST"]`).
    #[serde(default)]
    pub methods: Option<S<Vec<S<String>>>>,
    /// Only these client tiers.
    #[serde(default)]
    pub tiers: Option<S<Vec<S<String>>>>,
    /// Other limits for some tiers: `per_tier = [{ tiers = ["pro"], limit = 1000 }]`.
    #[serde(default)]
    pub per_tier: Vec<S<RawTierLimit>>,
    /// Warn from this share of the limit (`X-RateLimit-Warning`), in (0, 1].
    #[serde(default)]
    pub warn_at: Option<S<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTierLimit {
    pub tiers: S<Vec<S<String>>>,
    pub limit: S<i64>,
    #[serde(default)]
    pub window: Option<S<String>>,
    #[serde(default)]
    pub burst: Option<S<i64>>,
}

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
}

impl Commit {
    pub fn name(self) -> &'static str {
        match self {
            Commit::AllOrNothing => "all_or_nothing",
            Commit::InOrder => "in_order",
        }
    }
}

/// A route pattern: an exact path, or a prefix ending in `*` (`/auth/*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route(pub String);

impl Route {
    pub fn matches(&self, endpoint: &str) -> bool {
        match self.0.strip_suffix('*') {
            Some(prefix) => endpoint.starts_with(prefix),
            None => self.0 == endpoint,
        }
    }
}

/// Which requests a rule applies to. Every condition set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matcher {
    /// Empty: every route.
    pub routes: Vec<Route>,
    pub skip: Vec<Route>,
    pub signed_in: Option<bool>,
    /// `Some`: only requests of these tiers.
    pub tiers: Option<Vec<String>>,
    /// Requests of these tiers are left to another (per-tier) rule.
    pub not_tiers: Vec<String>,
    /// `Some`: only requests of these HTTP methods (a [`Method::mask`]). Checked per request
    /// ([`Matcher::takes_method`]); everything else per client.
    pub methods: Option<u8>,
}

/// What a matcher looks at in a request.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub ip: &'a str,
    pub user: &'a str,
    pub api_key: &'a str,
    pub endpoint: &'a str,
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

    pub fn applies(&self, f: &Facts) -> bool {
        (self.routes.is_empty() || self.routes.iter().any(|r| r.matches(f.endpoint)))
            && !self.skip.iter().any(|r| r.matches(f.endpoint))
            && self.signed_in.is_none_or(|s| s == f.signed_in())
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
    pub kind: AlgorithmKind,
    pub params: Params,
    pub key: KeySpec,
    pub matcher: Matcher,
    /// Warn once this many requests of the limit are used (`ceil(warn_at · limit)`).
    pub warn_from: Option<u64>,
    /// A profile of a real library (its parameters derived from the rule's limit, window and
    /// burst, as `[policy]` derives a short-form profile's).
    pub profile: Option<Profile>,
}

/// Requests no rule limits, counted as bypassed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bypass {
    pub api_keys: Vec<String>,
    pub cidrs: Vec<IpNet>,
    pub routes: Vec<Route>,
}

impl Bypass {
    pub fn is_empty(&self) -> bool {
        self.api_keys.is_empty() && self.cidrs.is_empty() && self.routes.is_empty()
    }

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
    pub commit: Commit,
    pub rules: Vec<Rule>,
    pub bypass: Bypass,
}

/// Rule names are reported per contender, so they are kept short and plain.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Ctx<'_> {
    /// The contenders of `[[contender]]`, each with its [`Stack`]. `sources` is the traffic,
    /// to refuse a rule that no request could match.
    pub(super) fn contenders(
        &self,
        raw: &[S<RawContender>],
        policy: &Policy,
        sources: &[SourceSpec],
    ) -> Result<Vec<Contender>> {
        if let (Some(first), Some(_)) = (raw.first(), policy.key.identity_fn()) {
            // The policy's key is the intent every contender is measured against; the metrics key
            // each request once, from its fields (rules may key by identity functions).
            return Err(self.err(
                first.get_ref().name.span(),
                "contender[0].name",
                "contenders need a `[policy] key` of fields (ip, user, api_key, endpoint), not an identity function: give the identity function to the rules' `key`",
            ));
        }
        let mut names = HashSet::new();
        let mut out = Vec::with_capacity(raw.len());
        for (i, c) in raw.iter().enumerate() {
            let c = c.get_ref();
            let field = |f: &str| format!("contender[{i}].{f}");
            let name = c.name.get_ref().trim().to_string();
            if !plain_name(&name) {
                return Err(self.err(
                    c.name.span(),
                    &field("name"),
                    "must be letters, digits, `_`, `-` or `.` (expectations name it)",
                ));
            }
            if !names.insert(name.clone()) {
                return Err(self.err(
                    c.name.span(),
                    &field("name"),
                    format!("another contender is already named `{name}`"),
                ));
            }
            let commit = match c.commit.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
                None | Some(("all_or_nothing", _)) => Commit::AllOrNothing,
                Some(("in_order", _)) => Commit::InOrder,
                Some((other, span)) => {
                    return Err(self.err(
                        span,
                        &field("commit"),
                        format!("unknown commit `{other}` (expected all_or_nothing or in_order)"),
                    ));
                }
            };
            if c.rule.is_empty() {
                return Err(self.err(
                    c.name.span(),
                    &field("rule"),
                    "a contender needs at least one [[contender.rule]]",
                ));
            }
            let mut rules = Vec::new();
            for (j, r) in c.rule.iter().enumerate() {
                let prefix = format!("contender[{i}].rule[{j}]");
                self.rule(r.get_ref(), &prefix, policy, sources, &mut rules)?;
            }
            let mut seen = HashSet::new();
            for (j, r) in c.rule.iter().enumerate() {
                let n = r.get_ref().name.get_ref();
                if !seen.insert(n.as_str()) {
                    return Err(self.err(
                        r.get_ref().name.span(),
                        &format!("contender[{i}].rule[{j}].name"),
                        format!("another rule of this contender is already named `{n}`"),
                    ));
                }
            }
            let bypass = match &c.bypass {
                None => Bypass::default(),
                Some(b) => self.bypass(b.get_ref(), &field("bypass"))?,
            };
            let first = &rules[0];
            out.push(Contender {
                name,
                description: c
                    .description
                    .as_ref()
                    .map(|d| d.get_ref().trim().to_string())
                    .unwrap_or_default(),
                kind: first.kind,
                params: first.params,
                field: format!("contender[{i}]"),
                shape: Shape::Stack(Box::new(Stack {
                    commit,
                    rules,
                    bypass,
                })),
            });
        }
        Ok(out)
    }

    /// Checks `params` build `kind`; a profile is configured from them.
    fn limiter(
        &self,
        kind: AlgorithmKind,
        params: Params,
        span: std::ops::Range<usize>,
        field: &str,
    ) -> Result<Option<Profile>> {
        match kind {
            AlgorithmKind::Profile(p) => p
                .configure(params, &[])
                .map(Some)
                .map_err(|e| self.err(span, field, format!("profile `{p}`: {}", e.reason))),
            _ => kind
                .validate(params)
                .map(|()| None)
                .map_err(|e| self.err(span, field, e.to_string())),
        }
    }

    fn routes(&self, list: &[S<String>], field: &str) -> Result<Vec<Route>> {
        list.iter()
            .enumerate()
            .map(|(k, r)| {
                let text = r.get_ref();
                let stem = text.strip_suffix('*').unwrap_or(text);
                if text.is_empty() || stem.contains('*') {
                    return Err(self.err(
                        r.span(),
                        &format!("{field}[{k}]"),
                        format!(
                            "`{text}` is not a route pattern (a path, or a prefix ending in `*`)"
                        ),
                    ));
                }
                Ok(Route(text.clone()))
            })
            .collect()
    }

    fn bypass(&self, b: &RawBypass, field: &str) -> Result<Bypass> {
        let cidrs = b
            .cidrs
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let text = c.get_ref();
                text.parse::<IpNet>()
                    .or_else(|_| text.parse::<std::net::IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        self.err(
                            c.span(),
                            &format!("{field}.cidrs[{k}]"),
                            format!("`{text}` is not a CIDR block (`10.0.0.0/8`) or an address"),
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bypass {
            api_keys: b.api_keys.iter().map(|k| k.get_ref().clone()).collect(),
            cidrs,
            routes: self.routes(&b.routes, &format!("{field}.routes"))?,
        })
    }

    fn method_mask(&self, list: &S<Vec<S<String>>>, field: &str) -> Result<u8> {
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), field, "must list at least one method"));
        }
        let mut methods = Vec::new();
        for (k, m) in list.get_ref().iter().enumerate() {
            let method = Method::parse(m.get_ref())
                .map_err(|e| self.err(m.span(), &format!("{field}[{k}]"), e))?;
            methods.push(method);
        }
        Ok(Method::mask(&methods))
    }

    fn tier_list(&self, list: &S<Vec<S<String>>>, field: &str) -> Result<Vec<String>> {
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), field, "must list at least one tier"));
        }
        let mut out: Vec<String> = Vec::new();
        for (k, t) in list.get_ref().iter().enumerate() {
            if out.contains(t.get_ref()) {
                return Err(self.err(
                    t.span(),
                    &format!("{field}[{k}]"),
                    format!("tier `{}` is listed twice", t.get_ref()),
                ));
            }
            out.push(t.get_ref().clone());
        }
        Ok(out)
    }

    /// Validates one rule into `rules`: one entry, or one per `per_tier` entry plus the rule
    /// itself for the other tiers.
    fn rule(
        &self,
        r: &RawRule,
        prefix: &str,
        policy: &Policy,
        sources: &[SourceSpec],
        rules: &mut Vec<Rule>,
    ) -> Result<()> {
        let f = |name: &str| format!("{prefix}.{name}");
        let name = r.name.get_ref().clone();
        if !plain_name(&name) {
            return Err(self.err(
                r.name.span(),
                &f("name"),
                "must be letters, digits, `_`, `-` or `.`",
            ));
        }
        let kind: AlgorithmKind = r
            .algorithm
            .get_ref()
            .parse()
            .map_err(|m: String| self.err(r.algorithm.span(), &f("algorithm"), m))?;
        let limit = self.count(&r.limit, &f("limit"), u32::MAX as u64)?;
        let window = self.duration(&r.window, &f("window"), true)?;
        let burst = match &r.burst {
            Some(b) if !kind.uses_burst() => {
                return Err(self.err(
                    b.span(),
                    &f("burst"),
                    format!("`{kind}` has no burst parameter"),
                ));
            }
            Some(b) => self.count(b, &f("burst"), u32::MAX as u64)?,
            None => limit,
        };
        let params = Params {
            limit,
            window,
            burst,
        };
        let profile = self.limiter(kind, params, r.limit.span(), &f("limit"))?;
        let key = match &r.key {
            None => policy.key.clone(),
            Some(k) => self.key_spec(k, &f("key"))?,
        };
        let warn_from = match &r.warn_at {
            None => None,
            Some(w) => {
                let share = *w.get_ref();
                if !(share > 0.0 && share <= 1.0) {
                    return Err(self.err(
                        w.span(),
                        &f("warn_at"),
                        format!("must be in (0, 1], got {share}"),
                    ));
                }
                // The one float: the share as written, turned into a whole count once.
                Some(((share * limit as f64).ceil() as u64).clamp(1, limit))
            }
        };
        let tiers = match &r.tiers {
            Some(t) => Some(self.tier_list(t, &f("tiers"))?),
            None => None,
        };
        let matcher = Matcher {
            routes: match &r.routes {
                Some(list) if list.get_ref().is_empty() => {
                    return Err(self.err(
                        list.span(),
                        &f("routes"),
                        "must list at least one route",
                    ));
                }
                Some(list) => self.routes(list.get_ref(), &f("routes"))?,
                None => Vec::new(),
            },
            skip: self.routes(&r.skip, &f("skip"))?,
            signed_in: r.signed_in.as_ref().map(|s| *s.get_ref()),
            tiers,
            not_tiers: Vec::new(),
            methods: match &r.methods {
                None => None,
                Some(list) => Some(self.method_mask(list, &f("methods"))?),
            },
        };
        let base = Rule {
            name,
            kind,
            params,
            key,
            matcher,
            warn_from,
            profile,
        };
        let mut claimed: Vec<String> = Vec::new();
        let mut entries = Vec::new();
        for (k, t) in r.per_tier.iter().enumerate() {
            let t = t.get_ref();
            let tf = format!("{prefix}.per_tier[{k}]");
            let list = self.tier_list(&t.tiers, &format!("{tf}.tiers"))?;
            for (m, tier) in list.iter().enumerate() {
                if claimed.contains(tier) {
                    return Err(self.err(
                        t.tiers.get_ref()[m].span(),
                        &format!("{tf}.tiers[{m}]"),
                        format!("tier `{tier}` is already in an earlier per_tier entry"),
                    ));
                }
                if base
                    .matcher
                    .tiers
                    .as_ref()
                    .is_some_and(|b| !b.contains(tier))
                {
                    return Err(self.err(
                        t.tiers.get_ref()[m].span(),
                        &format!("{tf}.tiers[{m}]"),
                        format!("tier `{tier}` is not in the rule's `tiers`"),
                    ));
                }
            }
            claimed.extend(list.iter().cloned());
            let limit = self.count(&t.limit, &format!("{tf}.limit"), u32::MAX as u64)?;
            let window = match &t.window {
                Some(w) => self.duration(w, &format!("{tf}.window"), true)?,
                None => base.params.window,
            };
            let burst = match &t.burst {
                Some(b) if !kind.uses_burst() => {
                    return Err(self.err(
                        b.span(),
                        &format!("{tf}.burst"),
                        format!("`{kind}` has no burst parameter"),
                    ));
                }
                Some(b) => self.count(b, &format!("{tf}.burst"), u32::MAX as u64)?,
                None => limit,
            };
            let params = Params {
                limit,
                window,
                burst,
            };
            let profile = self.limiter(kind, params, t.limit.span(), &format!("{tf}.limit"))?;
            let warn_from = r
                .warn_at
                .as_ref()
                .map(|w| ((*w.get_ref() * limit as f64).ceil() as u64).clamp(1, limit));
            let mut matcher = base.matcher.clone();
            matcher.tiers = Some(list.clone());
            entries.push(Rule {
                name: format!("{}/{}", base.name, list.join("+")),
                params,
                warn_from,
                matcher,
                profile,
                ..base.clone()
            });
        }
        let mut base = base;
        base.matcher.not_tiers = claimed;
        // Every request of the other tiers is the base rule's; when the entries cover every
        // tier the rule names, the base rule has nothing left and is dropped.
        let base_left = base
            .matcher
            .tiers
            .as_ref()
            .is_none_or(|t| t.iter().any(|x| !base.matcher.not_tiers.contains(x)));
        let span = r.name.span();
        for rule in base_left.then_some(base).into_iter().chain(entries) {
            if !could_match(&rule, sources) {
                return Err(self.err(
                    span.clone(),
                    &f("name"),
                    format!(
                        "rule `{}` matches no request of this scenario's traffic (check its routes, skip, tiers and signed_in against the sources)",
                        rule.name
                    ),
                ));
            }
            rules.push(rule);
        }
        Ok(())
    }
}

/// Whether some source could send a request `rule` applies to. Replayed traces can carry any
/// route, user and tier, so they could match anything.
fn could_match(rule: &Rule, sources: &[SourceSpec]) -> bool {
    sources.iter().any(|s| {
        if matches!(s.arrivals, Arrivals::Replay { .. }) {
            return true;
        }
        let pop = &s.population;
        let endpoints: Vec<&str> = if pop.endpoints.is_empty() {
            vec![pop.endpoint.as_str()]
        } else {
            pop.endpoints.iter().map(|(e, _)| e.as_str()).collect()
        };
        let tiers: Vec<Option<&str>> = if pop.tiers.is_empty() {
            vec![None]
        } else {
            pop.tiers.iter().map(|(t, _)| Some(t.as_str())).collect()
        };
        let users: Vec<&str> = match &pop.user {
            crate::traffic::IdGen::Fixed(u) => vec![u.as_str()],
            _ => vec!["user"],
        };
        let methods: Vec<Method> = if pop.methods.is_empty() {
            vec![Method::Get]
        } else {
            pop.methods.iter().map(|m| m.0).collect()
        };
        if !methods.iter().any(|m| rule.matcher.takes_method(m.code())) {
            return false;
        }
        endpoints.iter().any(|&endpoint| {
            tiers.iter().any(|&tier| {
                users.iter().any(|&user| {
                    rule.matcher.applies(&Facts {
                        ip: "",
                        user,
                        api_key: "",
                        endpoint,
                        tier,
                        source_signed_in: Some(pop.network.signed_in),
                    })
                })
            })
        })
    })
}

/// The contender list of a scenario: `[[contender]]` entries when there are any, else one per
/// algorithm of the short form (see the module docs).
pub fn uses_contenders(scenario: &Scenario) -> bool {
    scenario.algorithms.iter().any(|a| a.stack().is_some())
}

/// A window-long span, for the rules' idle eviction: the longest window of the stack.
pub fn longest_window(stack: &Stack) -> Nanos {
    stack
        .rules
        .iter()
        .map(|r| r.params.window)
        .max()
        .unwrap_or(1)
}
