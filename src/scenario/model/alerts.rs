//! `[[alert]]`: alert rules replayed on the virtual timeline (docs/observability.md).
//!
//! A rule counts refusals, requests or the refused share of the decisions in a rolling window,
//! grouped by one label, and fires when the value reaches its threshold (for `for` long).
//! Evaluation happens at the instants `k·every` (`every` defaults to 15 s, Prometheus's default
//! `evaluation_interval`); the window must be a whole number of `every`s so each window is a
//! union of evaluation intervals and the count is exact.

use crate::time::Nanos;
use crate::traffic::{Role, SourceSpec};

/// Prometheus's default `evaluation_interval`.
pub const DEFAULT_EVERY: Nanos = 15_000_000_000;

/// What a rule counts in its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Measure {
    /// Refusals of the group in the window.
    Refusals,
    /// Requests of the group in the window, admitted or not.
    Requests,
    /// Refusals / requests (label values without requests in the window are not evaluated).
    RefusedShare,
}

impl Measure {
    /// The measure's name in scenarios (`count = "refusals"`).
    pub fn name(self) -> &'static str {
        match self {
            Measure::Refusals => "refusals",
            Measure::Requests => "requests",
            Measure::RefusedShare => "refused_share",
        }
    }
}

/// The label a rule groups by: one alert state per value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum GroupBy {
    /// The client's address.
    Ip,
    /// The client's user identity.
    User,
    /// The limiter's key.
    Key,
    /// The request's endpoint.
    Endpoint,
    /// The contender under test: one state per contender (every rule is per contender anyway).
    Contender,
    /// No grouping: the same as `contender`, named for readers of PromQL's `sum()`.
    None,
}

impl GroupBy {
    /// The label's name in scenarios (`by = "ip"`).
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Ip => "ip",
            GroupBy::User => "user",
            GroupBy::Key => "key",
            GroupBy::Endpoint => "endpoint",
            GroupBy::Contender => "contender",
            GroupBy::None => "none",
        }
    }
}

/// A validated alert rule.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertSpec {
    /// `[a-z0-9_]+`: it is part of metric names (`alerts_<name>_alerts`).
    pub name: String,
    /// What the rule counts in its window.
    pub measure: Measure,
    /// The label the rule groups by.
    pub by: GroupBy,
    /// The rule holds when the value is at least this.
    pub threshold: f64,
    /// The span of the rolling window counted at each evaluation, in ns (a multiple of `every`).
    pub window: Nanos,
    /// How long the rule must hold, at consecutive evaluations, before the alert fires.
    pub for_: Nanos,
    /// The interval between evaluations, in ns (at the instants `k·every`).
    pub every: Nanos,
}

/// The figures of one rule, per contender, in `summary.json`'s `alerts` group (and so in
/// `expect` lines as `alerts_<name>_<figure>`).
pub const FIGURES: [&str; 6] = [
    "alerts",
    "first_fired_ns",
    "firing_at_end",
    "detected_sources",
    "undetected_sources",
    "max_time_to_detect_ns",
];

impl AlertSpec {
    /// The metric names of this rule's figures, as `expect` lines name them.
    pub fn metric_names(&self) -> impl Iterator<Item = String> + '_ {
        FIGURES
            .iter()
            .map(move |f| format!("alerts_{}_{f}", self.name))
    }
}

/// Whether any source is abusive (time to detect is reported for those).
pub fn abusive(sources: &[SourceSpec]) -> impl Iterator<Item = usize> + '_ {
    sources
        .iter()
        .enumerate()
        .filter(|(_, s)| s.role == Role::Abusive)
        .map(|(i, _)| i)
}
