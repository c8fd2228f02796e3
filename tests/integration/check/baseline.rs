//! `rlsim check --baseline`: regressions detected, changes within tolerance accepted.

use super::reports::{check_json, parse_xml};
use super::{scenario, stderr, stdout};
use crate::util::{rlsim, write};
use std::path::Path;

/// A baseline where the fixed window did better than it does now (burst_factor 1.9 rather than
/// 2, 95 violations rather than 100), made by editing a real check result. The scenario has
/// no expectations, so this check itself checks nothing and exits 1.
fn better_baseline(dir: &Path, scenario_path: &Path) -> std::path::PathBuf {
    let out = rlsim()
        .arg("check")
        .arg(scenario_path)
        .args(["--format", "json"])
        .assert()
        .code(1);
    let mut doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let fw = &mut doc["scenarios"][0]["algorithms"][0];
    assert_eq!(fw["algorithm"], "fixed_window");
    fw["burst_factor"] = 1.9.into();
    fw["policy_violations"] = 95.into();
    write(dir, "baseline.json", &doc.to_string())
}

#[test]
fn baseline_regression_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("edge", &[]));
    let baseline = better_baseline(dir.path(), &path);
    let out = rlsim()
        .arg("check")
        .arg(&path)
        .arg("--baseline")
        .arg(&baseline)
        .assert()
        .code(1);
    let text = stdout(out.get_output());
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        [
            "scenario",
            "algorithm",
            "metric",
            "baseline",
            "current",
            "change",
            "verdict"
        ]
    );
    assert_eq!(
        rows[1],
        [
            "edge",
            "fixed_window",
            "burst_factor",
            "1.9",
            "2",
            "+5.26%",
            "REGRESSED"
        ]
    );
    assert_eq!(
        rows[2],
        [
            "edge",
            "fixed_window",
            "policy_violations",
            "95",
            "100",
            "+5.26%",
            "REGRESSED"
        ]
    );
    assert!(
        text.contains(" metrics compared, 2 changed, 2 regressed\n0 passed, 0 failed\n"),
        "{text}"
    );

    let result = check_json(&["--baseline", baseline.to_str().unwrap()], &[&path], 1);
    let b = result.baseline.unwrap();
    // 14 metrics per algorithm today; more once the report measures more.
    assert!(
        b.compared >= 28 && b.compared.is_multiple_of(2),
        "{}",
        b.compared
    );
    assert!(text.contains(&format!("baseline: {} metrics compared", b.compared)));
    assert_eq!((b.regressed, b.tolerance), (2, 0.0));
    assert!(b.tolerance_for.is_empty() && b.not_in_baseline.is_empty());
    let c = &b.changes[0];
    assert_eq!(
        (
            c.scenario.as_str(),
            c.algorithm.as_str(),
            c.metric.as_str(),
            c.better.as_str()
        ),
        ("edge", "fixed_window", "burst_factor", "lower")
    );
    assert_eq!((c.baseline, c.current, c.tolerance), (1.9, 2.0, 0.0));
    assert!((c.change.unwrap() - 0.1 / 1.9).abs() < 1e-12);
    assert_eq!(c.verdict, "regressed");

    // In JUnit, the comparison is one more suite.
    let junit = dir.path().join("junit.xml");
    rlsim()
        .arg("check")
        .arg(&path)
        .arg("--baseline")
        .arg(&baseline)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(1);
    let root = parse_xml(&std::fs::read_to_string(&junit).unwrap());
    let suite = root.children.last().unwrap();
    assert_eq!(suite.attrs["name"], "baseline");
    assert_eq!(suite.attrs["tests"], b.compared.to_string());
    assert_eq!(suite.attrs["failures"], "2");
}

#[test]
fn a_change_within_tolerance_is_accepted_unless_its_metric_is_stricter() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("edge", &[]));
    let baseline = baseline_arg(&better_baseline(dir.path(), &path));
    let result = check_json(&[&baseline, "--tolerance", "0.06"], &[&path], 0);
    let b = result.baseline.unwrap();
    assert_eq!(b.regressed, 0);
    assert!(b.changes.iter().all(|c| c.verdict == "within_tolerance"));

    let result = check_json(
        &[
            &baseline,
            "--tolerance",
            "0.06",
            "--tolerance-for",
            "policy_violations=0.01",
        ],
        &[&path],
        1,
    );
    let b = result.baseline.unwrap();
    assert_eq!(b.tolerance_for["policy_violations"], 0.01);
    let regressed: Vec<&str> = b
        .changes
        .iter()
        .filter(|c| c.verdict == "regressed")
        .map(|c| c.metric.as_str())
        .collect();
    assert_eq!(regressed, ["policy_violations"]);
}

fn baseline_arg(path: &Path) -> String {
    format!("--baseline={}", path.display())
}

#[test]
fn a_summary_json_is_a_baseline_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("edge", &[]));
    let out = dir.path().join("out");
    rlsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0);
    let summary = out.join("summary.json");
    let result = check_json(&[&baseline_arg(&summary)], &[&path], 0);
    let b = result.baseline.unwrap();
    assert!(b.compared >= 28);
    assert_eq!((b.regressed, b.changes.len()), (0, 0));

    // A scenario the baseline lacks is noted, not failed.
    let other = write(dir.path(), "t.toml", &scenario("other", &[]));
    let result = check_json(&[&baseline_arg(&summary)], &[&path, &other], 0);
    assert_eq!(result.baseline.unwrap().not_in_baseline, ["other"]);
}

#[test]
fn bad_baselines_and_tolerances_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("edge", &[]));
    let junk = write(dir.path(), "junk.json", "{\"rows\": []}");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--baseline", junk.to_str().unwrap()],
            "neither a summary.json",
        ),
        (&["--baseline", "missing.json"], "missing.json"),
        (
            &["--tolerance=-1"],
            "`-1` is too small: must be a fraction from 0 to 1000000",
        ),
        (
            &["--tolerance-for", "burst_factr=0.1"],
            "did you mean `burst_factor`",
        ),
        (&["--tolerance-for", "burst_factor"], "expected METRIC=REL"),
    ];
    for (args, message) in cases {
        let out = rlsim().arg("check").arg(&path).args(args).assert().code(2);
        let err = stderr(out.get_output());
        assert!(
            err.starts_with("error: ") && err.contains(message),
            "{args:?}: {err}"
        );
    }
    // Two scenarios of one name cannot be matched with a baseline.
    let twin = write(dir.path(), "twin.toml", &scenario("edge", &[]));
    let out = rlsim()
        .arg("check")
        .args([&path, &twin])
        .arg("--baseline")
        .arg(&junk)
        .assert()
        .code(2);
    assert!(stderr(out.get_output()).contains("are both named `edge`"));
}

#[test]
fn a_tolerance_may_be_a_percentage() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("edge", &[]));
    let baseline = baseline_arg(&better_baseline(dir.path(), &path));
    let result = check_json(&[&baseline, "--tolerance", "6%"], &[&path], 0);
    let b = result.baseline.unwrap();
    assert_eq!((b.regressed, b.tolerance), (0, 0.06));
    let result = check_json(
        &[
            &baseline,
            "--tolerance=6%",
            "--tolerance-for",
            "policy_violations=1%",
        ],
        &[&path],
        1,
    );
    assert_eq!(
        result.baseline.unwrap().tolerance_for["policy_violations"],
        0.01
    );
    rlsim()
        .args(["check", "--tolerance", "five%"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--tolerance: `five%` is not a number: must be a fraction from 0 to 1000000 (like 0.05), or a percentage (like 5%)\n",
        ));
    for (value, why) in [
        ("1e308", "too large"),
        ("1000001", "too large"),
        ("nan", "not a number"),
        ("-1", "too small"),
    ] {
        rlsim()
            .args(["check", "--tolerance", value])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "--tolerance: `{value}` is {why}: must be a fraction from 0 to 1000000 (like 0.05), or a percentage (like 5%)\n"
            )));
    }
}
