//! Chart 3: accuracy against the policy. Policy violations (admitted beyond the limit) and
//! needless rejections (refused with room to spare) per algorithm, as grouped bars.

use super::bars::{self, Bars};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

pub const FILE: &str = "accuracy.svg";

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Accuracy against the policy: {}", scenario.name);
    let svg = bars::draw(Bars {
        file: FILE,
        title: &title,
        groups: &["policy violations", "needless rejections"],
        y_desc: "requests",
        series: algorithms
            .iter()
            .map(|a| {
                let values = vec![a.policy_violations as f64, a.needless_rejections as f64];
                (a.algorithm.as_str(), values)
            })
            .collect(),
        label: &|v| format!("{v:.0}"),
        log: false,
        tick: &|v| format!("{v:.0}"),
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: "Admissions beyond the policy limit in their rolling window (violations), and \
                  rejections that the policy would have allowed (needless): both should be 0."
            .into(),
        title,
        svg,
    })
}
