//! Guava's `RateLimiter` (Debian's libguava-java, 31.1), driven by
//! tests/differential/java/RlsimGuavaDriver.java with a fake stopwatch per key: every
//! decision, every wait to the microsecond and `storedPermits` after each call, bit for bit,
//! for `guava-bursty` and `guava-warmup` under `tryAcquire()`, `tryAcquire(timeout)` and
//! `acquire()`; with one permit per request, then with random permits (`tryAcquire(permits,
//! timeout, unit)`, `acquire(permits)`, up to `maxPermits` + 2).

use super::*;
use std::collections::HashMap;
use std::path::PathBuf;

/// Where Debian's libguava-java puts the jar.
const GUAVA_JAR: &str = "/usr/share/java/guava.jar";

/// The driver, compiled once into the target directory, if a JDK and the jar are installed.
fn java_driver() -> Option<Command> {
    let runs = |tool: &str| {
        Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let has = runs("javac") && runs("java") && Path::new(GUAVA_JAR).is_file();
    if !require_external(
        has,
        "a JDK and Guava",
        "apt-get install default-jdk-headless libguava-java",
    ) {
        return None;
    }
    let classes = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guava-driver");
    std::fs::create_dir_all(&classes).unwrap();
    let build = Command::new("javac")
        .arg("-cp")
        .arg(GUAVA_JAR)
        .arg("-d")
        .arg(&classes)
        .arg(driver_dir("java").join("RlsimGuavaDriver.java"))
        .output()
        .expect("javac runs");
    assert!(
        build.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    let mut cmd = Command::new("java");
    cmd.arg("-cp")
        .arg(format!("{}:{GUAVA_JAR}", classes.display()))
        .arg("com.google.common.util.concurrent.RlsimGuavaDriver");
    Some(cmd)
}

/// How a request asks: `tryAcquire(1, timeout)` (µs) or `acquire()`.
#[derive(Debug, Clone, Copy)]
enum Ask {
    Try(u64),
    Acquire,
}

#[derive(Debug, Clone, Copy)]
struct Config {
    /// `None`: bursty; else the warm-up period in µs.
    warmup_micros: Option<u64>,
    pps: f64,
    ask: Ask,
}

/// Rates whose interval is and is not a whole number of µs (3/s and 7.5/s are not), under
/// 1/s too; warm-ups shorter and longer than a second; every way of asking.
fn configs() -> Vec<Config> {
    let rates = [2.0, 3.0, 0.5, 10.0, 7.5];
    let asks = [Ask::Try(0), Ask::Try(250_000), Ask::Acquire];
    (0..2 * TRACES)
        .map(|seed| Config {
            warmup_micros: (seed % 2 == 1)
                .then(|| [4_000_000, 700_000, 10_000_001][seed as usize / 2 % 3]),
            pps: rates[seed as usize % rates.len()],
            ask: asks[(seed / 3) as usize % asks.len()],
        })
        .collect()
}

/// One answer: admitted with its wait (µs) or refused, and `storedPermits`' bits after.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Guava {
    Admitted { sleep: u64, stored: u64 },
    Refused { stored: u64 },
}

fn parse(line: &str) -> Guava {
    let f: Vec<&str> = line.split_whitespace().collect();
    let bits = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("`{line}`"));
    match f.as_slice() {
        ["A", sleep, stored] => Guava::Admitted {
            sleep: sleep.parse().unwrap_or_else(|_| panic!("`{line}`")),
            stored: bits(stored),
        },
        ["R", stored] => Guava::Refused {
            stored: bits(stored),
        },
        _ => panic!("driver line `{line}`"),
    }
}

/// rlsim's answers for one trace: the profile per key, `stored` read after each decision.
fn ours(c: Config, hits: &[Hit]) -> Vec<Guava> {
    let mut given = vec![("permitsPerSecond", ParamValue::Float(c.pps))];
    match c.ask {
        Ask::Try(t) => given.push(("timeout", ParamValue::Str(format!("{t}us")))),
        Ask::Acquire => given.push(("acquire", ParamValue::Bool(true))),
    }
    let kind = match c.warmup_micros {
        None => ProfileKind::GuavaBursty,
        Some(w) => {
            given.push(("warmupPeriod", ParamValue::Str(format!("{w}us"))));
            ProfileKind::GuavaWarmup
        }
    };
    let answer = |d: Decision, stored: f64| match d.outcome {
        Outcome::Reject { .. } => Guava::Refused {
            stored: stored.to_bits(),
        },
        Outcome::Allow => Guava::Admitted {
            sleep: 0,
            stored: stored.to_bits(),
        },
        Outcome::Delay(ns) => {
            assert_eq!(ns % 1000, 0, "Guava waits whole µs");
            Guava::Admitted {
                sleep: ns / 1000,
                stored: stored.to_bits(),
            }
        }
    };
    macro_rules! run {
        ($limiter:expr) => {{
            let mut states = HashMap::new();
            hits.iter()
                .map(|h| {
                    let s = states
                        .entry(h.key)
                        .or_insert_with(|| $limiter.new_state(h.at));
                    let d = $limiter.decide_n(s, h.at, h.cost);
                    answer(d, s.stored_permits())
                })
                .collect()
        }};
    }
    match configure(kind, &given) {
        Profile::GuavaBursty(g) => run!(g),
        Profile::GuavaWarmup(g) => run!(g),
        _ => unreachable!("a Guava profile"),
    }
}

/// `maxPermits` (bursty: one second of permits; warming up: `warmupPeriod / stableInterval`),
/// rounded up: the most a limiter stores.
fn max_permits(c: Config) -> Cost {
    let seconds = c.warmup_micros.unwrap_or(1_000_000) as f64 / 1e6;
    (c.pps * seconds).ceil() as Cost
}

/// What a comparison went through.
#[derive(Debug, Default)]
struct Counts {
    decisions: usize,
    refused: usize,
    waited: usize,
    /// Hits of more than one permit.
    costly: usize,
    /// Hits of more permits than the limiter stores, admitted (at once, or after the debt
    /// before them).
    beyond_admitted: usize,
}

/// Every hit of every configuration, rlsim against Guava, one permit each or, with `costs`,
/// half of them random up to `maxPermits` + 2.
fn compare(driver: Command, costs: bool) -> Counts {
    let cases: Vec<(Config, Vec<Hit>)> = configs()
        .into_iter()
        .enumerate()
        .map(|(seed, c)| {
            let interval_ms = ((1000.0 / c.pps) as u64).max(1);
            let keys = 1 + (seed % 4) as u32 * 5;
            let seed = seed as u64 + 11_000;
            let hits = trace(seed, interval_ms, keys, HITS);
            let hits = if costs {
                with_costs(hits, seed, max_permits(c) + 2)
            } else {
                hits
            };
            (c, hits)
        })
        .collect();
    let traces: Vec<(String, Vec<Hit>)> = cases
        .iter()
        .map(|(c, hits)| {
            let kind = if c.warmup_micros.is_some() {
                "warmup"
            } else {
                "bursty"
            };
            let ask = match c.ask {
                Ask::Try(t) => t.to_string(),
                Ask::Acquire => "acquire".into(),
            };
            let config = format!(
                "config {kind} {:?} {} {ask}",
                c.pps,
                c.warmup_micros.unwrap_or(0)
            );
            (config, hits.clone())
        })
        .collect();
    let answers = run_driver(driver, &traces, 1);
    let mut counts = Counts::default();
    for ((config, hits), lines) in cases.iter().zip(&answers) {
        let theirs: Vec<Guava> = lines.iter().map(|l| parse(l)).collect();
        let mine = ours(*config, hits);
        for (i, (m, t)) in mine.iter().zip(&theirs).enumerate() {
            assert_eq!(
                m, t,
                "{config:?}: hit #{i} at {} ns on key {} of cost {}: rlsim {m:?}, Guava {t:?}",
                hits[i].at, hits[i].key, hits[i].cost
            );
        }
        counts.decisions += mine.len();
        for (m, h) in mine.iter().zip(hits) {
            counts.costly += usize::from(h.cost > 1);
            match m {
                Guava::Refused { .. } => counts.refused += 1,
                Guava::Admitted { sleep, .. } => {
                    counts.waited += usize::from(*sleep > 0);
                    counts.beyond_admitted += usize::from(h.cost > max_permits(*config));
                }
            }
        }
    }
    // Both edges are reached: refusals (tryAcquire) and waits (timeouts, acquire).
    assert!(counts.refused > 1000 && counts.waited > 1000, "{counts:?}");
    counts
}

#[test]
fn guava_profiles_agree_with_the_guava_jar_bit_for_bit() {
    let Some(driver) = java_driver() else { return };
    let c = compare(driver, false);
    eprintln!(
        "guava-bursty, guava-warmup: {} decisions over {} traces identical to Guava ({} refused, {} waited)",
        c.decisions,
        2 * TRACES,
        c.refused,
        c.waited
    );
}

/// The same configurations with permits: `tryAcquire(permits, timeout, MICROSECONDS)` and
/// `acquire(permits)`, more permits than the limiter stores included (admitted, paid by the
/// next request).
#[test]
fn guava_profiles_weigh_permits_as_the_guava_jar_does() {
    let Some(driver) = java_driver() else { return };
    let c = compare(driver, true);
    assert!(c.costly > 30_000 && c.beyond_admitted > 1000, "{c:?}");
    eprintln!(
        "guava-bursty, guava-warmup costs: {} decisions identical to Guava ({} of several permits, {} above maxPermits admitted, {} refused, {} waited)",
        c.decisions, c.costly, c.beyond_admitted, c.refused, c.waited
    );
}
