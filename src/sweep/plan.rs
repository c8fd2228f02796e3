//! A validated sweep (`rlsim sweep`'s, and the `[sweep]` that `rlsim check` runs), and the
//! plan run.

use super::outputs::SweepFile;
use super::recommend::GoalSpec;
use super::{Axis, Row, SweepOptions};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use sha2::Digest;

/// A validated sweep, ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub text: String,
    pub scenario: Scenario,
    pub axes: Vec<Axis>,
    pub options: SweepOptions,
    /// The file as the outputs describe it (rows empty).
    pub file: SweepFile,
    /// Points this run runs: all, or the shard's share.
    pub share: usize,
}

/// The plan of `axes` over a parsed scenario (also what `rlsim check` runs for `[sweep]`).
pub fn plan_of(
    text: String,
    scenario: Scenario,
    axes: Vec<Axis>,
    options: SweepOptions,
    chart: Option<String>,
) -> Result<Plan> {
    let points = super::point_count(&axes)?;
    let spec = scenario.sweep.clone().unwrap_or_default();
    let names = crate::scenario::metric_names(&scenario);
    let figures = names.of(&crate::scenario::Scope::Algorithm);
    let prefer = match &spec.prefer {
        None => 0,
        Some((name, at)) => scenario
            .goals
            .iter()
            .position(|g| &g.name == name)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "{at}: field `sweep.prefer`: {}",
                    crate::suggest::unknown(
                        "goal",
                        name,
                        scenario.goals.iter().map(|g| g.name.as_str())
                    )
                ))
            })?,
    };
    let chart = match chart {
        Some(c) => (c, "--chart".to_string()),
        None => spec
            .chart
            .map(|(c, at)| (c, format!("{at}: field `sweep.chart`")))
            .unwrap_or_else(|| ("legit_goodput".into(), String::new())),
    };
    if !figures.iter().any(|f| f == &chart.0) {
        return Err(Error::Usage(format!(
            "{}: {}",
            chart.1,
            crate::suggest::unknown("figure", &chart.0, figures.iter().map(String::as_str))
        )));
    }
    let share = (0..points)
        .filter(|&p| options.shard.is_none_or(|s| s.owns(p)))
        .count();
    let file = SweepFile {
        schema_version: crate::report::SCHEMA_VERSION,
        rlsim_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: scenario.name.clone(),
        scenario_sha256: sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        seed: options.seed.unwrap_or(scenario.seed),
        overrides: options.base.iter().map(|o| o.label()).collect(),
        axes: axes.clone(),
        points,
        goals: scenario.goals.iter().map(GoalSpec::of).collect(),
        prefer,
        chart: chart.0,
        shard: options.shard,
        recommendation: None,
        rows: Vec::new(),
    };
    Ok(Plan {
        text,
        scenario,
        axes,
        options,
        file,
        share,
    })
}

/// Runs the plan: its rows, and the file its outputs render.
pub fn run(plan: &Plan, tick: &(dyn Fn() + Sync)) -> Result<(SweepFile, Vec<Row>)> {
    let rows = super::run(
        &plan.text,
        &plan.scenario.path,
        &plan.axes,
        &plan.options,
        tick,
    )?;
    let file = plan.file.clone().with_rows(&rows);
    Ok((file, rows))
}
