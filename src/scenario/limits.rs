//! Bounds on what a scenario file may hold, checked before anything else reads it: a scenario
//! is a small hand-written file, and `rlsim run /dev/zero` or a 50 MB `name` must be refused with
//! a message, not fill memory or abort.

use super::validate::ctx::Ctx;
use crate::error::{Error, Location, Result};
use std::io::Read;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// Largest scenario file read: far beyond any hand-written scenario (docs/scenario-format.md).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Longest `name` (of the scenario, a source, ...): names label tables, charts and reports.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest other string (a description, a trace path, an expectation).
pub const MAX_STRING_BYTES: usize = 64 << 10;

/// What a scenario read from standard input (`rlsim run -`) is called in errors and reports.
pub const STDIN_NAME: &str = "<stdin>";

/// The name `path` goes by: [`STDIN_NAME`] for `-`, else itself.
pub fn shown(path: &Path) -> &Path {
    if path == Path::new("-") {
        Path::new(STDIN_NAME)
    } else {
        path
    }
}

/// Reads a scenario file once (a FIFO can be read only once), or standard input for `-`,
/// refusing one over [`MAX_FILE_BYTES`] or not UTF-8.
pub fn read(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        return read_from(Path::new(STDIN_NAME), std::io::stdin().lock());
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(refused(path, "is a directory, not a scenario file".into()));
    }
    read_from(path, file)
}

/// A scenario file refused as a whole (no line or field to name).
fn refused(path: &Path, message: String) -> Error {
    Error::Scenario {
        location: Location {
            path: path.to_path_buf(),
            line: None,
            column: None,
        },
        field: None,
        message,
    }
}

fn read_from(path: &Path, input: impl Read) -> Result<String> {
    let err = |message: String| refused(path, message);
    let mut bytes = Vec::new();
    input
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(err(format!(
            "larger than {} MiB: not a scenario file",
            MAX_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Refuses any string longer than its bound, naming the field and its line. Malformed TOML is
/// left to the deserializer, which reports it in detail.
pub(crate) fn check_strings(ctx: &Ctx, text: &str) -> Result<()> {
    match DeTable::parse(text) {
        Ok(table) => table_strings(ctx, "", table.get_ref()),
        Err(_) => Ok(()),
    }
}

fn table_strings(ctx: &Ctx, prefix: &str, table: &DeTable) -> Result<()> {
    for (key, value) in table.iter() {
        let field = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        let limit = if key.get_ref() == "name" {
            MAX_NAME_BYTES
        } else {
            MAX_STRING_BYTES
        };
        value_strings(ctx, &field, limit, value)?;
    }
    Ok(())
}

fn value_strings(
    ctx: &Ctx,
    field: &str,
    limit: usize,
    value: &toml::Spanned<DeValue>,
) -> Result<()> {
    match value.get_ref() {
        DeValue::String(s) if s.len() > limit => Err(ctx.err(
            value.span(),
            field,
            format!("{} bytes long; at most {limit} are accepted", s.len()),
        )),
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| value_strings(ctx, &format!("{field}[{i}]"), limit, v)),
        DeValue::Table(t) => table_strings(ctx, field, t),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use std::path::Path;

    const BASE: &str = "duration = \"1s\"\nalgorithms = [\"gcra\"]\n[policy]\nlimit = 1\nwindow = \"1s\"\n[[traffic]]\nname = \"t\"\nkind = \"constant\"\nrate = \"1/s\"\n";

    #[test]
    fn long_strings_are_refused_with_their_field_and_line() {
        let long = "x".repeat(super::MAX_NAME_BYTES + 1);
        let text = format!("name = \"{long}\"\n{BASE}");
        let e = Scenario::parse(&format!("name = \"s\"\n{BASE}"), Path::new("s.toml"));
        assert!(e.is_ok(), "{e:?}");
        let e = Scenario::parse(&text, Path::new("s.toml")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:1:8: field `name`: 257 bytes long; at most 256 are accepted"
        );
        let desc = "d".repeat(super::MAX_STRING_BYTES + 1);
        let text = format!("name = \"s\"\ndescription = \"{desc}\"\n{BASE}");
        let e = Scenario::parse(&text, Path::new("s.toml")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:2:15: field `description`: "),
            "{e}"
        );
    }
}
