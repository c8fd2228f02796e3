//! `rlsim man` and `rlsim completions`: the command line's own description (a `clap::Command`,
//! the declaration, not parsed arguments), as manual pages and shell completion scripts.

use super::{Status, print};
use crate::error::{Error, Result};
use crate::manpage;
use std::io::Write;
use std::path::Path;

/// Prints the main page, or `command`'s; with `dir`, writes every page there instead.
pub fn man(
    cli: clap::Command,
    command: Option<&str>,
    dir: Option<&Path>,
    stdout: &mut dyn Write,
) -> Result<Status> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for page in manpage::pages(cli) {
            let path = dir.join(&page.file_name);
            std::fs::write(&path, &page.roff).map_err(|e| Error::io(&path, e))?;
        }
        return Ok(Status::Success);
    }
    let Some(page) = manpage::page(cli.clone(), command) else {
        let name = command.unwrap_or_default();
        let names = manpage::subcommands(cli);
        return Err(Error::Usage(format!(
            "rlsim man: {}",
            crate::suggest::unknown("command", name, names.iter().map(String::as_str))
        )));
    };
    print(stdout, &page.roff)?;
    Ok(Status::Success)
}

/// Prints the completion script of `shell`.
pub fn completions(
    mut cli: clap::Command,
    shell: clap_complete::Shell,
    stdout: &mut dyn Write,
) -> Result<Status> {
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut cli, "rlsim", &mut bytes);
    print(stdout, &bytes)?;
    Ok(Status::Success)
}
