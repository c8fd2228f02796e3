//! Observing a run as its operators would: the metrics a deployment of each contender exposes
//! (`--metrics-out`, OpenMetrics), the scenario's alert rules replayed on the virtual timeline,
//! and the dashboard figures of the report (docs/observability.md).
//!
//! An [`Observer`] is a decision sink, attached only when the scenario has `[[alert]]` rules or
//! `--metrics-out` is given: runs without them do no extra work per decision.
//!
//! Labels come from the request's identity. The run then keeps each key's identity fields
//! ([`crate::traffic::Keeps::Fields`]): fields the policy keys on are exact; for the others
//! (e.g. the endpoint when the policy keys on IP only) a key carries those of its first
//! request. `user` is the requesting client's identity; a request is signed in when its key's
//! identity has a user.

mod alerts;
pub(crate) mod openmetrics;

pub use alerts::{Episode, Evaluator};
pub use openmetrics::Exporter;

use crate::algorithms::{Decision, KeyId, Outcome};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::{Contender, GroupBy, Scenario, alerts::FIGURES};
use crate::sim::{DecisionSink, Detail, NoSink, RunOptions, RunReport};
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId, KeySpace, Role};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// The rule a decision is attributed to: today a contender has one rule, the policy.
pub const RULE: &str = "policy";
/// Keys listed in the dashboard's "top keys by refusals".
pub const TOP_KEYS: usize = 10;
/// Upper bounds (ns) of the retry-interval distribution's classes; the last class is open.
pub const RETRY_CLASSES: [Nanos; 6] = [
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    60_000_000_000,
    600_000_000_000,
];

/// Watches one contender's decisions.
pub struct Observer {
    contender: String,
    exporter: Exporter,
    keep_metrics: bool,
    evaluators: Vec<Evaluator>,
    first_request: Vec<Option<Nanos>>,
    refusals: FxHashMap<KeyId, (Box<str>, u64)>,
    last_refusal: FxHashMap<ClientId, Nanos>,
    retry_intervals: [u64; RETRY_CLASSES.len() + 1],
    last_time: Nanos,
}

/// Whether `scenario` run with or without `--metrics-out` needs observers.
pub fn wanted(scenario: &Scenario, metrics: bool) -> bool {
    metrics || !scenario.alerts.is_empty()
}

impl Observer {
    /// With `metrics`, the exposed series are kept for `--metrics-out`; the refused share over
    /// time is measured either way.
    pub fn new(scenario: &Scenario, contender: &str, window: Nanos, metrics: bool) -> Self {
        let sources = scenario.traffic.len();
        Observer {
            contender: contender.to_string(),
            exporter: Exporter::new(contender.to_string(), RULE, window),
            keep_metrics: metrics,
            evaluators: scenario
                .alerts
                .iter()
                .map(|a| Evaluator::new(a.clone(), sources))
                .collect(),
            first_request: vec![None; sources],
            refusals: FxHashMap::default(),
            last_refusal: FxHashMap::default(),
            retry_intervals: [0; RETRY_CLASSES.len() + 1],
            last_time: 0,
        }
    }

    /// Evaluates the alert rules to the end of the run (`duration`, or the last decision if
    /// later), which it returns; evaluating again changes nothing.
    fn evaluate_to_end(&mut self, scenario: &Scenario) -> Nanos {
        let end = scenario.duration.max(self.last_time);
        for e in &mut self.evaluators {
            e.finish(end);
        }
        end
    }

    fn alert_results(&self, scenario: &Scenario) -> Vec<AlertResult> {
        let first = &self.first_request;
        (self.evaluators.iter())
            .map(|e| AlertResult::new(e, &self.contender, scenario, first))
            .collect()
    }

    /// Evaluates and scrapes to the end of the run (`duration`, or the last decision if later).
    pub fn finish(mut self, scenario: &Scenario) -> Observation {
        let end = self.evaluate_to_end(scenario);
        self.exporter.finish(end);
        let alerts = self.alert_results(scenario);
        let mut top: Vec<(String, u64)> = self
            .refusals
            .into_values()
            .map(|(k, n)| (k.into_string(), n))
            .collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        top.truncate(TOP_KEYS);
        Observation {
            contender: self.contender,
            alerts,
            top_refused_keys: top,
            retry_intervals: self.retry_intervals,
            refused_share: self.exporter.refused_share(),
            exporter: self.keep_metrics.then_some(self.exporter),
        }
    }
}

impl DecisionSink for Observer {
    /// The alert figures `expect` lines read (when the scenario has rules).
    fn row_figures(&mut self, scenario: &Scenario) -> Option<BTreeMap<String, Option<f64>>> {
        if self.evaluators.is_empty() {
            return None;
        }
        self.evaluate_to_end(scenario);
        let results = self.alert_results(scenario);
        Some(results.iter().flat_map(|a| a.figures()).collect())
    }

    fn record(
        &mut self,
        arrival: &Arrival,
        decision: &Decision,
        detail: &Detail<'_>,
        keys: &KeySpace,
    ) -> Result<()> {
        let t = arrival.time;
        self.last_time = self.last_time.max(t);
        let refused = matches!(decision.outcome, Outcome::Reject { .. });
        self.first_request[arrival.source as usize].get_or_insert(t);
        let fields = keys.fields(arrival.key);
        let field = |i: usize| fields.map_or("", |f| &*f[i]);
        // The short form's one rule is the policy; a contender names the rule that decided.
        let rule = match (detail.rule, detail.unlimited) {
            ("", true) => "none",
            ("", false) => RULE,
            (rule, _) => rule,
        };
        self.exporter.record(
            t,
            arrival.key,
            rule,
            field(3),
            !field(1).is_empty(),
            decision,
        );
        for e in &mut self.evaluators {
            let label = match e.spec.by {
                GroupBy::Ip => field(0),
                GroupBy::User => keys.client_name(arrival.client),
                GroupBy::Key => keys.name(arrival.key),
                GroupBy::Endpoint => field(3),
                GroupBy::Contender | GroupBy::None => "",
            };
            e.record(t, label, arrival.source, refused);
        }
        if arrival.attempt > 0
            && let Some(&at) = self.last_refusal.get(&arrival.client)
        {
            let wait = t - at;
            let class = RETRY_CLASSES.iter().position(|&c| wait <= c);
            self.retry_intervals[class.unwrap_or(RETRY_CLASSES.len())] += 1;
        }
        if refused {
            self.last_refusal.insert(arrival.client, t);
            self.refusals
                .entry(arrival.key)
                .or_insert_with(|| (keys.name(arrival.key).into(), 0))
                .1 += 1;
        }
        Ok(())
    }

    fn wants_identities(&self) -> bool {
        true
    }
}

/// What an observer saw of one contender.
#[derive(Debug)]
pub struct Observation {
    /// The observed contender's name (its row's name in the report).
    pub contender: String,
    /// One per `[[alert]]` rule of the scenario, in its order (empty without rules).
    pub alerts: Vec<AlertResult>,
    /// Keys by refusals, most first (ties by name), at most [`TOP_KEYS`].
    pub top_refused_keys: Vec<(String, u64)>,
    /// Retries by the time since the client's previous refusal, in [`RETRY_CLASSES`].
    pub retry_intervals: [u64; RETRY_CLASSES.len() + 1],
    /// `(time, refused share of the requests decided in the 15 s before)`, per scrape with
    /// requests.
    pub refused_share: Vec<(Nanos, f64)>,
    /// The exposed metrics, kept for `--metrics-out`.
    pub exporter: Option<Exporter>,
}

/// The names of the retry-interval classes, for tables and charts.
pub fn retry_class_names() -> Vec<String> {
    let secs = |ns: Nanos| {
        let s = format!("{:.3}", ns as f64 / 1e9);
        format!("{} s", s.trim_end_matches('0').trim_end_matches('.'))
    };
    let n = RETRY_CLASSES.len();
    (0..=n)
        .map(|i| match i {
            0 => format!("≤ {}", secs(RETRY_CLASSES[0])),
            i if i == n => format!("> {}", secs(RETRY_CLASSES[n - 1])),
            i => format!(
                "{} – {}",
                secs(RETRY_CLASSES[i - 1]),
                secs(RETRY_CLASSES[i])
            ),
        })
        .collect()
}

/// One rule's outcome for one contender (`summary.json`'s `alerts` section).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AlertResult {
    /// The name of the contender whose decisions the rule watched.
    pub contender: String,
    /// The rule's `name` in its `[[alert]]` table.
    pub alert: String,
    /// Distinct alerts (firings): many is an alert storm.
    pub alerts: u64,
    /// When the first alert fired (virtual ns); `None` if none did.
    pub first_fired_ns: Option<Nanos>,
    /// Alerts still firing at the end of the run (never resolved).
    pub firing_at_end: u64,
    /// The first episodes, in firing order (at most [`EPISODES_KEPT`]).
    pub episodes: Vec<Episode>,
    /// Per abusive source: time from its first request to the first alert about it.
    pub detection: Vec<Detection>,
}

/// Episodes kept per rule in the summary (the count is always complete).
pub const EPISODES_KEPT: usize = 20;

/// How long one rule took to alert about one abusive traffic source.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Detection {
    /// The traffic source's `name`.
    pub source: String,
    /// `None`: never detected.
    pub time_to_detect_ns: Option<Nanos>,
}

impl AlertResult {
    fn new(
        e: &Evaluator,
        contender: &str,
        scenario: &Scenario,
        first: &[Option<Nanos>],
    ) -> AlertResult {
        let detection = scenario
            .traffic
            .iter()
            .enumerate()
            .filter(|(_, s)| s.role == Role::Abusive)
            .map(|(i, s)| Detection {
                source: s.name.clone(),
                time_to_detect_ns: match (first[i], e.detected[i]) {
                    (Some(f), Some(d)) => Some(d.saturating_sub(f)),
                    _ => None,
                },
            })
            .collect();
        AlertResult {
            contender: contender.to_string(),
            alert: e.spec.name.clone(),
            alerts: e.episodes.len() as u64,
            first_fired_ns: e.episodes.first().map(|x| x.fired_ns),
            firing_at_end: e
                .episodes
                .iter()
                .filter(|x| x.resolved_ns.is_none())
                .count() as u64,
            episodes: e.episodes.iter().take(EPISODES_KEPT).cloned().collect(),
            detection,
        }
    }

    /// The figures `expect` lines read, keyed `<rule>_<figure>` (see `scenario::alerts`).
    fn figures(&self) -> [(String, Option<f64>); FIGURES.len()] {
        let detected: Vec<Nanos> = self
            .detection
            .iter()
            .filter_map(|d| d.time_to_detect_ns)
            .collect();
        let values = [
            Some(self.alerts as f64),
            self.first_fired_ns.map(|t| t as f64),
            Some(self.firing_at_end as f64),
            Some(detected.len() as f64),
            Some((self.detection.len() - detected.len()) as f64),
            detected.iter().max().map(|&t| t as f64),
        ];
        let mut i = 0;
        values.map(|v| {
            let name = format!("{}_{}", self.alert, FIGURES[i]);
            i += 1;
            (name, v)
        })
    }
}

/// The observers' OpenMetrics text, every contender in the run's order.
pub fn openmetrics(observations: &[Observation]) -> Vec<u8> {
    let exporters: Vec<&Exporter> = observations
        .iter()
        .filter_map(|o| o.exporter.as_ref())
        .collect();
    openmetrics::text(&exporters)
}

/// The terminal's lines about the alert rules (empty without rules).
pub fn alert_lines(observations: &[Observation]) -> String {
    let mut out = String::new();
    for o in observations {
        for a in &o.alerts {
            if out.is_empty() {
                out.push_str("\nalerts (rule: distinct alerts, first fired, time to detect)\n");
            }
            let secs = |ns: Nanos| format!("{:.1}s", ns as f64 / 1e9);
            let first = a.first_fired_ns.map_or("never".into(), secs);
            let detect: Vec<String> = a
                .detection
                .iter()
                .map(|d| {
                    let t = d.time_to_detect_ns.map_or("never".into(), secs);
                    format!("{} {t}", d.source)
                })
                .collect();
            out.push_str(&format!(
                "  {:<24} {:<18} {:>6} alerts, first {first}; detect: {}\n",
                o.contender,
                a.alert,
                a.alerts,
                if detect.is_empty() {
                    "-".into()
                } else {
                    detect.join(", ")
                }
            ));
        }
    }
    out
}

/// A run watched as its operators would watch it: the report (each row with its observation's
/// figures), the observations and the other sinks (the decision log's parts), in the
/// scenario's order.
pub struct Observed<P> {
    /// The run's report; with alert rules, each row carries its contender's alert figures.
    pub report: RunReport,
    /// One per observed contender; empty when nothing asked for observers.
    pub observations: Vec<Observation>,
    /// The sinks `part` gave, in the contenders' order (none where it gave `None`).
    pub parts: Vec<P>,
}

/// Runs the contenders of `scenario` that `options` keeps, each with an [`Observer`] when the
/// scenario has alert rules or `metrics` (`--metrics-out`) asks for the exposed series, and
/// with the sink `part` gives it: the one way a run is observed.
pub fn run<P: DecisionSink + Send>(
    scenario: &Scenario,
    options: RunOptions<'_>,
    metrics: bool,
    part: impl Fn(&Contender) -> Result<Option<P>> + Sync,
) -> Result<Observed<P>> {
    let observe = wanted(scenario, metrics);
    let make_sink = |_, c: &Contender| {
        let part = part(c)?;
        let observer =
            observe.then(|| Observer::new(scenario, &c.name, c.params().window, metrics));
        Ok((part.is_some() || observer.is_some()).then_some((part, observer)))
    };
    let (report, sinks) = crate::sim::run_all(scenario, options.with_sinks(make_sink))?;
    let mut parts = Vec::new();
    let mut observations = Vec::new();
    for (part, observer) in sinks.into_iter().flatten() {
        parts.extend(part);
        if let Some(o) = observer {
            observations.push(o.finish(scenario));
        }
    }
    Ok(Observed {
        report,
        observations,
        parts,
    })
}

/// The rows of a run of the contenders `options` keeps, with the alert figures in them (for
/// `rlsim check`, sweeps and replicates, which need only the deterministic figures).
pub fn figures(scenario: &Scenario, options: RunOptions<'_>) -> Result<Vec<AlgorithmReport>> {
    let observed = run(scenario, options, false, |_| Ok(None::<NoSink>))?;
    Ok(observed.report.algorithms)
}
