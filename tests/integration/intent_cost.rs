//! An intent in units of cost, end to end: the binary's figures against a brute force over its
//! own decision log and the traffic `rlsim traffic` writes (each request's cost and actual
//! cost), with a shaper's delays, many users behind one address and actual costs below the
//! requested ones.

use crate::util::{rlsim, write};
use std::collections::HashMap;

const W: u64 = 60_000_000_000;
const CEILING: u64 = 400;

const SCENARIO: &str = r#"
name = "nat cost"
seed = 5
duration = "5m"
algorithms = ["leaky_bucket", "gcra", "sliding_window_counter"]
[policy]
limit = 600
window = "1m"
burst = 200
key = "ip"
[intent]
unit = "cost"
limit = 400
window = "1m"
[[traffic]]
name = "office"
kind = "poisson"
users = 8
ip = "203.0.113.7"
rate = "6/min"
cost_dist = "lognormal"
cost = 10
cost_max = 80
actual_share = 1.0
actual_share_min = 0.3
[[traffic]]
name = "scraper"
role = "abusive"
kind = "poisson"
users = 2
rate = "40/min"
cost = 20
"#;

/// `(violations, units over, needless rejections, their units, the worst window's units)`.
type Figures = (u64, u64, u64, u64, u64);

/// Units of `log` in `(s − W, s]`.
fn units_in(log: &[(u64, u64)], s: u64) -> u64 {
    (log.iter())
        .filter(|&&(a, _)| a + W > s && a <= s)
        .map(|&(_, u)| u)
        .sum()
}

/// The figures by brute force, from each request's `(time, client, units)` and the contender's
/// `(outcome, delay)` for it: admissions in the order the engine records them (a release
/// before an arrival at the same instant), needless rejections over the whole history.
fn brute_force(requests: &[(u64, String, u64)], decisions: &[(String, u64)]) -> Figures {
    let mut admissions = Vec::new();
    let mut rejected = Vec::new();
    for (i, ((t, client, units), (outcome, delay))) in requests.iter().zip(decisions).enumerate() {
        match outcome.as_str() {
            "allow" => admissions.push((*t, 1, i, client, *units)),
            "delay" => admissions.push((t + delay, 0, i, client, *units)),
            "reject" => rejected.push((client, *t, *units)),
            other => panic!("outcome {other}"),
        }
    }
    admissions.sort();
    let mut logs: HashMap<&String, Vec<(u64, u64)>> = HashMap::new();
    let (mut violations, mut over, mut worst) = (0, 0, 0);
    for (t, _, _, client, units) in admissions {
        let log = logs.entry(client).or_default();
        log.push((t, units));
        let held = units_in(log, t);
        worst = worst.max(held);
        if held > CEILING {
            violations += 1;
            over += units.min(held - CEILING);
        }
    }
    let (mut needless, mut needless_units) = (0, 0);
    for (client, t, units) in rejected {
        let log = logs.get(client).map_or(&[][..], Vec::as_slice);
        let ends = std::iter::once(t).chain(
            (log.iter())
                .map(|&(a, _)| a)
                .filter(|&a| a > t && a < t + W),
        );
        if ends
            .into_iter()
            .all(|s| units_in(log, s) + units <= CEILING)
        {
            needless += 1;
            needless_units += units;
        }
    }
    (violations, over, needless, needless_units, worst)
}

#[test]
fn the_figures_in_units_are_a_brute_force_over_the_decision_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "nat.toml", SCENARIO);
    let (out, decisions, traffic) = (
        dir.path().join("out"),
        dir.path().join("dec.csv"),
        dir.path().join("traffic.csv"),
    );
    rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg("--decisions")
        .arg(&decisions)
        .arg(&path)
        .assert()
        .success();
    rlsim()
        .args(["traffic", "--quiet", "--out"])
        .arg(&traffic)
        .arg(&path)
        .assert()
        .success();
    let mut requests = Vec::new();
    let mut reader = csv::Reader::from_path(&traffic).unwrap();
    for row in reader.deserialize::<HashMap<String, String>>() {
        let row = row.unwrap();
        let cost: u64 = row["cost"].parse().unwrap();
        let units = row["actual_cost"].parse().unwrap_or(cost);
        requests.push((row["time"].parse().unwrap(), row["user"].clone(), units));
    }
    let mut by_row: HashMap<String, Vec<(String, u64)>> = HashMap::new();
    let mut reader = csv::Reader::from_path(&decisions).unwrap();
    for row in reader.deserialize::<HashMap<String, String>>() {
        let row = row.unwrap();
        let i = by_row.get(&row["algorithm"]).map_or(0, Vec::len);
        // The log and the trace list the same requests in the same order.
        assert_eq!(row["time_ns"].parse::<u64>().unwrap(), requests[i].0);
        assert_eq!(row["client"], requests[i].1);
        let delay = row["delay_ns"].parse().unwrap();
        (by_row.entry(row["algorithm"].clone()).or_default()).push((row["outcome"].clone(), delay));
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let rows = summary["algorithms"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let mut delayed = 0;
    for a in rows {
        let name = a["algorithm"].as_str().unwrap();
        let n = |v: &serde_json::Value| v.as_u64().unwrap();
        let measured = (
            n(&a["policy_violations"]),
            n(&a["cost"]["over_intent"]),
            n(&a["needless_rejections"]),
            n(&a["cost"]["needless"]),
            n(&a["max_window_admitted"]),
        );
        let decided = &by_row[name];
        assert_eq!(decided.len(), requests.len());
        delayed += decided.iter().filter(|(o, _)| o == "delay").count();
        assert_eq!(measured, brute_force(&requests, decided), "{name}");
        assert!(measured.0 > 0 && measured.2 > 0, "{name}: {measured:?}");
    }
    assert!(delayed > 0, "the shaper delays");
}
