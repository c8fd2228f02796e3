//! Sweep chart: one figure against one swept value, one line per contender, each measured
//! value a visible point. Contenders whose lines would be indistinguishable are drawn once and
//! named together in the legend (`token_bucket (= gcra)`) and the caption.

use super::{
    FONT, LegendEntry, Mark, and_list, axes, colour_among, figure as figure_of, headroom,
    indistinguishable, leaders, plot_err, render, tick, tie_names,
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
    let names: Vec<&str> = series.iter().map(|(n, _)| *n).collect();
    let leader = leaders(series.len(), |i, j| {
        indistinguishable(&series[i].1, &series[j].1, y_hi - y_lo)
    });
    let tied = tie_names(&names, &leader);
    let legend: Vec<LegendEntry> = series
        .iter()
        .zip(&tied)
        .map(|((n, _), tie)| LegendEntry::tied(&names, n, Mark::Line, tie))
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
        for (i, (name, points)) in series.iter().enumerate() {
            // A group is drawn once, in its first row's colour; every row keeps its points.
            let c = colour_among(&names, names[leader[i].unwrap_or(i)]);
            marks.begin(area, name)?;
            if leader[i].is_none() {
                // Thin and pale: only the dots were measured, the line just joins them.
                chart
                    .draw_series(LineSeries::new(points.clone(), c.mix(0.5).stroke_width(1)))
                    .map_err(plot_err(FILE))?;
            }
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
        caption: format!(
            "`{figure}` of each contender as `{field}` varies{note}; each dot is a measured \
             point (the thin lines only join them).{}",
            same_note(&names, &leader, &tied)
        ),
        title,
        svg,
    })
}

/// The caption's note naming the contenders drawn as one line, if any.
fn same_note(names: &[&str], leader: &[Option<usize>], tied: &[Vec<&str>]) -> String {
    let groups: Vec<String> = (0..names.len())
        .filter(|&i| leader[i].is_none() && !tied[i].is_empty())
        .map(|i| {
            let mut all = vec![format!("`{}`", names[i])];
            all.extend(tied[i].iter().map(|o| format!("`{o}`")));
            and_list(&all)
        })
        .collect();
    if groups.is_empty() {
        String::new()
    } else {
        format!(
            " Drawn as one line (indistinguishable): {}.",
            groups.join("; ")
        )
    }
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

    #[test]
    fn identical_lines_are_drawn_once_and_named_together() {
        let line = vec![(90.0, 0.96), (100.0, 1.0)];
        let c = super::chart(
            "policy.limit",
            "legit_goodput",
            &[
                ("token_bucket", line.clone()),
                ("fixed_window", vec![(90.0, 0.5), (100.0, 0.7)]),
                ("gcra", line),
            ],
            "",
        )
        .unwrap();
        assert!(
            c.svg.contains("\ntoken_bucket (= gcra)\n</text>"),
            "{}",
            c.svg
        );
        assert!(c.svg.contains("\ngcra (= token_bucket)\n</text>"));
        assert!(
            c.caption.contains("`token_bucket` and `gcra`"),
            "{}",
            c.caption
        );
        // gcra's points stay (hover titles), its line is token_bucket's.
        assert!(
            c.svg
                .contains("<title>gcra, policy.limit = 90: legit_goodput = 0.96</title>")
        );
    }
}
