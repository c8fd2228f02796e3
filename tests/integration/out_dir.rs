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

/// Every file under `dir` with its bytes, by relative path.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
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

/// A run that cannot write one of its files (here `report.html` is a directory, as a full disk
/// would stop it part way) leaves the directory exactly as the earlier run left it: no new
/// summary beside old charts, no temporary file, the old manifest.
#[test]
fn a_run_that_fails_while_writing_leaves_the_earlier_outputs_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run("retry_storm.toml", &out);
    std::fs::remove_file(out.join("report.html")).unwrap();
    std::fs::create_dir(out.join("report.html")).unwrap();
    let before = contents(&out);
    let failed = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&failed.get_output().stderr).to_string();
    assert!(stderr.contains("report.html"), "{stderr}");
    let after = contents(&out);
    assert_eq!(
        after.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        before.iter().map(|(f, _)| f).collect::<Vec<_>>()
    );
    assert!(after == before, "a file changed");
}

/// A run into an empty directory that fails while writing its last files leaves it empty: no
/// summary or chart of a run that did not complete.
#[test]
fn a_failed_write_into_an_empty_directory_leaves_it_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // A directory where the report goes: every file before it could be written.
    std::fs::create_dir_all(out.join("report.md")).unwrap();
    rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .assert()
        .failure()
        .code(2);
    assert_eq!(listing(&out), Vec::<String>::new());
    let mut entries: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        ["report.md"],
        "no charts/ directory, no temporary file"
    );
}
