//! Decisions per second of each algorithm behind a [`KeyedLimiter`], on one pre-generated trace
//! of 100 000 requests over 1 000 keys, each key asking for about 3× its limit.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsim::algorithms::{AlgorithmKind, KeyId, KeyedLimiter, Limiter, LimiterVisitor, Params};
use rlsim::time::{NANOS_PER_SEC, Nanos};
use std::hint::black_box;
use std::time::Duration;

const REQUESTS: usize = 100_000;
const KEYS: KeyId = 1_000;
/// 10 per second per key, with a burst of 5 where the algorithm has one.
const PARAMS: Params = Params {
    limit: 10,
    window: NANOS_PER_SEC,
    burst: 5,
};
/// 3× the limit per key: 30 000 requests/s in all, so the trace spans about 3.3 windows and
/// every algorithm both admits and rejects (or delays) a good share.
const ARRIVALS_PER_SEC: u64 = 3 * PARAMS.limit * KEYS as u64;

/// Uniformly random keys at uniformly jittered arrival gaps (seeded: every run is the same).
fn trace() -> Vec<(KeyId, Nanos)> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5EED);
    let mean_gap = NANOS_PER_SEC / ARRIVALS_PER_SEC;
    let mut t = 0;
    (0..REQUESTS)
        .map(|_| {
            t += rng.random_range(0..=2 * mean_gap);
            (rng.random_range(0..KEYS), t)
        })
        .collect()
}

/// One pass over a trace with a fresh keyspace; returns how many requests were admitted.
/// Boxed once per pass, so the decision loop inside is monomorphized for the algorithm.
type Pass = Box<dyn FnMut(&[(KeyId, Nanos)]) -> usize>;

struct FreshKeyspace;

impl LimiterVisitor for FreshKeyspace {
    type Output = Pass;

    fn visit<L: Limiter + 'static>(self, limiter: L) -> Pass {
        let mut keyed = KeyedLimiter::new(limiter);
        Box::new(move |trace| {
            let mut admitted = 0;
            for &(key, now) in trace {
                admitted += usize::from(keyed.decide(key, now).outcome.is_admitted());
            }
            admitted
        })
    }
}

fn decide(c: &mut Criterion) {
    let trace = trace();
    let mut group = c.benchmark_group("decide");
    group.throughput(Throughput::Elements(REQUESTS as u64));
    for kind in AlgorithmKind::ALL {
        let fresh = || kind.visit(PARAMS, FreshKeyspace).expect("valid parameters");
        let mut once = fresh();
        eprintln!("{kind}: {} of {REQUESTS} admitted", once(&trace));
        group.bench_function(kind.name(), |b| {
            b.iter_batched(
                fresh,
                |mut pass| {
                    black_box(pass(black_box(&trace)));
                    pass // dropped outside the timed section
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = decide
}
criterion_main!(benches);
