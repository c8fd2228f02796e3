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
}

#[derive(Debug, Clone)]
pub struct Polyline {
    pub stroke: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Rect {
    pub fill: String,
    pub y: f64,
    pub height: f64,
}

#[derive(Debug, Default)]
pub struct Svg {
    pub title: String,
    pub width: f64,
    pub texts: Vec<Text>,
    pub polylines: Vec<Polyline>,
    pub rects: Vec<Rect>,
    /// Fill colours of the circles (markers).
    pub circles: Vec<String>,
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

/// Parses a chart as XML; panics if it is not well-formed.
pub fn parse(svg: &str) -> Svg {
    let mut out = Svg::default();
    let mut reader = quick_xml::Reader::from_str(svg);
    // The element whose text is being read, and its attributes.
    let mut open: Vec<(String, BTreeMap<String, String>, String)> = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                let name = e.name().as_ref().to_string();
                let a = attrs(&e);
                if name == "svg" {
                    out.width = num(&a, "width");
                }
                open.push((name, a, String::new()));
            }
            Event::Empty(e) => {
                let a = attrs(&e);
                match e.name().as_ref() {
                    "polyline" => out.polylines.push(Polyline {
                        stroke: a["stroke"].clone(),
                        points: a["points"]
                            .split_whitespace()
                            .map(|p| {
                                let (x, y) = p.split_once(',').unwrap();
                                (x.parse().unwrap(), y.parse().unwrap())
                            })
                            .collect(),
                    }),
                    "rect" => out.rects.push(Rect {
                        fill: a["fill"].clone(),
                        y: num(&a, "y"),
                        height: num(&a, "height"),
                    }),
                    "circle" => out.circles.push(a["fill"].clone()),
                    _ => {}
                }
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
                match name.as_str() {
                    "title" => out.title = content,
                    "text" => out.texts.push(Text {
                        x: num(&a, "x"),
                        y: num(&a, "y"),
                        anchor: a["text-anchor"].clone(),
                        content,
                    }),
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

    /// The lowest and highest y tick values: the drawn axis range, near enough.
    pub fn y_tick_range(&self) -> (f64, f64) {
        let t = self.y_ticks();
        let values = t.iter().map(|t| t.1);
        (
            values.clone().fold(f64::INFINITY, f64::min),
            values.fold(f64::NEG_INFINITY, f64::max),
        )
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
