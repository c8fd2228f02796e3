//! Rankings that survive the seed: `rlsim run --replicates N` runs a scenario under N seeds
//! derived from its own, every contender in each, and reports each headline figure as a mean
//! with a 95% interval and how often each contender is the one the report's ranking
//! recommends; `--sensitivity` tries the values of the scenario's `[[uncertain]]` inputs and
//! says which flip the recommendation. Warnings name an unstable recommendation and periodic
//! sources that resonate with a window. See docs/replicates.md.
//!
//! Replicates run in parallel (rayon) and their results are kept in replicate order: every
//! output is a function of the seeds alone, so the thread count never shows in them.

pub(crate) mod outputs;
pub(crate) mod render;
pub(crate) mod sensitivity;
pub(crate) mod stats;
pub(crate) mod summary;
pub(crate) mod warnings;

pub use crate::scenario::replicates::MAX_REPLICATES;

use crate::error::Result;
use crate::metrics::{AlgorithmReport, Flat};
use crate::rng::{self, Stream};
use crate::scenario::{Scenario, Scope};
use rand::RngCore;
use rayon::prelude::*;

/// A recommendation chosen in fewer than this share of the replicates is not stable.
pub const STABLE_SHARE: f64 = 0.8;

/// The figures of each contender averaged over replicates, by their metric names
/// (docs/metrics.md).
pub const HEADLINE: [&str; 9] = [
    "admitted",
    "rejected",
    "legit_goodput",
    "abusive_leakage",
    "policy_violations",
    "burst_factor",
    "needless_rejections",
    "collateral_rejections",
    "legit_delay_p99_ns",
];

/// The seeds of `n` replicates of a scenario with seed `seed`: replicate 1 runs `seed` itself
/// (so it is the plain run), replicate `k ≥ 2` the `(k-1)`-th 64-bit draw of ChaCha8 keyed by
/// `seed` on the replicates' stream (`Stream::Replicates`). The seeds of `n` replicates are
/// the first `n` of any larger number.
pub fn seeds(seed: u64, n: u32) -> Vec<u64> {
    let mut rng = rng::rng(seed, Stream::Replicates, 0);
    std::iter::once(seed)
        .chain(std::iter::repeat_with(move || rng.next_u64()))
        .take(n as usize)
        .collect()
}

/// What one replicate left: each contender's headline figures and the contender recommended.
#[derive(Debug, Clone, PartialEq)]
pub struct Replicate {
    pub seed: u64,
    /// By contender (scenario order), by [`HEADLINE`] figure; `None` where the figure has no
    /// value in that run.
    pub figures: Vec<Vec<Option<f64>>>,
    /// The index of the contender the ranking puts first.
    pub recommended: usize,
}

/// Runs `scenario` under each of `seeds` (in parallel; results in seed order).
pub fn run_seeds(scenario: &Scenario, seeds: &[u64]) -> Result<Vec<Replicate>> {
    seeds
        .par_iter()
        .map(|&seed| {
            let seeded = scenario.clone().with_seed(seed);
            // With `[[alert]]` rules their figures join the reports, as goals may name them.
            let reports = crate::observe::figures(&seeded, crate::sim::RunOptions::new())?;
            Ok(replicate(scenario, seed, &reports))
        })
        .collect()
}

/// One replicate's figures and recommendation from its reports.
pub fn replicate(scenario: &Scenario, seed: u64, reports: &[AlgorithmReport]) -> Replicate {
    let figures = reports
        .iter()
        .map(|r| {
            let flat = Flat::of_report(r);
            HEADLINE
                .iter()
                .map(|f| flat.get(&Scope::Algorithm, f).flatten())
                .collect()
        })
        .collect();
    Replicate {
        seed,
        figures,
        recommended: recommended(scenario, reports),
    }
}

/// The index of the contender the report's ranking recommends.
pub fn recommended(scenario: &Scenario, reports: &[AlgorithmReport]) -> usize {
    let ranked = crate::report::ranking::rank(&scenario.goals, reports);
    let first = &ranked[0].report.algorithm;
    reports
        .iter()
        .position(|r| &r.algorithm == first)
        .expect("the ranking ranks the reports it was given")
}

/// The contender chosen most often among `choices` (indices into `names`), with its count;
/// a tie goes to the one first in the scenario's order.
pub fn most_chosen(choices: &[usize], contenders: usize) -> (usize, usize) {
    let mut counts = vec![0usize; contenders];
    for &c in choices {
        counts[c] += 1;
    }
    let best = (0..contenders)
        .max_by(|&a, &b| counts[a].cmp(&counts[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    (best, counts.get(best).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivation is pinned: these seeds are what `--replicates` ran in every version.
    #[test]
    fn seeds_are_derived_deterministically() {
        let s = seeds(3, 4);
        assert_eq!(s[0], 3);
        assert_eq!(s, seeds(3, 4));
        assert_eq!(&seeds(3, 6)[..4], &s[..]);
        assert_eq!(seeds(3, 1), [3]);
        assert_ne!(seeds(4, 2)[1], s[1]);
        assert_eq!(s, EXPECTED_SEEDS_OF_3);
    }

    const EXPECTED_SEEDS_OF_3: [u64; 4] = [
        3,
        9_346_681_716_861_013_515,
        4_187_922_516_718_361_880,
        12_345_074_826_223_311_006,
    ];

    #[test]
    fn most_chosen_breaks_ties_by_order() {
        assert_eq!(most_chosen(&[2, 1, 2, 1], 3), (1, 2));
        assert_eq!(most_chosen(&[0, 2, 2], 3), (2, 2));
        assert_eq!(most_chosen(&[], 3), (0, 0));
    }
}
