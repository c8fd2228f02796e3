//! Sweep chart: one figure against one swept value, one line per contender.

use super::{
    FONT, LegendEntry, Mark, axes, colour, figure as figure_of, headroom, plot_err, render, tick,
};
use crate::error::Result;
use plotters::prelude::*;

pub const FILE: &str = "sweep_line.svg";

/// `figure` against `field` for each `(contender, points)`; `note` says what else was held.
pub fn chart(
    field: &str,
    figure: &str,
    series: &[(&str, Vec<(f64, f64)>)],
    note: &str,
) -> Result<super::Chart> {
    let title = format!("{figure} against {field}");
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (x_lo, x_hi) = all
        .clone()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    let (x_lo, x_hi) = if x_lo.is_finite() && x_hi > x_lo {
        (x_lo, x_hi)
    } else {
        (0.0, x_hi.max(1.0))
    };
    let y_hi = headroom(all.clone().map(|p| p.1).fold(0.0f64, f64::max));
    let y_lo = all.map(|p| p.1).fold(0.0f64, f64::min);
    let legend: Vec<LegendEntry> = series
        .iter()
        .map(|(n, _)| LegendEntry::algorithm(&[], n, Mark::Line))
        .collect();
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(FILE, area, &title, 80, x_lo..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .x_desc(field)
            .y_desc(figure)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        for (name, points) in series {
            let c = colour(name);
            marks.begin(area, name)?;
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(plot_err(FILE))?;
            for &(x, y) in points.iter() {
                let title = format!(
                    "{name}, {field} = {}: {figure} = {}",
                    tick(&x),
                    figure_of(y)
                );
                marks.point(chart.backend_coord(&(x, y)), c, true, &title);
            }
            marks.end(area)?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: format!("`{figure}` of each contender as `{field}` varies{note}."),
        title,
        svg,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_chart_names_its_axes_and_series() {
        let c = super::chart(
            "policy.limit",
            "legit_goodput",
            &[("gcra", vec![(10.0, 0.5), (20.0, 0.9)])],
            "",
        )
        .unwrap();
        assert!(
            c.svg.contains("\npolicy.limit\n</text>") && c.svg.contains("\nlegit_goodput\n</text>")
        );
        assert!(c.svg.contains("\ngcra\n</text>"));
    }
}
