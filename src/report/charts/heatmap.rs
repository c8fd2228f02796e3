//! Sweep chart: one figure over two swept fields, one cell per pair of values, shaded from
//! light (lowest) to dark (highest) and labelled with its value.

use super::{FONT, LegendEntry, Mark, plot_err, render};
use crate::error::Result;
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
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = ChartBuilder::on(area)
            .caption(&title, (FONT, 22))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)
            .map_err(plot_err(FILE))?;
        let xl = |v: &f64| {
            h.x_labels
                .get(v.floor() as usize)
                .cloned()
                .unwrap_or_default()
        };
        let yl = |v: &f64| {
            h.y_labels
                .get(v.floor() as usize)
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nx * 2 + 1)
            .y_labels(ny * 2 + 1)
            .x_label_formatter(&|v| {
                if v.fract() == 0.5 {
                    xl(v)
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| {
                if v.fract() == 0.5 {
                    yl(v)
                } else {
                    String::new()
                }
            })
            .x_desc(h.x_field)
            .y_desc(h.y_field)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        let text = (FONT, 12).into_font();
        let centre = Pos::new(HPos::Center, VPos::Center);
        marks.begin(area, h.contender)?;
        for (y, row) in h.cells.iter().enumerate() {
            for (x, cell) in row.iter().enumerate() {
                let Some(v) = cell else { continue };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                let (x0, y0) = (x as f64, y as f64);
                let title = format!(
                    "{}, {} = {}, {} = {}: {}",
                    h.contender,
                    h.x_field,
                    h.x_labels.get(x).map_or("", String::as_str),
                    h.y_field,
                    h.y_labels.get(y).map_or("", String::as_str),
                    label(*v)
                );
                marks.bar(
                    chart.backend_coord(&(x0, y0)),
                    chart.backend_coord(&(x0 + 1.0, y0 + 1.0)),
                    shade(t),
                    &title,
                );
            }
        }
        // The cells' labels after the group, which ends with the cells themselves.
        marks.end(area)?;
        for (y, row) in h.cells.iter().enumerate() {
            for (x, cell) in row.iter().enumerate() {
                let Some(v) = cell else { continue };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                let colour = if t > 0.5 { WHITE } else { BLACK };
                chart
                    .draw_series([Text::new(
                        label(*v),
                        (x as f64 + 0.5, y as f64 + 0.5),
                        text.clone().color(&colour).pos(centre),
                    )])
                    .map_err(plot_err(FILE))?;
            }
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        caption: format!(
            "`{}` of {} for each pair of `{}` and `{}`{}; darker is higher.",
            h.figure, h.contender, h.x_field, h.y_field, h.note
        ),
        title,
        svg,
    })
}

fn label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
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
    }
}
