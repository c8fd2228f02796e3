//! From the raw file to a validated [`Scenario`], with an error naming file, line and field for
//! anything refused.

use super::ctx::Ctx;
use super::expect;
use super::traffic::{MAX_CLIENTS, MAX_REQUESTS_PER_SOURCE};
use crate::error::{Error, Result};
use crate::scenario::expect::Expectation;
use crate::scenario::metric_names::metric_names;
use crate::scenario::model::scenario::{AlgorithmSpec, Scenario, SweepSpec};
use crate::scenario::raw::{RawScenario, S};
use crate::time::{self, DEFAULT_START, Nanos};
use std::collections::HashSet;

/// Most buckets a `timeseries.csv` may have per algorithm.
const MAX_BUCKETS: u64 = 1_000_000;

impl Ctx<'_> {
    pub(crate) fn scenario(&self, raw: RawScenario) -> Result<Scenario> {
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
                let dep =
                    self.deployment(d, "deployment", spec.kind, spec.profile.is_some(), duration)?;
                spec.deployment = Some(Box::new(dep));
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
            spec.profile = spec.profile.map(|p| p.starting_at(start));
            if let Some(stack) = &mut spec.stack {
                for rule in &mut stack.rules {
                    rule.profile = rule.profile.map(|p| p.starting_at(start));
                }
            }
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
                let at = |s: &S<String>| (s.get_ref().clone(), self.location(Some(s.span())));
                SweepSpec {
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
            scenario.goals =
                crate::scenario::goals::resolve(table, &metric_names(&scenario), duration)
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
        contenders: &[AlgorithmSpec],
    ) -> Result<()> {
        let Some(rule) = contenders
            .iter()
            .filter_map(|c| c.stack.as_deref())
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
