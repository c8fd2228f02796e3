//! Per-client harm recomputed from the decision log by an independent reference
//! (tests/differential/python/harm.py: Python's standard library only), against summary.json:
//! violations, needless and collateral rejections, wrongly decided requests and clients hurt,
//! per contender and per source, for the shipped scenarios about shared addresses and tiers.

use super::*;
use crate::util::{repo, rlsim};

/// `python3`, if installed.
fn python3() -> bool {
    let has = Command::new("python3")
        .args(["-c", "import tomllib"])
        .output()
        .is_ok_and(|o| o.status.success());
    require_external(has, "python3 (3.11 or later)", "apt-get install python3")
}

fn recompute(scenario: &str) {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = repo().join("scenarios").join(scenario);
    let log = dir.path().join("decisions.csv");
    // summary.json on standard output: the charts and reports of `--out` are not read here.
    let run = rlsim()
        .arg("run")
        .arg(&path)
        .args(["--quiet", "--format", "json"])
        .arg("--decisions")
        .arg(&log)
        .assert()
        .success();
    std::fs::write(dir.path().join("summary.json"), &run.get_output().stdout).unwrap();
    let out = Command::new("python3")
        .arg(driver_dir("python").join("harm.py"))
        .arg(&path)
        .arg(&log)
        .arg(dir.path().join("summary.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{scenario}: figures differ:\n{text}");
}

#[test]
fn tiers_harm_matches_the_decision_log() {
    recompute("tiers.toml");
}

#[test]
fn nat_harm_matches_the_decision_log() {
    recompute("nat.toml");
}

#[test]
fn nestjs_throttler_harm_matches_the_decision_log() {
    recompute("nestjs_throttler.toml");
}

#[test]
fn mobile_nat_harm_matches_the_decision_log() {
    recompute("mobile_nat.toml");
}
