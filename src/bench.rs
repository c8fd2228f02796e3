//! `rlsim bench`: how fast this machine decides and simulates, measured on purpose rather than
//! on whatever a scenario happened to send.
//!
//! - Decisions: every algorithm's bare [`KeyedLimiter::decide`] at 1, 10^3 and 10^6 keys, keys
//!   chosen uniformly or by Zipf (s = 1, a few hot keys), the clock advanced 100 µs per decision,
//!   policy 100 per 60 s with burst 100: the workload docs/performance.md compares with governor.
//! - End to end: `rlsim run` of one algorithm with every metric (traffic generation, event queue,
//!   decision, tallies), Poisson clients sending 10^4 requests/s in total, in simulated requests
//!   per second of wall time.
//!
//! Figures are wall-clock and vary with the machine's load; nothing here is deterministic, and
//! nothing deterministic depends on it.

use crate::algorithms::{AlgorithmKind, KeyedLimiter, Limiter, LimiterVisitor, Params};
use crate::error::Result;
use crate::scenario::Scenario;
use crate::sim;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};
use std::fmt::Write;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

/// Keyspace sizes measured.
pub const KEYS: [u64; 3] = [1, 1_000, 1_000_000];
/// Virtual time between two decisions.
const STEP_NS: u64 = 100_000;
const POLICY: Params = Params {
    limit: 100,
    window: 60_000_000_000,
    burst: 100,
};

/// How keys are chosen for the decision benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyChoice {
    Uniform,
    /// Zipf with exponent 1: key `k` (1-based) chosen with probability ∝ 1/k.
    Zipf,
}

impl KeyChoice {
    pub fn name(self) -> &'static str {
        match self {
            KeyChoice::Uniform => "uniform",
            KeyChoice::Zipf => "zipf",
        }
    }

    /// `n` keys below `keys`, from a fixed seed.
    pub fn keys(self, keys: u64, n: usize) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED);
        match self {
            KeyChoice::Uniform => {
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
                (0..n)
                    .map(|_| {
                        // xorshift, as the governor side of docs/performance.md.
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % keys) as u32
                    })
                    .collect()
            }
            KeyChoice::Zipf => {
                let zipf = Zipf::new(keys as f64, 1.0).expect("valid Zipf parameters");
                (0..n)
                    .map(|_| (zipf.sample(&mut rng) as u64 - 1).min(keys - 1) as u32)
                    .collect()
            }
        }
    }
}

/// One decision measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRate {
    pub algorithm: AlgorithmKind,
    pub keys: u64,
    pub choice: KeyChoice,
    pub decisions: u64,
    pub per_sec: f64,
}

/// Times one decision of `kind` per entry of `keys` (drawn beforehand as `choice` from a
/// keyspace of `keyspace`, so only the decisions are timed).
pub fn decisions(
    kind: AlgorithmKind,
    keys: &[u32],
    keyspace: u64,
    choice: KeyChoice,
) -> DecisionRate {
    struct Time<'a>(&'a [u32]);
    impl LimiterVisitor for Time<'_> {
        type Output = f64;
        fn visit<L: Limiter + 'static>(self, limiter: L) -> f64 {
            let mut keyed = KeyedLimiter::new(limiter);
            let started = Instant::now();
            let mut now = 0;
            for &key in self.0 {
                black_box(keyed.decide(key, now));
                now += STEP_NS;
            }
            started.elapsed().as_secs_f64()
        }
    }
    let elapsed = kind
        .visit(POLICY, Time(keys))
        .expect("the benchmark policy is valid");
    DecisionRate {
        algorithm: kind,
        keys: keyspace,
        choice,
        decisions: keys.len() as u64,
        per_sec: keys.len() as f64 / elapsed.max(1e-9),
    }
}

/// The scenario of the end-to-end measurement: `keys` Poisson clients (IPv6 addresses when
/// there are many) sending 10^4 requests/s in total for `requests / 10^4` seconds.
pub fn scenario_text(algorithm: AlgorithmKind, keys: u64, requests: u64) -> String {
    let seconds = requests.div_ceil(10_000).max(1);
    let (kind, rate) = if keys == 1 {
        ("constant", "10000/s".to_string())
    } else {
        ("poisson", format!("{}/{}s", 10_000, keys))
    };
    format!(
        "name = \"bench\"\nduration = \"{seconds}s\"\nalgorithms = [\"{}\"]\n\
         [policy]\nlimit = 100\nwindow = \"60s\"\nkey = \"user\"\n\
         [[traffic]]\nname = \"clients\"\nkind = \"{kind}\"\nrate = \"{rate}\"\nusers = {keys}\n\
         ipv6 = true\n",
        algorithm.name()
    )
}

/// End-to-end simulated requests per second of one algorithm at `keys` keys.
pub fn end_to_end(algorithm: AlgorithmKind, keys: u64, requests: u64) -> Result<(u64, f64)> {
    let text = scenario_text(algorithm, keys, requests);
    let scenario = Scenario::parse(&text, Path::new("bench.toml"))?;
    let started = Instant::now();
    let (report, _, _) = sim::run_one::<crate::report::DecisionPart>(
        &scenario,
        &scenario.algorithms[0],
        None,
        false,
        None,
    )?;
    let elapsed = started.elapsed().as_secs_f64();
    Ok((report.offered, report.offered as f64 / elapsed.max(1e-9)))
}

/// Every measurement of one `rlsim bench` (what `--format json` prints).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BenchReport {
    /// Decisions (and simulated requests) per measurement.
    pub requests: u64,
    /// Bare decisions: per algorithm, per key choice, per keyspace.
    pub decisions: Vec<DecisionRow>,
    /// End to end: per algorithm, per keyspace.
    pub end_to_end: Vec<EndToEndRow>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DecisionRow {
    pub algorithm: &'static str,
    /// `uniform` or `zipf`.
    pub choice: &'static str,
    pub keys: u64,
    pub decisions: u64,
    pub decisions_per_sec: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EndToEndRow {
    pub algorithm: &'static str,
    pub keys: u64,
    pub requests: u64,
    pub simulated_requests_per_sec: f64,
}

/// Runs every measurement with `n` decisions (and requests) each.
pub fn measure(n: u64, algorithms: &[AlgorithmKind]) -> Result<BenchReport> {
    let mut drawn = Vec::new();
    for choice in [KeyChoice::Uniform, KeyChoice::Zipf] {
        for keys in KEYS {
            drawn.push((choice, keys, choice.keys(keys, n as usize)));
        }
    }
    let mut report = BenchReport {
        requests: n,
        decisions: Vec::new(),
        end_to_end: Vec::new(),
    };
    for &kind in algorithms {
        for (choice, keyspace, keys) in &drawn {
            let r = decisions(kind, keys, *keyspace, *choice);
            report.decisions.push(DecisionRow {
                algorithm: kind.name(),
                choice: choice.name(),
                keys: r.keys,
                decisions: r.decisions,
                decisions_per_sec: r.per_sec,
            });
        }
    }
    for &kind in algorithms {
        for keys in KEYS {
            let (requests, per_sec) = end_to_end(kind, keys, n)?;
            report.end_to_end.push(EndToEndRow {
                algorithm: kind.name(),
                keys,
                requests,
                simulated_requests_per_sec: per_sec,
            });
        }
    }
    Ok(report)
}

/// The two tables, for people: one row per algorithm, in the order measured.
pub fn text(report: &BenchReport) -> String {
    let n = report.requests;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "decisions/s: bare KeyedLimiter::decide, {n} decisions each, 100 per 60 s, burst 100, \
         clock +100 µs per decision"
    );
    let _ = write!(out, "{:<24}", "algorithm");
    for choice in [KeyChoice::Uniform, KeyChoice::Zipf] {
        for keys in KEYS {
            let _ = write!(
                out,
                "  {:>14}",
                format!("{}@{}", choice.name(), human(keys))
            );
        }
    }
    out.push('\n');
    let columns = 2 * KEYS.len();
    for row in report.decisions.chunks(columns) {
        let _ = write!(out, "{:<24}", row[0].algorithm);
        for r in row {
            let _ = write!(out, "  {:>14}", rate(r.decisions_per_sec));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "\nend to end: `rlsim run` with every metric, {n} requests at 10^4/s in total, simulated requests/s"
    );
    let _ = write!(out, "{:<24}", "algorithm");
    for keys in KEYS {
        let _ = write!(out, "  {:>14}", format!("{} keys", human(keys)));
    }
    out.push('\n');
    for row in report.end_to_end.chunks(KEYS.len()) {
        let _ = write!(out, "{:<24}", row[0].algorithm);
        for r in row {
            let _ = write!(out, "  {:>14}", rate(r.simulated_requests_per_sec));
        }
        out.push('\n');
    }
    out
}

/// Runs every measurement with `n` decisions (and requests) each and returns the table.
pub fn run(n: u64, algorithms: &[AlgorithmKind]) -> Result<String> {
    measure(n, algorithms).map(|r| text(&r))
}

/// `1`, `10^3`, `10^6`: the key counts as the docs write them.
fn human(n: u64) -> String {
    if n >= 1_000 && 10u64.pow(n.ilog10()) == n {
        format!("10^{}", n.ilog10())
    } else {
        n.to_string()
    }
}

fn rate(per_sec: f64) -> String {
    format!("{:.2} M", per_sec / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_choices_stay_in_the_keyspace_and_zipf_favours_key_zero() {
        let uniform = KeyChoice::Uniform.keys(1_000, 10_000);
        assert!(uniform.iter().all(|&k| k < 1_000));
        let zipf = KeyChoice::Zipf.keys(1_000, 10_000);
        assert!(zipf.iter().all(|&k| k < 1_000));
        let hot = zipf.iter().filter(|&&k| k == 0).count();
        let cold = zipf.iter().filter(|&&k| k == 999).count();
        // P(key 0) = 1/H(1000) ≈ 13%; P(key 999) ≈ 0.013%.
        assert!(hot > 1_000 && cold < 20, "hot {hot}, cold {cold}");
    }

    #[test]
    fn the_end_to_end_scenario_offers_the_requests_asked_for() {
        let (offered, _) = end_to_end(AlgorithmKind::Gcra, 1, 20_000).unwrap();
        assert_eq!(offered, 20_000, "constant 10^4/s for 2 s");
        let (offered, _) = end_to_end(AlgorithmKind::FixedWindow, 1_000, 20_000).unwrap();
        // Poisson: about 20 000; the exact count is fixed by the seed.
        assert!((19_000..21_000).contains(&offered), "{offered}");
    }
}
