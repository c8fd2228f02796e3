//! The bodies of rlsim's commands, one module each, taking plain option structs: `cli` parses
//! the command line into them and dispatches, so a command runs the same from a test or a
//! program as from the shell.

pub(crate) mod algorithms;
pub(crate) mod bench;
pub(crate) mod check;
pub(crate) mod import;
pub(crate) mod man;
pub(crate) mod probe;
mod resolution;
pub(crate) mod run;
pub(crate) mod scenario;
pub(crate) mod schema;
pub(crate) mod store_memory;
pub(crate) mod sweep;
pub(crate) mod traffic;
pub(crate) mod verify;

pub use scenario::{Loaded, ScenarioInput};

use crate::error::{Error, Result};
use std::io::Write;

/// How a command that ran to the end came out. Errors (bad input) are the `Err` beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every check passed (or there was none): exit code 0.
    Success,
    /// An expectation failed or a metric regressed: exit code 1.
    ChecksFailed,
}

impl Status {
    /// `Success` when `passed`, else `ChecksFailed`.
    pub fn of(passed: bool) -> Status {
        if passed {
            Status::Success
        } else {
            Status::ChecksFailed
        }
    }
}

/// What a command prints on standard output: text for people, or JSON for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
}

/// Writes to standard output; a closed pipe (`rlsim run ... | head`) is not an error.
pub(crate) fn print(stdout: &mut dyn Write, bytes: &[u8]) -> Result<()> {
    print_to(stdout, "<stdout>", bytes)
}

/// Writes a note to standard error; a closed pipe is not an error.
pub(crate) fn note(stderr: &mut dyn Write, bytes: &[u8]) -> Result<()> {
    print_to(stderr, "<stderr>", bytes)
}

fn print_to(out: &mut dyn Write, name: &str, bytes: &[u8]) -> Result<()> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io(name, e)),
        _ => Ok(()),
    }
}

/// A result model as pretty JSON, with a final newline.
fn json_bytes(value: &impl serde::Serialize) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Internal(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Prints `value` as a table (`text`) or as pretty JSON.
fn print_either<T: serde::Serialize>(
    format: Format,
    value: &T,
    text: impl FnOnce(&T) -> String,
    stdout: &mut dyn Write,
) -> Result<Status> {
    match format {
        Format::Table => print(stdout, text(value).as_bytes())?,
        Format::Json => print(stdout, &json_bytes(value)?)?,
    }
    Ok(Status::Success)
}
