//! A figure over replicates: its mean and the 95% Student t interval on the mean.
//!
//! The interval is `mean ± t(0.975, n-1) · s / √n`, `s` the sample standard deviation (divisor
//! `n - 1`). It assumes the replicates are independent draws of one distribution (they are:
//! each runs its own seed) and is honest for a figure whose mean is roughly normal over that
//! many seeds. All arithmetic is `f64`, summed in replicate order, so the same replicates give
//! the same bits on any number of threads. `t(0.975, df)` is found by bisection on the t
//! distribution's CDF (the regularised incomplete beta function), to full `f64` precision.

use serde::Serialize;

/// One figure of one contender over the replicates that have it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Replicates with a value (a share with nothing to divide, such as `abusive_leakage`
    /// without abusive traffic, has none).
    pub n: usize,
    pub mean: f64,
    /// The 95% interval; `None` below two values.
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Estimate {
    /// The estimate of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (low, high) = if n < 2 {
            (None, None)
        } else {
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            let sd = (ss / (n - 1) as f64).sqrt();
            let half = t_quantile_975((n - 1) as f64) * sd / (n as f64).sqrt();
            (Some(mean - half), Some(mean + half))
        };
        Some(Estimate {
            n,
            mean,
            low,
            high,
            min,
            max,
        })
    }
}

/// `t` such that `P(T ≤ t) = 0.975` for Student's t with `df` degrees of freedom.
pub fn t_quantile_975(df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0e4_f64);
    // 200 halvings reach the spacing of f64 long before; stop when the midpoint stops moving.
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if t_cdf(mid, df) < 0.975 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `P(T ≤ t)` for `t ≥ 0`.
fn t_cdf(t: f64, df: f64) -> f64 {
    1.0 - 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

/// The regularised incomplete beta function `I_x(a, b)` (Numerical Recipes' continued fraction,
/// evaluated where it converges fast).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let step = |num: f64, c: &mut f64, d: &mut f64| {
            *d = 1.0 + num * *d;
            if d.abs() < TINY {
                *d = TINY;
            }
            *c = 1.0 + num / *c;
            if c.abs() < TINY {
                *c = TINY;
            }
            *d = 1.0 / *d;
        };
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        step(even, &mut c, &mut d);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        step(odd, &mut c, &mut d);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms: about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1-x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// The printed tables' 97.5% quantiles (to their 3 or 6 decimals).
    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (3.0, 3.182_446),
            (4.0, 2.776_445),
            (9.0, 2.262_157),
            (19.0, 2.093_024),
            (30.0, 2.042_272),
            (100.0, 1.983_972),
            (9999.0, 1.960_201),
        ] {
            let got = t_quantile_975(df);
            assert!(close(got, t, 2e-6), "df {df}: {got} vs {t}");
        }
    }

    /// [1, 2, 3, 4] by hand: mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, so
    /// s = √(5/3) = 1.290994; s/√4 = 0.645497; t(0.975, 3) = 3.182446; half-width 2.054260.
    #[test]
    fn interval_of_one_to_four_by_hand() {
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(e.n, 4);
        assert_eq!(e.mean, 2.5);
        assert_eq!((e.min, e.max), (1.0, 4.0));
        let half = 3.182_446_305 * (5.0f64 / 3.0).sqrt() / 2.0;
        assert!(close(half, 2.054_260, 1e-6), "{half}");
        assert!(close(e.low.unwrap(), 2.5 - 2.054_260, 1e-6), "{e:?}");
        assert!(close(e.high.unwrap(), 2.5 + 2.054_260, 1e-6), "{e:?}");
    }

    #[test]
    fn constant_and_single_values() {
        let e = Estimate::of(&[7.0, 7.0, 7.0]).unwrap();
        assert_eq!((e.mean, e.low, e.high), (7.0, Some(7.0), Some(7.0)));
        let one = Estimate::of(&[3.0]).unwrap();
        assert_eq!((one.mean, one.low, one.high), (3.0, None, None));
        assert_eq!(Estimate::of(&[]), None);
    }
}
