//! Chart 7, for closed-loop scenarios (clients that retry rejected requests): attempts per
//! second over time, first tries in the upper panel and retries in the lower one, one line per
//! algorithm in each. Retries depend on the algorithm's rejections, so each has its own.

use super::{
    FONT, LegendEntry, Mark, Timeline, colour_among, headroom, plot_err, render, row_names, tick,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;
use plotters::prelude::*;

pub const FILE: &str = "retries.svg";

/// Whether any source's clients retry after a rejection.
pub fn applies(scenario: &Scenario) -> bool {
    scenario.reactions.iter().any(|r| r.max_retries > 0)
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let names = row_names(algorithms);
    let title = format!(
        "Attempts over time, first tries and retries: {}",
        scenario.name
    );
    let timeline = Timeline::new(scenario, algorithms);
    let first: Vec<(&str, Vec<(f64, f64)>)> = algorithms
        .iter()
        .map(|a| {
            (
                a.algorithm.as_str(),
                timeline.rates(a, |b| b.offered - b.retries),
            )
        })
        .collect();
    let retries: Vec<(&str, Vec<(f64, f64)>)> = algorithms
        .iter()
        .map(|a| (a.algorithm.as_str(), timeline.rates(a, |b| b.retries)))
        .collect();
    let max = |s: &[(&str, Vec<(f64, f64)>)]| {
        s.iter()
            .flat_map(|(_, p)| p)
            .map(|p| p.1)
            .fold(0.0, f64::max)
    };
    // One y scale for both panels, so retries compare with first tries at a glance.
    let y_max = headroom(max(&first).max(max(&retries)));
    let x_max = timeline.x_max;
    let legend: Vec<LegendEntry> = algorithms
        .iter()
        .map(|a| LegendEntry::algorithm(&names, &a.algorithm, Mark::Line))
        .collect();
    let y_desc = format!(
        "attempts/s (per {} bucket)",
        format_duration(scenario.bucket)
    );
    let svg = render(FILE, &title, &legend, |area| {
        let (upper, lower) = area.split_vertically(area.dim_in_pixel().1 / 2 + 10);
        for (panel, caption, data, top) in [
            (&upper, "first tries", &first, true),
            (&lower, "retries", &retries, false),
        ] {
            let mut builder = ChartBuilder::on(panel);
            builder
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70);
            if top {
                builder.caption(&title, (FONT, 22));
            }
            let mut chart = builder
                .build_cartesian_2d(0.0..x_max, 0.0..y_max)
                .map_err(plot_err(FILE))?;
            chart
                .configure_mesh()
                .x_desc(format!("time ({})", timeline.unit_name))
                .y_desc(format!("{caption}: {y_desc}"))
                .x_label_formatter(&tick)
                .y_label_formatter(&tick)
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw()
                .map_err(plot_err(FILE))?;
            for (name, points) in data {
                chart
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        colour_among(&names, name).stroke_width(2),
                    ))
                    .map_err(plot_err(FILE))?;
            }
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: "Attempts per second under each algorithm: first tries (upper panel) and retries \
                  of rejected requests by clients that retry (lower panel), on one scale."
            .into(),
        title,
        svg,
    })
}
