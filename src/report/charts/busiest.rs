//! Chart 1b: the busiest key over time, one panel per algorithm. The policy's limit bounds each
//! key's admissions in its rolling window, not the total rate: this chart draws that quantity
//! (per time bucket, the most admissions any one key held in its window at an admission) against
//! the limit, so a violation shows as the line crossing it and a key held at the limit as the
//! line riding it.

use super::{
    LegendEntry, Mark, Marks, REFERENCE, Timeline, caption_size, colour_among, draw_steps, notes,
    panel, panel_top, panels, reference_line, render, row_names, tick, tie_note, ties,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;

pub const FILE: &str = "busiest_key.svg";

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let names = row_names(algorithms);
    let title = format!("Busiest key against the limit: {}", scenario.name);
    let timeline = Timeline::new(scenario);
    let (limit, window) = (scenario.policy.limit, scenario.policy.window);
    let series: Vec<(&str, Vec<(f64, f64)>)> = algorithms
        .iter()
        .map(|a| {
            let points = timeline.series(|i| a.busiest_key.get(i).copied().unwrap_or(0) as f64);
            (a.algorithm.as_str(), points)
        })
        .collect();
    let tied = ties(
        &algorithms
            .iter()
            .map(|a| (a.algorithm.as_str(), &a.busiest_key))
            .collect::<Vec<_>>(),
    );
    let y_max = series
        .iter()
        .flat_map(|(_, s)| s)
        .map(|p| p.1)
        .fold(limit as f64, f64::max);
    let limit_name = format!("policy limit ({limit} per {})", format_duration(window));
    let mut legend: Vec<LegendEntry> = algorithms
        .iter()
        .zip(&tied)
        .map(|(a, tie)| LegendEntry::tied(&names, &a.algorithm, Mark::Line, tie))
        .collect();
    legend.push(LegendEntry::other(&limit_name, REFERENCE, Mark::Line));
    let y_desc = format!(
        "most admitted by one key in {} (per {} bucket)",
        format_duration(window),
        format_duration(scenario.bucket)
    );
    let x_desc = format!("time ({})", timeline.unit_name);
    let x_max = timeline.x_max;
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(FILE, area, &title, &x_desc, &y_desc, series.len())?;
        let size = caption_size(series.len());
        for (i, (panel_area, (name, points))) in areas.iter().zip(&series).enumerate() {
            let mut chart = panel(
                FILE,
                panel_area,
                name,
                size,
                0.0..x_max,
                0.0..panel_top(y_max),
                &tick,
                5,
            )?;
            let lines: Vec<String> = tie_note(&tied[i], 2).into_iter().collect();
            notes(FILE, panel_area, &chart, &lines)?;
            let (at, across) = (limit as f64, (0.0, x_max));
            reference_line(FILE, &mut chart, panel_area, marks, &limit_name, at, across)?;
            let c = colour_among(&names, name);
            draw_steps(
                FILE,
                &mut chart,
                panel_area,
                marks,
                name,
                points,
                timeline.width(),
                c,
                |x, y| {
                    format!(
                        "{name}, {}: busiest key held {y:.0} of {limit} in its window",
                        timeline.at(x)
                    )
                },
            )?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: format!(
            "Per time bucket, the most requests any one key had admitted in its rolling {} \
             window, under each algorithm, against the policy's limit of {limit} (black): the \
             limit bounds this per-key count, not the total rate.",
            format_duration(window)
        ),
        title,
        svg,
    })
}
