//! A scenario's expectations evaluated against its reports: what `rlsim check` and `rlsim
//! run` print, and what the reports' "Expectations" section lists.

use super::expect::Op;
use super::model::scenario::Scenario;
use crate::metrics::{AlgorithmReport, Flat};
use crate::traffic::Role;
use serde::Serialize;

/// One expectation checked against one algorithm.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ExpectationResult {
    /// The expectation with `*` replaced by the algorithm.
    pub expectation: String,
    /// Its position in the scenario's `expect` list.
    pub index: usize,
    /// The contender the expectation was checked against.
    pub algorithm: String,
    /// The role the expectation is scoped to (`role=`), if any.
    pub role: Option<Role>,
    /// The source the expectation is scoped to (`source=`), if any.
    pub source: Option<String>,
    /// The rule the expectation is scoped to (`rule=`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The metric's name, as in `summary.json`.
    pub metric: String,
    /// How the measured value is compared with `bound`.
    pub op: Op,
    /// The number the measured value is compared with, in the metric's own unit.
    pub bound: f64,
    /// `None` when the report holds no number for the metric (which fails the check).
    pub measured: Option<f64>,
    /// Whether the check holds; false when nothing was measured.
    pub passed: bool,
}

/// Every expectation of `scenario`, in order, each for every algorithm it names (in the scenario's
/// order). `reports` are the scenario's reports.
pub fn evaluate(scenario: &Scenario, reports: &[AlgorithmReport]) -> Vec<ExpectationResult> {
    let flat: Vec<(&str, Flat)> = reports
        .iter()
        .map(|r| (r.algorithm.as_str(), Flat::of_report(r)))
        .collect();
    let mut results = Vec::new();
    for (index, e) in scenario.expectations.iter().enumerate() {
        for (algorithm, values) in &flat {
            if e.algorithm.as_deref().is_some_and(|k| k != *algorithm) {
                continue;
            }
            let measured = values.get(&e.scope, &e.metric).flatten();
            results.push(ExpectationResult {
                expectation: e.describe(algorithm),
                index,
                algorithm: algorithm.to_string(),
                role: e.scope.role(),
                source: e.scope.source().map(str::to_string),
                rule: e.scope.rule().map(str::to_string),
                metric: e.metric.clone(),
                op: e.op,
                bound: e.bound,
                measured,
                passed: measured.is_some_and(|m| e.op.holds(m, e.bound)),
            });
        }
    }
    results
}
