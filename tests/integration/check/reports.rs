//! The machine-readable outputs of `rlsim check`: JUnit XML and the JSON result.

use super::scenario;
use crate::util::{rlsim, write};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// An element of a parsed XML document.
#[derive(Debug, Default)]
pub struct Node {
    pub name: String,
    pub attrs: BTreeMap<String, String>,
    pub children: Vec<Node>,
    pub text: String,
}

pub fn parse_xml(xml: &str) -> Node {
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
pub struct CheckJson {
    pub schema_version: u32,
    pub rlsim_version: String,
    pub passed: u64,
    pub failed: u64,
    pub scenarios: Vec<ScenarioJson>,
    pub baseline: Option<BaselineJson>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioJson {
    pub name: String,
    pub path: String,
    pub seed: u64,
    pub expectations: Vec<ExpectationJson>,
    pub algorithms: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectationJson {
    pub expectation: String,
    pub index: usize,
    pub algorithm: String,
    pub role: Option<String>,
    pub source: Option<String>,
    pub metric: String,
    pub op: String,
    pub bound: f64,
    pub measured: Option<f64>,
    pub passed: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineJson {
    pub tolerance: f64,
    pub tolerance_for: BTreeMap<String, f64>,
    pub compared: u64,
    pub regressed: u64,
    pub changes: Vec<ChangeJson>,
    pub not_in_baseline: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeJson {
    pub scenario: String,
    pub algorithm: String,
    pub metric: String,
    pub better: String,
    pub baseline: f64,
    pub current: f64,
    pub change: Option<f64>,
    pub tolerance: f64,
    pub verdict: String,
}

pub fn check_json(args: &[&str], paths: &[&Path], code: i32) -> CheckJson {
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
    assert_eq!(result.schema_version, rlsim::report::SCHEMA_VERSION);
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
