//! Reading a scenario: the file's text, `--set` overrides spliced in, bounds, serde, then
//! validation (`validate/`).

use super::model::scenario::Scenario;
use super::overrides::{self, Override};
use super::{limits, validate::ctx::Ctx};
use crate::error::Result;
use std::path::Path;

impl Scenario {
    /// Reads and validates a scenario file (standard input for `-`).
    pub fn load(path: &Path) -> Result<Scenario> {
        Scenario::parse(&Scenario::read(path)?, Scenario::shown(path))
    }

    /// Reads a scenario file's text, once (a FIFO can be read only once), or standard input for
    /// `-`, refusing a file over 16 MiB (`scenario::limits::MAX_FILE_BYTES`) or not UTF-8.
    pub fn read(path: &Path) -> Result<String> {
        limits::read(path)
    }

    /// The name a scenario path goes by in errors and reports: `<stdin>` for `-`. Relative
    /// trace paths of a scenario read from standard input resolve from the working directory.
    pub fn shown(path: &Path) -> &Path {
        limits::shown(path)
    }

    /// Reads a scenario file with `--set` overrides applied before validation.
    pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Scenario> {
        if overrides.is_empty() {
            return Scenario::load(path);
        }
        Scenario::parse_with(&Scenario::read(path)?, Scenario::shown(path), overrides)
    }

    /// Parses scenario text with `--set` overrides spliced in, validated exactly like the file.
    /// An error in an overridden value names the `--set`; any other keeps the file's line.
    pub fn parse_with(text: &str, path: &Path, overrides: &[Override]) -> Result<Scenario> {
        let patched = overrides::apply(text, path, overrides)?;
        let ctx = Ctx::patched(text, &patched, path);
        limits::check_strings(&ctx, &patched.text)?;
        let raw = ctx.deserialize()?;
        ctx.scenario(raw)
    }

    /// Parses and validates scenario text; `path` is used in errors and to resolve relative
    /// trace paths.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario> {
        let ctx = Ctx::new(text, path);
        limits::check_strings(&ctx, text)?;
        let raw = ctx.deserialize()?;
        ctx.scenario(raw)
    }
}
