//! `rlsim check` and `rlsim run`'s expectations: output lines, JSON and JUnit, baselines, and every
//! exit code.

use crate::util::{repo, rlsim, write};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A small scenario whose figures are known exactly: 100 requests at 59.9 s and 100 at 60 s
/// against 100/min. The fixed window admits all 200 (burst_factor 2); the sliding log 100.
fn scenario(name: &str, expect: &[&str]) -> String {
    let list: Vec<String> = expect.iter().map(|e| format!("{e:?}")).collect();
    format!(
        r#"name = "{name}"
duration = "2m"
algorithms = ["fixed_window", "sliding_window_log"]
expect = [
    {}
]
[policy]
limit = 100
window = "1m"
[[traffic]]
name = "attacker"
role = "abusive"
kind = "boundary"
ip = "203.0.113.7"
count = 100
[[traffic]]
name = "users"
kind = "constant"
rate = "10/min"
users = 2
"#,
        list.join(",\n    ")
    )
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn a_passing_and_a_failing_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario(
            "edge",
            &[
                "fixed_window burst_factor == 2.0",
                "sliding_window_log source=attacker admitted <= 99",
            ],
        ),
    );
    let out = rlsim().arg("check").arg(&path).assert().code(1);
    assert_eq!(
        stdout(out.get_output()),
        "pass  edge: fixed_window burst_factor == 2.0 (measured 2)\n\
         FAIL  edge: sliding_window_log source=attacker admitted <= 99 (measured 100)\n\
         1 passed, 1 failed\n"
    );
    assert!(stderr(out.get_output()).is_empty());
}

#[test]
fn star_role_and_source_expectations_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario(
            "edge",
            &[
                "* legit_goodput == 1.0",
                "* role=abusive offered == 200",
                "sliding_window_log role=abusive admitted_share == 0.5",
                "* source=users rejected == 0",
                "fixed_window delay_max_ns == 0",
            ],
        ),
    );
    let out = rlsim().arg("check").arg(&path).assert().code(0);
    assert_eq!(
        stdout(out.get_output()),
        "pass  edge: fixed_window legit_goodput == 1.0 (measured 1)\n\
         pass  edge: sliding_window_log legit_goodput == 1.0 (measured 1)\n\
         pass  edge: fixed_window role=abusive offered == 200 (measured 200)\n\
         pass  edge: sliding_window_log role=abusive offered == 200 (measured 200)\n\
         pass  edge: sliding_window_log role=abusive admitted_share == 0.5 (measured 0.5)\n\
         pass  edge: fixed_window source=users rejected == 0 (measured 0)\n\
         pass  edge: sliding_window_log source=users rejected == 0 (measured 0)\n\
         pass  edge: fixed_window delay_max_ns == 0 (measured 0)\n\
         8 passed, 0 failed\n"
    );
}

/// Checks that `expect` is refused at load time, with exit code 2 and every part of `expected`.
fn assert_refused(expect: &[&str], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", &scenario("edge", expect));
    let junit = dir.path().join("junit.xml");
    let out = rlsim()
        .arg("check")
        .arg(&path)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(2);
    let err = stderr(out.get_output());
    assert!(out.get_output().stdout.is_empty(), "nothing on stdout");
    assert!(err.starts_with("error: "), "{err}");
    for e in expected {
        assert!(err.contains(e), "expected `{e}` in: {err}");
    }
    assert!(!junit.exists(), "no JUnit file for bad input");
}

#[test]
fn unknown_names_are_refused_with_a_suggestion() {
    // The list's first item is on line 5; each is on its own line.
    let ok = "fixed_window burst_factor <= 2";
    assert_refused(
        &[ok, "fixed_window burst_factr <= 2"],
        &[
            "bad.toml:6:5:",
            "`expect[1]`",
            "unknown metric `burst_factr`: did you mean `burst_factor`?",
        ],
    );
    assert_refused(
        &["sliding_window_logg burst_factor <= 1"],
        &[
            "bad.toml:5:",
            "`expect[0]`",
            "did you mean `sliding_window_log`?",
        ],
    );
    assert_refused(
        &["gcra burst_factor <= 1"],
        &[
            "`expect[0]`",
            "`gcra` is not among this scenario's algorithms",
        ],
    );
    assert_refused(
        &["* source=user admitted >= 1"],
        &["unknown source `user`: did you mean `users`?"],
    );
    assert_refused(
        &["* role=admin admitted >= 1"],
        &["unknown role `admin` (expected legit or abusive)"],
    );
    assert_refused(
        &["* source=users legit_goodput >= 1"],
        &["unknown per-source metric `legit_goodput`"],
    );
    assert_refused(&["* burst_factor = 1"], &["`==` tests equality"]);
}

#[test]
fn directories_are_searched_and_every_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.toml",
        &scenario("a", &["fixed_window burst_factor == 2"]),
    );
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    write(
        &dir.path().join("nested"),
        "b.toml",
        &scenario("b", &["sliding_window_log burst_factor == 1"]),
    );
    write(dir.path(), "notes.txt", "not a scenario");
    let out = rlsim().arg("check").arg(dir.path()).assert().code(0);
    assert_eq!(
        stdout(out.get_output()),
        "pass  a: fixed_window burst_factor == 2 (measured 2)\n\
         pass  b: sliding_window_log burst_factor == 1 (measured 1)\n\
         2 passed, 0 failed\n"
    );

    let empty = tempfile::tempdir().unwrap();
    let out = rlsim().arg("check").arg(empty.path()).assert().code(2);
    assert!(stderr(out.get_output()).contains("no scenario (*.toml)"));
}

#[test]
fn the_shipped_scenarios_pass_their_expectations() {
    let out = rlsim()
        .arg("check")
        .arg(repo().join("scenarios"))
        .assert()
        .code(0);
    let text = stdout(out.get_output());
    assert!(text.contains("pass  boundary attack: fixed_window burst_factor == 2.0 (measured 2)"));
    assert!(text.ends_with(" passed, 0 failed\n"), "{text}");
}

/// An element of a parsed XML document.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Node>,
    text: String,
}

fn parse_xml(xml: &str) -> Node {
    use quick_xml::escape::unescape;
    use quick_xml::events::{BytesStart, Event};
    let element = |e: &BytesStart| Node {
        name: e.name().as_ref().to_string(),
        attrs: e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                let value: &str = &a.value;
                (
                    a.key.as_ref().to_string(),
                    unescape(value).unwrap().into_owned(),
                )
            })
            .collect(),
        ..Node::default()
    };
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack = vec![Node::default()];
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => stack.push(element(&e)),
            Event::Empty(e) => stack.last_mut().unwrap().children.push(element(&e)),
            Event::End(_) => {
                let node = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(node);
            }
            Event::Text(t) => {
                let raw: &str = &t;
                stack.last_mut().unwrap().text += &unescape(raw).unwrap();
            }
            // The reader hands `&lt;` and the like in text over as references of their own.
            Event::GeneralRef(r) => {
                let name: &str = &r;
                let resolved = quick_xml::escape::resolve_predefined_entity(name).unwrap();
                stack.last_mut().unwrap().text += resolved;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "every element is closed");
    let mut root = stack.pop().unwrap();
    assert_eq!(root.children.len(), 1, "one root element");
    root.children.pop().unwrap()
}

#[test]
fn junit_xml_has_a_suite_per_scenario_and_a_case_per_check() {
    let dir = tempfile::tempdir().unwrap();
    // A name with characters XML must escape.
    write(
        dir.path(),
        "a.toml",
        &scenario(
            "a <&> \\\"b\\\"",
            &["* burst_factor <= 1.0", "fixed_window admitted > 0"],
        ),
    );
    write(dir.path(), "b.toml", &scenario("plain", &[]));
    let junit = dir.path().join("out.xml");
    rlsim()
        .arg("check")
        .arg(dir.path())
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    let root = parse_xml(&xml);
    assert_eq!(root.name, "testsuites");
    assert_eq!(
        (&root.attrs["tests"][..], &root.attrs["failures"][..]),
        ("3", "1")
    );
    assert_eq!(root.children.len(), 2, "one suite per scenario");
    let suite = &root.children[0];
    assert_eq!(suite.name, "testsuite");
    assert_eq!(suite.attrs["name"], "a <&> \"b\"");
    assert_eq!(
        (&suite.attrs["tests"][..], &suite.attrs["failures"][..]),
        ("3", "1")
    );
    let names: Vec<&str> = suite
        .children
        .iter()
        .map(|c| c.attrs["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "fixed_window burst_factor <= 1.0",
            "sliding_window_log burst_factor <= 1.0",
            "fixed_window admitted > 0"
        ]
    );
    for case in &suite.children {
        assert_eq!(case.name, "testcase");
        assert_eq!(case.attrs["classname"], "a <&> \"b\"");
        assert!(case.attrs["file"].ends_with("a.toml"));
    }
    let failed = &suite.children[0];
    assert_eq!(failed.children.len(), 1);
    let failure = &failed.children[0];
    assert_eq!(failure.name, "failure");
    assert_eq!(
        failure.attrs["message"],
        "measured 2, expected fixed_window burst_factor <= 1.0"
    );
    assert_eq!(failure.text, failure.attrs["message"]);
    assert!(
        suite.children[1].children.is_empty(),
        "a passing case has no failure"
    );
    let plain = &root.children[1];
    assert_eq!(
        (&plain.attrs["name"][..], &plain.attrs["tests"][..]),
        ("plain", "0")
    );
}

/// The schema of `rlsim check --format json`, pinned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckJson {
    rlsim_version: String,
    passed: u64,
    failed: u64,
    scenarios: Vec<ScenarioJson>,
    baseline: Option<BaselineJson>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioJson {
    name: String,
    path: String,
    seed: u64,
    expectations: Vec<ExpectationJson>,
    algorithms: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectationJson {
    expectation: String,
    index: usize,
    algorithm: String,
    role: Option<String>,
    source: Option<String>,
    metric: String,
    op: String,
    bound: f64,
    measured: Option<f64>,
    passed: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineJson {
    tolerance: f64,
    tolerance_for: BTreeMap<String, f64>,
    compared: u64,
    regressed: u64,
    changes: Vec<ChangeJson>,
    not_in_baseline: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeJson {
    scenario: String,
    algorithm: String,
    metric: String,
    better: String,
    baseline: f64,
    current: f64,
    change: Option<f64>,
    tolerance: f64,
    verdict: String,
}

fn check_json(args: &[&str], paths: &[&Path], code: i32) -> CheckJson {
    let out = rlsim()
        .arg("check")
        .args(paths)
        .args(["--format", "json"])
        .args(args)
        .assert()
        .code(code);
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn json_result_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario("edge", &["* source=attacker admitted >= 150"]),
    );
    let result = check_json(&[], &[&path], 1);
    assert_eq!(result.rlsim_version, env!("CARGO_PKG_VERSION"));
    assert_eq!((result.passed, result.failed), (1, 1));
    assert!(result.baseline.is_none());
    let s = &result.scenarios[0];
    assert_eq!((s.name.as_str(), s.seed), ("edge", 0));
    assert!(s.path.ends_with("s.toml"));
    assert_eq!(s.algorithms.len(), 2);
    assert_eq!(s.algorithms[0]["burst_factor"], 2.0);
    let e = &s.expectations[1];
    assert_eq!(
        e.expectation,
        "sliding_window_log source=attacker admitted >= 150"
    );
    assert_eq!((e.index, e.algorithm.as_str()), (0, "sliding_window_log"));
    assert_eq!(
        (e.role.as_deref(), e.source.as_deref()),
        (None, Some("attacker"))
    );
    assert_eq!(
        (e.metric.as_str(), e.op.as_str(), e.bound),
        ("admitted", ">=", 150.0)
    );
    assert_eq!((e.measured, e.passed), (Some(100.0), false));
}

/// A baseline where the fixed window did better than it does now (burst_factor 1.9 rather than
/// 2, 95 violations rather than 100), made by editing a real check result.
fn better_baseline(dir: &Path, scenario_path: &Path) -> std::path::PathBuf {
    let out = rlsim()
        .arg("check")
        .arg(scenario_path)
        .args(["--format", "json"])
        .assert()
        .code(0);
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
    assert!(b.compared >= 28 && b.compared.is_multiple_of(2), "{}", b.compared);
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
        (&["--tolerance=-1"], "0 or more"),
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
fn run_reports_expectations_and_fails_only_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario("edge", &["* burst_factor <= 1.0"]),
    );
    let lines = "FAIL  edge: fixed_window burst_factor <= 1.0 (measured 2)\n\
                 pass  edge: sliding_window_log burst_factor <= 1.0 (measured 1)\n\
                 1 passed, 1 failed\n";
    let out = rlsim().arg("run").arg(&path).assert().code(0);
    let text = stdout(out.get_output());
    assert!(text.ends_with(&format!("\n\n{lines}")), "{text}");
    rlsim()
        .arg("run")
        .arg(&path)
        .arg("--strict")
        .assert()
        .code(1);

    // With --format json, stdout stays summary.json and the lines go to stderr.
    let out = rlsim()
        .args(["run", "--strict", "--format", "json"])
        .arg(&path)
        .assert()
        .code(1);
    let summary: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["algorithms"][0]["burst_factor"], 2.0);
    assert_eq!(stderr(out.get_output()), lines);

    let passing = write(
        dir.path(),
        "p.toml",
        &scenario("ok", &["* burst_factor <= 2"]),
    );
    rlsim()
        .arg("run")
        .arg(&passing)
        .arg("--strict")
        .assert()
        .code(0);
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let pass = write(
        dir.path(),
        "pass.toml",
        &scenario("p", &["* burst_factor <= 2"]),
    );
    let fail = write(
        dir.path(),
        "fail.toml",
        &scenario("f", &["* burst_factor < 1"]),
    );
    let bad = write(
        dir.path(),
        "bad.toml",
        &scenario("b", &["* burst_fctor <= 1"]),
    );
    rlsim().arg("check").arg(&pass).assert().code(0);
    rlsim().arg("check").arg(&fail).assert().code(1);
    rlsim().arg("check").arg(&bad).assert().code(2);
    // Bad input anywhere stops the whole check before anything runs.
    let out = rlsim()
        .arg("check")
        .args([&pass, &fail, &bad])
        .assert()
        .code(2);
    assert!(out.get_output().stdout.is_empty());
    rlsim()
        .arg("check")
        .arg(dir.path().join("nope.toml"))
        .assert()
        .code(2);
    rlsim().arg("check").assert().code(2);
    rlsim()
        .args(["check", "--format", "xml"])
        .arg(&pass)
        .assert()
        .code(2);
}
