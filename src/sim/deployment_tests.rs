//! Hand-computed runs of each store mode, the balancers, outages, and the atomic store against
//! the single node.

use super::*;
use crate::algorithms::{FixedWindow, KeyedLimiter, Params, SlidingWindowLog, TokenBucket};
use crate::scenario::deployment::Outage;
use proptest::prelude::*;

const MS: Nanos = 1_000_000;
const US: Nanos = 1_000;
const S: Nanos = 1_000_000_000;

fn dep(replicas: u32, store: Store, rtt: Nanos) -> Deployment {
    Deployment {
        replicas,
        balancer: Balancer::RoundRobin,
        store,
        rtt: Rtt::Constant(rtt),
        clock_offset: 0,
        outages: Vec::new(),
    }
}

fn fixed(limit: u64, window: Nanos) -> FixedWindow {
    FixedWindow::new(Params {
        limit,
        window,
        burst: limit,
    })
    .unwrap()
}

fn arrival(time: Nanos, key: KeyId) -> Arrival {
    Arrival::new(time, key, key, 0)
}

/// Decides `times` (all of key 0) and returns which were admitted.
fn admitted<L: Limiter>(gate: &mut Deployed<'_, L>, times: &[Nanos]) -> Vec<bool> {
    times
        .iter()
        .map(|&t| gate.decide(&arrival(t, 0)).0.outcome.is_admitted())
        .collect()
}

const RACY: Store = Store::Racy;
const ATOMIC: Store = Store::Atomic;

/// The example: 2 replicas, racy store, RTT 1 ms, 3 requests of one key 0.1 ms apart,
/// limit 1. Each reads the store half a round trip after it is sent (0.5, 0.6, 0.7 ms), and
/// the first write lands only at 1.5 ms (reply back at 1 ms, write half a round trip later):
/// all three read an empty counter and are admitted. The writes at 1.6 and 1.7 ms overwrite a
/// newer state than they read: two lost updates, and the store holds a count of 1, not 3, so a
/// 4th request at 2 ms (read at 2.5 ms) is refused only because the limit is 1.
#[test]
fn racy_store_admits_concurrent_requests_of_one_key() {
    let d = dep(2, RACY, MS);
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    assert_eq!(
        admitted(&mut gate, &[0, 100 * US, 200 * US, 2 * MS]),
        [true, true, true, false]
    );
    assert_eq!(gate.tally.lost_updates, 2);
    // A read and a write per request; each waits for both replies.
    assert_eq!(gate.tally.store_ops, 8);
    assert_eq!(
        gate.tally.finish(2, ["", "", ""], [0, 0], S).latency_max_ns,
        2 * MS
    );

    // Limit 2: the three racing requests each wrote "count 1"; the 4th reads 1 and is the
    // store's second: 4 admitted where one node admits 2.
    let mut gate = Deployed::new(fixed(2, S), 2, S, &d, 1);
    assert_eq!(
        admitted(&mut gate, &[0, 100 * US, 200 * US, 2 * MS]),
        [true; 4]
    );
}

/// The same requests through an atomic script: the store counts each, only the first passes.
#[test]
fn atomic_store_counts_every_request() {
    let d = dep(2, ATOMIC, MS);
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    assert_eq!(
        admitted(&mut gate, &[0, 100 * US, 200 * US, 2 * MS]),
        [true, false, false, false]
    );
    let report = gate.tally.finish(2, ["", "", ""], [0, 0], S);
    assert_eq!((report.store_ops, report.latency_p50_ns), (4, MS));
    assert_eq!(report.lost_updates, 0);
}

/// Local stores: each replica limits alone, so round robin over 2 replicas admits the limit
/// twice; `divided` gives each replica half.
#[test]
fn local_replicas_each_admit_the_limit() {
    let d = dep(2, Store::Local { divided: false }, 0);
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    assert_eq!(
        admitted(&mut gate, &[0, MS, 2 * MS, 3 * MS]),
        [true, true, false, false]
    );
    assert_eq!(gate.tally.store_ops, 0);
    let divided = dep(4, Store::Local { divided: true }, 0);
    let p = Params {
        limit: 10,
        window: S,
        burst: 6,
    };
    assert_eq!(
        divided.replica_params(p),
        Params {
            limit: 2,
            window: S,
            burst: 1
        }
    );
}

/// Replica 1's clock runs 10 ms ahead: at 996 ms it is already in the next fixed window and
/// admits; replica 0's request at 997 ms is decided at the key's latest time (1006 ms) and
/// refused there, not in a window the store has left.
#[test]
fn clock_offsets_move_requests_into_other_windows() {
    let mut d = dep(2, ATOMIC, 0);
    d.clock_offset = 10 * MS;
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    let times = [995 * MS, 996 * MS, 997 * MS];
    assert_eq!(admitted(&mut gate, &times), [true, true, false]);
    d.clock_offset = 0;
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    assert_eq!(admitted(&mut gate, &times), [true, false, false]);
}

#[test]
fn balancers_spread_requests() {
    let mut d = dep(3, Store::Local { divided: false }, 0);
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    let rr: Vec<usize> = (0..7).map(|i| gate.replica(&arrival(i, 0))).collect();
    assert_eq!(rr, [0, 1, 2, 0, 1, 2, 0]);

    d.replicas = 4;
    d.balancer = Balancer::KeyHash;
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    let mut counts = [0u32; 4];
    for key in 0..4000 {
        let r = gate.replica(&arrival(key as Nanos, key));
        // Every request of a key reaches the same replica.
        assert_eq!(gate.replica(&arrival(0, key)), r);
        counts[r] += 1;
    }
    assert!(
        counts.iter().all(|&c| (900..=1100).contains(&c)),
        "{counts:?}"
    );

    d.balancer = Balancer::ClientHash;
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 1);
    let sticky = Arrival::new(0, 1, 77, 0);
    let r = gate.replica(&sticky);
    assert!((0..50).all(|k| gate.replica(&Arrival::new(0, k, 77, 0)) == r));

    d.balancer = Balancer::Random;
    let mut counts = [0u32; 4];
    let mut gate = Deployed::new(fixed(1, S), 1, S, &d, 7);
    for _ in 0..4000 {
        counts[gate.replica(&arrival(0, 0))] += 1;
    }
    assert!(
        counts.iter().all(|&c| (900..=1100).contains(&c)),
        "{counts:?}"
    );
    // Seeded: the same seed picks the same replicas.
    let picks = |seed| {
        let mut g = Deployed::new(fixed(1, S), 1, S, &d, seed);
        (0..20)
            .map(|_| g.replica(&arrival(0, 0)))
            .collect::<Vec<_>>()
    };
    assert_eq!(picks(7), picks(7));
    assert_ne!(picks(7), picks(8));
}

/// One request per ms for 30 ms, limit 5 per second, the store down in [10, 20) ms.
#[test]
fn outages_fail_open_or_closed() {
    let times: Vec<Nanos> = (0..30).map(|i| i * MS).collect();
    for (mode, admits, open, closed) in [(FailMode::Open, 15, 10, 0), (FailMode::Closed, 5, 0, 10)]
    {
        let mut d = dep(2, ATOMIC, 0);
        d.outages = vec![Outage {
            from: 10 * MS,
            to: 20 * MS,
            mode,
        }];
        let mut gate = Deployed::new(fixed(5, S), 5, S, &d, 1);
        let got = admitted(&mut gate, &times);
        assert_eq!(got.iter().filter(|&&a| a).count(), admits, "{mode:?}");
        // Before: the first 5 of 10; during: all or none; after: the count is 5 already.
        assert!(got[..5].iter().all(|&a| a) && !got[5..10].iter().any(|&a| a));
        assert!(!got[20..].iter().any(|&a| a));
        let report = gate.tally.finish(2, ["", "", ""], [0, 0], S);
        assert_eq!(
            (
                report.outage_requests,
                report.outage_admitted,
                report.outage_rejected
            ),
            (10, open, closed)
        );
        // Only the requests that reached the store count as its operations.
        assert_eq!(report.store_ops, 20);
    }
    // Failing closed, the refusal says when the store is back.
    let mut d = dep(1, ATOMIC, 0);
    d.outages = vec![Outage {
        from: 10 * MS,
        to: 20 * MS,
        mode: FailMode::Closed,
    }];
    let mut gate = Deployed::new(fixed(5, S), 5, S, &d, 1);
    let (decision, _) = gate.decide(&arrival(12 * MS, 0));
    assert_eq!(
        decision.outcome,
        Outcome::Reject {
            retry_after: 8 * MS
        }
    );
}

/// `INCR` then `EXPIRE`, limit 2 per second. When the replica always dies between the two,
/// the key never expires: its counter keeps growing and every request after the 2nd is
/// refused, seconds later too. Otherwise the window restarts once the expiry passes.
#[test]
fn incr_then_expire_leaves_a_key_without_expiry() {
    let times = [0, 500 * MS, 1500 * MS, 2 * S, 5 * S];
    let stuck = Deployment {
        store: Store::IncrThenExpire { die_chance: 1.0 },
        ..dep(1, ATOMIC, 2 * MS)
    };
    let mut gate = Deployed::new(fixed(2, S), 2, S, &stuck, 1);
    assert_eq!(
        admitted(&mut gate, &times),
        [true, true, false, false, false]
    );
    gate.evict_idle(10 * S);
    let report = gate.tally.finish(1, ["", "", ""], [0, 0], S);
    assert_eq!(report.keys_without_expiry, 1);
    assert_eq!(report.rejected_on_keys_without_expiry, 3);
    // The key is never evicted: the leak.
    assert_eq!(gate.memory().live_keys, 1);
    // INCR only: the EXPIRE was never sent.
    assert_eq!(report.store_ops, 5);

    let healthy = Deployment {
        store: Store::IncrThenExpire { die_chance: 0.0 },
        ..dep(1, ATOMIC, 2 * MS)
    };
    let mut gate = Deployed::new(fixed(2, S), 2, S, &healthy, 1);
    // INCR is served at t + 1 ms; EXPIRE, sent when its reply is back (t + 2 ms), lands at
    // t + 3 ms: the key expires at 1.003 s. At 1.5 s the counter starts again (expiring at
    // 2.503 s), so 2 s is its second; 5 s starts a third window.
    assert_eq!(admitted(&mut gate, &times), [true, true, true, true, true]);
    let report = gate.tally.finish(1, ["", "", ""], [0, 0], S);
    assert_eq!((report.keys_without_expiry, report.store_ops), (0, 8));
    // A first request waits for INCR and EXPIRE: two round trips.
    assert_eq!(report.latency_max_ns, 4 * MS);
    gate.evict_idle(10 * S);
    assert_eq!(gate.memory().live_keys, 0);
}

/// Cached: 2 replicas (round robin), limit 10 per second, one request per ms for a second.
/// Replica 0 sees the even ms, replica 1 the odd ones; each decides on its own copy and learns
/// the other's admissions only at a sync.
#[test]
fn cached_over_admission_grows_with_the_sync_period() {
    let times: Vec<Nanos> = (0..1000).map(|i| i * MS).collect();
    let run = |every: Nanos| {
        let d = dep(2, Store::Cached { sync_every: every }, 0);
        let mut gate = Deployed::new(fixed(10, S), 10, S, &d, 1);
        let n = admitted(&mut gate, &times).iter().filter(|&&a| a).count();
        (n, gate.tally.syncs)
    };
    // Every 2 ms: each period both replicas admit one on the same count; the store reaches
    // 10 after 5 periods, exactly the limit.
    assert_eq!(run(2 * MS).0, 10);
    // Every 6 ms: 3 each in the first period (store 6), 3 each in the second on a copy of 6
    // (12 admitted; the store caps its count at 10), then none.
    assert_eq!(run(6 * MS).0, 12);
    // Every 100 ms: each replica admits its own 10 before the first sync.
    assert_eq!(run(100 * MS).0, 20);
    // Syncs run only while replicas hold copies: the idle rest of the second is skipped.
    assert!(run(100 * MS).1 < 10, "{:?}", run(100 * MS));
}

/// The atomic store decides exactly as one node: `t` is passed as the script's time and the
/// store serves operations in the order they were sent, whatever the round trip.
fn atomic_equals_single_node<L: Limiter>(
    make: impl Fn() -> L,
    trace: &[(Nanos, KeyId)],
    replicas: u32,
    rtt: Rtt,
) -> Result<(), TestCaseError> {
    let d = Deployment {
        replicas,
        balancer: Balancer::Random,
        store: ATOMIC,
        rtt,
        clock_offset: 0,
        outages: Vec::new(),
    };
    let mut gate = Deployed::new(make(), 0, S, &d, 3);
    let mut single = KeyedLimiter::new(make());
    for (i, &(t, key)) in trace.iter().enumerate() {
        if i % 17 == 0 {
            gate.evict_idle(t);
            single.evict_idle(t);
        }
        let a = arrival(t, key);
        prop_assert_eq!(gate.decide(&a).0, single.decide(key, t));
    }
    Ok(())
}

proptest! {
    #[test]
    fn the_atomic_store_is_the_single_node(
        gaps in proptest::collection::vec((0u64..3_000_000, 0u32..4), 1..150),
        replicas in 1u32..8,
        rtt_min in 0u64..5_000_000,
        spread in 0u64..5_000_000,
        limit in 1u64..6,
    ) {
        let mut t = 0;
        let trace: Vec<(Nanos, KeyId)> = gaps.iter().map(|&(g, k)| { t += g; (t, k) }).collect();
        let params = Params { limit, window: 20 * MS, burst: limit };
        for rtt in [Rtt::Constant(rtt_min), Rtt::Uniform { min: rtt_min, max: rtt_min + spread }] {
            atomic_equals_single_node(|| FixedWindow::new(params).unwrap(), &trace, replicas, rtt)?;
            atomic_equals_single_node(|| TokenBucket::new(params).unwrap(), &trace, replicas, rtt)?;
            atomic_equals_single_node(|| SlidingWindowLog::new(params).unwrap(), &trace, replicas, rtt)?;
        }
    }
}

/// One replica with a local store holds exactly the short form's keyspace: the same memory
/// figures (one model for every keyed table), at every sweep, at the end and at the peak.
fn one_local_replica_is_the_short_form<L: Limiter>(
    make: impl Fn() -> L,
    trace: &[(Nanos, KeyId)],
    whole_peak: bool,
) -> Result<(), TestCaseError> {
    let d = dep(1, Store::Local { divided: false }, 0);
    let mut gate = Deployed::new(make(), 0, S, &d, 3);
    let mut single = KeyedLimiter::new(make());
    for (i, &(t, key)) in trace.iter().enumerate() {
        if i % 23 == 0 {
            prop_assert_eq!(gate.memory(), single.memory(), "before the sweep at {}", i);
            gate.evict_idle(t);
            single.evict_idle(t);
            prop_assert_eq!(gate.memory(), single.memory(), "after the sweep at {}", i);
        }
        prop_assert_eq!(gate.decide(&arrival(t, key)).0, single.decide(key, t));
    }
    gate.note_memory();
    prop_assert_eq!(gate.end, single.memory());
    prop_assert_eq!(gate.memory(), single.memory());
    let peak = single.peak_memory();
    if whole_peak {
        prop_assert_eq!(gate.peak, peak);
    } else {
        // A log's Redis bytes can shrink between sweeps, which the deployment samples.
        prop_assert_eq!(
            (gate.peak.live_keys, gate.peak.state_bytes),
            (peak.live_keys, peak.state_bytes)
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn one_local_replica_reports_the_short_forms_memory(
        gaps in proptest::collection::vec((0u64..3_000_000, 0u32..400), 1..600),
        limit in 1u64..6,
    ) {
        let mut t = 0;
        let trace: Vec<(Nanos, KeyId)> = gaps.iter().map(|&(g, k)| { t += g; (t, k) }).collect();
        let params = Params { limit, window: 20 * MS, burst: limit };
        one_local_replica_is_the_short_form(|| FixedWindow::new(params).unwrap(), &trace, true)?;
        one_local_replica_is_the_short_form(|| TokenBucket::new(params).unwrap(), &trace, true)?;
        one_local_replica_is_the_short_form(|| SlidingWindowLog::new(params).unwrap(), &trace, false)?;
    }
}
