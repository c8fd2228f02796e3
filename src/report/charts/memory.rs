//! Chart 5: memory. Peak limiter state per key and in total per algorithm, on a log axis when
//! the values are orders of magnitude apart.

use super::bars::{self, Bars};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

pub const FILE: &str = "memory.svg";

/// Bytes as a short label: `648 B`, `10.9 KiB`.
fn bytes(v: f64) -> String {
    crate::report::human_bytes(v.round() as u64)
}

/// A power of ten of bytes, for log-axis ticks: `10 B`, `100 B`, `1 kB`, `10 kB`.
fn decimal_bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = v.round();
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v} {}", UNITS[unit])
}

pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<super::Chart> {
    let title = format!("Memory: {}", scenario.name);
    let series: Vec<(&str, Vec<f64>)> = algorithms
        .iter()
        .map(|a| {
            let values = vec![a.state_bytes_per_key, a.peak_state_bytes as f64];
            (a.algorithm.as_str(), values)
        })
        .collect();
    let log = bars::wants_log(series.iter().flat_map(|(_, v)| v.iter().copied()));
    let y_desc = if log { "bytes (log scale)" } else { "bytes" };
    let svg = bars::draw(Bars {
        file: FILE,
        title: &title,
        groups: &["per key (at peak)", "total (peak)"],
        y_desc,
        series,
        label: &bytes,
        log,
        // On the log axis a tick is an exponent.
        tick: if log {
            &|e| decimal_bytes(10f64.powf(e))
        } else {
            &bytes
        },
    })?;
    Ok(super::Chart {
        file: FILE,
        caption:
            "Peak bytes of limiter state (table and per-key buffers) divided by the live keys \
                  at that peak, and in total."
                .into(),
        title,
        svg,
    })
}
