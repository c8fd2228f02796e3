//! `rlsim sweep` and `rlsim merge`: a scenario over a grid of field values, its shards
//! combined, and what both print.

use super::{Format, Status, note, print};
use crate::error::Result;
use crate::scenario::Scenario;
use crate::sweep::outputs::{self, SweepFile};
use crate::sweep::plan::{self, Plan};
use crate::sweep::{Shard, SweepOptions as PointOptions};
use std::io::Write;
use std::path::PathBuf;

/// What `rlsim sweep` was asked.
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    /// The scenario file, or `-`.
    pub scenario: PathBuf,
    /// The swept fields (`FIELD=LIST_OR_RANGE`); none: the scenario's `[sweep] set`.
    pub set: Vec<String>,
    /// `K/N`: run only shard K of N.
    pub shard: Option<String>,
    pub seed: Option<u64>,
    /// The figure of the line chart and heatmap.
    pub chart: Option<String>,
    pub skip_bad_lines: bool,
    /// The output directory.
    pub out: Option<PathBuf>,
    pub format: Format,
    /// No progress bar and no summary line.
    pub quiet: bool,
}

/// What `rlsim merge` was asked.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The shards' output directories.
    pub dirs: Vec<PathBuf>,
    /// Where the whole sweep's files go.
    pub out: PathBuf,
    pub format: Format,
    pub quiet: bool,
}

/// Reads the scenario and the axes and checks every name before anything runs.
pub fn plan(o: &SweepOptions) -> Result<Plan> {
    let text = Scenario::read(&o.scenario)?;
    let scenario = Scenario::parse(&text, Scenario::shown(&o.scenario))?;
    let axes = crate::sweep::axes(&scenario, &o.set)?;
    let shard = o.shard.as_deref().map(Shard::parse).transpose()?;
    let options = PointOptions {
        seed: o.seed,
        base: Vec::new(),
        shard,
        skip_bad_lines: o.skip_bad_lines,
    };
    plan::plan_of(text, scenario, axes, options, o.chart.clone())
}

/// Runs `rlsim sweep`.
pub fn sweep(o: &SweepOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let plan = plan(o)?;
    let bar = if o.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(plan.share as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} points {elapsed}")
                .expect("a valid template"),
        )
    };
    let (file, rows) = plan::run(&plan, &|| bar.inc(1))?;
    bar.finish_and_clear();
    if let Some(out) = &o.out {
        outputs::write(out, &file)?;
    }
    let mut line = match file.shard {
        Some(s) => format!(
            "shard {}/{}: {} of {} points run\n",
            s.index, s.count, plan.share, file.points
        ),
        None => crate::sweep::report::summary_line(&file, &rows),
    };
    if o.out.is_none() && o.format == Format::Table {
        line.push_str("(no --out DIR: nothing written)\n");
    }
    outcome(&file, &line, o.format, o.quiet, stdout, stderr)
}

/// Runs `rlsim merge`.
pub fn merge(o: &MergeOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let whole = outputs::merge(&o.dirs)?;
    outputs::write(&o.out, &whole)?;
    let rows = whole.rows()?;
    let line = crate::sweep::report::summary_line(&whole, &rows);
    outcome(&whole, &line, o.format, o.quiet, stdout, stderr)
}

/// What `sweep` and `merge` print, and their exit status: the summary `line` (on standard error
/// beside `--format json`'s sweep.json; under `--quiet` only when it is the reason for exit 1).
fn outcome(
    file: &SweepFile,
    line: &str,
    format: Format,
    quiet: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<Status> {
    let unmet = goals_unmet(file);
    if format == Format::Json {
        print(stdout, &outputs::sweep_json(file))?;
    }
    if !quiet && format == Format::Table {
        print(stdout, line.as_bytes())?;
    } else if !quiet || unmet {
        note(stderr, line.as_bytes())?;
    }
    Ok(Status::of(!unmet))
}

/// The scenario has `[goals]` and no point of the (whole) sweep meets them all: exit 1, so
/// that CI notices. A shard cannot tell (its merge does).
fn goals_unmet(file: &SweepFile) -> bool {
    !file.goals.is_empty()
        && file
            .recommendation
            .as_ref()
            .is_some_and(|r| r.recommended.is_none())
}
