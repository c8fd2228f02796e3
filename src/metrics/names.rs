//! Metric names: which figures of a report an expectation or a goal may name, by scope.
//!
//! This is the one seam between scenario validation and the report's shape: validation asks
//! [`metric_names`] and never builds or flattens a report itself. The names follow the rules of
//! `check::metric::Flat` (top-level numbers by name, `roles.*` by leaf, other groups as
//! `<group>_<leaf>`, per-source numbers by name, role totals: the counts and their `_share`s);
//! a test in `check::metric` holds the two to the same names.

use super::{AlgorithmReport, Recorder};
use crate::scenario::Scenario;
use crate::traffic::{KeySpace, Role};
use serde_json::Value;

/// Where a metric is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The algorithm's own figures.
    Algorithm,
    /// The totals of every source of a role.
    Role(Role),
    /// One source, by name.
    Source(String),
}

/// The metric names every report of a scenario offers, sorted, per scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricNames {
    pub algorithm: Vec<String>,
    pub role: Vec<String>,
    pub source: Vec<String>,
}

impl MetricNames {
    /// The names `scope` offers (the same for every source and every role).
    pub fn of(&self, scope: &Scope) -> &[String] {
        match scope {
            Scope::Algorithm => &self.algorithm,
            Scope::Role(_) => &self.role,
            Scope::Source(_) => &self.source,
        }
    }

    /// The names of `report`'s figures (it must have at least one source for the per-source and
    /// per-role names).
    pub fn of_report(report: &AlgorithmReport) -> MetricNames {
        let numeric = |v: &Value| v.is_number() || v.is_null();
        let mut algorithm: Vec<String> = super::flatten(report)
            .into_iter()
            .filter(|(_, v)| numeric(v))
            .map(|(name, _)| name)
            .collect();
        algorithm.sort();
        let (mut source, mut counts) = (Vec::new(), Vec::new());
        if let Some(first) = report.sources.first() {
            let value = serde_json::to_value(first).expect("plain data serialises");
            for (name, v) in value.as_object().into_iter().flatten() {
                if numeric(v) {
                    source.push(name.clone());
                }
                if v.is_u64() || v.is_i64() {
                    counts.push(name.clone());
                }
            }
        }
        source.sort();
        // A role total sums the counts; each `<count>_share` is recomputed from the sums.
        let shares = source.iter().filter(|n| {
            n.strip_suffix("_share")
                .is_some_and(|c| counts.iter().any(|k| k == c))
        });
        let mut role: Vec<String> = counts.iter().chain(shares).cloned().collect();
        role.sort();
        MetricNames {
            algorithm,
            role,
            source,
        }
    }
}

/// The metric names any report of `scenario` offers.
///
/// Built today from the report of a run that saw no traffic, which has every field a real one
/// has; that needs a [`Recorder`], hence the `Scenario` (a known upward import, see
/// docs/architecture.md, to go when the recorder no longer needs one).
pub fn metric_names(scenario: &Scenario) -> MetricNames {
    let spec = scenario
        .algorithms
        .first()
        .expect("a validated scenario has an algorithm");
    let mut report = Recorder::new(scenario).finish(
        scenario,
        &spec.name,
        spec.params,
        &KeySpace::new(),
        Default::default(),
        Default::default(),
    );
    if scenario.algorithms.iter().any(|a| a.stack.is_some()) {
        // Contenders add their own figures to every row of the scenario.
        report.bypassed = Some(0);
        report.unlimited = Some(0);
        report.warned = Some(0);
    }
    MetricNames::of_report(&report)
}
