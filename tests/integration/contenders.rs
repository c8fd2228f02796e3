//! `[[contender]]` end to end: the binary's outputs per contender, the decision log's rule
//! columns, expectations naming contenders, and the shipped contender scenarios' claims.

use crate::util::{repo, rlsim, write};

/// The commit-semantics case of `sim::contender_tests`, beside one short-form algorithm.
const SCENARIO: &str = r#"
name = "stack"
duration = "3s"
algorithms = ["fixed_window"]
expect = ["nginx admitted == 6", "nestjs admitted == 5", "nginx warned == 1"]
[policy]
limit = 3
window = "10s"
[[traffic]]
name = "client"
kind = "constant"
rate = "2/s"
ip = "203.0.113.7"
[[traffic]]
name = "probe"
kind = "constant"
rate = "1/s"
ip = "192.0.2.1"
endpoint = "/health"
[[contender]]
name = "nginx"
commit = "all_or_nothing"
bypass = { routes = ["/health"] }
[[contender.rule]]
name = "a"
algorithm = "fixed_window"
limit = 3
window = "10s"
warn_at = 1.0
[[contender.rule]]
name = "b"
algorithm = "fixed_window"
limit = 1
window = "1s"
[[contender]]
name = "nestjs"
commit = "in_order"
bypass = { routes = ["/health"] }
[[contender.rule]]
name = "a"
algorithm = "fixed_window"
limit = 3
window = "10s"
[[contender.rule]]
name = "b"
algorithm = "fixed_window"
limit = 1
window = "1s"
"#;

#[test]
fn every_output_is_per_contender_and_the_log_names_the_refusing_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "stack.toml", SCENARIO);
    let out = dir.path().join("out");
    let decisions = dir.path().join("decisions.csv");
    rlsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .arg("--decisions")
        .arg(&decisions)
        .arg("--quiet")
        .assert()
        .code(0);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let rows = summary["algorithms"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fixed_window", "nginx", "nestjs"]);
    // 6 client requests and 3 health probes each; the probes are bypassed by the contenders.
    let figures: Vec<(u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            let n = |f: &str| r[f].as_u64().unwrap();
            (n("admitted"), n("bypassed"), n("warned"))
        })
        .collect();
    assert_eq!(figures, [(6, 0, 0), (6, 3, 1), (5, 3, 0)]);
    assert!(rows[0].get("rules").is_none());
    let rules: Vec<(&str, u64)> = rows[2]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["refused"].as_u64().unwrap()))
        .collect();
    assert_eq!(rules, [("a", 3), ("b", 1)]);

    // summary.csv: one header for every row, the contender figures included.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for column in ["bypassed", "unlimited", "warned"] {
        assert!(header.contains(&column), "{column}");
    }
    assert!(!header.contains(&"rules"));
    assert_eq!(csv.lines().count(), 4);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Contenders"), "{report}");
    assert!(
        report.contains("**nestjs** (commit `in_order`)"),
        "{report}"
    );

    // The decision log: the refusing rule, remaining and warning per row.
    let mut reader = csv::Reader::from_path(&decisions).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let of = |contender: &str| -> Vec<(String, String, String, String, String)> {
        rows.iter()
            .filter(|r| &r[1] == contender && &r[2] == "203.0.113.7")
            .map(|r| {
                (
                    r[0].to_string(),
                    r[3].to_string(),
                    r[6].to_string(),
                    r[7].to_string(),
                    r[9].to_string(),
                )
            })
            .collect()
    };
    let row = |t: &str, o: &str, rule: &str, rem: &str, w: &str| {
        (
            t.to_string(),
            o.to_string(),
            rule.to_string(),
            rem.to_string(),
            w.to_string(),
        )
    };
    assert_eq!(
        of("nginx"),
        [
            row("0", "allow", "b", "0", "0"),
            row("500000000", "reject", "b", "0", "0"),
            row("1000000000", "allow", "b", "0", "0"),
            row("1500000000", "reject", "b", "0", "0"),
            // a's third of 3: remaining 0, and a warns at 100 %.
            row("2000000000", "allow", "a", "0", "1"),
            row("2500000000", "reject", "a", "0", "0"),
        ]
    );
    // A bypassed probe carries no headers: no rule, no remaining, no reset.
    let probe = rows
        .iter()
        .find(|r| &r[1] == "nginx" && &r[2] == "192.0.2.1")
        .unwrap();
    assert_eq!(
        (&probe[3], &probe[6], &probe[7], &probe[8]),
        ("allow", "", "", "")
    );
}

#[test]
fn expectations_name_contenders_and_check_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "stack.toml", SCENARIO);
    let out = rlsim().arg("check").arg(&path).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("nestjs admitted == 5"), "{text}");
    // An unknown contender in `expect` is refused with the names it could be.
    let bad = SCENARIO.replace("\"nestjs admitted == 5\"", "\"nestj admitted == 5\"");
    let path = write(dir.path(), "bad.toml", &bad);
    let out = rlsim().arg("run").arg(&path).assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("`expect[1]`"), "{stderr}");
    assert!(stderr.contains("nestjs"), "{stderr}");
}

#[test]
fn the_shipped_contender_scenarios_hold_their_claims() {
    for name in ["nestjs_throttler", "tiers", "nat"] {
        let path = repo().join("scenarios").join(format!("{name}.toml"));
        rlsim().arg("check").arg(&path).assert().code(0);
    }
}
