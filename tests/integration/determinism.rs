//! Same scenario and seed, same bytes.

use crate::util::{repo, rlsim};
use std::path::Path;

fn run_into(dir: &Path, seed: Option<&str>) {
    let mut cmd = rlsim();
    cmd.arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--out")
        .arg(dir)
        .arg("--decisions")
        .arg(dir.join("decisions.csv"));
    if let Some(seed) = seed {
        cmd.args(["--seed", seed]);
    }
    cmd.assert().success();
}

const DETERMINISTIC: [&str; 5] = [
    "summary.json",
    "summary.csv",
    "timeseries.csv",
    "delays.csv",
    "decisions.csv",
];

#[test]
fn same_seed_gives_byte_identical_outputs() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_into(a.path(), None);
    run_into(b.path(), None);
    for name in DETERMINISTIC {
        let (x, y) = (
            std::fs::read(a.path().join(name)).unwrap(),
            std::fs::read(b.path().join(name)).unwrap(),
        );
        assert!(!x.is_empty(), "{name} is empty");
        assert!(x == y, "{name} differs between two runs with the same seed");
    }
}

#[test]
fn another_seed_gives_other_traffic() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_into(a.path(), Some("7"));
    run_into(b.path(), Some("8"));
    // The ordinary users are Poisson: a new seed moves their requests.
    let (x, y) = (
        std::fs::read(a.path().join("decisions.csv")).unwrap(),
        std::fs::read(b.path().join("decisions.csv")).unwrap(),
    );
    assert_ne!(x, y);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(b.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["scenario"]["seed"], 8);
}

/// The terminal output of `rlsim run` (table, alert and deployment lines, expectation lines) is
/// as reproducible as the files: no wall-clock figure unless `--timing` asks for one.
#[test]
fn default_terminal_output_is_byte_identical() {
    let print = |scenario: &str, extra: &[&str]| {
        let out = rlsim()
            .arg("run")
            .arg(repo().join(scenario))
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{scenario}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for scenario in ["scenarios/boundary.toml", "scenarios/nat.toml"] {
        let first = print(scenario, &[]);
        assert_eq!(first, print(scenario, &[]), "{scenario}: stdout differs");
        let header = first.lines().nth(1).unwrap();
        assert!(header.ends_with("legit_delay_p99"), "{header}");
        assert!(!first.contains("decisions/s"), "{first}");
    }
    // The README and docs/outputs.md show this very table, with its note.
    let table: String = print("scenarios/boundary.toml", &[])
        .lines()
        .take(9)
        .map(|l| format!("{l}\n"))
        .collect();
    for doc in ["README.md", "docs/outputs.md"] {
        let text = std::fs::read_to_string(repo().join(doc)).unwrap();
        assert!(
            text.contains(&table),
            "{doc} does not show the table as printed:\n{table}"
        );
    }
    // `--timing` adds the column (and nothing else moves).
    let timed = print("scenarios/boundary.toml", &["--timing"]);
    let header = timed.lines().nth(1).unwrap();
    assert!(header.ends_with("legit_delay_p99  decisions/s"), "{header}");
    let plain = print("scenarios/boundary.toml", &[]);
    for (t, p) in timed.lines().zip(plain.lines()).skip(2).take(6) {
        assert!(t.starts_with(p), "{t:?} does not extend {p:?}");
    }
}
