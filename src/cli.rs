//! The command line: clap definitions and the commands they run.

use crate::algorithms::AlgorithmKind;
use crate::error::{Error, Result};
use crate::report::{self, DecisionLog, Summary};
use crate::scenario::Scenario;
use crate::sim;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "rlsim",
    version,
    about = "Replays traffic through every rate-limiting algorithm under a virtual clock, and measures how each one does."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scenario through its algorithms and report how each one did.
    Run(RunArgs),
    /// List the algorithms rlsim knows.
    Algorithms,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Write summary.json, summary.csv, timeseries.csv and throughput.json into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// What to print on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write every decision (one CSV row per request per algorithm, in time order) to this file.
    #[arg(long, value_name = "FILE")]
    pub decisions: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// The summary as JSON (the same document as summary.json).
    Json,
}

/// Runs a parsed command line, printing results to `stdout`.
pub fn execute(cli: Cli, stdout: &mut dyn Write) -> Result<()> {
    match cli.command {
        Command::Run(args) => run(args, stdout),
        Command::Algorithms => {
            for kind in AlgorithmKind::ALL {
                print(stdout, format!("{kind}\n").as_bytes())?;
            }
            Ok(())
        }
    }
}

fn run(args: RunArgs, stdout: &mut dyn Write) -> Result<()> {
    if let Some(out) = &args.out
        && out.exists()
        && !out.is_dir()
    {
        return Err(Error::Usage(format!(
            "--out {}: exists and is not a directory",
            out.display()
        )));
    }
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    let log = args.decisions.as_deref().map(DecisionLog::new);
    let (report, parts) = sim::run(&scenario, |_, spec| match &log {
        Some(log) => log.part(spec.kind.name()).map(Some),
        None => Ok(None),
    })?;
    if let Some(log) = &log {
        let mut parts: Vec<_> = parts.into_iter().flatten().collect();
        for part in &mut parts {
            part.flush()?;
        }
        log.merge(parts)?;
    }
    if let Some(out) = &args.out {
        report::write_outputs(out, &scenario, &report)?;
    }
    let text = match args.format {
        Format::Table => {
            report::table(&scenario, &report.algorithms, &report.throughput).into_bytes()
        }
        Format::Json => report::summary_json(&Summary::new(&scenario, &report)),
    };
    print(stdout, &text)
}

/// Writes to standard output; a closed pipe (`rlsim run ... | head`) is not an error.
fn print(stdout: &mut dyn Write, bytes: &[u8]) -> Result<()> {
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("<stdout>", e)),
        _ => Ok(()),
    }
}
