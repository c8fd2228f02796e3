//! Chart 7, for closed-loop scenarios (clients that retry rejected requests): retries per
//! second over time, one panel per algorithm and one line per source that retries, so the
//! comparison such a scenario exists for (clients retrying at once against clients backing
//! off) reads at a glance. Retries depend on the algorithm's rejections, so each has its own.

use super::{
    LegendEntry, Mark, Marks, PALETTE, Timeline, caption_size, draw_steps, figure, headroom, panel,
    panels, render, tick,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::{NANOS_PER_SEC, format_duration};
use crate::traffic::Retry;
use plotters::prelude::*;

pub const FILE: &str = "retries.svg";

/// Whether any source's clients retry after a rejection.
pub fn applies(scenario: &Scenario) -> bool {
    scenario.reactions.iter().any(|r| r.max_retries > 0)
}

/// How a source's clients retry, in a few words.
fn how(retry: &Retry) -> &'static str {
    match retry {
        Retry::GiveUp => "gives up",
        Retry::Immediately => "retries at once",
        Retry::AfterRetryAfter => "retries at Retry-After",
        Retry::Backoff { .. } => "backs off",
    }
}

/// A source's colour: the second half of the palette, in the scenario's order, so sources are
/// not mistaken for the algorithms the other charts colour with the first half.
fn source_colour(i: usize) -> RGBColor {
    PALETTE[(10 + i) % PALETTE.len()]
}

/// What to see: who draws the most retries (every row of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let top = super::most(algorithms, |a| a.retries as f64);
    let a = top.first()?;
    let peak = super::most(algorithms, |a| a.peak_pending_retries as f64);
    let waiting = if top
        .iter()
        .all(|t| t.peak_pending_retries == a.peak_pending_retries)
    {
        format!("up to {} waiting at once", a.peak_pending_retries)
    } else {
        format!(
            "the most waiting at once: {} under {}",
            peak[0].peak_pending_retries,
            super::and_list(
                &peak
                    .iter()
                    .map(|p| format!("`{}`", p.algorithm))
                    .collect::<Vec<_>>()
            )
        )
    };
    let each = if top.len() > 1 { " each" } else { "" };
    Some(format!(
        "{} the most retries ({}{each}, {waiting}).",
        super::who(&top, "draws", "draw"),
        a.retries
    ))
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Retries over time, by source: {}", scenario.name);
    let timeline = Timeline::new(scenario);
    let per_sec = NANOS_PER_SEC as f64 / scenario.bucket as f64;
    // The sources whose clients retry, with their index in the scenario.
    let retrying: Vec<(usize, String)> = scenario
        .reactions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.max_retries > 0)
        .map(|(i, r)| {
            let name = scenario.traffic.get(i).map_or("?", |s| s.name.as_str());
            (i, format!("{name} ({})", how(&r.retry)))
        })
        .collect();
    let lines: Vec<Vec<Vec<(f64, f64)>>> = algorithms
        .iter()
        .map(|a| {
            retrying
                .iter()
                .map(|(s, _)| {
                    let counts = a.retries_by_source.get(*s);
                    timeline.series(|i| {
                        counts.and_then(|c| c.get(i)).copied().unwrap_or(0) as f64 * per_sec
                    })
                })
                .collect()
        })
        .collect();
    let y_max = lines
        .iter()
        .flatten()
        .flatten()
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let legend: Vec<LegendEntry> = retrying
        .iter()
        .enumerate()
        .map(|(k, (_, label))| LegendEntry::other(label, source_colour(k), Mark::Line))
        .collect();
    let y_desc = format!(
        "retries/s (per {} bucket)",
        format_duration(scenario.bucket)
    );
    let x_desc = format!("time ({})", timeline.unit_name);
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(FILE, area, &title, &x_desc, &y_desc, algorithms.len())?;
        let size = caption_size(algorithms.len());
        for ((panel_area, a), sources) in areas.iter().zip(algorithms).zip(&lines) {
            let mut chart = panel(
                FILE,
                panel_area,
                &a.algorithm,
                size,
                0.0..timeline.x_max,
                0.0..headroom(y_max),
                &tick,
                5,
            )?;
            for (k, ((_, label), points)) in retrying.iter().zip(sources).enumerate() {
                draw_steps(
                    FILE,
                    &mut chart,
                    panel_area,
                    marks,
                    label,
                    points,
                    timeline.width(),
                    source_colour(k),
                    |x, y| {
                        format!(
                            "{}, {label}, {}: {} retries/s",
                            a.algorithm,
                            timeline.at(x),
                            figure(y)
                        )
                    },
                )?;
            }
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: "Retries per second of rejected requests, one panel per algorithm and one line \
                  per source whose clients retry, on one scale: how each way of retrying loads \
                  the limiter."
            .into(),
        title,
        svg,
    })
}
