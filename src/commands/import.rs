//! `rlsim import FILE`: a deployed limiter's configuration as scenario contenders (TOML), each
//! with where it came from and what is often misread of it (docs/import.md).

use super::{Status, note};
use crate::error::Result;
use crate::import::{Kind, Selection, import_file};
use crate::output::Destination;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The options of `rlsim import`.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub file: PathBuf,
    /// `None`: detected from the file's content.
    pub kind: Option<Kind>,
    /// Where to write the TOML; `None` or `-`: standard output.
    pub out: Option<PathBuf>,
    pub select: Selection,
    /// No note of what was imported on standard error.
    pub quiet: bool,
}

/// Runs `rlsim import`.
pub fn import(o: &ImportOptions, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Status> {
    let imported = import_file(&o.file, o.kind, &o.select)?;
    let toml = imported.to_toml(&o.file)?;
    let destination = Destination::or_stdout(o.out.as_deref().unwrap_or(Path::new("-")))?;
    destination.refuse_inputs("--out", [o.file.as_path()])?;
    match destination.write_all(toml.as_bytes(), stdout) {
        Err(e) if e.is_broken_pipe() => return Ok(Status::Success),
        other => other?,
    }
    if !o.quiet {
        let names: Vec<&str> = imported
            .contenders
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let rules: usize = imported.contenders.iter().map(|c| c.rules.len()).sum();
        let line = format!(
            "{} contender(s) ({}) with {rules} rule(s) imported from {} ({}) to {}\n",
            names.len(),
            names.join(", "),
            o.file.display(),
            imported.kind.name(),
            destination.path().display()
        );
        note(stderr, line.as_bytes())?;
    }
    Ok(Status::Success)
}
