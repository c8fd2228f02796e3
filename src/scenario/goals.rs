//! Goals: the scenario's stated priorities (`[goals]`), against which the report ranks the
//! algorithms in its "which algorithm" section.
//!
//! Each key is `max_<metric>` or `min_<metric>`, the metric being any algorithm-level figure of
//! docs/metrics.md as expectations name them (`policy_violations`, `legit_goodput`,
//! `state_bytes_per_key`, `delay_p99_ns`, ...). The bound is written in the metric's unit:
//!
//! - a time figure (`*_ns`) takes a duration: `max_delay_p99 = "1s"` (the `_ns` suffix may be
//!   left out) or a number of nanoseconds;
//! - a byte figure takes a size: `max_state_bytes_per_key = "64 B"` (`B`, `KiB`, `MiB`, `GiB`)
//!   or a number of bytes;
//! - a count over the run takes a rate, read over the run's duration: `max_policy_violations =
//!   "1/min"` is at most 30 in a 30-minute run; or a plain count;
//! - anything else (ratios, shares) takes a number.
//!
//! ```toml
//! [goals]
//! max_policy_violations = 0
//! min_legit_goodput = 0.99
//! max_state_bytes_per_key = "64 B"
//! max_delay_p99 = "1s"
//! ```

use super::expect::Op;
use crate::metrics::Scope;
use crate::metrics::{AlgorithmReport, MetricNames};
use crate::suggest;
use crate::time::{Nanos, format_duration, parse_duration, parse_rate};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// One goal: `metric op bound`, `op` being `<=` for `max_` and `>=` for `min_`.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The canonical key: `max_policy_violations`, `max_delay_p99_ns` (for `max_delay_p99`).
    pub name: String,
    /// The algorithm-level metric the goal bounds, as in `summary.json` (`delay_p99_ns`).
    pub metric: String,
    /// `<=` for a `max_` goal, `>=` for a `min_` goal.
    pub op: Op,
    /// In the metric's own unit (nanoseconds, bytes, a count over the run, a ratio).
    pub bound: f64,
    /// The bound as the scenario wrote it when that was a string (`"1s"`, `"1/min"`), for the
    /// reports; `None` for a plain number.
    pub written: Option<String>,
}

/// The unit a metric is measured in, which decides how a goal's bound is written and how a
/// measured value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds of virtual time (`*_ns`).
    Duration,
    /// Bytes (`*bytes*`).
    Bytes,
    /// A whole number of events over the run (`policy_violations`, `rejected`).
    Count,
    /// Anything else: ratios, shares, factors.
    Number,
}

/// The algorithm-level metrics that are whole numbers in a report, read once from an empty
/// report: flattening one per call made a scenario's 100,000 `expect` lines take minutes.
fn count_metrics() -> &'static std::collections::HashSet<String> {
    static COUNTS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    COUNTS.get_or_init(|| {
        crate::metrics::flatten(&AlgorithmReport::default())
            .into_iter()
            .filter(|(_, v)| v.is_u64())
            .map(|(name, _)| name)
            .collect()
    })
}

impl Unit {
    /// The unit of an algorithm-level metric: by its name for time and bytes, by its type in
    /// the report (a whole number) for counts.
    pub fn of(metric: &str) -> Unit {
        if metric.ends_with("_ns") {
            Unit::Duration
        } else if metric.contains("bytes") {
            Unit::Bytes
        } else if count_metrics().contains(metric) {
            Unit::Count
        } else {
            Unit::Number
        }
    }

    /// A value of this unit for a reader: `1.5s`, `64 B`, `2326`, `0.9151`.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Duration if v >= 0.0 => format_duration(v.round() as Nanos),
            Unit::Bytes if v >= 1024.0 => {
                let (mut v, mut unit) = (v, 0);
                while v >= 1024.0 && unit < 3 {
                    v /= 1024.0;
                    unit += 1;
                }
                format!("{v:.1} {}", ["B", "KiB", "MiB", "GiB"][unit])
            }
            Unit::Bytes => format!("{} B", trim_number(v.round())),
            _ if v.fract() == 0.0 => trim_number(v),
            _ => format!("{v:.4}"),
        }
    }
}

impl Goal {
    /// Whether a measured value meets the goal. A metric with no value for an algorithm (the
    /// rate error of an exact algorithm, a JSON `null`) does not apply to it: met.
    pub fn met(&self, measured: Option<f64>) -> bool {
        measured.is_none_or(|m| self.op.holds(m, self.bound))
    }

    /// `policy_violations <= 0`, `delay_p99_ns <= 1s`, `policy_violations <= 1/min (30 in 30m)`.
    pub fn describe(&self) -> String {
        let bound = match &self.written {
            Some(w) => w.clone(),
            None => match Unit::of(&self.metric) {
                Unit::Count | Unit::Number => trim_number(self.bound),
                unit => unit.show(self.bound),
            },
        };
        format!("{} {} {bound}", self.metric, self.op.symbol())
    }

    /// A measured value of the goal's metric, in its unit.
    pub fn show(&self, measured: f64) -> String {
        Unit::of(&self.metric).show(measured)
    }
}

/// A number without a useless fraction: `0`, `0.99`, `64`.
pub fn trim_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// An error in the `[goals]` table: the span of the offending value, the field and a message.
pub type GoalError = (Range<usize>, String, String);

/// Checks the raw `[goals]` table against the metric names of `shape`, in key order. `duration`
/// is the run's, over which a rate bound on a count is read.
pub fn resolve(
    table: &BTreeMap<String, Spanned<toml::Value>>,
    shape: &MetricNames,
    duration: Nanos,
) -> Result<Vec<Goal>, GoalError> {
    let names = shape.of(&Scope::Algorithm);
    let mut goals = Vec::with_capacity(table.len());
    for (key, value) in table {
        let field = format!("goals.{key}");
        let span = value.span();
        let fail = |message: String| (span.clone(), field.clone(), message);
        let (op, prefix, written_metric) = if let Some(m) = key.strip_prefix("max_") {
            (Op::Le, "max_", m)
        } else if let Some(m) = key.strip_prefix("min_") {
            (Op::Ge, "min_", m)
        } else {
            return Err(fail(format!(
                "a goal is `max_<metric>` or `min_<metric>`, got `{key}`"
            )));
        };
        // `max_delay_p99` names `delay_p99_ns`: the unit is in the bound.
        let with_ns = format!("{written_metric}_ns");
        let metric = if names.iter().any(|n| n == written_metric) {
            written_metric.to_string()
        } else if names.contains(&with_ns) {
            with_ns
        } else {
            let known = names.iter().map(String::as_str);
            return Err(fail(suggest::unknown("metric", written_metric, known)));
        };
        let unit = Unit::of(&metric);
        let (bound, written) = match value.get_ref() {
            toml::Value::Integer(i) if *i >= 0 || unit == Unit::Number => (*i as f64, None),
            toml::Value::Float(f) if f.is_finite() && (*f >= 0.0 || unit == Unit::Number) => {
                (*f, None)
            }
            toml::Value::String(s) => {
                let bound = parse_bound(s, unit, &metric, duration).map_err(fail)?;
                let written = match unit {
                    Unit::Count => format!(
                        "{s} ({} in {})",
                        trim_number(bound),
                        format_duration(duration)
                    ),
                    _ => s.trim().to_string(),
                };
                (bound, Some(written))
            }
            other => {
                return Err(fail(format!(
                    "expected {}, got {} `{other}`",
                    expected(unit),
                    other.type_str()
                )));
            }
        };
        goals.push(Goal {
            name: format!("{prefix}{metric}"),
            metric,
            op,
            bound,
            written,
        });
    }
    Ok(goals)
}

/// What a bound of `unit` may be, for error messages.
fn expected(unit: Unit) -> &'static str {
    match unit {
        Unit::Duration => "a duration such as \"1s\" or \"250ms\" (or a number of nanoseconds)",
        Unit::Bytes => "a size such as \"64 B\" or \"1 KiB\" (or a number of bytes)",
        Unit::Count => "a non-negative number or a rate over the run such as \"1/min\"",
        Unit::Number => "a number",
    }
}

/// A string bound in the metric's unit.
fn parse_bound(text: &str, unit: Unit, metric: &str, duration: Nanos) -> Result<f64, String> {
    let wrong = |why: String| format!("`{metric}`: expected {}; {why}", expected(unit));
    match unit {
        Unit::Duration => parse_duration(text)
            .map(|ns| ns as f64)
            .map_err(|e| wrong(e.to_string())),
        Unit::Bytes => parse_bytes(text).ok_or_else(|| wrong(format!("`{text}` is not a size"))),
        // A rate of events over the run: `count / per × duration`.
        Unit::Count => parse_rate(text)
            .map(|r| r.count as f64 * duration as f64 / r.per as f64)
            .map_err(|e| wrong(e.to_string())),
        Unit::Number => Err(wrong(format!(
            "`{metric}` has no unit, got the string \"{text}\""
        ))),
    }
}

/// `64 B`, `1KiB`, `1.5 MiB`: binary units only, as every report writes them.
fn parse_bytes(text: &str) -> Option<f64> {
    let t = text.trim();
    let at = t.find(|c: char| c.is_alphabetic())?;
    let (num, unit) = (t[..at].trim(), t[at..].trim());
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0 && !num.contains(['e', 'E'])).then_some(v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NANOS_PER_MIN, NANOS_PER_SEC};

    fn table(toml_text: &str) -> BTreeMap<String, Spanned<toml::Value>> {
        toml::from_str(toml_text).unwrap()
    }

    fn shape() -> MetricNames {
        let names = [
            "delay_p99_ns",
            "legit_goodput",
            "mean_rate_error",
            "policy_violations",
            "state_bytes_per_key",
        ];
        MetricNames {
            algorithm: names.map(String::from).to_vec(),
            ..MetricNames::default()
        }
    }

    const RUN: Nanos = 30 * NANOS_PER_MIN;

    fn goals(t: &str) -> Vec<Goal> {
        resolve(&table(t), &shape(), RUN).unwrap()
    }

    #[test]
    fn goals_name_metrics_with_a_bound() {
        let goals = goals("max_policy_violations = 0\nmin_legit_goodput = 0.99");
        assert_eq!(goals.len(), 2);
        // In key order: `max_` before `min_`.
        assert_eq!(goals[0].describe(), "policy_violations <= 0");
        assert_eq!(goals[1].describe(), "legit_goodput >= 0.99");
        assert!(goals[0].met(Some(0.0)) && !goals[0].met(Some(1.0)));
        assert!(goals[0].met(None), "a metric with no value does not apply");
    }

    #[test]
    fn durations_with_or_without_the_ns_suffix() {
        let g = goals("max_delay_p99 = \"1s\"");
        assert_eq!(g[0].name, "max_delay_p99_ns");
        assert_eq!(g[0].metric, "delay_p99_ns");
        assert_eq!(g[0].bound, NANOS_PER_SEC as f64);
        assert_eq!(g[0].describe(), "delay_p99_ns <= 1s");
        assert!(g[0].met(Some(1e9)) && !g[0].met(Some(1e9 + 1.0)));
        assert_eq!(g[0].show(60_000_000_000.0), "1m");
        let g = goals("max_delay_p99_ns = \"250ms\"");
        assert_eq!(g[0].bound, 250e6);
        // A plain number stays nanoseconds, and reads back in human units.
        let g = goals("max_delay_p99_ns = 1500000000");
        assert_eq!(g[0].describe(), "delay_p99_ns <= 1.5s");
    }

    #[test]
    fn rates_bound_counts_over_the_run() {
        let g = goals("max_policy_violations = \"1/min\"");
        assert_eq!(g[0].bound, 30.0);
        assert_eq!(g[0].describe(), "policy_violations <= 1/min (30 in 30m)");
        let g = goals("max_policy_violations = \"100/s\"");
        assert_eq!(g[0].bound, 180_000.0);
    }

    #[test]
    fn sizes_bound_bytes() {
        let g = goals("max_state_bytes_per_key = \"1 KiB\"");
        assert_eq!(g[0].bound, 1024.0);
        assert_eq!(g[0].describe(), "state_bytes_per_key <= 1 KiB");
        let g = goals("max_state_bytes_per_key = 64");
        assert_eq!(g[0].describe(), "state_bytes_per_key <= 64 B");
        assert_eq!(g[0].show(1126.4), "1.1 KiB");
    }

    #[test]
    fn errors_say_what_to_write() {
        let err = |t: &str| resolve(&table(t), &shape(), RUN).unwrap_err();
        assert!(err("policy_violations = 0").2.contains("`max_<metric>`"));
        assert!(
            err("max_policy_violatons = 0")
                .2
                .contains("did you mean `policy_violations`")
        );
        let (_, field, message) = err("min_legit_goodput = \"high\"");
        assert_eq!(field, "goals.min_legit_goodput");
        assert!(message.contains("expected a number"), "{message}");
        // Units that do not fit the metric.
        let (_, field, message) = err("max_delay_p99 = \"1 furlong\"");
        assert_eq!(field, "goals.max_delay_p99");
        assert!(message.contains("expected a duration"), "{message}");
        assert!(message.contains("unknown unit `furlong`"), "{message}");
        let (_, _, message) = err("max_delay_p99 = \"100/s\"");
        assert!(message.contains("expected a duration"), "{message}");
        let (_, _, message) = err("max_policy_violations = \"1s\"");
        assert!(message.contains("a rate over the run"), "{message}");
        let (_, _, message) = err("max_state_bytes_per_key = \"64 kB\"");
        assert!(message.contains("\"64 B\" or \"1 KiB\""), "{message}");
        let (_, _, message) = err("max_delay_p99 = -1");
        assert!(message.contains("got integer `-1`"), "{message}");
    }
}
