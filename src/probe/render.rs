//! The probe's figures for people: the terminal lines after the run's table and the report's
//! "Probe of the live service" section.

use super::judge::{ProbeReport, Spread};
use crate::report::document::Block;

fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

fn spread(s: &Spread) -> String {
    format!("p50 {} · p99 {} · max {}", ms(s.p50), ms(s.p99), ms(s.max))
}

fn share(part: u64, whole: u64) -> String {
    match whole {
        0 => "none to check".to_string(),
        w => format!("{part} of {w} ({:.1}%)", 100.0 * part as f64 / w as f64),
    }
}

/// The figures as (what, value) lines, each naming its yardstick.
fn lines(r: &ProbeReport) -> Vec<(String, String)> {
    let h = &r.headers;
    let s = &r.statuses;
    let answered: Vec<String> = s
        .answered
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    vec![
        (
            "requests sent".into(),
            format!(
                "{} ({} retries; {} retries past the bounds not sent) at speed {}",
                r.requests, r.retries, r.retries_not_sent, r.speed
            ),
        ),
        ("statuses".into(), answered.join(", ")),
        (
            "refusals answered 429".into(),
            share(s.refusals_429, s.refusals),
        ),
        (
            "refusals with Retry-After".into(),
            share(s.refusals_with_retry_after, s.refusals),
        ),
        (
            format!("remaining > 0 kept (next request of the {} key)", h.key),
            share(h.promises_kept, h.promises_checked),
        ),
        (
            format!("remaining = 0 then refused (next of the {} key)", h.key),
            share(h.zero_then_refused, h.zero_checked),
        ),
        (
            format!("Retry-After waited, then admitted ({} key)", h.key),
            share(h.retry_after_honoured, h.retry_after_checked),
        ),
        (
            "scheduling error (sent − planned, real time)".into(),
            spread(&r.scheduling_error_ns),
        ),
        ("latency, admitted".into(), spread(&r.latency_admitted_ns)),
        ("latency, refused".into(), spread(&r.latency_refused_ns)),
    ]
}

/// The lines the terminal shows after the run's table.
pub fn terminal(r: &ProbeReport) -> String {
    let mut out = format!("\nprobe of {} (docs/probe.md):\n", r.target);
    for (what, value) in lines(r) {
        out.push_str(&format!("  {what}: {value}\n"));
    }
    out
}

/// The report's section.
pub fn blocks(r: &ProbeReport) -> Vec<Block> {
    let rows = lines(r).into_iter().map(|(a, b)| vec![a, b]).collect();
    vec![
        Block::Heading(2, "Probe of the live service".into()),
        Block::Paragraph(format!(
            "The scenario's traffic was sent to {} at speed {}; the recorded contender is what \
             that service answered, judged like the models above. What only a live \
             service shows is below (docs/probe.md); `probe.json` has every figure.",
            r.target, r.speed
        )),
        Block::Table(vec!["figure".into(), "value".into()], rows),
    ]
}
