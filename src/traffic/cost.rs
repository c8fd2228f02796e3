//! What each request weighs: 1 unless its source says (`cost`, `cost_dist`, `costs`, or a cost
//! per method), for limits that count points rather than requests (GraphQL query costs,
//! batches). Only a source whose costs vary draws, from its own `Stream::Costs` (`rng.rs`), so
//! the arrivals of every source, costly or not, are the ones it always sent.

use super::Arrival;
use super::method::Method;
use super::population::Picker;
use super::stamp::Stamp;
use crate::algorithms::Cost;
use crate::time::Nanos;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal, Zipf};
use strum::VariantArray;

/// How a source's request costs are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum CostDist {
    /// Every request weighs this (`cost = 5`); 1 by default.
    Fixed(Cost),
    /// A weighted mix (`costs = [{ cost = 1, weight = 9 }, { cost = 50 }]`).
    Mix(Vec<(Cost, u32)>),
    /// Whole numbers from `min` to `max`, equally likely (`cost_dist = "uniform"`).
    Uniform {
        /// The cheapest request.
        min: Cost,
        /// The costliest request.
        max: Cost,
    },
    /// Log-normal with mean `mean`: `mean · exp(σZ − σ²/2)`, Z standard normal, rounded to the
    /// nearest whole number and kept within 1 to `max` (`cost_dist = "lognormal"`). Floating
    /// point draws a cost; every count made of it is whole.
    Lognormal {
        /// The mean cost before rounding.
        mean: f64,
        /// The standard deviation σ of the cost's logarithm.
        sigma: f64,
        /// The costliest request.
        max: Cost,
    },
    /// Zipf over 1 to `max`: cost `k` with probability ∝ `1/k^s` (`cost_dist = "zipf"`): most
    /// requests cheap, a few very costly.
    Zipf {
        /// The costliest request.
        max: Cost,
        /// The power `s`.
        exponent: f64,
    },
}

/// What a request's response settles as its actual cost, below the cost charged up front
/// (Shopify's GraphQL refund): the difference is given back to the limiters that refund.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Actual {
    /// The requested cost: nothing comes back.
    #[default]
    Requested,
    /// At most this (`actual_cost`): a request that asked for less costs what it asked.
    Fixed(Cost),
    /// A share of the requested cost, rounded to the nearest whole unit (`actual_share`),
    /// drawn uniformly from `min` to `max` per request when `actual_share_min` is given.
    /// Floating point draws the share; the refund is whole.
    Share {
        /// The smallest share.
        min: f64,
        /// The largest share.
        max: f64,
    },
}

impl Actual {
    /// The units a request of `cost` gives back, its share drawn from `rng` if it varies.
    fn refund(self, cost: Cost, rng: &mut ChaCha8Rng) -> Cost {
        let actual = match self {
            Actual::Requested => cost,
            Actual::Fixed(c) => c.min(cost),
            Actual::Share { min, max } => {
                let share = if min < max {
                    rng.random_range(min..=max)
                } else {
                    max
                };
                (f64::from(cost) * share).round() as Cost
            }
        };
        cost - actual.min(cost)
    }
}

/// A source's costs: drawn from `dist`, except for the methods that have their own; what
/// their responses settle, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// The cost of a request whose method has none of its own.
    pub dist: CostDist,
    /// Per method code ([`Method::code`]), a fixed cost for its requests.
    pub per_method: [Option<Cost>; Method::VARIANTS.len()],
    /// What each response settles as the request's actual cost.
    pub actual: Actual,
    /// How long after its admission (and any delay) a request's response ends and settles
    /// its actual cost (`response_time`), in ns.
    pub response_time: Nanos,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            dist: CostDist::Fixed(1),
            per_method: [None; Method::VARIANTS.len()],
            actual: Actual::Requested,
            response_time: 0,
        }
    }
}

impl CostModel {
    /// Whether a response may settle less than its request was charged.
    pub fn settles(&self) -> bool {
        self.actual != Actual::Requested
    }

    /// Whether every request weighs 1 (nothing to draw or set).
    pub fn is_unit(&self) -> bool {
        self.dist == CostDist::Fixed(1) && self.per_method.iter().all(|c| c.is_none_or(|c| c == 1))
    }

    /// The costliest request the model can send.
    pub fn max(&self) -> Cost {
        let base = match &self.dist {
            CostDist::Fixed(c) => *c,
            CostDist::Mix(list) => list.iter().map(|e| e.0).max().unwrap_or(1),
            CostDist::Uniform { max, .. }
            | CostDist::Lognormal { max, .. }
            | CostDist::Zipf { max, .. } => *max,
        };
        self.per_method
            .iter()
            .flatten()
            .fold(base, |m, &c| m.max(c))
    }
}

/// The draw of one cost (or token count) from a [`CostDist`].
pub(super) enum Draw {
    Fixed(Cost),
    Mix(Vec<Cost>, Picker),
    Uniform(Cost, Cost),
    Lognormal { mean: f64, sigma: f64, max: Cost },
    Zipf(Zipf<f64>),
}

impl Draw {
    /// Draws from `dist`.
    pub(super) fn new(dist: &CostDist) -> Self {
        match dist {
            CostDist::Fixed(c) => Draw::Fixed(*c),
            CostDist::Mix(list) => {
                let weights: Vec<f64> = list.iter().map(|e| f64::from(e.1)).collect();
                Draw::Mix(list.iter().map(|e| e.0).collect(), Picker::new(&weights))
            }
            CostDist::Uniform { min, max } => Draw::Uniform(*min, *max),
            CostDist::Lognormal { mean, sigma, max } => Draw::Lognormal {
                mean: *mean,
                sigma: *sigma,
                max: *max,
            },
            CostDist::Zipf { max, exponent } => Draw::Zipf(
                Zipf::new(f64::from(*max), *exponent).expect("validated: max ≥ 1, s > 0"),
            ),
        }
    }

    /// One draw from `rng` (none for a fixed value).
    pub(super) fn sample(&self, rng: &mut ChaCha8Rng) -> Cost {
        match self {
            Draw::Fixed(c) => *c,
            Draw::Mix(costs, picker) => costs[picker.pick(rng)],
            Draw::Uniform(min, max) => rng.random_range(*min..=*max),
            Draw::Lognormal { mean, sigma, max } => {
                let z: f64 = StandardNormal.sample(rng);
                let x = (mean * (sigma * z - sigma * sigma / 2.0).exp()).round();
                // `as` saturates: a draw beyond u32 is kept at `max` by the clamp.
                (x as Cost).clamp(1, *max)
            }
            Draw::Zipf(z) => z.sample(rng) as Cost,
        }
    }
}

/// Sets each request's cost, and what its response gives back.
pub struct Costs {
    draw: Draw,
    per_method: [Option<Cost>; Method::VARIANTS.len()],
    rng: ChaCha8Rng,
    actual: Actual,
    /// The draws of actual shares, apart from the costs' (`Stream::Settles`): stating an
    /// actual cost leaves every cost as it was.
    settles: ChaCha8Rng,
}

impl Costs {
    /// Costs by `model`, drawn from `rng`, actual shares from `settles`.
    pub fn new(model: &CostModel, rng: ChaCha8Rng, settles: ChaCha8Rng) -> Self {
        Costs {
            draw: Draw::new(&model.dist),
            per_method: model.per_method,
            rng,
            actual: model.actual,
            settles,
        }
    }
}

impl Stamp for Costs {
    fn stamp(&mut self, a: &mut Arrival) {
        a.cost = match self
            .per_method
            .get(usize::from(a.method))
            .copied()
            .flatten()
        {
            Some(c) => c,
            None => self.draw.sample(&mut self.rng),
        };
        a.refund = self.actual.refund(a.cost, &mut self.settles);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::traffic::stamp::Stamped;
    use crate::traffic::{KeySpace, Source};
    use rand::SeedableRng;

    /// A source of `n` requests at times 0, 1, ..., methods alternating GET and POST.
    struct Plain(u64, u64);
    impl Source for Plain {
        fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
            if self.0 == self.1 {
                return Ok(None);
            }
            self.0 += 1;
            let mut a = Arrival::new(self.0, 0, 0, 0);
            a.method = (self.0 % 2) as u8;
            Ok(Some(a))
        }
    }

    fn costs(model: CostModel, n: u64) -> Vec<Cost> {
        let mut keys = KeySpace::default();
        let (rng, settles) = (ChaCha8Rng::seed_from_u64(7), ChaCha8Rng::seed_from_u64(8));
        let mut s = Stamped::new(Box::new(Plain(0, n)), Costs::new(&model, rng, settles));
        std::iter::from_fn(|| s.next_arrival(&mut keys).unwrap())
            .map(|a| a.cost)
            .collect()
    }

    #[test]
    fn a_method_of_its_own_overrides_the_draw() {
        let mut per_method = [None; Method::VARIANTS.len()];
        per_method[Method::Post.code() as usize] = Some(10);
        let model = CostModel {
            dist: CostDist::Fixed(2),
            per_method,
            ..CostModel::default()
        };
        assert_eq!(costs(model.clone(), 4), [10, 2, 10, 2]);
        assert_eq!(model.max(), 10);
        assert!(!model.is_unit() && CostModel::default().is_unit());
    }

    #[test]
    fn draws_stay_in_their_range_and_follow_their_weights() {
        let uniform = CostModel {
            dist: CostDist::Uniform { min: 3, max: 5 },
            ..CostModel::default()
        };
        let drawn = costs(uniform, 3000);
        for c in 3..=5 {
            let n = drawn.iter().filter(|&&x| x == c).count();
            assert!((900..=1100).contains(&n), "{c}: {n}");
        }
        assert!(drawn.iter().all(|c| (3..=5).contains(c)));
        let mix = CostModel {
            dist: CostDist::Mix(vec![(1, 9), (50, 1)]),
            ..CostModel::default()
        };
        let drawn = costs(mix, 10_000);
        let costly = drawn.iter().filter(|&&x| x == 50).count();
        assert!((850..=1150).contains(&costly), "{costly}");
        let lognormal = CostModel {
            dist: CostDist::Lognormal {
                mean: 20.0,
                sigma: 1.0,
                max: 200,
            },
            ..CostModel::default()
        };
        let drawn = costs(lognormal, 20_000);
        assert!(drawn.iter().all(|c| (1..=200).contains(c)));
        let mean = drawn.iter().map(|&c| f64::from(c)).sum::<f64>() / drawn.len() as f64;
        // The clamp at 200 trims the tail a little: mean just under 20.
        assert!((18.5..=20.5).contains(&mean), "{mean}");
        let zipf = CostModel {
            dist: CostDist::Zipf {
                max: 100,
                exponent: 1.0,
            },
            ..CostModel::default()
        };
        let drawn = costs(zipf, 10_000);
        let ones = drawn.iter().filter(|&&x| x == 1).count();
        // P(1) = 1 / H(100) ≈ 0.193.
        assert!((1700..=2150).contains(&ones), "{ones}");
        assert!(drawn.iter().all(|c| (1..=100).contains(c)));
    }
}
