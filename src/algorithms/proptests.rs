//! Property tests over random traces: every algorithm's advertised `retry_after`, `remaining` and
//! `reset_at` are exact, and each algorithm matches a brute-force reference model (GCRA: the
//! `governor` crate) decision for decision.

use super::*;
use crate::time::Nanos;
use profiles::{ParamValue, Profile};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type Check = Result<(), TestCaseError>;

fn params() -> impl Strategy<Value = Params> {
    let window = prop_oneof![1u64..=40, 1u64..=2_000, 1_000_000u64..=1_000_000_000];
    (1u64..=12, window, 1u64..=8).prop_map(|(limit, window, burst)| Params {
        limit,
        window,
        burst,
    })
}

/// Nondecreasing request times: bursts at one instant, gaps around the rate, and long pauses.
fn trace(p: Params) -> impl Strategy<Value = Vec<Nanos>> {
    let step = (p.window / p.limit).max(1);
    let gap = prop_oneof![3 => Just(0u64), 4 => 0..=2 * step, 2 => 0..=2 * p.window];
    let gaps = prop::collection::vec(gap, 1..300);
    (0..=3 * p.window, gaps).prop_map(|(mut t, gaps)| {
        gaps.iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    })
}

fn case() -> impl Strategy<Value = (Params, Vec<Nanos>)> {
    params().prop_flat_map(|p| (Just(p), trace(p)))
}

/// GCRA needs an emission interval of at least 1 ns.
fn gcra_case() -> impl Strategy<Value = (Params, Vec<Nanos>)> {
    case().prop_map(|(mut p, t)| {
        p.window = p.window.max(p.limit);
        (p, t)
    })
}

fn admitted<L: Limiter>(l: &L, s: &L::State, at: Nanos) -> bool {
    l.decide(&mut s.clone(), at).outcome.is_admitted()
}

/// Runs `times` through one fresh key, checking after every decision that the numbers it
/// advertises are exact. Returns the decisions.
fn contract<L: Limiter>(l: &L, times: &[Nanos]) -> Result<Vec<Decision>, TestCaseError> {
    contract_with(l, times, Exact::All)
}

/// Which of the advertised numbers a profile documents as exact.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exact {
    All,
    /// `remaining` approximates.
    NotRemaining,
    /// A rested key is not a new one (Guava's limiters: the bursty one is created empty and
    /// rests full, and each counts microseconds from its creation): never idle, `reset_at` is
    /// when it is full, and `remaining` approximates.
    NeverIdle,
}

/// [`contract`], checking what `exact` says the profile advertises exactly.
fn contract_with<L: Limiter>(
    l: &L,
    times: &[Nanos],
    exact: Exact,
) -> Result<Vec<Decision>, TestCaseError> {
    let (exact_remaining, idles) = (exact == Exact::All, exact != Exact::NeverIdle);
    let mut state = l.new_state(times[0]);
    let mut reset_at = times[0];
    let mut out = Vec::with_capacity(times.len());
    for &now in times {
        // Idle exactly from reset_at on, and then indistinguishable from a new key.
        let idle = l.is_idle(&state, now);
        prop_assert!(idles || !idle, "never idle");
        prop_assert!(!idles || idle == (now >= reset_at), "is_idle at {}", now);
        if idle {
            let fresh = l.decide(&mut l.new_state(now), now);
            prop_assert_eq!(l.decide(&mut state.clone(), now), fresh);
        }
        let d = l.decide(&mut state, now);
        match d.outcome {
            Outcome::Delay(x) => prop_assert!(x > 0),
            Outcome::Reject { retry_after } => {
                prop_assert!(retry_after > 0);
                // Earliest admission, assuming nothing in between: admitted then, not 1 ns before.
                prop_assert!(admitted(l, &state, now + retry_after), "{:?}", d);
                prop_assert!(!admitted(l, &state, now + retry_after - 1), "{:?}", d);
            }
            Outcome::Allow => {}
        }
        if !idles {
            out.push(d);
            continue;
        }
        prop_assert_eq!(l.is_idle(&state, now), now >= d.reset_at);
        prop_assert!(l.is_idle(&state, d.reset_at));
        if d.reset_at > now {
            prop_assert!(!l.is_idle(&state, d.reset_at - 1), "{:?} at {}", d, now);
        }
        // Exactly `remaining` more admissions at this instant.
        if !exact_remaining {
            reset_at = d.reset_at;
            out.push(d);
            continue;
        }
        let mut probe = state.clone();
        for k in 0..d.remaining {
            prop_assert!(
                l.decide(&mut probe, now).outcome.is_admitted(),
                "{:?} #{}",
                d,
                k
            );
        }
        prop_assert!(!l.decide(&mut probe, now).outcome.is_admitted(), "{:?}", d);
        reset_at = d.reset_at;
        out.push(d);
    }
    Ok(out)
}

fn admitted_times(times: &[Nanos], ds: &[Decision]) -> Vec<Nanos> {
    let admitted = |(&t, d): (&Nanos, &Decision)| d.outcome.is_admitted().then_some(t);
    times.iter().zip(ds).filter_map(admitted).collect()
}

/// The most admissions in any rolling window `(t−W, t]` (attained with t an admission time).
fn max_rolling(admits: &[Nanos], w: Nanos) -> usize {
    let count = |t: Nanos| admits.iter().filter(|&&x| x <= t && x + w > t).count();
    admits.iter().map(|&t| count(t)).max().unwrap_or(0)
}

/// Compares decisions with a reference model deciding admission from earlier admissions.
fn check_model(
    times: &[Nanos],
    ds: &[Decision],
    mut admit: impl FnMut(&[Nanos], Nanos) -> bool,
) -> Check {
    let mut so_far = Vec::new();
    for (&t, d) in times.iter().zip(ds) {
        prop_assert_eq!(d.outcome.is_admitted(), admit(&so_far, t), "at {}", t);
        if d.outcome.is_admitted() {
            so_far.push(t);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_window_is_exact((p, times) in case()) {
        let ds = contract(&FixedWindow::new(p).unwrap(), &times)?;
        let (l, w) = (p.limit as usize, p.window);
        check_model(&times, &ds, |prior, t| {
            prior.iter().filter(|&&x| x / w == t / w).count() < l
        })?;
        let admits = admitted_times(&times, &ds);
        for &t in &admits {
            prop_assert!(admits.iter().filter(|&&x| x / w == t / w).count() <= l);
        }
        // The boundary weakness: up to 2L in a rolling window, never more.
        prop_assert!(max_rolling(&admits, w) <= 2 * l);
    }

    #[test]
    fn sliding_window_log_is_exact((p, times) in case()) {
        let ds = contract(&SlidingWindowLog::new(p).unwrap(), &times)?;
        let (l, w) = (p.limit as usize, p.window);
        check_model(&times, &ds, |prior, t| prior.iter().filter(|&&x| x + w > t).count() < l)?;
        prop_assert!(max_rolling(&admitted_times(&times, &ds), w) <= l);
    }

    #[test]
    fn sliding_window_counter_is_exact((p, times) in case()) {
        let ds = contract(&SlidingWindowCounter::new(p).unwrap(), &times)?;
        let (l, w, wide) = (p.limit as u128, p.window, p.window as u128);
        check_model(&times, &ds, |prior, t| {
            let (i, e) = (t / w, (t % w) as u128);
            let count = |j: u64| prior.iter().filter(|&&x| x / w == j).count() as u128;
            let prev = if i > 0 { count(i - 1) } else { 0 };
            prev * (wide - e) + count(i) * wide < l * wide
        })?;
    }

    #[test]
    fn token_bucket_is_exact((p, times) in case()) {
        let tb = TokenBucket::new(p).unwrap();
        let ds = contract(&tb, &times)?;
        // Reference without the gcd reduction: level in 1/W tokens, gaining L per ns.
        let (l, w, cap) = (p.limit as u128, p.window as u128, (p.burst * p.window) as u128);
        let (mut level, mut last) = (cap, times[0]);
        for (&t, d) in times.iter().zip(&ds) {
            level = cap.min(level + l * (t - last) as u128);
            last = t;
            let outcome = if level >= w {
                level -= w;
                Outcome::Allow
            } else {
                Outcome::Reject { retry_after: (w - level).div_ceil(l) as Nanos }
            };
            let reset_at = t + (cap - level).div_ceil(l) as Nanos;
            let want = Decision { outcome, remaining: (level / w) as u64, reset_at };
            prop_assert_eq!(*d, want, "at {}", t);
        }
    }

    #[test]
    fn leaky_bucket_is_exact((p, times) in case()) {
        let ds = contract(&LeakyBucket::new(p).unwrap(), &times)?;
        // Reference: departure slots scaled by L (interval W); a request is queued until its
        // slot, inclusive; a request joins iff fewer than B are queued.
        let (l, w, b) = (p.limit as u128, p.window as u128, p.burst as usize);
        let mut slots: Vec<u128> = Vec::new();
        let mut departures: Vec<(Nanos, Nanos)> = Vec::new();
        for (&t, d) in times.iter().zip(&ds) {
            let n = t as u128 * l;
            let queued = slots.iter().filter(|&&s| s >= n).count();
            prop_assert_eq!(d.outcome.is_admitted(), queued < b, "at {}", t);
            if let Outcome::Reject { .. } = d.outcome {
                continue;
            }
            let slot = slots.last().map_or(n, |&s| (s + w).max(n));
            slots.push(slot);
            // Exact delay: departure = ceil(rational slot).
            let leaves = slot.div_ceil(l) as Nanos;
            let delay = match d.outcome { Outcome::Delay(x) => x, _ => 0 };
            prop_assert_eq!(t + delay, leaves, "at {}", t);
            departures.push((t, leaves));
            // Never more than B requests waiting (arrived, not yet departed) at any time.
            let waiting = departures.iter().filter(|&&(_, dep)| dep > t).count();
            prop_assert!(waiting <= b, "{} waiting at {}", waiting, t);
        }
        let min_gap = p.window / p.limit;
        for pair in departures.windows(2) {
            prop_assert!(pair[1].1 - pair[0].1 >= min_gap, "{:?}", pair);
        }
    }

    #[test]
    fn gcra_is_exact((p, times) in gcra_case()) {
        contract(&Gcra::new(p).unwrap(), &times)?;
    }

    #[test]
    fn gcra_equals_governor((p, times) in gcra_case()) {
        let requests: Vec<(Nanos, Cost)> = times.iter().map(|&t| (t, 1)).collect();
        super::cost_tests::agrees_with_governor(p, &requests)?;
    }

    #[test]
    fn gcra_equals_token_bucket_on_whole_intervals(
        (p, times) in (1u64..=12, 1u64..=200, 1u64..=8).prop_flat_map(|(limit, t, burst)| {
            let p = Params { limit, window: limit * t, burst };
            (Just(p), trace(p))
        })
    ) {
        let (g, b) = (Gcra::new(p).unwrap(), TokenBucket::new(p).unwrap());
        let (mut gs, mut bs) = (g.new_state(times[0]), b.new_state(times[0]));
        for &now in &times {
            prop_assert_eq!(g.decide(&mut gs, now), b.decide(&mut bs, now), "at {}", now);
        }
    }

    /// A long burst faster than the refill rate, on a fresh key, gets exactly the bucket plus
    /// what refills meanwhile: B + floor(L·Δt/W).
    #[test]
    fn token_bucket_long_burst(
        (limit, window, burst, d, count, t0) in (1u64..=12, 2u64..=5_000, 1u64..=10)
            .prop_filter("needs W > L", |(l, w, _)| w > l)
            .prop_flat_map(|(l, w, b)| {
                let max_d = (w - 1) / l; // d·L < W
                (Just(l), Just(w), Just(b), 1..=max_d, 1usize..=300, 0u64..=1_000_000)
            })
    ) {
        let tb = TokenBucket::new(Params { limit, window, burst }).unwrap();
        let mut s = tb.new_state(t0);
        let (mut admitted, mut rejected) = (0u64, false);
        for k in 0..count as u64 {
            match tb.decide(&mut s, t0 + k * d).outcome {
                Outcome::Reject { .. } => rejected = true,
                _ => admitted += 1,
            }
        }
        let dt = (count as u64 - 1) * d;
        let quota = burst + limit * dt / window;
        prop_assert!(admitted <= quota);
        // B ≥ 2: after the first request the level stays under one token plus one gap's refill
        // (< 2 tokens ≤ B), so nothing is lost to the cap and a reject shows the bucket drained.
        // B = 1: a refill between two requests can overflow the bucket, so only the bound holds.
        if burst >= 2 {
            prop_assert_eq!(admitted, if rejected { quota } else { count as u64 });
        }
    }
}

/// Profiles: policies their libraries can express (whole-second windows), traces with
/// sub-millisecond steps and exact window-length gaps.
fn profile_case() -> impl Strategy<Value = (Params, Vec<Nanos>)> {
    let p = (1u64..=8, 1u64..=3, 1u64..=8).prop_map(|(limit, secs, burst)| Params {
        limit,
        window: secs * 1_000_000_000,
        burst,
    });
    p.prop_flat_map(|p| {
        let step = p.window / p.limit;
        let gap = prop_oneof![
            3 => Just(0u64),
            2 => 0..1_000_000u64,
            4 => 0..=2 * step,
            1 => Just(p.window),
            1 => 0..=2 * p.window
        ];
        let trace =
            (0..=3 * p.window, prop::collection::vec(gap, 1..200)).prop_map(|(mut t, gaps)| {
                gaps.iter()
                    .map(|g| {
                        t += g;
                        t
                    })
                    .collect::<Vec<Nanos>>()
            });
        (Just(p), trace)
    })
}

/// What the profile advertises exactly (the others document an approximation).
fn exact(kind: ProfileKind) -> Exact {
    match kind {
        ProfileKind::GuavaBursty | ProfileKind::GuavaWarmup => Exact::NeverIdle,
        ProfileKind::GoXTimeRate
        | ProfileKind::EnvoyLocal
        | ProfileKind::ArticleRedisZsetLog
        | ProfileKind::PythonLimitsSlidingWindow => Exact::NotRemaining,
        _ => Exact::All,
    }
}

/// `kind` from the policy alone, except `envoy-ratelimit`, whose units do not include the
/// 2 s and 3 s windows of [`profile_case`]: per second.
fn configured(kind: ProfileKind, p: Params) -> Profile {
    let given = match kind {
        ProfileKind::EnvoyRatelimit => vec![("unit".into(), ParamValue::Str("second".into()))],
        _ => Vec::new(),
    };
    kind.configure(p, &given).unwrap()
}

struct ProfileContract<'a>(&'a [Nanos], Exact);

impl LimiterVisitor for ProfileContract<'_> {
    type Output = Result<Vec<Decision>, TestCaseError>;
    fn visit<L: Limiter + 'static>(self, l: L) -> Self::Output {
        contract_with(&l, self.0, self.1)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every profile's retry_after is its earliest admission, its reset_at the first instant its
    /// key is idle, and an idle key decides like a new one.
    #[test]
    fn profiles_advertise_exact_retry_and_reset((p, times) in profile_case()) {
        for kind in ProfileKind::ALL {
            let profile = configured(kind, p);
            profile.visit(ProfileContract(&times, exact(kind)))
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }
}

/// Checks `peek` against the copy-based decision it replaces at every request of `times`.
struct PeekMatchesCopy<'a>(&'a [Nanos]);

impl LimiterVisitor for PeekMatchesCopy<'_> {
    type Output = Check;
    fn visit<L: Limiter + 'static>(self, l: L) -> Check {
        let mut state = l.new_state(self.0[0]);
        for &t in self.0 {
            let copied = l.decide(&mut state.clone(), t);
            let before = format!("{state:?}");
            prop_assert_eq!(l.peek(&state, t), copied, "at {}", t);
            prop_assert_eq!(format!("{state:?}"), before, "peek changed the state");
            l.decide(&mut state, t);
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `peek` (what `all_or_nothing` checks every rule with) decides exactly as the old path,
    /// `decide` on a copy of the state, and leaves the state alone: every algorithm, then
    /// every profile.
    #[test]
    fn peek_decides_like_a_copy((p, times) in gcra_case()) {
        for kind in AlgorithmKind::ALL {
            kind.visit(p, PeekMatchesCopy(&times))
                .expect("valid parameters")
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }

    #[test]
    fn profiles_peek_like_a_copy((p, times) in profile_case()) {
        for kind in ProfileKind::ALL {
            configured(kind, p).visit(PeekMatchesCopy(&times))
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `envoy-ratelimit` from any instant: the first `requests_per_unit` requests of each
    /// window aligned to the Unix epoch (whole seconds) pass, refused ones counted too.
    #[test]
    fn envoy_ratelimit_admits_the_first_of_each_epoch_window(
        (p, times) in profile_case(),
        start in 0u64..4_000_000_000_000_000_000,
        unit in prop_oneof![Just(("second", 1u64)), Just(("minute", 60))],
    ) {
        let given = [("unit".to_string(), ParamValue::Str(unit.0.into()))];
        let Profile::EnvoyRatelimit(l) = ProfileKind::EnvoyRatelimit
            .configure(p, &given)
            .unwrap()
            .starting_at(start)
        else {
            unreachable!()
        };
        let ds = contract(&l, &times)?;
        let window = |t: Nanos| (start + t) / 1_000_000_000 / unit.1;
        check_model(&times, &ds, |prior, t| {
            prior.iter().filter(|&&x| window(x) == window(t)).count() < p.limit as usize
        })?;
    }
}
