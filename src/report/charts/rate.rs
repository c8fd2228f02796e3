//! Chart 1: admitted rate over time, one panel per algorithm (small multiples), each against
//! the offered load, on one shared scale. The policy limits each key, not the total, so its
//! limit is drawn where it bounds something: on the busiest-key chart ([`super::busiest`]).

use super::{
    Area, LegendEntry, Mark, Marks, OFFERED, Timeline, caption_size, colour_among, draw_steps,
    figure, notes, panel, panel_top, panels, plot_err, render, row_names, steps, tick, tie_note,
    ties,
};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;
use plotters::prelude::*;

pub const FILE: &str = "admitted_rate.svg";

/// The offered load's legend label and series name.
pub fn offered_label(scenario: &Scenario) -> &'static str {
    if super::retries::applies(scenario) {
        "offered load (first tries)"
    } else {
        "offered load"
    }
}

/// What to see: whether, and who, refuses the most (every row of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let top = super::most(algorithms, |a| a.rejected as f64);
    let a = top.first()?;
    Some(if a.rejected == 0 {
        "no contender refuses anything: the admitted lines follow the offered load.".into()
    } else {
        let each = if top.len() > 1 { " each" } else { "" };
        format!(
            "where a line falls below the offered load, requests were refused; {} the most \
             ({} of {}{each}).",
            super::who(&top, "refuses", "refuse"),
            a.rejected,
            a.offered
        )
    })
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Admitted rate over time: {}", scenario.name);
    let rates = Rates::new(scenario, algorithms);
    let y_desc = match rates.costs {
        true => format!(
            "admitted cost/s (per {} bucket)",
            format_duration(scenario.bucket)
        ),
        false => format!(
            "admitted requests/s (per {} bucket)",
            format_duration(scenario.bucket)
        ),
    };
    let x_desc = format!("time ({})", rates.timeline.unit_name);
    let svg = render(FILE, &title, &rates.legend(), |area, marks: &mut Marks| {
        let areas = panels(FILE, area, &title, &x_desc, &y_desc, algorithms.len())?;
        let size = caption_size(algorithms.len());
        for (i, (panel_area, a)) in areas.iter().zip(algorithms).enumerate() {
            rates.draw_panel(i, a, panel_area, size, marks)?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: match rates.costs {
            true => format!(
                "The cost of the requests admitted per second under each algorithm, one panel \
                 each, over the offered cost (grey), from 0 to the scenario's end ({}); a \
                 delayed request's cost counts when it is decided.",
                format_duration(scenario.duration)
            ),
            false => format!(
                "Requests reaching the backend per second under each algorithm, one panel each, \
                 over the offered load (grey), from 0 to the scenario's end ({}).",
                format_duration(scenario.duration)
            ),
        },
        title,
        svg,
    })
}

/// What the panels draw, on one shared scale: the offered load under each row's admitted rate.
struct Rates<'a> {
    timeline: Timeline,
    names: Vec<&'a str>,
    offered_name: &'static str,
    offered: Vec<(f64, f64)>,
    admitted: Vec<(&'a str, Vec<(f64, f64)>)>,
    /// The rows each row's series coincides with.
    tied: Vec<Vec<&'a str>>,
    y_max: f64,
    /// Requests weigh more than one: the rates are of cost.
    costs: bool,
}

impl<'a> Rates<'a> {
    fn new(scenario: &Scenario, algorithms: &'a [AlgorithmReport]) -> Rates<'a> {
        let timeline = Timeline::new(scenario);
        let costs = algorithms.iter().any(|a| a.cost.is_some());
        // First tries are the same under every algorithm (retries depend on its rejections):
        // they are the load. Without retrying clients they are all that is offered.
        let offered = algorithms
            .first()
            .map(|a| match costs {
                true => timeline.rates(a, |b| b.cost_offered),
                false => timeline.rates(a, |b| b.offered - b.retries),
            })
            .unwrap_or_default();
        let admitted: Vec<(&str, Vec<(f64, f64)>)> = algorithms
            .iter()
            .map(|a| {
                let rates = match costs {
                    true => timeline.rates(a, |b| b.cost_admitted),
                    false => timeline.rates(a, |b| b.admitted),
                };
                (a.algorithm.as_str(), rates)
            })
            .collect();
        let tied = ties(
            &algorithms
                .iter()
                .map(|a| (a.algorithm.as_str(), &a.timeseries))
                .collect::<Vec<_>>(),
        );
        let y_max = admitted
            .iter()
            .flat_map(|(_, s)| s)
            .chain(&offered)
            .map(|p| p.1)
            .fold(0.0, f64::max);
        Rates {
            timeline,
            names: row_names(algorithms),
            offered_name: match (costs, offered_label(scenario)) {
                (true, "offered load") => "offered cost",
                (true, _) => "offered cost (first tries)",
                (false, label) => label,
            },
            offered,
            admitted,
            tied,
            y_max,
            costs,
        }
    }

    /// The offered load, then each row (named with the rows it ties with).
    fn legend(&self) -> Vec<LegendEntry> {
        let mut legend = vec![LegendEntry::other(self.offered_name, OFFERED, Mark::Line)];
        legend.extend(
            self.admitted
                .iter()
                .zip(&self.tied)
                .map(|((name, _), tie)| LegendEntry::tied(&self.names, name, Mark::Line, tie)),
        );
        legend
    }

    /// Row `i`'s panel: its notes, the offered load, then its own line with hover points.
    fn draw_panel(
        &self,
        i: usize,
        a: &AlgorithmReport,
        panel_area: &Area,
        size: u32,
        marks: &mut Marks,
    ) -> Result<()> {
        let (name, points) = &self.admitted[i];
        let timeline = &self.timeline;
        let mut lines: Vec<String> = tie_note(&self.tied[i], 2).into_iter().collect();
        let late = timeline.after_end(a, |b| b.admitted);
        if late > 0 {
            lines.push(format!("+{late} released after the end"));
        }
        let mut chart = panel(
            FILE,
            panel_area,
            name,
            size,
            0.0..timeline.x_max,
            0.0..panel_top(self.y_max),
            &tick,
            5,
        )?;
        notes(FILE, panel_area, &chart, &lines)?;
        marks.begin(panel_area, self.offered_name)?;
        chart
            // A wide band under the row's line: where all the load is admitted, the
            // line runs inside it instead of hiding it.
            .draw_series(LineSeries::new(
                steps(&self.offered, timeline.width()),
                OFFERED.stroke_width(6),
            ))
            .map_err(plot_err(FILE))?;
        marks.end(panel_area)?;
        let c = colour_among(&self.names, name);
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
                let unit = if self.costs { "cost/s" } else { "req/s" };
                format!("{name}, {}: {} {unit}", timeline.at(x), figure(y))
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, rejected: u64) -> AlgorithmReport {
        AlgorithmReport {
            algorithm: name.into(),
            rejected,
            offered: 100,
            ..AlgorithmReport::default()
        }
    }

    #[test]
    fn the_lead_names_every_row_tied_for_the_most_refusals() {
        let rows = [
            row("fixed_window", 40),
            row("sliding_window_log", 10),
            row("token_bucket", 40),
            row("gcra", 40),
            row("leaky_bucket", 40),
        ];
        assert_eq!(
            lead(&rows).unwrap(),
            "where a line falls below the offered load, requests were refused; `fixed_window`, \
             `token_bucket`, `gcra` and `leaky_bucket` refuse the most (40 of 100 each)."
        );
        assert!(
            lead(&rows[1..2])
                .unwrap()
                .ends_with("`sliding_window_log` refuses the most (10 of 100).")
        );
    }
}
