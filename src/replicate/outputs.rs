//! What `rlsim run` does with replicates: decide from the flags and the scenario what to run
//! (checking every uncertain value before anything runs), run it, and write
//! `replicates.json`, `replicates.csv` and `sensitivity.json` into `--out`.

use super::sensitivity::{Sensitivity, Variant, check_uncertain};
use super::summary::Replicates;
use super::{render, run_seeds, seeds};
use crate::error::{Error, Result};
use crate::report::{Flip, Robustness};
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;

/// What a run's replicates will do, checked before the run.
#[derive(Debug, Clone)]
pub struct Plan {
    scenario: Scenario,
    /// How many replicates.
    count: u32,
    /// The variants of the sensitivity pass, when it runs.
    variants: Option<Vec<Variant>>,
}

/// What the replicates found, for the terminal, the files and the report.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub replicates: Replicates,
    pub sensitivity: Option<Sensitivity>,
}

impl Plan {
    /// The plan for `scenario` (read from `text` with the command line's `set`): `--replicates`
    /// or else the scenario's `replicates`, and the sensitivity pass with `--sensitivity`, or
    /// with replicates when the scenario declares `[[uncertain]]` inputs. `None`: nothing to
    /// do. Every uncertain value is validated whether or not it runs.
    pub fn new(
        text: &str,
        set: &[String],
        scenario: &Scenario,
        replicates: Option<u32>,
        sensitivity: bool,
    ) -> Result<Option<Plan>> {
        if let Some(n) = replicates
            && !(1..=super::MAX_REPLICATES).contains(&n)
        {
            return Err(Error::Usage(format!(
                "--replicates {n}: must be from 1 to {}",
                super::MAX_REPLICATES
            )));
        }
        let set = set
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<Vec<_>>>()?;
        let uncertain = !scenario.replicates.uncertain.is_empty();
        let variants = if uncertain {
            Some(check_uncertain(text, &set, scenario)?)
        } else {
            None
        };
        let count = replicates.or(scenario.replicates.count);
        if count.is_none() && !sensitivity {
            return Ok(None);
        }
        let count = count.unwrap_or(1);
        let runs_sensitivity = sensitivity || (uncertain && count > 1);
        Ok(Some(Plan {
            scenario: scenario.clone(),
            count,
            variants: if runs_sensitivity {
                Some(variants.unwrap_or_default())
            } else {
                None
            },
        }))
    }

    /// Runs the replicates, then the sensitivity pass.
    pub fn run(&self) -> Result<Outcome> {
        let seeds = seeds(self.scenario.seed, self.count);
        let runs = run_seeds(&self.scenario, &seeds)?;
        let mut replicates = Replicates::new(&self.scenario, &runs);
        replicates.warnings = super::warnings::all(&self.scenario, Some(&replicates));
        let sensitivity = match &self.variants {
            Some(v) => Some(Sensitivity::run(&self.scenario, &runs, v)?),
            None => None,
        };
        Ok(Outcome {
            replicates,
            sensitivity,
        })
    }
}

impl Outcome {
    /// The terminal section.
    pub fn terminal(&self) -> String {
        let mut out = render::terminal(&self.replicates);
        if let Some(s) = &self.sensitivity {
            out.push_str(&render::sensitivity_terminal(s));
        }
        out
    }

    /// What the verdict judges of the replicates and the sensitivity pass: the contender
    /// ranked first in each replicate and each value that flips the recommendation.
    pub fn robustness(&self) -> Robustness {
        let flips = self.sensitivity.as_ref().map_or_else(Vec::new, |s| {
            (s.inputs.iter())
                .filter(|t| t.flips)
                .map(|t| Flip {
                    field: t.set.clone(),
                    value: t.value.clone(),
                    recommended: t.recommended.clone(),
                    instead_of: s.baseline.recommended.clone(),
                })
                .collect()
        });
        Robustness {
            by_replicate: self.replicates.recommendation.by_replicate.clone(),
            stable_share: super::STABLE_SHARE,
            flips,
        }
    }

    /// The report's section (report.md and report.html).
    pub fn blocks(&self) -> Vec<crate::report::document::Block> {
        render::blocks(&self.replicates, self.sensitivity.as_ref())
    }

    /// The files it adds to `--out`, by name (written, and listed in the manifest, with the
    /// run's own: [`crate::report::write_outputs`]).
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = vec![
            ("replicates.json".to_string(), self.replicates.json()),
            ("replicates.csv".to_string(), self.replicates.csv()),
        ];
        if let Some(s) = &self.sensitivity {
            files.push(("sensitivity.json".into(), s.json()));
        }
        files
    }
}
