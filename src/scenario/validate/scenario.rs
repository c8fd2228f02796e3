//! From the raw file to a validated [`Scenario`], with an error naming file, line and field for
//! anything refused.

use super::ctx::{Ctx, Found};
use super::expect;
use super::traffic::{MAX_CLIENTS, MAX_REQUESTS_PER_SOURCE};
use crate::error::{Error, Result};
use crate::policy::{KeyField, KeySpec, Policy};
use crate::scenario::expect::Expectation;
use crate::scenario::goals::Goal;
use crate::scenario::metric_names::metric_names;
use crate::scenario::model::scenario::{Contender, Scenario, Shape, SweepSpec};
use crate::scenario::raw::{RawScenario, RawSweep, RawTraffic, S};
use crate::time::{self, DEFAULT_START, Nanos};
use crate::traffic::{Arrivals, SourceSpec, TrafficKind};
use std::collections::HashSet;

/// The sums [`Ctx::totals`] keeps over the sources so far.
#[derive(Default)]
struct Totals {
    work: f64,
    clients: u64,
    names: HashSet<String>,
    /// A sum went over its bound (reported once, at the source that crossed it).
    over: bool,
}

/// Most buckets a `timeseries.csv` may have per algorithm.
const MAX_BUCKETS: u64 = 1_000_000;

impl Ctx<'_> {
    /// The validated scenario, or every mistake found in it, in file order. A part that needs
    /// a refused one (the sources need the policy) is skipped, so nothing is refused twice.
    pub(crate) fn scenario(&self, raw: RawScenario) -> Result<Scenario> {
        let mut found = Found::default();
        let name = found.ok(self.name(&raw));
        let seed = found.ok(self.seed(&raw));
        let duration = found.ok(self.duration(&raw.duration, "duration", true));
        let policy = self.policy(&raw, &mut found);
        let intent = policy
            .as_ref()
            .and_then(|p| self.intent(&raw, p, &mut found));
        let algorithms = policy
            .as_ref()
            .and_then(|p| found.ok(self.algorithms(&raw, p)));
        let bucket = duration.and_then(|d| found.ok(self.bucket(&raw, d)));
        let traffic = match (&policy, duration) {
            (Some(p), Some(d)) => self.traffic(&raw, p, d, &mut found),
            // The sources that do not read the policy are still checked on their own.
            (None, Some(d)) => self.traffic_alone(&raw, d, &mut found),
            _ => None,
        };
        let start = self.start(
            &raw,
            traffic.as_ref().map(|(t, _)| t.as_slice()),
            &mut found,
        );
        let reactions = duration.and_then(|d| {
            found.all(raw.traffic.iter().enumerate(), |(i, t)| {
                self.reaction(t.get_ref().on_reject.as_ref(), i, d)
            })
        });
        let algorithms = match (algorithms, &policy, duration) {
            (Some(a), Some(p), Some(d)) => {
                let sources = traffic.as_ref().map(|(t, _)| t.as_slice());
                self.with_contenders(&raw, a, p, sources, d, &mut found)
            }
            _ => None,
        };
        let alerts = duration.and_then(|d| self.alerts(&raw.alert, d, &mut found));
        let replicates = found.ok(self.replicates(&raw));
        let (
            Some(name),
            Some(seed),
            Some(duration),
            Some(policy),
            Some(mut algorithms),
            Some(bucket),
            Some((traffic, origin)),
            Some(start),
            Some(reactions),
            Some(alerts),
            Some(intent),
        ) = (
            name, seed, duration, policy, algorithms, bucket, traffic, start, reactions, alerts,
            intent,
        )
        else {
            // Expectations name the scenario's contenders, sources and metrics: with a part
            // refused, only their grammar can be checked.
            self.expectation_syntax(raw.expect.as_ref(), &mut found);
            return Err(found.into_error(self.path));
        };
        starting_at(&mut algorithms, start);
        if found
            .ok(self.intent_sources(&raw, &intent, &traffic))
            .is_none()
        {
            self.expectation_syntax(raw.expect.as_ref(), &mut found);
            return Err(found.into_error(self.path));
        }
        let mut scenario = Scenario {
            name,
            description: description(&raw),
            introduction: leading_comment(self.text),
            path: self.path.to_path_buf(),
            seed,
            duration,
            start,
            policy,
            intent,
            algorithms,
            traffic,
            bucket,
            reactions: origin.iter().map(|&i| reactions[i]).collect(),
            expectations: Vec::new(),
            goals: Vec::new(),
            alerts,
            sweep: raw.sweep.as_ref().map(|t| self.sweep(t.get_ref())),
            replicates: replicates.unwrap_or_default(),
            backtest_model: None,
        };
        scenario.backtest_model = found.ok(self.backtest_model(&raw, &scenario)).flatten();
        // A replayed trace's costs are read with its records: each source is told which
        // contender cannot take them.
        let unweighed = unweighed(&scenario.algorithms);
        for source in &mut scenario.traffic {
            if let Arrivals::Replay { options, .. } = &mut source.arrivals {
                options.unweighed.clone_from(&unweighed);
            }
        }
        self.checked_against_itself(&raw, scenario, found)
    }

    /// The parts checked against the scenario itself (metric and source names), so last.
    fn checked_against_itself(
        &self,
        raw: &RawScenario,
        mut scenario: Scenario,
        mut found: Found,
    ) -> Result<Scenario> {
        let expectations = self.expectations(raw.expect.as_ref(), &scenario, &mut found);
        let goals = self.goals(raw, &scenario, &mut found);
        match (expectations, goals) {
            (Some(e), Some(g)) if found.is_empty() => {
                scenario.expectations = e;
                scenario.goals = g;
                Ok(scenario)
            }
            _ => Err(found.into_error(self.path)),
        }
    }

    /// `[backtest] model`: one of the scenario's contenders.
    fn backtest_model(&self, raw: &RawScenario, scenario: &Scenario) -> Result<Option<String>> {
        let Some(model) = raw
            .backtest
            .as_ref()
            .and_then(|b| b.get_ref().model.as_ref())
        else {
            return Ok(None);
        };
        let name = model.get_ref();
        match scenario.algorithms.iter().find(|c| c.name == *name) {
            Some(c) if matches!(c.shape, crate::scenario::Shape::Recorded(_)) => {
                return Err(self.err(
                    model.span(),
                    "backtest.model",
                    format!("`{name}` is production's own record: name a model of it"),
                ));
            }
            Some(_) => return Ok(Some(name.clone())),
            None => {}
        }
        let names: Vec<&str> = scenario
            .algorithms
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        Err(self.err(
            model.span(),
            "backtest.model",
            format!(
                "no contender is named `{name}` (the contenders: {})",
                names.join(", ")
            ),
        ))
    }

    /// The `[goals]`, checked against the scenario's metric names.
    fn goals(
        &self,
        raw: &RawScenario,
        scenario: &Scenario,
        found: &mut Found,
    ) -> Option<Vec<Goal>> {
        match &raw.goals {
            Some(table) => found.ok(crate::scenario::goals::resolve(
                table,
                &metric_names(scenario),
                scenario.duration,
            )
            .map_err(|(span, field, message)| self.err(span, &field, message))),
            None => Some(Vec::new()),
        }
    }

    fn name(&self, raw: &RawScenario) -> Result<String> {
        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.err(raw.name.span(), "name", "must not be empty"));
        }
        Ok(name)
    }

    fn seed(&self, raw: &RawScenario) -> Result<u64> {
        match &raw.seed {
            // TOML integers stop at i64::MAX; `--seed` takes any u64.
            Some(s) => Ok(self.whole(s, "seed", "a whole number", 0, i64::MAX)? as u64),
            None => Ok(0),
        }
    }

    /// `[output] bucket`, or a round default.
    fn bucket(&self, raw: &RawScenario, duration: Nanos) -> Result<Nanos> {
        let Some(b) = raw
            .output
            .as_ref()
            .and_then(|o| o.get_ref().bucket.as_ref())
        else {
            return Ok(default_bucket(duration));
        };
        let bucket = self.duration(b, "output.bucket", true)?;
        if duration.div_ceil(bucket) > MAX_BUCKETS {
            return Err(self.err(
                b.span(),
                "output.bucket",
                format!("gives more than {MAX_BUCKETS} buckets over the scenario's duration"),
            ));
        }
        Ok(bucket)
    }

    /// The `[sweep]` table as written, each string with where it was written.
    fn sweep(&self, t: &RawSweep) -> SweepSpec {
        let at = |s: &S<String>| (s.get_ref().clone(), self.location(Some(s.span())));
        SweepSpec {
            set: t.set.iter().map(at).collect(),
            prefer: t.prefer.as_ref().map(at),
            chart: t.chart.as_ref().map(at),
            expect: t.expect.iter().map(at).collect(),
        }
    }

    /// Every `[[traffic]]` source, then split by its trace's sources and roles: the sources and,
    /// for each, the index of the table it came from. `None` when a source was refused.
    fn traffic(
        &self,
        raw: &RawScenario,
        policy: &Policy,
        duration: Nanos,
        found: &mut Found,
    ) -> Option<(Vec<SourceSpec>, Vec<usize>)> {
        if raw.traffic.is_empty() {
            found.push(Error::Scenario {
                location: self.location(None),
                field: Some("traffic".into()),
                message: "the scenario has no [[traffic]] source".into(),
            });
            return None;
        }
        if raw.traffic.len() > u16::MAX as usize {
            found.push(self.err(raw.traffic[0].span(), "traffic", "more than 65535 sources"));
            return None;
        }
        let mut totals = Totals::default();
        let traffic = found.all(raw.traffic.iter().enumerate(), |(i, t)| {
            let spec = self.source(i, t.get_ref(), policy, duration)?;
            self.totals(i, t.get_ref(), &spec, &mut totals)?;
            Ok(spec)
        })?;
        // A replayed trace with `source`/`role` columns or `abusive` addresses becomes one
        // source per (source, role) it holds.
        found.ok(crate::traffic::split_sources(traffic))
    }

    /// With `[policy]` refused: the sources whose validation does not read it, checked on
    /// their own (their errors only; the scenario is refused anyway).
    fn traffic_alone(
        &self,
        raw: &RawScenario,
        duration: Nanos,
        found: &mut Found,
    ) -> Option<(Vec<SourceSpec>, Vec<usize>)> {
        let stand_in = Policy {
            limit: 1,
            window: time::NANOS_PER_SEC,
            burst: 1,
            key: KeySpec::new(vec![KeyField::Ip]).expect("non-empty"),
        };
        for (i, t) in raw.traffic.iter().enumerate() {
            let reads_policy = t
                .get_ref()
                .kind
                .get_ref()
                .parse::<TrafficKind>()
                .is_ok_and(|k| {
                    matches!(
                        k,
                        TrafficKind::Scraper
                            | TrafficKind::CredentialStuffing
                            | TrafficKind::Boundary
                            | TrafficKind::Replay
                    )
                });
            if !reads_policy {
                found.ok(self.source(i, t.get_ref(), &stand_in, duration));
            }
        }
        None
    }

    /// The guards for all sources together (each alone can be within bounds), and their names.
    /// Once the sums are over, later sources are not refused for them again.
    fn totals(&self, i: usize, t: &RawTraffic, spec: &SourceSpec, sum: &mut Totals) -> Result<()> {
        if !sum.names.insert(spec.name.clone()) {
            return Err(self.err(
                t.name.span(),
                &format!("traffic[{i}].name"),
                format!("another source is already named `{}`", spec.name),
            ));
        }
        if sum.over {
            return Ok(());
        }
        sum.work += spec.expected_work().unwrap_or(0.0);
        sum.clients += spec.population.clients as u64;
        let (work, clients) = (sum.work, sum.clients);
        sum.over = work > MAX_REQUESTS_PER_SOURCE || clients > MAX_CLIENTS;
        if work > MAX_REQUESTS_PER_SOURCE {
            return Err(self.err(
                t.rate.as_ref().map_or(t.kind.span(), |r| r.span()),
                &format!("traffic[{i}].rate"),
                format!(
                    "the sources up to this one would take about {work:.1e} requests or generator steps together (more than {MAX_REQUESTS_PER_SOURCE:.0e}): check the rates, the clients and the duration"
                ),
            ));
        }
        if clients > MAX_CLIENTS {
            return Err(self.err(
                t.users.as_ref().map_or(t.kind.span(), |u| u.span()),
                &format!("traffic[{i}].users"),
                format!(
                    "the sources up to this one have {clients} clients together (more than {MAX_CLIENTS}, each holding a key, an identity and limiter state)"
                ),
            ));
        }
        Ok(())
    }

    /// Every short-form algorithm weighs requests when a source's requests weigh more than 1.
    fn short_form_weighs(
        &self,
        raw: &RawScenario,
        algorithms: &[Contender],
        sources: Option<&[SourceSpec]>,
    ) -> Result<()> {
        let Some(costly) = sources.and_then(super::contender::costly_source) else {
            return Ok(());
        };
        for c in algorithms {
            let Some(kind) = c.kind().filter(|k| !k.weighs()) else {
                continue;
            };
            if let Some(list) = &raw.algorithms {
                let (i, span) = list
                    .get_ref()
                    .iter()
                    .enumerate()
                    .find(|(_, a)| a.get_ref().parse() == Ok(kind))
                    .map_or((0, list.span()), |(i, a)| (i, a.span()));
                return Err(self.err(
                    span,
                    &format!("algorithms[{i}]"),
                    super::contender::unweighed(kind, costly)
                        + ": drop it, or compare it in a [[contender]] rule with `unit = \"requests\"`",
                ));
            }
        }
        Ok(())
    }

    /// The short form's algorithms with `[deployment]`, then the `[[contender]]`s (with theirs).
    /// `sources` is `None` when a source was refused: rules are then not matched against them.
    fn with_contenders(
        &self,
        raw: &RawScenario,
        mut algorithms: Vec<Contender>,
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
        duration: Nanos,
        found: &mut Found,
    ) -> Option<Vec<Contender>> {
        found.ok(self.short_form_weighs(raw, &algorithms, sources))?;
        if let Some(d) = &raw.deployment {
            let deployed = algorithms
                .iter_mut()
                .try_for_each(|spec| self.deploy(spec, d, "deployment", duration));
            found.ok(deployed)?;
        }
        let short = algorithms.len();
        let contenders = self.contenders(&raw.contender, policy, sources, found)?;
        found.ok(self.identity_addresses(raw, sources?, &contenders))?;
        for (i, c) in contenders.into_iter().enumerate() {
            if algorithms.iter().any(|a| a.name == c.name) {
                let span = raw.contender[i].get_ref().name.span();
                found.push(self.err(
                    span,
                    &format!("contender[{i}].name"),
                    format!(
                        "`{}` is already the name of an algorithm in `algorithms`",
                        c.name
                    ),
                ));
                return None;
            }
            algorithms.push(c);
        }
        let deployed = found.all(raw.contender.iter().enumerate(), |(i, c)| {
            match &c.get_ref().deployment {
                Some(d) => {
                    self.deployed_contender(&mut algorithms[short + i], d, i, policy, duration)
                }
                None => Ok(()),
            }
        });
        deployed.map(|_| algorithms)
    }

    /// The instant virtual time 0 stands for: the first replayed trace's own time, else `start`.
    /// `traffic` is `None` when a source was refused (a trace's own time is then not read).
    fn start(
        &self,
        raw: &RawScenario,
        traffic: Option<&[SourceSpec]>,
        found: &mut Found,
    ) -> Option<Nanos> {
        let replays = raw
            .traffic
            .iter()
            .any(|t| t.get_ref().kind.get_ref().parse::<TrafficKind>() == Ok(TrafficKind::Replay));
        match (&raw.start, replays) {
            (Some(s), true) => {
                found.push(self.err(
                    s.span(),
                    "start",
                    "a replay starts at its trace's own time (the first record's, rounded down to the policy window): remove `start`",
                ));
                None
            }
            (Some(s), false) => {
                let text = s.get_ref().trim();
                let start = chrono::DateTime::parse_from_rfc3339(text)
                    .ok()
                    .and_then(|t| t.timestamp_nanos_opt())
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| {
                        self.err(
                            s.span(),
                            "start",
                            format!("`{text}` is not an RFC 3339 instant between 1970 and 2262 (e.g. \"2025-01-01T00:00:00Z\")"),
                        )
                    });
                found.ok(start)
            }
            (None, true) => {
                let replay = traffic?.iter().find_map(|s| match &s.arrivals {
                    crate::traffic::Arrivals::Replay { path, options } => Some((path, options)),
                    _ => None,
                });
                match replay {
                    Some((path, options)) => found.ok(crate::traffic::trace_start(path, options)
                        .map(|t| t.unwrap_or(DEFAULT_START))),
                    None => Some(DEFAULT_START),
                }
            }
            (None, false) => Some(DEFAULT_START),
        }
    }

    fn expectations(
        &self,
        list: Option<&S<Vec<S<String>>>>,
        scenario: &Scenario,
        found: &mut Found,
    ) -> Option<Vec<Expectation>> {
        let Some(list) = list else {
            return Some(Vec::new());
        };
        let shape = metric_names(scenario);
        found.all(list.get_ref().iter().enumerate(), |(i, text)| {
            expect::resolve(text.get_ref(), scenario, &shape)
                .map_err(|m| self.err(text.span(), &format!("expect[{i}]"), m))
        })
    }

    /// The grammar of every `expect` line, when the scenario they name could not be built.
    fn expectation_syntax(&self, list: Option<&S<Vec<S<String>>>>, found: &mut Found) {
        for (i, text) in list.iter().flat_map(|l| l.get_ref().iter().enumerate()) {
            if let Err(m) = crate::scenario::expect::parse(text.get_ref()) {
                found.push(self.err(text.span(), &format!("expect[{i}]"), m));
            }
        }
    }

    /// A fixed `ip` must be an address when a contender's rule keys by an identity function,
    /// which reads it as one (the policy's own identity function is checked per source).
    fn identity_addresses(
        &self,
        raw: &RawScenario,
        traffic: &[SourceSpec],
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
}

/// Every profile of `algorithms` (and of their rules) placed at the scenario's `start`.
fn starting_at(algorithms: &mut [Contender], start: Nanos) {
    for spec in algorithms {
        spec.start_profiles_at(start);
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

/// The trimmed `description` (empty without one).
fn description(raw: &RawScenario) -> String {
    raw.description
        .as_ref()
        .map(|d| d.get_ref().trim().to_string())
        .unwrap_or_default()
}

/// The first contender that cannot weigh a request: a limiter whose library counts requests, or
/// a rule of one not told to count requests (`unit = "requests"`).
fn unweighed(contenders: &[Contender]) -> Option<String> {
    let weighs = |c: &Contender| match &c.shape {
        Shape::Stack(stack) => stack
            .rules
            .iter()
            .all(|r| r.counts_requests() || r.limiter.kind().weighs()),
        _ => c.kind().is_none_or(|k| k.weighs()),
    };
    contenders
        .iter()
        .find(|c| !weighs(c))
        .map(|c| c.name.clone())
}
