//! `rlsim check` and `rlsim run`'s expectations: output lines and every exit code here; JSON and
//! JUnit in `reports.rs`, baselines in `baseline.rs`.

mod baseline;
mod reports;

use crate::util::{rlsim, write};

/// A small scenario whose figures are known exactly: 100 requests at 59.9 s and 100 at 60 s
/// against 100/min. The fixed window admits all 200 (burst_factor 2); the sliding log 100.
pub fn scenario(name: &str, expect: &[&str]) -> String {
    let list: Vec<String> = expect.iter().map(|e| format!("{e:?}")).collect();
    format!(
        r#"name = "{name}"
duration = "2m"
algorithms = ["fixed_window", "sliding_window_log"]
expect = [
    {}
]
[policy]
limit = 100
window = "1m"
[[traffic]]
name = "attacker"
role = "abusive"
kind = "boundary"
ip = "203.0.113.7"
count = 100
[[traffic]]
name = "users"
kind = "constant"
rate = "10/min"
users = 2
"#,
        list.join(",\n    ")
    )
}

pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn a_passing_and_a_failing_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario(
            "edge",
            &[
                "fixed_window burst_factor == 2.0",
                "sliding_window_log source=attacker admitted <= 99",
            ],
        ),
    );
    let out = rlsim().arg("check").arg(&path).assert().code(1);
    assert_eq!(
        stdout(out.get_output()),
        "pass  edge: fixed_window burst_factor == 2.0 (measured 2)\n\
         FAIL  edge: sliding_window_log source=attacker admitted <= 99 (measured 100)\n\
         1 passed, 1 failed\n"
    );
    assert!(stderr(out.get_output()).is_empty());
}

#[test]
fn star_role_and_source_expectations_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario(
            "edge",
            &[
                "* legit_goodput == 1.0",
                "* role=abusive offered == 200",
                "sliding_window_log role=abusive admitted_share == 0.5",
                "* source=users rejected == 0",
                "fixed_window delay_max_ns == 0",
            ],
        ),
    );
    let out = rlsim().arg("check").arg(&path).assert().code(0);
    assert_eq!(
        stdout(out.get_output()),
        "pass  edge: fixed_window legit_goodput == 1.0 (measured 1)\n\
         pass  edge: sliding_window_log legit_goodput == 1.0 (measured 1)\n\
         pass  edge: fixed_window role=abusive offered == 200 (measured 200)\n\
         pass  edge: sliding_window_log role=abusive offered == 200 (measured 200)\n\
         pass  edge: sliding_window_log role=abusive admitted_share == 0.5 (measured 0.5)\n\
         pass  edge: fixed_window source=users rejected == 0 (measured 0)\n\
         pass  edge: sliding_window_log source=users rejected == 0 (measured 0)\n\
         pass  edge: fixed_window delay_max_ns == 0 (measured 0)\n\
         8 passed, 0 failed\n"
    );
}

/// Checks that `expect` is refused at load time, with exit code 2 and every part of `expected`.
fn assert_refused(expect: &[&str], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", &scenario("edge", expect));
    let junit = dir.path().join("junit.xml");
    let out = rlsim()
        .arg("check")
        .arg(&path)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(2);
    let err = stderr(out.get_output());
    assert!(out.get_output().stdout.is_empty(), "nothing on stdout");
    assert!(err.starts_with("error: "), "{err}");
    for e in expected {
        assert!(err.contains(e), "expected `{e}` in: {err}");
    }
    assert!(!junit.exists(), "no JUnit file for bad input");
}

#[test]
fn unknown_names_are_refused_with_a_suggestion() {
    // The list's first item is on line 5; each is on its own line.
    let ok = "fixed_window burst_factor <= 2";
    assert_refused(
        &[ok, "fixed_window burst_factr <= 2"],
        &[
            "bad.toml:6:5:",
            "`expect[1]`",
            "unknown metric `burst_factr`: did you mean `burst_factor`?",
        ],
    );
    assert_refused(
        &["sliding_window_logg burst_factor <= 1"],
        &[
            "bad.toml:5:",
            "`expect[0]`",
            "did you mean `sliding_window_log`?",
        ],
    );
    assert_refused(
        &["gcra burst_factor <= 1"],
        &[
            "`expect[0]`",
            "`gcra` is not among this scenario's algorithms",
        ],
    );
    assert_refused(
        &["* source=user admitted >= 1"],
        &["unknown source `user`: did you mean `users`?"],
    );
    assert_refused(
        &["* role=admin admitted >= 1"],
        &["unknown role `admin` (expected legit or abusive)"],
    );
    assert_refused(
        &["* source=users legit_goodput >= 1"],
        &["unknown per-source metric `legit_goodput`"],
    );
    assert_refused(&["* burst_factor = 1"], &["`==` tests equality"]);
}

#[test]
fn directories_are_searched_and_every_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.toml",
        &scenario("a", &["fixed_window burst_factor == 2"]),
    );
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    write(
        &dir.path().join("nested"),
        "b.toml",
        &scenario("b", &["sliding_window_log burst_factor == 1"]),
    );
    write(dir.path(), "notes.txt", "not a scenario");
    let out = rlsim().arg("check").arg(dir.path()).assert().code(0);
    assert_eq!(
        stdout(out.get_output()),
        "pass  a: fixed_window burst_factor == 2 (measured 2)\n\
         pass  b: sliding_window_log burst_factor == 1 (measured 1)\n\
         2 passed, 0 failed\n"
    );

    let empty = tempfile::tempdir().unwrap();
    let out = rlsim().arg("check").arg(empty.path()).assert().code(2);
    assert!(stderr(out.get_output()).contains("no scenario (*.toml)"));
}

// The shipped scenarios pass their expectations: checked by
// io::cli::a_check_of_its_own_output_finds_no_change_on_every_shipped_scenario, on the same pass
// over them as its baseline comparison.

#[test]
fn run_reports_expectations_and_fails_only_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario("edge", &["* burst_factor <= 1.0"]),
    );
    let lines = "FAIL  edge: fixed_window burst_factor <= 1.0 (measured 2)\n\
                 pass  edge: sliding_window_log burst_factor <= 1.0 (measured 1)\n\
                 1 passed, 1 failed\n";
    let out = rlsim().arg("run").arg(&path).assert().code(0);
    let text = stdout(out.get_output());
    assert!(text.ends_with(&format!("\n\n{lines}")), "{text}");
    rlsim()
        .arg("run")
        .arg(&path)
        .arg("--strict")
        .assert()
        .code(1);

    // With --format json, stdout stays summary.json and the lines go to stderr.
    let out = rlsim()
        .args(["run", "--strict", "--format", "json"])
        .arg(&path)
        .assert()
        .code(1);
    let summary: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["algorithms"][0]["burst_factor"], 2.0);
    assert_eq!(stderr(out.get_output()), lines);

    let passing = write(
        dir.path(),
        "p.toml",
        &scenario("ok", &["* burst_factor <= 2"]),
    );
    rlsim()
        .arg("run")
        .arg(&passing)
        .arg("--strict")
        .assert()
        .code(0);
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let pass = write(
        dir.path(),
        "pass.toml",
        &scenario("p", &["* burst_factor <= 2"]),
    );
    let fail = write(
        dir.path(),
        "fail.toml",
        &scenario("f", &["* burst_factor < 1"]),
    );
    let bad = write(
        dir.path(),
        "bad.toml",
        &scenario("b", &["* burst_fctor <= 1"]),
    );
    rlsim().arg("check").arg(&pass).assert().code(0);
    rlsim().arg("check").arg(&fail).assert().code(1);
    rlsim().arg("check").arg(&bad).assert().code(2);
    // Bad input anywhere stops the whole check before anything runs.
    let out = rlsim()
        .arg("check")
        .args([&pass, &fail, &bad])
        .assert()
        .code(2);
    assert!(out.get_output().stdout.is_empty());
    rlsim()
        .arg("check")
        .arg(dir.path().join("nope.toml"))
        .assert()
        .code(2);
    rlsim().arg("check").assert().code(2);
    rlsim()
        .args(["check", "--format", "xml"])
        .arg(&pass)
        .assert()
        .code(2);
}

#[test]
fn every_broken_scenario_of_a_directory_is_reported_and_other_toml_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.toml", &scenario("ok", &["* admitted >= 1"]));
    // Not scenarios: skipped, not reported as broken.
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    );
    write(dir.path(), "rustfmt.toml", "edition = \"2024\"\n");
    let ok = rlsim().arg("check").arg(dir.path()).assert().code(0);
    assert!(stdout(ok.get_output()).starts_with("pass  ok: "));
    let broken = |typo: &str| scenario("bad", &[]).replace("limit =", typo);
    write(dir.path(), "a.toml", &broken("limt ="));
    std::fs::create_dir(dir.path().join("z")).unwrap();
    write(&dir.path().join("z"), "b.toml", &broken("lmit ="));
    let out = rlsim().arg("check").arg(dir.path()).assert().code(2);
    let err = stderr(out.get_output());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains("a.toml:"),
        "{err}"
    );
    assert!(lines[0].ends_with("did you mean `limit`?"), "{err}");
    assert!(
        lines[1].starts_with("error: ") && lines[1].contains("b.toml:"),
        "{err}"
    );
    assert!(stdout(out.get_output()).is_empty());
}
