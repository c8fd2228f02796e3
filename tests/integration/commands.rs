//! What each command prints and how it exits: failures are never silent, formats and flags
//! are consistent across commands.

use crate::util::{repo, rlsim, write};
use predicates::prelude::*;

/// `--quiet --strict` exits 1 on a failed expectation: the failure is still printed (stderr),
/// and only the failures (and the count) are.
#[test]
fn quiet_strict_run_prints_the_failed_expectations() {
    for format in ["table", "json"] {
        let out = rlsim()
            .arg("run")
            .arg(repo().join("scenarios/nat.toml"))
            .args(["--set", "policy.limit=50", "--quiet", "--strict"])
            .args(["--format", format])
            .assert()
            .code(1)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.lines().any(|l| l.starts_with("FAIL  ")),
            "{format}: {err}"
        );
        assert!(!err.contains("pass  "), "{format}: {err}");
        let count = err.lines().last().unwrap();
        assert!(
            count.ends_with(" failed") && !count.ends_with(" 0 failed"),
            "{count}"
        );
        if format == "table" {
            assert!(out.stdout.is_empty());
        }
    }
    // With every expectation passing, --quiet still prints nothing at all.
    rlsim()
        .arg("run")
        .arg(repo().join("scenarios/nat.toml"))
        .args(["--quiet", "--strict"])
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

const GOALS: &str = r#"
name = "goals"
duration = "2m"
algorithms = ["fixed_window"]
[policy]
limit = 10
window = "1m"
[goals]
max_abusive_leakage = 0.05
[[traffic]]
name = "scraper"
role = "abusive"
kind = "constant"
ip = "10.0.0.2"
rate = "100/min"
"#;

/// A sweep of a scenario with goals that no point meets exits 1 and says why, under --quiet on
/// standard error; its files are written all the same. A shard exits 0, its merge 1.
#[test]
fn a_sweep_where_no_point_meets_the_goals_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "goals.toml", GOALS);
    let out = dir.path().join("out");
    rlsim()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--set",
            "policy.limit=10,20",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("No point meets every goal."));
    assert!(out.join("sweep.json").is_file());
    rlsim()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--set",
            "policy.limit=10,20",
        ])
        .arg("--quiet")
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("No point meets every goal."));
    let mut shards = Vec::new();
    for k in 1..=2 {
        let shard = dir.path().join(format!("shard{k}"));
        rlsim()
            .args([
                "sweep",
                path.to_str().unwrap(),
                "--set",
                "policy.limit=10,20",
            ])
            .args(["--quiet", "--shard", &format!("{k}/2"), "--out"])
            .arg(&shard)
            .assert()
            .success();
        shards.push(shard);
    }
    rlsim()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(dir.path().join("merged"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("No point meets every goal."));
    // A point that meets them: exit 0.
    rlsim()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--set",
            "policy.limit=1,10",
        ])
        .arg("--quiet")
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

/// Every `--set` example of `rlsim run --help` works on scenarios/nat.toml, which they name.
#[test]
fn the_set_examples_of_run_help_work() {
    let help = rlsim().args(["run", "--help"]).output().unwrap().stdout;
    let help = String::from_utf8(help).unwrap();
    let start = help
        .find("--set <FIELD=VALUE>")
        .expect("run --help documents --set");
    let paragraph = &help[start..];
    let paragraph = &paragraph[..paragraph.find("\n\n").unwrap_or(paragraph.len())];
    let examples: Vec<&str> = paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|e| e.contains('='))
        .collect();
    assert!(examples.len() >= 4, "{paragraph}");
    for example in examples {
        rlsim()
            .arg("run")
            .arg(repo().join("scenarios/nat.toml"))
            .args(["--quiet", "--set", example])
            .assert()
            .success();
    }
}

/// `rlsim run -` reads the scenario from standard input: the same output as from the file, errors
/// name `<stdin>`, and the reports' provenance names it too, with the hash of the bytes read.
#[test]
fn run_reads_the_scenario_from_standard_input() {
    let path = repo().join("scenarios/boundary.toml");
    let text = std::fs::read(&path).unwrap();
    let from_file = rlsim().arg("run").arg(&path).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let from_stdin = rlsim()
        .args(["run", "-", "--out"])
        .arg(&out)
        .write_stdin(text.clone())
        .output()
        .unwrap();
    assert!(from_stdin.status.success(), "{from_stdin:?}");
    assert_eq!(from_stdin.stdout, from_file.stdout);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("<stdin>"), "{report}");
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(&text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(report.contains(&sha), "the hash of the bytes read");
    rlsim()
        .args(["run", "-"])
        .write_stdin("name = \"x\"\nduration = \"1m\"\n")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: <stdin>:"));
    // `traffic` and `sweep` read it alike.
    let traffic = rlsim()
        .args(["traffic", "-", "--quiet"])
        .write_stdin(text)
        .output()
        .unwrap();
    let expected = rlsim().arg("traffic").arg(&path).output().unwrap();
    assert_eq!(traffic.stdout, expected.stdout);
}

/// `traffic` writes the CSV to standard output unless `--out` names a file; `--quiet` drops the
/// note on standard error.
#[test]
fn traffic_writes_to_standard_output_by_default() {
    let path = repo().join("scenarios/burst.toml");
    let default = rlsim().arg("traffic").arg(&path).output().unwrap();
    assert!(default.status.success());
    let dash = rlsim()
        .arg("traffic")
        .arg(&path)
        .args(["--out", "-"])
        .output()
        .unwrap();
    assert_eq!(default.stdout, dash.stdout);
    let csv = String::from_utf8(default.stdout).unwrap();
    assert!(csv.starts_with("time,ip,user,api_key,endpoint,source,role,method\n"));
    let rows = csv.lines().count() - 1;
    assert_eq!(
        String::from_utf8(default.stderr).unwrap(),
        format!("{rows} requests written to <stdout>\n")
    );
    rlsim()
        .arg("traffic")
        .arg(&path)
        .arg("--quiet")
        .assert()
        .success()
        .stderr("");
}

/// `--format json` on sweep, merge and bench: one JSON document on standard output, the human
/// summary line on standard error.
#[test]
fn sweep_merge_and_bench_print_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "goals.toml", GOALS);
    let out = dir.path().join("out");
    let json = rlsim()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--set",
            "policy.limit=1,10",
        ])
        .args(["--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(json.status.success());
    assert_eq!(json.stdout, std::fs::read(out.join("sweep.json")).unwrap());
    assert!(
        String::from_utf8(json.stderr)
            .unwrap()
            .starts_with("Recommended: ")
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["recommendation"]["recommended"]["point"], 0);
    let bench = rlsim()
        .args(["bench", "--requests", "2000", "--algorithm", "gcra"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(bench.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&bench.stdout).unwrap();
    assert_eq!(doc["requests"], 2000);
    let decisions = doc["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 6, "uniform and zipf at 3 keyspaces");
    assert!(decisions.iter().all(|d| d["algorithm"] == "gcra"
        && d["decisions"] == 2000
        && d["decisions_per_sec"].as_f64().unwrap() > 0.0));
    let keys: Vec<u64> = doc["end_to_end"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["keys"].as_u64().unwrap())
        .collect();
    assert_eq!(keys, [1, 1_000, 1_000_000]);
}

/// `check --quiet` prints only what failed (and its count); nothing when everything passed.
#[test]
fn check_quiet_prints_only_failures() {
    rlsim()
        .args(["check", "--quiet"])
        .arg(repo().join("scenarios/boundary.toml"))
        .assert()
        .success()
        .stdout("");
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("scenarios/nat.toml")).unwrap();
    let limit = text.lines().find(|l| l.starts_with("limit = ")).unwrap();
    let failing = write(
        dir.path(),
        "nat.toml",
        &text.replacen(limit, "limit = 50", 1),
    );
    let out = rlsim()
        .args(["check", "-q"])
        .arg(&failing)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 2, "{out}");
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|l| l.starts_with("FAIL  ")),
        "{out}"
    );
    assert!(lines.last().unwrap().ends_with(" failed"), "{out}");
}

/// Human messages round measured numbers (4 significant digits, more only when the bound needs
/// them); the JSON keeps every digit.
#[test]
fn expectation_lines_round_measured_numbers() {
    let path = repo().join("scenarios/nat.toml");
    let text = rlsim().arg("check").arg(&path).output().unwrap().stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("sliding_window_log source=users admitted_share < 1.0 (measured 0.8478)"),
        "{text}"
    );
    for line in text.lines().filter(|l| l.contains("(measured ")) {
        let value = line
            .rsplit("(measured ")
            .next()
            .unwrap()
            .trim_end_matches(')');
        let significant = value
            .chars()
            .filter(char::is_ascii_digit)
            .skip_while(|&c| c == '0')
            .count();
        assert!(
            value.parse::<f64>().is_ok_and(|v| v.fract() == 0.0) || significant <= 4,
            "{line}"
        );
    }
    let json = rlsim()
        .arg("check")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .unwrap()
        .stdout;
    assert!(
        String::from_utf8(json)
            .unwrap()
            .contains("0.8478120085114257")
    );
}
