//! End-to-end `rlsim run` speed beside governor's bare keyed GCRA, in one process, so the ratio
//! is measured on the same machine at the same moment (figures in docs/performance.md).
//!
//! `cargo run --release --example vs_governor -- SCENARIO.toml KEYS [REQUESTS]`: simulates the
//! scenario's first algorithm once (traffic, decisions, every metric; no output files), then
//! runs governor's `hashmap_with_clock(Quota::with_period(600 ms).allow_burst(100))` on its fake
//! clock: one `check_key` per request on xorshift-chosen keys modulo KEYS, the clock advanced
//! 100 µs per request, REQUESTS requests (default: as many as the scenario offered).
//!
//! governor runs twice, before and after rlsim: its table lands in fresh pages or in pages
//! rlsim has just freed, which changed its rate at 10^6 keys by up to a quarter from run to
//! run. The ratio is against the faster of the two.

use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use rlsim::report::DecisionPart;
use rlsim::{Scenario, sim};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::{Duration, Instant};

/// This thread's CPU time in seconds (Linux `schedstat`), so a machine busy with other work
/// slows neither side's figure; `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, Option<f64>) {
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    let out = f();
    let cpu = cpu.and_then(|c| Some(cpu_seconds()? - c));
    (out, wall.elapsed().as_secs_f64(), cpu)
}

/// governor's decisions per second of wall time and of CPU time.
fn governor_rate(keys: u64, requests: u64) -> (f64, Option<f64>) {
    let clock = FakeRelativeClock::default();
    let quota = Quota::with_period(Duration::from_millis(600))
        .expect("non-zero period")
        .allow_burst(NonZeroU32::new(100).expect("non-zero"));
    let limiter = RateLimiter::hashmap_with_clock(quota, clock.clone());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let ((), wall, cpu) = timed(|| {
        for _ in 0..requests {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            black_box(limiter.check_key(&(x % keys)).is_ok());
            clock.advance(Duration::from_micros(100));
        }
    });
    (requests as f64 / wall, cpu.map(|c| requests as f64 / c))
}

/// The binary's allocator, for both sides: governor's table gets the same huge pages as rlsim's,
/// so the ratio is not the allocator's.
#[global_allocator]
static ALLOCATOR: rlsim::allocator::Allocator = rlsim::allocator::ALLOCATOR;

/// The requests the scenario is expected to offer (governor's first run makes as many),
/// before rlsim has run it; 10^7 when a source cannot say (replayed traffic).
fn expected(scenario: &Scenario) -> u64 {
    let sum: Option<f64> = scenario.traffic.iter().map(|s| s.expected_requests()).sum();
    sum.map_or(10_000_000, |n| n.round() as u64)
}

fn main() {
    rlsim::allocator::prefer_huge_pages();
    let args: Vec<String> = std::env::args().collect();
    let [_, path, keys, rest @ ..] = args.as_slice() else {
        eprintln!("usage: vs_governor SCENARIO.toml KEYS [REQUESTS]");
        std::process::exit(2);
    };
    let keys: u64 = keys.parse().expect("KEYS is a number");
    let scenario = Scenario::load(Path::new(path)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let spec = &scenario.algorithms[0];
    let first_requests = rest.first().map_or_else(
        || expected(&scenario),
        |r| r.parse().expect("REQUESTS is a number"),
    );
    let before = governor_rate(keys, first_requests);
    let (report, wall, cpu) = timed(|| {
        sim::run_one::<DecisionPart>(&scenario, spec, None, false, None)
            .expect("the scenario runs")
            .0
    });
    let requests = rest
        .first()
        .map_or(report.offered, |r| r.parse().expect("REQUESTS is a number"));
    let after = governor_rate(keys, requests);
    let governor_wall = before.0.max(after.0);
    let governor_cpu = before.1.zip(after.1).map(|(b, a)| b.max(a));
    println!(
        "governor per CPU second: {:.2} M/s before rlsim ({first_requests} requests), {:.2} M/s after",
        before.1.unwrap_or(before.0) / 1e6,
        after.1.unwrap_or(after.0) / 1e6
    );
    let rlsim_wall = report.offered as f64 / wall;
    println!(
        "{}: {} requests; wall: rlsim end to end {:.2} M/s, governor ({keys} keys, {requests} requests) {:.2} M/s, ratio {:.2}",
        spec.name,
        report.offered,
        rlsim_wall / 1e6,
        governor_wall / 1e6,
        rlsim_wall / governor_wall
    );
    if let (Some(cpu), Some(governor_cpu)) = (cpu, governor_cpu) {
        let rlsim_cpu = report.offered as f64 / cpu;
        println!(
            "  per CPU second: rlsim {:.2} M/s ({cpu:.2} s), governor {:.2} M/s, ratio {:.2}",
            rlsim_cpu / 1e6,
            governor_cpu / 1e6,
            rlsim_cpu / governor_cpu
        );
    }
}
