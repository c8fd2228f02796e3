//! `rlsim check`: the CI gate over scenario files (the work is `crate::check`'s).

use super::{Status, note, print};
use crate::check::{self, CheckOptions};
use crate::error::Result;
use std::io::Write;

/// Runs `rlsim check`.
pub fn check(o: &CheckOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let report = check::check(o)?;
    print(stdout, &report.stdout)?;
    if report.checked == 0 {
        // A gate that checked nothing must not look green.
        note(
            stderr,
            b"error: nothing was checked: no scenario has expectations (`expect = [...]`) \
              and no baseline metric was compared\n",
        )?;
    }
    Ok(Status::of(report.passed))
}
