//! `--out DIR` reused: the files an earlier run wrote there go, everything else stays.

use crate::report::run_boundary;
use crate::util::{repo, rlsim};
use std::path::Path;

fn run(scenario: &str, dir: &Path) {
    rlsim()
        .arg("run")
        .arg(repo().join("scenarios").join(scenario))
        .arg("--out")
        .arg(dir)
        .arg("--quiet")
        .assert()
        .success();
}

fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        out.push(
            entry
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/"),
        );
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

#[test]
fn a_reused_out_dir_keeps_no_chart_of_the_previous_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // retry_storm draws the retry and delay charts; boundary has alerts but no retries.
    run("retry_storm.toml", &out);
    assert!(out.join("charts/retries.svg").exists());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    run_boundary(&out);
    let files = listing(&out);
    assert!(
        !files.contains(&"charts/retries.svg".to_string()),
        "{files:?}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine",
        "a file rlsim did not write stays"
    );
    // The manifest lists exactly what this run wrote: every file but itself and notes.txt.
    let manifest = std::fs::read_to_string(out.join(".rlsim-manifest")).unwrap();
    let mut listed: Vec<String> = manifest
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    listed.sort();
    let expected: Vec<String> = files
        .into_iter()
        .filter(|f| f != ".rlsim-manifest" && f != "notes.txt")
        .collect();
    assert_eq!(listed, expected);
    assert!(listed.contains(&"charts/refused_share.svg".to_string()));
}

#[test]
fn a_manifest_cannot_remove_anything_outside_the_out_dir() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(dir.path().join("precious.txt"), "keep").unwrap();
    let precious = dir.path().join("precious.txt");
    std::fs::write(
        out.join(".rlsim-manifest"),
        format!("# hand-edited\n../precious.txt\n{}\n", precious.display()),
    )
    .unwrap();
    run_boundary(&out);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
}

/// An output directory of an rlsim from before manifests: its old charts go too.
#[test]
fn an_out_dir_from_before_manifests_is_cleaned_of_rlsim_s_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("charts")).unwrap();
    std::fs::write(out.join("charts/retries.svg"), "<svg/>").unwrap();
    std::fs::write(out.join("charts/mine.svg"), "<svg/>").unwrap();
    run_boundary(&out);
    assert!(!out.join("charts/retries.svg").exists());
    assert!(out.join("charts/mine.svg").exists());
}
