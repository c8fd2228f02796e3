//! Chart 1: admitted rate over time per algorithm, against the offered load, with the policy's
//! per-key limit as a reference line.

use super::{
    FONT, LegendEntry, Mark, OFFERED, REFERENCE, Timeline, axes, colour_among, headroom, plot_err,
    render, row_names, tick,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::{NANOS_PER_SEC, format_duration};
use plotters::prelude::*;

pub const FILE: &str = "admitted_rate.svg";

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let names = row_names(algorithms);
    let title = format!("Admitted rate over time: {}", scenario.name);
    let timeline = Timeline::new(scenario, algorithms);
    // First tries are the same under every algorithm (retries depend on its rejections): they
    // are the load. Without retrying clients they are all that is offered.
    let offered = algorithms
        .first()
        .map(|a| timeline.rates(a, |b| b.offered - b.retries))
        .unwrap_or_default();
    let admitted: Vec<(&str, Vec<(f64, f64)>)> = algorithms
        .iter()
        .map(|a| (a.algorithm.as_str(), timeline.rates(a, |b| b.admitted)))
        .collect();
    let limit_rate =
        scenario.policy.limit as f64 * NANOS_PER_SEC as f64 / scenario.policy.window as f64;
    let y_max = admitted
        .iter()
        .flat_map(|(_, s)| s)
        .chain(&offered)
        .map(|p| p.1)
        .fold(limit_rate, f64::max);
    let x_max = timeline.x_max;
    let limit_label = format!(
        "policy limit per key ({} per {})",
        scenario.policy.limit,
        format_duration(scenario.policy.window)
    );
    let mut legend = vec![LegendEntry {
        label: if super::retries::applies(scenario) {
            "offered load (first tries)".into()
        } else {
            "offered load".into()
        },
        colour: OFFERED,
        mark: Mark::Line,
    }];
    legend.extend(
        algorithms
            .iter()
            .map(|a| LegendEntry::algorithm(&names, &a.algorithm, Mark::Line)),
    );
    legend.push(LegendEntry {
        label: "policy limit per key".into(),
        colour: REFERENCE,
        mark: Mark::Line,
    });
    let svg = render(FILE, &title, &legend, |area| {
        let mut chart = axes(FILE, area, &title, 70, 0.0..x_max, 0.0..headroom(y_max))?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({})", timeline.unit_name))
            .y_desc(format!(
                "requests/s (per {} bucket)",
                format_duration(scenario.bucket)
            ))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        chart
            .draw_series(LineSeries::new(offered, OFFERED.stroke_width(4)))
            .map_err(plot_err(FILE))?;
        for (name, points) in admitted {
            chart
                .draw_series(LineSeries::new(
                    points,
                    colour_among(&names, name).stroke_width(2),
                ))
                .map_err(plot_err(FILE))?;
        }
        chart
            .draw_series(LineSeries::new(
                [(0.0, limit_rate), (x_max, limit_rate)],
                REFERENCE.stroke_width(1),
            ))
            .map_err(plot_err(FILE))?;
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: format!(
            "Requests reaching the backend per second under each algorithm, over the offered load \
             (grey). The thin black line is the {limit_label} = {limit_rate:.3}/s: the policy \
             limits each key, so the total may exceed it."
        ),
        title,
        svg,
    })
}
