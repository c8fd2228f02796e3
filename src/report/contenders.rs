//! The reports' "Contenders" section: each `[[contender]]`'s rules and how each fared against
//! its own limit, window and key. Absent in the short form.

use super::document::Block;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;

/// The section's blocks; empty when no contender has rules of its own.
pub fn blocks(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<Block> {
    let mut b = Vec::new();
    for (spec, report) in scenario.algorithms.iter().zip(algorithms) {
        let Some(stack) = spec.stack() else {
            continue;
        };
        if b.is_empty() {
            b.push(Block::Heading(2, "Contenders".into()));
            b.push(Block::Paragraph(
                "Each contender is a whole limiter configuration: a request is admitted only if \
                 every rule that applies to it admits it. `refused` counts the requests a rule \
                 was the one to refuse; `violations` and `burst factor` measure what the \
                 contender let through against that rule's own limit, window and key."
                    .into(),
            ));
        }
        let mut intro = format!(
            "**{}** (commit `{}`): {} bypassed, {} met no rule, {} admitted with a warning.",
            spec.name,
            stack.commit.name(),
            report.bypassed.unwrap_or(0),
            report.unlimited.unwrap_or(0),
            report.warned.unwrap_or(0),
        );
        if !spec.description.is_empty() {
            intro.push(' ');
            intro.push_str(&spec.description);
        }
        b.push(Block::Paragraph(intro));
        let header = [
            "rule",
            "algorithm",
            "limit",
            "key",
            "applied",
            "admitted",
            "refused",
            "warned",
            "violations",
            "burst factor",
            "needless rejections",
        ];
        let rows = report
            .rules
            .iter()
            .map(|r| {
                let key = r.key.describe("+");
                vec![
                    format!("`{}`", r.name),
                    r.algorithm.clone(),
                    format!("{} / {}", r.limit, format_duration(r.window_ns)),
                    key,
                    r.applied.to_string(),
                    r.admitted.to_string(),
                    r.refused.to_string(),
                    r.warned.to_string(),
                    r.violations.to_string(),
                    format!("{:.2}", r.burst_factor),
                    r.needless_rejections.to_string(),
                ]
            })
            .collect();
        b.push(Block::Table(
            header.iter().map(|h| h.to_string()).collect(),
            rows,
        ));
        // Rules keyed by an identity function: how many keys each real client made of them,
        // where a source's clients made more than one.
        let many: Vec<String> = report
            .rules
            .iter()
            .filter_map(|r| {
                let list: Vec<String> = r
                    .keys_per_client
                    .as_deref()?
                    .iter()
                    .filter(|k| k.max > 1.0)
                    .map(|k| format!("{} {}", k.source, k.max))
                    .collect();
                (!list.is_empty()).then(|| format!("`{}`: {}", r.name, list.join(", ")))
            })
            .collect();
        if !many.is_empty() {
            b.push(Block::Paragraph(format!(
                "Most keys one real client made of a rule, per source (1 elsewhere): {}.",
                many.join("; ")
            )));
        }
    }
    b
}
