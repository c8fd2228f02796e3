//! Sweep chart: one figure over two swept fields, one cell per pair of values, shaded from
//! light (lowest) to dark (highest) and labelled with its value.

use super::{FONT, LegendEntry, Mark, axes, plot_err, render};
use crate::error::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const FILE: &str = "heatmap.svg";

pub struct Heatmap<'a> {
    pub figure: &'a str,
    pub contender: &'a str,
    pub x_field: &'a str,
    pub x_labels: Vec<String>,
    pub y_field: &'a str,
    pub y_labels: Vec<String>,
    /// `cells[y][x]`; `None` when the figure has no value there.
    pub cells: Vec<Vec<Option<f64>>>,
    pub note: &'a str,
}

fn shade(t: f64) -> RGBColor {
    // From a pale to a deep blue: dark is high.
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    RGBColor(lerp(0xEF, 0x08), lerp(0xF3, 0x30), lerp(0xFF, 0x6B))
}

pub fn chart(h: &Heatmap) -> Result<super::Chart> {
    let title = format!(
        "{} of {} over {} and {}",
        h.figure, h.contender, h.x_field, h.y_field
    );
    let values: Vec<f64> = h.cells.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let label = labeller(&values);
    let legend = [
        LegendEntry {
            label: format!("lowest: {}", label(lo)),
            colour: shade(0.0),
            mark: Mark::Box,
            series: None,
        },
        LegendEntry {
            label: format!("highest: {}", label(hi)),
            colour: shade(1.0),
            mark: Mark::Box,
            series: None,
        },
    ];
    let (nx, ny) = (h.x_labels.len().max(1), h.y_labels.len().max(1));
    // Where a value falls between the lowest (0) and the highest (1).
    let level = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(FILE, area, &title, 80, 0.0..nx as f64, 0.0..ny as f64)?;
        draw_mesh(&mut chart, h, (nx, ny))?;
        marks.begin(area, h.contender)?;
        for (x, y, v) in cells(h) {
            let (x0, y0) = (x as f64, y as f64);
            let title = format!(
                "{}, {} = {}, {} = {}: {}",
                h.contender,
                h.x_field,
                h.x_labels.get(x).map_or("", String::as_str),
                h.y_field,
                h.y_labels.get(y).map_or("", String::as_str),
                label(v)
            );
            marks.bar(
                chart.backend_coord(&(x0, y0)),
                chart.backend_coord(&(x0 + 1.0, y0 + 1.0)),
                shade(level(v)),
                &title,
            );
        }
        // The cells' labels after the group, which ends with the cells themselves.
        marks.end(area)?;
        let text = (FONT, 12).into_font();
        let centre = Pos::new(HPos::Center, VPos::Center);
        for (x, y, v) in cells(h) {
            let colour = if level(v) > 0.5 { WHITE } else { BLACK };
            chart
                .draw_series([Text::new(
                    label(v),
                    (x as f64 + 0.5, y as f64 + 0.5),
                    text.clone().color(&colour).pos(centre),
                )])
                .map_err(plot_err(FILE))?;
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: format!(
            "`{}` of {} for each pair of `{}` and `{}`{}; darker is higher.",
            h.figure, h.contender, h.x_field, h.y_field, h.note
        ),
        title,
        svg,
    })
}

/// The cells that hold a value: `(x, y, value)`, row by row.
fn cells<'a>(h: &'a Heatmap) -> impl Iterator<Item = (usize, usize, f64)> + 'a {
    h.cells.iter().enumerate().flat_map(|(y, row)| {
        row.iter()
            .enumerate()
            .filter_map(move |(x, cell)| cell.map(|v| (x, y, v)))
    })
}

/// The axes' labels: each field's values at the middle of their cells, no grid.
fn draw_mesh(
    chart: &mut ChartContext<SVGBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    h: &Heatmap,
    (nx, ny): (usize, usize),
) -> Result<()> {
    let middle = |labels: &[String], v: &f64| {
        if v.fract() == 0.5 {
            labels.get(v.floor() as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(nx * 2 + 1)
        .y_labels(ny * 2 + 1)
        .x_label_formatter(&|v| middle(&h.x_labels, v))
        .y_label_formatter(&|v| middle(&h.y_labels, v))
        .x_desc(h.x_field)
        .y_desc(h.y_field)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(plot_err(FILE))
}

/// A cell's label: whole numbers when every cell is one, else four decimals in every cell, so
/// `1` never stands beside `0.1980` as if it were exact and the other not.
fn labeller(values: &[f64]) -> impl Fn(f64) -> String {
    let whole = values.iter().all(|v| v.fract() == 0.0 && v.abs() < 1e9);
    move |v: f64| {
        if whole {
            format!("{v:.0}")
        } else {
            format!("{v:.4}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_carry_their_values() {
        let c = chart(&Heatmap {
            figure: "legit_goodput",
            contender: "gcra",
            x_field: "policy.limit",
            x_labels: vec!["10".into(), "20".into()],
            y_field: "policy.burst",
            y_labels: vec!["0".into()],
            cells: vec![vec![Some(0.5), Some(0.9999)]],
            note: "",
        })
        .unwrap();
        assert!(
            c.svg.contains("\n0.5000\n</text>") && c.svg.contains("\n0.9999\n</text>"),
            "{}",
            c.svg
        );
        assert!(
            c.svg.contains("\npolicy.limit\n</text>") && c.svg.contains("\npolicy.burst\n</text>")
        );
        // A whole value beside fractions has the same four decimals.
        let c = chart(&Heatmap {
            figure: "legit_goodput",
            contender: "gcra",
            x_field: "policy.limit",
            x_labels: vec!["10".into(), "20".into()],
            y_field: "policy.burst",
            y_labels: vec!["0".into()],
            cells: vec![vec![Some(1.0), Some(0.198)]],
            note: "",
        })
        .unwrap();
        assert!(c.svg.contains("\n1.0000\n</text>") && c.svg.contains("\n0.1980\n</text>"));
    }
}
