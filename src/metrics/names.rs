//! Metric names and directions: the one flattening of a report into `name → value` (used by
//! `summary.csv`, expectations and baselines), which way each figure is better, and the names any
//! report of a scenario has.
//!
//! This is the one seam between scenario validation and the report's shape: validation asks
//! `scenario::metric_names` and never builds or flattens a report itself. [`Flat`](super::Flat) reads
//! values by the same names (a test there holds the two together).
//!
//! Names come from the report's serialised form rather than a hand-kept list:
//! - top-level figures by their field name (`burst_factor`, `policy_violations`);
//! - `roles.*` leaves by their leaf name, which already carries the role (`legit_goodput`);
//! - leaves of any other group as `<group>_<leaf>` (`delay.p99_ns` → `delay_p99_ns`);
//! - arrays (the per-source entries) are left out; the time series is not serialised.

use super::{AlgorithmReport, Counts, SourceReport};
use crate::traffic::Role;
use serde::Serialize;
use serde_json::Value;

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// A smaller value is better (violations, delays, leakage).
    Lower,
    /// A larger value is better (`legit_goodput`).
    Higher,
}

/// Metrics where lower is better, wherever a report carries them (a row, a source, a role);
/// one a run does not measure (no abusive traffic: `abusive_leakage`) is skipped.
const LOWER_IS_BETTER: [&str; 10] = [
    "policy_violations",
    "policy_violation_rate",
    "burst_factor",
    "max_window_admitted",
    "peak_state_bytes",
    "abusive_leakage",
    "needless_rejections",
    "wrongly_decided_share",
    "false_positive_keys",
    "false_negative_keys",
];
const HIGHER_IS_BETTER: [&str; 1] = ["legit_goodput"];
/// Every delay figure (`delay_p99_ns`, `delay_max_ns`, ...) is better lower.
const LOWER_PREFIX: &str = "delay_";

/// Which direction is better for `metric`, if it has one; counts such as `offered` say nothing
/// good or bad on their own.
pub fn better(metric: &str) -> Option<Better> {
    if LOWER_IS_BETTER.contains(&metric) || metric.starts_with(LOWER_PREFIX) {
        Some(Better::Lower)
    } else if HIGHER_IS_BETTER.contains(&metric) {
        Some(Better::Higher)
    } else {
        None
    }
}

/// The metrics named in the direction tables (delay figures aside, which go by prefix).
pub fn directed() -> impl Iterator<Item = &'static str> + Clone {
    LOWER_IS_BETTER.into_iter().chain(HIGHER_IS_BETTER)
}

/// The figures of a report as flat `(name, value)` pairs, in report order (see the module docs).
/// This is how `summary.csv` names its columns and how expectations name metrics.
pub fn flatten(report: &AlgorithmReport) -> Vec<(String, Value)> {
    flatten_value(serde_json::to_value(report).expect("plain data"))
}

/// [`flatten`] for a report already serialised (one algorithm's object in `summary.json`).
/// Anything but an object flattens to nothing.
pub fn flatten_value(value: Value) -> Vec<(String, Value)> {
    let Value::Object(fields) = value else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(fields.len() + 16);
    for (name, value) in fields {
        match value {
            Value::Array(_) => {}
            Value::Object(inner) if name == "roles" => out.extend(inner),
            Value::Object(inner) => {
                out.extend(inner.into_iter().map(|(k, v)| (format!("{name}_{k}"), v)))
            }
            value => out.push((name, value)),
        }
    }
    out
}

/// A report with every field and no traffic, for sources named `sources`: the shape of any
/// report of a scenario, to learn the metric names it offers without running it.
pub fn shape<'a>(sources: impl IntoIterator<Item = (&'a str, Role)>) -> AlgorithmReport {
    AlgorithmReport {
        sources: sources
            .into_iter()
            .map(|(name, role)| SourceReport::new(name.to_string(), role, Counts::default()))
            .collect(),
        ..AlgorithmReport::default()
    }
}

/// Where a metric is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The algorithm's own figures.
    Algorithm,
    /// The totals of every source of a role.
    Role(Role),
    /// One source, by name.
    Source(String),
    /// One rule of a contender's stack, by name (`rules[]` in `summary.json`).
    Rule(String),
}

/// The metric names every report of a scenario offers, sorted, per scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricNames {
    /// The names of a row's own figures ([`Scope::Algorithm`]).
    pub algorithm: Vec<String>,
    /// The names a role's totals offer ([`Scope::Role`]).
    pub role: Vec<String>,
    /// The names one source offers ([`Scope::Source`]).
    pub source: Vec<String>,
    /// The names one rule offers ([`Scope::Rule`]); those starting `tokens_` only a rule
    /// counting tokens has.
    pub rule: Vec<String>,
}

impl MetricNames {
    /// The names `scope` offers (the same for every source and every role).
    pub fn of(&self, scope: &Scope) -> &[String] {
        match scope {
            Scope::Algorithm => &self.algorithm,
            Scope::Role(_) => &self.role,
            Scope::Source(_) => &self.source,
            Scope::Rule(_) => &self.rule,
        }
    }

    /// The names of `report`'s figures (it must have at least one source for the per-source and
    /// per-role names).
    pub fn of_report(report: &AlgorithmReport) -> MetricNames {
        let numeric = |v: &Value| v.is_number() || v.is_null();
        let mut algorithm: Vec<String> = super::flatten(report)
            .into_iter()
            .filter(|(_, v)| numeric(v))
            .map(|(name, _)| name)
            .collect();
        algorithm.sort();
        let (mut source, mut counts) = (Vec::new(), Vec::new());
        if let Some(first) = report.sources.first() {
            let value = serde_json::to_value(first).expect("plain data serialises");
            for (name, v) in flatten_value(value) {
                if v.is_u64() || v.is_i64() {
                    counts.push(name.clone());
                }
                if numeric(&v) {
                    source.push(name);
                }
            }
        }
        source.sort();
        // A role total sums the counts; each `<count>_share` is recomputed from the sums.
        let shares = source.iter().filter(|n| {
            n.strip_suffix("_share")
                .is_some_and(|c| counts.iter().any(|k| k == c))
        });
        let mut role: Vec<String> = counts.iter().chain(shares).cloned().collect();
        role.sort();
        MetricNames {
            algorithm,
            role,
            source,
            rule: rule_names(),
        }
    }
}

/// The numeric figures of a rule, flattened as [`flatten_value`] does (`tokens.used` →
/// `tokens_used`), from a rule's report with token and quota figures.
fn rule_names() -> Vec<String> {
    let mut rule = super::RuleTally::new(1, 1).finish(
        String::new(),
        "",
        crate::algorithms::Params {
            limit: 1,
            window: 1,
            burst: 1,
        },
        crate::policy::KeySpec::global(),
        &[],
        |_| String::new(),
    );
    // One admission, so that fields which are strings when set (`worst_key`) are not nulls.
    let mut tokens = super::TokenTally::new(1, true, 1, (1, 1));
    tokens.admit(0, 0, 0, 0, 0);
    let names = [String::new()];
    rule.tokens = Some(tokens.finish(("", ""), 1, |_| String::new(), &names));
    let calendar = crate::calendar::Calendar::new(crate::calendar::Period::Day, "UTC")
        .expect("UTC")
        .intern();
    let mut quota = super::QuotaTally::new(calendar, 0, 1, (1, 1));
    quota.admit(0, 0);
    quota.finish_needless();
    rule.quota = Some(quota.report(|_| String::new()));
    let value = serde_json::to_value(rule).expect("plain data serialises");
    let mut names: Vec<String> = flatten_value(value)
        .into_iter()
        .filter(|(_, v)| v.is_number() || v.is_null())
        .map(|(name, _)| name)
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert_eq!(better("burst_factor"), Some(Better::Lower));
        assert_eq!(better("delay_p99_ns"), Some(Better::Lower));
        assert_eq!(better("legit_goodput"), Some(Better::Higher));
        assert_eq!(better("offered"), None);
    }

    #[test]
    fn the_shape_has_every_flattened_name_of_a_report() {
        let names: Vec<String> = flatten(&shape([("a", Role::Legit)]))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        for expected in [
            "offered",
            "delay_p99_ns",
            "legit_goodput",
            "mean_rate_error",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n == "sources"));
    }
}
