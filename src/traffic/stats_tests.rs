//! Statistical tests of the random arrival processes, with fixed seeds.
//!
//! Every tolerance is five standard deviations of the quantity tested, computed below from the
//! process's own parameters: a correct generator fails one with probability below 1e-6 for any
//! seed, while a wrong rate, period law or thinning step is off by far more.

use super::intensity::{Intensity, Periods, Phase, pareto_period};
use super::tests::{arrivals, spec};
use super::{Arrivals, RateDist};
use crate::time::{NANOS_PER_SEC, Nanos};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const SEC: Nanos = NANOS_PER_SEC;

/// Events per nanosecond for `n` per second.
fn per_s(n: f64) -> f64 {
    n / SEC as f64
}

/// Runs `intensity` for `clients` clients over `[0, length)` and checks the count against
/// `clients · ∫λ` within five standard deviations, `extra_var` being the variance the random
/// intensity adds to the Poisson variance (which equals the mean).
fn check_mean(intensity: Intensity, clients: u32, length: Nanos, extra_var: f64, seed: u64) {
    let expected = clients as f64 * intensity.expected_events(length);
    let name = intensity.name();
    let (a, _) = arrivals(&spec(Arrivals::Poisson(intensity), clients, length), seed);
    assert!(
        a.windows(2).all(|w| w[0].time <= w[1].time),
        "{name}: out of order"
    );
    let tolerance = 5.0 * (expected + extra_var).sqrt();
    let got = a.len() as f64;
    assert!(
        (got - expected).abs() < tolerance,
        "{name}: {got} arrivals, expected {expected:.0} ± {tolerance:.0}"
    );
}

#[test]
fn deterministic_intensities_have_their_mean_rate() {
    // A Poisson process of deterministic intensity has N ~ Poisson(∫λ): variance = mean.
    let hour = 3600 * SEC;
    check_mean(
        Intensity::Ramp {
            from: per_s(1.0),
            to: per_s(20.0),
            length: hour,
        },
        4,
        hour,
        0.0,
        1,
    );
    check_mean(
        Intensity::Sine {
            mean: per_s(10.0),
            amplitude: per_s(8.0),
            period: 600 * SEC,
            phase: 77 * SEC,
        },
        3,
        hour,
        0.0,
        2,
    );
    check_mean(
        Intensity::Spike {
            base: per_s(2.0),
            peak: per_s(60.0),
            at: 600 * SEC,
            rise: 10 * SEC,
            decay: 120 * SEC,
        },
        5,
        hour,
        0.0,
        3,
    );
    let phases = vec![
        Phase {
            duration: 300 * SEC,
            rate: per_s(5.0),
            ramp_to: per_s(50.0),
        },
        Phase {
            duration: 600 * SEC,
            rate: per_s(50.0),
            ramp_to: per_s(50.0),
        },
        Phase {
            duration: 300 * SEC,
            rate: per_s(50.0),
            ramp_to: 0.0,
        },
    ];
    // Nothing after the last phase: the run is longer than the phases on purpose.
    check_mean(Intensity::Phases(phases), 2, hour, 0.0, 4);
}

/// The variance an alternating renewal process adds to `∫λ` over `t`, by the renewal-reward
/// central limit theorem: cycles of an `a`-period at rate `ra` then a `b`-period at rate `rb`,
/// `K = t/(E a + E b)` cycles, each contributing `Var((ra−m)·a + (rb−m)·b)`, `m` the mean rate.
fn renewal_var(ra: f64, rb: f64, (ea, va): (f64, f64), (eb, vb): (f64, f64), t: f64) -> f64 {
    let m = (ra * ea + rb * eb) / (ea + eb);
    let cycles = t / (ea + eb);
    cycles * ((ra - m).powi(2) * va + (rb - m).powi(2) * vb)
}

#[test]
fn on_off_sources_have_their_mean_rate() {
    // 50 clients at 20/s during on periods of mean 2 s, off periods of mean 6 s: on 1/4 of the
    // time. Each client's intensity is an independent alternating renewal process; the variance
    // of N is its mean plus 50 × r² × the renewal variance of its on time. Every client starts
    // on, which biases the count by at most r × E[on] per client: added to the tolerance.
    let (clients, rate, on, off) = (50u32, per_s(20.0), 2 * SEC, 6 * SEC);
    let t = 2000 * SEC;
    for (periods, var_of) in [
        (Periods::Exponential, (|m: f64| m * m) as fn(f64) -> f64),
        // Pareto(α) with mean μ has variance μ²/(α(α−2)): finite for α = 2.5.
        (Periods::Pareto { alpha: 2.5 }, |m: f64| m * m / (2.5 * 0.5)),
    ] {
        let (on_f, off_f) = (on as f64, off as f64);
        let var = clients as f64
            * renewal_var(
                rate,
                0.0,
                (on_f, var_of(on_f)),
                (off_f, var_of(off_f)),
                t as f64,
            );
        let bias = clients as f64 * rate * on_f;
        let intensity = Intensity::OnOff {
            rate,
            on,
            off,
            periods,
        };
        // The bias enters as a (bias/5)² variance, so that 5σ covers it.
        check_mean(intensity, clients, t, var + (bias / 5.0).powi(2), 5);
    }
}

#[test]
fn mmpp_has_its_mean_rate() {
    // Two states: 5/s for a mean 20 s, 80/s for a mean 5 s; mean rate 20/s. Shared by all
    // clients, so the renewal variance scales with clients².
    let (r, s) = ([per_s(5.0), per_s(80.0)], [20 * SEC, 5 * SEC]);
    let t = 3000 * SEC;
    let clients = 2u32;
    let (a, b) = (s[0] as f64, s[1] as f64);
    let var = (clients as f64).powi(2) * renewal_var(r[0], r[1], (a, a * a), (b, b * b), t as f64);
    let bias = clients as f64 * (r[1] - r[0]) * a;
    check_mean(
        Intensity::Mmpp { rates: r, stay: s },
        clients,
        t,
        var + (bias / 5.0).powi(2),
        6,
    );
}

/// The Kolmogorov–Smirnov statistic of `samples` against the CDF `cdf`.
fn ks(mut samples: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len() as f64;
    samples
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// The KS critical value at significance 1e-6 for `n` samples: `sqrt(ln(2/α)/(2n))`
/// (Dvoretzky–Kiefer–Wolfowitz–Massart), so a correct generator fails with probability < 1e-6.
fn ks_critical(n: usize) -> f64 {
    ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt()
}

#[test]
fn poisson_gaps_are_exponential() {
    let rate = crate::time::parse_rate("10/s").unwrap();
    let (a, _) = arrivals(
        &spec(Arrivals::Poisson(Intensity::Flat(rate)), 1, 10_000 * SEC),
        11,
    );
    let gaps: Vec<f64> = a
        .windows(2)
        .map(|w| (w[1].time - w[0].time) as f64)
        .collect();
    let mean = 1e8;
    let d = ks(gaps.clone(), |x| 1.0 - (-x / mean).exp());
    assert!(
        d < ks_critical(gaps.len()),
        "KS D = {d} over {} gaps",
        gaps.len()
    );
    // And a wrong rate is caught: the same gaps against a mean 3% off fail.
    let wrong = ks(gaps.clone(), |x| 1.0 - (-x / (mean * 1.03)).exp());
    assert!(wrong > ks_critical(gaps.len()));
}

#[test]
fn thinned_sine_rescales_to_a_unit_poisson_process() {
    // Time-rescaling theorem: if t_i are the events of a Poisson process of intensity λ, the
    // gaps Λ(t_i) − Λ(t_{i−1}) are Exp(1). This checks the thinning step itself.
    let intensity = Intensity::Sine {
        mean: per_s(20.0),
        amplitude: per_s(18.0),
        period: 60 * SEC,
        phase: 0,
    };
    let big_lambda = |t: Nanos| intensity.expected_events(t);
    let (a, _) = arrivals(
        &spec(Arrivals::Poisson(intensity.clone()), 1, 3000 * SEC),
        12,
    );
    let gaps: Vec<f64> = a
        .windows(2)
        .map(|w| big_lambda(w[1].time) - big_lambda(w[0].time))
        .collect();
    let d = ks(gaps.clone(), |x| 1.0 - (-x).exp());
    assert!(
        d < ks_critical(gaps.len()),
        "KS D = {d} over {} gaps",
        gaps.len()
    );
}

#[test]
fn pareto_periods_have_a_power_law_tail() {
    // P(X > x) = (x_m/x)^α for x ≥ x_m. With n samples the observed fraction is binomial:
    // standard deviation sqrt(p(1−p)/n).
    let (alpha, mean, n) = (1.5, SEC, 400_000);
    let x_m = mean as f64 * (alpha - 1.0) / alpha;
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let samples: Vec<f64> = (0..n)
        .map(|_| pareto_period(alpha, mean, &mut rng))
        .collect();
    assert!(samples.iter().all(|&x| x >= x_m * (1.0 - 1e-12)));
    for k in [2.0f64, 10.0, 100.0] {
        let p = k.powf(-alpha);
        let got = samples.iter().filter(|&&x| x > k * x_m).count() as f64 / n as f64;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (got - p).abs() < 5.0 * sd,
            "P(X > {k}·x_m) = {got}, expected {p}"
        );
    }
}

#[test]
fn zipf_population_shares_follow_the_weights() {
    // 100 Poisson clients, Zipf exponent 1: client j gets 1/(j+1) / H_100 of the requests.
    // Each client's count is binomial(N, share): 5 standard deviations.
    let rate = crate::time::parse_rate("1/s").unwrap();
    let mut s = spec(Arrivals::Poisson(Intensity::Flat(rate)), 100, 2000 * SEC);
    s.population.rates = RateDist::Zipf { exponent: 1.0 };
    let (a, keys) = arrivals(&s, 14);
    let h: f64 = (1..=100).map(|j| 1.0 / j as f64).sum();
    let n = a.len() as f64;
    // About 100 × 2000 requests in all.
    assert!((n - 200_000.0).abs() < 5.0 * 200_000f64.sqrt());
    for j in [0usize, 1, 9, 99] {
        let share = 1.0 / (j + 1) as f64 / h;
        let ip = format!("10.0.0.{}", j + 1);
        let got = a.iter().filter(|x| keys.name(x.key) == ip).count() as f64;
        let sd = (n * share * (1.0 - share)).sqrt();
        assert!(
            (got - n * share).abs() < 5.0 * sd,
            "client {j}: {got} vs {}",
            n * share
        );
    }
}

#[test]
fn lognormal_rates_average_the_given_rate() {
    // σ = 1: per-client multipliers exp(Z − 1/2) have mean 1 and variance e − 1. Over 2000
    // clients the mean multiplier has sd sqrt((e−1)/2000) ≈ 0.029; the Poisson noise on top
    // is negligible (mean 200 000). 5 sd of the multiplier: ±15%.
    let rate = crate::time::parse_rate("1/s").unwrap();
    let mut s = spec(Arrivals::Poisson(Intensity::Flat(rate)), 2000, 100 * SEC);
    s.population.rates = RateDist::Lognormal { sigma: 1.0 };
    let (a, _) = arrivals(&s, 15);
    let ratio = a.len() as f64 / 200_000.0;
    assert!(
        (ratio - 1.0).abs() < 5.0 * ((1f64.exp() - 1.0) / 2000.0).sqrt(),
        "{ratio}"
    );
}

#[test]
fn periods_within_a_span_are_counted_as_the_work_guard_estimates() {
    // The work guard counts a source's periods as `span / mean_within(span)`. Not a
    // statistical test (a Pareto shape near 1 has no variance to speak of): the estimate must
    // be within a factor of 1.5 of the periods drawn, averaged over 8 seeds, where the plain
    // mean is off by 10^4 for α = 1.000001.
    let span = 6.0 * SEC as f64;
    for (periods, mean) in [
        (Periods::Pareto { alpha: 1.000001 }, SEC),
        (Periods::Pareto { alpha: 1.5 }, SEC / 10),
        (Periods::Exponential, SEC / 100),
        (Periods::Exponential, 10 * SEC),
    ] {
        let mut drawn = 0u64;
        for seed in 0..8 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut t = 0.0;
            while t < span {
                t += super::intensity::period_of(periods, mean, &mut rng);
                drawn += 1;
            }
        }
        let got = drawn as f64 / 8.0;
        let estimate = span / periods.mean_within(mean, span);
        assert!(
            got / estimate < 1.5 && estimate / got < 1.5,
            "{periods:?}, mean {mean}: {got} periods drawn, {estimate} estimated"
        );
    }
}
