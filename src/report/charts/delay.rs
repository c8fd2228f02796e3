//! Chart 6: delay percentiles of the algorithms that delay requests (shapers).

use super::{
    FONT, LegendEntry, Mark, axes, colour_among, headroom, plot_err, render, row_names, tick,
    time_unit,
};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, DelayStats};
use crate::scenario::Scenario;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const FILE: &str = "delays.svg";

/// Reads one percentile of a distribution.
type Percentile = fn(&DelayStats) -> u64;

/// The percentiles drawn, at x = 0, 1, 2, ...
pub const PERCENTILES: [(&str, Percentile); 5] = [
    ("p50", |d| d.p50_ns),
    ("p90", |d| d.p90_ns),
    ("p99", |d| d.p99_ns),
    ("p99.9", |d| d.p999_ns),
    ("max", |d| d.max_ns),
];

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Delay percentiles: {}", scenario.name);
    let names = row_names(algorithms);
    let delaying: Vec<&AlgorithmReport> = algorithms.iter().filter(|a| a.delay.count > 0).collect();
    let max = delaying.iter().map(|a| a.delay.max_ns).max().unwrap_or(0);
    let (unit, unit_name) = time_unit(max);
    let legend: Vec<LegendEntry> = delaying
        .iter()
        .map(|a| LegendEntry::algorithm(&names, &a.algorithm, Mark::Line))
        .collect();
    let last = (PERCENTILES.len() - 1) as f64;
    let svg = render(FILE, &title, &legend, |area| {
        let mut chart = axes(
            FILE,
            area,
            &title,
            70,
            -0.25..last + 0.25,
            0.0..headroom(max as f64 / unit),
        )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_desc("percentile of delayed requests")
            .y_desc(format!("delay ({unit_name})"))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        // Percentiles are categories: label them at their own x rather than at plotters' ticks.
        let style = (FONT, 14)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, (name, _)) in PERCENTILES.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, 0.0));
            area.draw(&Text::new(name.to_string(), (px, py + 8), style.clone()))
                .map_err(plot_err(FILE))?;
        }
        for a in &delaying {
            let c = colour_among(&names, &a.algorithm);
            let points: Vec<(f64, f64)> = PERCENTILES
                .iter()
                .enumerate()
                .map(|(i, (_, f))| (i as f64, f(&a.delay) as f64 / unit))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(plot_err(FILE))?;
            chart
                .draw_series(points.into_iter().map(|p| Circle::new(p, 4, c.filled())))
                .map_err(plot_err(FILE))?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: "How long the requests an algorithm delayed waited before reaching the backend, \
                  by percentile (from a histogram with 3 significant figures; max is exact)."
            .into(),
        title,
        svg,
    })
}
