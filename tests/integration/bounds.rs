//! Work the generators would do, bounded up front: sources that
//! send few requests but draw or switch without end, several sources that are each within
//! bounds but not together, and malformed numbers. Checked through the library so that a
//! regression fails instead of running for days; one case goes through the binary for exit 2.

use crate::util::{rlsim, write};
use rlsim::Scenario;
use std::path::Path;

const HEAD: &str = "name = \"x\"\nduration = \"10m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n";

/// Validates `traffic` (the `[[traffic]]` tables) and returns the error's message and exit code.
fn refused(traffic: &str) -> (String, u8) {
    let toml = format!("{HEAD}{traffic}");
    match Scenario::parse(&toml, Path::new("b.toml")) {
        Ok(_) => panic!("accepted: {traffic}"),
        Err(e) => (e.to_string(), e.exit_code()),
    }
}

fn assert_refused(traffic: &str, expected: &[&str]) {
    let (message, code) = refused(traffic);
    assert_eq!(code, 2, "{message}");
    for e in expected {
        assert!(message.contains(e), "expected `{e}` in: {message}");
    }
}

#[test]
fn on_off_periods_of_a_nanosecond_are_refused() {
    // One request a second, but 6·10^11 on/off switches to walk through in ten minutes.
    assert_refused(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"onoff\"\non = \"1ns\"\noff = \"1ns\"\n",
        &[
            "b.toml:11:",
            "`traffic[0].on`",
            "`1ns` on and `1ns` off periods over 10m are about 6.0e11 state switches to generate; at most 1e8 allowed",
        ],
    );
}

#[test]
fn mmpp_stays_of_a_nanosecond_are_refused() {
    assert_refused(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\narrival = \"mmpp\"\nmmpp_rates = [\"1/s\", \"2/s\"]\nmmpp_stay = [\"1ns\", \"1ns\"]\n",
        &[
            "b.toml:11:",
            "`traffic[0].mmpp_stay`",
            "mean stays of `1ns` and `1ns` over 10m are about 6.0e11 state switches to generate; at most 1e8 allowed",
        ],
    );
}

#[test]
fn a_spike_of_one_per_nanosecond_is_refused_even_if_it_decays_at_once() {
    // The spike sends almost nothing, but thinning draws candidates at its peak all along.
    assert_refused(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"spike\"\nspike_at = \"1s\"\npeak = \"1/ns\"\ndecay = \"1ns\"\n",
        &[
            "b.toml:12:",
            "`traffic[0].peak`",
            "thinning draws candidates at the peak rate (1.000e9/s) over 10m: about 6.0e11 draws for about 6.0e2 requests; at most 1e8 or 10 per request allowed",
        ],
    );
}

#[test]
fn sources_within_bounds_alone_are_refused_together() {
    // 10^8 requests per second for ten minutes: 6·10^10 each, 1.2·10^11 together.
    let one = |name: &str| {
        format!("[[traffic]]\nname = \"{name}\"\nkind = \"constant\"\nrate = \"100/us\"\n")
    };
    assert!(Scenario::parse(&format!("{HEAD}{}", one("a")), Path::new("b.toml")).is_ok());
    assert_refused(
        &format!("{}{}", one("a"), one("b")),
        &[
            "b.toml:13:",
            "`traffic[1].rate`",
            "about 1.2e11 requests or generator steps together",
        ],
    );
}

#[test]
fn too_many_clients_across_sources_are_refused() {
    // A million users each is allowed per source; five such sources hold 5 million clients.
    let mut traffic = String::new();
    for i in 0..5 {
        traffic.push_str(&format!(
            "[[traffic]]\nname = \"s{i}\"\nkind = \"constant\"\nrate = \"1/h\"\nusers = 1000000\nipv6 = true\n"
        ));
    }
    assert_refused(
        &traffic,
        &[
            "`traffic[4].users`",
            "5000000 clients together (more than 4000000",
        ],
    );
}

#[test]
fn malformed_numbers_are_refused_by_name() {
    let ramp = |to: &str| {
        format!(
            "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"ramp\"\nrate_to = \"{to}\"\n"
        )
    };
    // `rate_to` may be zero, but `1/0s` is no rate at all.
    assert!(Scenario::parse(&format!("{HEAD}{}", ramp("0/s")), Path::new("b.toml")).is_ok());
    assert_refused(
        &ramp("1/0s"),
        &["`traffic[0].rate_to`", "a rate per zero time"],
    );
    let duration = |d: &str| {
        format!("[[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\nstart = \"{d}\"\n")
    };
    assert_refused(
        &duration("_1s"),
        &["`traffic[0].start`", "`_1s` is not a number"],
    );
    assert_refused(&duration("1__0s"), &["`1__0s` is not a number"]);
    assert_refused(
        &duration("1e400s"),
        &["`1e400s` is not a plain decimal number"],
    );
}

#[test]
fn the_binary_refuses_endless_generation_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "b.toml",
        &format!(
            "{HEAD}[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"onoff\"\non = \"1ns\"\noff = \"1ns\"\n"
        ),
    );
    rlsim()
        .arg("run")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("field `traffic[0].on`"));
}

/// A scenario of one minute: each hostile setting below is within the old guard (10^11 steps)
/// and ran for hours; it must now be refused before any work, or finish.
const MINUTE: &str = "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n";

/// Runs the binary on `toml` (in a fresh directory, with `files` beside it) and returns its
/// exit code and standard error.
fn run_binary(toml: &str, files: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    let path = write(dir.path(), "h.toml", toml);
    let out = rlsim()
        .args(args)
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_binary_refuses(traffic: &str, expected: &[&str]) {
    let (code, stderr) = run_binary(&format!("{MINUTE}{traffic}"), &[], &["run"]);
    assert_eq!(code, 2, "{stderr}");
    for e in expected {
        assert!(stderr.contains(e), "expected `{e}` in: {stderr}");
    }
}

#[test]
fn hostile_mmpp_stays_are_refused_at_validation() {
    assert_binary_refuses(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\narrival = \"mmpp\"\nmmpp_rates = [\"1/s\", \"2/s\"]\nmmpp_stay = [\"1ns\", \"1ns\"]\n",
        &[
            "h.toml:11:13: field `traffic[0].mmpp_stay`",
            "over 1m are about 6.0e10 state switches to generate; at most 1e8 allowed",
        ],
    );
}

#[test]
fn hostile_on_off_periods_are_refused_at_validation() {
    assert_binary_refuses(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"onoff\"\non = \"1ns\"\noff = \"1ns\"\n",
        &[
            "h.toml:11:6: field `traffic[0].on`",
            "`1ns` on and `1ns` off periods over 1m are about 6.0e10 state switches",
        ],
    );
}

#[test]
fn a_pareto_shape_near_one_is_refused_by_its_switches_not_its_mean() {
    // Means of a second give 600 periods in ten minutes; with α = 1.000001 almost every
    // period is near its minimum of a microsecond: about 3·10^7 per client.
    let onoff = |alpha: &str| {
        format!(
            "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\nusers = 10\narrival = \"onoff\"\non = \"1s\"\noff = \"1s\"\non_dist = \"pareto\"\npareto_alpha = {alpha}\n"
        )
    };
    let ten_minutes = MINUTE.replace("\"1m\"", "\"10m\"");
    let (code, stderr) = run_binary(
        &format!("{ten_minutes}{}", onoff("1.000001")),
        &[],
        &["run"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("h.toml:15:16: field `traffic[0].pareto_alpha`: `1s` on and `1s` off periods with a Pareto shape of 1.000001 over 10m for 10 clients are about 2.8e8 state switches"),
        "{stderr}"
    );
    // The usual shape is far within bounds.
    assert!(
        Scenario::parse(
            &format!("{ten_minutes}{}", onoff("1.5")),
            Path::new("h.toml")
        )
        .is_ok()
    );
}

#[test]
fn a_huge_spike_peak_is_refused_at_validation() {
    assert_binary_refuses(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"spike\"\nspike_at = \"1s\"\npeak = \"1/ns\"\ndecay = \"1ns\"\n",
        &[
            "h.toml:12:8: field `traffic[0].peak`",
            "about 6.0e10 draws for about 6.1e1 requests",
        ],
    );
}

#[test]
fn a_one_line_trace_looped_a_million_times_is_replayed() {
    // Each repetition reopened the trace and built a CSV reader: minutes for a million.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "one.csv", "time,ip\n0,10.0.0.1\n");
    let path = write(
        dir.path(),
        "h.toml",
        &format!(
            "{MINUTE}[[traffic]]\nname = \"a\"\nkind = \"replay\"\npath = \"one.csv\"\nformat = \"csv\"\nloop = 1000000\n"
        ),
    );
    let out = dir.path().join("t.csv");
    rlsim()
        .arg("traffic")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1_000_001);
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l == "0,10.0.0.1,,,,a,legit,GET,,,")
    );
}

#[test]
fn a_hundred_thousand_expectations_are_checked() {
    // Each line's unit was found by serialising an empty report, and each line's results by
    // scanning all of them: minutes, now linear.
    let mut toml = MINUTE.replace(
        "duration = \"1m\"\n",
        "duration = \"1m\"\nalgorithms = [\"fixed_window\"]\nexpect = [\n",
    );
    let lines: Vec<String> = (0..100_000)
        .map(|i| format!("\"fixed_window admitted >= {}\",\n", i % 2))
        .collect();
    toml = toml.replacen("[policy]", &format!("{}]\n[policy]", lines.concat()), 1);
    toml.push_str("[[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n");
    let (code, stderr) = run_binary(&toml, &[], &["run", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "h.toml", &toml);
    rlsim()
        .arg("check")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(predicates::str::contains("100000 passed, 0 failed"));
}
