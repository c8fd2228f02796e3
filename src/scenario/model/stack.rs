//! `[[contender]]` entries: whole limiter configurations as they are deployed (stacked rules,
//! which requests each applies to, bypass lists, warnings), validated into [`Stack`]s.
//!
//! The short form (`[policy]` + `algorithms`) is one contender per algorithm with one rule that
//! keys like the policy and applies to every request; such a contender has no [`Stack`] and runs
//! on the engine's single-limiter path, so its outputs are exactly what they always were.

use crate::algorithms::{Cost, LimiterSpec, Params};
use crate::policy::KeySpec;
use crate::time::Nanos;
use crate::traffic::tokens::estimate_from_chars;
use crate::traffic::{Arrival, Arrivals, SourceSpec, Tokens};
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
    /// What the rule counts (`unit`): each request's cost, requests, or an LLM's tokens.
    pub unit: RuleUnit,
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

/// What a rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleUnit {
    /// Each request's cost (`unit = "cost"`, the default).
    Cost,
    /// Requests, one each, whatever they weigh (`unit = "requests"`).
    Requests,
    /// An LLM request's tokens (`unit = "input_tokens"`, `"output_tokens"` or `"tokens"`),
    /// charged as the rule's accounting says.
    Tokens(TokenCount),
}

impl RuleUnit {
    /// The unit's name in scenarios (`cost`, `requests`, `input_tokens`).
    pub fn name(self) -> &'static str {
        match self {
            RuleUnit::Cost => "cost",
            RuleUnit::Requests => "requests",
            RuleUnit::Tokens(t) => t.kind.name(),
        }
    }
}

/// Which of an LLM request's tokens a rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// The prompt (`input_tokens`).
    Input,
    /// The output (`output_tokens`).
    Output,
    /// Prompt and output together (`tokens`).
    Total,
}

impl TokenKind {
    /// The unit's name in scenarios and outputs (`input_tokens`).
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Input => "input_tokens",
            TokenKind::Output => "output_tokens",
            TokenKind::Total => "tokens",
        }
    }
}

/// When a rule counting tokens charges them (`accounting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accounting {
    /// An estimate up front, kept whatever the response used (`reserve`: Azure OpenAI's
    /// prompt + `max_tokens`, OpenAI's rate-limit guide).
    Reserve,
    /// An estimate up front, set right to what the response used when it ends (`reconcile`:
    /// Anthropic's output tokens, LiteLLM's reservations, Azure's provisioned deployments).
    Reconcile,
    /// Nothing up front, the request only checked; what the response used, charged when it
    /// ends (`after`: Envoy AI Gateway, LiteLLM's legacy limiter, Kong AI Rate Limiting).
    After,
}

impl Accounting {
    /// The accounting's name in scenarios and outputs (`reconcile`).
    pub fn name(self) -> &'static str {
        match self {
            Accounting::Reserve => "reserve",
            Accounting::Reconcile => "reconcile",
            Accounting::After => "after",
        }
    }
}

/// How a request's up-front estimate weighs its prompt and its `max_tokens` (`estimate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimate {
    /// Prompt + `max_tokens` (`sum`, the default: Azure OpenAI, OpenAI's help center).
    Sum,
    /// The larger of the two (`max`: OpenAI's rate-limit guide).
    Max,
}

/// What a request charged nothing up front must find to be admitted (`check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// At least one unit left (`under`: LiteLLM's `current < limit`, Kong).
    Under,
    /// The count not above the limit (`not_over`: envoyproxy/ratelimit's `hits_addend = 0`,
    /// over only when `count > limit`). Fixed windows only.
    NotOver,
}

/// A rule counting an LLM's tokens: which, and when (docs/llm.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCount {
    /// Which tokens.
    pub kind: TokenKind,
    /// Whether prompt tokens read from the cache count (`cached`, default true; Anthropic's
    /// input limits leave them out).
    pub cached: bool,
    /// When they are charged.
    pub accounting: Accounting,
    /// The output a request stating no `max_tokens` reserves (`max_tokens_default`): a
    /// gateway's fixed default, or a model's whole context.
    pub max_tokens_default: u32,
    /// How the estimate of `tokens` weighs prompt and output.
    pub estimate: Estimate,
    /// What a request charged nothing up front must find.
    pub check: Check,
    /// The up-front estimate of a prompt from its characters, this many to a token
    /// (`estimate_chars_per_token`); `None`: its tokens exactly.
    pub chars_per_token: Option<u32>,
}

/// What a rule charges a request when deciding it: `units`, or nothing and only a check that
/// `units` more would fit (`check`: 1, or 0 for [`Check::NotOver`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    /// The units charged (or checked).
    pub units: Cost,
    /// Whether the request is only checked, its state left as it is.
    pub check: bool,
}

impl TokenCount {
    fn prompt(&self, t: &Tokens) -> Cost {
        if self.cached {
            t.input
        } else {
            t.input - t.cached
        }
    }

    /// The up-front estimate of the request's tokens, its prompt holding `milli_chars`
    /// thousandths of a character per token.
    fn estimated(&self, t: &Tokens, milli_chars: u32) -> Cost {
        let output = if t.states_max() {
            t.max_output
        } else {
            self.max_tokens_default
        };
        let prompt = match self.chars_per_token {
            None => self.prompt(t),
            Some(per) => estimate_from_chars(self.prompt(t), milli_chars, per),
        };
        match (self.kind, self.estimate) {
            (TokenKind::Input, _) => prompt,
            (TokenKind::Output, _) => output,
            (TokenKind::Total, Estimate::Sum) => prompt.saturating_add(output),
            (TokenKind::Total, Estimate::Max) => prompt.max(output),
        }
    }

    /// What the request charges up front (0 when only checked), its prompt holding
    /// `milli_chars` thousandths of a character per token.
    pub fn up_front(&self, t: &Tokens, milli_chars: u32) -> Cost {
        match self.accounting {
            Accounting::After => 0,
            Accounting::Reserve | Accounting::Reconcile => self.estimated(t, milli_chars),
        }
    }

    /// The tokens the request used, once its response has ended.
    pub fn used(&self, t: &Tokens) -> Cost {
        match self.kind {
            TokenKind::Input => self.prompt(t),
            TokenKind::Output => t.output,
            TokenKind::Total => self.prompt(t).saturating_add(t.output),
        }
    }

    /// What the end of the response settles: more charged (`> 0`) or given back (`< 0`).
    pub fn settles(&self, t: &Tokens, milli_chars: u32) -> i64 {
        match self.accounting {
            Accounting::Reserve => 0,
            Accounting::Reconcile | Accounting::After => {
                i64::from(self.used(t)) - i64::from(self.up_front(t, milli_chars))
            }
        }
    }

    /// Whether the end of a response can change what the rule charged.
    pub fn settles_later(&self) -> bool {
        self.accounting != Accounting::Reserve
    }
}

impl Rule {
    /// What `a` weighs under this rule when it is decided: 1 when the rule counts requests,
    /// its up-front tokens when it counts tokens (a check when that is nothing), its prompt
    /// holding `milli_chars` thousandths of a character per token.
    #[inline]
    pub fn weigh(&self, a: &Arrival, milli_chars: u32) -> Charge {
        let units = match self.unit {
            RuleUnit::Cost => a.cost,
            RuleUnit::Requests => 1,
            RuleUnit::Tokens(t) => match t.up_front(&a.tokens, milli_chars) {
                0 => {
                    let units = (t.check == Check::Under) as Cost;
                    return Charge { units, check: true };
                }
                n => n,
            },
        };
        Charge {
            units,
            check: false,
        }
    }

    /// Whether the rule counts requests, one each.
    pub fn counts_requests(&self) -> bool {
        self.unit == RuleUnit::Requests
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

#[cfg(test)]
mod tests {
    use super::*;

    fn count(kind: TokenKind, accounting: Accounting) -> TokenCount {
        TokenCount {
            kind,
            cached: true,
            accounting,
            max_tokens_default: 0,
            estimate: Estimate::Sum,
            check: Check::Under,
            chars_per_token: None,
        }
    }

    /// English prose: 4 characters to a token.
    const EN: u32 = crate::traffic::tokens::ENGLISH_MILLI_CHARS;

    #[test]
    fn each_accounting_charges_its_estimate_and_settles_the_rest() {
        // 1,000 prompt tokens (400 cached), max_tokens 500, 120 output.
        let t = Tokens {
            input: 1000,
            cached: 400,
            max_output: 500,
            output: 120,
        };
        let total = count(TokenKind::Total, Accounting::Reserve);
        assert_eq!(
            (
                total.up_front(&t, EN),
                total.used(&t),
                total.settles(&t, EN)
            ),
            (1500, 1120, 0)
        );
        let reconcile = TokenCount {
            accounting: Accounting::Reconcile,
            ..total
        };
        assert_eq!(reconcile.settles(&t, EN), -380);
        let after = TokenCount {
            accounting: Accounting::After,
            ..total
        };
        assert_eq!((after.up_front(&t, EN), after.settles(&t, EN)), (0, 1120));
        // OpenAI's guide: the larger of the prompt and max_tokens.
        let max = TokenCount {
            estimate: Estimate::Max,
            ..total
        };
        assert_eq!(max.up_front(&t, EN), 1000);
        // Anthropic's input tokens leave cache reads out.
        let input = TokenCount {
            cached: false,
            ..count(TokenKind::Input, Accounting::Reconcile)
        };
        assert_eq!(
            (
                input.up_front(&t, EN),
                input.used(&t),
                input.settles(&t, EN)
            ),
            (600, 600, 0)
        );
        // Output: max_tokens reserved; unstated, the default (0 without one).
        let output = count(TokenKind::Output, Accounting::Reconcile);
        assert_eq!(
            (output.up_front(&t, EN), output.settles(&t, EN)),
            (500, -380)
        );
        let unstated = Tokens { max_output: 0, ..t };
        assert_eq!(output.up_front(&unstated, EN), 0);
        let default = TokenCount {
            max_tokens_default: 1024,
            ..output
        };
        assert_eq!(
            (
                default.up_front(&unstated, EN),
                default.settles(&unstated, EN)
            ),
            (1024, -904)
        );
        // An output past its estimate (a default smaller than the stream) is charged more.
        let small = TokenCount {
            max_tokens_default: 100,
            ..output
        };
        assert_eq!(small.settles(&unstated, EN), 20);
    }

    /// A prompt estimated from its characters (OpenAI's, Azure's and LiteLLM's chars / 4):
    /// English's 4 to a token gives the tokens; a prompt of 1.5 characters a token (CJK)
    /// is estimated at 3/8 of its tokens, rounded up; code at 3 at 3/4.
    #[test]
    fn a_prompt_estimated_from_characters() {
        let t = Tokens {
            input: 1000,
            cached: 0,
            max_output: 0,
            output: 10,
        };
        let chars = TokenCount {
            chars_per_token: Some(4),
            ..count(TokenKind::Input, Accounting::Reconcile)
        };
        assert_eq!(chars.up_front(&t, EN), 1000);
        assert_eq!(chars.up_front(&t, 1500), 375);
        assert_eq!(chars.up_front(&Tokens { input: 1001, ..t }, 1500), 376);
        assert_eq!(chars.up_front(&t, 3000), 750);
        // What the response used is still its tokens: 625 more charged at its end.
        assert_eq!(chars.settles(&t, 1500), 625);
        assert_eq!(estimate_from_chars(7, 1333, 4), 3);
        assert_eq!(estimate_from_chars(u32::MAX, 100_000, 1), u32::MAX);
    }
}
