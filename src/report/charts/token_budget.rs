//! Token budgets over time: one panel per rule counting an LLM's tokens (rules of the same name
//! in several contenders share a panel, so accountings compare side by side). Each line is,
//! per time bucket, the most tokens one rule key's admitted requests used in the rule's
//! rolling window, as a share of the rule's budget: above 1, a key used more than its budget
//! (check-then-charge under concurrency, a stream that ends past it).

use super::budget_use::Budget;
use crate::error::Result;
use crate::metrics::{AlgorithmReport, RuleReport, RuleTokens};
use crate::scenario::Scenario;
use crate::time::format_duration;

/// The chart's file name under `charts/`.
pub const FILE: &str = "token_budget.svg";

const BUDGET: Budget = Budget {
    file: FILE,
    title: "Token budget use over time",
    series: |r| r.tokens.as_ref().map(|t| t.busiest.as_slice()),
    caption: |r| {
        let unit = r.tokens.as_ref().map_or("", |t| t.unit.as_str());
        format!("{} ({unit} per {})", r.name, format_duration(r.window_ns))
    },
    reference: "budget (1 = the rule's limit)",
    y_desc: |bucket| {
        format!("most one key used in the rule's window, / budget (per {bucket} bucket)")
    },
    noun: "budget",
    chart_caption: "Per time bucket and per rule counting tokens, the most tokens one rule key's \
                    admitted requests used in the rule's rolling window (each request credited \
                    with what it used at its admission), as a share of the rule's limit (black: \
                    1, the budget). Above 1, the accounting let a key spend more than its budget.",
};

fn token_rules(a: &AlgorithmReport) -> impl Iterator<Item = (&RuleReport, &RuleTokens)> {
    a.rules
        .iter()
        .filter_map(|r| r.tokens.as_ref().map(|t| (r, t)))
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
    BUDGET.chart(scenario, algorithms, lead(algorithms))
}
