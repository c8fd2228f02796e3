//! Manual pages from the command-line definition: `rlsim.1` and one `rlsim-COMMAND.1` per
//! subcommand (the pages `rlsim.1`'s COMMANDS section refers to), rendered by clap_mangen.
//!
//! Each page's examples (the `after_help` text of `--help`) become an EXAMPLES section kept
//! line for line: clap_mangen prints that text as a filled paragraph, which joins the example
//! lines and re-wraps them mid-command.

use clap_mangen::Man;
use clap_mangen::roff::{Roff, roman};
use std::io::Write;

/// One page: its file name (`rlsim-run.1`) and its roff text.
pub struct Page {
    pub file_name: String,
    pub roff: Vec<u8>,
}

/// The main page (`subcommand` `None`) or one subcommand's, or `None` if `cli` has no such
/// subcommand.
pub fn page(cli: clap::Command, subcommand: Option<&str>) -> Option<Page> {
    let cli = prepared(cli);
    match subcommand {
        None => Some(render(&cli)),
        Some(name) => cli.find_subcommand(name).map(render),
    }
}

/// The main page, then every subcommand's in the order of `--help`.
pub fn pages(cli: clap::Command) -> Vec<Page> {
    let cli = prepared(cli);
    std::iter::once(render(&cli))
        .chain(
            cli.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(render),
        )
        .collect()
}

/// The subcommands' names, as `pages` has them.
pub fn subcommands(cli: clap::Command) -> Vec<String> {
    let cli = prepared(cli);
    cli.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

/// Built (so that a subcommand's name is `rlsim-run`), without the `help` subcommand: it has
/// no page, and `rlsim help` is `rlsim --help`.
fn prepared(cli: clap::Command) -> clap::Command {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    cli
}

fn render(cmd: &clap::Command) -> Page {
    // The examples are rendered below, not by clap_mangen.
    let examples = cmd.get_after_help().map(|h| h.to_string());
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().is_some();
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    // A subcommand has no version of its own: every page's footer names rlsim's.
    let man = Man::new(cmd.clone())
        .title(name)
        .source(concat!("rlsim ", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let sections = (|| -> std::io::Result<()> {
        man.render_title(&mut out)?;
        man.render_name_section(&mut out)?;
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        if has_args {
            man.render_options_section(&mut out)?;
        }
        if has_subcommands {
            man.render_subcommands_section(&mut out)?;
        }
        if let Some(text) = &examples {
            examples_section(text).to_writer(&mut out)?;
        }
        if has_version {
            man.render_version_section(&mut out)?;
        }
        out.flush()
    })();
    sections.expect("rendering to memory");
    Page {
        file_name: man.get_filename(),
        roff: out,
    }
}

/// `text` (an `Examples:` header, then one example per line) unfilled, line for line.
fn examples_section(text: &str) -> Roff {
    let mut roff = Roff::default();
    roff.control("SH", ["EXAMPLES"]);
    roff.control("nf", []);
    let mut lines = text.lines().peekable();
    if lines
        .peek()
        .is_some_and(|l| l.trim_end().ends_with(':') && l.starts_with("Example"))
    {
        lines.next();
    }
    for line in lines {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff
}
