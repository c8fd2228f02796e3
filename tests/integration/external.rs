//! Tests that need a tool from outside Rust (node and the npm packages, Python `limits`,
//! redis-server, Chromium, promtool, a Unix device): one place decides whether a missing tool
//! skips the test or fails it, and records every skip so that `cargo test` can end with a
//! summary of what was not tested and how to enable it.
//!
//! libtest hides a passing test's stderr, so a skip message printed by the test itself never
//! shows. Instead each skip is appended to a log under `CARGO_TARGET_TMPDIR` named after the
//! parent process (the `cargo test` that runs every test binary), and the last test target,
//! `zz_skipped_externals` (no harness, so its output is shown), prints and removes that log.
//! Under `RLSIM_REQUIRE_EXTERNAL=1` (`.ci/run`) a missing tool fails the test instead.
//!
//! This file is also compiled into `tests/zz_skipped_externals.rs` (with `#[path]`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The skip log of the `cargo test` run with process id `cargo`.
pub fn log_for(cargo: u32) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rlsim-skipped-externals-{cargo}.tsv"))
}

/// This run's skip log: every test binary of one `cargo test` is a child of the same cargo.
pub fn log() -> PathBuf {
    log_for(std::os::unix::process::parent_id())
}

/// Whether `RLSIM_REQUIRE_EXTERNAL=1`: a missing tool then fails the test.
pub fn required() -> bool {
    std::env::var("RLSIM_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1")
}

/// Whether `command --version` runs and succeeds.
pub fn on_path(command: &str) -> bool {
    Command::new(command)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `true` if the tool was `found`. Otherwise the calling test must return early: the skip is
/// recorded (test name, `tool`, how to `install` it) for the summary and printed on stderr;
/// under `RLSIM_REQUIRE_EXTERNAL=1` it panics instead.
pub fn require_external(found: bool, tool: &str, install: &str) -> bool {
    decide(found, tool, install, required(), &log())
}

/// [`require_external`] with the environment and the log made explicit (for its own test).
pub fn decide(found: bool, tool: &str, install: &str, required: bool, log: &Path) -> bool {
    if found {
        return true;
    }
    if required {
        panic!("{tool} is missing and RLSIM_REQUIRE_EXTERNAL=1: {install}");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_string();
    // One write per line, in append mode: test threads and binaries never interleave a line.
    let line = format!("{test}\t{tool}\t{install}\n");
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).expect("the skip log's directory");
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .expect("the skip log is writable");
    eprintln!("SKIPPED (needs {tool}; {install}): {test}");
    false
}

/// The summary of a skip log's lines, or `None` if nothing was skipped: the skipped tests,
/// then one line per missing tool saying how to install it.
pub fn summary(log: &str) -> Option<String> {
    let mut tests: Vec<(&str, &str)> = Vec::new();
    // Tools in order of first skip, with their install hint and how many tests each skipped.
    let mut tools: Vec<(&str, &str, usize)> = Vec::new();
    for line in log.lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(test), Some(tool), Some(install)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        tests.push((test, tool));
        match tools.iter_mut().find(|t| t.0 == tool) {
            Some(t) => t.2 += 1,
            None => tools.push((tool, install, 1)),
        }
    }
    if tests.is_empty() {
        return None;
    }
    tests.sort_unstable();
    let plural = |n: usize| if n == 1 { "test" } else { "tests" };
    let mut out = format!(
        "SKIPPED: {} {} not run, their external tool is missing:\n",
        tests.len(),
        plural(tests.len())
    );
    for (test, tool) in &tests {
        out.push_str(&format!("  {test} (needs {tool})\n"));
    }
    out.push_str("To run them, install what they need and run `cargo test` again:\n");
    for (tool, install, n) in &tools {
        out.push_str(&format!("  {tool} ({n} {}): {install}\n", plural(*n)));
    }
    out.push_str(
        "(.ci/run installs all of them and sets RLSIM_REQUIRE_EXTERNAL=1, \
         which fails a test whose tool is missing.)\n",
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_found_tool_runs_the_test_and_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips.tsv");
        assert!(decide(
            true,
            "chromium",
            "apt-get install chromium",
            true,
            &log
        ));
        assert!(decide(
            true,
            "chromium",
            "apt-get install chromium",
            false,
            &log
        ));
        assert!(!log.exists());
    }

    #[test]
    fn a_missing_tool_skips_and_the_summary_names_the_test_and_the_install() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sub").join("skips.tsv");
        assert!(!decide(
            false,
            "promtool",
            "apt-get install prometheus",
            false,
            &log
        ));
        assert!(!decide(
            false,
            "promtool",
            "apt-get install prometheus",
            false,
            &log
        ));
        assert!(!decide(false, "/dev/zero", "a Unix system", false, &log));
        let text = std::fs::read_to_string(&log).unwrap();
        let me =
            "external::tests::a_missing_tool_skips_and_the_summary_names_the_test_and_the_install";
        assert_eq!(
            text,
            format!(
                "{me}\tpromtool\tapt-get install prometheus\n\
                 {me}\tpromtool\tapt-get install prometheus\n\
                 {me}\t/dev/zero\ta Unix system\n"
            )
        );
        assert_eq!(
            summary(&text).unwrap(),
            format!(
                "SKIPPED: 3 tests not run, their external tool is missing:\n  \
                 {me} (needs /dev/zero)\n  {me} (needs promtool)\n  {me} (needs promtool)\n\
                 To run them, install what they need and run `cargo test` again:\n  \
                 promtool (2 tests): apt-get install prometheus\n  \
                 /dev/zero (1 test): a Unix system\n\
                 (.ci/run installs all of them and sets RLSIM_REQUIRE_EXTERNAL=1, \
                 which fails a test whose tool is missing.)\n"
            )
        );
    }

    #[test]
    #[should_panic(
        expected = "redis-server is missing and RLSIM_REQUIRE_EXTERNAL=1: apt-get install redis-server"
    )]
    fn a_missing_tool_fails_the_test_when_required() {
        let dir = tempfile::tempdir().unwrap();
        decide(
            false,
            "redis-server",
            "apt-get install redis-server",
            true,
            &dir.path().join("l"),
        );
    }

    #[test]
    fn nothing_skipped_is_no_summary() {
        assert_eq!(summary(""), None);
    }
}
