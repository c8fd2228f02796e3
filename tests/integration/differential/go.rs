//! Go `golang.org/x/time/rate` (Debian's golang-golang-x-time-dev), driven by
//! tests/differential/go/driver.go at explicit instants (`AllowN`, `ReserveN`, `TokensAt` take
//! the time as an argument, so no clock is faked): every decision, every Reserve delay to the
//! nanosecond and the bucket's float64 tokens after each admission, bit for bit; with unit
//! requests, then with random costs (`AllowN(t, n)`, `ReserveN(t, n)`, n up to the burst + 2).

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

/// How the limit is given: `rate.Every(every)`, or Traefik's `average` per `period`.
#[derive(Debug, Clone, Copy)]
enum Limit {
    Every(Nanos),
    Average { average: i64, period: Nanos },
}

/// One configuration: the limit, the burst, Allow or Reserve, and Traefik's maximum delay
/// (a Reserve waiting longer is cancelled and refused).
#[derive(Debug, Clone, Copy)]
struct Config {
    limit: Limit,
    burst: i64,
    reserve: bool,
    max_delay: Option<Nanos>,
}

impl Config {
    /// The driver's config line.
    fn line(&self) -> String {
        let limit = match self.limit {
            Limit::Every(e) => format!("every:{e}"),
            Limit::Average { average, period } => format!("avg:{average}:{period}"),
        };
        let mode = if self.reserve { "reserve" } else { "allow" };
        match self.max_delay {
            Some(m) => format!("config {limit} {} {mode} {m}", self.burst),
            None => format!("config {limit} {} {mode}", self.burst),
        }
    }

    /// The interval between tokens, for the trace's spacing.
    fn every(&self) -> Nanos {
        match self.limit {
            Limit::Every(e) => e,
            Limit::Average { average, period } => period / average as Nanos,
        }
    }

    /// The profile's parameters, as a scenario would write them.
    fn params(&self) -> Vec<(&'static str, ParamValue)> {
        let mut given = match self.limit {
            Limit::Every(e) => vec![("every", ParamValue::Str(format!("{e}ns")))],
            Limit::Average { average, period } => vec![
                ("average", ParamValue::Int(average)),
                ("period", ParamValue::Str(format!("{period}ns"))),
            ],
        };
        given.push(("burst", ParamValue::Int(self.burst)));
        match self.max_delay {
            Some(m) => given.push(("max_delay", ParamValue::Str(format!("{m}ns")))),
            None => given.push(("reserve", ParamValue::Bool(self.reserve))),
        }
        given
    }
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
            limit: Limit::Every(everies[seed as usize % everies.len()]),
            burst: bursts[(seed / 2) as usize % bursts.len()],
            reserve: seed % 2 == 1,
            max_delay: None,
        })
        .collect()
}

/// Traefik's configurations: `average` per `period` (rates whose float quotient is inexact:
/// 3 per 1 s, 7 per 10 s, 100 per 1 min, 5 per 1 s), bursts from 1, and maximum delays from 0
/// (refuse anything that would wait) to several intervals (some reservations kept, later ones
/// cancelled, each cancel restoring its token).
fn traefik_configs() -> Vec<Config> {
    let limits = [
        (3, NANOS_PER_SEC),
        (7, 10 * NANOS_PER_SEC),
        (100, 60 * NANOS_PER_SEC),
        (5, NANOS_PER_SEC),
    ];
    let bursts = [1, 3, 10];
    (0..TRACES)
        .map(|seed| {
            let (average, period) = limits[seed as usize % limits.len()];
            let every = period / average as Nanos;
            let max_delay = [0, every / 2, every, 3 * every + 1][(seed / 3) as usize % 4];
            Config {
                limit: Limit::Average { average, period },
                burst: bursts[seed as usize % bursts.len()],
                reserve: true,
                max_delay: Some(max_delay),
            }
        })
        .collect()
}

/// What Go said of one hit.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Go {
    Allowed(u64),
    Refused,
    Reserved {
        delay: Nanos,
        tokens: u64,
    },
    Cancelled(u64),
    /// `ReserveN` not OK: n above the burst.
    NotOk,
}

fn parse(line: &str) -> Go {
    let f: Vec<&str> = line.split_whitespace().collect();
    let bits = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("`{line}`"));
    match f.as_slice() {
        ["A", t] => Go::Allowed(bits(t)),
        ["R", _] => Go::Refused,
        // The tokens are the untouched bucket's: the next hits' tokens show it was untouched.
        ["X", _] => Go::NotOk,
        ["C", t] => Go::Cancelled(bits(t)),
        ["D", d, t] => Go::Reserved {
            delay: d.parse().unwrap_or_else(|_| panic!("`{line}`")),
            tokens: bits(t),
        },
        _ => panic!("driver line `{line}`"),
    }
}

/// rlsim's answers: the profile decides each hit on its key's state, the tokens read after.
fn ours(config: Config, hits: &[Hit]) -> Vec<Go> {
    let Profile::GoXTimeRate(go) = configure(ProfileKind::GoXTimeRate, &config.params()) else {
        unreachable!("the go-x-time-rate profile")
    };
    let mut states = HashMap::new();
    hits.iter()
        .map(|h| {
            let s = states.entry(h.key).or_insert_with(|| go.new_state(h.at));
            let d = go.decide_n(s, h.at, h.cost);
            match d.outcome {
                Outcome::Reject { .. } if config.reserve && h.cost as i64 > config.burst => {
                    Go::NotOk
                }
                Outcome::Reject { .. } if config.max_delay.is_some() => {
                    Go::Cancelled(s.tokens().to_bits())
                }
                Outcome::Reject { .. } => Go::Refused,
                Outcome::Allow if !config.reserve => Go::Allowed(s.tokens().to_bits()),
                Outcome::Allow => Go::Reserved {
                    delay: 0,
                    tokens: s.tokens().to_bits(),
                },
                Outcome::Delay(delay) => Go::Reserved {
                    delay,
                    tokens: s.tokens().to_bits(),
                },
            }
        })
        .collect()
}

/// What a comparison went through.
#[derive(Debug, Default)]
struct Counts {
    decisions: usize,
    /// Refused by `AllowN`, or cancelled past the maximum delay.
    refused: usize,
    delayed: usize,
    /// Hits costing more than one.
    costly: usize,
    /// Hits costing more than the burst: refused, or a reservation not OK.
    beyond: usize,
}

/// Every hit of every configuration, rlsim against Go, each hit of cost 1 or, with `costs`,
/// half of them of a random cost up to the burst + 2. Instants as Unix nanoseconds from
/// 2026-01-01 (virtual time 0 there).
fn compare(driver: Command, configs: Vec<Config>, seed0: u64, costs: bool) -> Counts {
    let cases: Vec<(Config, Vec<Hit>)> = configs
        .into_iter()
        .enumerate()
        .map(|(seed, c)| {
            let window_ms = (c.every() / NANOS_PER_MILLI).max(1);
            let keys = 1 + (seed % 4) as u32 * 5;
            let seed = seed as u64 + seed0;
            let hits = trace(seed, window_ms, keys, HITS);
            let hits = if costs {
                with_costs(hits, seed, c.burst as Cost + 2)
            } else {
                hits
            };
            (c, hits)
        })
        .collect();
    let start = rlsim::time::DEFAULT_START;
    let traces: Vec<(String, Vec<Hit>)> = cases
        .iter()
        .map(|(c, hits)| {
            let absolute = hits
                .iter()
                .map(|h| Hit {
                    at: h.at + start,
                    ..*h
                })
                .collect();
            (c.line(), absolute)
        })
        .collect();
    let answers = run_driver(driver, &traces, 1);
    let mut counts = Counts::default();
    for ((config, hits), lines) in cases.iter().zip(&answers) {
        let theirs: Vec<Go> = lines.iter().map(|l| parse(l)).collect();
        let mine = ours(*config, hits);
        assert_eq!(mine.len(), theirs.len(), "{config:?}: answers");
        for (i, (m, t)) in mine.iter().zip(&theirs).enumerate() {
            assert_eq!(
                m, t,
                "{config:?}: hit #{i} at {} ns on key {}: rlsim {m:?}, Go {t:?}",
                hits[i].at, hits[i].key
            );
        }
        counts.decisions += mine.len();
        for (m, h) in mine.iter().zip(hits) {
            counts.costly += usize::from(h.cost > 1);
            if h.cost as i64 > config.burst {
                counts.beyond += 1;
            } else if matches!(m, Go::Refused | Go::Cancelled(_)) {
                counts.refused += 1;
            } else if matches!(m, Go::Reserved { delay, .. } if *delay > 0) {
                counts.delayed += 1;
            }
        }
    }
    counts
}

#[test]
fn go_x_time_rate_agrees_with_the_go_package_bit_for_bit() {
    let Some(driver) = go_driver() else { return };
    let c = compare(driver, configs(), 9000, false);
    // The traces reach both sides of the edge: some refused, some delayed.
    assert!(c.refused > 1000 && c.delayed > 1000, "{c:?}");
    eprintln!(
        "go-x-time-rate: {} decisions identical to Go's x/time/rate ({} refused, {} delayed)",
        c.decisions, c.refused, c.delayed
    );
}

/// The same configurations with costs: `AllowN(t, n)` and `ReserveN(t, n)`, n above the burst
/// included (never OK, taking nothing).
#[test]
fn go_x_time_rate_weighs_requests_as_allow_n_and_reserve_n() {
    let Some(driver) = go_driver() else { return };
    let c = compare(driver, configs(), 9000, true);
    assert!(
        c.refused > 1000 && c.delayed > 1000 && c.costly > 10_000 && c.beyond > 1000,
        "{c:?}"
    );
    eprintln!(
        "go-x-time-rate costs: {} decisions identical to Go's AllowN/ReserveN ({} costing more than 1, {} above the burst, {} refused, {} delayed)",
        c.decisions, c.costly, c.beyond, c.refused, c.delayed
    );
}

/// Traefik's rateLimit middleware over the same package: `average`/`period` as Traefik turns
/// them into a Limit, Reserve, and Cancel at the same instant when the delay is over
/// `max_delay`; the restored tokens bit for bit.
#[test]
fn traefik_reserve_and_cancel_agrees_with_the_go_package_bit_for_bit() {
    let Some(driver) = go_driver() else { return };
    let c = compare(driver, traefik_configs(), 19000, false);
    assert!(c.refused > 1000 && c.delayed > 1000, "{c:?}");
    eprintln!(
        "go-x-time-rate max_delay: {} decisions identical to Go's Reserve/CancelAt ({} cancelled, {} delayed)",
        c.decisions, c.refused, c.delayed
    );
}

/// Traefik's configurations with costs: `ReserveN(t, n)`, cancelled past the maximum delay
/// with its n tokens restored; n above the burst not OK.
#[test]
fn traefik_reserve_n_and_cancel_agrees_with_the_go_package_bit_for_bit() {
    let Some(driver) = go_driver() else { return };
    let c = compare(driver, traefik_configs(), 19000, true);
    assert!(
        c.refused > 1000 && c.delayed > 1000 && c.costly > 10_000 && c.beyond > 1000,
        "{c:?}"
    );
    eprintln!(
        "go-x-time-rate max_delay costs: {} decisions identical to Go's ReserveN/CancelAt ({} costing more than 1, {} above the burst, {} cancelled, {} delayed)",
        c.decisions, c.costly, c.beyond, c.refused, c.delayed
    );
}
