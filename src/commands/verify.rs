//! `rlsim verify`: replay a scenario through the in-memory model and a real Redis, and compare
//! each decision.

use super::{Format, ScenarioInput, Status, note, print};
use crate::error::Result;
use crate::sim;
use crate::store::verify::{self, Verification};
use crate::store::{Mode, RedisStore};
use std::io::Write;

/// What `rlsim verify` was asked.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    pub input: ScenarioInput,
    /// The Redis URL to compare with.
    pub store: String,
    /// Decisions compared per algorithm at most (`None`: all).
    pub limit: Option<u64>,
    pub format: Format,
    /// The report only when something disagreed.
    pub quiet: bool,
}

/// Runs `rlsim verify`.
pub fn verify(o: &VerifyOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let mut scenario = o.input.load()?.scenario;
    let store = RedisStore::open(
        &o.store,
        Mode::Verify {
            limit: o.limit.unwrap_or(u64::MAX),
        },
    )?;
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
    let verification = Verification {
        scenario: &scenario_name,
        url: &url,
        limit: o.limit,
        tallies: &tallies,
        in_memory: &in_memory,
    };
    match o.format {
        Format::Json => print(stdout, &verify::json(&verification))?,
        // Under --quiet, the report only when something disagreed.
        Format::Table if o.quiet && verification.passed() => {}
        Format::Table => print(stdout, verify::text(&verification).as_bytes())?,
    }
    if verification.verified() == 0 {
        // Like `check`: a comparison that compared nothing must not look green.
        note(
            stderr,
            b"error: nothing was verified: no contender of the scenario decides through the \
              store (stacked rules, simulated deployments and profiles without a script run \
              in memory only)\n",
        )?;
        return Ok(Status::ChecksFailed);
    }
    Ok(Status::of(verification.passed()))
}
