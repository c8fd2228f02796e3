//! The interactive hooks every chart carries for the HTML report: series groups and hover titles.

use super::{FONT, escape, hex};
use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The interactive hooks of a chart, for the HTML report: every series' drawn elements (and its
/// legend entry) sit in a `<g class="series" data-series="NAME">`, and each point or bar carries
/// a `<title>` with its value in human units, which a browser shows on hover.
///
/// Plotters writes plain elements into one string and offers no grouping, so the chart draws a
/// marker text where a group begins and ends ([`Marks::begin`], [`Marks::end`]); [`render`](super::render)
/// replaces each marker with the group's tags. Points and bars with titles are written here,
/// as SVG, and placed at the end of their group, above the lines they mark.
#[derive(Debug, Default)]
pub struct Marks {
    /// Per marker, in drawing order: what replaces it.
    items: Vec<String>,
    /// The titled elements of the open group.
    open: String,
}

const MARKER: &str = "rlsim-mark-";

/// The shapes of [`Marks::shape`], in the order series take them.
pub const SHAPES: [&str; 5] = ["circle", "square", "triangle", "diamond", "cross"];

impl Marks {
    fn marker(&mut self, area: &DrawingArea<SVGBackend, Shift>, tags: String) -> Result<()> {
        let text = format!("{MARKER}{}", self.items.len());
        self.items.push(tags);
        area.draw(&Text::new(text, (1, 1), (FONT, 1).into_font()))
            .map_err(|e| Error::Internal(format!("drawing a series marker: {e}")))
    }

    /// Opens the group of series `name`; drawn elements up to [`Marks::end`] belong to it.
    pub fn begin(&mut self, area: &DrawingArea<SVGBackend, Shift>, name: &str) -> Result<()> {
        self.open.clear();
        let tags = format!("<g class=\"series\" data-series=\"{}\">", escape(name));
        self.marker(area, tags)
    }

    /// Closes the open group, after its titled points and bars.
    pub fn end(&mut self, area: &DrawingArea<SVGBackend, Shift>) -> Result<()> {
        let tags = format!("{}</g>", std::mem::take(&mut self.open));
        self.marker(area, tags)
    }

    /// A point at backend pixel `(x, y)` with a hover title; `visible` draws it as a dot of the
    /// series' colour, otherwise it is a transparent hover target on a line's vertex.
    pub fn point(&mut self, (x, y): (i32, i32), colour: RGBColor, visible: bool, title: &str) {
        let (r, opacity) = if visible { (4, 1) } else { (5, 0) };
        self.open += &format!(
            "\n<circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\" fill=\"{}\" fill-opacity=\"{opacity}\">\
             <title>{}</title></circle>",
            hex(colour),
            escape(title)
        );
    }

    /// A visible marker of shape `shape` (see `SHAPES`) at backend pixel `(x, y)`, with a
    /// hover title: series drawn as points tell apart by shape where they coincide.
    pub fn shape(&mut self, (x, y): (i32, i32), shape: usize, colour: RGBColor, title: &str) {
        let fill = hex(colour);
        let element = match SHAPES[shape % SHAPES.len()] {
            "circle" => format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"5\" fill=\"{fill}\">"),
            "square" => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"{fill}\">",
                x - 4,
                y - 4
            ),
            "triangle" => format!(
                "<polygon points=\"{x},{} {},{} {},{}\" fill=\"{fill}\">",
                y - 6,
                x - 6,
                y + 4,
                x + 6,
                y + 4
            ),
            "diamond" => format!(
                "<polygon points=\"{x},{} {},{y} {x},{} {},{y}\" fill=\"{fill}\">",
                y - 6,
                x + 6,
                y + 6,
                x - 6
            ),
            _ => format!(
                "<path d=\"M{},{} L{},{} M{},{} L{},{}\" stroke=\"{fill}\" stroke-width=\"3\" \
                 fill=\"none\">",
                x - 5,
                y - 5,
                x + 5,
                y + 5,
                x - 5,
                y + 5,
                x + 5,
                y - 5
            ),
        };
        let close = &element[1..element.find(' ').unwrap_or(1)];
        self.open += &format!("\n{element}<title>{}</title></{close}>", escape(title));
    }

    /// A filled bar between backend pixels `a` and `b`, with a hover title.
    pub fn bar(&mut self, a: (i32, i32), b: (i32, i32), colour: RGBColor, title: &str) {
        let (x, y) = (a.0.min(b.0), a.1.min(b.1));
        let (w, h) = ((a.0 - b.0).abs(), (a.1 - b.1).abs());
        self.open += &format!(
            "\n<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{}\">\
             <title>{}</title></rect>",
            hex(colour),
            escape(title)
        );
    }

    /// A label at backend pixel `(x, y)` (vertically centred; `anchor` is `start` or `end`),
    /// written after the group's bars so a label inside a bar stays above it.
    pub fn label(&mut self, (x, y): (i32, i32), anchor: &str, colour: RGBColor, text: &str) {
        self.open += &format!(
            "\n<text x=\"{x}\" y=\"{y}\" dy=\"0.35em\" text-anchor=\"{anchor}\" \
             font-family=\"{FONT}\" font-size=\"12\" fill=\"{}\">{}</text>",
            hex(colour),
            escape(text)
        );
    }

    /// The SVG with every marker replaced by its tags. A marker is a `<text>` element whose
    /// content, on its own line as the SVG backend writes it, is `rlsim-mark-N`.
    pub(super) fn apply(&self, svg: &str) -> String {
        let lines: Vec<&str> = svg.split_inclusive('\n').collect();
        let mut out = String::with_capacity(svg.len());
        let mut i = 0;
        while i < lines.len() {
            let item = (i + 2 < lines.len()
                && lines[i].starts_with("<text")
                && lines[i + 2].trim_end() == "</text>")
                .then(|| lines[i + 1].trim_end().strip_prefix(MARKER))
                .flatten()
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| self.items.get(n));
            match item {
                Some(tags) => {
                    out += tags;
                    out.push('\n');
                    i += 3;
                }
                None => {
                    out += lines[i];
                    i += 1;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LegendEntry, Mark, PALETTE, render};

    #[test]
    fn markers_become_series_groups_with_titled_points() {
        let legend = [LegendEntry::algorithm(&["a<b"], "a<b", Mark::Line)];
        let svg = render("t.svg", "T", &legend, |area, marks| {
            marks.begin(area, "a<b")?;
            marks.point((10, 20), PALETTE[0], false, "a<b, 1s: 3 req/s");
            marks.bar((1, 2), (5, 9), PALETTE[1], "a<b, total: 4");
            marks.end(area)
        })
        .unwrap();
        assert!(!svg.contains("rlsim-mark-"), "{svg}");
        // One group in the plot, one around the legend entry.
        assert_eq!(
            svg.matches("<g class=\"series\" data-series=\"a&lt;b\">")
                .count(),
            2
        );
        assert_eq!(svg.matches("</g>").count(), 2);
        assert!(svg.contains(
            "<circle cx=\"10\" cy=\"20\" r=\"5\" fill=\"#D55E00\" fill-opacity=\"0\">\
             <title>a&lt;b, 1s: 3 req/s</title></circle>"
        ));
        assert!(svg.contains(
            "<rect x=\"1\" y=\"2\" width=\"4\" height=\"7\" fill=\"#0072B2\">\
             <title>a&lt;b, total: 4</title></rect>"
        ));
    }
}
