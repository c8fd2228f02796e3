//! `[[alert]]`: alert rules replayed on the virtual timeline (docs/observability.md).
//!
//! A rule counts refusals, requests or the refused share of the decisions in a rolling window,
//! grouped by one label, and fires when the value reaches its threshold (for `for` long).
//! Evaluation happens at the instants `k·every` (`every` defaults to 15 s, Prometheus's default
//! `evaluation_interval`); the window must be a whole number of `every`s so each window is a
//! union of evaluation intervals and the count is exact.

use super::raw::S;
use super::validate::Ctx;
use crate::error::Result;
use crate::time::Nanos;
use crate::traffic::{Role, SourceSpec};
use serde::Deserialize;
use std::collections::HashSet;

/// Prometheus's default `evaluation_interval`.
pub const DEFAULT_EVERY: Nanos = 15_000_000_000;
/// Most evaluation instants a rule may have over a run (bounds the work and the memory).
const MAX_EVALUATIONS: u64 = 10_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlert {
    pub name: S<String>,
    pub count: S<String>,
    #[serde(default)]
    pub by: Option<S<String>>,
    pub threshold: S<toml::Value>,
    pub window: S<String>,
    #[serde(default, rename = "for")]
    pub for_: Option<S<String>>,
    #[serde(default)]
    pub every: Option<S<String>>,
}

/// What a rule counts in its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Refusals,
    Requests,
    /// Refusals / requests (label values without requests in the window are not evaluated).
    RefusedShare,
}

impl Measure {
    pub const ALL: [Measure; 3] = [Measure::Refusals, Measure::Requests, Measure::RefusedShare];
    pub fn name(self) -> &'static str {
        match self {
            Measure::Refusals => "refusals",
            Measure::Requests => "requests",
            Measure::RefusedShare => "refused_share",
        }
    }
}

/// The label a rule groups by: one alert state per value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Ip,
    User,
    Key,
    Endpoint,
    /// The contender under test: one state per contender (every rule is per contender anyway).
    Contender,
    /// No grouping: the same as `contender`, named for readers of PromQL's `sum()`.
    None,
}

impl GroupBy {
    pub const ALL: [GroupBy; 6] = [
        GroupBy::Ip,
        GroupBy::User,
        GroupBy::Key,
        GroupBy::Endpoint,
        GroupBy::Contender,
        GroupBy::None,
    ];
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
    pub measure: Measure,
    pub by: GroupBy,
    /// The rule holds when the value is at least this.
    pub threshold: f64,
    pub window: Nanos,
    /// How long the rule must hold, at consecutive evaluations, before the alert fires.
    pub for_: Nanos,
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

impl Ctx<'_> {
    pub(super) fn alerts(&self, raw: &[S<RawAlert>], duration: Nanos) -> Result<Vec<AlertSpec>> {
        let mut names = HashSet::new();
        raw.iter()
            .enumerate()
            .map(|(i, a)| {
                let spec = self.alert(i, a.get_ref(), duration)?;
                if !names.insert(spec.name.clone()) {
                    return Err(self.err(
                        a.get_ref().name.span(),
                        &format!("alert[{i}].name"),
                        format!("another alert is already named `{}`", spec.name),
                    ));
                }
                Ok(spec)
            })
            .collect()
    }

    fn alert(&self, i: usize, a: &RawAlert, duration: Nanos) -> Result<AlertSpec> {
        let field = |f: &str| format!("alert[{i}].{f}");
        let name = a.name.get_ref().as_str();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(self.err(
                a.name.span(),
                &field("name"),
                format!(
                    "must be lowercase letters, digits and `_` (it names metrics), got `{name}`"
                ),
            ));
        }
        let measure = Measure::ALL
            .into_iter()
            .find(|m| m.name() == a.count.get_ref())
            .ok_or_else(|| {
                self.err(
                    a.count.span(),
                    &field("count"),
                    format!(
                        "unknown count `{}` (expected refusals, requests or refused_share)",
                        a.count.get_ref()
                    ),
                )
            })?;
        let by = match &a.by {
            None => GroupBy::None,
            Some(b) => GroupBy::ALL
                .into_iter()
                .find(|g| g.name() == b.get_ref())
                .ok_or_else(|| {
                    self.err(
                        b.span(),
                        &field("by"),
                        format!(
                            "unknown label `{}` (expected ip, user, key, endpoint, contender or none)",
                            b.get_ref()
                        ),
                    )
                })?,
        };
        let threshold = match a.threshold.get_ref() {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(f) => *f,
            other => {
                return Err(self.err(
                    a.threshold.span(),
                    &field("threshold"),
                    format!("must be a number, got {}", other.type_str()),
                ));
            }
        };
        let valid = match measure {
            Measure::RefusedShare => threshold > 0.0 && threshold <= 1.0,
            _ => threshold >= 1.0 && threshold.is_finite(),
        };
        if !valid {
            let expected = match measure {
                Measure::RefusedShare => "a share in (0, 1]",
                _ => "a count of at least 1",
            };
            return Err(self.err(
                a.threshold.span(),
                &field("threshold"),
                format!("must be {expected}, got {threshold}"),
            ));
        }
        let every = match &a.every {
            Some(e) => self.duration(e, &field("every"), true)?,
            None => DEFAULT_EVERY,
        };
        if duration / every > MAX_EVALUATIONS {
            let span = a.every.as_ref().map_or(a.name.span(), |e| e.span());
            return Err(self.err(
                span,
                &field("every"),
                format!(
                    "gives more than {MAX_EVALUATIONS} evaluations over the scenario's duration"
                ),
            ));
        }
        let window = self.duration(&a.window, &field("window"), true)?;
        if window % every != 0 {
            return Err(self.err(
                a.window.span(),
                &field("window"),
                format!(
                    "must be a whole number of evaluation intervals (`every`, {} ns), got {window} ns",
                    every
                ),
            ));
        }
        let for_ = match &a.for_ {
            Some(f) => self.duration(f, &field("for"), false)?,
            None => 0,
        };
        Ok(AlertSpec {
            name: name.to_string(),
            measure,
            by,
            threshold,
            window,
            for_,
            every,
        })
    }
}
