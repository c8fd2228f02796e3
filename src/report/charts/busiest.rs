//! Chart 1b: the busiest key over time, one panel per algorithm. The policy's limit bounds each
//! key's admissions in its rolling window, not the total rate: this chart draws that quantity
//! (per time bucket, the most admissions any one key held in its window at an admission) against
//! the limit, so a violation shows as the line crossing it and a key held at the limit as the
//! line riding it. Under an intent per calendar period it draws each judged client's count in
//! its period instead, against the intent's limit: a month filling up, and resetting.

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
    let axis = Axis::of(scenario);
    let title = format!("{}: {}", axis.title, scenario.name);
    let timeline = Timeline::new(scenario);
    let limit = axis.limit;
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
    let limit_name = axis.limit_name;
    let mut legend: Vec<LegendEntry> = algorithms
        .iter()
        .zip(&tied)
        .map(|(a, tie)| LegendEntry::tied(&names, &a.algorithm, Mark::Line, tie))
        .collect();
    legend.push(LegendEntry::other(&limit_name, REFERENCE, Mark::Line));
    let y_desc = format!(
        "{} (per {} bucket)",
        axis.counted,
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
                        "{name}, {}: busiest {} held {y:.0} of {limit} in its {}",
                        timeline.at(x),
                        axis.who,
                        axis.span
                    )
                },
            )?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: axis.caption,
        title,
        svg,
    })
}

/// What the chart counts, and against which limit.
struct Axis {
    /// The title, before the scenario's name.
    title: String,
    limit: u64,
    limit_name: String,
    /// The y axis, before its bucket.
    counted: String,
    /// Whose count: `key` or `client`.
    who: &'static str,
    /// What it counts in: `window` or `period`.
    span: &'static str,
    caption: String,
}

impl Axis {
    fn of(scenario: &Scenario) -> Axis {
        let intent = &scenario.intent;
        if let Some(calendar) = intent.base.calendar {
            let limit = intent.base.limit;
            let who = if intent.per_client() { "client" } else { "key" };
            return Axis {
                title: format!("Busiest {who} against the intent"),
                limit,
                limit_name: format!("intent ({limit} per {calendar})"),
                counted: format!("most admitted to one {who} in its period"),
                who,
                span: "period",
                caption: format!(
                    "Per time bucket, the most requests any one {who} had admitted in its \
                     calendar period ({calendar}), under each algorithm, against the intent's \
                     allowance of {limit} (black): a period fills up, then starts again from 0."
                ),
            };
        }
        let (limit, window) = (scenario.policy.limit, scenario.policy.window);
        let window = format_duration(window);
        Axis {
            title: "Busiest key against the limit".to_string(),
            limit,
            limit_name: format!("policy limit ({limit} per {window})"),
            counted: format!("most admitted by one key in {window}"),
            who: "key",
            span: "window",
            caption: format!(
                "Per time bucket, the most requests any one key had admitted in its rolling \
                 {window} window, under each algorithm, against the policy's limit of {limit} \
                 (black): the limit bounds this per-key count, not the total rate."
            ),
        }
    }
}
