//! Grouped bars shared by the accuracy, harm and memory charts: one group per figure, one bar
//! per algorithm in its colour, each bar labelled with its value (a zero bar is invisible,
//! its label is not).

use super::{
    Area, FONT, LegendEntry, Mark, Marks, Plot, axes, colour_among, headroom, plot_err, render,
};
use crate::error::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub struct Bars<'a> {
    pub file: &'static str,
    pub title: &'a str,
    /// The figure each group shows, in order.
    pub groups: &'a [&'a str],
    pub y_desc: &'a str,
    /// One entry per algorithm: its name and one value per group.
    pub series: Vec<(&'a str, Vec<f64>)>,
    /// The label above a bar.
    pub label: &'a dyn Fn(f64) -> String,
    /// Plot the values' base-10 logarithm (for values orders of magnitude apart).
    pub log: bool,
    /// How a y tick reads.
    pub tick: &'a dyn Fn(f64) -> String,
}

/// Whether values this far apart call for a log axis: the largest is 100 times the smallest.
pub fn wants_log(values: impl Iterator<Item = f64>) -> bool {
    let positive: Vec<f64> = values.filter(|v| *v > 0.0).collect();
    let (lo, hi) = positive
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    !positive.is_empty() && hi / lo >= 100.0
}

/// The y axis' range: from 0 with headroom, or on a log axis from the decade below the
/// smallest positive value (where the bars rise from).
fn y_range(bars: &Bars) -> (f64, f64) {
    let values = bars.series.iter().flat_map(|(_, v)| v.iter().copied());
    let max = values.clone().fold(0.0f64, f64::max);
    if bars.log {
        let min = values.filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        (
            min.log10().floor(),
            max.log10().ceil().max(min.log10().floor() + 1.0),
        )
    } else {
        (0.0, headroom(max))
    }
}

pub fn draw(bars: Bars) -> Result<String> {
    let file = bars.file;
    let (y_lo, y_hi) = y_range(&bars);
    let names: Vec<&str> = bars.series.iter().map(|(name, _)| *name).collect();
    let legend: Vec<LegendEntry> = bars
        .series
        .iter()
        .map(|(name, _)| LegendEntry::algorithm(&names, name, Mark::Box))
        .collect();
    render(file, bars.title, &legend, |area, marks| {
        let mut chart = axes(
            file,
            area,
            bars.title,
            80,
            0.0..bars.groups.len() as f64,
            y_lo..y_hi,
        )?;
        draw_mesh(&bars, &mut chart, y_lo, y_hi)?;
        draw_bars(&bars, &chart, area, &names, y_lo, marks)?;
        draw_group_names(&bars, &chart, area, y_lo)
    })
}

/// Where a value's bar ends: the value, or on a log axis its exponent (a zero, which has none,
/// at the axis' foot).
fn plot_y(bars: &Bars, y_lo: f64, v: f64) -> f64 {
    match (bars.log, v > 0.0) {
        (true, true) => v.log10(),
        (true, false) => y_lo,
        (false, _) => v,
    }
}

/// The y axis' ticks and description; no x labels (the groups are named under their bars).
fn draw_mesh(bars: &Bars, chart: &mut Plot, y_lo: f64, y_hi: f64) -> Result<()> {
    // A log axis plots exponents: its ticks read the values (1, 10, 100), at decades only.
    let tick = |v: &f64| match bars.log {
        true if (v - v.round()).abs() > 1e-9 => String::new(),
        true => (bars.tick)(10f64.powf(v.round())),
        false => (bars.tick)(*v),
    };
    let y_desc = if bars.log {
        format!("{} (log scale)", bars.y_desc)
    } else {
        bars.y_desc.to_string()
    };
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(0)
        .x_desc("")
        .y_desc(y_desc)
        .y_label_formatter(&tick)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16));
    if bars.log {
        mesh.y_labels((y_hi - y_lo) as usize + 1);
    }
    mesh.draw().map_err(plot_err(bars.file))
}

/// Each row's bars, one per group, each with its value above it (turned upright when more than
/// four rows make the bars narrow).
fn draw_bars(
    bars: &Bars,
    chart: &Plot,
    area: &Area,
    names: &[&str],
    y_lo: f64,
    marks: &mut Marks,
) -> Result<()> {
    let n = bars.series.len().max(1) as f64;
    let value_style = (FONT, 12).into_font().color(&BLACK);
    let value_style = if bars.series.len() > 4 {
        value_style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center))
    } else {
        value_style.pos(Pos::new(HPos::Center, VPos::Bottom))
    };
    for (j, (name, values)) in bars.series.iter().enumerate() {
        let colour = colour_among(names, name);
        marks.begin(area, name)?;
        for (i, &v) in values.iter().enumerate() {
            // Groups are one unit wide; their bars fill the middle 80%.
            let x0 = i as f64 + 0.1 + 0.8 * j as f64 / n;
            let x1 = x0 + 0.8 / n;
            let title = format!(
                "{name}, {}: {}",
                bars.groups.get(i).copied().unwrap_or(""),
                (bars.label)(v)
            );
            let top = plot_y(bars, y_lo, v);
            marks.bar(
                chart.backend_coord(&(x0, y_lo)),
                chart.backend_coord(&(x1, top)),
                colour,
                &title,
            );
            let (px, py) = chart.backend_coord(&((x0 + x1) / 2.0, top));
            area.draw(&Text::new(
                (bars.label)(v),
                (px, py - 3),
                value_style.clone(),
            ))
            .map_err(plot_err(bars.file))?;
        }
        marks.end(area)?;
    }
    Ok(())
}

/// Each group's name under its bars.
fn draw_group_names(bars: &Bars, chart: &Plot, area: &Area, y_lo: f64) -> Result<()> {
    let group_style = (FONT, 16)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, group) in bars.groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y_lo));
        area.draw(&Text::new(
            group.to_string(),
            (px, py + 8),
            group_style.clone(),
        ))
        .map_err(plot_err(bars.file))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::wants_log;

    #[test]
    fn a_log_axis_for_orders_of_magnitude() {
        assert!(wants_log([31.0, 10_900.0].into_iter()));
        assert!(!wants_log([43.0, 904.0].into_iter()));
        // Zeros have no logarithm and do not count.
        assert!(!wants_log([0.0, 5.0, 50.0].into_iter()));
        assert!(!wants_log(std::iter::empty()));
    }
}
