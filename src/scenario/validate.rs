//! From the raw file to a validated [`Scenario`], with an error naming file, line and field for
//! anything refused.

use super::expect::{self, Expectation};
use super::raw::{RawOverride, RawScenario, RawTraffic, S};
use super::{AlgorithmSpec, Scenario};
use crate::algorithms::{AlgorithmKind, Params};
use crate::check::metric;
use crate::error::{Error, Location, Result};
use crate::policy::{KeyField, KeySpec, Policy};
use crate::time::{self, Nanos, Rate, UnitError};
use crate::traffic::{self, Arrivals, IdGen, Population, Role, SourceSpec};
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

/// Most buckets a `timeseries.csv` may have per algorithm.
const MAX_BUCKETS: u64 = 1_000_000;

pub struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl<'a> Ctx<'a> {
    pub fn new(text: &'a str, path: &'a Path) -> Self {
        Ctx { text, path }
    }

    fn location(&self, span: Option<Range<usize>>) -> Location {
        let (line, column) = match span {
            Some(span) => {
                let before = &self.text[..span.start.min(self.text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        Location {
            path: self.path.to_path_buf(),
            line,
            column,
        }
    }

    pub(super) fn err(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> Error {
        Error::Scenario {
            location: self.location(Some(span)),
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    /// TOML → raw structs, with serde's path to the failing field.
    pub fn deserialize(&self) -> Result<RawScenario> {
        let de = toml::Deserializer::parse(self.text).map_err(|e| Error::Scenario {
            location: self.location(e.span()),
            field: None,
            message: format!("malformed TOML: {}", e.message()),
        })?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            // Spanned<T> shows up in serde's path as a private wrapper field; drop it.
            let path = e
                .path()
                .to_string()
                .replace(".$__serde_spanned_private_value", "")
                .replace("$__serde_spanned_private_value", "");
            let inner = e.into_inner();
            Error::Scenario {
                location: self.location(inner.span()),
                field: (path != ".").then_some(path),
                message: inner.message().to_string(),
            }
        })
    }

    pub fn scenario(&self, raw: RawScenario) -> Result<Scenario> {
        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.err(raw.name.span(), "name", "must not be empty"));
        }
        let seed = match &raw.seed {
            Some(s) => u64::try_from(*s.get_ref()).map_err(|_| {
                self.err(
                    s.span(),
                    "seed",
                    format!("must be 0 or more, got {}", s.get_ref()),
                )
            })?,
            None => 0,
        };
        let duration = self.duration(&raw.duration, "duration", true)?;
        let policy = self.policy(&raw)?;
        let algorithms = self.algorithms(&raw, &policy)?;
        let bucket = match raw
            .output
            .as_ref()
            .and_then(|o| o.get_ref().bucket.as_ref())
        {
            Some(b) => {
                let bucket = self.duration(b, "output.bucket", true)?;
                if duration.div_ceil(bucket) > MAX_BUCKETS {
                    return Err(self.err(
                        b.span(),
                        "output.bucket",
                        format!(
                            "gives more than {MAX_BUCKETS} buckets over the scenario's duration"
                        ),
                    ));
                }
                bucket
            }
            None => default_bucket(duration),
        };
        if raw.traffic.is_empty() {
            return Err(Error::Scenario {
                location: self.location(None),
                field: Some("traffic".into()),
                message: "the scenario has no [[traffic]] source".into(),
            });
        }
        if raw.traffic.len() > u16::MAX as usize {
            return Err(self.err(raw.traffic[0].span(), "traffic", "more than 65535 sources"));
        }
        let mut names = HashSet::new();
        let mut traffic = Vec::with_capacity(raw.traffic.len());
        for (i, t) in raw.traffic.iter().enumerate() {
            let spec = self.source(i, t.get_ref(), &policy, duration)?;
            if !names.insert(spec.name.clone()) {
                return Err(self.err(
                    t.get_ref().name.span(),
                    &format!("traffic[{i}].name"),
                    format!("another source is already named `{}`", spec.name),
                ));
            }
            traffic.push(spec);
        }
        let reactions = raw
            .traffic
            .iter()
            .enumerate()
            .map(|(i, t)| self.reaction(t.get_ref().on_reject.as_ref(), i))
            .collect::<Result<Vec<_>>>()?;
        let mut scenario = Scenario {
            name,
            description: raw
                .description
                .map(|d| d.into_inner().trim().to_string())
                .unwrap_or_default(),
            path: self.path.to_path_buf(),
            seed,
            duration,
            policy,
            algorithms,
            traffic,
            bucket,
            reactions,
            expectations: Vec::new(),
        };
        // Metric and source names are checked against the scenario itself, so this comes last.
        scenario.expectations = self.expectations(raw.expect.as_ref(), &scenario)?;
        Ok(scenario)
    }

    fn expectations(
        &self,
        list: Option<&S<Vec<S<String>>>>,
        scenario: &Scenario,
    ) -> Result<Vec<Expectation>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        let shape = metric::shape(scenario);
        list.get_ref()
            .iter()
            .enumerate()
            .map(|(i, text)| {
                expect::resolve(text.get_ref(), scenario, &shape)
                    .map_err(|m| self.err(text.span(), &format!("expect[{i}]"), m))
            })
            .collect()
    }

    fn duration(&self, s: &S<String>, field: &str, positive: bool) -> Result<Nanos> {
        let parsed = if positive {
            time::parse_positive_duration(s.get_ref())
        } else {
            time::parse_duration(s.get_ref())
        };
        parsed.map_err(|e| self.unit_err(s.span(), field, e))
    }

    fn unit_err(&self, span: Range<usize>, field: &str, e: UnitError) -> Error {
        self.err(span, field, e.to_string())
    }

    pub(super) fn count(&self, s: &S<i64>, field: &str, max: u64) -> Result<u64> {
        let v = *s.get_ref();
        if v < 1 {
            return Err(self.err(s.span(), field, format!("must be at least 1, got {v}")));
        }
        if v as u64 > max {
            return Err(self.err(s.span(), field, format!("must be at most {max}, got {v}")));
        }
        Ok(v as u64)
    }

    fn policy(&self, raw: &RawScenario) -> Result<Policy> {
        let p = raw.policy.get_ref();
        let limit = self.count(&p.limit, "policy.limit", u32::MAX as u64)?;
        let window = self.duration(&p.window, "policy.window", true)?;
        let burst = match &p.burst {
            Some(b) => self.count(b, "policy.burst", u32::MAX as u64)?,
            None => limit,
        };
        let key = match &p.key {
            None => KeySpec::new(vec![KeyField::Ip]).expect("non-empty"),
            Some(k) => {
                let mut fields = Vec::new();
                for name in &k.get_ref().0 {
                    fields.push(KeyField::parse(name).ok_or_else(|| {
                        self.err(
                            k.span(),
                            "policy.key",
                            format!("unknown key field `{name}` (expected ip, user, api_key or endpoint)"),
                        )
                    })?);
                }
                KeySpec::new(fields).ok_or_else(|| {
                    self.err(k.span(), "policy.key", "must name at least one field")
                })?
            }
        };
        Ok(Policy {
            limit,
            window,
            burst,
            key,
        })
    }

    fn algorithm_kind(&self, s: &S<String>, field: &str) -> Result<AlgorithmKind> {
        s.get_ref()
            .parse()
            .map_err(|m: String| self.err(s.span(), field, m))
    }

    fn algorithms(&self, raw: &RawScenario, policy: &Policy) -> Result<Vec<AlgorithmSpec>> {
        let kinds: Vec<AlgorithmKind> = match &raw.algorithms {
            None => AlgorithmKind::ALL.to_vec(),
            Some(list) => {
                let mut kinds = Vec::new();
                for (i, name) in list.get_ref().iter().enumerate() {
                    let field = format!("algorithms[{i}]");
                    let kind = self.algorithm_kind(name, &field)?;
                    if kinds.contains(&kind) {
                        return Err(self.err(
                            name.span(),
                            &field,
                            format!("`{kind}` is listed twice"),
                        ));
                    }
                    kinds.push(kind);
                }
                if kinds.is_empty() {
                    return Err(self.err(
                        list.span(),
                        "algorithms",
                        "must list at least one algorithm",
                    ));
                }
                kinds
            }
        };
        let base = Params {
            limit: policy.limit,
            window: policy.window,
            burst: policy.burst,
        };
        let mut specs: Vec<AlgorithmSpec> = kinds
            .iter()
            .map(|&kind| AlgorithmSpec { kind, params: base })
            .collect();
        for (name, over) in &raw.algorithm {
            let field = format!("algorithm.{name}");
            let kind: AlgorithmKind = name
                .parse()
                .map_err(|m: String| self.err(over.span(), &field, m))?;
            let Some(spec) = specs.iter_mut().find(|s| s.kind == kind) else {
                return Err(self.err(
                    over.span(),
                    &field,
                    format!("`{kind}` is not in `algorithms`"),
                ));
            };
            spec.params = self.override_params(base, over.get_ref(), &field)?;
            if over.get_ref().burst.is_some() && !kind.uses_burst() {
                return Err(self.err(
                    over.span(),
                    &format!("{field}.burst"),
                    format!("`{kind}` has no burst parameter"),
                ));
            }
        }
        for spec in &specs {
            spec.kind.validate(spec.params).map_err(|e| {
                // Point at the table the parameters came from: the override, or the policy.
                let name = spec.kind.name();
                match raw.algorithm.get(name) {
                    Some(over) => {
                        self.err(over.span(), &format!("algorithm.{name}"), e.to_string())
                    }
                    None => self.err(raw.policy.span(), "policy", e.to_string()),
                }
            })?;
        }
        Ok(specs)
    }

    fn override_params(&self, base: Params, o: &RawOverride, field: &str) -> Result<Params> {
        Ok(Params {
            limit: match &o.limit {
                Some(l) => self.count(l, &format!("{field}.limit"), u32::MAX as u64)?,
                None => base.limit,
            },
            window: match &o.window {
                Some(w) => self.duration(w, &format!("{field}.window"), true)?,
                None => base.window,
            },
            burst: match &o.burst {
                Some(b) => self.count(b, &format!("{field}.burst"), u32::MAX as u64)?,
                None => base.burst,
            },
        })
    }

    fn source(
        &self,
        i: usize,
        t: &RawTraffic,
        policy: &Policy,
        duration: Nanos,
    ) -> Result<SourceSpec> {
        let f = |name: &str| format!("traffic[{i}].{name}");
        let name = t.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.err(t.name.span(), &f("name"), "must not be empty"));
        }
        let role = match t.role.as_ref().map(|r| (r.get_ref().as_str(), r.span())) {
            None | Some(("legit", _)) => Role::Legit,
            Some(("abusive", _)) => Role::Abusive,
            Some((other, span)) => {
                return Err(self.err(
                    span,
                    &f("role"),
                    format!("unknown role `{other}` (expected legit or abusive)"),
                ));
            }
        };
        let kind = t.kind.get_ref().as_str();
        const IDENTITY: &[&str] = &["users", "ips", "ip", "user", "api_key", "endpoint"];
        let allowed: Vec<&str> = match kind {
            "constant" | "poisson" => [&["rate"][..], IDENTITY].concat(),
            "nat" => [&["rate", "arrival"][..], IDENTITY].concat(),
            "bursts" => [&["count", "every", "spread"][..], IDENTITY].concat(),
            "boundary" => [&["count", "at", "lead", "spread"][..], IDENTITY].concat(),
            "replay" => vec!["path"],
            other => {
                return Err(self.err(
                    t.kind.span(),
                    &f("kind"),
                    format!("unknown traffic kind `{other}` (expected constant, poisson, nat, bursts, boundary or replay)"),
                ));
            }
        };
        if let Some((field, span)) = t
            .present_fields()
            .into_iter()
            .find(|(n, _)| !allowed.contains(n))
        {
            return Err(self.err(
                span,
                &f(field),
                format!("not used by traffic kind `{kind}`"),
            ));
        }
        let required = |v: bool, field: &str| -> Result<()> {
            if v {
                Ok(())
            } else {
                Err(self.err(
                    t.kind.span(),
                    &f(field),
                    format!("traffic kind `{kind}` requires `{field}`"),
                ))
            }
        };
        let start = match &t.start {
            Some(s) => self.duration(s, &f("start"), false)?,
            None => 0,
        };
        let stop = match &t.stop {
            Some(s) => self.duration(s, &f("stop"), true)?.min(duration),
            None => duration,
        };
        if start >= stop {
            let span = t.start.as_ref().map_or(t.name.span(), |s| s.span());
            return Err(self.err(
                span,
                &f("start"),
                "must be before the source's stop and the scenario's end",
            ));
        }
        let population = self.population(t, kind, &f)?;
        let clients = population.clients as u64;
        let rate = |r: &Option<S<String>>| -> Result<Rate> {
            let r = r.as_ref().expect("checked by `required`");
            let rate = time::parse_rate(r.get_ref())
                .map_err(|e| self.unit_err(r.span(), &f("rate"), e))?;
            rate.times(clients)
                .ok_or_else(|| self.err(r.span(), &f("rate"), "rate × clients is too large"))?;
            Ok(rate)
        };
        let count = |c: &Option<S<i64>>| {
            self.count(
                c.as_ref().expect("checked by `required`"),
                &f("count"),
                100_000_000,
            )
        };
        let arrivals = match kind {
            "constant" | "poisson" | "nat" => {
                required(t.rate.is_some(), "rate")?;
                let rate = rate(&t.rate)?;
                let poisson = match t.arrival.as_ref().map(|a| (a.get_ref().as_str(), a.span())) {
                    None => kind != "constant",
                    Some(("poisson", _)) => true,
                    Some(("constant", _)) => false,
                    Some((other, span)) => {
                        return Err(self.err(
                            span,
                            &f("arrival"),
                            format!("unknown arrival `{other}` (expected constant or poisson)"),
                        ));
                    }
                };
                if poisson {
                    Arrivals::Poisson(rate)
                } else {
                    Arrivals::Constant(rate)
                }
            }
            "bursts" => {
                required(t.count.is_some(), "count")?;
                required(t.every.is_some(), "every")?;
                let every_s = t.every.as_ref().expect("required");
                let every = self.duration(every_s, &f("every"), true)?;
                let spread = self.opt_duration(&t.spread, &f("spread"), 0)?;
                if spread >= every {
                    return Err(self.err(
                        every_s.span(),
                        &f("spread"),
                        "must be shorter than `every`",
                    ));
                }
                Arrivals::Bursts {
                    count: count(&t.count)?,
                    every,
                    spread,
                }
            }
            "boundary" => {
                required(t.count.is_some(), "count")?;
                let at = self.opt_duration(&t.at, &f("at"), policy.window)?;
                let at_span = t.at.as_ref().map_or(t.kind.span(), |s| s.span());
                if at == 0 || at % policy.window != 0 {
                    return Err(self.err(
                        at_span,
                        &f("at"),
                        format!(
                            "must be a positive multiple of the policy window ({})",
                            time::format_duration(policy.window)
                        ),
                    ));
                }
                let lead = self.opt_duration(&t.lead, &f("lead"), 100 * time::NANOS_PER_MILLI)?;
                if lead == 0 || lead > at {
                    let span = t.lead.as_ref().map_or(at_span, |s| s.span());
                    return Err(self.err(
                        span,
                        &f("lead"),
                        "must be positive and no later than `at`",
                    ));
                }
                let spread = self.opt_duration(&t.spread, &f("spread"), 0)?;
                if spread > lead {
                    let span = t.spread.as_ref().map_or(at_span, |s| s.span());
                    return Err(self.err(
                        span,
                        &f("spread"),
                        "must be no longer than `lead`, so the two batches do not overlap",
                    ));
                }
                Arrivals::Boundary {
                    count: count(&t.count)?,
                    at,
                    lead,
                    spread,
                }
            }
            "replay" => {
                required(t.path.is_some(), "path")?;
                let p = t.path.as_ref().expect("required");
                let base = self.path.parent().unwrap_or(Path::new("."));
                let path = base.join(p.get_ref());
                traffic::check_trace_header(&path, &policy.key)?;
                Arrivals::Replay { path }
            }
            _ => unreachable!("kind checked above"),
        };
        Ok(SourceSpec {
            name,
            role,
            arrivals,
            start,
            stop,
            population,
        })
    }

    pub(super) fn opt_duration(
        &self,
        s: &Option<S<String>>,
        field: &str,
        default: Nanos,
    ) -> Result<Nanos> {
        s.as_ref()
            .map_or(Ok(default), |s| self.duration(s, field, false))
    }

    fn population(
        &self,
        t: &RawTraffic,
        kind: &str,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Population> {
        let max = traffic::MAX_GENERATED_IPS as u64;
        if kind == "nat" && (t.users.is_none() || t.ips.is_none()) {
            let missing = if t.users.is_none() { "users" } else { "ips" };
            return Err(self.err(
                t.kind.span(),
                &f(missing),
                format!("traffic kind `nat` requires `{missing}`"),
            ));
        }
        let clients = match &t.users {
            Some(u) => self.count(u, &f("users"), 1_000_000)? as u32,
            None => 1,
        };
        let fixed = |v: &Option<S<String>>| v.as_ref().map(|s| IdGen::Fixed(s.get_ref().clone()));
        if let (Some(_), Some(u)) = (&t.user, &t.users) {
            return Err(self.err(
                u.span(),
                &f("users"),
                "give either `user` (one fixed user) or `users` (a count), not both",
            ));
        }
        let user = fixed(&t.user).unwrap_or(IdGen::PerClient);
        let ip = match (&t.ip, &t.ips) {
            (Some(_), Some(n)) => {
                return Err(self.err(
                    n.span(),
                    &f("ips"),
                    "give either `ip` (one fixed address) or `ips` (a count), not both",
                ));
            }
            (Some(ip), None) => IdGen::Fixed(ip.get_ref().clone()),
            (None, Some(n)) => {
                let n = self.count(n, &f("ips"), max.min(clients as u64))?;
                IdGen::Pool(n as u32)
            }
            (None, None) => {
                if clients as u64 > max {
                    let span = t.users.as_ref().expect("clients > 1").span();
                    return Err(self.err(
                        span,
                        &f("users"),
                        format!("at most {max} clients get generated IPs; set `ips` or `ip`"),
                    ));
                }
                IdGen::PerClient
            }
        };
        Ok(Population {
            clients,
            ip,
            user,
            api_key: fixed(&t.api_key).unwrap_or(IdGen::PerClient),
            endpoint: t
                .endpoint
                .as_ref()
                .map_or_else(|| "/".to_string(), |e| e.get_ref().clone()),
        })
    }
}

/// The smallest round bucket that gives at most 1000 buckets over `duration`.
fn default_bucket(duration: Nanos) -> Nanos {
    const ROUND: [Nanos; 10] = [
        time::NANOS_PER_MILLI,
        10 * time::NANOS_PER_MILLI,
        100 * time::NANOS_PER_MILLI,
        time::NANOS_PER_SEC,
        10 * time::NANOS_PER_SEC,
        time::NANOS_PER_MIN,
        10 * time::NANOS_PER_MIN,
        time::NANOS_PER_HOUR,
        6 * time::NANOS_PER_HOUR,
        time::NANOS_PER_DAY,
    ];
    ROUND
        .into_iter()
        .find(|b| duration.div_ceil(*b) <= 1000)
        .unwrap_or(duration.div_ceil(1000))
}
