//! Dashboard chart: the refused share over time per contender, per 15 s scrape (what a
//! Grafana panel of `rate(rlsim_requests_total{outcome="reject"}) / rate(rlsim_requests_total)`
//! shows), against the thresholds of the scenario's share alerts (or the usual 5% without one),
//! each labelled. Each scrape's share holds over the 15 s it covers (steps, no interpolation).
//! Contenders whose lines would be indistinguishable are drawn once and named together
//! (`token_bucket (= gcra, fixed_window)`), so no line hides under another unnamed.

use super::{
    FONT, LegendEntry, Mark, PLOT_PIXELS, REFERENCE, axes, colour_among, downsample,
    indistinguishable, leaders, plot_err, render, tick, tie_names, time_unit,
};
use crate::error::Result;
use crate::observe::Observation;
use crate::observe::openmetrics::SCRAPE;
use crate::scenario::{Measure, Scenario};
use crate::time::format_duration;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const FILE: &str = "refused_share.svg";

/// A threshold line: its height in percent and its label.
pub fn thresholds(scenario: &Scenario) -> Vec<(f64, String)> {
    let rules: Vec<(f64, String)> = scenario
        .alerts
        .iter()
        .filter(|a| a.measure == Measure::RefusedShare)
        .map(|a| {
            let held = if a.for_ > 0 {
                format!(" for {}", format_duration(a.for_))
            } else {
                String::new()
            };
            (
                100.0 * a.threshold,
                format!(
                    "alert {}: {}% over {}{held}",
                    a.name,
                    tick(&(100.0 * a.threshold)),
                    format_duration(a.window)
                ),
            )
        })
        .collect();
    if rules.is_empty() {
        vec![(5.0, "5%: a usual share-alert threshold".into())]
    } else {
        rules
    }
}

/// Each scrape's share over the 15 s before it: `(t − 15 s, s)` to `(t, s)`.
fn held(points: &[(f64, f64)], scrape: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * points.len());
    for &(x, y) in points {
        out.push(((x - scrape).max(0.0), y));
        out.push((x, y));
    }
    out.dedup();
    out
}

pub fn chart(scenario: &Scenario, observations: &[Observation]) -> Result<super::Chart> {
    let title = format!("Refused share over time: {}", scenario.name);
    let series: Vec<(&str, Vec<(f64, f64)>)> = observations
        .iter()
        .map(|o| {
            let points = o
                .refused_share
                .iter()
                .map(|&(t, s)| (t as f64, 100.0 * s))
                .collect();
            (o.contender.as_str(), points)
        })
        .collect();
    let span = series
        .iter()
        .flat_map(|(_, s)| s.last())
        .map(|p| p.0)
        .fold(scenario.duration as f64, f64::max);
    let (unit, unit_name) = time_unit(span as u64);
    let x_max = (span / unit).max(f64::MIN_POSITIVE);
    let names: Vec<&str> = series.iter().map(|(name, _)| *name).collect();
    // Lines within half a percent of the 0-105% axis of each other are drawn as one.
    let leader = leaders(series.len(), |i, j| {
        indistinguishable(&series[i].1, &series[j].1, 105.0)
    });
    let tied = tie_names(&names, &leader);
    let lines = thresholds(scenario);
    let mut legend: Vec<LegendEntry> = series
        .iter()
        .zip(&tied)
        .map(|((name, _), tie)| LegendEntry::tied(&names, name, Mark::Line, tie))
        .collect();
    legend.extend(
        lines
            .iter()
            .map(|(_, label)| LegendEntry::other(label, REFERENCE, Mark::Line)),
    );
    let scrape = SCRAPE as f64 / unit;
    let svg = render(FILE, &title, &legend, |area, marks| {
        let mut chart = axes(FILE, area, &title, 70, 0.0..x_max, 0.0..105.0)?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit_name})"))
            .y_desc("refused share of the requests per 15 s scrape (%)")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(plot_err(FILE))?;
        for (y, label) in &lines {
            super::reference_line(FILE, &mut chart, area, marks, label, *y, (0.0, x_max))?;
        }
        for (i, (name, points)) in series.iter().enumerate() {
            let points: Vec<(f64, f64)> = points.iter().map(|&(t, s)| (t / unit, s)).collect();
            // A group is drawn once, in its first row's colour; every row keeps its hover titles.
            let drawn = leader[i].unwrap_or(i);
            let c = colour_among(&names, names[drawn]);
            marks.begin(area, name)?;
            if leader[i].is_none() {
                let line = held(&downsample(&points, PLOT_PIXELS / 2), scrape);
                chart
                    .draw_series(LineSeries::new(line, c.stroke_width(2)))
                    .map_err(plot_err(FILE))?;
            }
            for &(x, y) in &super::hover_points(&points) {
                let title = format!("{name}, {} {unit_name}: {y:.1}% refused", tick(&x));
                marks.point(chart.backend_coord(&(x, y)), c, false, &title);
            }
            marks.end(area)?;
        }
        threshold_labels(area, &chart, &lines, x_max)?;
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: caption(&lines, &names, &leader, &tied),
        title,
        svg,
    })
}

/// Each threshold's own label, at its line's right end above it, over the series on a white
/// ground: readable without the legend.
fn threshold_labels(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    chart: &ChartContext<
        SVGBackend,
        plotters::coord::cartesian::Cartesian2d<
            plotters::coord::types::RangedCoordf64,
            plotters::coord::types::RangedCoordf64,
        >,
    >,
    lines: &[(f64, String)],
    x_max: f64,
) -> Result<()> {
    for (y, label) in lines {
        let (px, py) = chart.backend_coord(&(x_max, *y));
        let w = (label.chars().count() as f64 * 0.55 * 12.0).ceil() as i32;
        area.draw(&Rectangle::new(
            [(px - w - 8, py - 18), (px - 2, py - 2)],
            WHITE.mix(0.85).filled(),
        ))
        .map_err(plot_err(FILE))?;
        let style = (FONT, 12)
            .into_font()
            .color(&REFERENCE)
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        area.draw(&Text::new(label.clone(), (px - 5, py - 4), style))
            .map_err(plot_err(FILE))?;
    }
    Ok(())
}

/// What the chart shows, its thresholds, and the contenders drawn as one line.
fn caption(
    lines: &[(f64, String)],
    names: &[&str],
    leader: &[Option<usize>],
    tied: &[Vec<&str>],
) -> String {
    let same: Vec<String> = (0..names.len())
        .filter(|&i| leader[i].is_none() && !tied[i].is_empty())
        .map(|i| {
            let mut all = vec![format!("`{}`", names[i])];
            all.extend(tied[i].iter().map(|o| format!("`{o}`")));
            super::and_list(&all)
        })
        .collect();
    format!(
        "Share of the requests decided in each 15 s of virtual time that each contender \
         refused, as steps over the 15 s each scrape covers; the thin black {} {}.{}",
        if lines.len() > 1 {
            "lines mark"
        } else {
            "line marks"
        },
        super::and_list(&lines.iter().map(|l| l.1.clone()).collect::<Vec<_>>()),
        if same.is_empty() {
            String::new()
        } else {
            format!(
                " Drawn as one line (within half a percentage point at every scrape): {}.",
                same.join("; ")
            )
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = r#"
        name = "t"
        duration = "1m"
        algorithms = ["fixed_window", "token_bucket", "gcra"]
        [policy]
        limit = 10
        window = "1m"
        [[traffic]]
        name = "steady"
        kind = "constant"
        rate = "1/s"
        [[alert]]
        name = "share"
        count = "refused_share"
        threshold = 0.1
        window = "1m"
        for = "2m"
    "#;

    fn observation(name: &str, shares: &[f64]) -> Observation {
        Observation {
            contender: name.into(),
            alerts: Vec::new(),
            top_refused_keys: Vec::new(),
            retry_intervals: Default::default(),
            refused_share: shares
                .iter()
                .enumerate()
                .map(|(i, &s)| ((i as u64 + 1) * SCRAPE, s))
                .collect(),
            exporter: None,
        }
    }

    #[test]
    fn identical_lines_are_named_and_thresholds_labelled() {
        let scenario = Scenario::parse(TOML, "t.toml".as_ref()).unwrap();
        let observations = [
            observation("fixed_window", &[0.5, 0.2, 0.0, 0.0]),
            observation("token_bucket", &[0.1, 0.1, 0.0, 0.0]),
            // Half a point from token_bucket's at one scrape: indistinguishable on 0-105%.
            observation("gcra", &[0.1, 0.105, 0.0, 0.0]),
        ];
        let c = chart(&scenario, &observations).unwrap();
        assert!(
            c.svg.contains("\ntoken_bucket (= gcra)\n</text>"),
            "{}",
            c.svg
        );
        assert!(c.svg.contains("\ngcra (= token_bucket)\n</text>"));
        assert!(c.svg.contains("\nfixed_window\n</text>"));
        // The threshold is the scenario's rule, labelled in the legend and at the line.
        let label = "alert share: 10% over 1m for 2m";
        assert_eq!(c.svg.matches(&format!("\n{label}\n</text>")).count(), 2);
        assert!(
            c.caption.contains("`token_bucket` and `gcra`"),
            "{}",
            c.caption
        );
        // gcra's line is token_bucket's: only its legend mark is in its colour.
        let strokes = |n: &str| {
            let stroke = format!("stroke=\"{}\"", super::super::hex(super::super::colour(n)));
            c.svg.matches(&stroke).count()
        };
        assert_eq!(
            [
                strokes("fixed_window"),
                strokes("token_bucket"),
                strokes("gcra")
            ],
            [2, 2, 1]
        );
        // Without a share rule, the usual 5% is drawn and says what it is.
        let bare = TOML.split("[[alert]]").next().unwrap();
        let scenario = Scenario::parse(bare, "t.toml".as_ref()).unwrap();
        assert_eq!(
            thresholds(&scenario),
            [(5.0, "5%: a usual share-alert threshold".to_string())]
        );
    }

    #[test]
    fn each_scrape_holds_over_the_15_s_before_it() {
        assert_eq!(
            held(&[(0.25, 10.0), (0.5, 20.0)], 0.25),
            [(0.0, 10.0), (0.25, 10.0), (0.25, 20.0), (0.5, 20.0)]
        );
    }
}
