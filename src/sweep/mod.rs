//! Parameter sweeps: one scenario run over a grid of field values (`rlsim sweep`), the tidy
//! table of every point × contender, a recommendation against the scenario's `[goals]`, charts
//! and reports, and shards that a batch system can run apart and `rlsim merge` puts together.
//!
//! A point is the scenario with one value per axis spliced in by `--set` (so it is validated
//! exactly like a file). Points run in parallel; every output is a function of the rows in point
//! order, so the thread count never shows in them. The traffic of a point depends only on the
//! scenario, its seed and the point's traffic fields: every contender of a point sees the same
//! requests, and points that differ only in policy fields replay the same traffic.
//! See docs/sweeps.md.

pub mod axis;
pub mod expect;
pub mod outputs;
pub mod plan;
pub mod recommend;
pub mod report;
pub mod shard;

pub use axis::Axis;
pub use outputs::SweepFile;
pub use shard::Shard;

use crate::error::{Error, Result};
use crate::metrics::flatten;
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::path::Path;

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 1_000_000;

/// One row of `sweep.csv`: a point, its swept values and every figure of one contender.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The point's index in the grid (the last axis varies fastest).
    pub point: usize,
    /// The value of each axis, in axis order.
    pub values: Vec<Value>,
    /// Every figure of `summary.csv`, in its order, `algorithm` (the row's name) first.
    pub figures: Map<String, Value>,
}

impl Row {
    /// The contender's name.
    pub fn name(&self) -> &str {
        self.figures
            .get("algorithm")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// A figure as a number; `None` when absent or `null`.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.get(name).and_then(Value::as_f64)
    }
}

/// The grid of `axes`: how many points it has.
pub fn point_count(axes: &[Axis]) -> Result<usize> {
    axes.iter().try_fold(1usize, |n, a| {
        n.checked_mul(a.values.len())
            .filter(|&n| n <= MAX_POINTS)
            .ok_or_else(|| Error::Usage(format!("the sweep has more than {MAX_POINTS} points")))
    })
}

/// The value index of each axis at `point`: mixed radix, the last axis fastest.
pub fn coordinates(axes: &[Axis], mut point: usize) -> Vec<usize> {
    let mut out = vec![0; axes.len()];
    for (i, a) in axes.iter().enumerate().rev() {
        out[i] = point % a.values.len();
        point /= a.values.len();
    }
    out
}

/// The point at `coords` (the inverse of [`coordinates`]).
pub fn point_at(axes: &[Axis], coords: &[usize]) -> usize {
    axes.iter()
        .zip(coords)
        .fold(0, |p, (a, &k)| p * a.values.len() + k)
}

/// Whether contender `j` runs exactly the same in `a` as in `b`: the same limiter once the
/// parameters it ignores are set aside (the burst of an algorithm without one; the policy's
/// figures a profile did not take), and the same everything else (traffic, duration, seed,
/// deployment). The policy's own burst only sets the reference the figures compare against.
fn same_run(a: &Scenario, b: &Scenario, j: usize) -> bool {
    fn limiter(spec: &crate::scenario::AlgorithmSpec) -> crate::scenario::AlgorithmSpec {
        let mut spec = spec.clone();
        let plain = |kind: crate::algorithms::AlgorithmKind,
                     params: &mut crate::algorithms::Params,
                     profile: bool| {
            if profile {
                *params = crate::algorithms::Params {
                    limit: 0,
                    window: 0,
                    burst: 0,
                };
            } else if !kind.uses_burst() {
                params.burst = 0;
            }
        };
        plain(spec.kind, &mut spec.params, spec.profile.is_some());
        if let Some(stack) = &mut spec.stack {
            for rule in &mut stack.rules {
                plain(rule.kind, &mut rule.params, rule.profile.is_some());
            }
        }
        spec
    }
    let alone = |s: &Scenario| {
        let mut s = s.clone();
        s.algorithms = vec![limiter(&s.algorithms[j])];
        s.policy.burst = 0;
        s
    };
    a.algorithms.len() == b.algorithms.len() && alone(a) == alone(b)
}

/// The overrides that make `point` out of the base scenario.
pub fn point_overrides(axes: &[Axis], point: usize) -> Vec<Override> {
    axes.iter()
        .zip(coordinates(axes, point))
        .map(|(a, i)| Override {
            field: a.field.clone(),
            value: a.values[i].clone(),
        })
        .collect()
}

/// A swept value as JSON: TOML integers, floats and booleans as themselves, strings as strings.
pub fn json_value(toml_text: &str) -> Value {
    match toml::de::DeValue::parse(toml_text).map(|v| v.into_inner()) {
        Ok(toml::de::DeValue::Integer(i)) => {
            i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                .map_or_else(|_| Value::String(toml_text.into()), Value::from)
        }
        Ok(toml::de::DeValue::Float(f)) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .map_or_else(|_| Value::String(toml_text.into()), Value::from),
        Ok(toml::de::DeValue::Boolean(b)) => Value::Bool(b),
        Ok(toml::de::DeValue::String(s)) => Value::String(s.into_owned()),
        _ => Value::String(toml_text.to_string()),
    }
}

/// A swept value as a number for a chart axis or an expectation: numbers as they are,
/// durations in seconds.
pub fn numeric(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => crate::time::parse_duration(s)
            .ok()
            .map(|ns| ns as f64 / crate::time::NANOS_PER_SEC as f64),
        _ => None,
    }
}

/// What a sweep needs besides the scenario text.
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    pub seed: Option<u64>,
    /// `--set` overrides applied to every point before its axes.
    pub base: Vec<Override>,
    pub shard: Option<Shard>,
    pub skip_bad_lines: bool,
}

/// A scenario with `overrides`, as the sweep runs it.
pub fn point_scenario(
    text: &str,
    path: &Path,
    overrides: &[Override],
    options: &SweepOptions,
) -> Result<Scenario> {
    let mut scenario = Scenario::parse_with(text, path, overrides)?;
    if let Some(seed) = options.seed {
        scenario = scenario.with_seed(seed);
    }
    if options.skip_bad_lines {
        scenario = scenario.with_skip_bad_lines();
    }
    Ok(scenario)
}

/// Runs the points of `axes` (only the shard's share, with `options.shard`) and returns their
/// rows in point order. Every point is validated before any runs, so a bad value costs nothing.
/// `tick` is called once per finished point (a progress bar).
///
/// A contender that runs exactly as at the point with one axis back at its first value (the
/// axis does not apply to it: `policy.burst` for `fixed_window`) is not run again and has no
/// row there: its row at that point stands for both, so parameters it ignores do not multiply
/// identical rows.
pub fn run(
    text: &str,
    path: &Path,
    axes: &[Axis],
    options: &SweepOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Row>> {
    let total = point_count(axes)?;
    let points: Vec<usize> = (0..total)
        .filter(|&p| options.shard.is_none_or(|s| s.owns(p)))
        .collect();
    let overrides = |p: usize| {
        let mut o = options.base.clone();
        o.extend(point_overrides(axes, p));
        o
    };
    for &p in &points {
        point_scenario(text, path, &overrides(p), options)?;
    }
    let rows: Vec<Result<Vec<Row>>> = points
        .par_iter()
        .map(|&p| {
            let scenario = point_scenario(text, path, &overrides(p), options)?;
            let coords = coordinates(axes, p);
            let firsts: Vec<Scenario> = (0..axes.len())
                .filter(|&i| coords[i] != 0)
                .map(|i| {
                    let mut c = coords.clone();
                    c[i] = 0;
                    point_scenario(text, path, &overrides(point_at(axes, &c)), options)
                })
                .collect::<Result<_>>()?;
            let values: Vec<Value> = axes
                .iter()
                .zip(coordinates(axes, p))
                .map(|(a, i)| json_value(&a.values[i]))
                .collect();
            let reports: Vec<_> = scenario
                .algorithms
                .par_iter()
                .enumerate()
                .filter(|(j, _)| !firsts.iter().any(|f| same_run(&scenario, f, *j)))
                // With `[[alert]]` rules, their figures join each point's (see `observe`).
                .map(|(_, spec)| crate::observe::simulate_one(&scenario, spec))
                .collect::<Result<_>>()?;
            tick();
            Ok(reports
                .iter()
                .map(|r| Row {
                    point: p,
                    values: values.clone(),
                    figures: flatten(r).into_iter().collect(),
                })
                .collect())
        })
        .collect();
    let mut out = Vec::new();
    for r in rows {
        out.extend(r?);
    }
    Ok(out)
}

/// The axes of a sweep: the scenario's `[sweep] set`, each replaced by a `--set` of the same
/// field, then the other `--set`s in order.
pub fn axes(scenario: &Scenario, command_line: &[String]) -> Result<Vec<Axis>> {
    let spec = scenario
        .sweep
        .as_ref()
        .map(|s| s.set.as_slice())
        .unwrap_or(&[]);
    let mut axes: Vec<Axis> = spec
        .iter()
        .map(|(text, at)| Axis::parse(text, &format!("{at}: field `sweep.set`")))
        .collect::<Result<_>>()?;
    for t in command_line {
        let axis = Axis::parse(t, &format!("--set {t}"))?;
        match axes.iter_mut().find(|a| a.field == axis.field) {
            Some(a) => *a = axis,
            None => axes.push(axis),
        }
    }
    if axes.is_empty() {
        return Err(Error::Usage(format!(
            "{}: nothing to sweep: give `--set FIELD=LIST_OR_RANGE`, or `set = [...]` in a [sweep] table",
            scenario.path.display()
        )));
    }
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.field == a.field) {
            return Err(Error::Usage(format!("`{}` is swept twice", a.field)));
        }
    }
    Ok(axes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(field: &str, values: &[&str]) -> Axis {
        Axis {
            field: field.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_grid_varies_the_last_axis_fastest() {
        let axes = [axis("a", &["1", "2"]), axis("b", &["x", "y", "z"])];
        assert_eq!(point_count(&axes).unwrap(), 6);
        let grid: Vec<Vec<usize>> = (0..6).map(|p| coordinates(&axes, p)).collect();
        assert_eq!(
            grid,
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]].map(Vec::from)
        );
        let o = point_overrides(&axes, 5);
        assert_eq!((o[0].value.as_str(), o[1].value.as_str()), ("2", "z"));
        let big = [axis("a", &["1"; 1000]), axis("b", &["1"; 1001])];
        assert!(point_count(&big).is_err());
    }

    #[test]
    fn values_read_as_json_and_numbers() {
        assert_eq!(json_value("60"), Value::from(60));
        assert_eq!(json_value("0.5"), Value::from(0.5));
        assert_eq!(json_value("\"90s\""), Value::from("90s"));
        assert_eq!(json_value("ip"), Value::from("ip"));
        assert_eq!(numeric(&json_value("\"90s\"")), Some(90.0));
        assert_eq!(numeric(&json_value("ip")), None);
    }
}
