//! Observability end to end: `--metrics-out` checked by the real `promtool`, alert rules in
//! the summary and the report, and bad `[[alert]]` tables refused with exit code 2.

use crate::util::{boundary_attack, rlsim, write};
use std::process::Command;

/// `promtool`, or `None` after a recorded skip (a failure under `RLSIM_REQUIRE_EXTERNAL=1`).
fn promtool() -> Option<&'static str> {
    let found = crate::external::on_path("promtool");
    crate::external::require_external(found, "promtool", "apt-get install prometheus")
        .then_some("promtool")
}

const SEED_ALERT: &str = "\n[[alert]]\nname = \"ip_refusals\"\ncount = \"refusals\"\nby = \"ip\"\n\
                          threshold = 100\nwindow = \"1m\"\n";

#[test]
fn metrics_out_passes_promtool_and_backfills() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "b.toml",
        &(boundary_attack(&["fixed_window", "gcra"]) + SEED_ALERT),
    );
    let metrics = dir.path().join("m.om");
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--quiet")
        .arg("--metrics-out")
        .arg(&metrics)
        .assert()
        .success();
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(text.ends_with("# EOF\n"));
    // 3 minutes scraped every 15 s: instants 0..=180 s. The attacker's 100 refusals under gcra
    // all happen at 60 s.
    assert!(text.contains(
        "rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"reject\",endpoint=\"/\",signed_in=\"true\"} 100 60\n"
    ), "{text}");
    assert!(text.contains(
        "rlsim_requests_total{contender=\"fixed_window\",rule=\"policy\",outcome=\"allow\",endpoint=\"/\",signed_in=\"true\"} 200 180\n"
    ));
    assert!(text.contains("rlsim_live_keys{contender=\"gcra\"} 1 60\n"));
    assert!(text.contains("rlsim_live_keys{contender=\"gcra\"} 0 180\n"));
    // Same scenario, same bytes.
    let again = dir.path().join("again.om");
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--quiet")
        .arg("--metrics-out")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());

    let Some(promtool) = promtool() else {
        return;
    };
    let check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&metrics).unwrap())
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let tsdb = dir.path().join("tsdb");
    let backfill = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&metrics)
        .arg(&tsdb)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&backfill.stdout);
    assert!(
        backfill.status.success(),
        "backfill: {out}{}",
        String::from_utf8_lossy(&backfill.stderr)
    );
    // One block from 0 to 180 s holding every sample: 13 scrapes of each series.
    assert!(out.contains("180001"), "{out}");
    assert!(std::fs::read_dir(&tsdb).unwrap().count() >= 1);
}

#[test]
fn alerts_reach_the_summary_the_terminal_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "b.toml",
        &(boundary_attack(&["fixed_window", "sliding_window_log"]) + SEED_ALERT),
    );
    let out = dir.path().join("out");
    let assert = rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(stdout.contains("attacker 0.1s"), "{stdout}");
    assert!(stdout.contains("attacker never"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    // fixed_window admits all 200: no refusal, no alert. The log refuses the second 100 at
    // 60 s: the evaluation at 60 s fires, 100 ms after the attacker's first request, and the
    // one at 120 s (window (60 s, 120 s] empty) resolves.
    let log = &summary["algorithms"][1];
    assert_eq!(log["alerts"]["ip_refusals_alerts"], 1.0);
    assert_eq!(log["alerts"]["ip_refusals_first_fired_ns"], 60e9);
    assert_eq!(
        summary["algorithms"][0]["alerts"]["ip_refusals_alerts"],
        0.0
    );
    let episode = &summary["alerts"][1]["episodes"][0];
    assert_eq!(episode["label"], "203.0.113.7");
    assert_eq!(episode["fired_ns"], 60_000_000_000u64);
    assert_eq!(episode["resolved_ns"], 120_000_000_000u64);
    assert_eq!(
        summary["alerts"][1]["detection"][0]["time_to_detect_ns"],
        100_000_000u64
    );
    assert!(summary["alerts"][0]["detection"][0]["time_to_detect_ns"].is_null());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Alerts and dashboards"));
    assert!(
        md.contains("| sliding_window_log | 1 | 203.0.113.7 | 100 |"),
        "{md}"
    );
}

#[test]
fn runs_without_alerts_have_no_alert_section() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "b.toml", &boundary_attack(&["gcra"]));
    let assert = rlsim()
        .args(["run", "--quiet", "--format", "json"])
        .arg(&scenario)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(!text.contains("alerts"), "{text}");
}

#[test]
fn bad_alerts_exit_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "count = \"refusals\"",
            "count = \"hits\"",
            "alert[0].count",
            "unknown count `hits`",
        ),
        (
            "by = \"ip\"",
            "by = \"country\"",
            "alert[0].by",
            "unknown label `country`",
        ),
        (
            "threshold = 100",
            "threshold = 0",
            "alert[0].threshold",
            "a count of at least 1",
        ),
        (
            "window = \"1m\"",
            "window = \"70s\"",
            "alert[0].window",
            "whole number of evaluation intervals",
        ),
        (
            "name = \"ip_refusals\"",
            "name = \"IP refusals\"",
            "alert[0].name",
            "lowercase",
        ),
        (
            "threshold = 100",
            "threshold = \"lots\"",
            "alert[0].threshold",
            "must be a number",
        ),
    ];
    let base = boundary_attack(&["gcra"]);
    let line = base.lines().count() + 2;
    for (from, to, field, message) in cases {
        let text = base.clone() + &SEED_ALERT.replace(from, to);
        let path = write(dir.path(), "bad.toml", &text);
        let assert = rlsim().arg("run").arg(&path).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
        assert!(stderr.contains("bad.toml"), "{stderr}");
        assert!(stderr.contains(field), "{field}: {stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
        let at = text
            .lines()
            .position(|l| {
                l.starts_with(to.split(' ').next().unwrap())
                    && l.contains(to.split(" = ").nth(1).unwrap())
            })
            .unwrap()
            + 1;
        assert!(at >= line, "{to}");
        assert!(
            stderr.contains(&format!(":{at}:")) || stderr.contains(&format!("line {at}")),
            "line {at}: {stderr}"
        );
    }
}

/// The dashboard charts, read back: the refused share peaks at the boundary's second batch,
/// the top key is the attacker's address, and no retry chart without retries.
#[test]
fn dashboard_charts_show_the_refused_share_and_the_top_keys() {
    let dir = tempfile::tempdir().unwrap();
    let text = boundary_attack(&["gcra"])
        + "[[traffic]]\nname = \"users\"\nrole = \"legit\"\nkind = \"constant\"\nrate = \"1/s\"\n\
           ip = \"198.51.100.1\"\n"
        + SEED_ALERT;
    let scenario = write(dir.path(), "b.toml", &text);
    let out = dir.path().join("out");
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--quiet")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let read =
        |f: &str| crate::svg::parse(&std::fs::read_to_string(out.join("charts").join(f)).unwrap());
    let share = read("refused_share.svg");
    assert!(
        share.title.starts_with("Refused share over time"),
        "{}",
        share.title
    );
    assert!(share.has_text("gcra"));
    let gcra_colour = rlsim::report::charts::hex(rlsim::report::charts::colour("gcra"));
    let line = share.lines_in(&gcra_colour);
    // The legend mark is a short line in the same colour: the series is the longest.
    let series = line.iter().max_by_key(|l| l.points.len()).unwrap();
    let gcra = crate::svg::peak(&share, series);
    // Scrape at 60 s: (45 s, 60 s] holds 15 user requests and the attacker's 200, of which
    // gcra refused 100: 46.5%, drawn as a step over the 15 s it covers, 0.75 to 1 min.
    let top = crate::svg::top(series).1;
    let step: Vec<f64> = series
        .points
        .iter()
        .filter(|p| p.1 == top)
        .map(|p| share.x_value(p.0))
        .collect();
    assert_eq!(step.len(), 2, "{step:?}");
    assert!(
        (step[0] - 0.75).abs() < 2.0 * share.x_per_pixel(),
        "{step:?}"
    );
    assert!(
        (step[1] - 1.0).abs() < 2.0 * share.x_per_pixel(),
        "{step:?}"
    );
    assert!(
        (gcra.1 - 100.0 * 100.0 / 215.0).abs() < 2.0 * share.y_per_pixel() + 1.0,
        "{gcra:?}"
    );
    let top = read("top_refused_keys.svg");
    assert!(top.has_text("203.0.113.7"));
    assert!(top.has_text("100"));
    assert!(!out.join("charts/retry_intervals.svg").exists());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("charts/refused_share.svg"));
}

/// A client retrying 50 ms after each refusal: two retries in the 10–100 ms class.
#[test]
fn retry_intervals_are_counted_per_class() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"r\"\nduration = \"2m\"\nalgorithms = [\"fixed_window\"]\n\
                [policy]\nlimit = 1\nwindow = \"1m\"\n\
                [[traffic]]\nname = \"c\"\nkind = \"constant\"\nrate = \"2/min\"\nip = \"1.1.1.1\"\n\
                on_reject = { retry = \"immediately\", max_retries = 1, rtt = \"50ms\" }\n"
        .to_string()
        + SEED_ALERT;
    let scenario = write(dir.path(), "r.toml", &text);
    let out = dir.path().join("out");
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--quiet")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| 0.01 s – 0.1 s | 2 |"), "{md}");
    let chart = crate::svg::parse(
        &std::fs::read_to_string(out.join("charts/retry_intervals.svg")).unwrap(),
    );
    assert!(chart.has_text("0.01 s – 0.1 s"));
    assert!(chart.has_text("2"));
}
