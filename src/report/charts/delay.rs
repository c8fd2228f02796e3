//! Chart 6: delay percentiles of the algorithms that delay requests (shapers), split by role:
//! a panel for legit clients and one for abusive clients (when any was delayed), since an
//! attacker held back for a minute is a success and a user held back for a minute is not.
//! Percentiles are categories, so each row's are dots side by side, never joined by lines.
//! Each panel has its own scale (a legit p99 of 1 s is unreadable on an attacker's 60 s axis),
//! and a logarithmic one, labelled in durations at each decade, when its delays span 10× or
//! more (a p50 of 2 s beside a p90 of 60 s).

use super::{
    LegendEntry, Mark, Marks, caption_size, colour_among, headroom, panel, panels, plot_err,
    render, row_names, time_unit,
};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, DelayStats};
use crate::scenario::Scenario;
use crate::time::format_duration;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const FILE: &str = "delays.svg";

/// Reads one percentile of a distribution.
type Percentile = fn(&DelayStats) -> u64;

/// The percentiles drawn, at x = 0, 1, 2, ...
pub const PERCENTILES: [(&str, Percentile); 5] = [
    ("p50", |d| d.p50_ns),
    ("p90", |d| d.p90_ns),
    ("p99", |d| d.p99_ns),
    ("p99.9", |d| d.p999_ns),
    ("max", |d| d.max_ns),
];

/// The roles drawn: a panel each, when some row delayed requests of that role.
/// Reads one role's delays of a row.
type RoleDelays = fn(&AlgorithmReport) -> &DelayStats;

const ROLES: [(&str, RoleDelays); 2] = [
    ("legit clients", |a| &a.legit_delay),
    ("abusive clients", |a| &a.abusive_delay),
];

/// What to see: who delays the longest (every row of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let top = super::most(algorithms, |a| a.delay.p99_ns as f64);
    let a = top.first()?;
    let each = if top.len() > 1 { " each" } else { "" };
    Some(format!(
        "{} the longest: p99 {}, max {}{each}.",
        super::who(&top, "delays", "delay"),
        format_duration(a.delay.p99_ns),
        format_duration(a.delay.max_ns)
    ))
}

/// One panel's y axis: linear in one time unit from 0, or the decades (log10 of seconds)
/// around its delays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear { unit: f64, top: f64 },
    Log { from: f64, to: f64 },
}

impl Scale {
    /// The scale of one panel's delays (nanoseconds): log when the largest is 10 times the
    /// smallest positive one or more.
    pub fn of(delays: &[u64]) -> Scale {
        let hi = delays.iter().copied().max().unwrap_or(0);
        let lo = delays.iter().copied().filter(|d| *d > 0).min().unwrap_or(0);
        if lo > 0 && hi >= 10 * lo {
            let secs = |ns: u64| (ns as f64 / 1e9).log10();
            let from = secs(lo).floor();
            Scale::Log {
                from,
                to: secs(hi).ceil().max(from + 1.0),
            }
        } else {
            let (unit, _) = time_unit(hi);
            Scale::Linear {
                unit,
                top: headroom(hi as f64 / unit),
            }
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        match *self {
            Scale::Linear { top, .. } => 0.0..top,
            Scale::Log { from, to } => from..to,
        }
    }

    /// Where a delay is drawn; a zero delay, which has no logarithm, at the axis' foot.
    fn y(&self, ns: u64) -> f64 {
        match *self {
            Scale::Linear { unit, .. } => ns as f64 / unit,
            Scale::Log { from, .. } if ns == 0 => from,
            Scale::Log { .. } => (ns as f64 / 1e9).log10(),
        }
    }

    /// A tick's label: a duration (`500ms`, `1m`); on a log axis, decades only.
    fn tick(&self, v: f64) -> String {
        match *self {
            Scale::Linear { unit, .. } => format_duration((v * unit).round() as u64),
            Scale::Log { .. } if (v - v.round()).abs() > 1e-9 => String::new(),
            // Whole seconds at and above 1 s (`100s`, not `1.667m`), milli- and microseconds
            // below.
            Scale::Log { .. } if v.round() >= 0.0 => format!("{}s", 10u64.pow(v.round() as u32)),
            Scale::Log { .. } => format_duration((10f64.powf(v.round()) * 1e9).round() as u64),
        }
    }
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Delay percentiles by role: {}", scenario.name);
    let names = row_names(algorithms);
    let delaying: Vec<&AlgorithmReport> = algorithms.iter().filter(|a| a.delay.count > 0).collect();
    let roles: Vec<_> = ROLES
        .iter()
        .filter(|(_, of)| delaying.iter().any(|a| of(a).count > 0))
        .map(|(role, of)| {
            let delays: Vec<u64> = delaying
                .iter()
                .filter(|a| of(a).count > 0)
                .flat_map(|a| PERCENTILES.iter().map(|(_, p)| p(of(a))))
                .collect();
            (*role, *of, Scale::of(&delays))
        })
        .collect();
    let legend: Vec<LegendEntry> = delaying
        .iter()
        .map(|a| LegendEntry::algorithm(&names, &a.algorithm, Mark::Dot))
        .collect();
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(
            FILE,
            area,
            &title,
            "percentile of the role's delayed requests",
            "delay (each panel on its own scale)",
            roles.len(),
        )?;
        for (panel_area, role) in areas.iter().zip(&roles) {
            draw_role(panel_area, marks, role, &delaying, &names, roles.len())?;
        }
        Ok(())
    })?;
    let log = roles.iter().any(|r| matches!(r.2, Scale::Log { .. }));
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: format!(
            "How long the requests an algorithm delayed waited before reaching the backend, \
             by percentile, for legit and for abusive clients apart, each panel on its own \
             scale{} (from a histogram with 3 significant figures; max is exact).",
            if log {
                "; a panel whose delays span 10× or more is logarithmic, labelled at each decade"
            } else {
                ""
            }
        ),
        title,
        svg,
    })
}

type Role<'r> = (&'r str, RoleDelays, Scale);

/// One role's panel: its percentiles' labels and each delaying row's dots.
fn draw_role(
    panel_area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    marks: &mut Marks,
    &(role, of, scale): &Role,
    delaying: &[&AlgorithmReport],
    names: &[&str],
    panels: usize,
) -> Result<()> {
    let last = (PERCENTILES.len() - 1) as f64;
    let caption = match scale {
        Scale::Log { .. } => format!("{role} (log scale)"),
        Scale::Linear { .. } => role.to_string(),
    };
    let y_tick = |v: &f64| scale.tick(*v);
    let chart = panel(
        FILE,
        panel_area,
        &caption,
        caption_size(panels),
        -0.5..last + 0.5,
        scale.range(),
        &y_tick,
        0,
    )?;
    // Label the percentiles at their own x, under the axis (plotters' x ticks are off).
    let style = (super::FONT, 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let foot = scale.range().start;
    for (i, (name, _)) in PERCENTILES.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64, foot));
        let (ox, oy) = panel_area.get_base_pixel();
        panel_area
            .draw(&Text::new(
                name.to_string(),
                (px - ox, py - oy + 4),
                style.clone(),
            ))
            .map_err(plot_err(FILE))?;
    }
    let n = delaying.len().max(1) as f64;
    for (j, a) in delaying.iter().enumerate() {
        let stats = of(a);
        if stats.count == 0 {
            continue;
        }
        let c = colour_among(names, &a.algorithm);
        marks.begin(panel_area, &a.algorithm)?;
        // Rows side by side within a percentile, in the middle 60% of its slot.
        let dx = if n > 1.0 {
            -0.3 + 0.6 * j as f64 / (n - 1.0)
        } else {
            0.0
        };
        for (i, (p, f)) in PERCENTILES.iter().enumerate() {
            let ns = f(stats);
            let point = (i as f64 + dx, scale.y(ns));
            let title = format!(
                "{}, {role}, {p}: {} ({} delayed)",
                a.algorithm,
                format_duration(ns),
                stats.count
            );
            marks.point(chart.backend_coord(&point), c, true, &title);
        }
        marks.end(panel_area)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Scale;

    #[test]
    fn a_panel_spanning_ten_times_is_logarithmic_with_decade_labels() {
        // nat.toml's legit panel: p50 2.6 s, p90 to max 60 s.
        let s = Scale::of(&[2_600_000_000, 59_800_000_000, 60_000_000_000]);
        assert_eq!(s, Scale::Log { from: 0.0, to: 2.0 });
        assert_eq!(
            [s.tick(0.0), s.tick(1.0), s.tick(2.0)],
            ["1s", "10s", "100s"]
        );
        assert_eq!(s.tick(0.5), "", "no label between decades");
        assert_eq!(
            Scale::Log {
                from: -2.0,
                to: 0.0
            }
            .tick(-2.0),
            "10ms"
        );
        // boundary.toml's abusive panel: 30 s to 60 s, a factor of 2: linear, in seconds.
        let s = Scale::of(&[30_000_000_000, 60_000_000_000]);
        assert!(
            matches!(s, Scale::Linear { unit, .. } if unit == 1e9),
            "{s:?}"
        );
        assert_eq!(s.tick(20.0), "20s");
    }
}
