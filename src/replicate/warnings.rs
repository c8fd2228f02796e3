//! Warnings a verdict should carry about its own robustness: a recommendation that changes with
//! the seed, and a perfectly periodic source whose period fits a window a whole number of
//! times, so that a client reclaims its own expiring slots at the same phase every window and
//! the window-based figures depend on that alignment (nat.toml's scraper at 60/min against a
//! 1 min window: the issue that made rlsim grow replicates).

use super::summary::Replicates;
use crate::report::resonance::resonance;
use crate::scenario::Scenario;

/// Every warning: the recommendation's stability (with replicates) and the resonances.
pub fn all(scenario: &Scenario, replicates: Option<&Replicates>) -> Vec<String> {
    let mut out: Vec<String> = replicates.and_then(stability).into_iter().collect();
    out.extend(resonance(scenario).iter().map(|r| r.text()));
    out
}

/// The warning of a recommendation chosen in fewer than the stable share of replicates.
pub fn stability(r: &Replicates) -> Option<String> {
    let s = &r.recommendation;
    if s.stable || s.of < 2 {
        return None;
    }
    let others: Vec<String> = r
        .by_first()
        .iter()
        .filter(|c| c.ranked_first > 0 && c.name != s.recommended)
        .map(|c| format!("{} in {}", c.name, c.ranked_first))
        .collect();
    Some(format!(
        "the recommendation is not stable: {} is recommended in {} of {} replicates ({:.0}%, under the {:.0}% a stable choice needs); the others: {}",
        s.recommended,
        s.chosen,
        s.of,
        100.0 * s.share,
        100.0 * s.threshold,
        others.join(", ")
    ))
}
