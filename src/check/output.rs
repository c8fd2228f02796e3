//! What `rlsim check` prints: a line per expectation, a count line and the baseline's diff table,
//! or the same as one JSON document. Bytes out, no I/O.

use super::ScenarioResult;
use super::baseline::{Change, Comparison, Tolerance, Verdict};
use super::expect::ExpectationResult;
use crate::metrics::AlgorithmReport;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A measured value: the shortest decimal that reads back as the same float.
pub fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A relative change as a signed percentage, `n/a` against a baseline of zero.
pub fn percent(change: Option<f64>) -> String {
    change.map_or_else(|| "n/a".to_string(), |c| format!("{:+.2}%", c * 100.0))
}

/// `pass` or `FAIL`, the scenario, the expectation and the measured value.
pub fn expectation_line(scenario: &str, e: &ExpectationResult) -> String {
    let status = if e.passed { "pass" } else { "FAIL" };
    let measured = match e.measured {
        Some(v) => format!(
            "measured {}",
            crate::report::human_number_against(v, Some(e.bound))
        ),
        None => format!("measured n/a: {}", not_applicable(&e.metric)),
    };
    format!("{status}  {scenario}: {} ({measured})\n", e.expectation)
}

/// Why a metric has no value in a run, for the expectation line that needed one.
fn not_applicable(metric: &str) -> &'static str {
    match metric {
        "abusive_leakage" => "the run has no abusive traffic to leak",
        "mean_rate_error" => "the algorithm keeps an exact count and estimates nothing",
        _ => "the report holds no number for it",
    }
}

pub fn count_line(passed: usize, failed: usize) -> String {
    format!("{passed} passed, {failed} failed\n")
}

/// The text report: expectation lines, then (with a baseline) the diff table, then the counts.
/// `quiet` keeps only the failed expectations (with the count line) and the baseline's table.
pub fn text(results: &[ScenarioResult], comparison: Option<&Comparison>, quiet: bool) -> String {
    let mut out = String::new();
    for r in results {
        for e in r.expectations.iter().filter(|e| !quiet || !e.passed) {
            out.push_str(&expectation_line(&r.scenario.name, e));
        }
    }
    // Without a baseline, a scenario without expectations is run for nothing: say so.
    let unchecked = results
        .iter()
        .filter(|r| r.expectations.is_empty() && !quiet);
    for r in unchecked.filter(|_| comparison.is_none()) {
        let _ = writeln!(
            out,
            "note: {} has no expectations (`expect = [...]`): nothing checked in {}",
            r.scenario.name,
            r.scenario.path.display()
        );
    }
    if let Some(c) = comparison {
        out.push_str(&diff_table(c));
    }
    let (passed, failed) = counts(results);
    if !quiet || failed > 0 {
        out.push_str(&count_line(passed, failed));
    }
    out
}

pub fn counts(results: &[ScenarioResult]) -> (usize, usize) {
    let all = results.iter().flat_map(|r| &r.expectations);
    let passed = all.clone().filter(|e| e.passed).count();
    (passed, all.count() - passed)
}

/// The metrics that moved, one row each, and a line of totals.
fn diff_table(c: &Comparison) -> String {
    const HEADERS: [&str; 7] = [
        "scenario",
        "algorithm",
        "metric",
        "baseline",
        "current",
        "change",
        "verdict",
    ];
    let rows: Vec<[String; 7]> = c
        .changes()
        .map(|r| {
            [
                r.scenario.clone(),
                r.algorithm.clone(),
                r.metric.clone(),
                // Rounded, but never so far that two different figures look the same.
                crate::report::human_number_against(r.baseline, Some(r.current)),
                crate::report::human_number_against(r.current, Some(r.baseline)),
                percent(r.change),
                verdict_name(r.verdict).to_string(),
            ]
        })
        .collect();
    let mut out = String::new();
    for missing in &c.not_in_baseline {
        let _ = writeln!(out, "note: no baseline for {missing}");
    }
    if !rows.is_empty() {
        let mut widths = HEADERS.map(str::len);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.len());
            }
        }
        let mut line = |cells: [&str; 7]| {
            let mut s = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                // Names left-aligned, numbers right-aligned, like the run table.
                if (3..6).contains(&i) {
                    let _ = write!(s, "{cell:>w$}  ");
                } else {
                    let _ = write!(s, "{cell:<w$}  ");
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(HEADERS);
        for row in &rows {
            line(row.each_ref().map(String::as_str));
        }
    }
    let _ = writeln!(
        out,
        "baseline: {} metrics compared, {} changed, {} regressed",
        c.rows.len(),
        c.changes().count(),
        c.regressed()
    );
    out
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Unchanged => "unchanged",
        Verdict::Improved => "better",
        Verdict::WithinTolerance => "worse, within tolerance",
        Verdict::Regressed => "REGRESSED",
    }
}

/// `rlsim check --format json`. Documented in `docs/ci.md`; its JSON schema is
/// docs/schema/check.schema.json ([`schema`]).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(title = "rlsim check --format json")]
struct CheckJson<'a> {
    /// The version of this document's shape: raised when a field is removed, renamed or changes
    /// meaning (docs/schema/).
    schema_version: u32,
    rlsim_version: &'static str,
    passed: usize,
    failed: usize,
    scenarios: Vec<ScenarioJson<'a>>,
    baseline: Option<BaselineJson<'a>>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ScenarioJson<'a> {
    name: &'a str,
    path: String,
    seed: u64,
    expectations: &'a [ExpectationResult],
    /// Every algorithm's figures, as in `summary.json`: what a later baseline compares with.
    algorithms: &'a [AlgorithmReport],
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct BaselineJson<'a> {
    tolerance: f64,
    tolerance_for: &'a BTreeMap<String, f64>,
    compared: usize,
    regressed: usize,
    changes: Vec<&'a Change>,
    not_in_baseline: &'a [String],
}

pub fn json(
    results: &[ScenarioResult],
    comparison: Option<&Comparison>,
    tolerance: &Tolerance,
) -> Vec<u8> {
    let (passed, failed) = counts(results);
    let doc = CheckJson {
        schema_version: crate::report::SCHEMA_VERSION,
        rlsim_version: env!("CARGO_PKG_VERSION"),
        passed,
        failed,
        scenarios: results
            .iter()
            .map(|r| ScenarioJson {
                name: &r.scenario.name,
                path: r.scenario.path.display().to_string(),
                seed: r.scenario.seed,
                expectations: &r.expectations,
                algorithms: &r.reports,
            })
            .collect(),
        baseline: comparison.map(|c| BaselineJson {
            tolerance: tolerance.default,
            tolerance_for: &tolerance.per_metric,
            compared: c.rows.len(),
            regressed: c.regressed(),
            changes: c.changes().collect(),
            not_in_baseline: &c.not_in_baseline,
        }),
    };
    let mut out = serde_json::to_vec_pretty(&doc).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// The JSON schema of `rlsim check --format json` (docs/schema/check.schema.json).
pub fn schema() -> schemars::Schema {
    crate::report::schema_of::<CheckJson<'static>>()
}
