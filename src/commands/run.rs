//! `rlsim run`: simulate a scenario through its contenders, write what was asked, print the
//! table (or summary.json) and the scenario's expectations.

use super::scenario::skipped_lines;
use super::{Format, Loaded, ScenarioInput, Status, note, print};
use crate::check::{self, output};
use crate::error::{Error, Result};
use crate::observe::{self, Observation, Observed};
use crate::output::{Destination, Kind};
use crate::replicate::outputs::{Outcome, Plan};
use crate::report::{self, DecisionLog, DecisionPart, Provenance, Summary, Verdict};
use crate::scenario::{Contender, Scenario};
use crate::sim::{self, RunReport};
use crate::store::{Mode, RedisStore};
use crate::terminal;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `rlsim run` was asked.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub input: ScenarioInput,
    /// The output directory (`--out`).
    pub out: Option<PathBuf>,
    pub format: Format,
    /// The decision log's file, `-` for standard output.
    pub decisions: Option<PathBuf>,
    /// The OpenMetrics file.
    pub metrics_out: Option<PathBuf>,
    /// A failed expectation exits 1.
    pub strict: bool,
    pub quiet: bool,
    /// The table has the wall-clock decisions/s column.
    pub timing: bool,
    /// The table's columns (`--wide`, `--columns`).
    pub columns: report::Columns,
    /// A Redis URL to decide through.
    pub store: Option<String>,
    /// The command line, as the outputs' provenance records it.
    pub command_line: Vec<String>,
    /// `--replicates N` (docs/replicates.md).
    pub replicates: Option<u32>,
    /// `--sensitivity`.
    pub sensitivity: bool,
    /// `--time-resolution-range`: the figures over the two extreme placements of a
    /// one-second log's requests (docs/traffic.md).
    pub time_resolution_range: bool,
    /// What the command that asked for the run adds to `--out` (`rlsim probe`'s section and
    /// files), listed in the manifest like the run's own.
    pub additions: Vec<report::document::Block>,
    pub extra_files: Vec<(String, Vec<u8>)>,
}

/// Where a run's side outputs go, each checked before anything runs.
struct Targets {
    decisions: Option<Destination>,
    metrics_out: Option<Destination>,
    store: Option<RedisStore>,
}

/// Runs `rlsim run`.
pub fn run(o: &RunOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    if let Some(out) = &o.out
        && out.exists()
        && !out.is_dir()
    {
        return Err(Error::Usage(format!(
            "--out {}: exists and is not a directory",
            out.display()
        )));
    }
    let Loaded { text, scenario } = o.input.load()?;
    let targets = targets(o, &scenario)?;
    let plan = Plan::new(&text, &o.input.set, &scenario, o.replicates, o.sensitivity)?;
    let decisions_on_stdout =
        (targets.decisions.as_ref()).is_some_and(|d| d.kind() == Kind::Stdout);
    let log = targets.decisions.map(DecisionLog::new);
    let metrics = targets.metrics_out;
    let observed = run_contenders(
        &scenario,
        log.as_ref(),
        metrics.is_some(),
        targets.store,
        o,
        stderr,
    )?;
    let Observed {
        report,
        observations,
        mut parts,
    } = observed;
    for part in &mut parts {
        part.flush()?;
    }
    let replicated = plan.map(|p| p.run()).transpose()?;
    // The one verdict: the terminal, summary.json and the reports show it alike.
    let robustness = replicated
        .as_ref()
        .map(|r| r.robustness())
        .unwrap_or_default();
    let verdict = Verdict::new(&scenario, &report.algorithms, &robustness);
    if let Some(d) = &metrics {
        d.write_all(&observe::openmetrics(&observations), stdout)?;
    }
    let shown = Shown {
        scenario: &scenario,
        report: &report,
        observations: &observations,
        verdict: &verdict,
        decisions_on_stdout,
    };
    if let Some(out) = &o.out {
        write_out_dir(o, out, &text, &shown, replicated.as_ref())?;
    }
    if let Some(log) = &log {
        match log.write(parts, stdout) {
            // `--decisions - | head`: the reader has what it wanted.
            Err(e) if e.is_broken_pipe() => {}
            other => other?,
        }
    }
    let passed = print_results(o, &shown, stdout, stderr)?;
    print_notes(o, &shown, replicated.as_ref(), stdout, stderr)?;
    Ok(Status::of(passed || !o.strict))
}

/// The `--out` directory: every output file, with the replicates' blocks and files.
fn write_out_dir(
    o: &RunOptions,
    out: &Path,
    text: &str,
    s: &Shown,
    replicated: Option<&Outcome>,
) -> Result<()> {
    let provenance = Provenance::new(s.scenario, text.as_bytes(), &o.command_line);
    let mut additions = replicated
        .map(|r| report::Additions {
            blocks: r.blocks(),
            files: r.files(),
        })
        .unwrap_or_default();
    additions.blocks.extend(o.additions.iter().cloned());
    additions.files.extend(o.extra_files.iter().cloned());
    report::write_outputs(
        out,
        s.scenario,
        s.report,
        &provenance,
        s.observations,
        s.verdict,
        additions,
    )
}

/// What follows the results: the replicates' table, the lines a replay skipped, the time
/// resolution (`--time-resolution-range`).
fn print_notes(
    o: &RunOptions,
    s: &Shown,
    replicated: Option<&Outcome>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<()> {
    let (scenario, decisions_on_stdout) = (s.scenario, s.decisions_on_stdout);
    if let (Some(r), false) = (replicated, o.quiet) {
        // Beside the table: on standard error when standard output is JSON or the log.
        match o.format {
            Format::Table if !decisions_on_stdout => print(stdout, r.terminal().as_bytes())?,
            _ => note(stderr, r.terminal().as_bytes())?,
        }
    }
    if !o.quiet {
        let skipped = crate::metrics::skipped_lines(&s.report.algorithms);
        note(stderr, skipped_lines(scenario, skipped).as_bytes())?;
    }
    if o.time_resolution_range {
        note(stderr, super::resolution::range_lines(scenario)?.as_bytes())?;
    }
    Ok(())
}

/// Opens `--decisions`, `--metrics-out` and `--store`: a target that cannot work is bad input,
/// refused before anything runs or is written.
fn targets(o: &RunOptions, scenario: &Scenario) -> Result<Targets> {
    let decisions = match &o.decisions {
        Some(path) => {
            let d = Destination::or_stdout(path)?;
            d.refuse_inputs("--decisions", scenario.inputs())?;
            if d.kind() == Kind::Stdout && o.format == Format::Json {
                return Err(Error::Usage(
                    "--decisions - and --format json both need standard output; \
                     write one of them to a file"
                        .into(),
                ));
            }
            Some(d)
        }
        None => None,
    };
    let metrics_out = match &o.metrics_out {
        Some(path) => {
            let d = Destination::or_stdout(path)?;
            d.refuse_inputs("--metrics-out", scenario.inputs())?;
            if d.kind() == Kind::Stdout {
                return Err(Error::Usage(
                    "--metrics-out needs a file (standard output holds the table or the summary)"
                        .into(),
                ));
            }
            Some(d)
        }
        None => None,
    };
    // A contender the store cannot decide for is bad input too.
    let store = match &o.store {
        Some(url) => {
            for c in &scenario.algorithms {
                c.through_store(&scenario.path)?;
            }
            Some(RedisStore::open(url, Mode::Drive)?)
        }
        None => None,
    };
    Ok(Targets {
        decisions,
        metrics_out,
        store,
    })
}

/// Runs every contender with its decision log part and observer, under the progress bar, then
/// closes the store.
fn run_contenders(
    scenario: &Scenario,
    log: Option<&DecisionLog>,
    metrics: bool,
    store: Option<RedisStore>,
    o: &RunOptions,
    stderr: &mut dyn Write,
) -> Result<Observed<DecisionPart>> {
    let part = |spec: &Contender| match log {
        Some(log) => log.part(&spec.name, &scenario.traffic).map(Some),
        None => Ok(None),
    };
    let progress = sim::Progress::new();
    let observed = terminal::with_progress(scenario, &progress, !o.quiet, || {
        let remote = store.as_ref().map(|s| s as &dyn sim::RemoteFactory);
        let options = sim::RunOptions::new()
            .timed(true)
            .progress(&progress)
            .through(remote);
        observe::run(scenario, options, metrics, part)
    })?;
    if let Some(store) = store {
        let url = store.url().to_string();
        let removed = store.close()?;
        if !o.quiet {
            let line = format!("decided through {url}; its {removed} keys removed\n");
            note(stderr, line.as_bytes())?;
        }
    }
    Ok(observed)
}

/// What the printed results are made of.
struct Shown<'a> {
    scenario: &'a Scenario,
    report: &'a RunReport,
    observations: &'a [Observation],
    verdict: &'a Verdict,
    /// With `--decisions -` standard output is the log: the table goes beside it.
    decisions_on_stdout: bool,
}

/// Prints the table or summary.json and the expectation lines; whether every expectation held.
fn print_results(
    o: &RunOptions,
    s: &Shown,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<bool> {
    let (lines, failures, passed) = expectation_lines(s.scenario, s.report);
    match o.format {
        Format::Table if o.quiet => note(stderr, failures.as_bytes())?,
        Format::Table => {
            let (out, colour): (&mut dyn Write, bool) = if s.decisions_on_stdout {
                (&mut *stderr, false)
            } else {
                (&mut *stdout, terminal::stdout_has_colour())
            };
            let timing = o.timing.then_some(s.report.throughput.as_slice());
            let algorithms = &s.report.algorithms;
            let mut text = report::styled_table(s.scenario, algorithms, &o.columns, timing, colour);
            text.push_str(&report::backtest::lines(s.scenario, algorithms));
            text.push('\n');
            text.push_str(&s.verdict.lines(report::WIDTH));
            text.push_str(&observe::alert_lines(s.observations));
            text.push_str(&report::deployments::lines(algorithms));
            if !lines.is_empty() {
                text.push('\n');
                text.push_str(&lines);
            }
            print(out, text.as_bytes())?;
        }
        // stdout stays exactly summary.json; the expectation lines go beside it.
        Format::Json => {
            let summary =
                Summary::observed(s.scenario, s.report, s.observations, s.verdict.clone());
            print(stdout, &report::summary_json(&summary))?;
            note(stderr, if o.quiet { &failures } else { &lines }.as_bytes())?;
        }
    }
    Ok(passed)
}

/// The expectation lines with their count line, the part `--quiet` still prints (a failure is
/// never silent: `--strict` exits 1 on it), and whether all passed.
fn expectation_lines(scenario: &Scenario, report: &RunReport) -> (String, String, bool) {
    let expectations = check::evaluate(scenario, &report.algorithms);
    let mut lines = String::new();
    let mut failures = String::new();
    for e in &expectations {
        let line = output::expectation_line(&scenario.name, e);
        if !e.passed {
            failures.push_str(&line);
        }
        lines.push_str(&line);
    }
    let failed = expectations.iter().filter(|e| !e.passed).count();
    if !expectations.is_empty() {
        let count = output::count_line(expectations.len() - failed, failed);
        lines.push_str(&count);
        if failed > 0 {
            failures.push_str(&count);
        }
    }
    (lines, failures, failed == 0)
}
