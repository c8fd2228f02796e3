//! Sweep chart: the trade-off frontier. Each row of a sweep is one point: legitimate goodput
//! (up is better) against abusive leakage (left is better), one curve per contender through its
//! points in order of leakage. Pareto-optimal rows (no other row has as much goodput for as
//! little leakage, and strictly better on one) get a black ring.

use super::{FONT, LegendEntry, Mark, REFERENCE, axes, colour, plot_err, render, tick};
use crate::error::Result;
use plotters::prelude::*;

pub const FILE: &str = "frontier.svg";

/// One contender's points: `(leakage, goodput)`.
pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
}

/// Whether `p` is Pareto-optimal among `all` (less leakage and more goodput are better).
pub fn pareto(p: (f64, f64), all: &[(f64, f64)]) -> bool {
    !all.iter()
        .any(|q| q.0 <= p.0 && q.1 >= p.1 && (q.0 < p.0 || q.1 > p.1))
}

pub fn chart(scenario: &str, series: &[Series]) -> Result<super::Chart> {
    let title = format!("Goodput against leakage: {scenario}");
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0f64, f64::max).max(0.01) * 1.05;
    let y_min = all.iter().map(|p| p.1).fold(1.0f64, f64::min);
    let y_lo = (y_min - (1.0 - y_min).max(0.01) * 0.1).max(0.0);
    let optimal: Vec<(f64, f64)> = all.iter().copied().filter(|p| pareto(*p, &all)).collect();
    let mut legend: Vec<LegendEntry> = series
        .iter()
        .map(|s| LegendEntry::algorithm(&[], s.name, Mark::Line))
        .collect();
    legend.push(LegendEntry::other(
        "Pareto-optimal (ringed)",
        REFERENCE,
        Mark::Box,
    ));
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(
            FILE,
            area,
            &title,
            70,
            0.0..x_max,
            y_lo..1.0 + (1.0 - y_lo) * 0.02,
        )?;
        chart
            .configure_mesh()
            .x_desc("abusive leakage (share of abusive requests admitted)")
            .y_desc("legit goodput (share of legit requests admitted)")
            .x_label_formatter(&tick)
            .y_label_formatter(&|v: &f64| format!("{v:.3}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        for s in series {
            let mut points = s.points.clone();
            points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            let c = colour(s.name);
            marks.begin(area, s.name)?;
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(plot_err(FILE))?;
            for &(x, y) in &points {
                let title = format!(
                    "{}: leakage {:.1}%, goodput {:.1}%",
                    s.name,
                    100.0 * x,
                    100.0 * y
                );
                marks.point(chart.backend_coord(&(x, y)), c, true, &title);
            }
            marks.end(area)?;
        }
        marks.begin(area, "Pareto-optimal (ringed)")?;
        chart
            .draw_series(
                optimal
                    .iter()
                    .map(|p| Circle::new(*p, 8, REFERENCE.stroke_width(2))),
            )
            .map_err(plot_err(FILE))?;
        marks.end(area)?;
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: format!(
            "Every point of the sweep per contender: up is more legitimate traffic served, left is \
             less abusive traffic let through. The {} ringed points are Pareto-optimal: no other \
             point serves as much for as little leakage.",
            optimal.len()
        ),
        title,
        svg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_points_are_not_dominated() {
        let all = [(0.1, 0.9), (0.2, 0.95), (0.2, 0.9), (0.0, 0.5)];
        let marked: Vec<bool> = all.iter().map(|p| pareto(*p, &all)).collect();
        assert_eq!(marked, [true, true, false, true]);
    }

    #[test]
    fn the_chart_has_its_series_and_rings() {
        let series = [
            Series {
                name: "gcra",
                points: vec![(0.1, 0.9), (0.2, 0.99)],
            },
            Series {
                name: "fixed_window",
                points: vec![(0.3, 0.95)],
            },
        ];
        let c = chart("t", &series).unwrap();
        assert!(c.svg.contains("<title>Goodput against leakage: t</title>"));
        assert!(c.svg.contains("\ngcra\n</text>") && c.svg.contains("\nfixed_window\n</text>"));
        assert!(c.caption.contains("The 2 ringed points"), "{}", c.caption);
        assert!(c.svg.contains(&super::super::hex(colour("gcra"))));
    }
}
