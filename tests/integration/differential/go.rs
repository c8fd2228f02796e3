//! Go `golang.org/x/time/rate` (Debian's golang-golang-x-time-dev), driven by
//! tests/differential/go/driver.go at explicit instants (`AllowN`, `ReserveN`, `TokensAt` take
//! the time as an argument, so no clock is faked): every decision, every Reserve delay to the
//! nanosecond and the bucket's float64 tokens after each admission, bit for bit.

use super::*;
use std::collections::HashMap;
use std::path::PathBuf;

/// Where Debian's golang-golang-x-time-dev puts the package (a GOPATH).
const GOPATH: &str = "/usr/share/gocode";

/// The driver, built once into the target directory, if go and the package are installed.
fn go_driver() -> Option<Command> {
    // `go version`: go has no `--version`.
    let go = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    let has = go
        && Path::new(GOPATH)
            .join("src/golang.org/x/time/rate")
            .is_dir();
    if !require_external(
        has,
        "go with golang.org/x/time",
        "apt-get install golang-go golang-golang-x-time-dev",
    ) {
        return None;
    }
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("go-driver");
    std::fs::create_dir_all(&out_dir).unwrap();
    let binary = out_dir.join("driver");
    let build = Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&binary)
        .arg(driver_dir("go").join("driver.go"))
        // The package from Debian's GOPATH, no module download.
        .env("GO111MODULE", "off")
        .env("GOPATH", GOPATH)
        .env("GOCACHE", out_dir.join("cache"))
        .env("GOFLAGS", "")
        .output()
        .expect("go runs");
    assert!(
        build.status.success(),
        "go build: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    Some(Command::new(binary))
}

/// One configuration: `rate.Every(every)`, the burst, Allow or Reserve.
#[derive(Debug, Clone, Copy)]
struct Config {
    every: Nanos,
    burst: i64,
    reserve: bool,
}

/// Intervals with exact and inexact float reciprocals (100 ms is 10/s; a third of a second and
/// 7 ms are not representable), one that is not a whole ms, bursts from 1.
fn configs() -> Vec<Config> {
    let everies = [
        100 * NANOS_PER_MILLI,
        NANOS_PER_SEC / 3,
        7 * NANOS_PER_MILLI,
        NANOS_PER_SEC,
        2_500_001,
    ];
    let bursts = [1, 2, 5, 10];
    (0..TRACES)
        .map(|seed| Config {
            every: everies[seed as usize % everies.len()],
            burst: bursts[(seed / 2) as usize % bursts.len()],
            reserve: seed % 2 == 1,
        })
        .collect()
}

/// What Go said of one hit.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Go {
    Allowed(u64),
    Refused,
    Reserved { delay: Nanos, tokens: u64 },
}

fn parse(line: &str) -> Go {
    let f: Vec<&str> = line.split_whitespace().collect();
    let bits = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("`{line}`"));
    match f.as_slice() {
        ["A", t] => Go::Allowed(bits(t)),
        ["R", _] => Go::Refused,
        ["D", d, t] => Go::Reserved {
            delay: d.parse().unwrap_or_else(|_| panic!("`{line}`")),
            tokens: bits(t),
        },
        _ => panic!("driver line `{line}`"),
    }
}

/// rlsim's answers: the profile decides each hit on its key's state, the tokens read after.
fn ours(config: Config, hits: &[Hit]) -> Vec<Go> {
    let given = [
        ("every", ParamValue::Str(format!("{}ns", config.every))),
        ("burst", ParamValue::Int(config.burst)),
        ("reserve", ParamValue::Bool(config.reserve)),
    ];
    let Profile::GoXTimeRate(go) = configure(ProfileKind::GoXTimeRate, &given) else {
        unreachable!("the go-x-time-rate profile")
    };
    let mut states = HashMap::new();
    hits.iter()
        .map(|h| {
            let s = states.entry(h.key).or_insert_with(|| go.new_state(h.at));
            let d = go.decide(s, h.at);
            match d.outcome {
                Outcome::Reject { .. } => Go::Refused,
                Outcome::Allow if !config.reserve => Go::Allowed(s.tokens.to_bits()),
                Outcome::Allow => Go::Reserved {
                    delay: 0,
                    tokens: s.tokens.to_bits(),
                },
                Outcome::Delay(delay) => Go::Reserved {
                    delay,
                    tokens: s.tokens.to_bits(),
                },
            }
        })
        .collect()
}

/// Instants as Unix nanoseconds from 2026-01-01 (virtual time 0 there).
#[test]
fn go_x_time_rate_agrees_with_the_go_package_bit_for_bit() {
    let Some(driver) = go_driver() else { return };
    let cases: Vec<(Config, Vec<Hit>)> = configs()
        .into_iter()
        .enumerate()
        .map(|(seed, c)| {
            let window_ms = (c.every / NANOS_PER_MILLI).max(1);
            let keys = 1 + (seed % 4) as u32 * 5;
            (c, trace(seed as u64 + 9000, window_ms, keys, HITS))
        })
        .collect();
    let start = rlsim::time::DEFAULT_START;
    let traces: Vec<(String, Vec<Hit>)> = cases
        .iter()
        .map(|(c, hits)| {
            let mode = if c.reserve { "reserve" } else { "allow" };
            let absolute = hits
                .iter()
                .map(|h| Hit {
                    at: h.at + start,
                    key: h.key,
                })
                .collect();
            (format!("config {} {} {mode}", c.every, c.burst), absolute)
        })
        .collect();
    let answers = run_driver(driver, &traces, 1);
    let (mut total, mut refused, mut delayed) = (0, 0, 0);
    for ((config, hits), lines) in cases.iter().zip(&answers) {
        let theirs: Vec<Go> = lines.iter().map(|l| parse(l)).collect();
        let mine = ours(*config, hits);
        for (i, (m, t)) in mine.iter().zip(&theirs).enumerate() {
            assert_eq!(
                m, t,
                "{config:?}: hit #{i} at {} ns on key {}: rlsim {m:?}, Go {t:?}",
                hits[i].at, hits[i].key
            );
        }
        total += mine.len();
        refused += mine.iter().filter(|g| **g == Go::Refused).count();
        delayed += mine
            .iter()
            .filter(|g| matches!(g, Go::Reserved { delay, .. } if *delay > 0))
            .count();
    }
    // The traces reach both sides of the edge: some refused, some delayed.
    assert!(
        refused > 1000 && delayed > 1000,
        "{refused} refused, {delayed} delayed"
    );
    eprintln!(
        "go-x-time-rate: {total} decisions over {} traces identical to Go's x/time/rate ({refused} refused, {delayed} delayed)",
        cases.len()
    );
}
