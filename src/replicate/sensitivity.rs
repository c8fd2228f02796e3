//! The sensitivity pass: each value of each `[[uncertain]]` input spliced in as `--set
//! FIELD=VALUE` (so any field can vary and each value is validated like the file), run under
//! the same seeds as the replicates, and its recommendation compared with the scenario's own.
//! An input whose value changes the contender recommended most often flips the verdict.

use super::{Replicate, most_chosen, run_seeds};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;
use serde::Serialize;

/// The scenario with one uncertain value spliced in.
#[derive(Debug, Clone)]
pub struct Variant {
    pub field: String,
    pub value: String,
    pub scenario: Scenario,
}

/// Every `[[uncertain]]` value spliced into `text` after the command line's `set`, validated:
/// the variants, or every value that does not fit, each named by its line and field. The
/// variants keep `scenario`'s seed and `--skip-bad-lines`.
pub fn check_uncertain(text: &str, set: &[Override], scenario: &Scenario) -> Result<Vec<Variant>> {
    let skip = scenario.traffic.iter().any(|s| {
        matches!(&s.arrivals, crate::traffic::Arrivals::Replay { options, .. } if options.skip_bad_lines)
    });
    let mut variants = Vec::new();
    let mut errors = Vec::new();
    for u in &scenario.replicates.uncertain {
        for (j, v) in u.values.iter().enumerate() {
            let mut overrides = set.to_vec();
            overrides.push(Override {
                field: u.field.clone(),
                value: v.toml.clone(),
            });
            match Scenario::parse_with(text, &scenario.path, &overrides) {
                Ok(s) => {
                    let mut s = s.with_seed(scenario.seed);
                    if skip {
                        s = s.with_skip_bad_lines();
                    }
                    variants.push(Variant {
                        field: u.field.clone(),
                        value: v.shown.clone(),
                        scenario: s,
                    });
                }
                Err(e) => errors.push(Error::Scenario {
                    location: v.at.clone(),
                    field: Some(format!("{}.values[{j}]", u.name)),
                    message: format!("`{}={}` does not fit the scenario: {e}", u.field, v.shown),
                }),
            }
        }
    }
    match errors.len() {
        0 => Ok(variants),
        1 => Err(errors.remove(0)),
        _ => Err(Error::Several(errors)),
    }
}

/// What the sensitivity pass found (`sensitivity.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    pub scenario: String,
    /// The seeds every value ran under (the replicates').
    pub seeds: Vec<u64>,
    /// The recommendation of the scenario as written.
    pub baseline: Choice,
    /// Each value tried, in file order.
    pub inputs: Vec<Tried>,
    /// One line per value that changes the recommendation.
    pub flips: Vec<String>,
}

/// A recommendation over some seeds: the contender chosen most often and how often.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub recommended: String,
    pub chosen: usize,
    pub of: usize,
}

/// One uncertain value and what it recommends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tried {
    pub set: String,
    pub value: String,
    pub recommended: String,
    pub chosen: usize,
    pub of: usize,
    /// It recommends another contender than the baseline.
    pub flips: bool,
}

fn choice(scenario: &Scenario, runs: &[Replicate]) -> Choice {
    let choices: Vec<usize> = runs.iter().map(|r| r.recommended).collect();
    let (best, chosen) = most_chosen(&choices, scenario.algorithms.len());
    Choice {
        recommended: scenario.algorithms[best].name.clone(),
        chosen,
        of: runs.len(),
    }
}

impl Sensitivity {
    /// Runs every variant under the seeds of `baseline` (the scenario's own replicates).
    pub fn run(scenario: &Scenario, baseline: &[Replicate], variants: &[Variant]) -> Result<Self> {
        let seeds: Vec<u64> = baseline.iter().map(|r| r.seed).collect();
        let base = choice(scenario, baseline);
        let mut inputs = Vec::new();
        let mut flips = Vec::new();
        for v in variants {
            let runs = run_seeds(&v.scenario, &seeds)?;
            let c = choice(&v.scenario, &runs);
            let flipped = c.recommended != base.recommended;
            if flipped {
                flips.push(format!(
                    "{}={}: recommended {} instead of {}",
                    v.field, v.value, c.recommended, base.recommended
                ));
            }
            inputs.push(Tried {
                set: v.field.clone(),
                value: v.value.clone(),
                recommended: c.recommended,
                chosen: c.chosen,
                of: c.of,
                flips: flipped,
            });
        }
        Ok(Sensitivity {
            scenario: scenario.name.clone(),
            seeds,
            baseline: base,
            inputs,
            flips,
        })
    }

    /// `sensitivity.json`.
    pub fn json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("plain data serialises");
        out.push(b'\n');
        out
    }
}
