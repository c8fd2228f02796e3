//! The parts of a contender's row that do not come from the [`Recorder`](super::Recorder):
//! what its gate measured, how its replayed sources ended, its refusal status, its alert
//! figures, and the figures the scenario's features give every row. The recorder puts them
//! into the row as it builds it; nothing changes a row afterwards.

use super::{DeploymentReport, Features, RuleReport};
use crate::algorithms::{MemoryUsage, Params};
use crate::traffic::ReplayEnd;
use std::collections::BTreeMap;

/// What a contender's gate measured beyond the decisions: a stack's counts and rules, a
/// deployment's figures. `None`: the gate has no such figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateFigures {
    /// Requests a stack's bypass lists let through (the row's `bypassed`).
    pub bypassed: Option<u64>,
    /// Requests a dry-run stack's rules refused, all admitted (the row's `would_refuse`).
    pub would_refuse: Option<u64>,
    /// Requests no rule of the stack applied to (the row's `unlimited`).
    pub unlimited: Option<u64>,
    /// Admitted requests that carried a rule's warning (the row's `warned`).
    pub warned: Option<u64>,
    /// Each rule's figures against its own limit, window and key; empty for a single limiter.
    pub rules: Vec<RuleReport>,
    /// The deployment's costs, for a contender run with one.
    pub deployment: Option<DeploymentReport>,
}

/// Everything a row holds besides what the recorder measured.
#[derive(Debug, Clone, PartialEq)]
pub struct RowParts {
    /// The contender's name.
    pub name: String,
    /// The parameters the row reports.
    pub params: Params,
    /// The most memory the gate held, and what it held at the end.
    pub memory: (MemoryUsage, MemoryUsage),
    /// What the gate measured beyond the decisions (a stack's counts and rules, a deployment).
    pub gate: GateFigures,
    /// How each source's replay ended (`None`: not a replay).
    pub replay_ends: Vec<Option<ReplayEnd>>,
    /// A `[[contender]]`'s refusal status; `None` for the short form.
    pub refuse_status: Option<u16>,
    /// The contender's observer's alert figures (`None`: the scenario has no alert rules).
    pub alerts: Option<BTreeMap<String, Option<f64>>>,
    /// What of the scenario gives every row its figures.
    pub features: Features,
}
