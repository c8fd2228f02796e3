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

pub(crate) mod axis;
pub(crate) mod expect;
pub(crate) mod file;
pub(crate) mod grid;
pub(crate) mod outputs;
pub(crate) mod plan;
pub(crate) mod recommend;
pub(crate) mod report;
pub(crate) mod shard;

pub use axis::Axis;
pub use grid::{Row, coordinates, json_value, point_at, point_count, point_overrides};
pub use shard::Shard;

use crate::error::{Error, Result};
use crate::metrics::flatten;
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;
use rayon::prelude::*;
use serde_json::Value;
use std::path::Path;

/// Whether contender `j` runs exactly the same in `a` as in `b`: the same limiter once the
/// parameters it ignores are set aside (the burst of an algorithm without one; the policy's
/// figures a profile did not take), and the same everything else (traffic, duration, seed,
/// deployment). The policy's own burst only sets the reference the figures compare against
/// (the intent's ceiling, when it exceeds the limit).
fn same_run(a: &Scenario, b: &Scenario, j: usize) -> bool {
    fn limiter(spec: &crate::scenario::Contender) -> crate::scenario::Contender {
        let mut spec = spec.clone();
        spec.map_limiters(|l| l.without_ignored_params());
        spec
    }
    let alone = |s: &Scenario| {
        let mut s = s.clone();
        s.algorithms = vec![limiter(&s.algorithms[j])];
        s.policy.burst = 0;
        // The intent's burst matters only where it raises its ceiling (metrics::intent).
        s.intent.base.burst = s.intent.base.ceiling();
        s
    };
    a.algorithms.len() == b.algorithms.len() && alone(a) == alone(b)
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
            let new = |j: usize| !firsts.iter().any(|f| same_run(&scenario, f, j));
            // With `[[alert]]` rules, their figures join each point's (see `observe`).
            let options = crate::sim::RunOptions::new().only(&new);
            let reports = crate::observe::figures(&scenario, options)?;
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
