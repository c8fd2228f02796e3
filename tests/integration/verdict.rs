//! The verdict everywhere, end to end: printed after the table, carried by `summary.json` and
//! `--format json`; the table in 120 columns (`--wide`, `--columns`); and reports a reviewer
//! reads as they are (no raw Markdown in HTML or on the terminal, an anchor on every heading,
//! the verdict and the charts before the expectations).

use crate::util::{repo, rlsim, write};
use serde_json::Value;
use std::path::Path;

fn stdout_of(args: &[&str]) -> String {
    let out = rlsim().current_dir(repo()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The terminal's part before the expectation lines: the table, its note and the verdict (and
/// alert and deployment lines).
fn head(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .take_while(|l| !l.starts_with("pass  ") && !l.starts_with("FAIL  "))
        .collect()
}

/// nat.toml: `by_user` serves every legit request and the whole scraper; the leaky bucket
/// serves more than the runner-up but delays legit users by a p99 of 60 s. The verdict names
/// both, on the terminal and in summary.json, and the JSON printed is summary.json's bytes.
#[test]
fn run_prints_the_verdict_and_summary_json_carries_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stdout = stdout_of(&["run", "scenarios/nat.toml", "--out", out.to_str().unwrap()]);
    let head = head(&stdout);
    let at = head
        .iter()
        .position(|l| l.starts_with("verdict: "))
        .expect("a verdict line");
    assert_eq!(
        head[at],
        "verdict: by_user is recommended; runner-up fixed_window (default order: no [goals])"
    );
    assert!(head[at - 1].is_empty(), "a blank line before the verdict");
    let verdict = head[at..].join("\n");
    assert!(
        verdict.contains(
            "  why: by_user serves more legitimate requests (legit goodput 100.0% against 90.6%)"
        ),
        "{verdict}"
    );
    assert!(
        verdict.contains(
            "  warning: by_user lets 100.0% of the abusive traffic through (scraper 100.0%)."
        ),
        "{verdict}"
    );
    assert!(
        verdict.contains("  warning: leaky_bucket serves more legitimate requests than the runner-up, fixed_window"),
        "{verdict}"
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let v = &summary["verdict"];
    assert_eq!(v["recommended"], "by_user");
    assert_eq!(v["runner_up"], "fixed_window");
    assert_eq!(v["basis"], "default");
    assert_eq!(v["yardstick"], "100 per 1m per client");
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["demoted", "leakage", "resonance"]);
    // The leaky bucket ranks last for its delay; the three exact per-IP limiters tie.
    let ranking: Vec<(u64, &str, bool)> = v["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["rank"].as_u64().unwrap(),
                p["contender"].as_str().unwrap(),
                p["severe_delay"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(ranking.first(), Some(&(1, "by_user", false)));
    assert_eq!(ranking.last(), Some(&(9, "leaky_bucket", true)));
    let tied: Vec<&(u64, &str, bool)> = ranking.iter().filter(|p| p.0 == 6).collect();
    assert_eq!(
        tied.iter().map(|p| p.1).collect::<Vec<_>>(),
        ["sliding_window_log", "by_ip", "by_tracker"]
    );
    let json = rlsim()
        .current_dir(repo())
        .args(["run", "scenarios/nat.toml", "--format", "json", "--quiet"])
        .output()
        .unwrap();
    assert!(json.status.success());
    assert_eq!(
        json.stdout,
        std::fs::read(out.join("summary.json")).unwrap()
    );
    // The CSV names the yardstick in its last column.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",yardstick"));
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.ends_with(",100 per 1m per client"))
    );
}

/// Every line of a page outside `<code>`, `<pre>`, `<script>` and `<style>` is free of
/// Markdown: no backtick, no `**`; every heading has an id and a link to it.
fn assert_rendered(name: &str, html: &str) {
    let mut text = String::new();
    let mut rest = html;
    'outer: while !rest.is_empty() {
        for (open, close) in [
            ("<code>", "</code>"),
            ("<pre>", "</pre>"),
            ("<script>", "</script>"),
            ("<style>", "</style>"),
        ] {
            if rest.starts_with(open) {
                let end = rest
                    .find(close)
                    .unwrap_or_else(|| panic!("{name}: {open} unclosed"));
                rest = &rest[end + close.len()..];
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap();
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    for markup in ["`", "**"] {
        if let Some(at) = text.find(markup) {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(80)
                .map_or(0, |(i, _)| i);
            panic!(
                "{name}: `{markup}` outside code: ...{}",
                &text[from..(at + 40).min(text.len())]
            );
        }
    }
    let headings =
        html.matches("<h1").count() + html.matches("<h2").count() + html.matches("<h3").count();
    assert!(headings > 0, "{name}");
    for level in 1..=3 {
        for (at, _) in html.match_indices(&format!("<h{level}")) {
            let tag = &html[at..at + html[at..].find(&format!("</h{level}>")).unwrap()];
            let id = tag
                .strip_prefix(&format!("<h{level} id=\""))
                .and_then(|t| t.split('"').next())
                .unwrap_or_else(|| panic!("{name}: a heading without id: {tag}"));
            assert!(!id.is_empty(), "{name}: {tag}");
            assert!(
                tag.contains(&format!("<a class=\"anchor\" href=\"#{id}\"")),
                "{name}: {tag}"
            );
        }
    }
}

/// Every shipped scenario: the default table, its note and the verdict fit in 120 columns;
/// report.html shows no raw Markdown and anchors every heading; the verdict and the charts
/// come before the expectations.
#[test]
fn every_shipped_scenario_fits_120_columns_and_renders_its_report() {
    for run in crate::shipped::runs() {
        let (name, out, stdout) = (&run.name, &run.out, &run.stdout);
        for line in head(stdout) {
            assert!(
                line.chars().count() <= 120,
                "{name}: {} columns: {line}",
                line.chars().count()
            );
            assert!(
                !line.contains('`') && !line.contains("**"),
                "{name}: {line}"
            );
        }
        assert!(stdout.contains("\nverdict: "), "{name}: {stdout}");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_rendered(name, &html);
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{name}: no {s}"));
        assert!(at("id=\"verdict\"") < at("<figure"), "{name}");
        assert!(at("<figure") < at("id=\"expectations\""), "{name}");
        let summary: Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert!(summary["verdict"]["recommended"].is_string(), "{name}");
    }
}

/// The sweep's page renders its captions and its recommendation too.
#[test]
fn sweep_html_shows_no_raw_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let stdout = stdout_of(&[
        "sweep",
        "scenarios/tune_limit.toml",
        "--set",
        "policy.limit=90,150",
        "--set",
        "policy.burst=1,60",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.starts_with("Recommended: "), "{stdout}");
    assert!(!stdout.contains('`') && !stdout.contains("**"), "{stdout}");
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert_rendered("sweep.html", &html);
    assert!(
        html.contains("<strong>"),
        "the recommendation's contender in bold"
    );
}

const SMALL: &str = "name = \"small\"\nduration = \"10s\"\n\
    algorithms = [\"fixed_window\", \"gcra\"]\n\
    [policy]\nlimit = 5\nwindow = \"1s\"\n\
    [[traffic]]\nname = \"users\"\nkind = \"constant\"\nrate = \"8/s\"\n";

fn header(dir: &Path, args: &[&str]) -> String {
    let path = write(dir, "s.toml", SMALL);
    let mut all = vec!["run", path.to_str().unwrap()];
    all.extend(args);
    let stdout = stdout_of(&all);
    stdout.lines().nth(1).unwrap().to_string()
}

/// The default columns, every column with `--wide`, the chosen ones in order with
/// `--columns`; an unknown name is a usage error with a suggestion.
#[test]
fn wide_and_columns_choose_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let words = |h: String| h.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        words(header(dir.path(), &[])),
        [
            "contender",
            "admitted",
            "rejected",
            "violations",
            "needless",
            "collateral",
            "legit_goodput",
            "abuse_leak",
            "legit_delay_p99"
        ]
    );
    assert_eq!(
        words(header(dir.path(), &["--wide"])),
        [
            "contender",
            "offered",
            "admitted",
            "delayed",
            "rejected",
            "burst_factor",
            "violations",
            "needless",
            "collateral",
            "legit_goodput",
            "abuse_leak",
            "legit_delay_p99",
            "delay_p99",
            "state_per_key",
            "peak_state"
        ]
    );
    assert_eq!(
        header(dir.path(), &["--columns", "legit_goodput,violations"]),
        "contender     legit_goodput  violations"
    );
    // 8/s against 5/s, 10 s: fixed_window admits 5 a second, 50 of 80.
    let path = write(dir.path(), "s.toml", SMALL);
    let stdout = stdout_of(&[
        "run",
        path.to_str().unwrap(),
        "--columns",
        "admitted",
        "--columns",
        "rejected",
    ]);
    assert_eq!(
        stdout.lines().nth(1).unwrap(),
        "contender     admitted  rejected"
    );
    assert!(
        stdout
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("fixed_window        50        30"),
        "{stdout}"
    );
    // No judged column chosen: the note only says where the other twelve are.
    assert_eq!(
        stdout.lines().nth(4).unwrap(),
        "12 more columns: --wide.",
        "{stdout}"
    );
    let bad = rlsim()
        .args(["run", path.to_str().unwrap(), "--columns", "legit_goodptu"])
        .assert()
        .code(2);
    let err = String::from_utf8(bad.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("--columns: unknown column `legit_goodptu`: did you mean `legit_goodput`?"),
        "{err}"
    );
    let far = rlsim()
        .args(["run", path.to_str().unwrap(), "--columns", "zzz"])
        .assert()
        .code(2);
    let err = String::from_utf8(far.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("unknown column `zzz` (known: offered, admitted, "),
        "{err}"
    );
    rlsim()
        .args([
            "run",
            path.to_str().unwrap(),
            "--wide",
            "--columns",
            "admitted",
        ])
        .assert()
        .code(2);
}

/// Long contender names: the default table drops its least needed columns to fit 120.
#[test]
fn long_names_drop_columns_to_fit() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a_contender_with_a_rather_long_name_indeed_x";
    let text = format!(
        "{SMALL}[[contender]]\nname = \"{long}\"\n[[contender.rule]]\nname = \"r\"\n\
         algorithm = \"gcra\"\nlimit = 5\nwindow = \"1s\"\nkey = \"ip\"\n"
    );
    let path = write(dir.path(), "s.toml", &text);
    let stdout = stdout_of(&["run", path.to_str().unwrap()]);
    let header = stdout.lines().nth(1).unwrap();
    assert!(
        !header.contains("admitted") && header.contains("legit_goodput"),
        "{header}"
    );
    for line in head(&stdout) {
        assert!(line.chars().count() <= 120, "{line}");
    }
}
