//! The reports' figure tables after the key figures (per source, and the figures the
//! scenario's `expect` lines name) and the expectations, collapsed into a summary with the
//! failures listed.

use super::document::Block;
use super::ranking;
use crate::metrics::{AlgorithmReport, Flat};
use crate::scenario::goals::Unit;
use crate::scenario::outcome::ExpectationResult;
use crate::scenario::{Scenario, Scope};

/// One row per contender, one column per source: the share of the source's requests served
/// (`request_success_rate`), with attempts per request and give-ups where clients retry.
pub fn per_source(algorithms: &[AlgorithmReport]) -> Block {
    // The sources as the reports name them (a replayed trace may split into several).
    let names: Vec<(&str, &str)> = algorithms
        .first()
        .map(|a| {
            a.sources
                .iter()
                .map(|s| (s.name.as_str(), s.role.name()))
                .collect()
        })
        .unwrap_or_default();
    let mut header = vec!["contender".to_string()];
    header.extend(names.iter().map(|(name, role)| format!("{name} ({role})")));
    let rows = algorithms
        .iter()
        .map(|a| {
            let mut row = vec![format!("`{}`", a.algorithm)];
            row.extend(names.iter().map(|(name, _)| {
                let Some(s) = a.sources.iter().find(|s| s.name == *name) else {
                    return "-".to_string();
                };
                let served = ranking::percent(s.request_success_rate);
                if s.retries > 0 {
                    format!(
                        "{served} ({:.1} tries per request, {} gave up)",
                        s.attempts_per_request, s.abandoned
                    )
                } else if s.delayed > 0 {
                    format!("{served} ({} delayed)", s.delayed)
                } else {
                    served
                }
            }));
            row
        })
        .collect();
    Block::Table(header, rows)
}

/// The distinct figures the scenario's `expect` lines name, in order, as a table (one row per
/// contender); `None` without expectations.
pub fn headline(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Option<Block> {
    let mut figures: Vec<(&Scope, &str)> = Vec::new();
    for e in &scenario.expectations {
        if !figures.contains(&(&e.scope, e.metric.as_str())) {
            figures.push((&e.scope, &e.metric));
        }
    }
    if figures.is_empty() {
        return None;
    }
    let mut header = vec!["contender".to_string()];
    header.extend(
        figures
            .iter()
            .map(|(scope, metric)| format!("{scope}{metric}")),
    );
    let rows = algorithms
        .iter()
        .map(|a| {
            let flat = Flat::of_report(a);
            let mut row = vec![format!("`{}`", a.algorithm)];
            row.extend(
                figures
                    .iter()
                    .map(|(scope, metric)| match flat.get(scope, metric) {
                        Some(Some(v)) => Unit::of(metric).show(v),
                        Some(None) => "n/a".into(),
                        None => "-".into(),
                    }),
            );
            row
        })
        .collect();
    Some(Block::Table(header, rows))
}

/// The expectations: how many checks pass, the failures listed, and every `expect` line with
/// each contender's measured value folded below (a `<details>` in HTML).
pub fn expectations(scenario: &Scenario, results: &[ExpectationResult]) -> Vec<Block> {
    if scenario.expectations.is_empty() {
        return vec![Block::Paragraph(
            "The scenario states no `expect` lines: nothing is checked.".into(),
        )];
    }
    let passed = results.iter().filter(|r| r.passed).count();
    let mut items = Vec::with_capacity(scenario.expectations.len());
    let mut failures = Vec::new();
    // Each line's results, grouped once: filtering all results per line was quadratic
    // (100,000 lines took minutes).
    let mut by_line: Vec<Vec<&ExpectationResult>> = vec![Vec::new(); scenario.expectations.len()];
    for r in results {
        if let Some(line) = by_line.get_mut(r.index) {
            line.push(r);
        }
    }
    for (e, mine) in scenario.expectations.iter().zip(&by_line) {
        let failed: Vec<&str> = mine
            .iter()
            .filter(|r| !r.passed)
            .map(|r| r.algorithm.as_str())
            .collect();
        let status = if failed.is_empty() {
            "**pass**".to_string()
        } else {
            format!("**FAIL** ({})", failed.join(", "))
        };
        let unit = Unit::of(&e.metric);
        let measured: Vec<String> = mine
            .iter()
            .map(|r| {
                let v = r.measured.map_or("n/a".into(), |v| unit.show(v));
                if e.algorithm.is_some() {
                    v
                } else {
                    format!("{} {v}", r.algorithm)
                }
            })
            .collect();
        let claim = e.describe(e.algorithm.as_deref().unwrap_or("*"));
        let item = format!("{status} `{claim}`: measured {}", measured.join(", "));
        if !failed.is_empty() {
            failures.push(item.clone());
        }
        items.push(item);
    }
    let total = results.len();
    let lines = scenario.expectations.len();
    let mut blocks = vec![Block::Paragraph(if failures.is_empty() {
        format!(
            "All {total} checks pass, from {lines} `expect` lines (a line with `*` is checked for \
             every contender; `rlsim check` runs the same checks)."
        )
    } else {
        format!(
            "{passed} of {total} checks pass, from {lines} `expect` lines; {} of the lines \
             fail (`rlsim check` runs the same checks):",
            failures.len()
        )
    })];
    if !failures.is_empty() {
        blocks.push(Block::List(false, failures));
    }
    blocks.push(Block::Details(
        format!("Every `expect` line ({lines}), with each contender's measured value"),
        vec![Block::List(false, items)],
    ));
    blocks
}
