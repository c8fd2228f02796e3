//! `rlsim traffic`: the requests a scenario generates, before any limiter, as a CSV trace.

use super::scenario::skipped_lines;
use super::{ScenarioInput, Status, note};
use crate::error::Result;
use crate::output::Destination;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `rlsim traffic` was asked.
#[derive(Debug, Clone, Default)]
pub struct TrafficOptions {
    pub input: ScenarioInput,
    /// The CSV file (`None` or `-`: standard output).
    pub out: Option<PathBuf>,
    /// No note of the count written or the lines skipped.
    pub quiet: bool,
}

/// Runs `rlsim traffic`.
pub fn traffic(
    o: &TrafficOptions,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<Status> {
    let scenario = o.input.load()?.scenario;
    let out_path = o.out.as_deref().unwrap_or(Path::new("-"));
    let destination = Destination::or_stdout(out_path)?;
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
    if !o.quiet {
        let mut line = format!(
            "{} requests written to {}\n",
            pass.requests,
            destination.path().display()
        );
        line.push_str(&skipped_lines(&scenario, &pass.skipped_lines));
        note(stderr, line.as_bytes())?;
    }
    Ok(Status::Success)
}
