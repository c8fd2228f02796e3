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
            "leaky_bucket",
            "sliding_window_log",
            "fixed_window"
        ]
    );
    assert!(ranking.contains("**gcra**: meets all 4 goals; 0 violations"));
    assert!(ranking.contains("**fixed_window**: misses `policy_violations <= 0` (100)"));
    assert!(html.contains("<li><strong>gcra</strong>: meets all 4 goals; 0 violations"));
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
