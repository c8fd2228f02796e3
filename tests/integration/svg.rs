//! Reading rlsim's SVG charts back: the texts, lines, bars and markers a chart drew, and the
//! mapping from pixels back to data through the tick labels.

use quick_xml::events::{BytesStart, Event};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub anchor: String,
    pub content: String,
    /// The font size as written (plotters writes a nominal size ÷ 1.24).
    pub size: f64,
    /// Whether the text is rotated (an axis description).
    pub rotated: bool,
}

#[derive(Debug, Clone)]
pub struct Polyline {
    pub stroke: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Rect {
    pub fill: String,
    pub width: f64,
}

/// A `<g class="series" data-series="NAME">` group: the interactive hooks of one series.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub series: String,
    /// The `<title>` of each point or bar in it, in order.
    pub titles: Vec<String>,
    pub polylines: Vec<Polyline>,
    pub rects: Vec<Rect>,
    /// Circles (points, legend dots) as `(cx, cy)`.
    pub circles: Vec<(f64, f64)>,
    pub texts: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Svg {
    pub title: String,
    pub width: f64,
    pub height: f64,
    pub texts: Vec<Text>,
    pub polylines: Vec<Polyline>,
    pub rects: Vec<Rect>,
    /// Fill colours of the circles (markers).
    pub circles: Vec<String>,
    pub groups: Vec<Group>,
}

fn attrs(e: &BytesStart) -> BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.expect("well-formed attribute");
            let value: &str = &a.value;
            (
                a.key.as_ref().to_string(),
                quick_xml::escape::unescape(value).unwrap().into_owned(),
            )
        })
        .collect()
}

fn num(a: &BTreeMap<String, String>, key: &str) -> f64 {
    a.get(key)
        .unwrap_or_else(|| panic!("no {key}"))
        .parse()
        .unwrap()
}

/// Records a drawn element, in the chart and in the series group it sits in, if any.
fn element(out: &mut Svg, group: Option<usize>, name: &str, a: &BTreeMap<String, String>) {
    match name {
        "polyline" => {
            let line = Polyline {
                stroke: a["stroke"].clone(),
                points: a["points"]
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect(),
            };
            if let Some(g) = group {
                out.groups[g].polylines.push(line.clone());
            }
            out.polylines.push(line);
        }
        "rect" => {
            let rect = Rect {
                fill: a["fill"].clone(),
                width: num(a, "width"),
            };
            if let Some(g) = group {
                out.groups[g].rects.push(rect.clone());
            }
            out.rects.push(rect);
        }
        "circle" => {
            if let Some(g) = group {
                out.groups[g].circles.push((num(a, "cx"), num(a, "cy")));
            }
            out.circles.push(a["fill"].clone());
        }
        _ => {}
    }
}

/// Parses a chart as XML; panics if it is not well-formed.
pub fn parse(svg: &str) -> Svg {
    let mut out = Svg::default();
    let mut reader = quick_xml::Reader::from_str(svg);
    // The element whose text is being read, and its attributes.
    let mut open: Vec<(String, BTreeMap<String, String>, String)> = Vec::new();
    // The series group each open `<g>` is (None for other groups).
    let mut groups: Vec<Option<usize>> = Vec::new();
    let current = |groups: &[Option<usize>]| groups.iter().rev().find_map(|g| *g);
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                let name = e.name().as_ref().to_string();
                let a = attrs(&e);
                if name == "svg" {
                    out.width = num(&a, "width");
                    out.height = num(&a, "height");
                }
                if name == "g" {
                    let series = a.get("data-series").cloned();
                    groups.push(series.map(|series| {
                        assert_eq!(a.get("class").map(String::as_str), Some("series"));
                        out.groups.push(Group {
                            series,
                            ..Group::default()
                        });
                        out.groups.len() - 1
                    }));
                }
                element(&mut out, current(&groups), e.name().as_ref(), &a);
                open.push((name, a, String::new()));
            }
            Event::Empty(e) => {
                let a = attrs(&e);
                element(&mut out, current(&groups), e.name().as_ref(), &a);
            }
            Event::Text(t) => {
                if let Some(top) = open.last_mut() {
                    let raw: &str = &t;
                    top.2 += &quick_xml::escape::unescape(raw).unwrap();
                }
            }
            Event::GeneralRef(r) => {
                let name: &str = &r;
                if let Some(top) = open.last_mut() {
                    top.2 += quick_xml::escape::resolve_predefined_entity(name).unwrap();
                }
            }
            Event::End(_) => {
                let (name, a, text) = open.pop().expect("balanced");
                let content = text.trim().to_string();
                let parent = open.last().map(|p| p.0.as_str());
                match name.as_str() {
                    "title" if parent == Some("svg") => out.title = content,
                    "title" => {
                        let g = current(&groups).expect("a titled element is in a series group");
                        out.groups[g].titles.push(content);
                    }
                    "text" => {
                        if let Some(g) = current(&groups) {
                            out.groups[g].texts.push(content.clone());
                        }
                        out.texts.push(Text {
                            x: num(&a, "x"),
                            y: num(&a, "y"),
                            anchor: a["text-anchor"].clone(),
                            content,
                            size: a
                                .get("font-size")
                                .and_then(|s| s.parse().ok())
                                .unwrap_or(12.0),
                            rotated: a.contains_key("transform"),
                        });
                    }
                    "g" => {
                        groups.pop();
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(open.is_empty(), "every element is closed");
    out
}

impl Svg {
    /// The series groups of `series`, in drawing order (a panel's, then the legend's).
    pub fn groups_of(&self, series: &str) -> Vec<&Group> {
        self.groups.iter().filter(|g| g.series == series).collect()
    }

    /// Every hover title of `series`.
    pub fn titles_of(&self, series: &str) -> Vec<&str> {
        self.groups_of(series)
            .into_iter()
            .flat_map(|g| g.titles.iter().map(String::as_str))
            .collect()
    }

    /// Texts that would run off the canvas, estimating a character at 0.6 em (sans-serif's
    /// average is about 0.55): `(content, left, right)` in pixels.
    pub fn texts_off_canvas(&self) -> Vec<(String, f64, f64)> {
        self.texts
            .iter()
            .filter(|t| !t.rotated)
            .filter_map(|t| {
                let w = t.content.chars().count() as f64 * 0.6 * t.size;
                let left = match t.anchor.as_str() {
                    "end" => t.x - w,
                    "middle" => t.x - w / 2.0,
                    _ => t.x,
                };
                let off = left < -1.0 || left + w > self.width + 1.0 || t.y > self.height;
                off.then(|| (t.content.clone(), left, left + w))
            })
            .collect()
    }

    pub fn has_text(&self, content: &str) -> bool {
        self.texts.iter().any(|t| t.content == content)
    }

    pub fn lines_in(&self, colour: &str) -> Vec<&Polyline> {
        self.polylines
            .iter()
            .filter(|p| p.stroke == colour)
            .collect()
    }

    /// Tick labels of the y axis: numbers right-aligned against it, as `(pixel y, value)`.
    fn y_ticks(&self) -> Vec<(f64, f64)> {
        let mut ticks: Vec<(f64, f64)> = self
            .texts
            .iter()
            .filter(|t| t.anchor == "end")
            .filter_map(|t| Some((t.y, t.content.parse().ok()?)))
            .collect();
        ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(ticks.len() >= 2, "a y axis has at least two ticks");
        ticks
    }

    /// Tick labels of the x axis: numbers centred under it, as `(pixel x, value)`.
    fn x_ticks(&self) -> Vec<(f64, f64)> {
        let mut ticks: Vec<(f64, f64)> = self
            .texts
            .iter()
            .filter(|t| t.anchor == "middle")
            .filter_map(|t| Some((t.x, t.content.parse().ok()?)))
            .collect();
        ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(ticks.len() >= 2, "an x axis has at least two ticks");
        ticks
    }

    /// The y value a pixel row stands for, from the first and last y tick.
    pub fn y_value(&self, pixel: f64) -> f64 {
        let t = self.y_ticks();
        let ((p0, v0), (p1, v1)) = (t[0], t[t.len() - 1]);
        v0 + (pixel - p0) * (v1 - v0) / (p1 - p0)
    }

    /// The value one pixel of the y axis spans: the precision of [`Svg::y_value`].
    pub fn y_per_pixel(&self) -> f64 {
        (self.y_value(0.0) - self.y_value(1.0)).abs()
    }

    pub fn x_value(&self, pixel: f64) -> f64 {
        let t = self.x_ticks();
        let ((p0, v0), (p1, v1)) = (t[0], t[t.len() - 1]);
        v0 + (pixel - p0) * (v1 - v0) / (p1 - p0)
    }

    pub fn x_per_pixel(&self) -> f64 {
        (self.x_value(1.0) - self.x_value(0.0)).abs()
    }
}

/// The highest point of a line, in pixels (y grows downwards).
pub fn top(line: &Polyline) -> (f64, f64) {
    *line
        .points
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a line has points")
}

/// The highest point of a line, as data: `(x, y)`.
pub fn peak(svg: &Svg, line: &Polyline) -> (f64, f64) {
    let (x, y) = top(line);
    (svg.x_value(x), svg.y_value(y))
}
