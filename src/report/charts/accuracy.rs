//! Chart 3: accuracy against the policy. Policy violations (admitted beyond the limit) and
//! needless rejections (refused with room to spare) per algorithm, as grouped bars.

use super::hbars::{self, Group, HBars};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

pub const FILE: &str = "accuracy.svg";

/// What to see: who admits the most beyond the policy, who refuses the most needlessly (every
/// row of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let v = super::most(algorithms, |a| a.policy_violations as f64);
    let n = super::most(algorithms, |a| a.needless_rejections as f64);
    let (k, m) = (v.first()?.policy_violations, n.first()?.needless_rejections);
    let each = |rows: &[&AlgorithmReport]| if rows.len() > 1 { " each" } else { "" };
    Some(match (k, m) {
        (0, 0) => "every bar is 0: no contender admits beyond the policy or refuses \
                   needlessly."
            .into(),
        (0, m) => format!(
            "no contender admits beyond the policy; {} {m} requests needlessly{}.",
            super::who(&n, "refuses", "refuse"),
            each(&n)
        ),
        (k, 0) => format!(
            "{} {k} requests beyond the policy{}; no contender refuses needlessly.",
            super::who(&v, "admits", "admit"),
            each(&v)
        ),
        (k, m) => format!(
            "{} the most beyond the policy ({k}{}), {} the most needlessly ({m}{}).",
            super::who(&v, "admits", "admit"),
            each(&v),
            super::who(&n, "refuses", "refuse"),
            each(&n)
        ),
    })
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Accuracy against the policy: {}", scenario.name);
    let counts = |name| Group {
        name,
        axis: "requests".into(),
        divisor: 1.0,
        max: None,
    };
    let svg = hbars::draw(HBars {
        file: FILE,
        title: &title,
        groups: vec![counts("policy violations"), counts("needless rejections")],
        series: algorithms
            .iter()
            .map(|a| {
                let values = vec![
                    Some(a.policy_violations as f64),
                    Some(a.needless_rejections as f64),
                ];
                (a.algorithm.as_str(), values)
            })
            .collect(),
        label: &|v| format!("{v:.0}"),
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: "Admissions beyond the policy limit in their rolling window (violations), and \
                  rejections that the policy would have allowed (needless): both should be 0."
            .into(),
        title,
        svg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, violations: u64, needless: u64) -> AlgorithmReport {
        AlgorithmReport {
            algorithm: name.into(),
            policy_violations: violations,
            needless_rejections: needless,
            ..AlgorithmReport::default()
        }
    }

    #[test]
    fn the_lead_names_every_tied_row() {
        let rows = [row("a", 5, 3), row("b", 5, 1), row("c", 2, 3)];
        assert_eq!(
            lead(&rows).unwrap(),
            "`a` and `b` admit the most beyond the policy (5 each), `a` and `c` refuse the most \
             needlessly (3 each)."
        );
        let rows = [row("a", 0, 3), row("b", 0, 3)];
        assert_eq!(
            lead(&rows).unwrap(),
            "no contender admits beyond the policy; `a` and `b` refuse 3 requests needlessly each."
        );
    }
}
