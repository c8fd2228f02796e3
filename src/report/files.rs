//! The machine-readable outputs: JSON and CSV, as bytes.

use super::Summary;
use crate::metrics::{self, AlgorithmReport, Throughput};
use crate::scenario::Scenario;
use serde::Serialize;

/// `summary.json`: pretty-printed, newline-terminated.
pub fn summary_json(summary: &Summary) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(summary).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// `summary.csv`: one row per algorithm, one column per figure of [`metrics::flatten`], so the
/// CSV and `summary.json` can never disagree, then `yardstick`: what the judged figures
/// (violations, burst factor, needless and collateral rejections) are measured against, the
/// CSV's only way to name it ([`super::yardstick`]). Absent values (`null`) are empty cells, and
/// so is a figure one row lacks that another has (the columns are every row's figures, in order
/// of first appearance).
pub fn summary_csv(algorithms: &[AlgorithmReport], yardstick: &str) -> Vec<u8> {
    let rows: Vec<_> = algorithms.iter().map(metrics::flatten).collect();
    let mut columns: Vec<&str> = Vec::new();
    for (name, _) in rows.iter().flatten() {
        if !columns.contains(&name.as_str()) {
            columns.push(name);
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    if !rows.is_empty() {
        w.write_record(columns.iter().copied().chain(["yardstick"]))
            .expect("writing to memory cannot fail");
    }
    for fields in &rows {
        let values = columns.iter().map(|column| {
            match fields
                .iter()
                .find(|(name, _)| name == column)
                .map(|(_, v)| v)
            {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            }
        });
        w.write_record(values.chain([yardstick.to_string()]))
            .expect("writing to memory cannot fail");
    }
    w.into_inner().expect("writing to memory cannot fail")
}

#[derive(Serialize)]
struct TimeseriesRow<'a> {
    algorithm: &'a str,
    bucket_start_ns: u64,
    offered: u64,
    retries: u64,
    admitted: u64,
    delayed: u64,
    rejected: u64,
}

/// Time buckets every algorithm is reported over: from 0 to the last bucket any algorithm used
/// (the scenario's end, or a later release or retry).
pub fn bucket_count(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> usize {
    algorithms
        .iter()
        .map(|a| a.timeseries.len())
        .chain([scenario.duration.div_ceil(scenario.bucket) as usize])
        .max()
        .unwrap_or(0)
}

/// `timeseries.csv`: every algorithm over the same buckets, from 0 to the last bucket any
/// algorithm used (the scenario's end, or a later release of a delayed request).
pub fn timeseries_csv(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<u8> {
    let buckets = bucket_count(scenario, algorithms);
    let mut w = csv::Writer::from_writer(Vec::new());
    for a in algorithms {
        for i in 0..buckets {
            let b = a.timeseries.get(i).copied().unwrap_or_default();
            w.serialize(TimeseriesRow {
                algorithm: &a.algorithm,
                bucket_start_ns: i as u64 * scenario.bucket,
                offered: b.offered,
                retries: b.retries,
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

#[derive(Serialize)]
struct DelayRow<'a> {
    algorithm: &'a str,
    percentile: &'static str,
    delay_ns: u64,
}

/// `delays.csv`: the delay percentiles of every algorithm that delayed requests.
pub fn delays_csv(algorithms: &[AlgorithmReport]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for a in algorithms.iter().filter(|a| a.delay.count > 0) {
        let d = &a.delay;
        for (percentile, delay_ns) in [
            ("50", d.p50_ns),
            ("90", d.p90_ns),
            ("99", d.p99_ns),
            ("99.9", d.p999_ns),
            ("100", d.max_ns),
        ] {
            w.serialize(DelayRow {
                algorithm: &a.algorithm,
                percentile,
                delay_ns,
            })
            .expect("writing to memory cannot fail");
        }
    }
    if algorithms.iter().all(|a| a.delay.count == 0) {
        w.write_record(["algorithm", "percentile", "delay_ns"])
            .expect("writing to memory cannot fail");
    }
    w.into_inner().expect("writing to memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::BacktestReport;

    #[test]
    fn a_row_without_a_figure_others_have_gets_empty_cells_not_a_panic() {
        let plain = AlgorithmReport {
            algorithm: "plain".into(),
            ..Default::default()
        };
        let tested = AlgorithmReport {
            algorithm: "tested".into(),
            backtest: Some(BacktestReport {
                decisions: 7,
                ..Default::default()
            }),
            ..Default::default()
        };
        let text = String::from_utf8(summary_csv(&[plain, tested], "intent")).unwrap();
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        let header = rows.headers().unwrap().clone();
        let at = header
            .iter()
            .position(|h| h == "backtest_decisions")
            .unwrap();
        let rows: Vec<_> = rows.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == header.len()));
        assert_eq!(&rows[0][at], "");
        assert_eq!(&rows[1][at], "7");
        assert_eq!(&rows[1][header.len() - 1], "intent");
    }
}
