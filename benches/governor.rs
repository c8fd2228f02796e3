//! governor's keyed GCRA on its fake clock beside rlsim's GCRA, in the same run, so the ratio in
//! docs/performance.md is measured rather than remembered. Both sides see the same workload:
//! keys drawn beforehand by xorshift modulo K (`rlsim::bench::KeyChoice::Uniform`), the clock
//! advanced 100 µs per decision, 100 per 60 s with a burst of 100 (governor: one cell per 600 ms,
//! burst 100). Bare decisions only: no traffic generation, no metrics.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use rlsim::algorithms::{Gcra, KeyedLimiter, Params};
use rlsim::bench::KeyChoice;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

/// The binary's allocator (`rlsim::allocator`), so benches time what `rlsim` runs.
#[global_allocator]
static ALLOCATOR: rlsim::allocator::Allocator = rlsim::allocator::ALLOCATOR;

const BATCH: usize = 100_000;
const STEP_NS: u64 = 100_000;

fn keyed_gcra(c: &mut Criterion) {
    rlsim::allocator::prefer_huge_pages();
    let mut group = c.benchmark_group("keyed_gcra");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    for keys in [1u64, 1_000, 1_000_000] {
        let drawn = KeyChoice::Uniform.keys(keys, BATCH);
        group.bench_function(format!("governor/{keys}"), |b| {
            let clock = FakeRelativeClock::default();
            let quota = Quota::with_period(Duration::from_millis(600))
                .expect("non-zero period")
                .allow_burst(NonZeroU32::new(100).expect("non-zero"));
            let limiter = RateLimiter::hashmap_with_clock(quota, clock.clone());
            b.iter_batched(
                || (),
                |()| {
                    for &key in &drawn {
                        black_box(limiter.check_key(&u64::from(key)).is_ok());
                        clock.advance(Duration::from_nanos(STEP_NS));
                    }
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("rlsim/{keys}"), |b| {
            let gcra = Gcra::new(Params {
                limit: 100,
                window: 60_000_000_000,
                burst: 100,
            })
            .expect("valid parameters");
            let mut limiter = KeyedLimiter::new(gcra);
            let mut now = 0u64;
            b.iter_batched(
                || (),
                |()| {
                    for &key in &drawn {
                        black_box(limiter.decide(key, now));
                        now += STEP_NS;
                    }
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, keyed_gcra);
criterion_main!(benches);
