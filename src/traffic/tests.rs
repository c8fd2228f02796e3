//! Exact schedules of the deterministic sources, and helpers for the other traffic tests.

use super::*;
use crate::policy::KeyField;

/// A source spec with `clients` clients, each with its own IP, for `[0, stop)`.
pub fn spec(arrivals: Arrivals, clients: u32, stop: Nanos) -> SourceSpec {
    SourceSpec {
        name: "s".into(),
        kind: TrafficKind::Constant,
        role: Role::Legit,
        arrivals,
        start: 0,
        stop,
        population: Population {
            clients,
            ip: IdGen::PerClient,
            user: IdGen::PerClient,
            api_key: IdGen::PerClient,
            endpoint: "/".into(),
            endpoints: Vec::new(),
            ipv6: false,
            rates: RateDist::Same,
            tiers: Vec::new(),
            network: Default::default(),
            methods: Vec::new(),
            costs: Default::default(),
            tokens: None,
            milli_chars_per_token: super::tokens::ENGLISH_MILLI_CHARS,
        },
        jitter_ppm: 0,
    }
}

/// Every arrival of a single source built from `spec`, keyed by IP.
pub fn arrivals(spec: &SourceSpec, seed: u64) -> (Vec<Arrival>, KeySpace) {
    let layout = KeyLayout::for_sources(std::slice::from_ref(spec), Keeps::Names);
    let mut keys = KeySpace::with_layout(layout);
    let key_spec = KeySpec::new(vec![KeyField::Ip]).unwrap();
    let mut sources =
        build_sources(std::slice::from_ref(spec), &key_spec, seed, &mut keys).unwrap();
    let mut out = Vec::new();
    while let Some(a) = sources[0].next_arrival(&mut keys).unwrap() {
        out.push(a);
    }
    (out, keys)
}

#[test]
fn constant_clients_are_phased_evenly() {
    // 3 clients at 1/s: the source sends every 1/3 s, cycling through the clients.
    let rate = crate::time::parse_rate("1/s").unwrap();
    let (a, keys) = arrivals(&spec(Arrivals::Constant(rate), 3, 2_000_000_000), 0);
    let times: Vec<Nanos> = a.iter().map(|a| a.time).collect();
    assert_eq!(
        times,
        [
            0,
            333_333_333,
            666_666_666,
            1_000_000_000,
            1_333_333_333,
            1_666_666_666
        ]
    );
    let ips: Vec<&str> = a.iter().map(|a| keys.name(a.key)).collect();
    assert_eq!(
        ips,
        [
            "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.1", "10.0.0.2", "10.0.0.3"
        ]
    );
}

#[test]
fn boundary_batches_straddle_the_boundary() {
    let arrivals_spec = Arrivals::Boundary {
        count: 3,
        at: 60_000_000_000,
        lead: 100_000_000,
        spread: 30_000_000,
        every: None,
    };
    let (a, _) = arrivals(&spec(arrivals_spec, 1, 120_000_000_000), 0);
    let times: Vec<Nanos> = a.iter().map(|a| a.time).collect();
    // Each batch of 3 spread over 30 ms: offsets 0, 10 ms, 20 ms.
    assert_eq!(
        times,
        [
            59_900_000_000,
            59_910_000_000,
            59_920_000_000,
            60_000_000_000,
            60_010_000_000,
            60_020_000_000
        ]
    );
}

#[test]
fn bursts_repeat_until_stop() {
    let bursts = Arrivals::Bursts {
        count: 2,
        every: 1_000_000_000,
        spread: 0,
    };
    let (a, _) = arrivals(&spec(bursts, 2, 2_500_000_000), 0);
    let times: Vec<Nanos> = a.iter().map(|a| a.time).collect();
    // 2 clients × 2 requests at 0, 1 s and 2 s.
    let sec = crate::time::NANOS_PER_SEC;
    let expected: Vec<Nanos> = [0, sec, 2 * sec].iter().flat_map(|&t| [t; 4]).collect();
    assert_eq!(times, expected);
}

#[test]
fn poisson_mean_rate_and_seed_stability() {
    // 10 clients at 10/s for 1000 s: N ~ Poisson(100 000), standard deviation 316. Five
    // standard deviations (±1581) is a tolerance a correct generator fails with
    // probability below 1e-6, for any seed.
    let rate = crate::time::parse_rate("10/s").unwrap();
    let s = spec(
        Arrivals::Poisson(Intensity::Flat(rate)),
        10,
        1_000_000_000_000,
    );
    let (a, keys) = arrivals(&s, 42);
    assert!(
        (a.len() as i64 - 100_000).abs() < 1581,
        "{} arrivals",
        a.len()
    );
    assert!(a.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(keys.len(), 10);
    // The same seed gives the same stream; another seed another one.
    assert_eq!(arrivals(&s, 42).0, a);
    assert_ne!(arrivals(&s, 43).0, a);
}
