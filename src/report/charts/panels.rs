//! Small multiples: one panel per row of the run (algorithm or contender), each with its own
//! caption and one shared scale, so no series can hide under another however many rows a
//! scenario runs or however equal their figures are.

use super::{FONT, plot_err, tick};
use crate::error::Result;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Columns of the grid for `n` panels: as square as the plot's 16:9-ish area allows.
fn columns(n: usize) -> usize {
    match n {
        0..=1 => 1,
        2..=4 => 2,
        5..=9 => 3,
        _ => 4,
    }
}

/// Draws the chart's title at the top of `area` and the shared axis descriptions at its left and
/// bottom, and returns `n` panels in a grid, row-major, inside what is left.
pub fn panels<'a>(
    file: &str,
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    n: usize,
) -> Result<Vec<DrawingArea<SVGBackend<'a>, Shift>>> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let centred = |size: u32, v: VPos| {
        (FONT, size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, v))
    };
    area.draw(&Text::new(
        title.to_string(),
        (w / 2, 10),
        centred(22, VPos::Top),
    ))
    .map_err(plot_err(file))?;
    area.draw(&Text::new(
        x_desc.to_string(),
        (w / 2, h - 6),
        centred(15, VPos::Bottom),
    ))
    .map_err(plot_err(file))?;
    area.draw(&Text::new(
        y_desc.to_string(),
        (10, h / 2),
        centred(15, VPos::Top).transform(FontTransform::Rotate270),
    ))
    .map_err(plot_err(file))?;
    let inner = area.margin(40, 26, 26, 6);
    let cols = columns(n);
    let rows = n.div_ceil(cols).max(1);
    Ok(inner.split_evenly((rows, cols)).into_iter().take(n).collect())
}

/// The axes of one panel, `caption` above it, with few small tick labels (the panel is small).
pub fn panel<'a, 'b>(
    file: &str,
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    caption_size: u32,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    y_tick: &dyn Fn(&f64) -> String,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, caption_size))
        .margin(5)
        .x_label_area_size(18)
        .y_label_area_size(44)
        .build_cartesian_2d(x, y)
        .map_err(plot_err(file))?;
    chart
        .configure_mesh()
        .x_labels(5)
        .y_labels(4)
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(y_tick)
        .label_style((FONT, 11))
        .draw()
        .map_err(plot_err(file))?;
    Ok(chart)
}

/// A panel caption's font size: smaller when many panels share the width.
pub fn caption_size(n: usize) -> u32 {
    if columns(n) >= 4 { 12 } else { 14 }
}
