//! Chart 2: the worst moment, one panel per algorithm (small multiples: each row peaks on its
//! own key at its own time, so overlaying them would mix unrelated instants). Each panel draws
//! the admitted count of the row's worst key in the rolling window `(s − W, s]`, for `s` from
//! one window before the worst window's end to one window after, names the key and the time,
//! and draws the policy limit, the quantity's bound. The peak is `max_window_admitted`.

use super::{
    LegendEntry, Mark, Marks, PLOT_PIXELS, REFERENCE, caption_size, colour_among, downsample,
    hover_points, notes, panel, panel_top, panels, plot_err, reference_line, render, row_names,
    tick, tie_note, ties, time_unit,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::report::table::shown_key;
use crate::scenario::Scenario;
use crate::time::{Nanos, format_duration};
use plotters::prelude::*;

/// The chart's file name under `charts/`.
pub const FILE: &str = "worst_moment.svg";

/// The rolling count `R(s) = |{a : s − W < a ≤ s}|` for `s` in `[end − W, end + W]`, as the
/// corners of a step function, with `s` relative to `end`; each admission weighing its
/// `units` (empty: one each). `admissions` must hold every admission in `(end − 2W, end + W]`
/// (what the recorder keeps), sorted.
pub fn rolling_count(
    admissions: &[Nanos],
    units: &[u64],
    end: Nanos,
    window: Nanos,
) -> Vec<(i128, u64)> {
    let (from, to) = (end as i128 - window as i128, end as i128 + window as i128);
    // An admission a enters the window at s = a and leaves at s = a + W.
    let mut changes: Vec<(i128, i64)> = Vec::with_capacity(admissions.len() * 2);
    for (i, &a) in admissions.iter().enumerate() {
        let u = units.get(i).map_or(1, |&u| u as i64);
        changes.push((a as i128, u));
        changes.push((a as i128 + window as i128, -u));
    }
    changes.sort_unstable();
    let mut count: i64 = 0;
    let mut steps = Vec::with_capacity(changes.len() + 2);
    let mut i = 0;
    while i < changes.len() && changes[i].0 <= from {
        count += changes[i].1;
        i += 1;
    }
    steps.push((from - end as i128, count as u64));
    while i < changes.len() && changes[i].0 <= to {
        let at = changes[i].0;
        let before = count;
        while i < changes.len() && changes[i].0 == at {
            count += changes[i].1;
            i += 1;
        }
        if count != before {
            steps.push((at - end as i128, before as u64));
            steps.push((at - end as i128, count as u64));
        }
    }
    steps.push((to - end as i128, count as u64));
    steps.dedup();
    steps
}

/// What to see: the rows whose key peaks highest (every row of a tie named, each with its key).
/// `what`: what a window holds (`admissions`, or `units of cost`).
fn lead(algorithms: &[AlgorithmReport], what: &str) -> Option<String> {
    let top = super::most(algorithms, |a| a.burst_factor);
    let a = top.first()?;
    let mut keys: Vec<String> = top
        .iter()
        .map(|t| format!("`{}`", shown_key(&t.worst_window_key)))
        .collect();
    keys.dedup();
    let (each, key) = match (top.len(), keys.len()) {
        (1, _) => ("", format!("key {}", keys[0])),
        (_, 1) => (" each", format!("key {}", keys[0])),
        _ => (" each", format!("keys {}", super::and_list(&keys))),
    };
    Some(format!(
        "{} one key reach {} {what} in a rolling window{each} (burst factor {:.2}, {key}).",
        super::who(&top, "lets", "let"),
        a.max_window_admitted,
        a.burst_factor,
    ))
}

/// The line a row's rolling count is drawn against.
struct Bound {
    limit: u64,
    window: Nanos,
    limit_name: String,
    /// The y axis: what a window holds.
    counted: &'static str,
    /// What a window holds, for the lead (`admissions`, `units of cost`, `input tokens`).
    what: &'static str,
    /// The chart's caption.
    caption: String,
}

impl Bound {
    fn of(scenario: &Scenario) -> Bound {
        match scenario.intent.unit.is_requests() {
            true => {
                let (limit, window) = (scenario.policy.limit, scenario.policy.window);
                Bound {
                    limit,
                    window,
                    limit_name: format!("policy limit ({limit} per {})", format_duration(window)),
                    counted: "admitted in the rolling window (requests)",
                    what: "admissions",
                    caption: format!(
                        "For each algorithm, one panel: its worst key's admissions in the rolling \
                         window ending at each instant, around the window where that count peaked \
                         (the key and time are in the panel); above the black line ({limit}) the \
                         policy is violated."
                    ),
                }
            }
            false => {
                let base = &scenario.intent.base;
                let (limit, window) = (base.ceiling(), base.window);
                let unit = scenario.intent.unit;
                let (counted, what, sum) = match unit.is_tokens() {
                    true => (
                        "admitted in the rolling window (tokens used)",
                        unit.noun(),
                        format!(
                            "the {} its worst client's admitted requests used",
                            unit.noun()
                        ),
                    ),
                    false => (
                        "admitted in the rolling window (units of cost settled)",
                        "units of cost",
                        "the units of cost its worst client's admissions settled".to_string(),
                    ),
                };
                Bound {
                    limit,
                    window,
                    limit_name: format!(
                        "intent ({limit} {} per {})",
                        unit.noun(),
                        format_duration(window)
                    ),
                    counted,
                    what,
                    caption: format!(
                        "For each algorithm, one panel: {sum} in the rolling window ending at \
                         each instant, around the window where that sum peaked (the client and \
                         time are in the panel); above the black line ({limit}) the intent is \
                         exceeded."
                    ),
                }
            }
        }
    }
}

/// The worst-moment chart of a run: one panel per row, its worst key's rolling admitted count
/// around `worst_window_end_ns`, against the policy's limit.
pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let names = row_names(algorithms);
    let title = format!("The worst moment: {}", scenario.name);
    let Bound {
        limit,
        window,
        limit_name,
        counted,
        what,
        caption,
    } = Bound::of(scenario);
    let (unit, unit_name) = time_unit(2 * window);
    let series = series(algorithms, window, unit);
    let tied = tied_rows(algorithms);
    let peak = algorithms
        .iter()
        .map(|a| a.max_window_admitted)
        .fold(limit, u64::max) as f64;
    let half = window as f64 / unit;
    let legend = legend(algorithms, &names, &tied, &limit_name);
    let x_desc = format!("time from the end of the row's worst window ({unit_name})");
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(FILE, area, &title, &x_desc, counted, series.len())?;
        let size = caption_size(series.len());
        for (i, (panel_area, (name, points))) in areas.iter().zip(&series).enumerate() {
            let a = &algorithms[i];
            let mut chart = panel(
                FILE,
                panel_area,
                name,
                size,
                -half..half,
                0.0..panel_top(peak),
                &tick,
                5,
            )?;
            let (at, across) = (limit as f64, (-half, half));
            reference_line(FILE, &mut chart, panel_area, marks, &limit_name, at, across)?;
            let c = colour_among(&names, name);
            marks.begin(panel_area, name)?;
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(plot_err(FILE))?;
            // Which key and when: rows peak on different keys at different times.
            let at = format_duration(a.worst_window_end_ns);
            let key = if a.worst_window_key.is_empty() {
                "no admission".to_string()
            } else {
                format!("key {} at {at}", shown_key(&a.worst_window_key))
            };
            let mut lines = vec![key.clone()];
            lines.extend(tie_note(&tied[i], 1));
            notes(FILE, panel_area, &chart, &lines)?;
            for &(x, y) in &hover_points(points) {
                let title = format!(
                    "{name}, {key}, {} {unit_name} from its worst window's end: {y:.0} admitted \
                     in the window",
                    tick(&x)
                );
                marks.point(chart.backend_coord(&(x, y)), c, false, &title);
            }
            marks.end(panel_area)?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms, what),
        caption,
        title,
        svg,
    })
}

/// Each row's rolling count around its worst window, in axis units, downsampled.
fn series(
    algorithms: &[AlgorithmReport],
    window: Nanos,
    unit: f64,
) -> Vec<(&str, Vec<(f64, f64)>)> {
    algorithms
        .iter()
        .map(|a| {
            let steps = rolling_count(
                &a.worst_window_admissions,
                &a.worst_window_units,
                a.worst_window_end_ns,
                window,
            );
            let points: Vec<(f64, f64)> = steps
                .into_iter()
                .map(|(s, n)| (s as f64 / unit, n as f64))
                .collect();
            (a.algorithm.as_str(), downsample(&points, PLOT_PIXELS))
        })
        .collect()
}

/// Rows tie when they peaked on the same key at the same instant with the same history.
fn tied_rows(algorithms: &[AlgorithmReport]) -> Vec<Vec<&str>> {
    ties(
        &algorithms
            .iter()
            .map(|a| {
                let data = (
                    &a.worst_window_key,
                    a.worst_window_end_ns,
                    &a.worst_window_admissions,
                );
                (a.algorithm.as_str(), data)
            })
            .collect::<Vec<_>>(),
    )
}

/// One entry per row with its peak, then the policy limit.
fn legend(
    algorithms: &[AlgorithmReport],
    names: &[&str],
    tied: &[Vec<&str>],
    limit_name: &str,
) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = algorithms
        .iter()
        .zip(tied)
        .map(|(a, tie)| {
            let mut e = LegendEntry::tied(names, &a.algorithm, Mark::Line, tie);
            e.label = format!("{} (peak {})", e.label, a.max_window_admitted);
            e
        })
        .collect();
    legend.push(LegendEntry::other(limit_name, REFERENCE, Mark::Line));
    legend
}

#[cfg(test)]
mod tests {
    use super::rolling_count;

    #[test]
    fn rolling_count_steps() {
        // W = 10, end = 20, admissions at 5, 15, 15, 20. R(s) counts a in (s − 10, s].
        let steps = rolling_count(&[5, 15, 15, 20], &[], 20, 10);
        let expected = [
            (-10, 1), // s = 10: (0, 10] holds 5
            (-5, 1),
            (-5, 2), // s = 15: 5 leaves, the two at 15 enter
            (0, 2),
            (0, 3), // s = 20: the worst window's end
            (5, 3),
            (5, 1), // s = 25: the two at 15 leave
            (10, 1),
            (10, 0), // s = 30: 20 leaves
        ];
        assert_eq!(steps, expected);
    }
}
