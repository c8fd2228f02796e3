//! From the raw file to a validated [`Scenario`], with an error naming file, line and field for
//! anything refused.

use super::expect::{self, Expectation};
use super::metric_names;
use super::raw::{RawOverride, RawScenario, S};
use super::traffic::{MAX_CLIENTS, MAX_REQUESTS_PER_SOURCE};
use super::{Contender, Scenario, Shape, Single};
use crate::algorithms::profiles::ParamValue;
use crate::algorithms::{AlgorithmKind, Params, ProfileKind};
use crate::error::{Error, Location, Result};
use crate::policy::{KeyField, KeySpec, Policy};
use crate::time::{self, DEFAULT_START, Nanos, UnitError};
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

/// Most buckets a `timeseries.csv` may have per algorithm.
const MAX_BUCKETS: u64 = 1_000_000;

pub struct Ctx<'a> {
    /// The text validated: the file with any `--set` overrides spliced in.
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
    /// The file as written and the splices, to name positions as the user wrote them.
    original: &'a str,
    patches: Option<&'a super::overrides::Patched>,
}

impl<'a> Ctx<'a> {
    pub fn new(text: &'a str, path: &'a Path) -> Self {
        Ctx {
            text,
            path,
            original: text,
            patches: None,
        }
    }

    /// Validates `patched` (the file `original` with overrides spliced in).
    pub fn patched(
        original: &'a str,
        patched: &'a super::overrides::Patched,
        path: &'a Path,
    ) -> Self {
        Ctx {
            text: &patched.text,
            path,
            original,
            patches: Some(patched),
        }
    }

    fn location(&self, span: Option<Range<usize>>) -> Location {
        let mut start = span.as_ref().map(|s| s.start);
        if let (Some(patched), Some(pos)) = (self.patches, start) {
            match patched.origin(pos) {
                Ok(pos) => start = Some(pos),
                // Inside an override: the override is the place to fix.
                Err(label) => {
                    return Location {
                        path: label.into(),
                        line: None,
                        column: None,
                    };
                }
            }
        }
        let (line, column) = match start {
            Some(start) => {
                let before = &self.original[..start.min(self.original.len())];
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
            let message = hint(&path, inner.message());
            Error::Scenario {
                location: self.location(inner.span()),
                field: (path != ".").then_some(path),
                message,
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
        // The per-source guards, for all sources together: each alone can be within bounds.
        let (mut work, mut clients) = (0.0, 0u64);
        for (i, t) in raw.traffic.iter().enumerate() {
            let spec = self.source(i, t.get_ref(), &policy, duration)?;
            work += spec.expected_work().unwrap_or(0.0);
            clients += spec.population.clients as u64;
            let raw_t = t.get_ref();
            if work > MAX_REQUESTS_PER_SOURCE {
                return Err(self.err(
                    raw_t.rate.as_ref().map_or(raw_t.kind.span(), |r| r.span()),
                    &format!("traffic[{i}].rate"),
                    format!(
                        "the sources up to this one would take about {work:.1e} requests or generator steps together (more than {MAX_REQUESTS_PER_SOURCE:.0e}): check the rates, the clients and the duration"
                    ),
                ));
            }
            if clients > MAX_CLIENTS {
                return Err(self.err(
                    raw_t.users.as_ref().map_or(raw_t.kind.span(), |u| u.span()),
                    &format!("traffic[{i}].users"),
                    format!(
                        "the sources up to this one have {clients} clients together (more than {MAX_CLIENTS}, each holding a key, an identity and limiter state)"
                    ),
                ));
            }
            if !names.insert(spec.name.clone()) {
                return Err(self.err(
                    t.get_ref().name.span(),
                    &format!("traffic[{i}].name"),
                    format!("another source is already named `{}`", spec.name),
                ));
            }
            traffic.push(spec);
        }
        // A replayed trace with `source`/`role` columns or `abusive` addresses becomes one
        // source per (source, role) it holds.
        let (traffic, origin) = crate::traffic::split_sources(traffic)?;
        let start = self.start(&raw, &traffic)?;
        let reactions = raw
            .traffic
            .iter()
            .enumerate()
            .map(|(i, t)| self.reaction(t.get_ref().on_reject.as_ref(), i, duration))
            .collect::<Result<Vec<_>>>()?;
        let reactions = origin.iter().map(|&i| reactions[i]).collect();
        let mut algorithms = algorithms;
        if let Some(d) = &raw.deployment {
            for spec in &mut algorithms {
                let dep = self.deployment(
                    d,
                    "deployment",
                    spec.kind,
                    spec.profile().is_some(),
                    duration,
                )?;
                spec.deploy(dep, "deployment");
            }
        }
        let short = algorithms.len();
        let contenders = self.contenders(&raw.contender, &policy, &traffic)?;
        self.identity_addresses(&raw, &traffic, &contenders)?;
        for (i, c) in contenders.into_iter().enumerate() {
            if algorithms.iter().any(|a| a.name == c.name) {
                let span = raw.contender[i].get_ref().name.span();
                return Err(self.err(
                    span,
                    &format!("contender[{i}].name"),
                    format!(
                        "`{}` is already the name of an algorithm in `algorithms`",
                        c.name
                    ),
                ));
            }
            algorithms.push(c);
        }
        for (i, c) in raw.contender.iter().enumerate() {
            if let Some(d) = &c.get_ref().deployment {
                self.deployed_contender(&mut algorithms[short + i], d, i, &policy, duration)?;
            }
        }
        for spec in &mut algorithms {
            spec.start_profiles_at(start);
        }
        let mut scenario = Scenario {
            name,
            description: raw
                .description
                .map(|d| d.into_inner().trim().to_string())
                .unwrap_or_default(),
            introduction: leading_comment(self.text),
            path: self.path.to_path_buf(),
            seed,
            duration,
            start,
            policy,
            algorithms,
            traffic,
            bucket,
            reactions,
            expectations: Vec::new(),
            goals: Vec::new(),
            alerts: Vec::new(),
            sweep: raw.sweep.as_ref().map(|t| {
                let t = t.get_ref();
                let at = |s: &super::raw::S<String>| {
                    (s.get_ref().clone(), self.location(Some(s.span())))
                };
                super::SweepSpec {
                    set: t.set.iter().map(at).collect(),
                    prefer: t.prefer.as_ref().map(at),
                    chart: t.chart.as_ref().map(at),
                    expect: t.expect.iter().map(at).collect(),
                }
            }),
        };
        scenario.alerts = self.alerts(&raw.alert, duration)?;
        // Metric and source names are checked against the scenario itself, so this comes last.
        scenario.expectations = self.expectations(raw.expect.as_ref(), &scenario)?;
        if let Some(table) = &raw.goals {
            scenario.goals = super::goals::resolve(table, &metric_names(&scenario), duration)
                .map_err(|(span, field, message)| self.err(span, &field, message))?;
        }
        Ok(scenario)
    }

    /// The instant virtual time 0 stands for: the first replayed trace's own time, else `start`.
    fn start(&self, raw: &RawScenario, traffic: &[crate::traffic::SourceSpec]) -> Result<Nanos> {
        let replay = traffic.iter().find_map(|s| match &s.arrivals {
            crate::traffic::Arrivals::Replay { path, options } => Some((path, options)),
            _ => None,
        });
        match (&raw.start, replay) {
            (Some(s), Some(_)) => Err(self.err(
                s.span(),
                "start",
                "a replay starts at its trace's own time (the first record's, rounded down to the policy window): remove `start`",
            )),
            (Some(s), None) => {
                let text = s.get_ref().trim();
                chrono::DateTime::parse_from_rfc3339(text)
                    .ok()
                    .and_then(|t| t.timestamp_nanos_opt())
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| {
                        self.err(
                            s.span(),
                            "start",
                            format!("`{text}` is not an RFC 3339 instant between 1970 and 2262 (e.g. \"2025-01-01T00:00:00Z\")"),
                        )
                    })
            }
            (None, Some((path, options))) => {
                Ok(crate::traffic::trace_start(path, options)?.unwrap_or(DEFAULT_START))
            }
            (None, None) => Ok(DEFAULT_START),
        }
    }

    fn expectations(
        &self,
        list: Option<&S<Vec<S<String>>>>,
        scenario: &Scenario,
    ) -> Result<Vec<Expectation>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        let shape = metric_names(scenario);
        list.get_ref()
            .iter()
            .enumerate()
            .map(|(i, text)| {
                expect::resolve(text.get_ref(), scenario, &shape)
                    .map_err(|m| self.err(text.span(), &format!("expect[{i}]"), m))
            })
            .collect()
    }

    /// A fixed `ip` must be an address when a contender's rule keys by an identity function,
    /// which reads it as one (the policy's own identity function is checked per source).
    fn identity_addresses(
        &self,
        raw: &RawScenario,
        traffic: &[crate::traffic::SourceSpec],
        contenders: &[Contender],
    ) -> Result<()> {
        let Some(rule) = contenders
            .iter()
            .filter_map(|c| c.stack())
            .flat_map(|s| &s.rules)
            .find(|r| r.key.identity_fn().is_some())
        else {
            return Ok(());
        };
        for (i, (t, spec)) in raw.traffic.iter().zip(traffic).enumerate() {
            if let (Some(ip), crate::traffic::IdGen::Fixed(text)) =
                (&t.get_ref().ip, &spec.population.ip)
                && text.parse::<std::net::IpAddr>().is_err()
            {
                return Err(self.err(
                    ip.span(),
                    &format!("traffic[{i}].ip"),
                    format!(
                        "`{text}` is not an IP address, which rule `{}` needs: it keys by an identity function",
                        rule.name
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn duration(&self, s: &S<String>, field: &str, positive: bool) -> Result<Nanos> {
        let parsed = if positive {
            time::parse_positive_duration(s.get_ref())
        } else {
            time::parse_duration(s.get_ref())
        };
        parsed.map_err(|e| self.unit_err(s.span(), field, e))
    }

    pub(super) fn unit_err(&self, span: Range<usize>, field: &str, e: UnitError) -> Error {
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
            Some(k) => self.key_spec(k, "policy.key")?,
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

    fn algorithms(&self, raw: &RawScenario, policy: &Policy) -> Result<Vec<Contender>> {
        let kinds: Vec<AlgorithmKind> = match &raw.algorithms {
            // With contenders, the short form runs only the algorithms it lists.
            None if !raw.contender.is_empty() => Vec::new(),
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
        let mut specs: Vec<Contender> = kinds
            .iter()
            .map(|&kind| Contender::short(kind, base))
            .collect();
        for (name, over) in &raw.algorithm {
            let field = format!("algorithm.{name}");
            let kind: AlgorithmKind = name
                .parse()
                .map_err(|m: String| self.err(over.span(), &field, m))?;
            if let AlgorithmKind::Profile(p) = kind {
                return Err(self.err(
                    over.span(),
                    &field,
                    format!("`{p}` is a profile: give its own parameters in `[profile.{p}]`"),
                ));
            }
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
        self.profiles(raw, &mut specs)?;
        for spec in specs.iter().filter(|s| s.profile().is_none()) {
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

    /// Configures every profile of `specs` from its `[profile.NAME]` table (or the policy alone),
    /// pointing any error at the parameter's line.
    fn profiles(&self, raw: &RawScenario, specs: &mut [Contender]) -> Result<()> {
        for (name, table) in &raw.profile {
            let field = format!("profile.{name}");
            let kind: AlgorithmKind = name
                .parse()
                .map_err(|m: String| self.err(table.span(), &field, m))?;
            if !matches!(kind, AlgorithmKind::Profile(_)) {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`{kind}` is an algorithm, not a profile: override it in `[algorithm.{kind}]`"),
                ));
            }
            if !specs.iter().any(|s| s.kind == kind) {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`{kind}` is not in `algorithms`"),
                ));
            }
            // A former name (ProfileKind::ALIASES) and the name are the same table.
            if let Some((other, _)) = raw
                .profile
                .iter()
                .take_while(|(n, _)| *n != name)
                .find(|(n, _)| n.parse::<AlgorithmKind>() == Ok(kind))
            {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`[profile.{other}]` already configures `{kind}`"),
                ));
            }
        }
        for spec in specs.iter_mut() {
            let AlgorithmKind::Profile(kind) = spec.kind else {
                continue;
            };
            // The table as the scenario named it: the profile's name or a former one.
            let (written, table) = match raw
                .profile
                .iter()
                .find(|(n, _)| ProfileKind::parse(n) == Some(kind))
            {
                Some((n, t)) => (n.as_str(), Some(t)),
                None => (kind.name(), None),
            };
            let given: Vec<(String, ParamValue)> = table
                .map(|t| {
                    t.get_ref()
                        .iter()
                        .map(|(k, v)| (k.clone(), param_value(v.get_ref())))
                        .collect()
                })
                .unwrap_or_default();
            let profile = kind.configure(spec.params, &given).map_err(|e| {
                let param = e
                    .param
                    .as_deref()
                    .and_then(|p| table?.get_ref().get_key_value(p));
                match (param, table) {
                    (Some((p, v)), _) => {
                        self.err(v.span(), &format!("profile.{written}.{p}"), e.reason)
                    }
                    (None, Some(t)) => self.err(t.span(), &format!("profile.{written}"), e.reason),
                    (None, None) => self.err(
                        raw.policy.span(),
                        "policy",
                        format!("profile `{kind}`: {}", e.reason),
                    ),
                }
            })?;
            spec.shape = Shape::Single(Single::Profile(profile));
        }
        Ok(())
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

/// A TOML value as a profile parameter.
fn param_value(v: &toml::Value) -> ParamValue {
    match v {
        toml::Value::Integer(i) => ParamValue::Int(*i),
        toml::Value::String(s) => ParamValue::Str(s.clone()),
        toml::Value::Boolean(b) => ParamValue::Bool(*b),
        toml::Value::Float(f) => ParamValue::Float(*f),
        toml::Value::Datetime(_) => ParamValue::Other("date"),
        toml::Value::Array(_) => ParamValue::Other("array"),
        toml::Value::Table(_) => ParamValue::Other("table"),
    }
}

/// The comment block a file opens with: its lines up to the first that is not a comment, with
/// the `#` and one following space removed.
fn leading_comment(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            break;
        };
        out.push_str(comment.strip_prefix(' ').unwrap_or(comment).trim_end());
        out.push('\n');
    }
    out.trim().to_string()
}

/// Fields whose values are rates (`"50/min"`) and durations (`"900s"`), by their last name.
const RATE_FIELDS: &[&str] = &[
    "rate",
    "rate_to",
    "amplitude",
    "peak",
    "ramp_to",
    "mmpp_rates",
];
const DURATION_FIELDS: &[&str] = &[
    "at",
    "base",
    "bucket",
    "cap",
    "clock_offset",
    "decay",
    "duration",
    "every",
    "for",
    "lead",
    "max_gap",
    "mmpp_stay",
    "off",
    "offset",
    "on",
    "period",
    "phase",
    "rise",
    "rtt",
    "sort_window",
    "spike_at",
    "spread",
    "start",
    "stop",
    "sync_every",
    "window",
];

/// serde's message with what to write instead: the closest known field for an unknown one,
/// and the unit a bare number lacks (`rate = 50`, `window = 900`).
fn hint(path: &str, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((name, expected)) = rest.split_once('`')
    {
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        if let Some(close) = crate::suggest::closest(name, known.iter().copied()) {
            return format!("unknown field `{name}`: did you mean `{close}`?");
        }
        return message.to_string();
    }
    let number = ["invalid type: integer `", "invalid type: floating point `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split_once('`'))
        .filter(|(_, tail)| tail.ends_with("expected a string"))
        .map(|(n, _)| n);
    let Some(n) = number else {
        return message.to_string();
    };
    // `traffic[0].mmpp_stay[1]` → `mmpp_stay`.
    let field = path.rsplit('.').next().unwrap_or(path);
    let field = field.split('[').next().unwrap_or(field);
    if RATE_FIELDS.contains(&field) {
        format!("{message}: a rate is a string with its unit, like `\"{n}/min\"` or `\"{n}/s\"`")
    } else if DURATION_FIELDS.contains(&field) {
        format!("{message}: a duration is a string with its unit, like `\"{n}s\"` or `\"{n}ms\"`")
    } else {
        message.to_string()
    }
}
