//! Token budgets over time: one panel per rule counting an LLM's tokens (rules of the same name
//! in several contenders share a panel, so accountings compare side by side). Each line is,
//! per time bucket, the most tokens one rule key's admitted requests used in the rule's
//! rolling window, as a share of the rule's budget: above 1, a key used more than its budget
//! (check-then-charge under concurrency, a stream that ends past it).

use super::{
    LegendEntry, Mark, Marks, REFERENCE, Timeline, caption_size, colour_among, draw_steps, notes,
    panel, panel_top, panels, reference_line, render, row_names, tie_note, ties,
};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, RuleReport, RuleTokens};
use crate::scenario::Scenario;
use crate::time::format_duration;

/// The chart's file name under `charts/`.
pub const FILE: &str = "token_budget.svg";

/// Whether any contender has a rule counting tokens (the chart exists only then).
pub fn applies(algorithms: &[AlgorithmReport]) -> bool {
    algorithms.iter().any(|a| token_rules(a).next().is_some())
}

fn token_rules(a: &AlgorithmReport) -> impl Iterator<Item = (&RuleReport, &RuleTokens)> {
    a.rules
        .iter()
        .filter_map(|r| r.tokens.as_ref().map(|t| (r, t)))
}

/// One panel: a rule's name, and per contender that has it, its series.
struct Panel<'a> {
    rule: &'a str,
    caption: String,
    lines: Vec<(&'a str, Vec<(f64, f64)>)>,
}

fn panels_of<'a>(timeline: &Timeline, algorithms: &'a [AlgorithmReport]) -> Vec<Panel<'a>> {
    let mut out: Vec<Panel> = Vec::new();
    for a in algorithms {
        for (rule, tokens) in token_rules(a) {
            let limit = rule.limit as f64;
            let points =
                timeline.series(|i| tokens.busiest.get(i).copied().unwrap_or(0) as f64 / limit);
            let line = (a.algorithm.as_str(), points);
            match out.iter_mut().find(|p| p.rule == rule.name) {
                Some(p) => p.lines.push(line),
                None => out.push(Panel {
                    rule: &rule.name,
                    caption: format!(
                        "{} ({} per {})",
                        rule.name,
                        tokens.unit,
                        format_duration(rule.window_ns)
                    ),
                    lines: vec![line],
                }),
            }
        }
    }
    out
}

/// What to see: the contender and rule whose key went furthest past its budget.
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let (a, rule, tokens) = algorithms
        .iter()
        .flat_map(|a| token_rules(a).map(move |(r, t)| (a, r, t)))
        .max_by(|x, y| x.2.overshoot.total_cmp(&y.2.overshoot))?;
    let window = format_duration(rule.window_ns);
    Some(if tokens.overshoot > 1.0 {
        format!(
            "under `{}`, one key of rule `{}` used {:.2} times its budget in a rolling {window}.",
            a.algorithm, rule.name, tokens.overshoot
        )
    } else {
        format!(
            "no key used more than its budget in a rolling window; the most was {:.2} of it \
             (`{}`, rule `{}`).",
            tokens.overshoot, a.algorithm, rule.name
        )
    })
}

/// The chart, or `None` when no contender counts tokens.
pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<Option<super::Chart>> {
    if !applies(algorithms) {
        return Ok(None);
    }
    let names = row_names(algorithms);
    let title = format!("Token budget use over time: {}", scenario.name);
    let timeline = Timeline::new(scenario);
    let panels_data = panels_of(&timeline, algorithms);
    let mut legend: Vec<LegendEntry> = Vec::new();
    for p in &panels_data {
        for (name, _) in &p.lines {
            if !legend.iter().any(|e| e.label == *name) {
                legend.push(LegendEntry::algorithm(&names, name, Mark::Line));
            }
        }
    }
    let budget = "budget (1 = the rule's limit)";
    legend.push(LegendEntry::other(budget, REFERENCE, Mark::Line));
    let y_desc = format!(
        "most one key used in the rule's window, / budget (per {} bucket)",
        format_duration(scenario.bucket)
    );
    let x_desc = format!("time ({})", timeline.unit_name);
    let x_max = timeline.x_max;
    let share = |v: &f64| format!("{v:.1}");
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(FILE, area, &title, &x_desc, &y_desc, panels_data.len())?;
        let size = caption_size(panels_data.len());
        for (panel_area, p) in areas.iter().zip(&panels_data) {
            let y_max = p
                .lines
                .iter()
                .flat_map(|(_, s)| s)
                .map(|pt| pt.1)
                .fold(1.0, f64::max);
            let mut chart = panel(
                FILE,
                panel_area,
                &p.caption,
                size,
                0.0..x_max,
                0.0..panel_top(y_max),
                &share,
                5,
            )?;
            let tied = ties(&p.lines.iter().map(|(n, s)| (*n, s)).collect::<Vec<_>>());
            let lines: Vec<String> = p
                .lines
                .iter()
                .zip(&tied)
                .filter_map(|((name, _), tie)| Some(format!("{name} {}", tie_note(tie, 2)?)))
                .collect();
            notes(FILE, panel_area, &chart, &lines)?;
            reference_line(
                FILE,
                &mut chart,
                panel_area,
                marks,
                budget,
                1.0,
                (0.0, x_max),
            )?;
            for (name, points) in &p.lines {
                let rule = p.rule;
                draw_steps(
                    FILE,
                    &mut chart,
                    panel_area,
                    marks,
                    name,
                    points,
                    timeline.width(),
                    colour_among(&names, name),
                    |x, y| {
                        format!(
                            "{name}, rule {rule}, {}: busiest key used {y:.2} of its budget",
                            timeline.at(x)
                        )
                    },
                )?;
            }
        }
        Ok(())
    })?;
    Ok(Some(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: "Per time bucket and per rule counting tokens, the most tokens one rule key's \
                  admitted requests used in the rule's rolling window (each request credited \
                  with what it used at its admission), as a share of the rule's limit (black: \
                  1, the budget). Above 1, the accounting let a key spend more than its budget."
            .to_string(),
        title,
        svg,
    }))
}
