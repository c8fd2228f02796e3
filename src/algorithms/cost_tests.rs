//! Requests that weigh more than one: every exact algorithm's costs, by hand-computed cases and
//! by properties over random traces of random costs (a request of cost `c` is `c` unit requests
//! at one instant, all or none; what it advertises is exact), and GCRA against governor's
//! `check_n`.

use super::*;
use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn params(limit: u64, window: Nanos, burst: u64) -> Params {
    Params {
        limit,
        window,
        burst,
    }
}

/// The most a request of `kind` under `p` may cost and ever be admitted.
fn capacity(kind: AlgorithmKind, p: Params) -> u64 {
    if kind.uses_burst() { p.burst } else { p.limit }
}

fn outcomes<L: Limiter>(l: &L, requests: &[(Nanos, Cost)]) -> Vec<Outcome> {
    let mut s = l.new_state(requests[0].0);
    requests
        .iter()
        .map(|&(t, c)| l.decide_n(&mut s, t, c).outcome)
        .collect()
}

#[test]
fn fixed_window_counts_cost_and_refuses_what_does_not_fit() {
    // 10 per second: 4 + 5 fit, 2 more do not (9 + 2 > 10), 1 does; the next window is new.
    let l = FixedWindow::new(params(10, S, 1)).unwrap();
    let requests = [(0, 4), (100 * MS, 5), (200 * MS, 2), (300 * MS, 1), (S, 10)];
    assert_eq!(
        outcomes(&l, &requests),
        [
            Outcome::Allow,
            Outcome::Allow,
            Outcome::Reject {
                retry_after: 800 * MS
            },
            Outcome::Allow,
            Outcome::Allow,
        ]
    );
    let mut s = l.new_state(0);
    assert_eq!(l.decide_n(&mut s, 0, 7).remaining, 3);
    // Above the limit: refused in any state, consuming nothing.
    let d = l.decide_n(&mut s, 0, 11);
    assert_eq!(d.outcome, Outcome::Reject { retry_after: S });
    assert_eq!(s.count, 7);
}

#[test]
fn sliding_window_log_frees_room_as_entries_leave() {
    // 5 per second: 2 at 0, 2 at 300 ms, then 3 at 500 ms needs the two entries of 0 gone:
    // retry at 1 s. 1 fits at 500 ms (4 + 1 = 5).
    let l = SlidingWindowLog::new(params(5, S, 1)).unwrap();
    let mut s = l.new_state(0);
    assert!(l.decide_n(&mut s, 0, 2).outcome.is_admitted());
    assert!(l.decide_n(&mut s, 300 * MS, 2).outcome.is_admitted());
    assert_eq!(
        l.decide_n(&mut s, 500 * MS, 3).outcome,
        Outcome::Reject {
            retry_after: 500 * MS
        }
    );
    // Two units must leave for a cost of 2 too: the entries of 0.
    assert_eq!(
        l.peek_n(&s, 500 * MS, 2).outcome,
        Outcome::Reject {
            retry_after: 500 * MS
        }
    );
    assert_eq!(
        l.decide_n(&mut s, 500 * MS, 1),
        Decision::allow(0, 1500 * MS)
    );
    assert_eq!(s.len(), 5);
    // At 1 s the two of 0 have left, three live: 3 more need the entry of 300 ms gone; 2 fit.
    assert_eq!(
        l.decide_n(&mut s, S, 3).outcome,
        Outcome::Reject {
            retry_after: 300 * MS
        }
    );
    assert_eq!(l.decide_n(&mut s, S, 2), Decision::allow(0, 2 * S));
}

#[test]
fn sliding_window_counter_weighs_the_previous_window() {
    // L = 10 per 100 ns; 8 in window 0. At t = 150 (e = 50): 8·50/100 = 4, so a cost c fits
    // while 4 + c − 1 < 10: c ≤ 6.
    let l = SlidingWindowCounter::new(params(10, 100, 1)).unwrap();
    let mut s = l.new_state(0);
    assert!(l.decide_n(&mut s, 0, 8).outcome.is_admitted());
    assert!(!l.peek_n(&s, 150, 7).outcome.is_admitted());
    let d = l.decide_n(&mut s, 150, 6);
    assert_eq!((d.outcome, d.remaining), (Outcome::Allow, 0));
    // curr 6: 8·(100−e)/100 + 6 + 3 − 1 < 10 ⇔ 8·(100−e) < 200 ⇔ e ≥ 76: retry at 176.
    assert_eq!(
        l.decide_n(&mut s, 150, 3).outcome,
        Outcome::Reject { retry_after: 26 }
    );
    assert!(!l.decide_n(&mut s, 175, 3).outcome.is_admitted());
    assert!(l.decide_n(&mut s, 176, 3).outcome.is_admitted());
}

#[test]
fn token_bucket_takes_cost_tokens() {
    // 10 tokens, refilled at 10 per second (one per 100 ms).
    let l = TokenBucket::new(params(10, S, 10)).unwrap();
    let mut s = l.new_state(0);
    assert_eq!(l.decide_n(&mut s, 0, 7).remaining, 3);
    // 5 more need 2 more tokens: 200 ms.
    assert_eq!(
        l.decide_n(&mut s, 0, 5).outcome,
        Outcome::Reject {
            retry_after: 200 * MS
        }
    );
    assert_eq!(l.decide_n(&mut s, 200 * MS, 5).remaining, 0);
    // 11 tokens never fit a bucket of 10; the state is fresh in 1 s.
    assert_eq!(
        l.decide_n(&mut s, 200 * MS, 11).outcome,
        Outcome::Reject { retry_after: S }
    );
}

#[test]
fn leaky_bucket_queues_cost_places() {
    // 10 places draining one per 100 ms. A cost of 4 at 0 starts at once and holds 4 slots;
    // a cost of 3 then waits 400 ms for them, and leaves 3 places.
    let l = LeakyBucket::new(params(10, S, 10)).unwrap();
    let mut s = l.new_state(0);
    let d = l.decide_n(&mut s, 0, 4);
    assert_eq!(
        (d.outcome, d.remaining, d.reset_at),
        (Outcome::Allow, 6, 400 * MS)
    );
    let d = l.decide_n(&mut s, 0, 3);
    assert_eq!((d.outcome, d.remaining), (Outcome::Delay(400 * MS), 3));
    // 4 more do not fit (7 + 4 > 10) until the first unit has left, 1 ns on (it departs at 0).
    assert_eq!(
        l.decide_n(&mut s, 0, 4).outcome,
        Outcome::Reject { retry_after: 1 }
    );
    let d = l.decide_n(&mut s, 100 * MS, 4);
    assert_eq!((d.outcome, d.remaining), (Outcome::Delay(600 * MS), 0));
}

#[test]
fn gcra_is_governors_check_n() {
    // T = 100 ms, burst 5 (τ = 400 ms). A cost of 5 at 0 empties it; 2 more need tat + T − τ
    // = 500 + 100 − 400 = 200 ms.
    let l = Gcra::new(params(10, S, 5)).unwrap();
    let mut s = l.new_state(0);
    assert_eq!(l.decide_n(&mut s, 0, 5), Decision::allow(0, 500 * MS));
    assert_eq!(
        l.decide_n(&mut s, 0, 2).outcome,
        Outcome::Reject {
            retry_after: 200 * MS
        }
    );
    assert_eq!(
        l.decide_n(&mut s, 200 * MS, 2),
        Decision::allow(0, 700 * MS)
    );
    // 6 cells are more than the burst: governor's InsufficientCapacity, never admitted.
    assert_eq!(
        l.decide_n(&mut s, 200 * MS, 6).outcome,
        Outcome::Reject {
            retry_after: 500 * MS
        }
    );
    assert_eq!(s.tat, 700 * MS);
}

/// Random limits, and requests of random cost (up to two above the capacity) at times that
/// favour instants shared by several requests.
fn cost_case() -> impl Strategy<Value = (Params, Vec<(Nanos, Cost)>)> {
    let window = prop_oneof![1u64..=40, 1_000_000u64..=1_000_000_000];
    (1u64..=12, window, 1u64..=8)
        .prop_map(|(limit, window, burst)| params(limit, window.max(limit), burst))
        .prop_flat_map(|p| {
            let step = (p.window / p.limit).max(1);
            let gap = prop_oneof![3 => Just(0u64), 4 => 0..=2 * step, 2 => 0..=2 * p.window];
            let most = p.limit.max(p.burst) as Cost + 2;
            let cost = prop_oneof![3 => Just(1 as Cost), 4 => 1..=most];
            (Just(p), prop::collection::vec((gap, cost), 1..200))
        })
        .prop_map(|(p, steps)| {
            let mut t = 0;
            let requests = steps
                .into_iter()
                .map(|(g, c)| {
                    t += g;
                    (t, c)
                })
                .collect();
            (p, requests)
        })
}

fn state_text<L: Limiter>(s: &L::State) -> String {
    format!("{s:?}")
}

/// Runs the requests through one key, checking every decision's promises.
struct CostContract<'a> {
    requests: &'a [(Nanos, Cost)],
    capacity: u64,
}

impl LimiterVisitor for CostContract<'_> {
    type Output = Result<(), TestCaseError>;
    fn visit<L: Limiter + 'static>(self, l: L) -> Self::Output {
        let admitted = |s: &L::State, t, c| l.decide_n(&mut s.clone(), t, c).outcome.is_admitted();
        let mut state = l.new_state(self.requests[0].0);
        for &(now, cost) in self.requests {
            let before = state.clone();
            let d = l.decide_n(&mut state, now, cost);
            prop_assert_eq!(l.peek_n(&before, now, cost), d, "peek at {}", now);
            if u64::from(cost) > self.capacity {
                // Never admitted; nothing consumed; fresh again after the advertised wait.
                let Outcome::Reject { retry_after } = d.outcome else {
                    return Err(TestCaseError::fail(format!("{cost} admitted at {now}")));
                };
                // (A state may roll to the current window: compare what it decides next.)
                prop_assert_eq!(l.peek(&state, now), l.peek(&before, now));
                prop_assert!(l.is_idle(&state, now + retry_after), "{:?}", d);
                continue;
            }
            // All c units at this instant, or none, and the same state after.
            let mut units = before.clone();
            let all = (0..cost).all(|_| l.decide(&mut units, now).outcome.is_admitted());
            prop_assert_eq!(d.outcome.is_admitted(), all, "cost {} at {}", cost, now);
            if all {
                prop_assert_eq!(state_text::<L>(&state), state_text::<L>(&units));
            }
            if let Outcome::Reject { retry_after } = d.outcome {
                prop_assert!(retry_after > 0);
                prop_assert!(admitted(&state, now + retry_after, cost), "{:?}", d);
                prop_assert!(!admitted(&state, now + retry_after - 1, cost), "{:?}", d);
            }
            // Exactly `remaining` more units at this instant.
            let mut probe = state.clone();
            for _ in 0..d.remaining {
                prop_assert!(l.decide(&mut probe, now).outcome.is_admitted(), "{:?}", d);
            }
            prop_assert!(!l.decide(&mut probe, now).outcome.is_admitted(), "{:?}", d);
            prop_assert_eq!(l.is_idle(&state, now), now >= d.reset_at);
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_cost_is_that_many_units_at_once((p, requests) in cost_case()) {
        for kind in AlgorithmKind::ALL {
            let contract = CostContract { requests: &requests, capacity: capacity(kind, p) };
            kind.visit(p, contract)
                .expect("valid parameters")
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }

    #[test]
    fn gcra_equals_governor_check_n((p, requests) in cost_case()) {
        agrees_with_governor(p, &requests)?;
    }
}

/// GCRA decides every request as governor does, with `check` for a cost of 1 and `check_n`
/// otherwise (`InsufficientCapacity` a refusal above the burst), and advertises governor's wait.
pub(super) fn agrees_with_governor(
    p: Params,
    requests: &[(Nanos, Cost)],
) -> Result<(), TestCaseError> {
    use governor::clock::{Clock, FakeRelativeClock};
    use governor::{Quota, RateLimiter};
    use std::num::NonZeroU32;
    use std::time::Duration;

    let ours = Gcra::new(p).unwrap();
    let period = Duration::from_nanos(p.window / p.limit);
    let burst = NonZeroU32::new(p.burst as u32).unwrap();
    let quota = Quota::with_period(period).unwrap().allow_burst(burst);
    let clock = FakeRelativeClock::default();
    let gov = RateLimiter::direct_with_clock(quota, clock.clone());
    let (mut state, mut clock_at) = (ours.new_state(requests[0].0), 0);
    for &(now, cost) in requests {
        clock.advance(Duration::from_nanos(now - clock_at));
        clock_at = now;
        let d = ours.decide_n(&mut state, now, cost);
        let theirs = match cost {
            1 => Ok(gov.check()),
            n => gov.check_n(NonZeroU32::new(n).unwrap()),
        };
        match (theirs, d.outcome) {
            (Ok(Ok(())), Outcome::Allow) => {}
            (Ok(Err(not_until)), Outcome::Reject { retry_after }) => {
                let wait = not_until.wait_time_from(clock.now());
                prop_assert_eq!(wait, Duration::from_nanos(retry_after), "at {}", now);
            }
            (Err(_insufficient), Outcome::Reject { .. }) => {
                prop_assert!(u64::from(cost) > p.burst, "cost {} at {}", cost, now);
            }
            (g, o) => prop_assert!(
                false,
                "at {} cost {}: governor {:?}, ours {:?}",
                now,
                cost,
                g,
                o
            ),
        }
    }
    Ok(())
}

/// A refund handed to a limiter at `now` for a request charged at `charged_at`.
fn refunded<L: Limiter>(l: &L, s: &mut L::State, now: Nanos, charged_at: Nanos, units: Cost) {
    l.refund(s, now, charged_at, units);
}

#[test]
fn a_shopify_bucket_gives_back_what_a_query_did_not_cost() {
    // Shopify's Admin API: 1000 points, restored at 50 a second. A query requesting 600 points
    // is charged 600; its response costs 100, so 500 come back. Without the refund a second
    // 600-point query a second later finds 400 + 50 = 450 points and waits 3 s for 150 more.
    let l = TokenBucket::new(params(50, S, 1000)).unwrap();
    let mut s = l.new_state(0);
    assert_eq!(l.decide_n(&mut s, 0, 600), Decision::allow(400, 12 * S));
    let mut without = s;
    assert_eq!(
        l.decide_n(&mut without, S, 600).outcome,
        Outcome::Reject { retry_after: 3 * S }
    );
    // The refund lands when the first response ends, at 200 ms: 400 + 10 + 500 = 910 points.
    refunded(&l, &mut s, 200 * MS, 0, 500);
    assert_eq!(l.peek_n(&s, 200 * MS, 1).remaining, 909);
    let d = l.decide_n(&mut s, S, 600);
    assert_eq!(d, Decision::allow(350, S + 13 * S));
    // A refund never fills the bucket past its capacity.
    refunded(&l, &mut s, 20 * S, S, 600);
    assert!(l.is_idle(&s, 20 * S));
    assert_eq!(l.peek_n(&s, 20 * S, 1).remaining, 999);
}

#[test]
fn every_algorithm_gives_back_only_what_it_still_holds() {
    // Fixed window, 10 per second: 8 at 100 ms, 6 back at 500 ms leaves 2 counted; a refund
    // for the previous window's request does nothing.
    let fw = FixedWindow::new(params(10, S, 1)).unwrap();
    let mut s = fw.new_state(0);
    fw.decide_n(&mut s, 100 * MS, 8);
    refunded(&fw, &mut s, 500 * MS, 100 * MS, 6);
    assert_eq!(s.count, 2);
    fw.decide_n(&mut s, 1100 * MS, 3);
    refunded(&fw, &mut s, 1200 * MS, 100 * MS, 2);
    assert_eq!(s.count, 3);
    // Sliding window counter, 10 per second: a refund lands in the window it was charged to,
    // current or previous, and nowhere once that has rolled out.
    let sc = SlidingWindowCounter::new(params(10, S, 1)).unwrap();
    let mut s = sc.new_state(0);
    sc.decide_n(&mut s, 100 * MS, 6);
    sc.decide_n(&mut s, 1100 * MS, 2);
    refunded(&sc, &mut s, 1200 * MS, 100 * MS, 5);
    assert_eq!((s.prev, s.curr), (1, 2));
    refunded(&sc, &mut s, 1200 * MS, 1100 * MS, 9);
    assert_eq!((s.prev, s.curr), (1, 0));
    sc.decide_n(&mut s, 3100 * MS, 1);
    refunded(&sc, &mut s, 3200 * MS, 1100 * MS, 1);
    assert_eq!((s.prev, s.curr), (0, 1));
    // Sliding log, 5 per second: 3 entries at 100 ms and 2 at 200 ms; 2 back for the request
    // of 100 ms removes two of its own entries, not the later ones.
    let sl = SlidingWindowLog::new(params(5, S, 1)).unwrap();
    let mut log = sl.new_state(0);
    sl.decide_n(&mut log, 100 * MS, 3);
    sl.decide_n(&mut log, 200 * MS, 2);
    refunded(&sl, &mut log, 300 * MS, 100 * MS, 2);
    assert_eq!(Vec::from(log.clone()), [100 * MS, 200 * MS, 200 * MS]);
    refunded(&sl, &mut log, 300 * MS, 100 * MS, 4);
    assert_eq!(Vec::from(log), [200 * MS, 200 * MS]);
    // GCRA, 10 per second (T = 100 ms), burst 5: 4 cells at 0 put tat at 400 ms; 3 back at
    // 100 ms bring it to 100 ms, and no further back than now.
    let g = Gcra::new(params(10, S, 5)).unwrap();
    let mut s = g.new_state(0);
    g.decide_n(&mut s, 0, 4);
    refunded(&g, &mut s, 100 * MS, 0, 3);
    assert_eq!(s.tat, 100 * MS);
    refunded(&g, &mut s, 150 * MS, 0, 1);
    assert_eq!(s.tat, 150 * MS);
    // Leaky bucket, 10 per second, 5 places: 3 places at 0 (the queue drains by 300 ms); 2
    // back at 100 ms leave it drained from 100 ms, so 5 places are free again there.
    let lb = LeakyBucket::new(params(10, S, 5)).unwrap();
    let mut s = lb.new_state(0);
    lb.decide_n(&mut s, 0, 3);
    refunded(&lb, &mut s, 100 * MS, 0, 2);
    assert!(lb.is_idle(&s, 100 * MS));
    assert_eq!(lb.peek_n(&s, 100 * MS, 5).outcome, Outcome::Allow);
}

/// After a request of cost `c` is admitted, an immediate refund of `c − a` leaves the state
/// as a request of cost `a` would have; a refund never leaves a state fuller than fresh.
struct RefundContract<'a> {
    requests: &'a [(Nanos, Cost)],
}

impl LimiterVisitor for RefundContract<'_> {
    type Output = Result<(), TestCaseError>;
    fn visit<L: Limiter + 'static>(self, l: L) -> Self::Output {
        let mut state = l.new_state(self.requests[0].0);
        for (i, &(now, cost)) in self.requests.iter().enumerate() {
            let before = state.clone();
            if !l.decide_n(&mut state, now, cost).outcome.is_admitted() {
                continue;
            }
            let actual = 1 + (i as Cost * 7) % cost;
            let mut charged_actual = before.clone();
            prop_assert!(
                l.decide_n(&mut charged_actual, now, actual)
                    .outcome
                    .is_admitted()
            );
            l.refund(&mut state, now, now, cost - actual);
            prop_assert_eq!(state_text::<L>(&state), state_text::<L>(&charged_actual));
            // A refund of everything a later instant could hold leaves the key fresh at most.
            let mut all_back = state.clone();
            l.refund(&mut all_back, now, now, Cost::MAX);
            let fresh = l.new_state(now);
            for c in [1, cost] {
                prop_assert!(
                    l.peek_n(&all_back, now, c).remaining <= l.peek_n(&fresh, now, c).remaining
                );
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_refund_at_once_charges_the_actual_cost((p, requests) in cost_case()) {
        for kind in AlgorithmKind::ALL {
            kind.visit(p, RefundContract { requests: &requests })
                .expect("valid parameters")
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }
}
