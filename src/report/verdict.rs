//! The reports' opening: the verdict (the recommended contender and why), the per-source
//! table, the scenario's headline figures (those its `expect` lines name) and the expectation
//! results.

use super::document::Block;
use super::ranking::{self, Ranked};
use crate::metrics::{AlgorithmReport, Flat};
use crate::scenario::goals::Unit;
use crate::scenario::outcome::ExpectationResult;
use crate::scenario::{Scenario, Scope};
use crate::time::format_duration;

/// One paragraph: the contender ranked first, what put it there, and what to mind about it.
pub fn verdict(scenario: &Scenario, ranked: &[Ranked]) -> Block {
    let Some(first) = ranked.first() else {
        return Block::Paragraph("The scenario runs no contender.".into());
    };
    let a = first.report;
    let goals = scenario.goals.len();
    let how = if goals == 0 {
        "The scenario states no `[goals]`, so contenders are ranked by legitimate goodput, then \
         policy violations, then delay."
            .to_string()
    } else if first.missed() == 0 {
        format!("It meets all {goals} of the scenario's goals.")
    } else {
        format!(
            "No contender meets every goal; it misses the fewest ({} of {goals}).",
            first.missed()
        )
    };
    let mut text = format!(
        "**{}** is the recommended contender. {how} It has {}.",
        a.algorithm,
        ranking::figures(a)
    );
    if let Some(second) = ranked.get(1) {
        let why = match ranking::decided_by(first, second) {
            Some(words) => format!("{} {words}", a.algorithm),
            None => "their figures tie and the scenario lists it first".to_string(),
        };
        text.push_str(&format!(
            " It ranks above **{}** because {why} ({}).",
            second.report.algorithm,
            ranking::figures(second.report)
        ));
    }
    if a.policy_violations > 0 {
        text.push_str(&format!(
            " Mind that it admits {} requests beyond the policy (burst factor {:.2}): choose it \
             only if the limit is a target rather than a hard ceiling.",
            a.policy_violations, a.burst_factor
        ));
    }
    if let Some(d) = (a.roles.legit_delayed > 0).then_some(a.roles.legit_delay_p99_ns) {
        text.push_str(&format!(
            " It delays legitimate requests (p99 {}): their clients must wait that long.",
            format_duration(d)
        ));
    }
    Block::Paragraph(text)
}

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

/// One item per `expect` line: pass or FAIL, the claim, and each contender's measured value.
pub fn expectations(scenario: &Scenario, results: &[ExpectationResult]) -> Vec<Block> {
    if scenario.expectations.is_empty() {
        return vec![Block::Paragraph(
            "The scenario states no `expect` lines: nothing is checked.".into(),
        )];
    }
    let passed = results.iter().filter(|r| r.passed).count();
    let mut items = Vec::with_capacity(scenario.expectations.len());
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
        items.push(format!(
            "{status} `{claim}`: measured {}",
            measured.join(", ")
        ));
    }
    vec![
        Block::Paragraph(format!(
            "{passed} of {} checks pass (an `expect` line with `*` is checked for every \
             contender; `rlsim check` runs the same checks).",
            results.len()
        )),
        Block::List(false, items),
    ]
}
