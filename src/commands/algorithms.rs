//! `rlsim algorithms`: the algorithms and library profiles rlsim knows.

use super::{Format, Status, print};
use crate::algorithms::catalogue;
use crate::error::Result;
use std::io::Write;

/// Runs `rlsim algorithms`.
pub fn algorithms(format: Format, stdout: &mut dyn Write) -> Result<Status> {
    let entries = catalogue::entries();
    match format {
        Format::Table => print(stdout, catalogue::text(&entries).as_bytes())?,
        Format::Json => print(stdout, &catalogue::json(&entries))?,
    }
    Ok(Status::Success)
}
