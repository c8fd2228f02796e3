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
