//! Chart 6: delay percentiles of the algorithms that delay requests (shapers), split by role:
//! a panel for legit clients and one for abusive clients (when any was delayed), since an
//! attacker held back for a minute is a success and a user held back for a minute is not.
//! Percentiles are categories, so each row's are dots side by side, never joined by lines.

use super::{
    LegendEntry, Mark, Marks, caption_size, colour_among, headroom, panel, panels, plot_err,
    render, row_names, tick, time_unit,
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

/// What to see: who delays the longest.
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let a = super::most(algorithms, |a| a.delay.p99_ns as f64)?;
    Some(format!(
        "`{}` delays the longest: p99 {}, max {}.",
        a.algorithm,
        format_duration(a.delay.p99_ns),
        format_duration(a.delay.max_ns)
    ))
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Delay percentiles by role: {}", scenario.name);
    let names = row_names(algorithms);
    let delaying: Vec<&AlgorithmReport> = algorithms.iter().filter(|a| a.delay.count > 0).collect();
    let roles: Vec<_> = ROLES
        .iter()
        .filter(|(_, of)| delaying.iter().any(|a| of(a).count > 0))
        .collect();
    let max = delaying.iter().map(|a| a.delay.max_ns).max().unwrap_or(0);
    let (unit, unit_name) = time_unit(max);
    let legend: Vec<LegendEntry> = delaying
        .iter()
        .map(|a| LegendEntry::algorithm(&names, &a.algorithm, Mark::Dot))
        .collect();
    let last = (PERCENTILES.len() - 1) as f64;
    let y_desc = format!("delay ({unit_name})");
    let n = delaying.len().max(1) as f64;
    let svg = render(FILE, &title, &legend, |area, marks: &mut Marks| {
        let areas = panels(
            FILE,
            area,
            &title,
            "percentile of the role's delayed requests",
            &y_desc,
            roles.len(),
        )?;
        for (panel_area, (role, of)) in areas.iter().zip(&roles) {
            let chart = panel(
                FILE,
                panel_area,
                role,
                caption_size(roles.len()),
                -0.5..last + 0.5,
                0.0..headroom(max as f64 / unit),
                &tick,
                0,
            )?;
            // Label the percentiles at their own x, under the axis (plotters' x ticks are off).
            let style = (super::FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            for (i, (name, _)) in PERCENTILES.iter().enumerate() {
                let (px, py) = chart.backend_coord(&(i as f64, 0.0));
                let (ox, oy) = panel_area.get_base_pixel();
                panel_area
                    .draw(&Text::new(
                        name.to_string(),
                        (px - ox, py - oy + 4),
                        style.clone(),
                    ))
                    .map_err(plot_err(FILE))?;
            }
            for (j, a) in delaying.iter().enumerate() {
                let stats = of(a);
                if stats.count == 0 {
                    continue;
                }
                let c = colour_among(&names, &a.algorithm);
                marks.begin(panel_area, &a.algorithm)?;
                // Rows side by side within a percentile, in the middle 60% of its slot.
                let dx = if n > 1.0 {
                    -0.3 + 0.6 * j as f64 / (n - 1.0)
                } else {
                    0.0
                };
                for (i, (p, f)) in PERCENTILES.iter().enumerate() {
                    let ns = f(stats);
                    let point = (i as f64 + dx, ns as f64 / unit);
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
        }
        Ok(())
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption: "How long the requests an algorithm delayed waited before reaching the backend, \
                  by percentile, for legit and for abusive clients apart (from a histogram with 3 \
                  significant figures; max is exact)."
            .into(),
        title,
        svg,
    })
}
