//! The validated scenario: what the engine, the reports and the checks read.

use super::alerts::AlertSpec;
use super::deployment::Deployment;
use super::stack::Stack;
use crate::algorithms::{AlgorithmKind, LimiterVisitor, Params, ParamsError, Profile};
use crate::error::Location;
use crate::policy::Policy;
use crate::scenario::expect::Expectation;
use crate::scenario::goals::Goal;
use crate::time::Nanos;
use crate::traffic::Reaction;
use crate::traffic::SourceSpec;
use std::path::{Path, PathBuf};

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The leading `#` comment block of the file, without the `#` marks: the scenario's story,
    /// which the reports show as their introduction (see docs/reports.md).
    pub introduction: String,
    /// The file it was read from.
    pub path: PathBuf,
    pub seed: u64,
    /// Traffic is generated in `[0, duration)`; delayed requests may be released after it.
    pub duration: Nanos,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch: a replayed trace's
    /// own time, else `start` ([`crate::time::DEFAULT_START`] by default). Profiles whose
    /// library aligns windows to the wall clock read it (see docs/scenario-format.md).
    pub start: Nanos,
    pub policy: Policy,
    pub algorithms: Vec<AlgorithmSpec>,
    pub traffic: Vec<SourceSpec>,
    /// Width of a `timeseries.csv` bucket.
    pub bucket: Nanos,
    /// What each source's clients do after a rejection, by source index.
    pub reactions: Vec<Reaction>,
    /// What the results must satisfy (`expect = [...]`), checked by `rlsim check`.
    pub expectations: Vec<Expectation>,
    /// The priorities the report ranks algorithms against (`[goals]`).
    pub goals: Vec<Goal>,
    /// Alert rules replayed on the virtual timeline (`[[alert]]`).
    pub alerts: Vec<AlertSpec>,
    /// The `[sweep]` table: checked for shape here, read by `rlsim sweep` and `rlsim check`.
    pub sweep: Option<SweepSpec>,
}

/// The `[sweep]` table as written, each string with where it was written (for errors).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSpec {
    pub set: Vec<(String, Location)>,
    pub prefer: Option<(String, Location)>,
    pub chart: Option<(String, Location)>,
    pub expect: Vec<(String, Location)>,
}

/// One contender to run: an algorithm of the short form with its parameters (the policy's,
/// unless overridden), or a `[[contender]]` with its stack of rules. Reports name it `name`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgorithmSpec {
    /// The algorithm's name in the short form; the contender's name otherwise.
    pub name: String,
    pub description: String,
    /// The (first rule's) algorithm and parameters.
    pub kind: AlgorithmKind,
    pub params: Params,
    /// `None`: one limiter under the policy's key for every request (the short form).
    pub stack: Option<Box<Stack>>,
    /// For a profile, the limiter configured from its native parameters (`[profile.NAME]`).
    pub profile: Option<Profile>,
    /// Several replicas and a store (`[deployment]`, `[contender.deployment]`); `None`: one node.
    pub deployment: Option<Box<Deployment>>,
}

impl AlgorithmSpec {
    /// A short-form entry: `kind` under the policy, named after it.
    pub fn short(kind: AlgorithmKind, params: Params) -> Self {
        AlgorithmSpec {
            name: kind.name().to_string(),
            description: String::new(),
            kind,
            params,
            stack: None,
            profile: None,
            deployment: None,
        }
    }

    /// Calls `visitor` with the concrete limiter this spec runs.
    pub fn visit<V: LimiterVisitor>(&self, visitor: V) -> Result<V::Output, ParamsError> {
        match self.profile {
            Some(profile) => Ok(profile.visit(visitor)),
            None => self.kind.visit(self.params, visitor),
        }
    }
}

impl Scenario {
    /// The scenario with malformed trace lines counted and skipped instead of refused (the
    /// `--skip-bad-lines` flag).
    pub fn with_skip_bad_lines(mut self) -> Scenario {
        for s in &mut self.traffic {
            if let crate::traffic::Arrivals::Replay { options, .. } = &mut s.arrivals {
                options.skip_bad_lines = true;
            }
        }
        self
    }

    /// The files a run of this scenario reads: the scenario file and its replayed traces. No
    /// output may be one of them.
    pub fn inputs(&self) -> impl Iterator<Item = &Path> {
        let traces = self.traffic.iter().filter_map(|s| match &s.arrivals {
            crate::traffic::Arrivals::Replay { path, .. } => Some(path.as_path()),
            _ => None,
        });
        std::iter::once(self.path.as_path()).chain(traces)
    }

    /// The scenario with another seed (the `--seed` flag).
    pub fn with_seed(mut self, seed: u64) -> Scenario {
        self.seed = seed;
        self
    }
}

/// The contender list of a scenario: `[[contender]]` entries when there are any, else one per
/// algorithm of the short form (see the module docs).
pub fn uses_contenders(scenario: &Scenario) -> bool {
    scenario.algorithms.iter().any(|a| a.stack.is_some())
}

/// Whether some contender of `scenario` runs with a deployment.
pub fn uses_deployments(scenario: &Scenario) -> bool {
    scenario.algorithms.iter().any(|a| a.deployment.is_some())
}
