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
    Ok(inner
        .split_evenly((rows, cols))
        .into_iter()
        .take(n)
        .collect())
}

/// Text that fits `width` pixels: the font size shrinks from `size` down to `min`, then the
/// text is cut with an ellipsis. A character is taken as 0.55 em wide (sans-serif's average
/// for this kind of text: lower case, digits, underscores).
pub fn fit(text: &str, width: u32, size: u32, min: u32) -> (String, u32) {
    let chars = text.chars().count().max(1) as f64;
    let size_fit = (width as f64 / (0.55 * chars)).floor() as u32;
    if size_fit >= size {
        return (text.to_string(), size);
    }
    if size_fit >= min {
        return (text.to_string(), size_fit);
    }
    let keep = ((width as f64 / (0.55 * min as f64)) as usize).saturating_sub(1);
    let cut: String = text.chars().take(keep).collect();
    (format!("{cut}…"), min)
}

/// The top of a panel's y axis: room above the data for the panel's notes.
pub fn panel_top(max: f64) -> f64 {
    if max > 0.0 { max * 1.35 } else { 1.0 }
}

/// The axes of one panel, `caption` above it, with few small tick labels (the panel is small);
/// `x_labels` 0 leaves the x ticks to the caller (categories). A caption too long for the
/// panel shrinks to 10 px, then wraps onto a second line (after a `-` or `_`): a row's name is
/// never cut.
#[allow(clippy::too_many_arguments)]
pub fn panel<'a, 'b>(
    file: &str,
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    caption_size: u32,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    y_tick: &dyn Fn(&f64) -> String,
    x_labels: usize,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let width = area.dim_in_pixel().0.saturating_sub(8);
    let (lines, size) = caption_lines(caption, width, caption_size);
    let line_height = size as i32 + 2;
    let style = (FONT, size)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let centre = area.dim_in_pixel().0 as i32 / 2;
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.clone(),
            (centre, 3 + i as i32 * line_height),
            style.clone(),
        ))
        .map_err(plot_err(file))?;
    }
    let mut chart = ChartBuilder::on(area)
        .margin(5)
        .margin_top(8 + lines.len() as i32 * line_height)
        .x_label_area_size(18)
        .y_label_area_size(44)
        .build_cartesian_2d(x, y)
        .map_err(plot_err(file))?;
    chart
        .configure_mesh()
        .x_labels(x_labels)
        .y_labels(4)
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(y_tick)
        .label_style((FONT, 11))
        .draw()
        .map_err(plot_err(file))?;
    Ok(chart)
}

/// A panel caption as lines: one line at `size` down to 10 px, else wrapped at 10 px.
fn caption_lines(caption: &str, width: u32, size: u32) -> (Vec<String>, u32) {
    let (text, fitted) = fit(caption, width, size, 10);
    if !text.ends_with('…') || caption.ends_with('…') {
        return (vec![text], fitted);
    }
    (super::wrap(caption, width, 10), 10)
}

/// A panel caption's font size: smaller when many panels share the width.
pub fn caption_size(n: usize) -> u32 {
    if columns(n) >= 4 { 12 } else { 14 }
}

/// The most rows a note wraps to: a key name can be megabytes long (the data files hold it
/// whole).
const NOTE_ROWS: usize = 4;

/// Small lines of text at the top left of a panel's plot, over the headroom [`panel_top`] keeps.
/// A line too long for the plot's width wraps, up to `NOTE_ROWS` rows.
pub fn notes(
    file: &str,
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &ChartContext<SVGBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    lines: &[String],
) -> Result<()> {
    let (x0, x1) = (chart.x_range().start, chart.x_range().end);
    let (px, py) = chart.backend_coord(&(x0, chart.y_range().end));
    let (right, _) = chart.backend_coord(&(x1, 0.0));
    let (ox, oy) = area.get_base_pixel();
    let width = (right - px - 8).max(20) as u32;
    let mut row = 0;
    for line in lines {
        let (text, size) = fit(line, width, 11, 8);
        let wrapped = if text.ends_with('…') && !line.ends_with('…') {
            super::wrap_rows(line, width, 8, NOTE_ROWS)
        } else {
            vec![text]
        };
        let style = (FONT, size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Top));
        for text in wrapped {
            area.draw(&Text::new(
                text,
                (px + 4 - ox, py + 3 + 13 * row - oy),
                style.clone(),
            ))
            .map_err(plot_err(file))?;
            row += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn text_shrinks_then_is_cut() {
        assert_eq!(fit("gcra", 200, 14, 9), ("gcra".to_string(), 14));
        // 20 characters in 110 px: 110 / (0.55 × 20) = 10 px.
        assert_eq!(fit("abcdefghijabcdefghij", 110, 14, 9).1, 10);
        let (cut, size) = fit(&"x".repeat(60), 100, 14, 9);
        assert_eq!(size, 9);
        assert!(cut.ends_with('…') && cut.chars().count() < 60, "{cut}");
    }
}
