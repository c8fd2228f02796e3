//! The report's "Alerts and dashboards" section: what on-call would have seen (alert firings,
//! time to detect each abusive source) and the dashboard figures (top keys by refusals, refused
//! share over time, retry intervals). Present only for observed runs (`[[alert]]` rules or
//! `--metrics-out`), so other reports are unchanged.

use super::document::Block;
use crate::observe::{Observation, RETRY_CLASSES, retry_class_names};
use crate::time::Nanos;

/// Seconds with up to three decimals, for tables.
fn secs(ns: Nanos) -> String {
    let s = format!("{:.3}", ns as f64 / 1e9);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

pub fn blocks(observations: &[Observation]) -> Vec<Block> {
    if observations.is_empty() {
        return Vec::new();
    }
    let mut b = vec![Block::Heading(2, "Alerts and dashboards".into())];
    let any_alerts = observations.iter().any(|o| !o.alerts.is_empty());
    if any_alerts {
        b.push(Block::Paragraph(
            "The scenario's alert rules, evaluated on the virtual timeline (docs/observability.md): \
             distinct alerts (many is an alert storm), the first firing, and per abusive source \
             the time from its first request to the first alert about it."
                .into(),
        ));
        let header = [
            "contender",
            "alert",
            "alerts",
            "first fired",
            "still firing",
            "time to detect",
        ];
        let mut rows = Vec::new();
        for o in observations {
            for a in &o.alerts {
                let detect: Vec<String> = a
                    .detection
                    .iter()
                    .map(|d| {
                        let t = d.time_to_detect_ns.map_or("never".to_string(), secs);
                        format!("{}: {t}", d.source)
                    })
                    .collect();
                rows.push(vec![
                    o.contender.clone(),
                    a.alert.clone(),
                    a.alerts.to_string(),
                    a.first_fired_ns.map_or("never".to_string(), secs),
                    a.firing_at_end.to_string(),
                    if detect.is_empty() {
                        "-".into()
                    } else {
                        detect.join(", ")
                    },
                ]);
            }
        }
        b.push(Block::Table(header.map(String::from).to_vec(), rows));
    }
    b.push(Block::Heading(3, "Top keys by refusals".into()));
    let mut rows = Vec::new();
    for o in observations {
        for (rank, (key, n)) in o.top_refused_keys.iter().enumerate() {
            rows.push(vec![
                o.contender.clone(),
                (rank + 1).to_string(),
                key.clone(),
                n.to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        b.push(Block::Paragraph("No request was refused.".into()));
    } else {
        let header = ["contender", "rank", "key", "refusals"];
        b.push(Block::Table(header.map(String::from).to_vec(), rows));
    }
    b.push(Block::Heading(3, "Retry intervals".into()));
    b.push(Block::Paragraph(
        "Retries by the time since the same client's previous refusal: retries far shorter than \
         the advertised Retry-After point at misconfigured clients."
            .into(),
    ));
    let mut header = vec!["interval".to_string()];
    header.extend(observations.iter().map(|o| o.contender.clone()));
    let names = retry_class_names();
    let rows = (0..=RETRY_CLASSES.len())
        .map(|i| {
            let mut row = vec![names[i].clone()];
            row.extend(
                observations
                    .iter()
                    .map(|o| o.retry_intervals[i].to_string()),
            );
            row
        })
        .collect();
    b.push(Block::Table(header, rows));
    b
}
