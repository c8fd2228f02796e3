//! The command line: clap definitions and the commands they run.

use crate::algorithms::AlgorithmKind;
use crate::algorithms::catalogue;
use crate::check::{self, CheckOptions, Tolerance, output};
use crate::error::{Error, Result};
use crate::observe::{self, Observer};
use crate::output::{Destination, Kind};
use crate::report::{self, DecisionLog, Provenance, Summary};
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;
use crate::sim;
use crate::store::{Mode, RedisStore};
use crate::terminal;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  rlsim run scenarios/boundary.toml                 compare the algorithms, print a table
  rlsim run scenarios/boundary.toml --out results   also write the data, charts and reports
  rlsim check scenarios/ --junit junit.xml          the CI gate: check every expectation
  rlsim traffic scenarios/burst.toml                the generated requests, as CSV
  rlsim completions bash > ~/.local/share/bash-completion/completions/rlsim";

const RUN_EXAMPLES: &str = "\
Examples:
  rlsim run scenarios/boundary.toml
  rlsim run scenarios/boundary.toml --out results --seed 7
  rlsim run scenarios/nat.toml --set policy.limit=60 --set traffic.scraper.rate=50/min
  rlsim run scenarios/burst.toml --format json --quiet > summary.json
  rlsim run scenarios/burst.toml --decisions - | grep ',reject,'

Exit status: 0 when the run finished (even if an expectation failed); 1 with --strict when an
expectation failed (the failures are printed on standard error even under --quiet); 2 for bad
input.";

const CHECK_EXAMPLES: &str = "\
Examples:
  rlsim check scenarios/
  rlsim check scenarios/ --format json > baseline.json
  rlsim check scenarios/ --baseline baseline.json --tolerance 0.05 --junit junit.xml

Exit status: 0 when every expectation holds and nothing regressed; 1 when one fails or regresses,
or when nothing was checked (no expectation and no baseline metric); 2 for bad input.";

const VERIFY_EXAMPLES: &str = "\
Examples:
  rlsim verify scenarios/boundary.toml --store redis://127.0.0.1:6390
  rlsim verify scenarios/diurnal.toml --store redis://127.0.0.1:6390 --limit 20000

Exit status: 0 when every stored algorithm agreed on every decision; 1 when one disagreed, or
when nothing was verified (no contender decides through the store); 2 for bad input or a store
that cannot be reached or refuses the scripts; 3 when the store failed during the run.";

const SWEEP_EXAMPLES: &str = "\
Examples:
  rlsim sweep scenarios/tune_limit.toml --out sweep
  rlsim sweep scenarios/nat.toml --set policy.limit=50..200:50 --set policy.key=ip,user
  rlsim sweep scenarios/tune_limit.toml --shard 1/2 --out shard1
  rlsim sweep scenarios/tune_limit.toml --shard 2/2 --out shard2

Exit status: 0 when the sweep ran and some row meets every goal of the scenario's [goals] (or it
has none); 1 when it has goals and no row meets them all (the files are written all the same);
2 for bad input. A shard exits 0: its `rlsim merge` tells.";

const MERGE_EXAMPLES: &str = "\
Example:
  rlsim merge shard1 shard2 --out sweep

Exit status: 0 when some row of the whole sweep meets every goal (or there are none); 1 when the
scenario has goals and no row meets them all; 2 for bad input or shards that do not fit.";

const TRAFFIC_EXAMPLES: &str = "\
Examples:
  rlsim traffic scenarios/burst.toml | head
  rlsim traffic scenarios/burst.toml --out burst.csv";

#[derive(Debug, Parser)]
#[command(
    name = "rlsim",
    version,
    about = "Replays traffic through every rate-limiting algorithm under a virtual clock, and measures how each one does.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scenario through its algorithms and report how each one did.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run scenarios and check their expectations (and a baseline): the CI gate.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// List the algorithms and library profiles rlsim knows, with their parameters.
    Algorithms(AlgorithmsArgs),
    /// Write the traffic a scenario generates, before any limiter, as a CSV trace.
    #[command(after_help = TRAFFIC_EXAMPLES)]
    Traffic(TrafficArgs),
    /// Run a scenario over a grid of field values and recommend one against its [goals].
    #[command(after_help = SWEEP_EXAMPLES)]
    Sweep(SweepArgs),
    /// Combine the output directories of `rlsim sweep --shard K/N` into the whole sweep's.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Measure decisions/s per algorithm at 1, 10^3 and 10^6 keys, and end-to-end requests/s.
    Bench(BenchArgs),
    /// Replay a scenario through the in-memory model and a real Redis, and compare each decision.
    #[command(after_help = VERIFY_EXAMPLES)]
    Verify(VerifyArgs),
    /// Measure the bytes each algorithm's state takes in a real Redis, beside rlsim's estimate.
    StoreMemory(StoreMemoryArgs),
    /// Print a shell completion script to standard output.
    #[command(after_help = "Example:\n  rlsim completions zsh > ~/.zfunc/_rlsim")]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to standard output.
    #[command(after_help = "Example:\n  rlsim man > rlsim.1 && man ./rlsim.1")]
    Man {
        /// A subcommand's page (`rlsim-run(1)`) instead of the main one.
        command: Option<String>,
        /// Write every page (`rlsim.1` and `rlsim-COMMAND.1` for each command) into DIR.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The scenario file (TOML), or `-` to read it from standard input.
    pub scenario: PathBuf,
    /// A swept field and its values (repeatable; several make a grid): `policy.limit=10,50,100`,
    /// `policy.limit=50..500:50`, `policy.window=10s..2m:10s`, `policy.limit=1..10000:x10`.
    /// A single value is a fixed override. Default: the scenario's `[sweep] set`.
    #[arg(long = "set", value_name = "FIELD=LIST_OR_RANGE")]
    pub set: Vec<String>,
    /// Write sweep.csv, sweep.json, charts and sweep.md/sweep.html into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run only shard K of N (points p with p mod N = K-1); merge the shards with `rlsim merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The figure of the line chart and heatmap (default: `[sweep] chart`, else legit_goodput).
    #[arg(long, value_name = "FIGURE")]
    pub chart: Option<String>,
    /// What to print on standard output: the summary line, or sweep.json (the line then goes
    /// to standard error).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// No progress bar and no summary line (unless no point meets the goals: exit 1).
    #[arg(long, short)]
    pub quiet: bool,
    /// Skip malformed lines of replayed traces instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shard directories (each written by `rlsim sweep --shard K/N --out DIR`).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where to write the whole sweep's files.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// What to print on standard output: the summary line, or sweep.json (the line then goes
    /// to standard error).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// No summary line (unless no point meets the goals: exit 1).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Decisions (and simulated requests) per measurement.
    #[arg(long, value_name = "N", default_value_t = 2_000_000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub requests: u64,
    /// Only these algorithms (repeatable; default: all six).
    #[arg(long, value_name = "NAME")]
    pub algorithm: Vec<AlgorithmKind>,
    /// What to print: the two tables, or one JSON document of every measurement.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The scenario file (TOML), or `-` to read it from standard input.
    pub scenario: PathBuf,
    /// The Redis to compare with: redis://HOST:PORT[/DB] (docs/redis.md).
    #[arg(long, value_name = "URL")]
    pub store: String,
    /// Compare at most this many decisions per algorithm (the rest of the run stays in
    /// memory): Redis answers some 10^4 scripts per second over one connection.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Override a field of the scenario (repeatable), e.g. `duration=2m` for a shorter run.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// What to print: the text report, or one JSON document.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print the text report only when an algorithm disagreed (errors always).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, clap::Args)]
pub struct StoreMemoryArgs {
    /// The Redis to measure in: redis://HOST:PORT[/DB]. Use one nothing else writes to.
    #[arg(long, value_name = "URL")]
    pub store: String,
    /// Keys per case (fewer for long sorted sets).
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub keys: u64,
    /// What to print: a Markdown table, or JSON (an array of rows).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct AlgorithmsArgs {
    /// What to print: a listing for people, or JSON (an array of entries).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct TrafficArgs {
    /// The scenario file (TOML), or `-` to read it from standard input.
    pub scenario: PathBuf,
    /// The CSV file to write (default, or `-`: standard output):
    /// time,ip,user,api_key,endpoint,source,role.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No note of how many requests were written or lines skipped: errors only.
    #[arg(long, short)]
    pub quiet: bool,
    /// Override the scenario's seed (0 to 18446744073709551615).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Skip malformed lines of replayed traces, and report how many, instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file (TOML), or `-` to read it from standard input.
    pub scenario: PathBuf,
    /// Write every output into this directory (created if missing): summary.json, summary.csv,
    /// timeseries.csv, delays.csv, throughput.json, charts/*.svg, report.md and report.html
    /// (docs/outputs.md).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the scenario's seed (0 to 18446744073709551615).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// What to print on standard output: the table, or summary.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write every decision (one CSV row per request per algorithm, in time order) to this file,
    /// or to standard output for `-` (the table then goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub decisions: Option<PathBuf>,
    /// Write the metrics a deployment of each algorithm would expose, scraped every 15 s of
    /// virtual time, to this file in the OpenMetrics text format (docs/observability.md).
    #[arg(long, value_name = "FILE")]
    pub metrics_out: Option<PathBuf>,
    /// Exit with code 1 when an expectation of the scenario fails.
    #[arg(long)]
    pub strict: bool,
    /// Print no table, passing expectation lines or progress bar: only errors, failed
    /// expectations (on standard error) and `--format json`.
    #[arg(long, short)]
    pub quiet: bool,
    /// Add the wall-clock `decisions/s` column to the table (it varies from run to run, so the
    /// default table leaves it out; `--out`'s throughput.json always has it).
    #[arg(long)]
    pub timing: bool,
    /// Skip malformed lines of replayed traces, and report how many, instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Override a field of the scenario by its dotted path (repeatable), the value written as
    /// in the file: `policy.limit=60`, `policy.window=30s`, `traffic[1].rate=50/min`, or a
    /// source by name, `traffic.scraper.rate=50/min` (scenarios/nat.toml).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Decide through a real Redis (redis://HOST:PORT[/DB]): every algorithm runs as a Lua
    /// script, and the outputs come from its decisions (docs/redis.md).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Scenario files, or directories to search for them (*.toml).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// What to print on standard output: the text report, or the result document (docs/ci.md).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print only failed expectations (and the count line) and the baseline's table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Compare with an earlier summary.json or `rlsim check --format json` output (repeatable).
    #[arg(long, value_name = "FILE")]
    pub baseline: Vec<PathBuf>,
    /// Relative worsening accepted before a metric counts as a regression: 0.05 or 5%.
    #[arg(long, value_name = "REL", default_value = "0")]
    pub tolerance: String,
    /// The tolerance for one metric, overriding --tolerance (repeatable).
    #[arg(long = "tolerance-for", value_name = "METRIC=REL")]
    pub tolerance_for: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people.
    Table,
    /// JSON, for programs.
    Json,
}

/// How a command that ran to the end came out. Errors (bad input) are the `Err` of [`execute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    /// An expectation failed or a metric regressed: exit code 1.
    ChecksFailed,
}

/// Runs a parsed command line, printing results to `stdout` and notes to `stderr`.
pub fn execute(cli: Cli, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    match cli.command {
        Command::Run(args) => run(args, stdout, stderr),
        Command::Check(args) => {
            let options = CheckOptions {
                paths: args.paths,
                json: args.format == Format::Json,
                quiet: args.quiet,
                junit: args.junit,
                baselines: args.baseline,
                tolerance: Tolerance::parse(&args.tolerance, &args.tolerance_for)?,
            };
            let report = check::check(&options)?;
            print(stdout, &report.stdout)?;
            if report.checked == 0 {
                // A gate that checked nothing must not look green.
                print_to(
                    stderr,
                    "<stderr>",
                    b"error: nothing was checked: no scenario has expectations (`expect = [...]`) \
                      and no baseline metric was compared\n",
                )?;
            }
            Ok(status(report.passed))
        }
        Command::Traffic(args) => traffic(args, stdout, stderr),
        Command::Sweep(args) => sweep(args, stdout, stderr),
        Command::Merge(args) => merge(args, stdout, stderr),
        Command::Bench(args) => {
            let kinds = if args.algorithm.is_empty() {
                AlgorithmKind::ALL.to_vec()
            } else {
                args.algorithm
            };
            let report = crate::bench::measure(args.requests, &kinds)?;
            match args.format {
                Format::Table => print(stdout, crate::bench::text(&report).as_bytes())?,
                Format::Json => print(stdout, &json_bytes(&report)?)?,
            }
            Ok(Status::Success)
        }
        Command::Verify(args) => verify(args, stdout, stderr),
        Command::StoreMemory(args) => {
            let rows = crate::store::memory::measure(&args.store, args.keys as usize)?;
            match args.format {
                Format::Table => print(stdout, crate::store::memory::markdown(&rows).as_bytes())?,
                Format::Json => print(stdout, &json_bytes(&rows)?)?,
            }
            Ok(Status::Success)
        }
        Command::Algorithms(args) => {
            let entries = catalogue::entries();
            match args.format {
                Format::Table => print(stdout, catalogue::text(&entries).as_bytes())?,
                Format::Json => print(stdout, &catalogue::json(&entries))?,
            }
            Ok(Status::Success)
        }
        Command::Completions { shell } => {
            let mut bytes = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "rlsim", &mut bytes);
            print(stdout, &bytes)?;
            Ok(Status::Success)
        }
        Command::Man { command, dir } => {
            if let Some(dir) = dir {
                std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                for page in crate::manpage::pages(Cli::command()) {
                    let path = dir.join(&page.file_name);
                    std::fs::write(&path, &page.roff).map_err(|e| Error::io(&path, e))?;
                }
                return Ok(Status::Success);
            }
            let Some(page) = crate::manpage::page(Cli::command(), command.as_deref()) else {
                let name = command.unwrap_or_default();
                let names = crate::manpage::subcommands(Cli::command());
                return Err(Error::Usage(format!(
                    "rlsim man: {}",
                    crate::suggest::unknown("command", &name, names.iter().map(String::as_str))
                )));
            };
            print(stdout, &page.roff)?;
            Ok(Status::Success)
        }
    }
}

/// A result model as pretty JSON, with a final newline.
fn json_bytes(value: &impl serde::Serialize) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Internal(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn status(passed: bool) -> Status {
    if passed {
        Status::Success
    } else {
        Status::ChecksFailed
    }
}

fn traffic(args: TrafficArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    if args.skip_bad_lines {
        scenario = scenario.with_skip_bad_lines();
    }
    let out_path = args.out.unwrap_or_else(|| PathBuf::from("-"));
    let destination = Destination::or_stdout(&out_path)?;
    destination.refuse_inputs("--out", scenario.inputs())?;
    let mut out = destination.create(stdout)?;
    let count = crate::traffic::export::write_trace(
        &scenario.traffic,
        scenario.seed,
        &mut out,
        destination.path(),
    )
    .and_then(|count| out.finish().map(|()| count));
    let pass = match count {
        // `rlsim traffic --out - | head`: the reader has what it wanted.
        Err(e) if e.is_broken_pipe() => return Ok(Status::Success),
        other => other?,
    };
    if !args.quiet {
        let mut note = format!(
            "{} requests written to {}\n",
            pass.requests,
            destination.path().display()
        );
        note.push_str(&skipped_lines(&scenario, &pass.skipped_lines));
        print_to(stderr, "<stderr>", note.as_bytes())?;
    }
    Ok(Status::Success)
}

fn run(args: RunArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    if let Some(out) = &args.out
        && out.exists()
        && !out.is_dir()
    {
        return Err(Error::Usage(format!(
            "--out {}: exists and is not a directory",
            out.display()
        )));
    }
    let overrides = args
        .set
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>>>()?;
    // Read once: the reports name the scenario file by the hash of these very bytes.
    let text = Scenario::read(&args.scenario)?;
    let mut scenario = Scenario::parse_with(&text, Scenario::shown(&args.scenario), &overrides)?;
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    if args.skip_bad_lines {
        scenario = scenario.with_skip_bad_lines();
    }
    let decisions = match &args.decisions {
        Some(path) => {
            let d = Destination::or_stdout(path)?;
            d.refuse_inputs("--decisions", scenario.inputs())?;
            if d.kind() == Kind::Stdout && args.format == Format::Json {
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
    let metrics_out = match &args.metrics_out {
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
    // Before anything runs or is written: an unusable store, or a contender it cannot decide
    // for, is bad input.
    let store = match &args.store {
        Some(url) => {
            for c in &scenario.algorithms {
                c.through_store(&scenario.path)?;
            }
            Some(RedisStore::open(url, Mode::Drive)?)
        }
        None => None,
    };
    let observe = observe::wanted(&scenario, metrics_out.is_some());
    let decisions_on_stdout = decisions.as_ref().is_some_and(|d| d.kind() == Kind::Stdout);
    let log = decisions.map(DecisionLog::new);
    let make_sink = |_, spec: &crate::scenario::Contender| {
        let part = match &log {
            Some(log) => Some(log.part(&spec.name)?),
            None => None,
        };
        let observer = observe.then(|| {
            Observer::new(
                &scenario,
                &spec.name,
                spec.params.window,
                metrics_out.is_some(),
            )
        });
        Ok((part.is_some() || observer.is_some()).then_some((part, observer)))
    };
    let progress = sim::Progress::new();
    let (mut report, sinks) = terminal::with_progress(&scenario, &progress, !args.quiet, || {
        let remote = store.as_ref().map(|s| s as &dyn sim::RemoteFactory);
        let options = sim::RunOptions::new()
            .timed(true)
            .progress(&progress)
            .through(remote);
        sim::run_all(&scenario, options.with_sinks(make_sink))
    })?;
    if let Some(store) = store {
        let url = store.url().to_string();
        let removed = store.close()?;
        if !args.quiet {
            let note = format!("decided through {url}; its {removed} keys removed\n");
            print_to(stderr, "<stderr>", note.as_bytes())?;
        }
    }
    let mut parts = Vec::new();
    let mut observations = Vec::new();
    for (i, (part, observer)) in sinks.into_iter().flatten().enumerate() {
        parts.extend(part);
        if let Some(o) = observer {
            let mut o = o.finish(&scenario);
            o.attach(&mut report.algorithms[i]);
            observations.push(o);
        }
    }
    for part in &mut parts {
        part.flush()?;
    }
    if let Some(d) = &metrics_out {
        d.write_all(&observe::openmetrics(&observations), stdout)?;
    }
    if let Some(out) = &args.out {
        let args: Vec<String> = std::env::args().collect();
        let provenance = Provenance::new(&scenario, text.as_bytes(), &args);
        report::write_outputs(out, &scenario, &report, &provenance, &observations)?;
    }
    if let Some(log) = &log {
        match log.write(parts, stdout) {
            // `--decisions - | head`: the reader has what it wanted.
            Err(e) if e.is_broken_pipe() => {}
            other => other?,
        }
    }
    let expectations = check::evaluate(&scenario, &report.algorithms);
    let mut lines = String::new();
    // What `--quiet` still prints: a failure is never silent (`--strict` exits 1 on it).
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
    match args.format {
        Format::Table if args.quiet => print_to(stderr, "<stderr>", failures.as_bytes())?,
        Format::Table => {
            // With `--decisions -` standard output is the log: the table goes beside it.
            let (out, colour): (&mut dyn Write, bool) = if decisions_on_stdout {
                (&mut *stderr, false)
            } else {
                (&mut *stdout, terminal::stdout_has_colour())
            };
            let timing = args.timing.then_some(report.throughput.as_slice());
            let mut text = report::styled_table(&scenario, &report.algorithms, timing, colour);
            text.push_str(&observe::alert_lines(&observations));
            text.push_str(&report::deployments::lines(&report.algorithms));
            if !lines.is_empty() {
                text.push('\n');
                text.push_str(&lines);
            }
            print(out, text.as_bytes())?;
        }
        // stdout stays exactly summary.json; the expectation lines go beside it.
        Format::Json => {
            print(
                stdout,
                &report::summary_json(&Summary::observed(&scenario, &report, &observations)),
            )?;
            let lines = if args.quiet { &failures } else { &lines };
            print_to(stderr, "<stderr>", lines.as_bytes())?;
        }
    }
    if !args.quiet {
        let skipped = crate::metrics::skipped_lines(&report.algorithms);
        print_to(
            stderr,
            "<stderr>",
            skipped_lines(&scenario, skipped).as_bytes(),
        )?;
    }
    Ok(status(failed == 0 || !args.strict))
}

fn verify(args: VerifyArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let overrides = args
        .set
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>>>()?;
    let text = Scenario::read(&args.scenario)?;
    let mut scenario = Scenario::parse_with(&text, Scenario::shown(&args.scenario), &overrides)?;
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    let limit = args.limit.unwrap_or(u64::MAX);
    let store = RedisStore::open(&args.store, Mode::Verify { limit })?;
    // Stacked contenders and simulated deployments decide in memory only: listed, not compared.
    let (stored, stacked): (Vec<_>, Vec<_>) = scenario
        .algorithms
        .iter()
        .cloned()
        .partition(|a| a.through_store(&scenario.path).is_ok());
    scenario.algorithms = stored;
    let options = sim::RunOptions::new().through(Some(&store));
    let (report, _) = sim::run_all(&scenario, options)?;
    let tallies: Vec<_> = report.stored.into_iter().flatten().collect();
    let url = store.url().to_string();
    store.close()?;
    let in_memory: Vec<&str> = stacked.iter().map(|c| c.name.as_str()).collect();
    let scenario_name = scenario.path.display().to_string();
    let verification = crate::store::verify::Verification {
        scenario: &scenario_name,
        url: &url,
        limit: args.limit,
        tallies: &tallies,
        in_memory: &in_memory,
    };
    match args.format {
        Format::Json => print(stdout, &crate::store::verify::json(&verification))?,
        // Under --quiet, the report only when something disagreed.
        Format::Table if args.quiet && verification.passed() => {}
        Format::Table => print(stdout, crate::store::verify::text(&verification).as_bytes())?,
    }
    if verification.verified() == 0 {
        // Like `check`: a comparison that compared nothing must not look green.
        print_to(
            stderr,
            "<stderr>",
            b"error: nothing was verified: no contender of the scenario decides through the \
              store (stacked rules, simulated deployments and profiles without a script run \
              in memory only)\n",
        )?;
        return Ok(Status::ChecksFailed);
    }
    Ok(status(verification.passed()))
}

/// One stderr line per replay source that skipped malformed lines (`--skip-bad-lines`);
/// `skipped`: how many each source reported.
fn skipped_lines(scenario: &Scenario, skipped: &[u64]) -> String {
    let mut out = String::new();
    for (s, &n) in scenario.traffic.iter().zip(skipped) {
        if let crate::traffic::Arrivals::Replay { path, .. } = &s.arrivals
            && n > 0
        {
            let lines = if n == 1 { "line" } else { "lines" };
            out.push_str(&format!(
                "source `{}`: skipped {n} malformed {lines} of {}\n",
                s.name,
                path.display()
            ));
        }
    }
    out
}

/// Writes to standard output; a closed pipe (`rlsim run ... | head`) is not an error.
pub(crate) fn print(stdout: &mut dyn Write, bytes: &[u8]) -> Result<()> {
    print_to(stdout, "<stdout>", bytes)
}

pub(crate) fn print_to(out: &mut dyn Write, name: &str, bytes: &[u8]) -> Result<()> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io(name, e)),
        _ => Ok(()),
    }
}

fn sweep(args: SweepArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let command = crate::sweep::command::SweepCommand {
        scenario: args.scenario,
        set: args.set,
        shard: args.shard,
        seed: args.seed,
        chart: args.chart,
        skip_bad_lines: args.skip_bad_lines,
    };
    let plan = crate::sweep::command::plan(&command)?;
    let bar = if args.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(plan.share as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} points {elapsed}")
                .expect("a valid template"),
        )
    };
    let (file, rows) = crate::sweep::command::run(&plan, &|| bar.inc(1))?;
    bar.finish_and_clear();
    if let Some(out) = &args.out {
        crate::sweep::outputs::write(out, &file)?;
    }
    let mut line = match file.shard {
        Some(s) => format!(
            "shard {}/{}: {} of {} points run\n",
            s.index, s.count, plan.share, file.points
        ),
        None => crate::sweep::report::summary(&file, &rows) + "\n",
    };
    if args.out.is_none() && args.format == Format::Table {
        line.push_str("(no --out DIR: nothing written)\n");
    }
    sweep_outcome(&file, &line, args.format, args.quiet, stdout, stderr)
}

fn merge(args: MergeArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let whole = crate::sweep::outputs::merge(&args.dirs)?;
    crate::sweep::outputs::write(&args.out, &whole)?;
    let rows = whole.rows()?;
    let line = crate::sweep::report::summary(&whole, &rows) + "\n";
    sweep_outcome(&whole, &line, args.format, args.quiet, stdout, stderr)
}

/// What `sweep` and `merge` print, and their exit status: the summary `line` (on standard error
/// beside `--format json`'s sweep.json; under `--quiet` only when it is the reason for exit 1).
fn sweep_outcome(
    file: &crate::sweep::outputs::SweepFile,
    line: &str,
    format: Format,
    quiet: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<Status> {
    let unmet = goals_unmet(file);
    if format == Format::Json {
        print(stdout, &crate::sweep::outputs::sweep_json(file))?;
    }
    if !quiet && format == Format::Table {
        print(stdout, line.as_bytes())?;
    } else if !quiet || unmet {
        print_to(stderr, "<stderr>", line.as_bytes())?;
    }
    Ok(status(!unmet))
}

/// The scenario has `[goals]` and no point of the (whole) sweep meets them all: exit 1, so
/// that CI notices. A shard cannot tell (its merge does).
fn goals_unmet(file: &crate::sweep::outputs::SweepFile) -> bool {
    !file.goals.is_empty()
        && file
            .recommendation
            .as_ref()
            .is_some_and(|r| r.recommended.is_none())
}
