//! Chart 4: who was hurt. Legit goodput, abusive leakage and shared-key collateral damage per
//! algorithm, all as a share of the requests concerned so they share one fixed 0-100% axis.

use super::hbars::{self, Group, HBars};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, ratio};
use crate::report::ranking::percent;
use crate::scenario::Scenario;

pub const FILE: &str = "who_was_hurt.svg";

/// Collateral rejections as a share of legit requests: the part of legit traffic refused only
/// because it shared a key with someone else.
pub fn collateral_share(a: &AlgorithmReport) -> f64 {
    ratio(a.collateral_rejections, a.roles.legit_offered)
}

/// What to see: the range of legit goodput, and who leaks the least abusive traffic (every row
/// of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let lo = super::least(algorithms, |a| a.roles.legit_goodput);
    let hi = super::most(algorithms, |a| a.roles.legit_goodput);
    let names = |rows: &[&AlgorithmReport]| {
        super::and_list(
            &rows
                .iter()
                .map(|a| format!("`{}`", a.algorithm))
                .collect::<Vec<_>>(),
        )
    };
    let leak = if algorithms.first()?.roles.abusive_offered == 0 {
        "there is no abusive traffic, so leakage is n/a.".to_string()
    } else {
        let l = super::least(algorithms, |a| {
            a.roles.abusive_leakage.unwrap_or(f64::INFINITY)
        });
        format!(
            "{} the least abusive traffic ({}{}).",
            super::who(&l, "leaks", "leak"),
            percent(l.first()?.roles.abusive_leakage.unwrap_or(0.0)),
            if l.len() > 1 { " each" } else { "" }
        )
    };
    Some(format!(
        "legit goodput runs from {} ({}) to {} ({}); {leak}",
        percent(lo.first()?.roles.legit_goodput),
        names(&lo),
        percent(hi.first()?.roles.legit_goodput),
        names(&hi)
    ))
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Who was hurt: {}", scenario.name);
    // Shares on one fixed 0-100% axis, so scenarios compare; a group with no member (no
    // abusive traffic, no legit traffic) reads `n/a`, not a perfect 0%.
    let share = |name, axis: &str| Group {
        name,
        axis: axis.into(),
        divisor: 0.01,
        max: Some(100.0),
    };
    let svg = hbars::draw(HBars {
        file: FILE,
        title: &title,
        groups: vec![
            share("legit goodput", "% of legit admitted"),
            share("abusive leakage", "% of abusive admitted"),
            share("shared-key collateral", "% of legit rejected"),
        ],
        series: algorithms
            .iter()
            .map(|a| {
                let legit = a.roles.legit_offered > 0;
                let values = vec![
                    legit.then_some(a.roles.legit_goodput),
                    a.roles.abusive_leakage,
                    legit.then(|| collateral_share(a)),
                ];
                (a.algorithm.as_str(), values)
            })
            .collect(),
        label: &|v| format!("{:.1}%", 100.0 * v),
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: "Share of legit requests admitted (higher is better), of abusive requests \
                  admitted (lower is better), and of legit requests rejected only because they \
                  shared a key with another client (lower is better); n/a where the scenario has \
                  no such requests."
            .into(),
        title,
        svg,
    })
}
