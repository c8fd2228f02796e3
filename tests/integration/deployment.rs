//! Deployments end to end: bad tables refused with file, line and field; the deployment
//! section and charts present only when a deployment is configured; the shipped scenarios'
//! claims; the short-form `[deployment]` table.

use crate::errors::assert_fails;
use crate::util::{repo, rlsim, run_toml, write};

const BASE: &str = r#"name = "x"
duration = "10s"
algorithms = ["fixed_window"]
[policy]
limit = 5
window = "1s"
[[traffic]]
name = "a"
kind = "constant"
rate = "20/s"
"#;

/// `BASE` plus a contender with `deployment` (written on line 13) and `rule`.
fn contender(deployment: &str, rule: &str) -> String {
    format!("{BASE}[[contender]]\nname = \"c\"\ndeployment = {deployment}\nrule = [{rule}]\n")
}

const RULE: &str = r#"{ name = "r", algorithm = "fixed_window", limit = 5, window = "1s" }"#;

#[test]
fn bad_deployments_name_file_line_and_field() {
    for (deployment, rule, expected) in [
        (
            r#"{ replicas = 2, store = "redis" }"#,
            RULE,
            vec![
                "bad.toml:13:",
                "`contender[0].deployment.store`",
                "unknown store `redis`",
            ],
        ),
        (
            r#"{ replicas = 0, store = "local" }"#,
            RULE,
            vec![
                "bad.toml:13:",
                "field `contender[0].deployment.replicas`: 0 is too small: must be a whole number of replicas from 1 to 1024",
            ],
        ),
        (
            r#"{ replicas = 2, store = "shared", balancer = "sticky" }"#,
            RULE,
            vec![
                "`contender[0].deployment.balancer`",
                "unknown balancer `sticky`",
            ],
        ),
        (
            r#"{ replicas = 2, store = "shared", ops = "incr_then_expire" }"#,
            r#"{ name = "r", algorithm = "token_bucket", limit = 5, window = "1s" }"#,
            vec!["`contender[0].deployment.ops`", "must be `fixed_window`"],
        ),
        (
            r#"{ replicas = 2, store = "local", rtt = "1ms" }"#,
            RULE,
            vec!["`contender[0].deployment.rtt`", "no round trip"],
        ),
        (
            r#"{ replicas = 2, store = "cached" }"#,
            RULE,
            vec!["`contender[0].deployment.sync_every`", "needs `sync_every`"],
        ),
        (
            r#"{ replicas = 2, store = "shared", rtt = { kind = "normal", mean = "1ms" } }"#,
            RULE,
            vec!["`contender[0].deployment.rtt`", "unknown rtt kind `normal`"],
        ),
        (
            r#"{ replicas = 2, store = "shared", outages = [{ from = "5s", to = "2s", mode = "fail_open" }] }"#,
            RULE,
            vec!["`contender[0].deployment.outages[0].to`", "after `from`"],
        ),
        (
            r#"{ replicas = 2, store = "shared", outages = [{ from = "1s", to = "2s", mode = "fail_slow" }] }"#,
            RULE,
            vec![
                "`contender[0].deployment.outages[0].mode`",
                "unknown mode `fail_slow`",
            ],
        ),
        (
            r#"{ replicas = 2, store = "shared", die_chance = 0.5 }"#,
            RULE,
            vec!["`contender[0].deployment.die_chance`", "incr_then_expire"],
        ),
        (
            r#"{ replicas = 2, store = "shared" }"#,
            &format!("{RULE}, {}", RULE.replace("\"r\"", "\"r2\"")),
            vec![
                "bad.toml:13:",
                "`contender[0].deployment`",
                "exactly one rule",
            ],
        ),
        (
            r#"{ replicas = 2, store = "shared", clock = "1ms" }"#,
            RULE,
            vec!["bad.toml:13:", "clock"],
        ),
    ] {
        assert_fails(&contender(deployment, rule), &[], &expected);
    }
    // The short form's table: the field is `deployment.*`.
    assert_fails(
        &format!("{BASE}[deployment]\nreplicas = 2\nstore = \"local\"\nlimit = \"halved\"\n"),
        &[],
        &["bad.toml:14:", "`deployment.limit`", "unknown `halved`"],
    );
}

/// The short form's `[deployment]` applies to every algorithm: 2 local replicas, round robin,
/// each admitting its own 5 per second of the 20/s: 10 per second, 100 in 10 s.
#[test]
fn the_short_form_table_applies_to_every_algorithm() {
    let reports = run_toml(&format!(
        "{}[deployment]\nreplicas = 2\nstore = \"local\"\n",
        BASE.replace(
            "[\"fixed_window\"]",
            "[\"fixed_window\", \"sliding_window_log\"]"
        )
    ));
    for r in &reports {
        let d = r.deployment.as_ref().expect("a deployment section");
        assert_eq!(
            (d.replicas, d.store.as_str()),
            (2, "local"),
            "{}",
            r.algorithm
        );
        assert_eq!((r.offered, r.admitted), (200, 100), "{}", r.algorithm);
    }
}

/// Without a deployment, `summary.json` has no `deployment` section and no deployment chart
/// is drawn; with one, every row has the section (one node for the others) and the charts of
/// the values the contenders vary are drawn.
#[test]
fn the_section_and_charts_exist_only_with_deployments() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write(dir.path(), "plain.toml", BASE);
    rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(dir.path().join("plain"))
        .arg(&plain)
        .assert()
        .code(0);
    let json = std::fs::read_to_string(dir.path().join("plain/summary.json")).unwrap();
    assert!(!json.contains("deployment"));
    assert!(!dir.path().join("plain/charts/replicas.svg").exists());

    let mut text = BASE.to_string();
    for n in [2, 4] {
        text.push_str(&format!(
            "[[contender]]\nname = \"local-{n}\"\nrule = [{RULE}]\ndeployment = {{ replicas = {n}, store = \"local\" }}\n"
        ));
    }
    let path = write(dir.path(), "deployed.toml", &text);
    let out = rlsim()
        .args(["run", "--out"])
        .arg(dir.path().join("deployed"))
        .arg(&path)
        .assert()
        .code(0)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("local-4: local on 4 replicas (round_robin)"),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("deployed/summary.json")).unwrap(),
    )
    .unwrap();
    let rows = json["algorithms"].as_array().unwrap();
    assert_eq!(rows[0]["deployment"]["store"], "none");
    assert_eq!(rows[2]["deployment"]["replicas"], 4);
    // 20/s spread over 4 replicas, each admitting 5/s: all 200.
    assert_eq!(rows[2]["admitted"], 200);
    let csv = std::fs::read_to_string(dir.path().join("deployed/summary.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("deployment_store_ops_per_sec")
    );
    let svg = std::fs::read_to_string(dir.path().join("deployed/charts/replicas.svg")).unwrap();
    assert!(svg.contains("\nlocal\n</text>") && svg.contains("\nreplicas\n</text>"));
    let md = std::fs::read_to_string(dir.path().join("deployed/report.md")).unwrap();
    assert!(md.contains("## Deployments"));
}

#[test]
fn the_shipped_deployment_scenarios_hold_their_claims() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["replicas", "redis_outage"] {
        let path = repo().join("scenarios").join(format!("{name}.toml"));
        rlsim().arg("check").arg(&path).assert().code(0);
        // Deterministic: two runs write the same summary.
        let run = |out: &str| {
            rlsim()
                .args(["run", "--quiet", "--out"])
                .arg(dir.path().join(out))
                .arg(&path)
                .assert()
                .code(0);
            std::fs::read(dir.path().join(out).join("summary.json")).unwrap()
        };
        assert_eq!(
            run(&format!("{name}-a")),
            run(&format!("{name}-b")),
            "{name}"
        );
    }
}
