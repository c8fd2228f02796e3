//! `rlsim sweep`, `rlsim merge` and `run --set`, driven through the binary.

use crate::util::{repo, rlsim, write};
use std::path::Path;

/// A user at 5/min and a scraper at 100/min on addresses of their own, limit swept 10..40:
/// a fixed window admits exactly `limit` of the scraper's 100 per minute, so its leakage is
/// `limit / 100`, and the user (5/min) is never limited.
const HAND: &str = r#"
name = "hand"
duration = "10m"
algorithms = ["fixed_window", "sliding_window_log"]

[policy]
limit = 10
window = "1m"
key = "ip"

[goals]
min_legit_goodput = 1.0
max_abusive_leakage = 0.25

[sweep]
set = ["policy.limit=10..40:10"]
expect = [
    "meeting == 4",
    "recommended.policy.limit == 10",
    "recommended.abusive_leakage == 0.1",
    "recommended.algorithm == fixed_window",
]

[[traffic]]
name = "user"
role = "legit"
kind = "constant"
ip = "10.0.0.1"
rate = "5/min"

[[traffic]]
name = "scraper"
role = "abusive"
kind = "constant"
ip = "10.0.0.2"
rate = "100/min"
"#;

const FILES: [&str; 7] = [
    "sweep.csv",
    "sweep.json",
    "sweep.md",
    "sweep.html",
    "charts/frontier.svg",
    "charts/sweep_line.svg",
    "charts/heatmap.svg",
];

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn sweep(scenario: &Path, out: &Path, extra: &[&str], threads: &str) {
    rlsim()
        .arg("sweep")
        .arg(scenario)
        .args(["--set", "policy.burst=1,5", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .env("RAYON_NUM_THREADS", threads)
        .assert()
        .success();
}

#[test]
fn the_hand_computed_sweep_recommends_the_lowest_limit() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "hand.toml", HAND);
    let out = dir.path().join("out");
    rlsim()
        .arg("sweep")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Recommended: fixed_window with policy.limit = 10 (point 0): 4 of 8 rows meet every goal",
        ));
    let csv = String::from_utf8(read(&out, "sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header[..4], ["point", "policy.limit", "algorithm", "limit"]);
    let leak = header.iter().position(|h| *h == "abusive_leakage").unwrap();
    let leakage: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(leak).unwrap())
        .collect();
    assert_eq!(
        leakage,
        ["0.1", "0.1", "0.2", "0.2", "0.3", "0.3", "0.4", "0.4"]
    );
    let json: serde_json::Value = serde_json::from_slice(&read(&out, "sweep.json")).unwrap();
    assert_eq!(json["recommendation"]["recommended"]["point"], 0);
    assert_eq!(json["recommendation"]["meeting"], 4);
    // The claims of [sweep] pass in `rlsim check`; a wrong one fails it (exit 1).
    rlsim()
        .arg("check")
        .arg(&scenario)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "pass  hand: sweep: recommended.policy.limit == 10 (measured 10)",
        ));
    let wrong = write(
        dir.path(),
        "wrong.toml",
        &HAND.replace(
            "recommended.policy.limit == 10",
            "recommended.policy.limit == 20",
        ),
    );
    rlsim()
        .arg("check")
        .arg(&wrong)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("FAIL"));
}

#[test]
fn no_point_meeting_every_goal_is_said_with_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "hand.toml",
        &HAND.replace("max_abusive_leakage = 0.25", "max_abusive_leakage = 0.05"),
    );
    rlsim()
        .arg("sweep")
        .arg(&scenario)
        .assert()
        .code(1)
        .stdout(predicates::str::contains(
            "No point meets abusive_leakage <= 0.05: the nearest is 0.1 at point 0 (fixed_window), 0.05 from the bound.",
        ));
}

#[test]
fn sweeps_are_identical_on_one_thread_or_several() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "hand.toml", HAND);
    let (one, four) = (dir.path().join("one"), dir.path().join("four"));
    sweep(&scenario, &one, &[], "1");
    sweep(&scenario, &four, &[], "4");
    for name in FILES {
        assert!(read(&one, name) == read(&four, name), "{name} differs");
    }
}

#[test]
fn merged_shards_are_the_unsharded_sweep_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "hand.toml", HAND);
    let whole = dir.path().join("whole");
    sweep(&scenario, &whole, &[], "2");
    let shards: Vec<_> = (1..=3)
        .map(|k| dir.path().join(format!("shard{k}")))
        .collect();
    for (k, shard) in shards.iter().enumerate() {
        sweep(&scenario, shard, &["--shard", &format!("{}/3", k + 1)], "2");
        assert!(
            !shard.join("sweep.md").exists(),
            "a shard writes its rows only"
        );
    }
    let merged = dir.path().join("merged");
    // Any order of shard directories.
    rlsim()
        .arg("merge")
        .args([&shards[2], &shards[0], &shards[1]])
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    for name in FILES {
        assert!(read(&whole, name) == read(&merged, name), "{name} differs");
    }
    // A missing shard, a repeated one, another seed or another shard count: refused, exit 2.
    let refuse = |dirs: &[&Path], says: &str| {
        rlsim()
            .arg("merge")
            .args(dirs)
            .arg("--out")
            .arg(dir.path().join("bad"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says.to_string()));
    };
    refuse(&[&shards[0], &shards[1]], "shard 3/3 is missing");
    refuse(&[&shards[0], &shards[0], &shards[1]], "are both shard 1/3");
    let seeded = dir.path().join("seeded");
    sweep(&scenario, &seeded, &["--shard", "2/3", "--seed", "9"], "1");
    refuse(
        &[&shards[0], &seeded, &shards[2]],
        "different seed (0 vs 9)",
    );
    let halves = dir.path().join("half");
    sweep(&scenario, &halves, &["--shard", "1/2"], "1");
    refuse(&[&shards[0], &halves], "different shard count (3 vs 2)");
    let other = write(
        dir.path(),
        "other.toml",
        &HAND.replace("name = \"hand\"", "name = \"other\""),
    );
    let foreign = dir.path().join("foreign");
    sweep(&other, &foreign, &["--shard", "2/3"], "1");
    refuse(
        &[&shards[0], &foreign, &shards[2]],
        "different scenario (hand vs other)",
    );
}

#[test]
fn bad_sweep_values_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "hand.toml", HAND);
    let refuse = |args: &[&str], says: &str| {
        rlsim()
            .arg("sweep")
            .arg(&scenario)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says.to_string()));
    };
    refuse(
        &["--set", "policy.limit=10..1:1"],
        "--set policy.limit=10..1:1: the range runs backwards",
    );
    refuse(&["--set", "policy.limit=1..9"], "needs a step");
    refuse(
        &["--set", "policy.burst=0,1"],
        "--set policy.burst=0: field `policy.burst`: 0 is too small: must be a whole number of requests from 1 to 4294967295",
    );
    refuse(
        &["--shard", "4/3"],
        "--shard 4/3: K is too large: must be a whole number from 1 to N",
    );
    refuse(&["--chart", "goodput"], "unknown figure `goodput`");
}

#[test]
fn run_set_is_validated_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "hand.toml", HAND);
    // Same figures as the file with the value written in.
    let edited = write(
        dir.path(),
        "edited.toml",
        &HAND.replace("limit = 10\n", "limit = 30\n"),
    );
    let summary = |path: &Path, set: &[&str]| {
        let out = rlsim()
            .arg("run")
            .arg(path)
            .args(set)
            .args(["--format", "json", "--quiet"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_eq!(
        summary(&scenario, &["--set", "policy.limit=30"]),
        summary(&edited, &[])
    );
    rlsim()
        .arg("run")
        .arg(&scenario)
        .args(["--set", "policy.limit=abc"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--set policy.limit=abc: field `policy.limit`",
        ));
    // An error elsewhere keeps its line in the file, though a key was added above it.
    let bad = write(
        dir.path(),
        "bad.toml",
        &HAND.replace("rate = \"100/min\"", "rate = \"fast\""),
    );
    let line = HAND
        .lines()
        .position(|l| l == "rate = \"100/min\"")
        .unwrap()
        + 1;
    rlsim()
        .arg("run")
        .arg(&bad)
        .args(["--set", "seed=5", "--set", "policy.burst=3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("bad.toml:{line}:")));
    rlsim()
        .arg("run")
        .arg(&scenario)
        .args(["--set", "polcy.limit=3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no `polcy` in the scenario"));
}

#[test]
fn the_shipped_tune_limit_scenario_recommends_a_point() {
    rlsim()
        .arg("check")
        .arg(repo().join("scenarios/tune_limit.toml"))
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "tune_limit: sweep: recommended.policy.limit == 90",
        ));
}

/// `rlsim sweep` of HAND with `algorithms` and `sets`: (stdout, sweep.csv, sweep.json).
fn hand_sweep(algorithms: &str, sets: &[&str]) -> (String, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let text = HAND.replace(
        "algorithms = [\"fixed_window\", \"sliding_window_log\"]",
        &format!("algorithms = {algorithms}"),
    );
    let scenario = write(dir.path(), "hand.toml", &text);
    let out = dir.path().join("out");
    let mut cmd = rlsim();
    cmd.arg("sweep").arg(&scenario).arg("--out").arg(&out);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let stdout = String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap();
    let csv = String::from_utf8(read(&out, "sweep.csv")).unwrap();
    let json = serde_json::from_slice(&read(&out, "sweep.json")).unwrap();
    (stdout, csv, json)
}

/// (algorithm, the values of the swept fields) of each row of `csv`, whose first `axes`
/// columns after `point` are the swept fields.
fn row_keys(csv: &str, axes: usize) -> Vec<String> {
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let name = header.iter().position(|h| *h == "algorithm").unwrap();
    csv.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{} {}", f[name], f[1..=axes].join(" "))
        })
        .collect()
}

#[test]
fn parameters_a_contender_ignores_do_not_multiply_its_rows() {
    // 2 limits × 3 bursts: token_bucket has a row at each of the 6 points; fixed_window ignores
    // the burst, so it has one row per limit, at the first burst.
    let (_, csv, json) = hand_sweep(
        r#"["fixed_window", "token_bucket"]"#,
        &["policy.limit=10,20", "policy.burst=1,5,10"],
    );
    assert_eq!(
        row_keys(&csv, 2),
        [
            "fixed_window 10 1",
            "token_bucket 10 1",
            "token_bucket 10 5",
            "token_bucket 10 10",
            "fixed_window 20 1",
            "token_bucket 20 1",
            "token_bucket 20 5",
            "token_bucket 20 10",
        ]
    );
    assert_eq!(json["rows"].as_array().unwrap().len(), 8);
    assert_eq!(json["points"], 6);
    // Another contender's override applies to that contender only (a profile too).
    let (_, csv, _) = hand_sweep(
        "[\"fixed_window\", \"token_bucket\", \"python-limits-moving-window\"]\n\
         [algorithm.token_bucket]\nburst = 1",
        &["policy.limit=10,20", "algorithm.token_bucket.burst=2,4"],
    );
    assert_eq!(
        row_keys(&csv, 2),
        [
            "fixed_window 10 2",
            "token_bucket 10 2",
            "python-limits-moving-window 10 2",
            "token_bucket 10 4",
            "fixed_window 20 2",
            "token_bucket 20 2",
            "python-limits-moving-window 20 2",
            "token_bucket 20 4",
        ]
    );
}

#[test]
fn a_recommendation_on_the_edge_of_the_grid_is_warned_about() {
    // HAND recommends the lowest limit that passes: 10, the first value of 10..40.
    let (stdout, _, json) = hand_sweep(r#"["fixed_window"]"#, &["policy.limit=10..40:10"]);
    assert!(
        stdout.contains(
            "Warning: it sits on the edge of the grid (policy.limit = 10 is the first value swept): a better point may lie beyond; extend the range."
        ),
        "{stdout}"
    );
    assert_eq!(
        json["recommendation"]["edges"],
        serde_json::json!([{"field": "policy.limit", "value": 10, "end": "first"}])
    );
    // A limit of 1 rejects the user (5/min): 10, inside the grid, is recommended, unwarned.
    let (stdout, _, json) = hand_sweep(r#"["fixed_window"]"#, &["policy.limit=1,10,20"]);
    assert!(stdout.contains("policy.limit = 10 (point 1)"), "{stdout}");
    assert!(!stdout.contains("Warning"), "{stdout}");
    assert_eq!(json["recommendation"]["edges"], serde_json::json!([]));
}
