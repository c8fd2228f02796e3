//! Dashboard chart: the refused share over time per contender, per 15 s scrape (what a
//! Grafana panel of `rate(rlsim_requests_total{outcome="reject"}) / rate(rlsim_requests_total)`
//! shows), against the 5% mark of the share alert.

use super::{
    FONT, LegendEntry, Mark, PLOT_PIXELS, REFERENCE, axes, colour_among, downsample, plot_err,
    render, tick, time_unit,
};
use crate::error::Result;
use crate::observe::Observation;
use crate::scenario::Scenario;
use plotters::prelude::*;

pub const FILE: &str = "refused_share.svg";

pub fn chart(scenario: &Scenario, observations: &[Observation]) -> Result<super::Chart> {
    let title = format!("Refused share over time: {}", scenario.name);
    let series: Vec<(&str, Vec<(f64, f64)>)> = observations
        .iter()
        .map(|o| {
            let points = o
                .refused_share
                .iter()
                .map(|&(t, s)| (t as f64, s))
                .collect();
            (o.contender.as_str(), points)
        })
        .collect();
    let span = series
        .iter()
        .flat_map(|(_, s)| s.last())
        .map(|p| p.0)
        .fold(scenario.duration as f64, f64::max);
    let (unit, unit_name) = time_unit(span as u64);
    let x_max = (span / unit).max(f64::MIN_POSITIVE);
    let names: Vec<&str> = series.iter().map(|(name, _)| *name).collect();
    let legend: Vec<LegendEntry> = series
        .iter()
        .map(|(name, _)| LegendEntry::algorithm(&names, name, Mark::Line))
        .collect();
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(FILE, area, &title, 70, 0.0..x_max, 0.0..105.0)?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit_name})"))
            .y_desc("refused share of the requests per 15 s scrape (%)")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 5.0), (x_max, 5.0)],
                REFERENCE.stroke_width(1),
            ))
            .map_err(plot_err(FILE))?;
        for (name, points) in &series {
            let points: Vec<(f64, f64)> =
                points.iter().map(|&(t, s)| (t / unit, 100.0 * s)).collect();
            let c = colour_among(&names, name);
            marks.begin(area, name)?;
            chart
                .draw_series(LineSeries::new(
                    downsample(&points, PLOT_PIXELS),
                    c.stroke_width(2),
                ))
                .map_err(plot_err(FILE))?;
            for &(x, y) in &super::hover_points(&points) {
                let title = format!("{name}, {} {unit_name}: {y:.1}% refused", tick(&x));
                marks.point(chart.backend_coord(&(x, y)), c, false, &title);
            }
            marks.end(area)?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: "Share of the requests decided in each 15 s of virtual time that each contender \
                  refused; the thin black line marks 5%, the share alert's usual threshold."
            .into(),
        title,
        svg,
    })
}
