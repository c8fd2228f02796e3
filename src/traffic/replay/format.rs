//! What a trace format declares in its own file, in one [`Format`]: its names, what it records,
//! how its content is recognised and how it is read. `trace_formats!` (invoked in `mod.rs`)
//! makes `TraceFormat` and its dispatch from one list of `Variant => descriptor` lines, so a
//! format is added with its file and one line.

use super::{RecordReader, ReplayOptions};
use crate::error::Result;
use crate::policy::{KeyField, KeySpec};
use serde_json::{Map, Value};
use std::io::BufRead;
use std::path::Path;

/// One trace format's facts.
pub(super) struct Format {
    /// The name `format = "..."` takes.
    pub name: &'static str,
    /// Other names `format` takes for it.
    pub aliases: &'static [&'static str],
    /// How error messages name the format.
    pub title: &'static str,
    /// The identity fields the format records (a policy keyed on another is refused).
    pub fields: &'static [KeyField],
    /// Whether its timestamps can have one-second resolution (its requests of a second are
    /// placed by `same_second`).
    pub seconds_only: bool,
    /// File extensions read in this format when the source names none and the content shows
    /// none (a file no format claims is read as CSV).
    pub extensions: &'static [&'static str],
    pub detect: Detect,
    pub open: Open,
}

/// Opens a reader of the (decompressed) trace; with `key_spec`, one that checks the trace can
/// supply the spec's fields.
pub(super) type Open = fn(
    path: &Path,
    input: Box<dyn BufRead + Send>,
    key_spec: Option<&KeySpec>,
    options: &ReplayOptions,
) -> Result<Box<dyn RecordReader>>;

/// How a format is recognised from one of a trace's first lines.
pub(super) struct Detect {
    /// Formats are tried lowest rank first: a later test may accept lines an earlier format
    /// claims (CLF accepts nginx's back-test lines, CSV any line with a `time` column).
    pub rank: u8,
    pub shows: fn(&Head<'_>) -> bool,
}

/// A trace's first non-empty line, as detection sees it.
pub(super) enum Head<'a> {
    /// A line that does not start with `{`.
    Text(&'a str),
    /// A line that is one JSON object: its keys tell the format.
    Object(&'a Map<String, Value>),
    /// A line that starts with `{` but is not a whole object: part of a document over lines.
    Fragment(&'a str),
}

impl Head<'_> {
    /// The line, when it is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Head::Text(line) => Some(line),
            _ => None,
        }
    }

    /// Whether the line is an object with one of `keys`.
    pub fn has_any(&self, keys: &[&str]) -> bool {
        matches!(self, Head::Object(o) if keys.iter().any(|k| o.contains_key(*k)))
    }

    /// Whether the line is an object with all of `keys`.
    pub fn has_all(&self, keys: &[&str]) -> bool {
        matches!(self, Head::Object(o) if keys.iter().all(|k| o.contains_key(*k)))
    }
}

/// Declares `TraceFormat` from one list of `Variant => descriptor` lines (each a [`Format`]
/// constant in its format's file), in the order `--format` lists the formats.
macro_rules! trace_formats {
    ($($(#[$doc:meta])* $variant:ident => $format:path,)*) => {
        /// The format of a trace file.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
        pub enum TraceFormat {
            $($(#[$doc])* $variant,)*
        }

        impl TraceFormat {
            /// The format's facts, declared in its file.
            fn format(self) -> &'static format::Format {
                match self {
                    $(TraceFormat::$variant => &$format,)*
                }
            }
        }
    };
}
pub(super) use trace_formats;
