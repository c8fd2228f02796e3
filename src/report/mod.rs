//! Outputs: bytes in, bytes out. Each format is a function of the results that returns bytes;
//! only [`write_atomic`] (through [`crate::output`]) touches the file system, so a failed run never leaves a half-written file
//! that looks complete.

pub(crate) mod backtest;
pub mod charts;
mod contenders;
mod decisions;
pub(crate) mod deployments;
mod findings;
// The integration tests render hand-made pages through it (tests/integration/browser.rs).
#[doc(hidden)]
pub mod document;
mod files;
pub(crate) mod manifest;
mod observed;
mod provenance;
pub(crate) mod ranking;
mod replayed;
pub(crate) mod resonance;
mod review;
mod story;
mod table;
mod verdict;

pub use decisions::{DecisionLog, DecisionPart};
pub use files::{
    bucket_count, delays_csv, summary_csv, summary_json, throughput_json, timeseries_csv,
};
pub use provenance::{Provenance, command_line};
pub use review::reports;
pub use table::{
    Column, Columns, WIDTH, human_bytes, human_number, human_number_against, human_rate,
    styled_table, table, wrap,
};
pub use verdict::{
    Basis, Figures, Flip, GoalOutcome, Place, Robustness, Stability, Verdict, Warning, WarningKind,
};

use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::output::{Batch, Destination};
use crate::policy::Policy;
use crate::scenario::Scenario;
use crate::sim::RunReport;
use crate::time::Nanos;
use crate::traffic::{Arrivals, Role};
use serde::Serialize;
use std::path::Path;

/// The version of the shape of rlsim's JSON documents (`summary.json`, `sweep.json`,
/// `rlsim check --format json`; schemas in docs/schema/). Raised when a field is removed or
/// renamed or changes meaning; a new field does not raise it.
pub const SCHEMA_VERSION: u32 = 1;

/// The deterministic result of a run, as `summary.json` holds it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(title = "rlsim summary.json")]
pub struct Summary<'a> {
    /// The version of this document's shape: raised when a field is removed, renamed or changes
    /// meaning (docs/schema/).
    pub schema_version: u32,
    /// The version of rlsim that wrote it (the crate's `CARGO_PKG_VERSION`).
    pub rlsim_version: &'static str,
    /// The scenario run: its name, seed, duration, policy and sources.
    pub scenario: ScenarioInfo<'a>,
    /// What each real client is entitled to: the yardstick of every per-client figure.
    pub intent: crate::metrics::IntentReport,
    /// The recommended contender, the runner-up, the ranking, why and what to mind
    /// (docs/outputs.md#verdict).
    pub verdict: Verdict,
    /// Every contender's figures, one report per row, in the scenario's order.
    pub algorithms: &'a [AlgorithmReport],
    /// The alert rules' outcomes, per contender and rule; absent without `[[alert]]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<&'a crate::observe::AlertResult>,
}

/// `summary.json`'s `scenario` object: what was run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScenarioInfo<'a> {
    /// The scenario's name, as in the scenario file.
    pub name: &'a str,
    /// The scenario's description, trimmed (`""` if there is none).
    pub description: &'a str,
    /// The seed used (after `--seed`).
    pub seed: u64,
    /// The scenario's `duration`, in nanoseconds of virtual time.
    pub duration_ns: Nanos,
    /// The `timeseries.csv` bucket width, in nanoseconds: `[output] bucket`, or the default.
    pub timeseries_bucket_ns: Nanos,
    /// The scenario's `[policy]`: limit, window, burst and key.
    pub policy: &'a Policy,
    /// The traffic sources, in file order (a split trace is one entry per part).
    pub sources: Vec<SourceInfo<'a>>,
}

/// One traffic source of `summary.json`'s `scenario.sources`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SourceInfo<'a> {
    /// The source's name.
    pub name: &'a str,
    /// Whether it is legit or abusive traffic.
    pub role: Role,
    /// The source's `kind` as the scenario wrote it.
    pub kind: &'a str,
    /// The arrival process that generated it (`poisson`, `sine`, `replay`, ...).
    pub arrival: &'static str,
    /// Replayed sources: the malformed trace lines skipped (`--skip-bad-lines`); absent for
    /// generated sources and for the later parts of a split trace (the first one counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_lines: Option<u64>,
}

/// What the figures that judge a contender against the scenario's intent (violations, burst
/// factor, needless and collateral rejections) are measured against, in words:
/// `10 per 1m per client; pro 1000 per 1m` ([`crate::metrics::Intent::text`]). Every output that shows those figures names it: the table's note, the
/// reports' key figures, `summary.json`'s `verdict.yardstick`, `summary.csv`'s last column.
pub fn yardstick(scenario: &Scenario) -> String {
    let text = scenario.intent.text();
    match (scenario.intent.unit, scenario.has_costs()) {
        (crate::metrics::IntentUnit::Cost, _) => {
            format!("{text}, each admitted request weighing the cost it settled")
        }
        (unit, _) if unit.is_tokens() => {
            format!(
                "{text}, each admitted request weighing the {} it used",
                unit.noun()
            )
        }
        // The judge counts requests: say so where the limiters count cost.
        (_, true) => format!("{text}, in requests whatever they cost"),
        (_, false) => text,
    }
}

/// The JSON schema of a document rlsim writes, as it serializes (a field skipped when empty is
/// not required): draft 2020-12, field docs as descriptions.
pub fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The JSON schema of `summary.json` (docs/schema/summary.schema.json).
pub fn summary_schema() -> schemars::Schema {
    schema_of::<Summary<'static>>()
}

impl<'a> Summary<'a> {
    /// The summary of a run with its verdict ([`Verdict::new`]) and observers (their alert
    /// outcomes join it).
    pub fn observed(
        scenario: &'a Scenario,
        report: &'a RunReport,
        observations: &'a [crate::observe::Observation],
        verdict: Verdict,
    ) -> Self {
        Summary {
            schema_version: SCHEMA_VERSION,
            rlsim_version: env!("CARGO_PKG_VERSION"),
            intent: scenario.intent.report(),
            scenario: ScenarioInfo {
                name: &scenario.name,
                description: &scenario.description,
                seed: scenario.seed,
                duration_ns: scenario.duration,
                timeseries_bucket_ns: scenario.bucket,
                policy: &scenario.policy,
                sources: scenario
                    .traffic
                    .iter()
                    .enumerate()
                    .map(|(i, s)| SourceInfo {
                        name: &s.name,
                        role: s.role,
                        kind: s.kind.name(),
                        arrival: s.arrivals.name(),
                        skipped_lines: match &s.arrivals {
                            Arrivals::Replay { options, .. } if options.reports_skipped() => {
                                let skipped = crate::metrics::skipped_lines(&report.algorithms);
                                Some(skipped.get(i).copied().unwrap_or(0))
                            }
                            _ => None,
                        },
                    })
                    .collect(),
            },
            verdict,
            algorithms: &report.algorithms,
            alerts: observations.iter().flat_map(|o| &o.alerts).collect(),
        }
    }
}

/// What a later layer adds to `--out` (the replicates'): report sections and files.
#[derive(Default)]
pub struct Additions {
    /// Sections appended to `report.md` and `report.html`, in order.
    pub blocks: Vec<document::Block>,
    /// Extra files, as a name relative to the output directory and the bytes to write.
    pub files: Vec<(String, Vec<u8>)>,
}

/// Writes every output file of `--out DIR`: `summary.json`, `summary.csv`, `timeseries.csv`,
/// `delays.csv`, `throughput.json`, the charts in `charts/`, `report.md` and `report.html`, then
/// `additions`' files (a later layer's: the replicates'), then `.rlsim-manifest` listing them all (see
/// `manifest.rs`: the files of an earlier run there are removed). Everything is rendered, then
/// written under temporary names, before any file appears ([`crate::output::Batch`]): a chart
/// error or a full disk leaves the directory as an earlier run left it.
/// `verdict` is the run's ([`Verdict::new`]): `summary.json` and the reports carry it as the
/// terminal prints it.
pub fn write_outputs(
    dir: &Path,
    scenario: &Scenario,
    report: &RunReport,
    provenance: &Provenance,
    observations: &[crate::observe::Observation],
    verdict: &Verdict,
    additions: Additions,
) -> Result<()> {
    let mut charts = charts::all(scenario, &report.algorithms)?;
    charts.extend(charts::observed(scenario, observations)?);
    let mut blocks = observed::blocks(observations);
    // Sections of later layers (the replicates': `crate::replicate::render::blocks`).
    blocks.extend(additions.blocks);
    let (markdown, html) = reports(
        scenario,
        &report.algorithms,
        &charts,
        provenance,
        blocks,
        verdict,
    );
    let summary = Summary::observed(scenario, report, observations, verdict.clone());
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("summary.json".into(), summary_json(&summary)),
        (
            "summary.csv".into(),
            summary_csv(&report.algorithms, &yardstick(scenario)),
        ),
        (
            "timeseries.csv".into(),
            timeseries_csv(scenario, &report.algorithms),
        ),
        ("delays.csv".into(), delays_csv(&report.algorithms)),
        (
            "throughput.json".into(),
            throughput_json(&report.throughput),
        ),
    ];
    if let Some(csv) = backtest::csv(&report.algorithms) {
        files.push(("backtest.csv".into(), csv));
    }
    files.extend(
        charts
            .iter()
            .map(|c| (format!("charts/{}", c.file), c.svg.clone().into_bytes())),
    );
    files.push(("report.md".into(), markdown.into_bytes()));
    files.push(("report.html".into(), html.into_bytes()));
    files.extend(additions.files);
    let mut batch = Batch::new();
    for (name, bytes) in &files {
        batch.add(&dir.join(name), bytes)?;
    }
    let names: Vec<String> = files.into_iter().map(|(name, _)| name).collect();
    batch.add(&dir.join(manifest::MANIFEST), &manifest::manifest(&names))?;
    // What an earlier run wrote here goes now that this run's files are all on disk, so none of
    // it outlives this run and a failed run leaves it whole.
    manifest::clean(dir)?;
    batch.commit()
}

/// Writes `bytes` as the file at `path` through [`crate::output::Destination`]: a regular file is
/// replaced atomically (readers see the old file or the complete new one), a device or FIFO is
/// written in place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Destination::file(path)?.write_all(bytes, &mut std::io::sink())
}
