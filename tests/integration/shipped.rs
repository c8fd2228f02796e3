//! Every shipped scenario run once, `rlsim run SCENARIO --out DIR` from the repository's root,
//! for the tests that read what such a run prints and writes (terminal width, the verdict, the
//! HTML report in a browser). Each of them running all of them was most of their time.

use crate::util::{repo, rlsim};
use std::path::PathBuf;
use std::sync::OnceLock;

/// One shipped scenario's run.
pub struct Shipped {
    /// The file's stem: `boundary` for `scenarios/boundary.toml`.
    pub name: String,
    pub out: PathBuf,
    pub stdout: String,
}

/// Every `scenarios/*.toml`, in name order, each run once per test binary (the first caller
/// runs them, spread over the machine's cores; the others wait). A run that fails fails every
/// test that asks.
pub fn runs() -> &'static [Shipped] {
    static RUNS: OnceLock<Vec<Shipped>> = OnceLock::new();
    RUNS.get_or_init(run_all)
}

fn run_all() -> Vec<Shipped> {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shipped-runs");
    let _ = std::fs::remove_dir_all(&root);
    let scenarios = crate::util::files_in("scenarios", "toml");
    assert!(scenarios.len() >= 10, "{scenarios:?}");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = scenarios.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = scenarios
            .chunks(chunk)
            .map(|part| s.spawn(|| part.iter().map(|p| run(p, &root)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a shipped scenario's run"))
            .collect()
    })
}

fn run(scenario: &PathBuf, root: &std::path::Path) -> Shipped {
    let name = scenario.file_stem().unwrap().to_string_lossy().into_owned();
    let out = root.join(&name);
    let output = rlsim()
        .current_dir(repo())
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{name}: {output:?}");
    Shipped {
        name,
        out,
        stdout: String::from_utf8(output.stdout).unwrap(),
    }
}
