//! The validated scenario: what the engine, the reports and the checks read.

use super::alerts::AlertSpec;
use super::deployment::Deployment;
use super::stack::Stack;
use crate::algorithms::{AlgorithmKind, LimiterSpec, Params, ParamsError, Profile};
use crate::error::{Location, Result};
use crate::metrics::Intent;
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
    /// The scenario's `name`, trimmed and non-empty; shown in tables and `summary.json`.
    pub name: String,
    /// The scenario's `description`, trimmed (empty when none); copied to `summary.json`.
    pub description: String,
    /// The leading `#` comment block of the file, without the `#` marks: the scenario's story,
    /// which the reports show as their introduction (see docs/reports.md).
    pub introduction: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// Seeds the random traffic (`seed`, or `rlsim run --seed`).
    pub seed: u64,
    /// Traffic is generated in `[0, duration)`; delayed requests may be released after it.
    pub duration: Nanos,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch: a replayed trace's
    /// own time, else `start` ([`crate::time::DEFAULT_START`] by default). Profiles whose
    /// library aligns windows to the wall clock read it (see docs/scenario-format.md).
    pub start: Nanos,
    /// The `[policy]`: limit, window, burst and what requests are keyed on.
    pub policy: Policy,
    /// What each real client is entitled to: every contender's per-client figures are
    /// judged against it (`[intent]`, else the policy's limit, window and burst per client).
    pub intent: Intent,
    /// The contenders, in the order reports list them.
    pub algorithms: Vec<Contender>,
    /// The `[[traffic]]` sources; a source's index is its position here.
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
    /// `replicates = N` and `[[uncertain]]` (docs/replicates.md).
    pub replicates: super::replicates::ReplicateSpec,
    /// `[backtest] model`: the contender a back-test shows first, as the calibration (`None`:
    /// the first contender).
    pub backtest_model: Option<String>,
}

/// The `[sweep]` table as written, each string with where it was written (for errors).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSpec {
    /// The axes, as `--set` takes them (`policy.limit=90..150:10`).
    pub set: Vec<(String, Location)>,
    /// The goal that decides the recommendation (`min_legit_goodput`).
    pub prefer: Option<(String, Location)>,
    /// The figure the sweep's line chart or heatmap shows.
    pub chart: Option<(String, Location)>,
    /// The sweep's claims, checked by `rlsim check`.
    pub expect: Vec<(String, Location)>,
}

/// One contender to run: an algorithm of the short form with its parameters (the policy's,
/// unless overridden), a profile, a `[[contender]]` with its stack of rules, or one of these
/// deployed on replicas. Reports name it `name`.
#[derive(Debug, Clone, PartialEq)]
pub struct Contender {
    /// The algorithm's name in the short form; the contender's name otherwise.
    pub name: String,
    /// A `[[contender]]`'s `description`, trimmed; empty for the short form or when not given.
    pub description: String,
    /// Where the scenario declares it.
    pub origin: Origin,
    /// How it decides: only the legal shapes can be built.
    pub shape: Shape,
    /// The HTTP status a refusal answers (`refuse_status`, nginx `limit_req_status`; 503).
    pub refuse_status: u16,
    /// What an imported contender's configuration is often misread as: the run's warnings.
    pub notes: Vec<String>,
}

/// nginx's `limit_req_status` default, and every contender's unless it says otherwise.
pub const DEFAULT_REFUSE_STATUS: u16 = 503;

/// Where a scenario declares a contender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An entry of `algorithms` (the short form), under the policy.
    ShortForm,
    /// The `[[contender]]` at this index, written out or taken from a configuration
    /// (`import = "..."`).
    Contender {
        /// The position of the `[[contender]]` among the scenario's.
        index: usize,
        /// Whether its rules come from a configuration file (`import = "..."`).
        imported: bool,
    },
}

/// How a [`Contender`] decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// One limiter on one node (the short form, a profile).
    Single(LimiterSpec),
    /// A `[[contender]]`'s stack of rules, in memory on one node.
    Stack(Box<Stack>),
    /// One limiter on several replicas and a store (`[deployment]`, `[contender.deployment]`):
    /// `declared` as the scenario gives it, `replica` as each replica runs it (its share of
    /// the limit with a divided local store).
    Deployed {
        /// The limiter as the scenario declares it, with the whole limit.
        declared: LimiterSpec,
        /// The limiter each replica runs (its share of the limit with a divided local store).
        replica: LimiterSpec,
        /// The replicas, their balancer and store, round trips, clock offsets and outages.
        deployment: Box<Deployment>,
    },
    /// Production's own decisions, as the replayed trace records them (`recorded = true`):
    /// judged like any contender, so a live service (`rlsim probe`) or production itself faces
    /// the same yardstick as the models. The policy's parameters size the row's judgement.
    Recorded(Params),
}

impl Contender {
    /// A short-form entry: `limiter` under the policy, named after its algorithm.
    pub fn short(limiter: LimiterSpec) -> Self {
        Contender {
            name: limiter.kind().name().to_string(),
            description: String::new(),
            origin: Origin::ShortForm,
            shape: Shape::Single(limiter),
            refuse_status: DEFAULT_REFUSE_STATUS,
            notes: Vec::new(),
        }
    }

    /// The limiter it runs as declared (its first rule's for a stack); `None` when recorded.
    pub fn limiter(&self) -> Option<LimiterSpec> {
        match &self.shape {
            Shape::Single(l) | Shape::Deployed { declared: l, .. } => Some(*l),
            Shape::Stack(stack) => Some(stack.rules[0].limiter),
            Shape::Recorded(_) => None,
        }
    }

    /// Its (first rule's) algorithm; `None` when recorded.
    pub fn kind(&self) -> Option<AlgorithmKind> {
        self.limiter().map(|l| l.kind())
    }

    /// The parameters it is declared with (its first rule's; the policy's when recorded).
    pub fn params(&self) -> Params {
        match &self.shape {
            Shape::Single(l) | Shape::Deployed { declared: l, .. } => l.params(),
            Shape::Stack(stack) => stack.rules[0].limiter.params(),
            Shape::Recorded(params) => *params,
        }
    }

    /// The profile it runs (its first rule's for a stack); `None` for an algorithm.
    pub fn profile(&self) -> Option<Profile> {
        self.limiter().and_then(|l| l.as_profile())
    }

    /// Whether it is a `[[contender]]` (written or imported), not the short form.
    pub fn is_written(&self) -> bool {
        matches!(self.origin, Origin::Contender { .. })
    }

    /// The field that declares it, as errors name it (`algorithms`, `contender[2]`,
    /// `contender[2].import`, `deployment`, `contender[2].deployment`).
    pub fn field(&self) -> String {
        let deployed = self.deployment().is_some();
        match self.origin {
            Origin::ShortForm if deployed => "deployment".into(),
            Origin::ShortForm => "algorithms".into(),
            Origin::Contender { index, .. } if deployed => format!("contender[{index}].deployment"),
            Origin::Contender {
                index,
                imported: true,
            } => format!("contender[{index}].import"),
            Origin::Contender { index, .. } => format!("contender[{index}]"),
        }
    }

    /// Its profiles (its own, or its rules') with virtual time 0 at the wall-clock `start`.
    pub fn start_profiles_at(&mut self, start: Nanos) {
        self.map_limiters(|l| l.starting_at(start));
    }

    /// Every limiter it runs (its own, or its rules') passed through `f`.
    pub fn map_limiters(&mut self, f: impl Fn(LimiterSpec) -> LimiterSpec) {
        match &mut self.shape {
            Shape::Single(l) => *l = f(*l),
            Shape::Deployed {
                declared, replica, ..
            } => {
                *declared = f(*declared);
                *replica = f(*replica);
            }
            Shape::Stack(stack) => {
                for rule in &mut stack.rules {
                    rule.limiter = f(rule.limiter);
                }
            }
            Shape::Recorded(_) => {}
        }
    }

    /// The contender's stack of rules, if it is a `[[contender]]` on one node.
    pub fn stack(&self) -> Option<&Stack> {
        match &self.shape {
            Shape::Stack(stack) => Some(stack),
            _ => None,
        }
    }

    /// The contender's stack of rules, mutably, if it is a `[[contender]]` on one node.
    pub fn stack_mut(&mut self) -> Option<&mut Stack> {
        match &mut self.shape {
            Shape::Stack(stack) => Some(stack),
            _ => None,
        }
    }

    /// The deployment the contender runs on, if it is deployed on replicas.
    pub fn deployment(&self) -> Option<&Deployment> {
        match &self.shape {
            Shape::Deployed { deployment, .. } => Some(deployment),
            _ => None,
        }
    }

    /// Puts the contender on `deployment`, each replica running its share
    /// (`Deployment::replica_params`). A stack must be one plain rule (validation checks
    /// it), which then decides alone.
    pub fn deploy(&mut self, deployment: Deployment) -> Result<(), ParamsError> {
        let Some(declared) = self.limiter() else {
            return Ok(());
        };
        let params = deployment.replica_params(declared.params());
        let replica = if params == declared.params() {
            declared
        } else {
            declared.with_params(params)?
        };
        self.shape = Shape::Deployed {
            declared,
            replica,
            deployment: Box::new(deployment),
        };
        Ok(())
    }

    /// Refuses a contender an external store cannot decide for (`--store`, `rlsim verify`):
    /// stacked rules and simulated deployments decide in memory only. `path` is the scenario's.
    pub fn through_store(&self, path: &Path) -> Result<()> {
        let what = match self.shape {
            Shape::Single(_) => return Ok(()),
            Shape::Stack(_) => "stacked rules decide",
            Shape::Deployed { .. } => "a simulated deployment decides",
            Shape::Recorded(_) => "the recorded decisions decide",
        };
        Err(crate::error::Error::Scenario {
            location: Location {
                path: path.to_path_buf(),
                line: None,
                column: None,
            },
            field: Some(self.field()),
            message: format!(
                "contender `{}`: {what} in memory only; an external store (--store) runs the \
                 short-form algorithms",
                self.name
            ),
        })
    }
}

impl Scenario {
    /// Whether a generated source's requests may weigh more than 1 (`cost`, `cost_dist`,
    /// `costs`, a method's `cost`). A replayed trace's costs are known only as it is read.
    pub fn has_costs(&self) -> bool {
        self.traffic.iter().any(|s| s.has_costs())
    }

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
    scenario.algorithms.iter().any(|a| a.stack().is_some())
}

/// Whether some contender of `scenario` runs with a deployment.
pub fn uses_deployments(scenario: &Scenario) -> bool {
    scenario.algorithms.iter().any(|a| a.deployment().is_some())
}
