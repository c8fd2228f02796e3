//! Shared helpers: running the binary and the library on scenarios written to temp dirs.

use rlsim::metrics::AlgorithmReport;
use rlsim::report::DecisionPart;
use rlsim::{Scenario, sim};
use std::path::{Path, PathBuf};

pub fn rlsim() -> assert_cmd::Command {
    assert_cmd::cargo::cargo_bin_cmd!("rlsim")
}

/// The repository's root (for shipped scenarios).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
    let (report, _) = sim::run::<DecisionPart, _>(scenario, |_, _| Ok(None), None).unwrap();
    report.algorithms
}

pub fn by_name<'a>(reports: &'a [AlgorithmReport], name: &str) -> &'a AlgorithmReport {
    reports
        .iter()
        .find(|r| r.algorithm == name)
        .unwrap_or_else(|| panic!("no report for {name}"))
}
