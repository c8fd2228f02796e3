//! The reports' "Deployments" section and terminal lines: for each contender run on replicas,
//! its store, what it let through beyond the policy, the load it put on the store, the latency
//! it added, and what outages and lost expiries did. Absent without deployments.

use super::document::Block;
use crate::metrics::{AlgorithmReport, DeploymentReport};
use crate::time::format_duration;

fn deployed(
    algorithms: &[AlgorithmReport],
) -> impl Iterator<Item = (&AlgorithmReport, &DeploymentReport)> {
    algorithms
        .iter()
        .filter_map(|a| a.deployment.as_ref().map(|d| (a, d)))
}

/// `racy on 4 replicas (round_robin), rtt 1ms` and the like.
fn describe(d: &DeploymentReport) -> String {
    if d.store == "none" {
        return "one node".into();
    }
    let kind = match d.store.as_str() {
        "shared" => format!("shared {}", d.ops),
        "local" if d.ops == "divided" => "local, limit divided".into(),
        other => other.to_string(),
    };
    let mut s = format!("{kind} on {} replicas ({})", d.replicas, d.balancer);
    if d.rtt_ns > 0 {
        s.push_str(&format!(", rtt {}", format_duration(d.rtt_ns)));
    }
    if d.sync_every_ns > 0 {
        s.push_str(&format!(", sync {}", format_duration(d.sync_every_ns)));
    }
    s
}

fn row(a: &AlgorithmReport, d: &DeploymentReport) -> Vec<String> {
    vec![
        a.algorithm.clone(),
        describe(d),
        a.admitted.to_string(),
        a.policy_violations.to_string(),
        format!("{:.2}", a.burst_factor),
        format!("{:.0}", d.store_ops_per_sec),
        format!(
            "{} / {}",
            format_duration(d.latency_p99_ns),
            format_duration(d.latency_max_ns)
        ),
        format!("{} ({} admitted)", d.outage_requests, d.outage_admitted),
        d.lost_updates.to_string(),
        d.keys_without_expiry.to_string(),
    ]
}

const HEADER: [&str; 10] = [
    "contender",
    "deployment",
    "admitted",
    "violations",
    "burst factor",
    "store ops/s",
    "latency p99 / max",
    "during outages",
    "lost updates",
    "keys without expiry",
];

/// The section's blocks; empty when no contender runs with a deployment.
pub fn blocks(algorithms: &[AlgorithmReport]) -> Vec<Block> {
    let rows: Vec<Vec<String>> = deployed(algorithms).map(|(a, d)| row(a, d)).collect();
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Deployments".into()),
        Block::Paragraph(
            "Contenders run on several replicas (docs/distributed.md). `violations` and `burst \
             factor` count each key's admissions across every replica against the policy's \
             limit: what the deployment let through beyond the intent. `store ops/s` is the \
             load the limiter puts on the store; latency is what the store adds to a request."
                .into(),
        ),
        Block::Table(HEADER.iter().map(|h| h.to_string()).collect(), rows),
    ]
}

/// One terminal line per deployed contender (empty without deployments).
pub fn lines(algorithms: &[AlgorithmReport]) -> String {
    let mut out = String::new();
    for (a, d) in deployed(algorithms) {
        if d.store == "none" {
            continue;
        }
        if out.is_empty() {
            out.push_str("\ndeployments (docs/distributed.md):\n");
        }
        let mut line = String::new();
        line.push_str(&format!(
            "  {}: {}; {} violations, {:.0} store ops/s, latency p99 {}",
            a.algorithm,
            describe(d),
            a.policy_violations,
            d.store_ops_per_sec,
            format_duration(d.latency_p99_ns),
        ));
        if d.outage_requests > 0 {
            line.push_str(&format!(
                ", {} during outages ({} admitted)",
                d.outage_requests, d.outage_admitted
            ));
        }
        if d.lost_updates > 0 {
            line.push_str(&format!(", {} lost updates", d.lost_updates));
        }
        if d.keys_without_expiry > 0 {
            line.push_str(&format!(
                ", {} keys without expiry ({} refused on them)",
                d.keys_without_expiry, d.rejected_on_keys_without_expiry
            ));
        }
        // The terminal's width: a long line continues, indented.
        out.push_str(&super::table::wrap(&line, super::table::WIDTH, "    "));
    }
    out
}
