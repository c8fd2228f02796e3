//! The binary driven end to end: shipped scenarios, output files and their schema.

use crate::util::{repo, rlsim};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The schema of `summary.json`, pinned: a renamed or missing field fails to deserialise.
/// `summary.json`'s `intent`: the yardstick of every per-client figure (docs/metrics.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Intent {
    limit: u64,
    window_ns: u64,
    burst: u64,
    per: String,
    per_tier: Vec<serde_json::Value>,
    #[serde(default)]
    per_route: Vec<serde_json::Value>,
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    schema_version: u32,
    rlsim_version: String,
    scenario: ScenarioInfo,
    intent: Intent,
    verdict: Verdict,
    algorithms: Vec<Algorithm>,
    /// Only with `[[alert]]` rules (docs/observability.md).
    #[serde(default)]
    alerts: Vec<AlertResult>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AlertResult {
    contender: String,
    alert: String,
    alerts: u64,
    first_fired_ns: Option<u64>,
    firing_at_end: u64,
    episodes: Vec<Episode>,
    detection: Vec<Detection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Episode {
    label: String,
    fired_ns: u64,
    resolved_ns: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Detection {
    source: String,
    time_to_detect_ns: Option<u64>,
}

/// `summary.json`'s `verdict` (docs/outputs.md#verdict).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Verdict {
    recommended: Option<String>,
    runner_up: Option<String>,
    yardstick: String,
    basis: String,
    ranking: Vec<Place>,
    reasons: Vec<String>,
    trade_offs: Vec<String>,
    warnings: Vec<Warning>,
    goals: Vec<GoalOutcome>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Place {
    rank: usize,
    contender: String,
    goals_missed: Vec<String>,
    severe_delay: bool,
    figures: Figures,
    reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Figures {
    legit_goodput: f64,
    policy_violations: u64,
    abusive_leakage: Option<f64>,
    legit_delay_p99_ns: u64,
    delay_p99_ns: u64,
    needless_rejections: u64,
    state_bytes_per_key: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Warning {
    kind: String,
    contender: String,
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct GoalOutcome {
    name: String,
    goal: String,
    measured: Option<f64>,
    met: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioInfo {
    name: String,
    description: String,
    seed: u64,
    duration_ns: u64,
    timeseries_bucket_ns: u64,
    policy: Policy,
    sources: Vec<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Policy {
    limit: u64,
    window_ns: u64,
    burst: u64,
    key: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Algorithm {
    algorithm: String,
    limit: u64,
    window_ns: u64,
    burst: u64,
    offered: u64,
    admitted: u64,
    allowed: u64,
    delayed: u64,
    rejected: u64,
    retries: u64,
    abandoned: u64,
    attempts_per_request: f64,
    request_success_rate: f64,
    clients_gave_up: u64,
    peak_pending_retries: u64,
    retry_backlog_drain_ns: u64,
    burst_factor: f64,
    max_window_admitted: u64,
    worst_window_key: String,
    worst_window_end_ns: u64,
    policy_violations: u64,
    policy_violation_rate: f64,
    needless_rejections: u64,
    needless_rejection_rate: f64,
    keys_seen: u64,
    keys_within_policy: u64,
    keys_over_policy: u64,
    false_positive_keys: u64,
    false_negative_keys: u64,
    clients_hurt: u64,
    wrongly_allowed: u64,
    wrongly_rejected: u64,
    wrongly_decided_share: f64,
    mean_rate_error: Option<f64>,
    collateral_rejections: u64,
    collateral_clients: u64,
    fairness_jain: f64,
    remaining_lies: u64,
    retries_at_retry_after: u64,
    retries_at_retry_after_admitted: u64,
    peak_live_keys: u64,
    final_live_keys: u64,
    peak_state_bytes: u64,
    state_bytes_per_key: f64,
    peak_redis_bytes: u64,
    redis_bytes_per_key: f64,
    last_event_ns: u64,
    delay: Delay,
    roles: Roles,
    sources: Vec<Source>,
    /// Only with `[[alert]]` rules: `<rule>_<figure>` → number or null.
    #[serde(default)]
    alerts: Option<std::collections::BTreeMap<String, Option<f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Delay {
    count: u64,
    mean_ns: f64,
    p50_ns: u64,
    p90_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    max_ns: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Roles {
    legit_offered: u64,
    legit_admitted: u64,
    legit_goodput: f64,
    legit_delayed: u64,
    legit_delay_mean_ns: f64,
    legit_delay_p99_ns: u64,
    legit_delay_max_ns: u64,
    abusive_offered: u64,
    abusive_admitted: u64,
    /// `null` without abusive traffic.
    abusive_leakage: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Source {
    name: String,
    role: String,
    offered: u64,
    admitted: u64,
    delayed: u64,
    rejected: u64,
    retries: u64,
    abandoned: u64,
    admitted_share: f64,
    attempts_per_request: f64,
    request_success_rate: f64,
    policy_violations: u64,
    needless_rejections: u64,
    collateral_rejections: u64,
    clients_hurt: u64,
}

/// boundary.toml's verdict: its goals decide; gcra's 31 B of state beat token_bucket's 43 B.
fn assert_boundary_verdict(v: &Verdict) {
    assert_eq!(v.recommended.as_deref(), Some("gcra"));
    assert_eq!(v.runner_up.as_deref(), Some("token_bucket"));
    assert_eq!(v.basis, "goals");
    assert_eq!(v.yardstick, "100 per 1m per client");
    assert_eq!(
        v.reasons,
        ["gcra keeps less state per key (state per key 31 B against 43 B)"]
    );
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    assert_eq!(v.goals.len(), 4);
    assert!(v.goals.iter().all(|g| g.met));
    let order: Vec<(usize, &str)> = (v.ranking.iter())
        .map(|p| (p.rank, p.contender.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            (1, "gcra"),
            (2, "token_bucket"),
            (3, "sliding_window_counter"),
            (4, "sliding_window_log"),
            (5, "leaky_bucket"),
            (6, "fixed_window")
        ]
    );
    assert_eq!(v.ranking[5].goals_missed, ["policy_violations <= 0"]);
}

#[test]
fn boundary_scenario_writes_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let decisions = dir.path().join("decisions.csv");
    let assert = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--decisions")
        .arg(&decisions)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for name in [
        "fixed_window",
        "sliding_window_log",
        "sliding_window_counter",
        "token_bucket",
        "leaky_bucket",
        "gcra",
    ] {
        assert!(stdout.contains(name), "table lists {name}:\n{stdout}");
    }
    assert!(stdout.contains("burst_factor"));

    let summary: Summary =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary.schema_version, rlsim::report::SCHEMA_VERSION);
    assert_eq!(summary.rlsim_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(summary.scenario.name, "boundary attack");
    assert!(!summary.scenario.description.is_empty());
    assert_eq!(summary.scenario.seed, 7);
    assert_eq!(summary.scenario.duration_ns, 180_000_000_000);
    // The default bucket: the smallest round width giving at most 1000 buckets (3 min / 1 s).
    assert_eq!(summary.scenario.timeseries_bucket_ns, 1_000_000_000);
    assert_eq!(summary.scenario.policy.limit, 100);
    assert_eq!(summary.scenario.policy.window_ns, 60_000_000_000);
    assert_eq!(summary.scenario.policy.burst, 100);
    assert_eq!(summary.scenario.policy.key, ["ip"]);
    assert_eq!(summary.scenario.sources.len(), 2);
    assert_eq!(summary.algorithms.len(), 6);
    // Without [intent], the intent is the policy's limit, window and burst per real client.
    assert_eq!(
        (
            summary.intent.limit,
            summary.intent.window_ns,
            summary.intent.burst
        ),
        (100, 60_000_000_000, 100)
    );
    assert_eq!(summary.intent.per, "client");
    assert!(summary.intent.per_tier.is_empty());
    assert!(summary.intent.per_route.is_empty());
    assert_eq!(summary.intent.text, "100 per 1m per client");
    assert_boundary_verdict(&summary.verdict);
    let fw = &summary.algorithms[0];
    assert_eq!(fw.algorithm, "fixed_window");
    assert_eq!(fw.burst_factor, 2.0);
    let log = &summary.algorithms[1];
    assert_eq!(
        (
            log.algorithm.as_str(),
            log.burst_factor,
            log.policy_violations
        ),
        ("sliding_window_log", 1.0, 0)
    );
    for a in &summary.algorithms {
        assert_eq!(
            a.offered,
            a.allowed + a.delayed + a.rejected,
            "{}",
            a.algorithm
        );
        assert_eq!(a.admitted, a.allowed + a.delayed, "{}", a.algorithm);
    }

    // summary.csv: a header and one row per algorithm, the header after the JSON's fields.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with(
        "algorithm,limit,window_ns,burst,offered,admitted,allowed,delayed,rejected,retries,"
    ));
    assert!(lines[0].contains(",needless_rejections,") && lines[0].contains(",legit_goodput,"));
    assert_eq!(lines.len(), 7);
    assert!(lines[1].starts_with("fixed_window,100,60000000000,100,"));
    // Only the leaky bucket delays: five percentile rows.
    let delays = std::fs::read_to_string(out.join("delays.csv")).unwrap();
    assert_eq!(delays.lines().count(), 6);
    assert!(
        delays
            .lines()
            .skip(1)
            .all(|l| l.starts_with("leaky_bucket,"))
    );

    // timeseries.csv: per algorithm, the buckets add up to the totals.
    let mut reader = csv::Reader::from_path(out.join("timeseries.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "algorithm",
            "bucket_start_ns",
            "offered",
            "retries",
            "admitted",
            "delayed",
            "rejected"
        ]
    );
    let mut totals: BTreeMap<String, [u64; 5]> = BTreeMap::new();
    for row in reader.records() {
        let row = row.unwrap();
        let t = totals.entry(row[0].to_string()).or_default();
        for (i, total) in t.iter_mut().enumerate() {
            *total += row[2 + i].parse::<u64>().unwrap();
        }
    }
    for a in &summary.algorithms {
        let expected = [a.offered, a.retries, a.admitted, a.delayed, a.rejected];
        assert_eq!(totals[&a.algorithm], expected, "{}", a.algorithm);
    }

    // throughput.json is there, apart from the deterministic files.
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("throughput.json")).unwrap()).unwrap();
    assert_eq!(t["algorithms"].as_array().unwrap().len(), 6);
    assert!(t["algorithms"][0]["decisions_per_sec"].as_f64().unwrap() > 0.0);

    // The decision log: exact header, one row per request per algorithm, in time order.
    let mut reader = csv::Reader::from_path(&decisions).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "time_ns",
            "algorithm",
            "key",
            "outcome",
            "delay_ns",
            "retry_after_ns",
            "rule",
            "remaining",
            "reset_ns",
            "warning",
            "client",
            "source"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let offered: u64 = summary.algorithms.iter().map(|a| a.offered).sum();
    assert_eq!(rows.len() as u64, offered);
    let times: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "decisions are in time order"
    );
    // The sliding log rejects the second batch at 60 s; it may retry when the oldest admission
    // (59.9 s) leaves the window: 59.9 s later.
    let rejected_at_60 = rows
        .iter()
        .find(|r| &r[1] == "sliding_window_log" && &r[0] == "60000000000" && &r[2] == "203.0.113.7")
        .expect("the attacker's second batch");
    assert_eq!(
        (&rejected_at_60[3], &rejected_at_60[4], &rejected_at_60[5]),
        ("reject", "0", "59900000000")
    );
    // The short form has one rule, the policy: no rule name, nothing left, no warning.
    assert_eq!(
        (&rejected_at_60[6], &rejected_at_60[7], &rejected_at_60[9]),
        ("", "0", "0")
    );
    for r in &rows {
        match &r[3] {
            "allow" => assert_eq!((&r[4], &r[5]), ("0", "")),
            "delay" => assert!(r[4].parse::<u64>().unwrap() > 0 && r[5].is_empty()),
            "reject" => assert!(r[5].parse::<u64>().unwrap() > 0),
            other => panic!("unknown outcome {other}"),
        }
    }
    // Outputs are ordinary readable files, not private temporaries.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [out.join("summary.json"), decisions.clone()] {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "{}", file.display());
        }
    }
    // No temporary part files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");
}

#[test]
fn json_format_prints_the_summary() {
    let out = rlsim()
        .args(["run", "--format", "json"])
        .arg(repo().join("scenarios/boundary.toml"))
        .assert()
        .success();
    let summary: Summary = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary.algorithms.len(), 6);
    assert_boundary_verdict(&summary.verdict);
    // boundary.toml has one alert rule: one result per contender, figures in each row.
    assert_eq!(summary.alerts.len(), 6);
    let gcra = summary
        .algorithms
        .iter()
        .find(|a| a.algorithm == "gcra")
        .unwrap();
    let figures = gcra.alerts.as_ref().unwrap();
    assert_eq!(figures["ip_refusals_alerts"], Some(1.0));
    assert_eq!(figures["ip_refusals_first_fired_ns"], Some(60e9));
}

#[test]
fn every_shipped_scenario_runs() {
    // Each run (from the repository's root, with --out) asserts its own success.
    let runs = crate::shipped::runs();
    let shipped = crate::util::files_in("scenarios", "toml").len();
    assert_eq!(runs.len(), shipped);
}
