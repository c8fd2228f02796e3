//! `rlsim schema`: the JSON Schema of each machine-readable output, generated from the result
//! models (the files in docs/schema/ are this command's output), so a pipeline can validate
//! what it reads from rlsim against the very version that wrote it.

use super::{Status, json_bytes, print};
use crate::error::Result;
use std::io::Write;

/// A machine-readable output with a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `summary.json` of `rlsim run --out`.
    Summary,
    /// `sweep.json` of `rlsim sweep --out`.
    Sweep,
    /// `rlsim check --format json`.
    Check,
}

impl Document {
    fn schema(self) -> schemars::Schema {
        match self {
            Document::Summary => crate::report::summary_schema(),
            Document::Sweep => crate::sweep::outputs::schema(),
            Document::Check => crate::check::output::schema(),
        }
    }
}

/// Prints `document`'s schema as pretty JSON.
pub fn schema(document: Document, stdout: &mut dyn Write) -> Result<Status> {
    print(stdout, &json_bytes(&document.schema())?)?;
    Ok(Status::Success)
}
