//! Chart 4: who was hurt. Legit goodput, abusive leakage and NAT collateral damage per
//! algorithm, all as a share of the requests concerned so they share one axis.

use super::bars::{self, Bars};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, ratio};
use crate::scenario::Scenario;

pub const FILE: &str = "who_was_hurt.svg";

/// Collateral rejections as a share of legit requests: the part of legit traffic refused only
/// because it shared a key with someone else.
pub fn collateral_share(a: &AlgorithmReport) -> f64 {
    ratio(a.collateral_rejections, a.roles.legit_offered)
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Who was hurt: {}", scenario.name);
    let svg = bars::draw(Bars {
        file: FILE,
        title: &title,
        groups: &[
            "legit goodput (admitted)",
            "abusive leakage (admitted)",
            "NAT collateral (rejected)",
        ],
        y_desc: "share of the requests concerned (%)",
        series: algorithms
            .iter()
            .map(|a| {
                let values = vec![
                    100.0 * a.roles.legit_goodput,
                    100.0 * a.roles.abusive_leakage.unwrap_or(0.0),
                    100.0 * collateral_share(a),
                ];
                (a.algorithm.as_str(), values)
            })
            .collect(),
        label: &|v| format!("{v:.1}%"),
        log: false,
        tick: &|v| format!("{v:.0}%"),
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: "Share of legit requests admitted (higher is better), of abusive requests \
                  admitted (lower is better), and of legit requests rejected only because they \
                  shared a key with another client (lower is better)."
            .into(),
        title,
        svg,
    })
}
