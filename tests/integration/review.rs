//! The reports and the terminal: self-contained HTML, the ranking, the reproducibility block,
//! byte-identical outputs, goal errors, `--quiet` and colour.

use crate::report::{CHARTS, run_boundary};
use crate::util::{repo, rlsim, write};
use sha2::{Digest, Sha256};
use std::path::Path;

#[test]
fn the_html_report_is_self_contained_and_says_what_the_markdown_says() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for external in ["http://", "https://", "src=", "<link", "@import", "url("] {
        assert!(
            !html.contains(external),
            "report.html contains `{external}`"
        );
    }
    assert_eq!(html.matches("<svg").count(), CHARTS.len());
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    for file in CHARTS {
        assert!(
            md.contains(&format!("](charts/{file})")),
            "report.md links {file}"
        );
    }
    // The ranking against boundary.toml's goals, best first, each with its reason.
    let ranking = md
        .split("## Which algorithm")
        .nth(1)
        .expect("a ranking section");
    let order: Vec<&str> = ranking
        .lines()
        .filter_map(|l| {
            l.split_once(". **")
                .map(|(_, r)| r.split("**").next().unwrap())
        })
        .collect();
    assert_eq!(
        order,
        [
            "gcra",
            "token_bucket",
            "sliding_window_counter",
            // Both miss one goal; the leaky bucket delays legit users (the default order).
            "sliding_window_log",
            "leaky_bucket",
            "fixed_window"
        ]
    );
    assert!(
        ranking
            .contains("**gcra**: meets all 4 goals; legit goodput 100.0%, 0 violations, abuse leak 50.0%, no delay")
    );
    assert!(ranking.contains("**fixed_window**: misses `policy_violations <= 0` (100)"));
    // Goals and measured values in human units: `max_delay_p99 = "1s"` in boundary.toml.
    assert!(ranking.contains("`delay_p99_ns <= 1s` (max_delay_p99_ns)"));
    assert!(ranking.contains("**leaky_bucket**: misses `delay_p99_ns <= 1s` (56.405s)"));
    assert!(ranking.contains("`state_bytes_per_key <= 64 B` (531 B)"));
    assert!(html.contains("<li><strong>gcra</strong>: meets all 4 goals; legit goodput"));
    // Verdict first, then the figures and the charts, the checks after them, the story last.
    let at = |heading: &str| {
        md.find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("no section {heading}"))
    };
    let order = [
        "## Verdict",
        "## Key figures",
        "### Per source",
        "## Charts",
        "## Headline figures",
        "## Expectations",
        "## Which algorithm",
        "## About the scenario",
        "## Reproducibility",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
    }
    let verdict = md.split("## Verdict\n\n").nth(1).unwrap();
    assert!(
        verdict.starts_with(
            "**gcra** is the recommended contender; the runner-up is **token_bucket**. It meets \
             all 4 of the scenario's goals.\n\n\
             Why: gcra keeps less state per key (state per key 31 B against 43 B).\n\n## Key"
        ),
        "{verdict}"
    );
    // The contents link every section; every HTML heading has its anchor.
    assert!(md.contains("\n- [Verdict](#verdict)\n- [Key figures](#key-figures)\n"));
    assert!(html.contains(
        "<h2 id=\"which-algorithm\">Which algorithm <a class=\"anchor\" href=\"#which-algorithm\""
    ));
    // The expectations: a count, then every line folded in a <details>.
    assert!(
        md.contains("\nAll 32 checks pass, from 22 `expect` lines"),
        "{md}"
    );
    assert!(html.contains("<details>\n<summary>Every <code>expect</code> line (22)"));
    // The headline figures are the ones boundary's `expect` lines name, with the checks.
    let headline = md.split("## Headline figures").nth(1).unwrap();
    assert!(headline.contains("| burst_factor | policy_violations | source=attacker admitted |"));
    assert!(headline.contains("| `sliding_window_log` | 1 | 100ms | 0 | 1 | 0 | 100 |"));
    assert!(md.contains("- **pass** `fixed_window burst_factor == 2.0`: measured 2\n"));
    assert!(md.contains("- **pass** `* needless_rejections == 0`: measured fixed_window 0, "));
    // The story: the file's leading comment block, without the line about `expect` itself.
    let story = md.split("## About the scenario\n\n").nth(1).unwrap();
    assert!(story.starts_with("Boundary attack: the fixed window's blind spot.\n\n"));
    assert!(story.contains("\n- fixed_window admits all 200 attacker requests within 100 ms: "));
    assert!(!story.contains("`expect` pins these claims"));
    // Every table scrolls in its own box; the page's script is inline.
    assert_eq!(
        html.matches("<div class=\"table\">\n<table>").count(),
        html.matches("<table>").count()
    );
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(html.contains("data-rlsim"));
    // The reproducibility block.
    let bytes = std::fs::read(repo().join("scenarios/boundary.toml")).unwrap();
    let hash: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for text in [&md, &html] {
        assert!(text.contains(&format!("scenario sha256: {hash}")));
        assert!(text.contains(&format!("rlsim version: {}", env!("CARGO_PKG_VERSION"))));
        assert!(text.contains("seed: 7"));
        assert!(text.contains("command: rlsim run "));
    }
}

#[test]
fn charts_and_reports_are_byte_identical_across_runs() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_boundary(a.path());
    run_boundary(b.path());
    for file in CHARTS {
        let x = std::fs::read(a.path().join("charts").join(file)).unwrap();
        let y = std::fs::read(b.path().join("charts").join(file)).unwrap();
        assert!(x == y, "{file} differs between two runs");
    }
    for file in ["report.md", "report.html"] {
        // The command line names each run's own --out directory; everything else is equal.
        let read = |dir: &Path| {
            std::fs::read_to_string(dir.join(file))
                .unwrap()
                .replace(&dir.display().to_string(), "OUT")
        };
        assert_eq!(read(a.path()), read(b.path()), "{file}");
    }
}

#[test]
fn goal_errors_name_the_field_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("scenarios/boundary.toml"))
        .unwrap()
        .replace("max_policy_violations = 0", "max_policy_violatons = 0");
    let path = write(dir.path(), "s.toml", &text);
    let out = rlsim()
        .arg("run")
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("field `goals.max_policy_violatons`"), "{err}");
    assert!(err.contains("did you mean `policy_violations`?"), "{err}");
}

/// A bound in the wrong unit is an input error naming the file, line, field and what to write.
#[test]
fn goal_bounds_in_a_wrong_unit_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(repo().join("scenarios/boundary.toml")).unwrap();
    for (from, to, expected) in [
        (
            "max_delay_p99 = \"1s\"",
            "max_delay_p99 = \"1 parsec\"",
            ":58:17: field `goals.max_delay_p99`: `delay_p99_ns`: expected a duration such as \
             \"1s\" or \"250ms\" (or a number of nanoseconds); unknown unit `parsec`",
        ),
        (
            "max_policy_violations = 0 ",
            "max_policy_violations = \"5s\"",
            ":55:25: field `goals.max_policy_violations`: `policy_violations`: expected a \
             non-negative number or a rate over the run such as \"1/min\"; `5s` is not a rate",
        ),
        (
            "max_state_bytes_per_key = 64",
            "max_state_bytes_per_key = \"64 kB\"",
            ":57:27: field `goals.max_state_bytes_per_key`: `state_bytes_per_key`: expected a \
             size such as \"64 B\" or \"1 KiB\"",
        ),
    ] {
        assert!(shipped.contains(from), "{from}");
        let path = write(dir.path(), "s.toml", &shipped.replace(from, to));
        let out = rlsim().arg("run").arg(&path).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        let want = format!("error: {}{expected}", path.display());
        assert!(err.starts_with(&want), "{err}\nwanted: {want}");
    }
}

#[test]
fn quiet_prints_nothing_and_output_is_plain_off_a_terminal() {
    let out = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--quiet")
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let plain = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .env_remove("CLICOLOR_FORCE")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        !plain.contains(&0x1b),
        "no escape codes when stdout is a pipe"
    );
    let forced = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .env("CLICOLOR_FORCE", "1")
        .env_remove("NO_COLOR")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(forced.contains(&0x1b), "CLICOLOR_FORCE colours the table");
    let no_color = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(!no_color.contains(&0x1b), "NO_COLOR wins");
}

/// Without abusive traffic, `abusive_leakage` is `null` (not a perfect 0.0): an empty CSV cell,
/// `n/a` on the terminal and in the reports, and an expectation on it says why it has no value.
#[test]
fn leakage_without_abusive_traffic_is_null_and_shown_as_n_a() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"users\"\nduration = \"10s\"\nalgorithms = [\"fixed_window\"]\n\
                expect = [\"* abusive_leakage <= 0.1\"]\n\
                [policy]\nlimit = 5\nwindow = \"1s\"\n\
                [[traffic]]\nname = \"users\"\nkind = \"constant\"\nrate = \"2/s\"\n";
    let path = write(dir.path(), "s.toml", text);
    let out = dir.path().join("out");
    let run = rlsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(run.get_output().stdout.clone()).unwrap();
    let row = stdout.lines().nth(2).unwrap();
    assert!(
        row.starts_with("fixed_window") && row.contains(" n/a "),
        "{row}"
    );
    assert!(
        stdout.contains(
            "FAIL  users: fixed_window abusive_leakage <= 0.1 (measured n/a: the run has no \
             abusive traffic to leak)"
        ),
        "{stdout}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let roles = &summary["algorithms"][0]["roles"];
    assert_eq!(roles["abusive_offered"], 0);
    assert!(roles["abusive_leakage"].is_null(), "{roles}");
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let values: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "abusive_leakage").unwrap();
    assert_eq!(values[at], "");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // legit goodput, abuse leak, legit p99 delay (none).
    assert!(md.contains("| 1.0000 | n/a | - |"), "{md}");
    assert!(md.contains(
        "- **FAIL** (fixed_window) `* abusive_leakage <= 0.1`: measured fixed_window n/a"
    ));
}
