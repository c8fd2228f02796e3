//! SVG charts for design documents, drawn with plotters' SVG backend.
//!
//! Each chart is a pure function of the run's results that returns SVG text; only
//! [`super::write_outputs`] writes them. What every chart shares lives here: the size, the font,
//! one colour per algorithm (the same in every chart), the legend drawn beside the plot (so eight
//! or more algorithms never cover the data), unit choice and peak-preserving downsampling.
//!
//! Text needs no font file: without plotters' `ttf`/`ab_glyph` features, text is laid out with
//! a size estimate and written as SVG `<text>` elements with the generic `sans-serif` family,
//! which the viewer renders with whatever font it has.

mod accuracy;
mod bars;
mod budget_use;
mod busiest;
mod delay;
pub(crate) mod frontier;
mod hbars;
pub(crate) mod heatmap;
mod hurt;
mod marks;
mod memory;
mod panels;
mod quota;
mod rate;
mod refused_share;
mod replicas;
mod retries;
mod retry_intervals;
pub(crate) mod sweep_line;
mod token_budget;
mod top_keys;
pub mod worst;

pub use marks::Marks;
pub use panels::{caption_size, fit, notes, panel, panel_top, panels};

use crate::algorithms::AlgorithmKind;
use crate::error::{Error, Result};
use crate::metrics::{AlgorithmReport, TimeBucket};
use crate::scenario::Scenario;
use crate::time::{
    NANOS_PER_DAY, NANOS_PER_HOUR, NANOS_PER_MILLI, NANOS_PER_MIN, NANOS_PER_SEC, Nanos,
};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width and height of every chart, in pixels.
pub const SIZE: (u32, u32) = (960, 540);
/// Width of the legend column at the right of every chart.
const LEGEND_WIDTH: u32 = 270;
/// Roughly the plot's width in pixels: series longer than twice this are downsampled.
pub const PLOT_PIXELS: usize = 600;
/// A generic family, so no font file is needed to draw or to view.
pub const FONT: &str = "sans-serif";

/// A part of the canvas a chart draws in.
pub type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
/// A plot with numeric axes, as [`axes`] and [`panel`] make it.
pub type Plot<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One colour per algorithm, in [`AlgorithmKind::every`] order (Okabe-Ito first, then colours
/// that stay apart from them): twenty-eight, one per algorithm and profile with room to spare,
/// so a run of many profiles or contenders never shows two rows in one colour.
pub const PALETTE: [RGBColor; 28] = [
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x8C, 0x56, 0x4B), // brown
    RGBColor(0x7F, 0x3C, 0x8D), // purple
    RGBColor(0x17, 0xBE, 0xCF), // cyan
    RGBColor(0xBC, 0xBD, 0x22), // olive
    RGBColor(0x33, 0x22, 0x88), // indigo
    RGBColor(0x11, 0x77, 0x33), // dark green
    RGBColor(0x88, 0x22, 0x55), // wine
    RGBColor(0xDD, 0xCC, 0x77), // sand
    RGBColor(0xCC, 0x66, 0x77), // rose
    RGBColor(0x6B, 0x8E, 0x23), // olive drab
    RGBColor(0xFB, 0x9A, 0x99), // pink
    RGBColor(0xA6, 0x76, 0x1D), // ochre
    RGBColor(0xE7, 0x29, 0x8A), // magenta
    RGBColor(0x1F, 0x4E, 0x79), // navy
    RGBColor(0x99, 0x44, 0x00), // rust
    RGBColor(0x44, 0xAA, 0x99), // teal
    RGBColor(0x99, 0x99, 0x33), // khaki
    RGBColor(0x66, 0x33, 0x99), // violet
    RGBColor(0x00, 0x44, 0x88), // deep blue
    RGBColor(0xEE, 0x77, 0x33), // tangerine
    RGBColor(0x55, 0x55, 0x00), // dark olive
    RGBColor(0xAA, 0x33, 0x77), // plum
];
/// Series that belong to no algorithm: the offered load, and reference lines.
pub const OFFERED: RGBColor = RGBColor(0x99, 0x99, 0x99);
/// The colour of marks that belong to no row: limit lines, the frontier's Pareto rings.
pub const REFERENCE: RGBColor = RGBColor(0x22, 0x22, 0x22);

/// The colour of an algorithm: fixed by its place in `rlsim algorithms` (the exact algorithms,
/// then the profiles; [`AlgorithmKind::every`]), whichever algorithms a scenario runs, so a
/// reader learns it once. With more than twenty-eight, colours repeat (modulo the palette).
pub fn colour(algorithm: &str) -> RGBColor {
    let index = AlgorithmKind::every()
        .position(|k| k.name() == algorithm)
        // Not a known kind (cannot happen for a validated scenario): a stable pick by name.
        .unwrap_or_else(|| algorithm.bytes().map(usize::from).sum());
    PALETTE[index % PALETTE.len()]
}

/// The colour of row `name` among a run's rows `names`: an algorithm (or profile) keeps its
/// [`colour`] whatever runs beside it; a contender takes, in the run's order, the palette
/// colours none of the run's algorithms holds, so two contenders of a run differ (up to twenty-eight).
pub fn colour_among(names: &[&str], name: &str) -> RGBColor {
    let slot = |n: &str| AlgorithmKind::every().position(|k| k.name() == n);
    if slot(name).is_some() || !names.contains(&name) {
        return colour(name);
    }
    let taken: Vec<usize> = names
        .iter()
        .filter_map(|n| slot(n))
        .map(|i| i % PALETTE.len())
        .collect();
    let free: Vec<usize> = (0..PALETTE.len()).filter(|i| !taken.contains(i)).collect();
    let nth = names
        .iter()
        .filter(|n| slot(n).is_none())
        .position(|n| *n == name)
        .unwrap_or(0);
    match free.len() {
        0 => PALETTE[(taken.len() + nth) % PALETTE.len()],
        f => PALETTE[free[nth % f]],
    }
}

/// The names of a run's rows, for [`colour_among`].
pub fn row_names(algorithms: &[AlgorithmReport]) -> Vec<&str> {
    algorithms.iter().map(|a| a.algorithm.as_str()).collect()
}

/// `#rrggbb`, as the SVG backend writes colours.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// One chart, ready to write as `charts/<file>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The SVG's file name under `charts/` (`rate.svg`), also its link in the reports.
    pub file: &'static str,
    /// The chart's title: drawn atop the SVG and its `<title>`; the image's alt text in
    /// `report.md`.
    pub title: String,
    /// What the chart shows, in one sentence (the reports' caption).
    pub caption: String,
    /// What to see in this run's data, in one sentence: the chart's own reading of the rows it
    /// was drawn from, which the reports put before the caption.
    pub lead: Option<String>,
    /// The whole SVG document.
    pub svg: String,
}

impl Chart {
    /// The chart as the reports show it: what to see in this run's data, then the caption.
    pub fn with_lead(&self) -> Chart {
        let mut chart = self.clone();
        if let Some(lead) = &self.lead {
            chart.caption = format!("What to see: {lead} {}", self.caption);
        }
        chart
    }
}

/// Every row with the largest `f` (all of equals, in row order), for a chart's lead: a lead
/// that names one of four tied rows misleads; empty without rows.
fn most(
    algorithms: &[AlgorithmReport],
    f: impl Fn(&AlgorithmReport) -> f64,
) -> Vec<&AlgorithmReport> {
    extreme(algorithms, f, f64::max)
}

/// Every row with the smallest `f` (all of equals, in row order); empty without rows.
fn least(
    algorithms: &[AlgorithmReport],
    f: impl Fn(&AlgorithmReport) -> f64,
) -> Vec<&AlgorithmReport> {
    extreme(algorithms, f, f64::min)
}

fn extreme(
    algorithms: &[AlgorithmReport],
    f: impl Fn(&AlgorithmReport) -> f64,
    pick: fn(f64, f64) -> f64,
) -> Vec<&AlgorithmReport> {
    let Some(best) = algorithms.iter().map(&f).reduce(pick) else {
        return Vec::new();
    };
    algorithms.iter().filter(|a| f(a) == best).collect()
}

/// The rows of a lead, in Markdown: `` `a` ``, `` `a` and `b` ``, `` `a`, `b` and `c` ``;
/// with the verb's singular or plural form, so "`gcra` refuses" and "`gcra` and `fixed_window`
/// refuse" both read.
fn who(rows: &[&AlgorithmReport], singular: &str, plural: &str) -> String {
    let names: Vec<String> = rows.iter().map(|a| format!("`{}`", a.algorithm)).collect();
    let verb = if names.len() > 1 { plural } else { singular };
    format!("{} {verb}", and_list(&names))
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Every chart the run's results support. The delay chart is left out when no algorithm
/// delayed a request, the retry chart when no client retries, the token budget chart when no
/// rule counts tokens, the worst moment's under an intent per calendar period (whose worst
/// window is a whole period: the busiest key chart draws it).
pub fn all(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<Vec<Chart>> {
    let mut charts = vec![
        rate::chart(scenario, algorithms)?,
        busiest::chart(scenario, algorithms)?,
    ];
    if !scenario.intent.per_period() {
        charts.push(worst::chart(scenario, algorithms)?);
    }
    charts.extend([
        accuracy::chart(scenario, algorithms)?,
        hurt::chart(scenario, algorithms)?,
        memory::chart(scenario, algorithms)?,
    ]);
    if algorithms.iter().any(|a| a.delay.count > 0) {
        charts.push(delay::chart(scenario, algorithms)?);
    }
    if retries::applies(scenario) {
        charts.push(retries::chart(scenario, algorithms)?);
    }
    charts.extend(token_budget::chart(scenario, algorithms)?);
    charts.extend(quota::chart(scenario, algorithms)?);
    charts.extend(replicas::charts(algorithms)?);
    Ok(charts)
}

/// The dashboard charts of an observed run (`[[alert]]` rules or `--metrics-out`; none
/// otherwise): refused share over time, top keys by refusals (when any request was refused),
/// retry intervals (when any client retried).
pub fn observed(
    scenario: &Scenario,
    observations: &[crate::observe::Observation],
) -> Result<Vec<Chart>> {
    if observations.is_empty() {
        return Ok(Vec::new());
    }
    let mut charts = vec![refused_share::chart(scenario, observations)?];
    if top_keys::applies(observations) {
        charts.push(top_keys::chart(scenario, observations)?);
    }
    if retry_intervals::applies(observations) {
        charts.push(retry_intervals::chart(scenario, observations)?);
    }
    Ok(charts)
}

/// A plotters error: drawing into a string cannot fail on input, so it is a bug in rlsim.
pub fn plot_err<E: std::error::Error + Send + Sync>(
    chart: &str,
) -> impl FnOnce(DrawingAreaErrorKind<E>) -> Error + '_ {
    move |e| Error::Internal(format!("drawing chart `{chart}`: {e}"))
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A short thick line: a series drawn as a line.
    Line,
    /// A filled square: bars, heatmap cells, or a mark that is not a line (the frontier's rings).
    Box,
    /// A dot: series drawn as unjoined markers.
    Dot,
    /// One of `marks::SHAPES`, as [`Marks::shape`] draws it.
    Shape(usize),
}

/// One entry of a chart's legend: a mark in the series' colour and its label.
pub struct LegendEntry {
    /// The text beside the mark (a row's name, `offered`, a reference line's name).
    pub label: String,
    /// The series' colour, which the mark is drawn in.
    pub colour: RGBColor,
    /// How the mark is drawn.
    pub mark: Mark,
    /// The series the entry names: its mark and label join that series' group (see [`Marks`]).
    pub series: Option<String>,
}

impl LegendEntry {
    /// The entry of row `name` among the run's rows `names`, in its [`colour_among`] colour,
    /// naming its own series.
    pub fn algorithm(names: &[&str], name: &str, mark: Mark) -> Self {
        LegendEntry {
            label: name.to_string(),
            colour: colour_among(names, name),
            mark,
            series: Some(name.to_string()),
        }
    }

    /// A row's entry labelled with the rows it ties with, if any: `token_bucket (= gcra,
    /// fixed_window)`.
    pub fn tied(names: &[&str], name: &str, mark: Mark, tie: &[&str]) -> Self {
        let mut entry = Self::algorithm(names, name, mark);
        entry.label = tied_label(name, tie);
        entry
    }

    /// An entry of its own series (the offered load, a reference line).
    pub fn other(label: &str, colour: RGBColor, mark: Mark) -> Self {
        LegendEntry {
            label: label.to_string(),
            colour,
            mark,
            series: Some(label.to_string()),
        }
    }
}

/// For each row, the rows whose data are equal to its own: rows drawn on top of each other,
/// which a chart must call out (`token_bucket (= gcra, fixed_window)`) rather than hide. The
/// first row of a group names every other member; each later member names the first.
pub fn ties<'a, T: PartialEq>(rows: &[(&'a str, T)]) -> Vec<Vec<&'a str>> {
    let names: Vec<&str> = rows.iter().map(|r| r.0).collect();
    tie_names(&names, &leaders(rows.len(), |i, j| rows[i].1 == rows[j].1))
}

/// Per row, the first earlier row it is `same` as (`None` for the first of each group): the
/// row a group is drawn as.
pub fn leaders(n: usize, same: impl Fn(usize, usize) -> bool) -> Vec<Option<usize>> {
    let mut leader: Vec<Option<usize>> = vec![None; n];
    for i in 0..n {
        leader[i] = (0..i).find(|&j| leader[j].is_none() && same(j, i));
    }
    leader
}

/// The names each row is tied with, from [`leaders`]: a group's first row names every other
/// member, each other member names the first.
pub fn tie_names<'a>(names: &[&'a str], leader: &[Option<usize>]) -> Vec<Vec<&'a str>> {
    (0..names.len())
        .map(|i| match leader[i] {
            Some(l) => vec![names[l]],
            None => (0..names.len())
                .filter(|&j| leader[j] == Some(i))
                .map(|j| names[j])
                .collect(),
        })
        .collect()
}

/// Whether two sampled series are indistinguishable on an axis spanning `span`: the same
/// instants, and values never more than half a percent of the axis apart (about two pixels).
pub fn indistinguishable(a: &[(f64, f64)], b: &[(f64, f64)], span: f64) -> bool {
    let tolerance = 0.005 * span;
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= tolerance)
}

/// A sampled series as steps: each sample holds until the next one (and the last for one
/// `width`), so nothing suggests values between samples that were never measured.
pub fn steps(points: &[(f64, f64)], width: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * points.len());
    for (i, &(x, y)) in points.iter().enumerate() {
        let end = points.get(i + 1).map_or(x + width, |p| p.0);
        out.push((x, y));
        out.push((end, y));
    }
    out.dedup();
    out
}

/// One row's figure per bucket as a step line in `colour`, one hover group named `name`: each
/// bucket's figure holds for the bucket (nothing is interpolated), and each of its downsampled
/// points ([`hover_points`]) gets the hover title `title(x, y)`.
#[allow(clippy::too_many_arguments)]
pub fn draw_steps(
    file: &str,
    chart: &mut Plot<'_, '_>,
    area: &Area<'_>,
    marks: &mut Marks,
    name: &str,
    points: &[(f64, f64)],
    width: f64,
    colour: RGBColor,
    title: impl Fn(f64, f64) -> String,
) -> Result<()> {
    marks.begin(area, name)?;
    chart
        .draw_series(LineSeries::new(
            steps(points, width),
            colour.stroke_width(2),
        ))
        .map_err(plot_err(file))?;
    for &(x, y) in &hover_points(points) {
        marks.point(chart.backend_coord(&(x, y)), colour, false, &title(x, y));
    }
    marks.end(area)
}

/// A thin black horizontal line at `y` from `x.0` to `x.1` (a limit, a budget, a threshold),
/// one hover group named `name`.
pub fn reference_line(
    file: &str,
    chart: &mut Plot<'_, '_>,
    area: &Area<'_>,
    marks: &mut Marks,
    name: &str,
    y: f64,
    x: (f64, f64),
) -> Result<()> {
    marks.begin(area, name)?;
    chart
        .draw_series(LineSeries::new(
            [(x.0, y), (x.1, y)],
            REFERENCE.stroke_width(1),
        ))
        .map_err(plot_err(file))?;
    marks.end(area)
}

/// `name`, or `name (= a, b)` when rows tie with it.
pub fn tied_label(name: &str, tie: &[&str]) -> String {
    if tie.is_empty() {
        name.to_string()
    } else {
        format!("{name} (= {})", tie.join(", "))
    }
}

/// A panel's note naming the rows it ties with (`= gcra, fixed_window`), within `max` names:
/// beyond, the note counts them and points at the legend, which names them all.
pub fn tie_note(tie: &[&str], max: usize) -> Option<String> {
    match tie.len() {
        0 => None,
        // A no-break space keeps `=` with the first name when the note wraps.
        n if n <= max => Some(format!("=\u{a0}{}", tie.join(", "))),
        n => Some(format!(
            "=\u{a0}{} and {} more (legend)",
            tie[..max].join(", "),
            n - max
        )),
    }
}

/// The time axis of the charts drawn from `timeseries.csv`: every algorithm over the same
/// buckets, from 0 to the scenario's duration, in a readable time unit, as rates per second.
/// Releases of delayed requests after the end are left out of the axis and counted apart
/// ([`Timeline::after_end`]), so one shaper's tail never stretches every chart.
pub struct Timeline {
    buckets: usize,
    bucket: Nanos,
    /// Nanoseconds per axis unit, and the unit's name.
    pub unit: f64,
    /// The axis unit's name (`h`, `min`, `s`, `ms` or `ns`).
    pub unit_name: &'static str,
    /// The axis' end, in units.
    pub x_max: f64,
}

impl Timeline {
    /// The axis of `scenario`'s `timeseries.csv` buckets: its duration rounded up to whole
    /// buckets, in the largest unit the span holds at least twice.
    pub fn new(scenario: &Scenario) -> Self {
        let buckets = scenario.duration.div_ceil(scenario.bucket).max(1) as usize;
        let span = buckets as u64 * scenario.bucket;
        let (unit, unit_name) = time_unit(span);
        Timeline {
            buckets,
            bucket: scenario.bucket,
            unit,
            unit_name,
            x_max: (span as f64 / unit).max(f64::MIN_POSITIVE),
        }
    }

    /// Per bucket, a value of the run (a count per second, or any other figure) drawn at the
    /// bucket's start, downsampled to the plot's width with its peaks kept.
    pub fn series(&self, value: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
        let points: Vec<(f64, f64)> = (0..self.buckets)
            .map(|i| ((i as u64 * self.bucket) as f64 / self.unit, value(i)))
            .collect();
        // Half the plot's width in runs: drawn as steps, each point is two vertices.
        downsample(&points, PLOT_PIXELS / 2)
    }

    /// A bucket's width in axis units: how long each sample of [`Timeline::series`] holds.
    pub fn width(&self) -> f64 {
        self.bucket as f64 / self.unit
    }

    /// One count of each bucket as a rate per second.
    pub fn rates(&self, a: &AlgorithmReport, count: fn(&TimeBucket) -> u64) -> Vec<(f64, f64)> {
        let per_sec = NANOS_PER_SEC as f64 / self.bucket as f64;
        self.series(|i| {
            let b = a.timeseries.get(i).copied().unwrap_or_default();
            count(&b) as f64 * per_sec
        })
    }

    /// The count in the buckets after the axis' end: releases after the scenario's end.
    pub fn after_end(&self, a: &AlgorithmReport, count: fn(&TimeBucket) -> u64) -> u64 {
        a.timeseries.iter().skip(self.buckets).map(count).sum()
    }

    /// The time at `x` (in axis units), for a hover title: `12m`, `1.5s`.
    pub fn at(&self, x: f64) -> String {
        crate::time::format_duration((x * self.unit).round() as Nanos)
    }
}

/// The axes every chart draws on: its caption and room for the tick labels.
pub fn axes<'a, 'b>(
    file: &str,
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    y_label_width: u32,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    ChartBuilder::on(area)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(x, y)
        .map_err(plot_err(file))
}

/// Draws a chart: a white canvas split into the plot area and a legend column. `draw` fills
/// the plot area and groups its series with [`Marks`]. Returns the SVG text, with a `<title>`
/// for screen readers and tests. The canvas grows taller when the legend, whose labels wrap
/// rather than lose a letter, needs more than [`SIZE`]'s height.
pub fn render(
    file: &str,
    title: &str,
    legend: &[LegendEntry],
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Marks) -> Result<()>,
) -> Result<String> {
    let mut svg = String::new();
    let mut marks = Marks::default();
    let layout = legend_layout(legend);
    let height = layout.last().map_or(SIZE.1, |l| {
        SIZE.1
            .max((l.y + l.lines.len() as i32 * l.line_height + 16) as u32)
    });
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err(file))?;
        if legend.is_empty() {
            // No legend (the chart names its series itself): the plot takes the whole width.
            draw(&root, &mut marks)?;
        } else {
            let (plot, side) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
            draw(&plot, &mut marks)?;
            draw_legend(file, &side, legend, &layout, &mut marks)?;
        }
        root.present().map_err(plot_err(file))?;
    }
    Ok(with_title(&marks.apply(&svg), title))
}

/// Where a legend entry goes: its first line's y, its lines and their size.
struct LegendSlot {
    y: i32,
    lines: Vec<String>,
    size: u32,
    line_height: i32,
}

/// The legend's entries top to bottom: at 15 px when every label fits the column on one line;
/// else at 12 px, a longer label wrapped (between words, else after `-`, `_` or `,`), never cut.
fn legend_layout(entries: &[LegendEntry]) -> Vec<LegendSlot> {
    let width = LEGEND_WIDTH - 40;
    let mut y = 60;
    // One size for the whole legend, so entries read as peers.
    let size = if entries.iter().all(|e| fits(&e.label, width, 15)) {
        15
    } else {
        12
    };
    entries
        .iter()
        .map(|e| {
            let lines = wrap(&e.label, width, size);
            let line_height = size as i32 + 3;
            let slot = LegendSlot {
                y,
                size,
                line_height,
                lines,
            };
            y += slot.lines.len() as i32 * line_height + 7;
            slot
        })
        .collect()
}

/// Whether `text` fits `width` pixels at `size` (0.55 em a character, as [`fit`] estimates).
pub fn fits(text: &str, width: u32, size: u32) -> bool {
    text.chars().count() as f64 * 0.55 * size as f64 <= width as f64
}

/// `text` in lines that fit `width` pixels at `size`: broken between words, a word too long
/// for a line after a `-`, `_` or `,` (kept at the line's end), and only as a last resort
/// inside a run of other characters. No character is dropped.
pub fn wrap(text: &str, width: u32, size: u32) -> Vec<String> {
    wrap_rows(text, width, size, usize::MAX)
}

/// [`wrap`], in at most `rows` lines: when more text remains, the last line ends in `…`. Linear in
/// the text up to what is kept (a key name can be megabytes long; a chart shows its start).
pub fn wrap_rows(text: &str, width: u32, size: u32, rows: usize) -> Vec<String> {
    let max = ((width as f64 / (0.55 * size as f64)) as usize).max(4);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut line_chars = 0;
    // Stops once a line beyond `rows` exists: what follows would not be shown.
    'words: for word in text.split(' ') {
        if lines.len() > rows {
            break;
        }
        let word_chars = word.chars().count();
        let joined = if line.is_empty() {
            word_chars
        } else {
            line_chars + 1 + word_chars
        };
        if joined <= max {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            line_chars = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let (mut rest, mut rest_chars) = (word, word_chars);
        while rest_chars > max {
            if lines.len() > rows {
                break 'words;
            }
            let end = rest.char_indices().nth(max).map_or(rest.len(), |(i, _)| i);
            let cut = rest[..end].rfind(['-', '_', ',']).map_or(end, |i| i + 1);
            lines.push(rest[..cut].to_string());
            rest_chars -= rest[..cut].chars().count();
            rest = &rest[cut..];
        }
        line = rest.to_string();
        line_chars = rest_chars;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    if lines.len() > rows {
        lines.truncate(rows);
        if let Some(last) = lines.last_mut() {
            let keep = last.chars().count().min(max - 1);
            *last = last.chars().take(keep).chain(['…']).collect();
        }
    }
    lines
}

fn draw_legend(
    file: &str,
    area: &DrawingArea<SVGBackend, Shift>,
    entries: &[LegendEntry],
    layout: &[LegendSlot],
    marks: &mut Marks,
) -> Result<()> {
    for (e, slot) in entries.iter().zip(layout) {
        let style = (FONT, slot.size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let y = slot.y;
        if let Some(series) = &e.series {
            marks.begin(area, series)?;
        }
        match e.mark {
            Mark::Line => area
                .draw(&PathElement::new(
                    vec![(4, y), (28, y)],
                    e.colour.stroke_width(3),
                ))
                .map_err(plot_err(file))?,
            Mark::Box => area
                .draw(&Rectangle::new(
                    [(8, y - 7), (24, y + 7)],
                    e.colour.filled(),
                ))
                .map_err(plot_err(file))?,
            Mark::Dot => area
                .draw(&Circle::new((16, y), 5, e.colour.filled()))
                .map_err(plot_err(file))?,
            Mark::Shape(k) => legend_shape(file, area, k, (16, y), e.colour)?,
        }
        for (k, line) in slot.lines.iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (36, y + k as i32 * slot.line_height),
                style.clone(),
            ))
            .map_err(plot_err(file))?;
        }
        if e.series.is_some() {
            marks.end(area)?;
        }
    }
    Ok(())
}

/// A legend's marker of shape `k` ([`marks::SHAPES`]) centred at `(x, y)`.
fn legend_shape(
    file: &str,
    area: &DrawingArea<SVGBackend, Shift>,
    k: usize,
    (x, y): (i32, i32),
    c: RGBColor,
) -> Result<()> {
    let drawn = match marks::SHAPES[k % marks::SHAPES.len()] {
        "circle" => area.draw(&Circle::new((x, y), 5, c.filled())),
        "square" => area.draw(&Rectangle::new(
            [(x - 4, y - 4), (x + 5, y + 5)],
            c.filled(),
        )),
        "triangle" => area.draw(&Polygon::new(
            vec![(x, y - 6), (x - 6, y + 4), (x + 6, y + 4)],
            c.filled(),
        )),
        "diamond" => area.draw(&Polygon::new(
            vec![(x, y - 6), (x + 6, y), (x, y + 6), (x - 6, y)],
            c.filled(),
        )),
        _ => area
            .draw(&PathElement::new(
                vec![(x - 5, y - 5), (x + 5, y + 5)],
                c.stroke_width(3),
            ))
            .and_then(|_| {
                area.draw(&PathElement::new(
                    vec![(x - 5, y + 5), (x + 5, y - 5)],
                    c.stroke_width(3),
                ))
            }),
    };
    drawn.map_err(plot_err(file))
}

/// Inserts `<title>` as the first child of the root element.
fn with_title(svg: &str, title: &str) -> String {
    let escaped = escape(title);
    match svg.find('>') {
        Some(end) => format!(
            "{}\n<title>{escaped}</title>{}",
            &svg[..=end],
            &svg[end + 1..]
        ),
        None => svg.to_string(),
    }
}

/// XML/HTML text escaping.
pub fn escape(s: &str) -> String {
    quick_xml::escape::escape(s).into_owned()
}

/// A time unit for an axis: the largest of ms, s, min, h, d that keeps `span` at 2 units or
/// more.
pub fn time_unit(span: Nanos) -> (f64, &'static str) {
    [
        (NANOS_PER_DAY, "d"),
        (NANOS_PER_HOUR, "h"),
        (NANOS_PER_MIN, "min"),
        (NANOS_PER_SEC, "s"),
        (NANOS_PER_MILLI, "ms"),
    ]
    .into_iter()
    .find(|(unit, _)| span >= 2 * unit)
    .map_or((1.0, "ns"), |(unit, name)| (unit as f64, name))
}

/// At most about `2 × buckets` points that keep every peak and trough: the series is cut into
/// `buckets` runs of consecutive points and each run keeps its minimum and maximum, in order.
/// Shorter series are returned as they are.
pub fn downsample(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    if buckets == 0 || points.len() <= 2 * buckets {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(2 * buckets + 2);
    for b in 0..buckets {
        let run = &points[b * points.len() / buckets..(b + 1) * points.len() / buckets];
        let (Some(lo), Some(hi)) = (
            run.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
            run.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
        ) else {
            continue;
        };
        if lo.0 <= hi.0 {
            out.extend([*lo, *hi]);
        } else {
            out.extend([*hi, *lo]);
        }
    }
    out.dedup();
    out
}

/// A tick label: at most two decimals, without trailing zeros (`100`, `0.5`, `-0.25`).
pub fn tick(v: &f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// A value for a hover title: three significant figures or the whole number (`340`, `12.5`,
/// `0.167`).
pub fn figure(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => tick(&((v * 10.0).round() / 10.0)),
        _ => {
            let s = format!("{v:.3}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            if s == "-0" { "0".into() } else { s.into() }
        }
    }
}

/// Hover targets for a long line: at most about 120 of its points, peaks kept.
pub fn hover_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    downsample(points, 60)
}

/// An upper bound for a y axis holding `max`: 10% headroom, and never an empty range.
pub fn headroom(max: f64) -> f64 {
    if max > 0.0 { max * 1.1 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsampling_keeps_a_one_point_spike() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 1.0)).collect();
        points[7_777].1 = 500.0;
        points[2_222].1 = -3.0;
        let out = downsample(&points, 100);
        assert!(out.len() <= 200, "{} points", out.len());
        assert!(out.contains(&(7_777.0, 500.0)));
        assert!(out.contains(&(2_222.0, -3.0)));
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "x stays in order");
        assert_eq!(downsample(&points[..50], 100), points[..50].to_vec());
    }

    #[test]
    fn contenders_take_the_colours_no_algorithm_of_the_run_holds() {
        let names = ["fixed_window", "gcra", "by_ip", "by_user"];
        let got: Vec<String> = names.iter().map(|n| hex(colour_among(&names, n))).collect();
        // The algorithms keep their own colours (slots 0 and 5); the contenders take the first
        // free slots, 1 and 2, so they differ from each other and from the algorithms.
        assert_eq!(
            got,
            [PALETTE[0], PALETTE[5], PALETTE[1], PALETTE[2]].map(hex)
        );
    }

    #[test]
    fn every_algorithm_has_its_own_colour() {
        // Exact algorithms and profiles alike: libraries.toml runs fifteen of them at once.
        let colours: std::collections::HashSet<String> = AlgorithmKind::every()
            .map(|k| hex(colour(k.name())))
            .collect();
        assert_eq!(colours.len(), AlgorithmKind::every().count());
        assert!(colours.len() >= 15);
    }

    #[test]
    fn ties_name_every_member_and_steps_hold_each_sample() {
        let rows = [("a", 1), ("b", 2), ("c", 1), ("d", 1), ("e", 2)];
        assert_eq!(
            ties(&rows),
            [vec!["c", "d"], vec!["e"], vec!["a"], vec!["a"], vec!["b"]]
        );
        assert_eq!(tied_label("a", &["c", "d"]), "a (= c, d)");
        assert_eq!(
            tie_note(&["c", "d", "e"], 2).unwrap(),
            "=\u{a0}c, d and 1 more (legend)"
        );
        assert_eq!(
            steps(&[(0.0, 1.0), (1.0, 3.0), (2.0, 3.0)], 1.0),
            [(0.0, 1.0), (1.0, 1.0), (1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
        );
        assert!(indistinguishable(&[(0.0, 10.0)], &[(0.0, 10.5)], 100.0));
        assert!(!indistinguishable(&[(0.0, 10.0)], &[(0.0, 11.0)], 100.0));
    }

    #[test]
    fn wrapping_breaks_after_punctuation_and_stops_at_its_rows() {
        // 40 px at size 10: 7 characters a line.
        assert_eq!(
            wrap("ab cd-efghij-k", 40, 10),
            ["ab", "cd-", "efghij-", "k"]
        );
        assert_eq!(wrap("abcdefghij", 40, 10), ["abcdefg", "hij"]);
        assert_eq!(wrap("", 40, 10), [""]);
        assert_eq!(wrap_rows("abcdefghij", 40, 10, 2), ["abcdefg", "hij"]);
        assert_eq!(
            wrap_rows("abcdefghijklmno", 40, 10, 2),
            ["abcdefg", "hijklm…"]
        );
        assert_eq!(
            wrap_rows("ab cd ef gh ij kl mn", 40, 10, 2),
            ["ab cd", "ef gh…"]
        );
        // A 10 MB word: two rows, not 1.4 million (and not quadratic on the way).
        let long = "x".repeat(10_000_000);
        assert_eq!(wrap_rows(&long, 40, 10, 2), ["xxxxxxx", "xxxxxx…"]);
        assert_eq!(wrap("é".repeat(9).as_str(), 40, 10), ["ééééééé", "éé"]);
    }

    #[test]
    fn a_long_legend_wraps_within_the_canvas_and_grows_it() {
        let text = "python-limits-sliding-window-counter (= article-sliding-counter) (peak 100)";
        let lines = wrap(text, LEGEND_WIDTH - 40, 12);
        assert!(lines.len() > 1 && lines.iter().all(|l| fits(l, LEGEND_WIDTH - 40, 12)));
        assert_eq!(
            lines.concat().replace(' ', ""),
            text.replace(' ', ""),
            "{lines:?}"
        );
        let legend: Vec<LegendEntry> = (0..16)
            .map(|i| LegendEntry::other(&format!("{i} {text}"), REFERENCE, Mark::Line))
            .collect();
        let svg = render("t.svg", "T", &legend, |_, _| Ok(())).unwrap();
        let height: u32 = svg
            .split("height=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(height > SIZE.1, "{height}");
        // Every text: its left edge plus 0.6 em a character stays on the canvas.
        for t in svg.split("<text ").skip(1) {
            let attr = |name: &str| -> f64 {
                t.split(&format!(" {name}=\""))
                    .nth(1)
                    .or_else(|| t.strip_prefix(&format!("{name}=\"")))
                    .and_then(|v| v.split('"').next())
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            let content = t
                .split('>')
                .nth(1)
                .unwrap()
                .split("</text")
                .next()
                .unwrap()
                .trim();
            let right = attr("x") + content.chars().count() as f64 * 0.6 * attr("font-size");
            assert!(right <= f64::from(SIZE.0), "{content}: {right}");
            assert!(attr("y") <= f64::from(height), "{content}");
        }
    }

    #[test]
    fn units() {
        assert_eq!(time_unit(61 * NANOS_PER_DAY).1, "d");
        assert_eq!(time_unit(24 * NANOS_PER_HOUR).1, "h");
        assert_eq!(time_unit(3 * NANOS_PER_MIN).1, "min");
        assert_eq!(time_unit(90 * NANOS_PER_SEC).1, "s");
        assert_eq!(time_unit(NANOS_PER_SEC).1, "ms");
        assert_eq!(
            with_title("<svg a=\"1\">\n</svg>", "a < b"),
            "<svg a=\"1\">\n<title>a &lt; b</title>\n</svg>"
        );
        assert_eq!(
            [tick(&100.0), tick(&0.5), tick(&-0.0), tick(&1.256)],
            ["100", "0.5", "0", "1.26"]
        );
    }
}
