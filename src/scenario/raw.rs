//! The scenario file exactly as written: serde structs that keep each value's position so that
//! validation (`validate/`) can point at the line of any field it refuses. Every serde struct of
//! the format is here; the validated model is in the feature files (`contender.rs`, ...).

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: S<String>,
    #[serde(default)]
    pub description: Option<S<String>>,
    #[serde(default)]
    pub seed: Option<S<Int>>,
    pub duration: S<String>,
    /// The instant virtual time 0 stands for (RFC 3339), for profiles that read the wall clock.
    #[serde(default)]
    pub start: Option<S<String>>,
    pub policy: S<RawPolicy>,
    /// What each real client is entitled to (`validate/intent.rs`); default: the policy's.
    #[serde(default)]
    pub intent: Option<S<RawIntent>>,
    /// Algorithms to run, by name. Default: all.
    #[serde(default)]
    pub algorithms: Option<S<Vec<S<String>>>>,
    /// Per-algorithm overrides of the policy's parameters: `[algorithm.token_bucket]`.
    #[serde(default)]
    pub algorithm: BTreeMap<String, S<RawOverride>>,
    /// Whole limiter configurations: `[[contender]]` with `[[contender.rule]]`s.
    #[serde(default)]
    pub contender: Vec<S<RawContender>>,
    /// Replicas and a store for every algorithm of the short form (see `deployment.rs`).
    #[serde(default)]
    pub deployment: Option<S<RawDeployment>>,
    /// A profile's native parameters: `[profile.nginx-limit-req]` (checked by the profile).
    #[serde(default)]
    pub profile: BTreeMap<String, S<BTreeMap<String, S<toml::Value>>>>,
    #[serde(default)]
    pub output: Option<S<RawOutput>>,
    #[serde(default)]
    pub traffic: Vec<S<RawTraffic>>,
    /// Expectations on the results, one string each (see `expect.rs`).
    #[serde(default)]
    pub expect: Option<S<Vec<S<String>>>>,
    /// The priorities the report ranks algorithms by: `max_<metric>` / `min_<metric>` = bound.
    #[serde(default)]
    pub goals: Option<BTreeMap<String, S<toml::Value>>>,
    /// Alert rules replayed on the virtual timeline (see `alerts.rs`).
    #[serde(default)]
    pub alert: Vec<S<RawAlert>>,
    /// The sweep `rlsim sweep` runs by default, and what `rlsim check` expects of it.
    #[serde(default)]
    pub sweep: Option<S<RawSweep>>,
    /// How many seeds `rlsim run` runs without `--replicates` (docs/replicates.md).
    #[serde(default)]
    pub replicates: Option<S<Int>>,
    /// Inputs the scenario is unsure of, tried by `rlsim run --sensitivity`.
    #[serde(default)]
    pub uncertain: Vec<S<RawUncertain>>,
    /// How a back-test against production's decisions is shown (docs/backtest.md).
    #[serde(default)]
    pub backtest: Option<S<RawBacktest>>,
}

/// The `[backtest]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBacktest {
    /// The contender shown first, as the calibration of the model.
    pub model: Option<S<String>>,
}

/// One `[[uncertain]]` table: a field as `--set` names it and the values to try.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUncertain {
    pub set: S<String>,
    pub values: S<Vec<S<toml::Value>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    /// Axes, as `--set` takes them: `"policy.limit=20..120:20"`.
    #[serde(default)]
    pub set: Vec<S<String>>,
    /// The goal a recommendation is best on (default: the first of `[goals]`).
    #[serde(default)]
    pub prefer: Option<S<String>>,
    /// The figure of the line chart (default: `legit_goodput`).
    #[serde(default)]
    pub chart: Option<S<String>>,
    /// Claims about the recommendation: `"recommended.policy.limit == 60"`.
    #[serde(default)]
    pub expect: Vec<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub limit: S<Int>,
    pub window: S<String>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
    #[serde(default)]
    pub key: Option<S<RawKey>>,
}

/// `[intent]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIntent {
    /// `"requests"` (the default) or `"cost"`: what every limit of the intent counts.
    #[serde(default)]
    pub unit: Option<S<String>>,
    #[serde(default)]
    pub limit: Option<S<Int>>,
    #[serde(default)]
    pub window: Option<S<String>>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
    /// `"client"` (the default) or a key as `[policy] key` takes it.
    #[serde(default)]
    pub per: Option<S<RawKey>>,
    /// Other entitlements for some tiers: `per_tier = [{ tiers = ["pro"], limit = 1000 }]`.
    #[serde(default)]
    pub per_tier: Vec<S<RawTierLimit>>,
    /// Budgets of their own for some routes:
    /// `per_route = [{ routes = ["/login"], limit = 5, window = "1m" }]`.
    #[serde(default)]
    pub per_route: Vec<S<RawRouteLimit>>,
    /// Per calendar period (`window = "month"`): the clocks its periods follow (UTC).
    #[serde(default)]
    pub time_zone: Option<S<String>>,
    /// Per week: the weekday a week starts on (monday).
    #[serde(default)]
    pub week_starts: Option<S<String>>,
    /// Per month: the day of the month a month starts on (1).
    #[serde(default)]
    pub month_starts: Option<S<Int>>,
}

/// One `[intent] per_route` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRouteLimit {
    pub routes: S<Vec<S<String>>>,
    pub limit: S<Int>,
    #[serde(default)]
    pub window: Option<S<String>>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
}

/// A key: `"ip"`, `["ip", "endpoint"]` or an identity table `{ identity = "xff", ... }`.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "a key field, a list of key fields or an identity table"
)]
pub enum RawKey {
    One(String),
    Many(Vec<String>),
    Table(toml::Table),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOverride {
    #[serde(default)]
    pub limit: Option<S<Int>>,
    #[serde(default)]
    pub window: Option<S<String>>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    /// Width of a `timeseries.csv` bucket.
    #[serde(default)]
    pub bucket: Option<S<String>>,
}

/// One `[[traffic]]` table. Flat on purpose: which fields a kind accepts is checked by
/// validation, which can then name the field and its line (serde's tagged enums lose spans).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTraffic {
    pub name: S<String>,
    #[serde(default)]
    pub role: Option<S<String>>,
    pub kind: S<String>,
    /// Closed-loop clients: what they do after a rejection (see `client.rs`).
    #[serde(default)]
    pub on_reject: Option<S<RawReaction>>,
    #[serde(default)]
    pub rate: Option<S<String>>,
    #[serde(default)]
    pub start: Option<S<String>>,
    #[serde(default)]
    pub stop: Option<S<String>>,
    #[serde(default)]
    pub arrival: Option<S<String>>,
    #[serde(default)]
    pub users: Option<S<Int>>,
    #[serde(default)]
    pub ips: Option<S<Int>>,
    #[serde(default)]
    pub ip: Option<S<String>>,
    #[serde(default)]
    pub user: Option<S<String>>,
    #[serde(default)]
    pub api_key: Option<S<String>>,
    #[serde(default)]
    pub endpoint: Option<S<String>>,
    #[serde(default)]
    pub count: Option<S<Int>>,
    #[serde(default)]
    pub every: Option<S<String>>,
    #[serde(default)]
    pub spread: Option<S<String>>,
    #[serde(default)]
    pub at: Option<S<String>>,
    #[serde(default)]
    pub lead: Option<S<String>>,
    #[serde(default)]
    pub path: Option<S<String>>,
    // Arrival processes, populations, attack kinds and replay options (docs/traffic.md).
    // A missing `Option` field is `None`.
    pub rate_to: Option<S<String>>,
    pub amplitude: Option<S<String>>,
    pub period: Option<S<String>>,
    pub phase: Option<S<String>>,
    pub on: Option<S<String>>,
    pub off: Option<S<String>>,
    pub on_dist: Option<S<String>>,
    pub pareto_alpha: Option<S<Num>>,
    pub mmpp_rates: Option<S<Vec<String>>>,
    pub mmpp_stay: Option<S<Vec<String>>>,
    pub spike_at: Option<S<String>>,
    pub peak: Option<S<String>>,
    pub rise: Option<S<String>>,
    pub decay: Option<S<String>>,
    pub phases: Option<S<Vec<RawPhase>>>,
    pub rate_dist: Option<S<String>>,
    pub rate_sigma: Option<S<Num>>,
    pub zipf_exponent: Option<S<Num>>,
    pub ipv6: Option<S<bool>>,
    pub botnet: Option<S<Int>>,
    pub endpoints: Option<S<Vec<RawWeighted>>>,
    pub tier: Option<S<String>>,
    pub tiers: Option<S<Vec<RawWeighted>>>,
    pub repeat: Option<S<bool>>,
    pub over: Option<S<Num>>,
    pub format: Option<S<String>>,
    pub speed: Option<S<Num>>,
    pub offset: Option<S<String>>,
    #[serde(rename = "loop")]
    pub loops: Option<S<Int>>,
    pub sample: Option<S<Num>>,
    /// A sampled log keeps 1 request in this many.
    pub sample_rate: Option<S<Int>>,
    pub sort_window: Option<S<String>>,
    pub max_gap: Option<S<String>>,
    pub same_second: Option<S<String>>,
    /// The text `log_format` of an `nginx` trace.
    pub log_format: Option<S<String>>,
    /// Addresses or networks whose replayed requests are abusive.
    pub abusive: Option<S<Vec<S<String>>>>,
    // The path to the origin and forged headers (docs/traffic.md, "Behind proxies").
    pub via: Option<S<OneOrMany>>,
    pub cdn_range: Option<S<String>>,
    pub proxy_range: Option<S<String>>,
    pub forge_xff: Option<S<Vec<S<String>>>>,
    pub forge_real_ip: Option<S<String>>,
    pub forge_cf: Option<S<String>>,
    pub signed_in: Option<S<bool>>,
    /// `method = "POST"`, or a weighted mix `methods = [{ method, weight }]`.
    pub method: Option<S<String>>,
    pub methods: Option<S<Vec<RawWeighted>>>,
    /// What each request weighs: `cost = 5`, or drawn (`cost_dist` with `cost_min`,
    /// `cost_max`, `cost_sigma`, `cost_exponent`), or a mix `costs = [{ cost, weight }]`.
    pub cost: Option<S<Int>>,
    pub cost_dist: Option<S<String>>,
    pub cost_min: Option<S<Int>>,
    pub cost_max: Option<S<Int>>,
    pub cost_sigma: Option<S<Num>>,
    pub cost_exponent: Option<S<Num>>,
    pub costs: Option<S<Vec<RawCost>>>,
    /// What a request's response settles as its actual cost (`actual_cost = 3`, or a share of
    /// the requested cost `actual_share`, drawn from `actual_share_min`), and when
    /// (`response_time` after its admission).
    pub actual_cost: Option<S<Int>>,
    pub actual_share: Option<S<Num>>,
    pub actual_share_min: Option<S<Num>>,
    pub response_time: Option<S<String>>,
    /// An LLM source's tokens (docs/llm.md): counts as a whole number or a distribution's
    /// table.
    pub input_tokens: Option<S<toml::Value>>,
    pub cached_share: Option<S<Num>>,
    pub max_tokens: Option<S<toml::Value>>,
    pub max_tokens_share: Option<S<Num>>,
    pub output_tokens: Option<S<toml::Value>>,
    pub output_rate: Option<S<String>>,
    /// Characters per prompt token (`chars_per_token = 1.5`), for limiters that estimate a
    /// prompt from its characters.
    pub chars_per_token: Option<S<Num>>,
    /// A constant source's timing jitter, a share of its gap (`"5%"`, docs/replicates.md).
    pub jitter: Option<S<String>>,
}

/// One `phases = [{ duration, rate, ramp_to }]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    pub duration: S<String>,
    pub rate: S<String>,
    #[serde(default)]
    pub ramp_to: Option<S<String>>,
}

/// One `endpoints = [{ path, weight }]` or `tiers = [{ name, weight }]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeighted {
    #[serde(alias = "path", alias = "method")]
    pub name: S<String>,
    #[serde(default)]
    pub weight: Option<S<Int>>,
    /// A method's own cost (`methods` entries only).
    #[serde(default)]
    pub cost: Option<S<Int>>,
}

/// One `costs = [{ cost, weight }]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCost {
    pub cost: S<Int>,
    #[serde(default)]
    pub weight: Option<S<Int>>,
}

/// A whole-number field as written. Any TOML value deserialises into it, so that validation
/// (`Ctx::count`), not serde, says what is wrong with a value, with the field's range and unit:
/// serde's own words (`invalid type: integer ... as i128, expected i64`) never reach the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    Whole(i64),
    /// A whole number beyond `i64` (TOML reads up to `i128`): too large or too small whatever
    /// the field.
    Huge {
        negative: bool,
    },
    /// A float (`1.5`, `1e3`, `inf`, `nan`).
    Fraction,
    /// A string, a boolean, an array, a table or a date.
    NotNumber,
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess};
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Int;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int::Whole(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Int, E> {
                Ok(i64::try_from(v).map_or(Int::Huge { negative: false }, Int::Whole))
            }
            fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Int, E> {
                Ok(i64::try_from(v).map_or(Int::Huge { negative: v < 0 }, Int::Whole))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Int, E> {
                Ok(i64::try_from(v).map_or(Int::Huge { negative: false }, Int::Whole))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Int, E> {
                Ok(Int::Fraction)
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Int, E> {
                Ok(Int::NotNumber)
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Int, E> {
                Ok(Int::NotNumber)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Int, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Int::NotNumber)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Int, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Int::NotNumber)
            }
        }
        d.deserialize_any(V)
    }
}

/// A TOML number, integer or float (`speed = 2` and `speed = 2.5` both mean what they say).
#[derive(Debug, Clone, Copy)]
pub struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl RawTraffic {
    /// The optional fields that are set, by name, with their spans: validation refuses the ones
    /// the source's kind does not use.
    pub fn present_fields(&self) -> Vec<(&'static str, std::ops::Range<usize>)> {
        fn span<T>(
            name: &'static str,
            v: &Option<S<T>>,
        ) -> Option<(&'static str, std::ops::Range<usize>)> {
            v.as_ref().map(|s| (name, s.span()))
        }
        [
            span("rate", &self.rate),
            span("arrival", &self.arrival),
            span("users", &self.users),
            span("ips", &self.ips),
            span("ip", &self.ip),
            span("user", &self.user),
            span("api_key", &self.api_key),
            span("endpoint", &self.endpoint),
            span("count", &self.count),
            span("every", &self.every),
            span("spread", &self.spread),
            span("at", &self.at),
            span("lead", &self.lead),
            span("path", &self.path),
        ]
        .into_iter()
        .flatten()
        .chain(self.more_present_fields())
        .collect()
    }
}

/// A string or a list of strings (`key = "ip"` or `key = ["ip", "endpoint"]`).
#[derive(Debug)]
pub struct OneOrMany(pub Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name or a list of field names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(OneOrMany(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl RawTraffic {
    fn more_present_fields(&self) -> Vec<(&'static str, std::ops::Range<usize>)> {
        fn span<T>(
            name: &'static str,
            v: &Option<S<T>>,
        ) -> Option<(&'static str, std::ops::Range<usize>)> {
            v.as_ref().map(|s| (name, s.span()))
        }
        [
            span("rate_to", &self.rate_to),
            span("amplitude", &self.amplitude),
            span("period", &self.period),
            span("phase", &self.phase),
            span("on", &self.on),
            span("off", &self.off),
            span("on_dist", &self.on_dist),
            span("pareto_alpha", &self.pareto_alpha),
            span("mmpp_rates", &self.mmpp_rates),
            span("mmpp_stay", &self.mmpp_stay),
            span("spike_at", &self.spike_at),
            span("peak", &self.peak),
            span("rise", &self.rise),
            span("decay", &self.decay),
            span("phases", &self.phases),
            span("rate_dist", &self.rate_dist),
            span("rate_sigma", &self.rate_sigma),
            span("zipf_exponent", &self.zipf_exponent),
            span("ipv6", &self.ipv6),
            span("botnet", &self.botnet),
            span("endpoints", &self.endpoints),
            span("method", &self.method),
            span("methods", &self.methods),
            span("cost", &self.cost),
            span("cost_dist", &self.cost_dist),
            span("cost_min", &self.cost_min),
            span("cost_max", &self.cost_max),
            span("cost_sigma", &self.cost_sigma),
            span("cost_exponent", &self.cost_exponent),
            span("costs", &self.costs),
            span("actual_cost", &self.actual_cost),
            span("actual_share", &self.actual_share),
            span("actual_share_min", &self.actual_share_min),
            span("response_time", &self.response_time),
            span("input_tokens", &self.input_tokens),
            span("cached_share", &self.cached_share),
            span("max_tokens", &self.max_tokens),
            span("max_tokens_share", &self.max_tokens_share),
            span("output_tokens", &self.output_tokens),
            span("output_rate", &self.output_rate),
            span("chars_per_token", &self.chars_per_token),
            span("tier", &self.tier),
            span("tiers", &self.tiers),
            span("repeat", &self.repeat),
            span("over", &self.over),
            span("format", &self.format),
            span("speed", &self.speed),
            span("offset", &self.offset),
            span("loop", &self.loops),
            span("sample", &self.sample),
            span("sample_rate", &self.sample_rate),
            span("sort_window", &self.sort_window),
            span("via", &self.via),
            span("cdn_range", &self.cdn_range),
            span("proxy_range", &self.proxy_range),
            span("forge_xff", &self.forge_xff),
            span("forge_real_ip", &self.forge_real_ip),
            span("forge_cf", &self.forge_cf),
            span("signed_in", &self.signed_in),
            span("max_gap", &self.max_gap),
            span("same_second", &self.same_second),
            span("log_format", &self.log_format),
            span("abusive", &self.abusive),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// One `[[contender]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawContender {
    pub name: S<String>,
    /// A deployed limiter's configuration to take the rules from (docs/import.md), relative
    /// to the scenario; with `kind`, `server` and `location` to pick from it.
    #[serde(default)]
    pub import: Option<S<String>>,
    #[serde(default)]
    pub kind: Option<S<String>>,
    #[serde(default)]
    pub server: Option<S<String>>,
    #[serde(default)]
    pub location: Option<S<String>>,
    /// Admit everything and report what would have been refused (nginx `limit_req_dry_run`).
    #[serde(default)]
    pub dry_run: Option<S<bool>>,
    /// Decide as the replayed trace records production deciding (`rlsim probe`'s service).
    #[serde(default)]
    pub recorded: Option<S<bool>>,
    /// The HTTP status a refusal answers (nginx `limit_req_status`, default 503).
    #[serde(default)]
    pub refuse_status: Option<S<Int>>,
    #[serde(default)]
    pub description: Option<S<String>>,
    /// `all_or_nothing` (nginx `limit_req`, the default), `in_order` (NestJS throttler) or
    /// `every_rule` (the envoyproxy/ratelimit service).
    #[serde(default)]
    pub commit: Option<S<String>>,
    #[serde(default)]
    pub bypass: Option<S<RawBypass>>,
    #[serde(default)]
    pub rule: Vec<S<RawRule>>,
    /// Replicas and a store (see `deployment.rs`); the contender must have one plain rule.
    #[serde(default)]
    pub deployment: Option<S<RawDeployment>>,
    /// The rules an LLM provider or gateway documents (docs/llm.md "Profiles").
    #[serde(default)]
    pub llm: Option<S<RawLlm>>,
}

/// `llm = { ... }` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLlm {
    pub profile: S<String>,
    #[serde(default)]
    pub rpm: Option<S<Int>>,
    #[serde(default)]
    pub tpm: Option<S<Int>>,
    #[serde(default)]
    pub itpm: Option<S<Int>>,
    #[serde(default)]
    pub otpm: Option<S<Int>>,
    /// Which tokens a gateway counts (`tokens`, `input_tokens`, `output_tokens`).
    #[serde(default)]
    pub unit: Option<S<String>>,
    /// A gateway's window (default `1m`).
    #[serde(default)]
    pub window: Option<S<String>>,
    /// Where the documents disagree, which reading.
    #[serde(default)]
    pub reading: Option<S<String>>,
    /// What a request without `max_tokens` reserves (a model's context for Azure OpenAI).
    #[serde(default)]
    pub max_tokens_default: Option<S<Int>>,
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
    pub limit: S<Int>,
    /// A duration, or for `calendar_window` a calendar period (`day`, `week`, `month`, `year`).
    pub window: S<String>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
    /// `calendar_window`: the clocks its periods follow (an IANA name or an offset; UTC).
    #[serde(default)]
    pub time_zone: Option<S<String>>,
    /// `calendar_window` per week: the weekday a week starts on (monday).
    #[serde(default)]
    pub week_starts: Option<S<String>>,
    /// `calendar_window` per month: the day of the month a month starts on (1).
    #[serde(default)]
    pub month_starts: Option<S<Int>>,
    /// `calendar_window`: how long a period's counter lives after its first admission (Kong's
    /// month, `30d`); to the period's end by default.
    #[serde(default)]
    pub counter_ttl: Option<S<String>>,
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
    pub warn_at: Option<S<Num>>,
    /// Only requests with (`true`) or without (`false`) an API key (nginx never limits a
    /// request whose zone key, `$http_x_api_key`, is empty).
    #[serde(default)]
    pub has_api_key: Option<S<bool>>,
    /// The algorithm's native parameters when it is a profile (`profile = { nodelay = true }`),
    /// as `[profile.NAME]` takes them; they take the place of those derived from limit, window
    /// and burst.
    #[serde(default)]
    pub profile: Option<S<BTreeMap<String, S<toml::Value>>>>,
    /// This rule's refusals are only counted (nginx `limit_req_dry_run` in one location, the
    /// envoyproxy/ratelimit service's `shadow_mode`); default: the contender's `dry_run`.
    #[serde(default)]
    pub dry_run: Option<S<bool>>,
    /// The HTTP status this rule's refusals answer; default: the contender's `refuse_status`.
    #[serde(default)]
    pub refuse_status: Option<S<Int>>,
    /// What the rule counts: `cost` (each request's weight, the default), `requests`, or an
    /// LLM's `input_tokens`, `output_tokens` or `tokens`.
    #[serde(default)]
    pub unit: Option<S<String>>,
    /// A rule counting tokens: when it charges them (`reserve`, `reconcile`, `after`), whether
    /// cached prompt tokens count, what a request without `max_tokens` reserves, how the
    /// estimate weighs prompt and output (`sum`, `max`), and what a check must find (`under`,
    /// `not_over`). docs/llm.md.
    #[serde(default)]
    pub accounting: Option<S<String>>,
    #[serde(default)]
    pub cached: Option<S<bool>>,
    #[serde(default)]
    pub max_tokens_default: Option<S<Int>>,
    #[serde(default)]
    pub estimate: Option<S<String>>,
    /// Prompts estimated from their characters, this many to a token (rounded up).
    #[serde(default)]
    pub estimate_chars_per_token: Option<S<Int>>,
    #[serde(default)]
    pub check: Option<S<String>>,
    /// Whether the rule gives back what a response settles below the cost it charged.
    #[serde(default)]
    pub refunds: Option<S<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTierLimit {
    pub tiers: S<Vec<S<String>>>,
    pub limit: S<Int>,
    #[serde(default)]
    pub window: Option<S<String>>,
    #[serde(default)]
    pub burst: Option<S<Int>>,
}

/// `[deployment]` / `[contender.deployment]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeployment {
    pub replicas: S<Int>,
    #[serde(default)]
    pub balancer: Option<S<String>>,
    pub store: S<String>,
    #[serde(default)]
    pub ops: Option<S<String>>,
    /// `"1ms"`, or `{ kind = "uniform", min = "0.5ms", max = "2ms" }`, or
    /// `{ kind = "lognormal", median = "1ms", sigma = 0.5 }`.
    #[serde(default)]
    pub rtt: Option<S<toml::Value>>,
    /// `local` only: `"as_configured"` (default) or `"divided"`.
    #[serde(default)]
    pub limit: Option<S<String>>,
    #[serde(default)]
    pub sync_every: Option<S<String>>,
    #[serde(default)]
    pub die_chance: Option<S<Num>>,
    #[serde(default)]
    pub clock_offset: Option<S<String>>,
    #[serde(default)]
    pub outages: Vec<S<RawOutage>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    pub from: S<String>,
    pub to: S<String>,
    pub mode: S<String>,
}

/// One `[[alert]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlert {
    pub name: S<String>,
    pub count: S<String>,
    #[serde(default)]
    pub by: Option<S<String>>,
    pub threshold: S<toml::Value>,
    pub window: S<String>,
    #[serde(default, rename = "for")]
    pub for_: Option<S<String>>,
    #[serde(default)]
    pub every: Option<S<String>>,
}

/// A source's `on_reject` as written (see `validate/client.rs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReaction {
    pub retry: S<String>,
    #[serde(default)]
    pub max_retries: Option<S<Int>>,
    #[serde(default)]
    pub rtt: Option<S<String>>,
    #[serde(default)]
    pub base: Option<S<String>>,
    #[serde(default)]
    pub cap: Option<S<String>>,
    #[serde(default)]
    pub jitter: Option<S<String>>,
}
