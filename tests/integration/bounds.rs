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
        &["b.toml:11:", "`traffic[0].on`", "about 6.0e11 steps"],
    );
}

#[test]
fn mmpp_stays_of_a_nanosecond_are_refused() {
    assert_refused(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\narrival = \"mmpp\"\nmmpp_rates = [\"1/s\", \"2/s\"]\nmmpp_stay = [\"1ns\", \"1ns\"]\n",
        &["b.toml:11:", "`traffic[0].mmpp_stay`", "about 6.0e11 steps"],
    );
}

#[test]
fn a_spike_of_one_per_nanosecond_is_refused_even_if_it_decays_at_once() {
    // The spike sends almost nothing, but thinning draws candidates at its peak all along.
    assert_refused(
        "[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\narrival = \"spike\"\nspike_at = \"1s\"\npeak = \"1/ns\"\ndecay = \"1ns\"\n",
        &["b.toml:12:", "`traffic[0].peak`", "about 6.0e11 steps"],
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
