//! Charges after the decision ([`Limiter::charge`]): a gateway that counts an LLM's tokens
//! when its response ends may charge a key more than it holds, into debt. Hand-computed debts
//! per exact algorithm, and properties over random traces: a charge the state could absorb is
//! the admission of that cost; a charge given back at once changes no later decision; a charge
//! never lets a later request through that the key would have refused without it.

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

fn reject(retry_after: Nanos) -> Outcome {
    Outcome::Reject { retry_after }
}

#[test]
fn a_fixed_window_counts_past_its_limit_until_the_window_ends() {
    // 100 a minute: five checks pass at 0, then their 663 tokens are charged at 3 s (LiteLLM's
    // report: 5 concurrent requests, 663 tokens under 100 TPM). The window refuses the rest of
    // its minute and starts from 0 at 60 s.
    let l = FixedWindow::new(params(100, 60 * S, 1)).unwrap();
    let mut s = l.new_state(0);
    l.charge(&mut s, 3 * S, 663);
    assert_eq!(s.count, 663);
    let d = l.decide_n(&mut s, 5 * S, 1);
    assert_eq!((d.outcome, d.remaining), (reject(55 * S), 0));
    assert_eq!(l.decide_n(&mut s, 60 * S, 100).outcome, Outcome::Allow);
    // A charge in a later window counts there, not in the stale one.
    let mut s = l.new_state(0);
    l.decide_n(&mut s, 0, 90);
    l.charge(&mut s, 61 * S, 30);
    assert_eq!((s.window, s.count), (1, 30));
}

#[test]
fn a_token_bucket_in_debt_refuses_until_refill_has_paid_it() {
    // 60 a minute (1 a second), 10 at once: 25 charged at 0 take the 10 held and owe 15.
    let l = TokenBucket::new(params(60, 60 * S, 10)).unwrap();
    let mut s = l.new_state(0);
    l.charge(&mut s, 0, 25);
    assert!(!l.is_idle(&s, 24 * S));
    // Refused: 15 s to pay the debt, 1 s more for a token.
    let d = l.peek_n(&s, 0, 1);
    assert_eq!(
        (d.outcome, d.remaining, d.reset_at),
        (reject(16 * S), 0, 25 * S)
    );
    assert_eq!(l.peek_n(&s, 15 * S, 1).outcome, reject(S));
    assert_eq!(l.decide_n(&mut s, 16 * S, 1).outcome, Outcome::Allow);
    assert_eq!(
        s,
        TokenBucketState {
            level: 0,
            last: 16 * S
        }
    );
    // Given back while in debt, units pay it first: 5 of 15 owed at 0 leave 10 owed.
    let mut s = l.new_state(0);
    l.charge(&mut s, 0, 25);
    l.refund(&mut s, 0, 0, 5);
    assert_eq!(l.peek_n(&s, 10 * S, 1).outcome, reject(S));
    assert_eq!(l.peek_n(&s, 11 * S, 1).outcome, Outcome::Allow);
    // More than the debt: the rest goes back into the bucket (3 tokens at 2 s: 2 refilled −
    // 12 owed + 13 given back).
    let mut s = l.new_state(0);
    l.charge(&mut s, 0, 22);
    l.refund(&mut s, 2 * S, 0, 13);
    assert_eq!(l.peek_n(&s, 2 * S, 3).outcome, Outcome::Allow);
    assert_eq!(l.peek_n(&s, 2 * S, 4).outcome, reject(S));
    // Idle once refill has paid the debt and filled the bucket.
    let mut s = l.new_state(0);
    l.charge(&mut s, 0, 25);
    assert!(l.is_idle(&s, 25 * S));
}

#[test]
fn gcra_and_the_leaky_bucket_push_their_schedule_out() {
    // 60 a minute, burst 10 (T = 1 s, τ = 9 s): 25 cells at 0 put tat at 25 s; a cell conforms
    // from tat − τ = 16 s, as the token bucket's.
    let g = Gcra::new(params(60, 60 * S, 10)).unwrap();
    let mut s = g.new_state(0);
    g.charge(&mut s, 0, 25);
    assert_eq!(s.tat, 25 * S);
    assert_eq!(g.peek_n(&s, 15 * S, 1).outcome, reject(S));
    assert_eq!(g.peek_n(&s, 16 * S, 1).outcome, Outcome::Allow);
    // A charge counts from now when the schedule is in the past.
    g.charge(&mut s, 40 * S, 2);
    assert_eq!(s.tat, 42 * S);
    // The leaky bucket, 60 a minute and 10 places: 25 places charged at 0 leave a queue of
    // 25 s; one more fits once under 10 s remain: after 15 s (and 1 scaled unit: L/g = 1).
    let lb = LeakyBucket::new(params(60, 60 * S, 10)).unwrap();
    let mut s = lb.new_state(0);
    lb.charge(&mut s, 0, 25);
    assert_eq!(lb.peek_n(&s, 0, 1).outcome, reject(15 * S + 1));
    let d = lb.peek_n(&s, 15 * S + 1, 1);
    assert_eq!(d.outcome, Outcome::Delay(10 * S - 1));
}

#[test]
fn sliding_windows_carry_a_debt_until_it_slides_out() {
    // Sliding window counter, 100 a minute: 163 charged at 3 s. In the next minute the
    // previous window weighs 163·(60 − e)/60, under 100 only once e > 60·63/163 = 23.19 s.
    let sc = SlidingWindowCounter::new(params(100, 60 * S, 1)).unwrap();
    let mut s = sc.new_state(0);
    sc.charge(&mut s, 3 * S, 163);
    assert!(!sc.peek_n(&s, 59 * S, 1).outcome.is_admitted());
    assert!(!sc.peek_n(&s, 83 * S, 1).outcome.is_admitted());
    assert_eq!(sc.peek_n(&s, 84 * S, 1).outcome, Outcome::Allow);
    // Sliding log, 100 a minute: the 163 entries of 3 s leave at 63 s.
    let sl = SlidingWindowLog::new(params(100, 60 * S, 1)).unwrap();
    let mut log = sl.new_state(0);
    sl.charge(&mut log, 3 * S, 163);
    let d = sl.peek_n(&log, 10 * S, 1);
    assert_eq!((d.outcome, d.remaining), (reject(53 * S), 0));
    assert_eq!(sl.peek_n(&log, 63 * S, 100).outcome, Outcome::Allow);
    let _ = MS;
}

fn charge_case() -> impl Strategy<Value = (Params, Vec<(Nanos, Cost, Cost)>)> {
    let window = prop_oneof![1u64..=40, 1_000_000u64..=1_000_000_000];
    (1u64..=12, window, 1u64..=8)
        .prop_map(|(limit, window, burst)| params(limit, window.max(limit), burst))
        .prop_flat_map(|p| {
            let step = (p.window / p.limit).max(1);
            let gap = prop_oneof![3 => Just(0u64), 4 => 0..=2 * step, 2 => 0..=2 * p.window];
            let most = (p.limit.max(p.burst) * 3) as Cost;
            (
                Just(p),
                prop::collection::vec((gap, 1..=most / 3, 0..=most), 1..120),
            )
        })
        .prop_map(|(p, steps)| {
            let mut t = 0;
            let requests = steps
                .into_iter()
                .map(|(gap, cost, charge)| {
                    t += gap;
                    (t, cost, charge)
                })
                .collect();
            (p, requests)
        })
}

/// Each request is decided, then its key charged the third number (0: nothing).
struct ChargeContract<'a> {
    requests: &'a [(Nanos, Cost, Cost)],
    window: Nanos,
}

impl LimiterVisitor for ChargeContract<'_> {
    type Output = Result<(), TestCaseError>;
    fn visit<L: Limiter + 'static>(self, l: L) -> Self::Output {
        let text = |s: &L::State| format!("{s:?}");
        let mut state = l.new_state(self.requests[0].0);
        for &(now, cost, charge) in self.requests {
            l.decide_n(&mut state, now, cost);
            if charge == 0 {
                continue;
            }
            let mut as_decided = state.clone();
            if l.decide_n(&mut as_decided, now, charge)
                .outcome
                .is_admitted()
            {
                let mut charged = state.clone();
                l.charge(&mut charged, now, charge);
                prop_assert_eq!(text(&charged), text(&as_decided));
            }
            let mut charged = state.clone();
            l.charge(&mut charged, now, charge);
            let mut given_back = charged.clone();
            l.refund(&mut given_back, now, now, charge);
            for later in [0, 1, self.window / 3, self.window, 3 * self.window] {
                let t = now + later;
                for c in [1, cost] {
                    let plain = l.peek_n(&state, t, c);
                    prop_assert_eq!(l.peek_n(&given_back, t, c), plain);
                    if l.peek_n(&charged, t, c).outcome.is_admitted() {
                        prop_assert!(plain.outcome.is_admitted(), "{c} at {t}");
                    }
                }
            }
            state = charged;
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn charges_are_admissions_into_debt((p, requests) in charge_case()) {
        for kind in AlgorithmKind::ALL {
            kind.visit(p, ChargeContract { requests: &requests, window: p.window })
                .expect("valid parameters")
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }
}
