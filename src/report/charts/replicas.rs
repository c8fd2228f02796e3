//! Deployment charts: over-admission (`policy_violations`, admissions beyond the policy's limit
//! per key, counted across every replica) against the number of replicas, against the round
//! trip to the store, and against the cached store's sync period. Each is drawn only when the
//! scenario's contenders vary that value: a line joins contenders that differ in it alone.

use super::Chart;
use crate::error::Result;
use crate::metrics::{AlgorithmReport, DeploymentReport};
use crate::time::format_duration;
use std::collections::BTreeMap;

/// One varied value: its file, axis, how to read it from a deployment, and how to name the
/// line of the rows that share everything else.
struct Axis {
    file: &'static str,
    field: &'static str,
    x: fn(&DeploymentReport) -> f64,
    line: fn(&DeploymentReport) -> String,
}

const AXES: [Axis; 3] = [
    Axis {
        file: "replicas.svg",
        field: "replicas",
        x: |d| d.replicas as f64,
        line: |d| match d.store.as_str() {
            "cached" => format!("cached, sync {}", format_duration(d.sync_every_ns)),
            "shared" => format!("{}, rtt {}", d.ops, format_duration(d.rtt_ns)),
            _ => d.ops.clone(),
        },
    },
    Axis {
        file: "rtt.svg",
        field: "round trip (ms)",
        x: |d| d.rtt_ns as f64 / 1e6,
        line: |d| format!("{}, {} replicas", d.ops, d.replicas),
    },
    Axis {
        file: "sync.svg",
        field: "sync period (ms)",
        x: |d| d.sync_every_ns as f64 / 1e6,
        line: |d| format!("cached, {} replicas", d.replicas),
    },
];

/// The charts the run's deployments support (none without deployments).
pub fn charts(algorithms: &[AlgorithmReport]) -> Result<Vec<Chart>> {
    let mut out = Vec::new();
    for axis in &AXES {
        let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for a in algorithms {
            let Some(d) = &a.deployment else { continue };
            let applies = match axis.file {
                "replicas.svg" => d.store != "none",
                "rtt.svg" => d.store == "shared",
                _ => d.store == "cached",
            };
            if applies {
                lines
                    .entry((axis.line)(d))
                    .or_default()
                    .push(((axis.x)(d), a.policy_violations as f64));
            }
        }
        let series: Vec<(&str, Vec<(f64, f64)>)> = lines
            .iter_mut()
            .filter_map(|(name, points)| {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                points.dedup_by(|a, b| a.0 == b.0);
                (points.len() >= 2).then(|| (name.as_str(), points.clone()))
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        let chart = super::sweep_line::chart(
            axis.field,
            "policy_violations",
            &series,
            ", one line per deployment that differs only in it (admissions beyond the policy's \
             limit per key, across every replica)",
        )?;
        out.push(Chart {
            file: axis.file,
            title: format!("Over-admission against {}", axis.field),
            ..chart
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, store: &str, ops: &str, replicas: u64, rtt: u64, v: u64) -> AlgorithmReport {
        AlgorithmReport {
            algorithm: name.into(),
            policy_violations: v,
            deployment: Some(DeploymentReport {
                replicas,
                store: store.into(),
                ops: ops.into(),
                rtt_ns: rtt,
                ..DeploymentReport::default()
            }),
            ..AlgorithmReport::default()
        }
    }

    #[test]
    fn lines_join_rows_that_differ_in_the_axis_only() {
        let rows = [
            row("l2", "local", "local", 2, 0, 10),
            row("l4", "local", "local", 4, 0, 30),
            row("r1", "shared", "racy", 4, 1_000_000, 5),
            row("r5", "shared", "racy", 4, 5_000_000, 50),
            row("a", "shared", "atomic", 4, 1_000_000, 0),
        ];
        let drawn = charts(&rows).unwrap();
        let files: Vec<&str> = drawn.iter().map(|c| c.file).collect();
        // Racy varies in rtt only; no cached row: no sync chart.
        assert_eq!(files, ["replicas.svg", "rtt.svg"]);
        assert!(
            drawn[0].svg.contains("\nlocal\n</text>"),
            "{}",
            drawn[0].svg
        );
        assert!(!drawn[0].svg.contains("racy"));
        assert!(drawn[1].svg.contains("\nracy, 4 replicas\n</text>"));
        assert!(drawn[1].svg.contains("\nround trip (ms)\n</text>"));
        assert!(charts(&rows[4..]).unwrap().is_empty());
    }
}
