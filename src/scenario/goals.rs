//! Goals: the scenario's stated priorities (`[goals]`), against which the report ranks the
//! algorithms in its "which algorithm" section.
//!
//! Each key is `max_<metric>` or `min_<metric>` with a numeric bound, the metric being any
//! algorithm-level figure of docs/metrics.md as expectations name them (`policy_violations`,
//! `legit_goodput`, `state_bytes_per_key`, `delay_p99_ns`, ...):
//!
//! ```toml
//! [goals]
//! max_policy_violations = 0
//! min_legit_goodput = 0.99
//! max_state_bytes_per_key = 64
//! ```

use super::expect::Op;
use crate::metrics::MetricNames;
use crate::scenario::Scope;
use crate::suggest;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// One goal: `metric op bound`, `op` being `<=` for `max_` and `>=` for `min_`.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The key as written: `max_policy_violations`.
    pub name: String,
    pub metric: String,
    pub op: Op,
    pub bound: f64,
}

impl Goal {
    /// Whether a measured value meets the goal. A metric with no value for an algorithm (the
    /// rate error of an exact algorithm, a JSON `null`) does not apply to it: met.
    pub fn met(&self, measured: Option<f64>) -> bool {
        measured.is_none_or(|m| self.op.holds(m, self.bound))
    }

    /// `policy_violations <= 0`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} {}",
            self.metric,
            self.op.symbol(),
            trim_number(self.bound)
        )
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

/// Checks the raw `[goals]` table against the metric names of `shape`, in key order.
pub fn resolve(
    table: &BTreeMap<String, Spanned<toml::Value>>,
    shape: &MetricNames,
) -> Result<Vec<Goal>, GoalError> {
    let names = shape.of(&Scope::Algorithm);
    let mut goals = Vec::with_capacity(table.len());
    for (key, value) in table {
        let field = format!("goals.{key}");
        let span = value.span();
        let fail = |message: String| (span.clone(), field.clone(), message);
        let (op, metric) = if let Some(m) = key.strip_prefix("max_") {
            (Op::Le, m)
        } else if let Some(m) = key.strip_prefix("min_") {
            (Op::Ge, m)
        } else {
            return Err(fail(format!(
                "a goal is `max_<metric>` or `min_<metric>`, got `{key}`"
            )));
        };
        if !names.iter().any(|n| n == metric) {
            let known = names.iter().map(String::as_str);
            return Err(fail(suggest::unknown("metric", metric, known)));
        }
        let bound = match value.get_ref() {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) if f.is_finite() => *f,
            other => {
                return Err(fail(format!(
                    "expected a number, got {} `{other}`",
                    other.type_str()
                )));
            }
        };
        goals.push(Goal {
            name: key.clone(),
            metric: metric.to_string(),
            op,
            bound,
        });
    }
    Ok(goals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(toml_text: &str) -> BTreeMap<String, Spanned<toml::Value>> {
        toml::from_str(toml_text).unwrap()
    }

    fn shape() -> MetricNames {
        let names = ["legit_goodput", "mean_rate_error", "policy_violations"];
        MetricNames {
            algorithm: names.map(String::from).to_vec(),
            ..MetricNames::default()
        }
    }

    #[test]
    fn goals_name_metrics_with_a_bound() {
        let goals = resolve(
            &table("max_policy_violations = 0\nmin_legit_goodput = 0.99"),
            &shape(),
        )
        .unwrap();
        assert_eq!(goals.len(), 2);
        // In key order: `max_` before `min_`.
        assert_eq!(goals[0].describe(), "policy_violations <= 0");
        assert_eq!(goals[1].describe(), "legit_goodput >= 0.99");
        assert!(goals[0].met(Some(0.0)) && !goals[0].met(Some(1.0)));
        assert!(goals[0].met(None), "a metric with no value does not apply");
    }

    #[test]
    fn errors_say_what_to_write() {
        let err = |t: &str| resolve(&table(t), &shape()).unwrap_err();
        assert!(err("policy_violations = 0").2.contains("`max_<metric>`"));
        assert!(
            err("max_policy_violatons = 0")
                .2
                .contains("did you mean `policy_violations`")
        );
        let (_, field, message) = err("min_legit_goodput = \"high\"");
        assert_eq!(field, "goals.min_legit_goodput");
        assert!(message.contains("expected a number"), "{message}");
    }
}
