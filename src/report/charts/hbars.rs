//! Horizontal bars shared by the accuracy, harm and memory charts: one panel per figure, one
//! bar per row (algorithm or contender) in its colour, the rows named once at the left, each
//! bar labelled with its value, or `n/a` where the figure has nothing to measure. Each panel
//! has its own axis (or one fixed axis for shares), in the unit its values read best in, so
//! a figure in bytes and one in KiB never share odd ticks.

use super::{Area, FONT, Marks, Plot, colour_among, fit, plot_err, render, tick};
use crate::error::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One figure: a panel.
pub struct Group<'a> {
    pub name: &'a str,
    /// The axis' description under the panel.
    pub axis: String,
    /// Raw values are divided by this to be plotted (1024 for an axis in KiB).
    pub divisor: f64,
    /// The axis' end in plotted units; `None` for 25% beyond the largest bar (room for labels).
    pub max: Option<f64>,
}

pub struct HBars<'a> {
    pub file: &'static str,
    pub title: &'a str,
    pub groups: Vec<Group<'a>>,
    /// One entry per row: its name and one raw value per group (`None`: not applicable).
    pub series: Vec<(&'a str, Vec<Option<f64>>)>,
    /// The label at a bar's end and in its hover title, from the raw value.
    pub label: &'a dyn Fn(f64) -> String,
}

pub fn draw(bars: HBars) -> Result<String> {
    let file = bars.file;
    let names: Vec<&str> = bars.series.iter().map(|(name, _)| *name).collect();
    let rows = names.len().max(1);
    // The names' column: about 7 px a character at 13 px, within reason.
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let name_width = (longest as u32 * 7 + 12).clamp(60, 240);
    // No legend column: the rows are named at the left, each name in its series' group.
    render(file, bars.title, &[], |area, marks: &mut Marks| {
        draw_title(file, area, bars.title)?;
        let body = area.margin(40, 4, 0, 16);
        let (label_column, plots) = body.split_horizontally(name_width);
        let panels = plots.split_evenly((1, bars.groups.len().max(1)));
        for (g, (group, panel_area)) in bars.groups.iter().zip(&panels).enumerate() {
            let panel = Panel::new(&bars, g, group, panel_area, rows)?;
            for (r, (name, values)) in bars.series.iter().enumerate() {
                // Row 0 at the top; bars fill the middle 70% of their row.
                let mid = rows as f64 - r as f64 - 0.5;
                if g == 0 {
                    let (_, y) = panel.chart.backend_coord(&(0.0, mid));
                    draw_name(file, &label_column, name_width, y, name, marks)?;
                }
                panel.bar(name, values[g], mid, colour_among(&names, name), marks)?;
            }
        }
        Ok(())
    })
}

/// The chart's title, centred over the whole width.
fn draw_title(file: &str, area: &Area, title: &str) -> Result<()> {
    let (w, _) = area.dim_in_pixel();
    area.draw(&Text::new(
        title.to_string(),
        (w as i32 / 2, 10),
        (FONT, 22)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(plot_err(file))
}

/// A row's name in the label column, right-aligned at height `y` (its bars' middle).
fn draw_name(
    file: &str,
    column: &Area,
    name_width: u32,
    y: i32,
    name: &str,
    marks: &mut Marks,
) -> Result<()> {
    let style = (FONT, 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    let (lx, ly) = column.get_base_pixel();
    marks.begin(column, name)?;
    column
        .draw(&Text::new(
            name.to_string(),
            (name_width as i32 - 6 - lx, y - ly),
            style,
        ))
        .map_err(plot_err(file))?;
    marks.end(column)
}

/// One group's panel: its own axis, from 0 to `x_max`.
struct Panel<'a, 'b> {
    bars: &'a HBars<'a>,
    group: &'a Group<'a>,
    area: &'a Area<'b>,
    chart: Plot<'a, 'b>,
    x_max: f64,
}

impl<'a, 'b> Panel<'a, 'b> {
    /// Group `g`'s axis and mesh, its caption fitted to the panel's width.
    fn new(
        bars: &'a HBars<'a>,
        g: usize,
        group: &'a Group<'a>,
        area: &'a Area<'b>,
        rows: usize,
    ) -> Result<Self> {
        let file = bars.file;
        let values = bars.series.iter().filter_map(|(_, v)| v[g]);
        let largest = values.fold(0.0f64, f64::max) / group.divisor;
        let x_max = group
            .max
            .unwrap_or(if largest > 0.0 { largest * 1.25 } else { 1.0 });
        let (caption, size) = fit(group.name, area.dim_in_pixel().0 - 12, 15, 10);
        let mut chart = ChartBuilder::on(area)
            .caption(caption, (FONT, size))
            .margin(6)
            .x_label_area_size(40)
            .y_label_area_size(4)
            .build_cartesian_2d(0.0..x_max, 0.0..rows as f64)
            .map_err(plot_err(file))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(5)
            .x_desc(group.axis.as_str())
            .x_label_formatter(&tick)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()
            .map_err(plot_err(file))?;
        Ok(Panel {
            bars,
            group,
            area,
            chart,
            x_max,
        })
    }

    /// A row's bar centred at `mid` (nothing for `None`) and its label: the value, or `n/a`.
    fn bar(
        &self,
        name: &str,
        value: Option<f64>,
        mid: f64,
        colour: RGBColor,
        marks: &mut Marks,
    ) -> Result<()> {
        let (chart, group, x_max) = (&self.chart, self.group, self.x_max);
        marks.begin(self.area, name)?;
        let (end, text) = match value {
            Some(v) => {
                let x = (v / group.divisor).min(x_max);
                let (a, b) = (
                    chart.backend_coord(&(0.0, mid - 0.35)),
                    chart.backend_coord(&(x, mid + 0.35)),
                );
                let text = (self.bars.label)(v);
                marks.bar(a, b, colour, &format!("{name}, {}: {text}", group.name));
                (x, text)
            }
            None => (0.0, "n/a".to_string()),
        };
        let (px, py) = chart.backend_coord(&(end, mid));
        // A long bar holds its label inside its end, in ink that reads on its colour; a short
        // one beside it.
        if end > 0.62 * x_max {
            let light =
                0.299 * colour.0 as f64 + 0.587 * colour.1 as f64 + 0.114 * colour.2 as f64 > 150.0;
            let ink = if light { BLACK } else { WHITE };
            marks.label((px - 4, py), "end", ink, &text);
        } else {
            marks.label((px + 4, py), "start", BLACK, &text);
        }
        marks.end(self.area)
    }
}
