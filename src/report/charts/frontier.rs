//! Sweep chart: the trade-off frontier. Each row of a sweep is one point: legitimate goodput
//! (up is better) against abusive leakage (left is better), each contender in its colour and
//! its own marker shape (so coincident points of two contenders both show), each point labelled
//! with its swept values. A contender's points are joined in parameter order (the first swept
//! axis rising), one line per value of the other axes, never by leakage, which zigzags.
//! Pareto-optimal rows (no other row has as much goodput for as little leakage, and strictly
//! better on one) get a black ring. Contenders whose every point coincides are named together
//! (`gcra (= token_bucket)`), and the caption names points of different contenders that
//! coincide.

use super::{
    Area, FONT, LegendEntry, Mark, Marks, Plot, REFERENCE, and_list, axes, colour_among, leaders,
    plot_err, render, tick, tie_names,
};
use crate::error::Result;
use plotters::prelude::*;

pub const FILE: &str = "frontier.svg";

/// One row of the sweep: `(leakage, goodput)` and its swept values (`10, 30s`).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub at: (f64, f64),
    pub label: String,
}

/// One contender's points: one line per value of the other axes, each in parameter order.
pub struct Series<'a> {
    pub name: &'a str,
    pub lines: Vec<Vec<Point>>,
}

impl Series<'_> {
    fn points(&self) -> impl Iterator<Item = &Point> {
        self.lines.iter().flatten()
    }
}

/// Whether `p` is Pareto-optimal among `all` (less leakage and more goodput are better).
pub fn pareto(p: (f64, f64), all: &[(f64, f64)]) -> bool {
    !all.iter()
        .any(|q| q.0 <= p.0 && q.1 >= p.1 && (q.0 < p.0 || q.1 > p.1))
}

/// The plot's ranges: leakage from 0, goodput from just under its smallest value to 1.
fn ranges(all: &[(f64, f64)]) -> ((f64, f64), (f64, f64)) {
    let x_max = all.iter().map(|p| p.0).fold(0.0f64, f64::max).max(0.01) * 1.05;
    let y_min = all.iter().map(|p| p.1).fold(1.0f64, f64::min);
    let y_lo = (y_min - (1.0 - y_min).max(0.01) * 0.1).max(0.0);
    ((0.0, x_max), (y_lo, 1.0 + (1.0 - y_lo) * 0.02))
}

/// Points closer than this share of both axes are drawn on top of each other (about 3 px).
const COINCIDE: f64 = 0.005;

/// `labels` is what the point labels show (`policy.limit, policy.window`).
pub fn chart(scenario: &str, labels: &str, series: &[Series]) -> Result<super::Chart> {
    let title = format!("Goodput against leakage: {scenario}");
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points().map(|p| p.at))
        .collect();
    let ((x_lo, x_hi), (y_lo, y_hi)) = ranges(&all);
    let close = |a: (f64, f64), b: (f64, f64)| {
        (a.0 - b.0).abs() <= COINCIDE * (x_hi - x_lo)
            && (a.1 - b.1).abs() <= COINCIDE * (y_hi - y_lo)
    };
    let optimal: Vec<(f64, f64)> = all.iter().copied().filter(|p| pareto(*p, &all)).collect();
    let names: Vec<&str> = series.iter().map(|s| s.name).collect();
    // A contender whose every point sits on an earlier one's is named with it.
    let leader = leaders(series.len(), |i, j| {
        let (a, b): (Vec<_>, Vec<_>) = (series[i].points().collect(), series[j].points().collect());
        a.len() == b.len() && a.iter().zip(&b).all(|(p, q)| close(p.at, q.at))
    });
    let legend = legend(series, &names, &tie_names(&names, &leader), labels);
    let mut left_out = 0;
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(FILE, area, &title, 70, x_lo..x_hi, y_lo..y_hi)?;
        draw_mesh(&mut chart)?;
        let pixels: Vec<Vec<(i32, i32)>> = series
            .iter()
            .map(|s| s.points().map(|p| chart.backend_coord(&p.at)).collect())
            .collect();
        let mut placer = Labels::new(
            pixels.iter().flatten().copied(),
            chart.backend_coord(&(x_lo, y_lo)),
            chart.backend_coord(&(x_hi, y_hi)),
        );
        for (k, s) in series.iter().enumerate() {
            let c = colour_among(&names, s.name);
            marks.begin(area, s.name)?;
            // A tied contender's lines and labels are its leader's.
            let tied = leader[k].is_some();
            if !tied {
                draw_lines(&mut chart, s, c)?;
            }
            left_out += draw_points(s, k, c, &pixels[k], tied, &mut placer, marks);
            marks.end(area)?;
        }
        rings(&mut chart, marks, area, &optimal)
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: caption(series, labels, optimal.len(), left_out, &close),
        title,
        svg,
    })
}

/// Each contender (named with those it ties with), the rings, and what the labels show.
fn legend(series: &[Series], names: &[&str], tied: &[Vec<&str>], labels: &str) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = series
        .iter()
        .enumerate()
        .map(|(k, s)| LegendEntry::tied(names, s.name, Mark::Shape(k), &tied[k]))
        .collect();
    legend.push(LegendEntry::other(
        "Pareto-optimal (ringed)",
        REFERENCE,
        Mark::Box,
    ));
    legend.push(LegendEntry {
        label: format!("point labels: {labels}"),
        colour: WHITE,
        mark: Mark::Box,
        series: None,
    });
    legend
}

fn draw_mesh(chart: &mut Plot) -> Result<()> {
    chart
        .configure_mesh()
        .x_desc("abusive leakage (share of abusive requests admitted)")
        .y_desc("legit goodput (share of legit requests admitted)")
        .x_label_formatter(&tick)
        .y_label_formatter(&|v: &f64| format!("{v:.3}"))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(plot_err(FILE))
}

/// A contender's lines, each in parameter order.
fn draw_lines(chart: &mut Plot, s: &Series, c: RGBColor) -> Result<()> {
    for line in &s.lines {
        chart
            .draw_series(LineSeries::new(
                line.iter().map(|p| p.at),
                c.stroke_width(2),
            ))
            .map_err(plot_err(FILE))?;
    }
    Ok(())
}

/// Contender `k`'s markers at `pixels`, and their labels where the placer finds room (a tied
/// contender's points carry its leader's labels). Returns the labels left out.
fn draw_points(
    s: &Series,
    k: usize,
    c: RGBColor,
    pixels: &[(i32, i32)],
    tied: bool,
    placer: &mut Labels,
    marks: &mut Marks,
) -> usize {
    let mut left_out = 0;
    for (p, &at) in s.points().zip(pixels) {
        let title = format!(
            "{}, {}: leakage {:.1}%, goodput {:.1}%",
            s.name,
            p.label,
            100.0 * p.at.0,
            100.0 * p.at.1
        );
        marks.shape(at, k, c, &title);
        if tied {
            continue;
        }
        match placer.place(at, &p.label) {
            Some(at) => marks.label(at, "start", c, &p.label),
            None => left_out += 1,
        }
    }
    left_out
}

fn rings(chart: &mut Plot, marks: &mut Marks, area: &Area, optimal: &[(f64, f64)]) -> Result<()> {
    marks.begin(area, "Pareto-optimal (ringed)")?;
    chart
        .draw_series(
            optimal
                .iter()
                .map(|p| Circle::new(*p, 9, REFERENCE.stroke_width(2))),
        )
        .map_err(plot_err(FILE))?;
    marks.end(area)
}

/// The caption: what is drawn, the Pareto count, the points of different contenders that
/// coincide (so none is hidden unnamed), and how many labels crowded points left out.
fn caption(
    series: &[Series],
    labels: &str,
    optimal: usize,
    left_out: usize,
    close: &dyn Fn((f64, f64), (f64, f64)) -> bool,
) -> String {
    let fields: Vec<String> = labels.split(", ").map(|f| format!("`{f}`")).collect();
    let labels = fields.join(", ");
    let mut text = format!(
        "Every point of the sweep per contender (its colour and marker in the legend), labelled \
         with {labels}: up is more legitimate traffic served, left is less abusive traffic let \
         through. A contender's points are joined in the order of the first swept value, one \
         line per value of the others. The {optimal} ringed points are Pareto-optimal: no other \
         point serves as much for as little leakage."
    );
    let clusters = coincident(series, close);
    if !clusters.is_empty() {
        let shown: Vec<String> = clusters.iter().take(3).cloned().collect();
        let more = match clusters.len() - shown.len() {
            0 => String::new(),
            n => format!(", and {n} more such groups (see `sweep.csv`)"),
        };
        text += &format!(
            " Points drawn on top of each other: {}{more}.",
            shown.join("; ")
        );
    }
    if left_out > 0 {
        text += &format!(
            " {left_out} labels are left out where points crowd; each point's hover title has \
             its values."
        );
    }
    text
}

/// Groups of points of different contenders that coincide: `` `a` (10, 30s) and `b` (10, 30s) ``.
fn coincident(series: &[Series], close: &dyn Fn((f64, f64), (f64, f64)) -> bool) -> Vec<String> {
    let points: Vec<(usize, &Point)> = series
        .iter()
        .enumerate()
        .flat_map(|(k, s)| s.points().map(move |p| (k, p)))
        .collect();
    let mut taken = vec![false; points.len()];
    let mut out = Vec::new();
    for i in 0..points.len() {
        if taken[i] {
            continue;
        }
        let group: Vec<usize> = (i..points.len())
            .filter(|&j| !taken[j] && close(points[i].1.at, points[j].1.at))
            .collect();
        let contenders: std::collections::BTreeSet<usize> =
            group.iter().map(|&j| points[j].0).collect();
        if contenders.len() < 2 {
            continue;
        }
        for &j in &group {
            taken[j] = true;
        }
        let members: Vec<String> = group
            .iter()
            .map(|&j| format!("`{}` ({})", series[points[j].0].name, points[j].1.label))
            .collect();
        out.push(and_list(&members));
    }
    out
}

/// Places point labels where they overlap neither another label nor a marker: right of the
/// point, else left, above or below; `None` when all four are taken.
struct Labels {
    taken: Vec<[i32; 4]>,
    /// The plot's pixel box: `[left, top, right, bottom]`.
    plot: [i32; 4],
}

impl Labels {
    fn new(markers: impl Iterator<Item = (i32, i32)>, low: (i32, i32), high: (i32, i32)) -> Self {
        Labels {
            taken: markers.map(|(x, y)| [x - 5, y - 5, x + 5, y + 5]).collect(),
            plot: [low.0, high.1, high.0, low.1],
        }
    }

    fn place(&mut self, (x, y): (i32, i32), text: &str) -> Option<(i32, i32)> {
        // 12 px text: about 6.6 px a character, 12 px tall.
        let w = (text.chars().count() as f64 * 6.6).ceil() as i32;
        let candidates = [
            (x + 8, y),
            (x - 8 - w, y),
            (x - w / 2, y - 13),
            (x - w / 2, y + 13),
        ];
        let overlaps =
            |a: &[i32; 4], b: &[i32; 4]| a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
        for (lx, ly) in candidates {
            let rect = [lx, ly - 6, lx + w, ly + 6];
            let inside = rect[0] >= self.plot[0]
                && rect[2] <= self.plot[2]
                && rect[1] >= self.plot[1]
                && rect[3] <= self.plot[3];
            if inside && !self.taken.iter().any(|t| overlaps(t, &rect)) {
                self.taken.push(rect);
                return Some((lx, ly));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at: (f64, f64), label: &str) -> Point {
        Point {
            at,
            label: label.into(),
        }
    }

    #[test]
    fn pareto_points_are_not_dominated() {
        let all = [(0.1, 0.9), (0.2, 0.95), (0.2, 0.9), (0.0, 0.5)];
        let marked: Vec<bool> = all.iter().map(|p| pareto(*p, &all)).collect();
        assert_eq!(marked, [true, true, false, true]);
    }

    #[test]
    fn the_chart_has_its_series_rings_and_labels() {
        let series = [
            Series {
                name: "gcra",
                lines: vec![vec![point((0.1, 0.9), "10"), point((0.2, 0.99), "20")]],
            },
            Series {
                name: "fixed_window",
                lines: vec![vec![point((0.3, 0.95), "10")]],
            },
        ];
        let c = chart("t", "policy.limit", &series).unwrap();
        assert!(c.svg.contains("<title>Goodput against leakage: t</title>"));
        assert!(c.svg.contains("\ngcra\n</text>") && c.svg.contains("\nfixed_window\n</text>"));
        assert!(c.caption.contains("The 2 ringed points"), "{}", c.caption);
        assert!(
            c.svg
                .contains(&super::super::hex(super::super::colour("gcra")))
        );
        // Every point is labelled with its swept value, and the legend says what labels show.
        assert_eq!(c.svg.matches(">10</text>").count(), 2, "{}", c.svg);
        assert_eq!(c.svg.matches(">20</text>").count(), 1);
        assert!(c.svg.contains("\npoint labels: policy.limit\n</text>"));
        // Distinct markers: gcra's circles, fixed_window's square.
        assert!(c.svg.contains("<rect x=") && c.svg.contains("<title>fixed_window, 10: leakage"));
    }

    #[test]
    fn lines_join_points_in_parameter_order_and_coincident_contenders_are_named() {
        // Leakage falls and rises again as the limit grows: joined by limit, not by leakage.
        let line = vec![
            point((0.3, 0.5), "10"),
            point((0.1, 0.8), "50"),
            point((0.2, 0.99), "100"),
        ];
        let series = [
            Series {
                name: "token_bucket",
                lines: vec![line.clone()],
            },
            Series {
                name: "gcra",
                lines: vec![line],
            },
        ];
        let c = chart("t", "policy.limit", &series).unwrap();
        assert!(
            c.svg.contains("\ngcra (= token_bucket)\n</text>"),
            "{}",
            c.svg
        );
        assert!(c.svg.contains("\ntoken_bucket (= gcra)\n</text>"));
        let stroke = |n: &str| format!("stroke=\"{}\"", super::super::hex(super::super::colour(n)));
        let polyline = c
            .svg
            .split("<polyline")
            .find(|l| l.contains(&stroke("token_bucket")))
            .and_then(|l| l.split("points=\"").nth(1))
            .and_then(|l| l.split('"').next())
            .unwrap();
        let xs: Vec<f64> = polyline
            .split_whitespace()
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 3);
        assert!(xs[0] > xs[2] && xs[2] > xs[1], "drawn 10, 50, 100: {xs:?}");
        // One line for the pair (the second is named, not drawn over the first).
        assert_eq!(c.svg.matches(&stroke("token_bucket")).count(), 1);
        assert_eq!(c.svg.matches(&stroke("gcra")).count(), 0);
        assert!(
            c.caption.contains("`token_bucket` (10) and `gcra` (10)"),
            "{}",
            c.caption
        );
    }
}
