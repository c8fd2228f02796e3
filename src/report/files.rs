//! The machine-readable outputs: JSON and CSV, as bytes.

use super::Summary;
use crate::metrics::{AlgorithmReport, Throughput};
use crate::scenario::Scenario;
use serde::Serialize;

/// `summary.json`: pretty-printed, newline-terminated.
pub fn summary_json(summary: &Summary) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(summary).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// One `summary.csv` row: the scalar figures of one algorithm.
#[derive(Serialize)]
struct SummaryRow<'a> {
    algorithm: &'a str,
    limit: u64,
    window_ns: u64,
    burst: u64,
    offered: u64,
    admitted: u64,
    allowed: u64,
    delayed: u64,
    rejected: u64,
    burst_factor: f64,
    max_window_admitted: u64,
    policy_violations: u64,
    policy_violation_rate: f64,
    legit_goodput: f64,
    abusive_leakage: f64,
    keys_seen: u64,
    peak_live_keys: u64,
    final_live_keys: u64,
    peak_state_bytes: u64,
    delay_p50_ns: u64,
    delay_p99_ns: u64,
    delay_max_ns: u64,
}

pub fn summary_csv(algorithms: &[AlgorithmReport]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for a in algorithms {
        w.serialize(SummaryRow {
            algorithm: &a.algorithm,
            limit: a.limit,
            window_ns: a.window_ns,
            burst: a.burst,
            offered: a.offered,
            admitted: a.admitted,
            allowed: a.allowed,
            delayed: a.delayed,
            rejected: a.rejected,
            burst_factor: a.burst_factor,
            max_window_admitted: a.max_window_admitted,
            policy_violations: a.policy_violations,
            policy_violation_rate: a.policy_violation_rate,
            legit_goodput: a.roles.legit_goodput,
            abusive_leakage: a.roles.abusive_leakage,
            keys_seen: a.keys_seen,
            peak_live_keys: a.peak_live_keys,
            final_live_keys: a.final_live_keys,
            peak_state_bytes: a.peak_state_bytes,
            delay_p50_ns: a.delay.p50_ns,
            delay_p99_ns: a.delay.p99_ns,
            delay_max_ns: a.delay.max_ns,
        })
        .expect("writing to memory cannot fail");
    }
    w.into_inner().expect("writing to memory cannot fail")
}

#[derive(Serialize)]
struct TimeseriesRow<'a> {
    algorithm: &'a str,
    bucket_start_ns: u64,
    offered: u64,
    admitted: u64,
    delayed: u64,
    rejected: u64,
}

/// `timeseries.csv`: every algorithm over the same buckets, from 0 to the last bucket any
/// algorithm used (the scenario's end, or a later release of a delayed request).
pub fn timeseries_csv(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<u8> {
    let buckets = algorithms
        .iter()
        .map(|a| a.timeseries.len())
        .chain([scenario.duration.div_ceil(scenario.bucket) as usize])
        .max()
        .unwrap_or(0);
    let mut w = csv::Writer::from_writer(Vec::new());
    for a in algorithms {
        for i in 0..buckets {
            let b = a.timeseries.get(i).copied().unwrap_or_default();
            w.serialize(TimeseriesRow {
                algorithm: &a.algorithm,
                bucket_start_ns: i as u64 * scenario.bucket,
                offered: b.offered,
                admitted: b.admitted,
                delayed: b.delayed,
                rejected: b.rejected,
            })
            .expect("writing to memory cannot fail");
        }
    }
    w.into_inner().expect("writing to memory cannot fail")
}

#[derive(Serialize)]
struct ThroughputFile<'a> {
    note: &'static str,
    algorithms: &'a [Throughput],
}

/// `throughput.json`: the wall-clock figures, apart from the deterministic outputs.
pub fn throughput_json(throughput: &[Throughput]) -> Vec<u8> {
    let file = ThroughputFile {
        note: "wall-clock measurements of this machine; they vary from run to run",
        algorithms: throughput,
    };
    let mut out = serde_json::to_vec_pretty(&file).expect("plain data serialises");
    out.push(b'\n');
    out
}
