//! The stated intent every contender is judged against: what each real client (a user, else
//! the client named like its key) is entitled to, whatever key a contender counts on.
//!
//! A scenario states it in `[intent]` (docs/scenario-format.md); without one it is the
//! `[policy]`'s limit, window and burst per real client. Tiers may carry their own entitlement,
//! and so may routes: a request to a route of a `per_route` entry is judged against that
//! entry's own budget per client (not the base's, nor its tier's).
//! An entitlement's ceiling in any rolling window `(t−W, t]` is `max(limit, burst)`: a burst
//! the intent grants is not a violation. An entitlement per calendar period (`window =
//! "month"` in a time zone) allows its limit in each period instead ([`super::periods`]).

use crate::calendar::Calendar;
use crate::policy::Policy;
use crate::time::Nanos;
use serde::Serialize;

/// What one client may have admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Entitlement {
    /// Admissions allowed per `window`, in requests.
    pub limit: u64,
    /// The rolling window `limit` applies to, in nanoseconds; per calendar period, the
    /// period's longest length.
    #[serde(rename = "window_ns")]
    pub window: Nanos,
    /// A burst the intent grants: up to `max(limit, burst)` in one window is no violation.
    pub burst: u64,
    /// The calendar period `limit` applies to instead of a rolling window.
    #[serde(rename = "period", serialize_with = "calendar_text")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub calendar: Option<&'static Calendar>,
}

/// A calendar as its one-line description: "month in America/Sao_Paulo".
fn calendar_text<S: serde::Serializer>(
    c: &Option<&'static Calendar>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(&c.to_string()),
        None => s.serialize_none(),
    }
}

impl Entitlement {
    /// The most admissions the entitlement allows in one rolling window.
    pub fn ceiling(&self) -> u64 {
        self.limit.max(self.burst)
    }

    fn bound(&self) -> Bound {
        Bound {
            ceiling: self.ceiling(),
            window: self.window,
            calendar: self.calendar,
        }
    }

    /// "10 per 1m burst 20"; `unit` follows the limit: "1000 cost per 1m", "5000 input
    /// tokens per 1m".
    fn text(&self, unit: IntentUnit) -> String {
        let unit = match unit.noun() {
            "requests" => String::new(),
            noun => format!(" {noun}"),
        };
        let per = match self.calendar {
            Some(c) => c.to_string(),
            None => crate::time::format_duration(self.window),
        };
        let mut s = format!("{}{unit} per {per}", self.limit);
        if self.burst > self.limit {
            s.push_str(&format!(" burst {}", self.burst));
        }
        s
    }
}

/// Whom the intent judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Per {
    /// Each real client (the default).
    Client,
    /// Each key of the policy (as written, e.g. `ip`): the figures judge keys, as before
    /// intents existed.
    Key(String),
}

/// The entitlement of some tiers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TierEntitlement {
    /// The tiers (a client's plan, e.g. `pro`) this entitlement applies to.
    pub tiers: Vec<String>,
    /// Admissions allowed per window to each client of these tiers, in requests.
    pub limit: u64,
    /// The rolling window, in nanoseconds.
    pub window_ns: Nanos,
    /// The burst granted: the ceiling is `max(limit, burst)`.
    pub burst: u64,
    /// The calendar period `limit` applies to instead of a rolling window.
    #[serde(rename = "period", serialize_with = "calendar_text")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub calendar: Option<&'static Calendar>,
}

impl TierEntitlement {
    /// These tiers' limit, window and burst as an [`Entitlement`].
    pub fn entitlement(&self) -> Entitlement {
        Entitlement {
            limit: self.limit,
            window: self.window_ns,
            burst: self.burst,
            calendar: self.calendar,
        }
    }
}

/// The entitlement of the requests to some routes: a budget of its own per client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RouteEntitlement {
    /// Route patterns, as a contender rule's `routes` (exact, or a prefix ending in `*`).
    pub routes: Vec<String>,
    /// Admissions allowed per window to each client on these routes, in requests.
    pub limit: u64,
    /// The rolling window, in nanoseconds.
    pub window_ns: Nanos,
    /// The burst granted: the ceiling is `max(limit, burst)`.
    pub burst: u64,
    /// The calendar period `limit` applies to instead of a rolling window.
    #[serde(rename = "period", serialize_with = "calendar_text")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub calendar: Option<&'static Calendar>,
}

impl RouteEntitlement {
    /// This route budget's limit, window and burst as an [`Entitlement`].
    pub fn entitlement(&self) -> Entitlement {
        Entitlement {
            limit: self.limit,
            window: self.window_ns,
            burst: self.burst,
            calendar: self.calendar,
        }
    }
}

/// What an entitlement's limit counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntentUnit {
    /// Requests, one each (the default).
    #[default]
    Requests,
    /// Units of cost: each admitted request weighs what it settled (its actual cost where the
    /// traffic states one, else its cost).
    Cost,
    /// An LLM's prompt tokens (cached ones included): each admitted request weighs the
    /// prompt it sent.
    InputTokens,
    /// An LLM's output tokens: each admitted request weighs what its response streamed.
    OutputTokens,
    /// Prompt and output tokens together.
    Tokens,
}

impl IntentUnit {
    /// Whether the limit counts requests.
    pub fn is_requests(&self) -> bool {
        *self == IntentUnit::Requests
    }

    /// Whether the limit counts an LLM's tokens.
    pub fn is_tokens(&self) -> bool {
        matches!(
            self,
            IntentUnit::InputTokens | IntentUnit::OutputTokens | IntentUnit::Tokens
        )
    }

    /// The unit in words, after a number: `requests`, `cost`, `input tokens`.
    pub fn noun(&self) -> &'static str {
        match self {
            IntentUnit::Requests => "requests",
            IntentUnit::Cost => "cost",
            IntentUnit::InputTokens => "input tokens",
            IntentUnit::OutputTokens => "output tokens",
            IntentUnit::Tokens => "tokens",
        }
    }

    /// What an admitted request weighs in this unit (saturating at `Cost::MAX`).
    #[inline]
    pub fn weigh(&self, a: &crate::traffic::Arrival) -> crate::algorithms::Cost {
        match self {
            IntentUnit::Requests => 1,
            IntentUnit::Cost => a.settled(),
            IntentUnit::InputTokens => a.tokens.input,
            IntentUnit::OutputTokens => a.tokens.output,
            IntentUnit::Tokens => a.tokens.input.saturating_add(a.tokens.output),
        }
    }
}

/// The validated intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    /// What every limit of the intent counts: requests, units of cost or an LLM's tokens.
    pub unit: IntentUnit,
    /// The entitlement of a client with no tier entry (and of each key, judging keys).
    pub base: Entitlement,
    /// Whom the figures judge: each real client, or each policy key.
    pub per: Per,
    /// Entitlements of tiers of their own; the first entry naming a client's tier applies.
    pub per_tier: Vec<TierEntitlement>,
    /// The first entry whose routes match a request's endpoint judges it.
    pub per_route: Vec<RouteEntitlement>,
}

/// `intent` in `summary.json`: the yardstick of every per-client figure.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct IntentReport {
    /// The base entitlement's limit, in requests per window.
    pub limit: u64,
    /// The base entitlement's rolling window, in nanoseconds.
    pub window_ns: Nanos,
    /// The base entitlement's burst, in requests.
    pub burst: u64,
    /// The base entitlement's calendar period, when it counts per period ("month in
    /// America/Sao_Paulo") instead of in a rolling window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// `client`, or the policy key the figures judge instead.
    pub per: String,
    /// Entitlements of tiers of their own.
    pub per_tier: Vec<TierEntitlement>,
    /// Budgets of their own, per client, for the requests to some routes.
    pub per_route: Vec<RouteEntitlement>,
    /// What every limit counts: absent for requests, `cost` for units of cost,
    /// `input_tokens`, `output_tokens` or `tokens` for an LLM's tokens.
    #[serde(skip_serializing_if = "IntentUnit::is_requests")]
    pub unit: IntentUnit,
    /// One line: "10 per 1m per client; pro 1000 per 1m; /login 5 per 1m".
    pub text: String,
}

impl Intent {
    /// The default intent: the policy's limit, window and burst per real client.
    pub fn of_policy(policy: &Policy) -> Intent {
        Intent {
            unit: IntentUnit::Requests,
            base: Entitlement {
                limit: policy.limit,
                window: policy.window,
                burst: policy.burst,
                calendar: None,
            },
            per: Per::Client,
            per_tier: Vec::new(),
            per_route: Vec::new(),
        }
    }

    /// The `per_route` entry judging requests to `endpoint`, plus one; 0: none (the base or
    /// the client's tier judges them).
    pub fn route_of(&self, endpoint: &str) -> u8 {
        (self.per_route.iter())
            .position(|r| {
                r.routes
                    .iter()
                    .any(|p| crate::policy::route_matches(p, endpoint))
            })
            .map_or(0, |i| (i + 1) as u8)
    }

    /// Whether the intent allows its limits per calendar period (validation makes its every
    /// entitlement count so, or none).
    pub fn per_period(&self) -> bool {
        self.base.calendar.is_some()
    }

    /// Whether each real client is judged (not each policy key).
    pub fn per_client(&self) -> bool {
        self.per == Per::Client
    }

    /// The intent in one line, as figures are labelled with it.
    pub fn text(&self) -> String {
        let per = match &self.per {
            Per::Client => "client".to_string(),
            Per::Key(k) => format!("key {k}"),
        };
        let mut s = format!("{} per {per}", self.base.text(self.unit));
        for t in &self.per_tier {
            s.push_str(&format!(
                "; {} {}",
                t.tiers.join("+"),
                t.entitlement().text(self.unit)
            ));
        }
        for r in &self.per_route {
            s.push_str(&format!(
                "; {} {}",
                r.routes.join("+"),
                r.entitlement().text(self.unit)
            ));
        }
        s
    }

    /// The intent as `summary.json`'s `intent` object.
    pub fn report(&self) -> IntentReport {
        IntentReport {
            limit: self.base.limit,
            window_ns: self.base.window,
            burst: self.base.burst,
            period: self.base.calendar.map(|c| c.to_string()),
            per: match &self.per {
                Per::Client => "client".to_string(),
                Per::Key(k) => k.clone(),
            },
            per_tier: self.per_tier.clone(),
            per_route: self.per_route.clone(),
            unit: self.unit,
            text: self.text(),
        }
    }

    /// The entitlement of a client of tier `tier` (`None` or an unknown tier: the base).
    pub fn of_tier(&self, tier: Option<&str>) -> Entitlement {
        tier.and_then(|tier| {
            self.per_tier
                .iter()
                .find(|t| t.tiers.iter().any(|x| x == tier))
        })
        .map_or(self.base, TierEntitlement::entitlement)
    }
}

/// One judged id's ceiling and window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bound {
    pub ceiling: u64,
    pub window: Nanos,
    /// Per calendar period: the ceiling holds in each period, not in a rolling window.
    pub calendar: Option<&'static Calendar>,
}

/// Every judged id's [`Bound`]: one for all, or one per id (a client's tier, resolved once
/// per client before the run, not per request).
#[derive(Debug, Clone)]
pub(super) struct Bounds {
    base: Bound,
    /// The longest window of any bound: rejections are judged this long after them.
    longest: Nanos,
    /// Per id, an index in `tiers` plus one (0: the base); empty when every id has the base.
    of_id: Vec<u8>,
    tiers: Vec<Bound>,
    /// Judged ids per client: 1, or with `per_route` one per entry plus the base, id
    /// `client · stride + route` ([`Intent::route_of`]).
    stride: u32,
}

impl Bounds {
    pub fn uniform(ceiling: u64, window: Nanos) -> Bounds {
        Bounds {
            base: Bound {
                ceiling,
                window,
                calendar: None,
            },
            longest: window,
            of_id: Vec::new(),
            tiers: Vec::new(),
            stride: 1,
        }
    }

    /// Each id's bound under `intent`, its tier given by `tier_of(id)` for ids `0..ids`.
    pub fn of_intent<'a>(
        intent: &Intent,
        ids: usize,
        tier_of: impl Fn(usize) -> Option<&'a str>,
    ) -> Bounds {
        let tiers: Vec<Bound> = intent
            .per_tier
            .iter()
            .map(|t| t.entitlement().bound())
            .collect();
        let of_id = if tiers.is_empty() {
            Vec::new()
        } else {
            (0..ids)
                .map(|i| {
                    tier_of(i)
                        .and_then(|tier| {
                            intent
                                .per_tier
                                .iter()
                                .position(|t| t.tiers.iter().any(|x| x == tier))
                        })
                        .map_or(0, |p| (p + 1) as u8)
                })
                .collect()
        };
        let longest = tiers
            .iter()
            .map(|b| b.window)
            .fold(intent.base.window, Nanos::max);
        let bounds = Bounds {
            base: intent.base.bound(),
            longest,
            of_id,
            tiers,
            stride: 1,
        };
        match intent.per_route.is_empty() {
            true => bounds,
            false => bounds.routed(intent, ids),
        }
    }

    /// These bounds (of tiers, per client) spread over the judged ids of `per_route`: client
    /// `c`'s base or tier at id `c · stride`, entry `r`'s bound at `c · stride + r + 1`.
    fn routed(mut self, intent: &Intent, clients: usize) -> Bounds {
        let routes = intent.per_route.len();
        let stride = routes + 1;
        let first = self.tiers.len() as u8 + 1;
        for r in &intent.per_route {
            let b = r.entitlement().bound();
            self.longest = self.longest.max(b.window);
            self.tiers.push(b);
        }
        let tier = |c: usize| self.of_id.get(c).copied().unwrap_or(0);
        self.of_id = (0..clients * stride)
            .map(|id| match id % stride {
                0 => tier(id / stride),
                r => first + (r - 1) as u8,
            })
            .collect();
        self.stride = stride as u32;
        self
    }

    /// Judged ids per client (see [`Bounds::routed`]).
    pub fn stride(&self) -> u32 {
        self.stride
    }

    /// The bound of `id`.
    #[inline(always)]
    pub fn of(&self, id: u32) -> Bound {
        if self.of_id.is_empty() {
            return self.base;
        }
        match self.of_id.get(id as usize) {
            Some(&t) if t > 0 => self.tiers[t as usize - 1],
            _ => self.base,
        }
    }

    /// The bound of an id without a tier of its own.
    pub fn base(&self) -> Bound {
        self.base
    }

    /// The longest window of any id.
    #[inline(always)]
    pub fn longest(&self) -> Nanos {
        self.longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent() -> Intent {
        Intent {
            unit: IntentUnit::Requests,
            base: Entitlement {
                limit: 10,
                window: 60_000_000_000,
                burst: 10,
                calendar: None,
            },
            per: Per::Client,
            per_tier: vec![TierEntitlement {
                tiers: vec!["pro".into()],
                limit: 1000,
                window_ns: 60_000_000_000,
                burst: 2000,
                calendar: None,
            }],
            per_route: Vec::new(),
        }
    }

    #[test]
    fn text_names_the_base_and_each_tier() {
        assert_eq!(
            intent().text(),
            "10 per 1m per client; pro 1000 per 1m burst 2000"
        );
    }

    #[test]
    fn a_tier_gets_its_own_bound_and_an_unknown_one_the_base() {
        let tiers = [Some("pro"), None, Some("gold")];
        let b = Bounds::of_intent(&intent(), 3, |i| tiers[i]);
        assert_eq!(b.of(0).ceiling, 2000);
        assert_eq!(b.of(1).ceiling, 10);
        assert_eq!(b.of(2).ceiling, 10);
        assert_eq!(
            b.of(99).ceiling,
            10,
            "an id seen after the run started: the base"
        );
    }

    /// With a `per_route` entry every client has two judged ids: its tier's (or the base's)
    /// at `2c`, the route's at `2c + 1`.
    #[test]
    fn a_route_is_a_budget_of_its_own_per_client() {
        let mut i = intent();
        i.per_route = vec![RouteEntitlement {
            routes: vec!["/login".into(), "/auth/*".into()],
            limit: 2,
            window_ns: 120_000_000_000,
            burst: 2,
            calendar: None,
        }];
        assert_eq!(i.route_of("/login"), 1);
        assert_eq!(i.route_of("/auth/reset"), 1);
        assert_eq!(i.route_of("/items"), 0);
        assert_eq!(
            i.text(),
            "10 per 1m per client; pro 1000 per 1m burst 2000; /login+/auth/* 2 per 2m"
        );
        let tiers = [Some("pro"), None];
        let b = Bounds::of_intent(&i, 2, |c| tiers[c]);
        assert_eq!(b.stride(), 2);
        let ceilings: Vec<u64> = (0..4).map(|id| b.of(id).ceiling).collect();
        assert_eq!(ceilings, [2000, 2, 10, 2]);
        assert_eq!(b.of(1).window, 120_000_000_000);
        assert_eq!(b.longest(), 120_000_000_000);
    }
}
