//! Dashboard chart: retry intervals of clients, per contender (the NestJS article's "retry
//! durations to spot misconfigured clients").

use super::bars::{self, Bars};
use crate::error::Result;
use crate::observe::{Observation, retry_class_names};
use crate::scenario::Scenario;

pub const FILE: &str = "retry_intervals.svg";

/// Whether any client retried.
pub fn applies(observations: &[Observation]) -> bool {
    observations
        .iter()
        .any(|o| o.retry_intervals.iter().any(|&n| n > 0))
}

pub fn chart(scenario: &Scenario, observations: &[Observation]) -> Result<super::Chart> {
    let title = format!("Retry intervals: {}", scenario.name);
    let names = retry_class_names();
    let groups: Vec<&str> = names.iter().map(String::as_str).collect();
    let values = observations
        .iter()
        .flat_map(|o| o.retry_intervals.iter().map(|&n| n as f64));
    let svg = bars::draw(Bars {
        file: FILE,
        title: &title,
        groups: &groups,
        y_desc: "retries",
        series: observations
            .iter()
            .map(|o| {
                let counts = o.retry_intervals.iter().map(|&n| n as f64).collect();
                (o.contender.as_str(), counts)
            })
            .collect(),
        label: &|v| format!("{v:.0}"),
        log: bars::wants_log(values),
        tick: &|v| format!("{v:.0}"),
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: "Retries by the time since the same client's previous refusal: retries far \
                  shorter than the advertised Retry-After point at misconfigured clients."
            .into(),
        title,
        svg,
    })
}
