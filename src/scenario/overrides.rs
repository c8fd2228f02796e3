//! `--set FIELD=VALUE`: a scalar field of the scenario file replaced (or added) by its dotted
//! path, before validation, so an override is checked exactly like the file.
//!
//! The override is spliced into the file's text rather than into a parsed tree: the validator
//! then sees one document, and every error keeps its position. An error inside a spliced value
//! names the `--set` it came from instead of a line; positions after a splice are mapped back to
//! the file as written, so their line numbers stay those of the file.

use crate::error::{Error, Location, Result};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One `--set FIELD=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Dotted path: `policy.limit`, `traffic[1].rate` or `traffic.scraper.rate` (by name).
    pub field: String,
    /// The value as TOML (`60`, `"1m"`, `true`); anything that is not a TOML value is taken as a
    /// string, so `--set policy.window=1m` works without quotes.
    pub value: String,
}

impl Override {
    /// Parses `FIELD=VALUE`.
    pub fn parse(text: &str) -> Result<Override> {
        match text.split_once('=') {
            Some((field, value)) if !field.trim().is_empty() => Ok(Override {
                field: field.trim().to_string(),
                value: value.trim().to_string(),
            }),
            _ => Err(Error::Usage(format!(
                "--set {text}: expected FIELD=VALUE, e.g. `--set policy.limit=60`"
            ))),
        }
    }

    /// How errors name it: `--set policy.limit=abc`.
    pub fn label(&self) -> String {
        format!("--set {}={}", self.field, self.value)
    }

    /// The value as TOML text: as written when it is a TOML value, else quoted as a string.
    fn toml_value(&self) -> String {
        match DeValue::parse(&self.value) {
            Ok(v) if !matches!(v.get_ref(), DeValue::Table(_)) => self.value.clone(),
            _ => toml::Value::String(self.value.clone()).to_string(),
        }
    }
}

/// One splice: `new` in the patched text replaced `old` in the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The byte range of the splice in the patched text.
    pub new: Range<usize>,
    /// The byte range it replaced in the original text (empty for an inserted field).
    pub old: Range<usize>,
    /// The `--set FIELD=VALUE` that made it, for error messages.
    pub label: String,
}

/// The scenario text with overrides applied, and how to map positions back.
#[derive(Debug, Clone, Default)]
pub struct Patched {
    /// The scenario's text with every override applied.
    pub text: String,
    /// In order of position; none overlap.
    pub patches: Vec<Patch>,
}

impl Patched {
    /// Where a position of the patched text was: inside a splice, the `--set` that made it;
    /// elsewhere, the position in the original text.
    pub fn origin(&self, pos: usize) -> std::result::Result<usize, &str> {
        let mut shift: isize = 0;
        for p in &self.patches {
            if pos < p.new.start {
                break;
            }
            if pos < p.new.end.max(p.new.start + 1) {
                return Err(&p.label);
            }
            shift = p.old.end as isize - p.new.end as isize;
        }
        Ok((pos as isize + shift).max(0) as usize)
    }
}

/// Applies `overrides` to `text` in order; a later override of the same field wins.
pub fn apply(text: &str, path: &Path, overrides: &[Override]) -> Result<Patched> {
    let mut patched = Patched {
        text: text.to_string(),
        patches: Vec::new(),
    };
    for o in overrides {
        let fail = |message: String| Error::Scenario {
            location: Location {
                path: PathBuf::from(o.label()),
                line: None,
                column: None,
            },
            field: Some(o.field.clone()),
            message,
        };
        // Parsed afresh each time: an earlier override may have moved everything after it.
        let doc = DeTable::parse(&patched.text).map_err(|e| Error::Scenario {
            location: Location {
                path: path.to_path_buf(),
                line: None,
                column: None,
            },
            field: None,
            message: format!("malformed TOML: {}", e.message()),
        })?;
        let splice = locate(&patched.text, doc.get_ref(), &o.field).map_err(fail)?;
        let (range, insert) = match splice {
            Splice::Replace(range) => (range, o.toml_value()),
            Splice::Insert { at, before, key } => {
                (at..at, format!("{before}{key} = {}", o.toml_value()))
            }
            Splice::InsertLine { at, key } => (at..at, format!("{key} = {}\n", o.toml_value())),
        };
        splice_into(&mut patched, range, &insert, o.label());
    }
    Ok(patched)
}

/// Replaces `range` of the patched text, keeping the patch list in terms of the original.
fn splice_into(patched: &mut Patched, range: Range<usize>, insert: &str, label: String) {
    let delta = insert.len() as isize - range.len() as isize;
    // A splice over an earlier one (the same field set twice) takes its place.
    let mut old_start = None;
    let mut old_end = None;
    patched.patches.retain(|p| {
        let overlaps = p.new.start < range.end.max(range.start + 1) && range.start < p.new.end;
        if overlaps {
            old_start = Some(old_start.map_or(p.old.start, |s: usize| s.min(p.old.start)));
            old_end = Some(old_end.map_or(p.old.end, |e: usize| e.max(p.old.end)));
        }
        !overlaps
    });
    let to_old = |pos: usize, patches: &[Patch]| {
        let mut shift: isize = 0;
        for p in patches {
            if p.new.end <= pos {
                shift = p.old.end as isize - p.new.end as isize;
            }
        }
        (pos as isize + shift) as usize
    };
    let old = old_start.unwrap_or_else(|| to_old(range.start, &patched.patches))
        ..old_end.unwrap_or_else(|| to_old(range.end, &patched.patches));
    for p in &mut patched.patches {
        if p.new.start >= range.end {
            p.new.start = (p.new.start as isize + delta) as usize;
            p.new.end = (p.new.end as isize + delta) as usize;
        }
    }
    patched.text.replace_range(range.clone(), insert);
    patched.patches.push(Patch {
        new: range.start..range.start + insert.len(),
        old,
        label,
    });
    patched.patches.sort_by_key(|p| p.new.start);
}

enum Splice {
    /// The existing value's text.
    Replace(Range<usize>),
    /// A new key in an inline table, or on a line of its own after a table's last entry.
    Insert {
        at: usize,
        before: &'static str,
        key: String,
    },
    /// A new top-level key, at the start of the file.
    InsertLine { at: usize, key: String },
}

/// `policy.limit` → `["policy", "limit"]`; `traffic[1].rate` → `["traffic", "1", "rate"]`.
fn segments(field: &str) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if name.is_empty() && rest.is_empty() {
            return Err("empty segment in the field path".into());
        }
        if !name.is_empty() {
            out.push(name.to_string());
        }
        for index in rest.split('[').filter(|s| !s.is_empty()) {
            out.push(
                index
                    .strip_suffix(']')
                    .ok_or_else(|| format!("unclosed `[` in `{part}`"))?
                    .to_string(),
            );
        }
    }
    Ok(out)
}

fn locate(text: &str, root: &DeTable, field: &str) -> std::result::Result<Splice, String> {
    let segs = segments(field)?;
    let Some((last, parents)) = segs.split_last() else {
        return Err("empty field path".into());
    };
    let mut table: &DeTable = root;
    let mut table_span: Option<Range<usize>> = None;
    let mut i = 0;
    while i < parents.len() {
        let seg = &parents[i];
        let value = table
            .get(seg.as_str())
            .ok_or_else(|| format!("no `{seg}` in the scenario to set a field of"))?;
        match value.get_ref() {
            DeValue::Table(t) => {
                table_span = Some(value.span());
                table = t;
            }
            DeValue::Array(items) => {
                let which = parents.get(i + 1).ok_or_else(|| {
                    format!("`{seg}` is a list: name an element, e.g. `{seg}[0].FIELD`")
                })?;
                let item = element(items, which)
                    .ok_or_else(|| format!("`{seg}` has no element `{which}`"))?;
                let DeValue::Table(t) = item.get_ref() else {
                    return Err(format!("`{seg}[{which}]` is not a table"));
                };
                table_span = Some(item.span());
                table = t;
                i += 1;
            }
            other => return Err(format!("`{seg}` is a {}, not a table", other.type_str())),
        }
        i += 1;
    }
    if let Some(value) = table.get(last.as_str()) {
        if matches!(value.get_ref(), DeValue::Table(_)) {
            return Err("is a table: set one of its fields".into());
        }
        return Ok(Splice::Replace(value.span()));
    }
    let key = toml_key(last);
    let Some(span) = table_span else {
        return Ok(Splice::InsertLine { at: 0, key });
    };
    if text[span.clone()].starts_with('{') {
        let close = text[..span.end].rfind('}').unwrap_or(span.end);
        let before = if table.is_empty() { " " } else { ", " };
        return Ok(Splice::Insert {
            at: close,
            before,
            key,
        });
    }
    // After the line of the table's last value.
    let end = table
        .iter()
        .map(|(_, v)| v.span().end)
        .max()
        .ok_or("the table has no entry to add a field after: write the field in the file")?;
    let at = text[end..].find('\n').map_or(text.len(), |i| end + i);
    Ok(Splice::Insert {
        at,
        before: "\n",
        key,
    })
}

fn element<'a, 'i>(
    items: &'a [Spanned<DeValue<'i>>],
    which: &str,
) -> Option<&'a Spanned<DeValue<'i>>> {
    match which.parse::<usize>() {
        Ok(i) => items.get(i),
        // By the element's `name`: `traffic.scraper.rate`.
        Err(_) => items.iter().find(|item| {
            item.get_ref()
                .as_table()
                .and_then(|t| t.get("name"))
                .and_then(|n| n.get_ref().as_str())
                == Some(which)
        }),
    }
}

fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        key.to_string()
    } else {
        toml::Value::String(key.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"t\"\nduration = \"1m\"\n\n[policy]\nlimit = 100\nwindow = \"1m\"\n\n[[traffic]]\nname = \"a\"\nkind = \"steady\"\nrate = 5\n\n[[traffic]]\nname = \"b\"\nkind = \"steady\"\nrate = 7\n";

    fn set(pairs: &[&str]) -> Patched {
        let o: Vec<Override> = pairs.iter().map(|p| Override::parse(p).unwrap()).collect();
        apply(TEXT, "t.toml".as_ref(), &o).unwrap()
    }

    #[test]
    fn replaces_values_and_adds_missing_keys() {
        let p = set(&["policy.limit=60", "policy.window=2m", "traffic.b.rate=9"]);
        assert!(
            p.text.contains("limit = 60\nwindow = \"2m\"\n"),
            "{}",
            p.text
        );
        assert!(p.text.ends_with("rate = 9\n"), "{}", p.text);
        let p = set(&["policy.burst=3", "traffic[0].users=4", "seed=7"]);
        assert!(p.text.starts_with("seed = 7\n"), "{}", p.text);
        assert!(
            p.text.contains("window = \"1m\"\nburst = 3\n"),
            "{}",
            p.text
        );
        assert!(p.text.contains("rate = 5\nusers = 4\n"), "{}", p.text);
        // Set twice: the last one wins, once.
        let p = set(&["policy.limit=1", "policy.limit=2"]);
        assert!(p.text.contains("limit = 2\n") && p.patches.len() == 1);
    }

    #[test]
    fn positions_map_back_to_the_file() {
        let p = set(&["seed=7", "policy.limit=123456"]);
        let at = p.text.find("window").unwrap();
        assert_eq!(p.origin(at), Ok(TEXT.find("window").unwrap()));
        let at = p.text.find("123456").unwrap();
        assert_eq!(p.origin(at), Err("--set policy.limit=123456"));
        assert_eq!(p.origin(0), Err("--set seed=7"));
        assert_eq!(p.origin(p.text.find("name").unwrap()), Ok(0));
    }

    #[test]
    fn bad_paths_say_why() {
        let err = |f: &str| {
            apply(TEXT, "t.toml".as_ref(), &[Override::parse(f).unwrap()])
                .unwrap_err()
                .to_string()
        };
        assert!(err("polcy.limit=1").contains("no `polcy`"));
        assert!(err("traffic.rate=1").contains("is a list"));
        assert!(err("traffic[5].rate=1").contains("no element `5`"));
        assert!(err("policy=1").contains("is a table"));
        assert!(err("policy=1").starts_with("--set policy=1: field `policy`"));
        assert!(Override::parse("limit").is_err());
    }
}
