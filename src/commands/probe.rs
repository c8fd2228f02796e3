//! `rlsim probe`: the scenario's traffic sent to a live service, then the service judged by a
//! run of the probe's own scenario (`crate::probe`), with the probe's figures beside it.

use super::run::{self, RunOptions};
use super::{Format, Loaded, ScenarioInput, Status, note, print};
use crate::error::{Error, Result};
use crate::output::Batch;
use crate::probe::{self, ProbeOptions, judge, render, trace};
use crate::report;
use crate::scenario::Scenario;
use crate::scenario::overrides::{self, Override};
use crate::time::Nanos;
use std::io::Write;
use std::path::PathBuf;

/// What `rlsim probe` was asked.
#[derive(Debug, Clone)]
pub struct ProbeCommand {
    pub input: ScenarioInput,
    /// Where the trace, the probe's scenario and the run's outputs go.
    pub out: PathBuf,
    pub options: ProbeOptions,
    pub format: Format,
    pub strict: bool,
    pub quiet: bool,
    pub columns: report::Columns,
    pub command_line: Vec<String>,
}

/// Runs `rlsim probe`.
pub fn probe(o: &ProbeCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    if o.out.exists() && !o.out.is_dir() {
        return Err(Error::Usage(format!(
            "--out {}: exists and is not a directory",
            o.out.display()
        )));
    }
    let Loaded { text, scenario } = o.input.load()?;
    let effective = effective_text(&text, &o.input)?;
    if !o.quiet {
        note(
            stderr,
            format!(
                "probing {} with {} at speed {} (the scenario's {} in {:.1} s of real time)\n",
                o.options.target,
                scenario.path.display(),
                o.options.speed,
                crate::time::format_duration(scenario.duration),
                scenario.duration as f64 / 1e9 / o.options.speed
            )
            .as_bytes(),
        )?;
    }
    let probed = probe::probe(&scenario, &o.options)?;
    let figures = judge::judge(&probed, &o.options, &scenario.policy.key);
    // At speed 1 the trace keeps the wall clock, so windows a service aligns to the epoch line
    // up; a scaled probe runs on the scenario's own clock.
    let base = if o.options.speed == 1.0 {
        probed.wall_start
    } else {
        scenario.start
    };
    let trace_bytes = trace::trace_csv(&scenario, &probed, &o.options, base);
    let duration = duration(&scenario, &probed, base);
    let toml = trace::scenario_toml(&effective, &scenario, &probed, &o.options, duration)?;
    let probe_json =
        serde_json::to_vec_pretty(&figures).map_err(|e| Error::Internal(e.to_string()))?;
    let files = vec![
        (trace::TRACE.to_string(), trace_bytes),
        (trace::SCENARIO.to_string(), toml.into_bytes()),
        (
            "probe.json".to_string(),
            [probe_json, b"\n".to_vec()].concat(),
        ),
    ];
    // The run reads the trace through its scenario: both are in place before it starts.
    std::fs::create_dir_all(&o.out).map_err(|e| Error::io(&o.out, e))?;
    let mut batch = Batch::new();
    for (name, bytes) in &files[..2] {
        batch.add(&o.out.join(name), bytes)?;
    }
    batch.commit()?;
    let ran = RunOptions {
        input: ScenarioInput::file(o.out.join(trace::SCENARIO)),
        out: Some(o.out.clone()),
        format: o.format,
        strict: o.strict,
        quiet: o.quiet,
        columns: o.columns.clone(),
        command_line: o.command_line.clone(),
        additions: render::blocks(&figures),
        extra_files: files,
        ..RunOptions::default()
    };
    let status = run::run(&ran, stdout, stderr)?;
    if !o.quiet {
        let text = render::terminal(&figures);
        match o.format {
            Format::Table => print(stdout, text.as_bytes())?,
            Format::Json => note(stderr, text.as_bytes())?,
        }
    }
    Ok(status)
}

/// The scenario's text with the command line's `--set` spliced in, as it was validated.
fn effective_text(text: &str, input: &ScenarioInput) -> Result<String> {
    if input.set.is_empty() {
        return Ok(text.to_string());
    }
    let set = input
        .set
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>>>()?;
    Ok(overrides::apply(text, Scenario::shown(&input.path), &set)?.text)
}

/// The probe's scenario's duration: the scenario's, or longer to hold the last request sent
/// (the replay's virtual 0 is its first record's time rounded down to the policy window).
fn duration(scenario: &Scenario, probed: &probe::Probe, base: Nanos) -> Nanos {
    let (Some(first), Some(last)) = (probed.exchanges.first(), probed.exchanges.last()) else {
        return scenario.duration;
    };
    let window = scenario.policy.window.max(1);
    let origin = (base + first.sent) / window * window;
    scenario.duration.max(base + last.sent - origin + 1)
}
