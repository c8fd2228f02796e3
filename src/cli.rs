//! The command line: the clap declarations, each turned into a command's plain options and
//! dispatched to `crate::commands`, where the commands' bodies are.

use crate::algorithms::AlgorithmKind;
use crate::check::{CheckOptions, Tolerance};
use crate::commands;
use crate::error::Result;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

pub use crate::commands::{Loaded, ScenarioInput, Status};

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
  rlsim run scenarios/burst.toml --replicates 5 --out results
  rlsim run scenarios/nat.toml --columns legit_goodput,abuse_leak,legit_delay_p99

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

const PROBE_EXAMPLES: &str = "\
Examples:
  rlsim probe scenarios/probe_login.toml --target http://127.0.0.1:8080 --speed 10 --out probe-out --strict

The bundled example service for it, 5 requests per second per client (10 s of the scenario at
speed 10): cargo run --release --example limited_server -- --port 8080 --limit 5 --window 1

Exit status: 0 when the probe ran (and, with --strict, every expectation held); 1 when an
expectation failed under --strict; 2 for bad input or a target that refuses the first connection
(nothing is written); 3 when requests failed during the probe (nothing is written).";

const IMPORT_EXAMPLES: &str = "\
Examples:
  rlsim import scenarios/configs/nginx/two_zones.conf
  rlsim import scenarios/configs/nginx/two_zones.conf --server api.example.com --out contenders.toml
  rlsim import scenarios/configs/haproxy/per_ip.cfg --server web
  rlsim import scenarios/configs/cloudflare/ruleset.json
  rlsim import scenarios/configs/envoy/local_ratelimit.yaml
  rlsim import scenarios/configs/envoy/ratelimit.yaml

Exit status: 0 when the configuration was imported; 2 when it cannot be (the file, line and
directive are named).";

/// A flag's whole number in `min..=max`, refused with the range and unit: clap's own words
/// (`invalid digit found in string`, `number too large to fit in target type`) say neither.
fn whole<T: TryFrom<u64>>(
    min: u64,
    max: u64,
    what: &'static str,
) -> impl Fn(&str) -> std::result::Result<T, String> + Clone + Send + Sync + 'static {
    move |text| {
        let range = crate::error::must_be(what, min, max);
        crate::error::whole(text, min, max)
            .and_then(|v| T::try_from(v).map_err(|_| "too large"))
            .map_err(|why| format!("{why}: {range}"))
    }
}

/// A flag's real duration (`10s`, `500ms`) from `min` to `max` nanoseconds, refused with the
/// range.
fn real_duration(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> std::result::Result<std::time::Duration, String> + Clone + Send + Sync + 'static
{
    move |text| {
        use crate::time::format_duration as shown;
        let range = crate::error::must_be("a duration", shown(min), shown(max));
        match crate::time::parse_duration(text) {
            Ok(ns) if (min..=max).contains(&ns) => Ok(std::time::Duration::from_nanos(ns)),
            Ok(ns) if ns < min => Err(format!("too short: {range}")),
            Ok(_) => Err(format!("too long: {range}")),
            Err(e) => Err(format!("{e}: {range}")),
        }
    }
}

/// `--speed`'s range. Above a million, a day of the scenario goes out in under 0.1 s: its
/// requests' real spacing falls under what the sender's timer can keep; below a millionth, a
/// second of it takes 11 days.
const SPEED: (f64, f64) = (1e-6, 1e6);

/// `--speed`: a number in [`SPEED`] (`nan`, `inf` and `1e308` are numbers to Rust, not here).
fn speed(text: &str) -> std::result::Result<f64, String> {
    let (min, max) = SPEED;
    let range = crate::error::must_be("a number of scenario seconds per real second", min, max);
    match text.trim().parse::<f64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Ok(v) if v < min => Err(format!("too small: {range}")),
        Ok(v) if v > max => Err(format!("too large: {range}")),
        _ => Err(format!("not a number: {range}")),
    }
}

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
    /// Send a scenario's traffic to a live HTTP service and judge it like a simulated contender.
    #[command(after_help = PROBE_EXAMPLES)]
    Probe(ProbeArgs),
    /// Read a deployed limiter's configuration (nginx, HAProxy, Traefik, ...: every kind --kind lists) into scenario contenders (TOML).
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Print the JSON Schema of summary.json, sweep.json or `rlsim check --format json`.
    #[command(after_help = "Example:\n  rlsim schema summary > summary.schema.json")]
    Schema {
        /// The output whose schema to print.
        document: SchemaDocument,
    },
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
    /// Override the scenario's seed (0 to 18446744073709551615).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = whole::<u64>(0, u64::MAX, "a whole number"))]
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
          allow_negative_numbers = true,
          value_parser = whole::<u64>(1, 1_000_000_000, "a whole number of requests"))]
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
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// The Redis to compare with: redis://HOST:PORT[/DB] (docs/redis.md).
    #[arg(long, value_name = "URL")]
    pub store: String,
    /// Compare at most this many decisions per algorithm (the rest of the run stays in
    /// memory): Redis answers some 10^4 scripts per second over one connection.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = whole::<u64>(1, u64::MAX, "a whole number of decisions"))]
    pub limit: Option<u64>,
    /// What to print: the text report, or one JSON document.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print the text report only when an algorithm disagreed (errors always).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The configuration file (nginx.conf, its `include`s read too; haproxy.cfg; a Traefik dynamic configuration; express-rate-limit or NestJS options, or Cloudflare rate limiting rules, as JSON; Kong's kong.yml or Admin API plugin JSON; an AWS API Gateway usage plan's JSON or CloudFormation; an Envoy configuration with the HTTP local_ratelimit filter; the envoyproxy/ratelimit service's descriptor YAML).
    pub file: PathBuf,
    /// The kind of configuration (default: detected from the content).
    #[arg(long, value_name = "K", value_parser = clap::builder::PossibleValuesParser::new(crate::import::Kind::ALL.map(crate::import::Kind::name)))]
    pub kind: Option<String>,
    /// The TOML file to write (default, or `-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only part of the file: nginx's server with this `server_name`, or HAProxy's frontend or listen with this name; other kinds are imported whole.
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Only this nginx location, its URI as written (`/api/`, `= /login`): one contender for it.
    #[arg(long, value_name = "URI")]
    pub location: Option<String>,
    /// No note of what was imported: errors only.
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
          allow_negative_numbers = true,
          value_parser = whole::<u64>(1, 1_000_000, "a whole number of keys"))]
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
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// The CSV file to write (default, or `-`: standard output):
    /// time,ip,user,api_key,endpoint,source,role,method (and status,decision,x_forwarded_for
    /// when a source replays a trace).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No note of how many requests were written or lines skipped: errors only.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The scenario a command runs and what the command line lays over it (`run`, `traffic`,
/// `verify`).
#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (TOML), or `-` to read it from standard input.
    pub scenario: PathBuf,
    /// Override the scenario's seed (0 to 18446744073709551615).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = whole::<u64>(0, u64::MAX, "a whole number"))]
    pub seed: Option<u64>,
    /// Override a field of the scenario by its dotted path (repeatable), the value written as
    /// in the file: `policy.limit=60`, `policy.window=30s`, `traffic[1].rate=50/min`, or a
    /// source by name, `traffic.scraper.rate=50/min` (scenarios/nat.toml).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Skip malformed lines of replayed traces, and report how many, instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

impl ScenarioArgs {
    /// The command's scenario input (its `load()` reads and validates it).
    pub fn input(self) -> ScenarioInput {
        ScenarioInput {
            path: self.scenario,
            seed: self.seed,
            set: self.set,
            skip_bad_lines: self.skip_bad_lines,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// The service: http://HOST:PORT (a path prefix is not supported).
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// Write the probe's trace (probe_trace.csv), its scenario (probe_scenario.toml),
    /// probe.json and every output of `rlsim run` of that scenario into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Scenario time per real time: 60 sends a minute of the scenario in a second (the service
    /// must then be configured 60 times faster). From 0.000001 to 1000000.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = speed)]
    pub speed: f64,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 16,
          allow_negative_numbers = true,
          value_parser = whole::<u64>(1, 1024, "a whole number of connections"))]
    pub connections: u64,
    /// The most requests to send, retries included: a longer plan is refused before any request.
    #[arg(long, default_value_t = 100_000, value_name = "N", allow_negative_numbers = true,
          value_parser = whole::<u64>(1, u64::MAX, "a whole number of requests"))]
    pub max_requests: u64,
    /// The longest the probe may send, in real time (1ms to 720h, 30 days): a longer plan is refused.
    #[arg(long, default_value = "10m", value_name = "DURATION",
          value_parser = real_duration(crate::time::NANOS_PER_MILLI, 30 * crate::time::NANOS_PER_DAY))]
    pub max_duration: std::time::Duration,
    /// The longest one request may take (1ms to 1h).
    #[arg(long, default_value = "10s", value_name = "DURATION",
          value_parser = real_duration(crate::time::NANOS_PER_MILLI, crate::time::NANOS_PER_HOUR))]
    pub timeout: std::time::Duration,
    /// The status that is a refusal besides 429 (nginx's default is 503).
    #[arg(long, default_value_t = 429,
          allow_negative_numbers = true,
          value_parser = whole::<u16>(100, 599, "an HTTP status"))]
    pub refuse_status: u16,
    /// The request header that carries a client's API key.
    #[arg(long, default_value = "X-Api-Key", value_name = "NAME")]
    pub api_key_header: String,
    /// The request header that carries a signed-in user.
    #[arg(long, default_value = "X-User", value_name = "NAME")]
    pub user_header: String,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit with code 1 when an expectation of the scenario fails.
    #[arg(long)]
    pub strict: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

impl ProbeArgs {
    fn options(self) -> Result<commands::probe::ProbeCommand> {
        let options = crate::probe::ProbeOptions {
            speed: self.speed,
            connections: self.connections as usize,
            timeout: self.timeout,
            max_requests: self.max_requests,
            max_duration: self.max_duration,
            refuse_status: self.refuse_status,
            identity: crate::probe::plan::Identity {
                api_key_header: self.api_key_header,
                user_header: self.user_header,
            },
            ..crate::probe::ProbeOptions::new(&self.target)
        };
        Ok(commands::probe::ProbeCommand {
            input: self.scenario.input(),
            out: self.out,
            options,
            format: self.format.into(),
            strict: self.strict,
            quiet: self.quiet,
            columns: crate::report::Columns::Default,
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Write every output into this directory (created if missing): summary.json, summary.csv,
    /// timeseries.csv, delays.csv, throughput.json, charts/*.svg, report.md and report.html
    /// (docs/outputs.md).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
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
    /// Decide through a real Redis (redis://HOST:PORT[/DB]): every algorithm runs as a Lua
    /// script, and the outputs come from its decisions (docs/redis.md).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Also run the scenario under N seeds derived from its own (replicate 1 is the seed itself)
    /// and report each figure's mean and 95% interval and how often each contender is
    /// recommended; replicates.json and replicates.csv in --out (docs/replicates.md).
    /// Default: the scenario's `replicates`.
    #[arg(long, value_name = "N",
          allow_negative_numbers = true,
          value_parser = whole::<u32>(1, crate::replicate::MAX_REPLICATES as u64, "a whole number of seeds"))]
    pub replicates: Option<u32>,
    /// Try each value of the scenario's [[uncertain]] inputs and say which ones change the
    /// recommendation; sensitivity.json in --out (docs/replicates.md).
    #[arg(long)]
    pub sensitivity: bool,
    /// Also run the scenario with each one-second log's requests of a second all at its start
    /// and evenly spread, and print each headline figure's range over the two: how much the
    /// log's time resolution can move the answer (docs/traffic.md).
    #[arg(long)]
    pub time_resolution_range: bool,
    /// Print every column of the table (the default shows those that matter in 120 columns).
    #[arg(long, conflicts_with = "columns")]
    pub wide: bool,
    /// The table's columns, in this order after the contender's name: offered, admitted,
    /// delayed, rejected, cost_admitted, cost_settled, burst_factor, violations, needless,
    /// collateral, legit_goodput, abuse_leak, legit_delay_p99, delay_p99, state_per_key,
    /// peak_state.
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub columns: Vec<String>,
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
    /// Relative worsening accepted before a metric counts as a regression: 0.05 or 5% (0 to
    /// 1000000).
    #[arg(
        long,
        value_name = "REL",
        default_value = "0",
        allow_negative_numbers = true
    )]
    pub tolerance: String,
    /// The tolerance for one metric, overriding --tolerance (repeatable).
    #[arg(long = "tolerance-for", value_name = "METRIC=REL")]
    pub tolerance_for: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaDocument {
    /// summary.json, written by `rlsim run --out`.
    Summary,
    /// sweep.json, written by `rlsim sweep --out`.
    Sweep,
    /// What `rlsim check --format json` prints.
    Check,
}

impl From<SchemaDocument> for commands::schema::Document {
    fn from(d: SchemaDocument) -> commands::schema::Document {
        match d {
            SchemaDocument::Summary => commands::schema::Document::Summary,
            SchemaDocument::Sweep => commands::schema::Document::Sweep,
            SchemaDocument::Check => commands::schema::Document::Check,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people.
    Table,
    /// JSON, for programs.
    Json,
}

impl From<Format> for commands::Format {
    fn from(f: Format) -> commands::Format {
        match f {
            Format::Table => commands::Format::Table,
            Format::Json => commands::Format::Json,
        }
    }
}

/// Runs a parsed command line, printing results to `stdout` and notes to `stderr`. Errors (bad
/// input) are the `Err`.
pub fn execute(cli: Cli, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    match cli.command {
        Command::Run(a) => commands::run::run(&a.options()?, stdout, stderr),
        Command::Check(a) => commands::check::check(&a.options()?, stdout, stderr),
        Command::Traffic(a) => commands::traffic::traffic(&a.into(), stdout, stderr),
        Command::Sweep(a) => commands::sweep::sweep(&a.into(), stdout, stderr),
        Command::Merge(a) => commands::sweep::merge(&a.into(), stdout, stderr),
        Command::Bench(a) => commands::bench::bench(&a.into(), stdout),
        Command::Verify(a) => commands::verify::verify(&a.into(), stdout, stderr),
        Command::StoreMemory(a) => commands::store_memory::store_memory(&a.into(), stdout),
        Command::Import(a) => commands::import::import(&a.options()?, stdout, stderr),
        Command::Probe(a) => commands::probe::probe(&a.options()?, stdout, stderr),
        Command::Algorithms(a) => commands::algorithms::algorithms(a.format.into(), stdout),
        Command::Schema { document } => commands::schema::schema(document.into(), stdout),
        Command::Completions { shell } => commands::man::completions(Cli::command(), shell, stdout),
        Command::Man { command, dir } => {
            commands::man::man(Cli::command(), command.as_deref(), dir.as_deref(), stdout)
        }
    }
}

impl ImportArgs {
    fn options(self) -> Result<commands::import::ImportOptions> {
        let kind = match self.kind.as_deref() {
            None => None,
            Some(k) => Some(crate::import::Kind::parse(k).map_err(crate::error::Error::Usage)?),
        };
        Ok(commands::import::ImportOptions {
            file: self.file,
            kind,
            out: self.out,
            select: crate::import::Selection {
                server: self.server,
                location: self.location,
            },
            quiet: self.quiet,
        })
    }
}

impl RunArgs {
    /// The options of `rlsim run`; an unknown `--columns` name is a usage error.
    fn options(self) -> Result<commands::run::RunOptions> {
        Ok(commands::run::RunOptions {
            columns: crate::report::Columns::choose(self.wide, &self.columns)?,
            ..self.into()
        })
    }
}

impl From<RunArgs> for commands::run::RunOptions {
    fn from(a: RunArgs) -> Self {
        commands::run::RunOptions {
            columns: crate::report::Columns::Default,
            input: a.scenario.input(),
            out: a.out,
            format: a.format.into(),
            decisions: a.decisions,
            metrics_out: a.metrics_out,
            strict: a.strict,
            quiet: a.quiet,
            timing: a.timing,
            store: a.store,
            replicates: a.replicates,
            sensitivity: a.sensitivity,
            time_resolution_range: a.time_resolution_range,
            additions: Vec::new(),
            extra_files: Vec::new(),
            // Lossy, not `args()`: a path that is not UTF-8 must not panic here.
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        }
    }
}

impl CheckArgs {
    fn options(self) -> Result<CheckOptions> {
        Ok(CheckOptions {
            tolerance: Tolerance::parse(&self.tolerance, &self.tolerance_for)?,
            paths: self.paths,
            json: self.format == Format::Json,
            quiet: self.quiet,
            junit: self.junit,
            baselines: self.baseline,
        })
    }
}

impl From<TrafficArgs> for commands::traffic::TrafficOptions {
    fn from(a: TrafficArgs) -> Self {
        commands::traffic::TrafficOptions {
            input: a.scenario.input(),
            out: a.out,
            quiet: a.quiet,
        }
    }
}

impl From<VerifyArgs> for commands::verify::VerifyOptions {
    fn from(a: VerifyArgs) -> Self {
        commands::verify::VerifyOptions {
            input: a.scenario.input(),
            store: a.store,
            limit: a.limit,
            format: a.format.into(),
            quiet: a.quiet,
        }
    }
}

impl From<SweepArgs> for commands::sweep::SweepOptions {
    fn from(a: SweepArgs) -> Self {
        commands::sweep::SweepOptions {
            scenario: a.scenario,
            set: a.set,
            shard: a.shard,
            seed: a.seed,
            chart: a.chart,
            skip_bad_lines: a.skip_bad_lines,
            out: a.out,
            format: a.format.into(),
            quiet: a.quiet,
        }
    }
}

impl From<MergeArgs> for commands::sweep::MergeOptions {
    fn from(a: MergeArgs) -> Self {
        commands::sweep::MergeOptions {
            dirs: a.dirs,
            out: a.out,
            format: a.format.into(),
            quiet: a.quiet,
        }
    }
}

impl From<BenchArgs> for commands::bench::BenchOptions {
    fn from(a: BenchArgs) -> Self {
        commands::bench::BenchOptions {
            requests: a.requests,
            algorithms: a.algorithm,
            format: a.format.into(),
        }
    }
}

impl From<StoreMemoryArgs> for commands::store_memory::StoreMemoryOptions {
    fn from(a: StoreMemoryArgs) -> Self {
        commands::store_memory::StoreMemoryOptions {
            store: a.store,
            keys: a.keys as usize,
            format: a.format.into(),
        }
    }
}
