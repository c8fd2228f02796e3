//! Chart 5: memory. Peak limiter state per key and in total per algorithm, each figure on its
//! own linear axis in B, KiB or MiB (the binary units of the labels).

use super::hbars::{self, Group, HBars};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

pub const FILE: &str = "memory.svg";

/// Bytes as a short label: `648 B`, `10.9 KiB`.
fn bytes(v: f64) -> String {
    crate::report::human_bytes(v.round() as u64)
}

/// The unit an axis of bytes up to `max` reads best in: B, KiB or MiB (binary, as the labels).
fn unit(max: f64) -> (f64, &'static str) {
    match max {
        m if m >= 1024.0 * 1024.0 => (1024.0 * 1024.0, "MiB"),
        m if m >= 1024.0 => (1024.0, "KiB"),
        _ => (1.0, "B"),
    }
}

/// What to see: who keeps the least and the most state per key (every row of a tie named).
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let lo = super::least(algorithms, |a| a.state_bytes_per_key);
    let hi = super::most(algorithms, |a| a.state_bytes_per_key);
    let size = |rows: &[&AlgorithmReport]| {
        let a = rows.first().map_or(0.0, |a| a.state_bytes_per_key);
        let each = if rows.len() > 1 { " each" } else { "" };
        format!("{}{each}", crate::report::human_bytes(a.round() as u64))
    };
    if lo.first()?.state_bytes_per_key == hi.first()?.state_bytes_per_key {
        return Some(format!(
            "every row keeps the same state per key ({}).",
            size(&lo[..1])
        ));
    }
    let names = hi
        .iter()
        .map(|a| format!("`{}`", a.algorithm))
        .collect::<Vec<_>>();
    Some(format!(
        "{} the least state per key ({}), {} the most ({}).",
        super::who(&lo, "keeps", "keep"),
        size(&lo),
        super::and_list(&names),
        size(&hi)
    ))
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Memory: {}", scenario.name);
    let series: Vec<(&str, Vec<Option<f64>>)> = algorithms
        .iter()
        .map(|a| {
            let values = vec![Some(a.state_bytes_per_key), Some(a.peak_state_bytes as f64)];
            (a.algorithm.as_str(), values)
        })
        .collect();
    // Each figure on its own linear axis, in the binary unit its largest value reads in.
    let group = |name, g: usize| {
        let max = series.iter().filter_map(|(_, v)| v[g]).fold(0.0, f64::max);
        let (divisor, unit) = unit(max);
        Group {
            name,
            axis: format!("bytes ({unit})"),
            divisor,
            max: None,
        }
    };
    let groups = vec![group("per key (at peak)", 0), group("total (peak)", 1)];
    let svg = hbars::draw(HBars {
        file: FILE,
        title: &title,
        groups,
        series,
        label: &bytes,
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: lead(algorithms),
        caption:
            "Peak bytes of limiter state (table and per-key buffers) divided by the live keys \
                  at that peak, and in total."
                .into(),
        title,
        svg,
    })
}
