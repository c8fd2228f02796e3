//! Shared helpers: running the binary and the library on scenarios written to temp dirs.

use rlsim::metrics::AlgorithmReport;
use rlsim::{Scenario, sim};
use std::path::{Path, PathBuf};

pub fn rlsim() -> assert_cmd::Command {
    assert_cmd::cargo::cargo_bin_cmd!("rlsim")
}

/// The repository's root (for shipped scenarios).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's files in `dir` ending in `.{ext}`, in name order (`"scenarios"`, `"toml"`:
/// every shipped scenario).
pub fn files_in(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// Polls `ready` every 10 ms for at most 5 s (a server starting, a log being written):
/// whether it came true.
pub fn within_5s(mut ready: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if ready() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Parses `toml` and runs every algorithm it lists.
pub fn run_toml(toml: &str) -> Vec<AlgorithmReport> {
    let scenario = Scenario::parse(toml, Path::new("inline.toml")).unwrap();
    run_scenario(&scenario)
}

pub fn run_scenario(scenario: &Scenario) -> Vec<AlgorithmReport> {
    let (report, _) = sim::run_all(scenario, sim::RunOptions::new()).unwrap();
    report.algorithms
}

pub fn by_name<'a>(reports: &'a [AlgorithmReport], name: &str) -> &'a AlgorithmReport {
    reports
        .iter()
        .find(|r| r.algorithm == name)
        .unwrap_or_else(|| panic!("no report for {name}"))
}

/// The boundary attack on its own: L = 100/min per IP; one attacker sends 100 requests at
/// 59.9 s and 100 at 60.0 s. `algorithms` empty means all of them.
pub fn boundary_attack(algorithms: &[&str]) -> String {
    let list = if algorithms.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = algorithms.iter().map(|a| format!("\"{a}\"")).collect();
        format!("algorithms = [{}]\n", quoted.join(", "))
    };
    format!(
        "name = \"boundary\"\nduration = \"3m\"\n{list}\
         [policy]\nlimit = 100\nwindow = \"1m\"\n\
         [[traffic]]\nname = \"attacker\"\nrole = \"abusive\"\nkind = \"boundary\"\n\
         ip = \"203.0.113.7\"\ncount = 100\nat = \"1m\"\nlead = \"100ms\"\n"
    )
}

/// `rlsim run` of `scenario`, refused as bad input (exit code 2): its stderr.
pub fn run_refused(scenario: &Path) -> String {
    let out = rlsim().arg("run").arg(scenario).output().expect("runs");
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: {stderr}",
        scenario.display()
    );
    stderr
}

/// `rlsim run --quiet --out DIR` of `scenario`, which must succeed.
pub fn run_out(scenario: &Path, dir: &Path) {
    let out = rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(dir)
        .arg(scenario)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `rlsim run --format json` of `scenario`: its summary.json.
pub fn summary(scenario: &Path) -> serde_json::Value {
    let out = rlsim()
        .args(["run", "--format", "json", "--quiet"])
        .arg(scenario)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The summary's row (a contender or algorithm) named `name`.
pub fn row<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .find(|a| a["algorithm"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

/// The per-source figures of a summary row: the source named `name`.
pub fn source<'a>(row: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    row["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|x| x["name"] == name)
        .unwrap_or_else(|| panic!("no source {name}"))
}

/// How many of source `name`'s requests the row's contender rejected.
pub fn rejected(row: &serde_json::Value, name: &str) -> serde_json::Value {
    source(row, name)["rejected"].clone()
}

/// `rlsim import CONF`'s standard output (the contenders' TOML); the import must succeed.
pub fn imported(conf: &Path) -> String {
    let out = rlsim().arg("import").arg(conf).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `rlsim import --kind KIND` of `text` written as `name`: it must exit 2, with every one of
/// `expect` in its message, and no panic.
pub fn import_refused(kind: &str, name: &str, text: &str, expect: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), name, text);
    let out = rlsim()
        .args(["import", "--kind", kind])
        .arg(&p)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    for e in expect {
        assert!(err.contains(e), "{e} missing in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}
