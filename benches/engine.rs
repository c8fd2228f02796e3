//! End-to-end simulation speed: traffic generation, event queue, decision and metrics, per
//! algorithm, in simulated requests per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rlsim::report::DecisionPart;
use rlsim::{Scenario, sim};
use std::path::Path;
use std::time::Duration;

/// The binary's allocator (`rlsim::allocator`), so benches time what `rlsim` runs.
#[global_allocator]
static ALLOCATOR: rlsim::allocator::Allocator = rlsim::allocator::ALLOCATOR;

/// 1000 Poisson users at 10/s each for 100 s: about 1 million requests over 1000 keys, about
/// 10% over a 9-per-second limit so every algorithm both admits and rejects.
const SCENARIO: &str = r#"
name = "bench"
seed = 1
duration = "100s"
[policy]
limit = 9
window = "1s"
[[traffic]]
name = "users"
kind = "poisson"
rate = "10/s"
users = 1000
"#;

fn simulate(c: &mut Criterion) {
    rlsim::allocator::prefer_huge_pages();
    let scenario = Scenario::parse(SCENARIO, Path::new("bench.toml")).expect("valid scenario");
    let offered = {
        let (r, _, _) =
            sim::run_one::<DecisionPart>(&scenario, &scenario.algorithms[0], None, false, None)
                .unwrap();
        r.offered
    };
    let mut group = c.benchmark_group("simulate");
    group.throughput(Throughput::Elements(offered));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for spec in &scenario.algorithms {
        group.bench_function(&spec.name, |b| {
            b.iter(|| sim::run_one::<DecisionPart>(&scenario, spec, None, false, None).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, simulate);
criterion_main!(benches);
