//! `rlsim run --time-resolution-range`: how much a log's one-second timestamps can move the
//! figures. The scenario is run again with the requests of each second all at its start
//! (`together`, the burstiest reading) and evenly spread (`spread`, the smoothest), and each
//! headline figure is reported as the range over the two (docs/traffic.md, "Second-resolution
//! timestamps").

use crate::error::Result;
use crate::scenario::Scenario;
use crate::traffic::{Arrivals, SameSecond};
use serde_json::Value;

/// The figures reported, by their metric names.
const HEADLINE: [&str; 6] = [
    "admitted",
    "rejected",
    "legit_goodput",
    "abusive_leakage",
    "false_positive_keys",
    "keys_over_policy",
];

/// The scenario with every second-resolution replay source's requests placed `how`; `None`
/// when it has no such source.
fn placed(scenario: &Scenario, how: SameSecond) -> Option<Scenario> {
    let mut s = scenario.clone();
    let mut any = false;
    for t in &mut s.traffic {
        // An nginx text log is one-second when its log_format's only time is
        // `$time_local`/`$time_iso8601`.
        if let Arrivals::Replay { options, .. } = &mut t.arrivals
            && options.seconds_only()
        {
            options.same_second = how;
            any = true;
        }
    }
    any.then_some(s)
}

/// Per contender and headline figure, its value with the two extreme placements; the lines
/// `rlsim run` prints.
pub fn range_lines(scenario: &Scenario) -> Result<String> {
    let extremes = [SameSecond::Together, SameSecond::Spread];
    let mut runs = Vec::new();
    for how in extremes {
        let Some(s) = placed(scenario, how) else {
            return Ok(
                "time resolution: no source has one-second timestamps (clf, cloudfront, \
                       cloudflare); no range to report\n"
                    .to_string(),
            );
        };
        let (report, _) = crate::sim::run_all(&s, crate::sim::RunOptions::new())?;
        runs.push(report.algorithms);
    }
    let mut out = String::from(
        "time resolution: each figure over the two extreme placements of a second's requests \
         (together, spread); one value where they agree:\n",
    );
    for (a, b) in runs[0].iter().zip(&runs[1]) {
        let (fa, fb) = (
            crate::metrics::names::flatten(a),
            crate::metrics::names::flatten(b),
        );
        let get = |f: &[(String, Value)], name: &str| {
            f.iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.as_f64())
        };
        let mut parts = Vec::new();
        for name in HEADLINE {
            if let (Some(x), Some(y)) = (get(&fa, name), get(&fb, name)) {
                parts.push(format!("{name} {}", range(x, y)));
            }
        }
        out.push_str(&format!("  {}: {}\n", a.algorithm, parts.join(", ")));
    }
    Ok(out)
}

/// `x` (together) and `y` (spread) as one value, or as the range with each end named.
fn range(x: f64, y: f64) -> String {
    let (lo, hi) = (x.min(y), x.max(y));
    if lo == hi {
        fmt(x)
    } else {
        format!(
            "{}..{} (together {}, spread {})",
            fmt(lo),
            fmt(hi),
            fmt(x),
            fmt(y)
        )
    }
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.4}")
    }
}
