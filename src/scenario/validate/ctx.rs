//! The validation context: the text validated, where it came from, and how to name a position
//! in it (file, line, column, or the `--set` that wrote it) in an error.

use crate::error::{Error, Location, Result};
use crate::scenario::overrides::Patched;
use crate::scenario::raw::{Int, RawScenario, S};
use crate::time::{self, Nanos, UnitError};
use std::ops::Range;
use std::path::Path;

pub(crate) struct Ctx<'a> {
    /// The text validated: the file with any `--set` overrides spliced in.
    pub(crate) text: &'a str,
    pub(crate) path: &'a Path,
    /// The file as written and the splices, to name positions as the user wrote them.
    original: &'a str,
    patches: Option<&'a Patched>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(text: &'a str, path: &'a Path) -> Self {
        Ctx {
            text,
            path,
            original: text,
            patches: None,
        }
    }

    /// Validates `patched` (the file `original` with overrides spliced in).
    pub(crate) fn patched(original: &'a str, patched: &'a Patched, path: &'a Path) -> Self {
        Ctx {
            text: &patched.text,
            path,
            original,
            patches: Some(patched),
        }
    }

    pub(super) fn location(&self, span: Option<Range<usize>>) -> Location {
        let mut start = span.as_ref().map(|s| s.start);
        if let (Some(patched), Some(pos)) = (self.patches, start) {
            match patched.origin(pos) {
                Ok(pos) => start = Some(pos),
                // Inside an override: the override is the place to fix.
                Err(label) => {
                    return Location {
                        path: label.into(),
                        line: None,
                        column: None,
                    };
                }
            }
        }
        let (line, column) = match start {
            Some(start) => {
                let before = &self.original[..start.min(self.original.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        Location {
            path: self.path.to_path_buf(),
            line,
            column,
        }
    }

    pub(crate) fn err(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> Error {
        Error::Scenario {
            location: self.location(Some(span)),
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    /// TOML → raw structs, with serde's path to the failing field.
    pub(crate) fn deserialize(&self) -> Result<RawScenario> {
        let de = toml::Deserializer::parse(self.text).map_err(|e| Error::Scenario {
            location: self.location(e.span()),
            field: None,
            message: format!("malformed TOML: {}", e.message()),
        })?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            // Spanned<T> shows up in serde's path as a private wrapper field; drop it.
            let path = e
                .path()
                .to_string()
                .replace(".$__serde_spanned_private_value", "")
                .replace("$__serde_spanned_private_value", "");
            let inner = e.into_inner();
            let written = inner
                .span()
                .and_then(|s| self.text.get(s))
                .unwrap_or_default();
            let message = hint(&path, inner.message(), written.trim());
            Error::Scenario {
                location: self.location(inner.span()),
                field: (path != ".").then_some(path),
                message,
            }
        })
    }

    pub(super) fn duration(&self, s: &S<String>, field: &str, positive: bool) -> Result<Nanos> {
        let parsed = if positive {
            time::parse_positive_duration(s.get_ref())
        } else {
            time::parse_duration(s.get_ref())
        };
        parsed.map_err(|e| match crate::calendar::Period::parse(s.get_ref()) {
            // A calendar word where a length is due: say where calendar periods go.
            Some(p) => self.err(
                s.span(),
                field,
                format!(
                    "`{}` is a calendar period, not a length: a quota per calendar {} is a contender rule with `algorithm = \"calendar_window\"`, an allowance per period an `[intent]` window; here, write a length such as `30d`",
                    s.get_ref().trim(),
                    p.word()
                ),
            ),
            None => self.unit_err(s.span(), field, e),
        })
    }

    pub(super) fn unit_err(&self, span: Range<usize>, field: &str, e: UnitError) -> Error {
        self.err(span, field, e.to_string())
    }

    /// A count field: a whole number from 1 to `max`, in the unit its name says ([`unit_of`]).
    pub(super) fn count(&self, s: &S<Int>, field: &str, max: u64) -> Result<u64> {
        let what = format!("a whole number{}", unit_of(field));
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        Ok(self.whole(s, field, &what, 1, max)? as u64)
    }

    /// A whole number from `min` to `max`. The refusal quotes the value as written (a
    /// `--set`'s own text) and states the whole range: `70000 is too large: must be a whole
    /// number of requests from 1 to 4294967295`.
    pub(super) fn whole(
        &self,
        s: &S<Int>,
        field: &str,
        what: &str,
        min: i64,
        max: i64,
    ) -> Result<i64> {
        let why = match *s.get_ref() {
            Int::Whole(v) if (min..=max).contains(&v) => return Ok(v),
            Int::Whole(v) if v < min => "is too small",
            Int::Huge { negative: true } => "is too small",
            Int::Whole(_) | Int::Huge { .. } => "is too large",
            Int::Fraction => "is not a whole number",
            Int::NotNumber => "is not a number",
        };
        let written = self.text.get(s.span()).unwrap_or_default().trim();
        Err(self.err(
            s.span(),
            field,
            format!("{written} {why}: must be {what} from {min} to {max}"),
        ))
    }

    pub(super) fn opt_duration(
        &self,
        s: &Option<S<String>>,
        field: &str,
        default: Nanos,
    ) -> Result<Nanos> {
        s.as_ref()
            .map_or(Ok(default), |s| self.duration(s, field, false))
    }
}

/// What a count field counts, by its last name (`traffic[0].users` → clients), for the
/// range in its refusal.
fn unit_of(field: &str) -> &'static str {
    let name = field.rsplit('.').next().unwrap_or(field);
    match name.split('[').next().unwrap_or(name) {
        "limit" | "burst" | "count" => " of requests",
        "users" => " of clients",
        "ips" | "botnet" => " of addresses",
        "replicas" => " of replicas",
        "max_retries" => " of retries",
        "loop" => " of passes over the trace",
        "replicates" => " of seeds",
        _ => "",
    }
}

/// Fields whose values are rates (`"50/min"`) and durations (`"900s"`), by their last name.
const RATE_FIELDS: &[&str] = &[
    "rate",
    "rate_to",
    "amplitude",
    "peak",
    "ramp_to",
    "mmpp_rates",
];
const DURATION_FIELDS: &[&str] = &[
    "at",
    "base",
    "bucket",
    "cap",
    "clock_offset",
    "decay",
    "duration",
    "every",
    "for",
    "lead",
    "max_gap",
    "mmpp_stay",
    "off",
    "offset",
    "on",
    "period",
    "phase",
    "rise",
    "rtt",
    "sort_window",
    "spike_at",
    "spread",
    "start",
    "stop",
    "sync_every",
    "window",
];

/// The number fields that are not whole (`raw::Num`), by their last name, with the range
/// their validation checks: a value that is not a number at all is refused with it.
const NUMBER_FIELDS: &[(&str, &str)] = &[
    ("pareto_alpha", "(1, 10]"),
    ("rate_sigma", "(0, 10]"),
    ("zipf_exponent", "(0, 10]"),
    ("over", "(0, 1000]"),
    ("speed", "(0, 1000000]"),
    ("sample", "(0, 1]"),
    ("warn_at", "(0, 1]"),
    ("die_chance", "[0, 1]"),
];

/// serde's message with what to write instead: the closest known field for an unknown one,
/// the unit a bare number lacks (`rate = 50`, `window = 900`), and a number field's range.
/// `written` is the value as written.
fn hint(path: &str, message: &str, written: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((name, expected)) = rest.split_once('`')
    {
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        if let Some(close) = crate::suggest::closest(name, known.iter().copied()) {
            return format!("unknown field `{name}`: did you mean `{close}`?");
        }
        return message.to_string();
    }
    let number = ["invalid type: integer `", "invalid type: floating point `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split_once('`'))
        .filter(|(_, tail)| tail.ends_with("expected a string"))
        .map(|(n, _)| n);
    // `traffic[0].mmpp_stay[1]` → `mmpp_stay`.
    let field = path.rsplit('.').next().unwrap_or(path);
    let field = field.split('[').next().unwrap_or(field);
    if let Some((_, range)) = NUMBER_FIELDS.iter().find(|(name, _)| *name == field)
        && message.starts_with("invalid type: ")
    {
        return format!("{written} is not a number: must be a number in {range}");
    }
    if let Some((n, _)) = message
        .strip_prefix("invalid type: integer `")
        .and_then(|rest| rest.split_once("` as i128"))
    {
        return past_i64(field, n);
    }
    let Some(n) = number else {
        return message.to_string();
    };
    if RATE_FIELDS.contains(&field) {
        format!(
            "{n} has no unit: a rate is a string with its unit, like `\"{n}/min\"` or `\"{n}/s\"`"
        )
    } else if DURATION_FIELDS.contains(&field) {
        format!(
            "{n} has no unit: a duration is a string with its unit, like `\"{n}s\"` or `\"{n}ms\"`"
        )
    } else {
        message.to_string()
    }
}

/// A whole number past `i64` in a field TOML reads as any value (a key's identity table, a
/// profile's parameters, goals, uncertain values): the field's range where it is known, else
/// the most any of them can hold.
fn past_i64(field: &str, n: &str) -> String {
    let why = if n.starts_with('-') { "small" } else { "large" };
    let range = match field {
        "trusted_hops" => "a number of proxies from 0 to 64",
        "ipv6_prefix" => "a prefix length from 1 to 128",
        _ => "a whole number from -9223372036854775808 to 9223372036854775807",
    };
    format!("{n} is too {why}: must be {range}")
}

/// Most mistakes one file reports: beyond, a last line says how many more there are.
const MAX_REPORTED: usize = 20;

/// The mistakes found so far. Validation goes on past a mistake wherever what follows does not
/// depend on the refused value, so a file with several mistakes reports them all, in file order.
#[derive(Default)]
pub(super) struct Found(Vec<Error>);

impl Found {
    /// `r`'s value, or `None` with its error kept.
    pub(super) fn ok<T>(&mut self, r: Result<T>) -> Option<T> {
        r.map_err(|e| self.0.push(e)).ok()
    }

    /// Each of `items` validated by `f`: every value when all pass, else `None` with every
    /// error kept.
    pub(super) fn all<I, T>(
        &mut self,
        items: I,
        mut f: impl FnMut(I::Item) -> Result<T>,
    ) -> Option<Vec<T>>
    where
        I: IntoIterator,
    {
        let mut out = Vec::new();
        let mut complete = true;
        for item in items {
            match self.ok(f(item)) {
                Some(v) => out.push(v),
                None => complete = false,
            }
        }
        complete.then_some(out)
    }

    pub(super) fn push(&mut self, e: Error) {
        self.0.push(e);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The mistakes as one error, sorted by line (those without a line last): the error itself
    /// when there is one, [`Error::Several`] otherwise.
    pub(super) fn into_error(mut self, path: &Path) -> Error {
        fn at(e: &Error) -> (bool, usize, usize) {
            match e {
                Error::Scenario { location, .. } | Error::Trace { location, .. } => (
                    location.line.is_none(),
                    location.line.unwrap_or(0),
                    location.column.unwrap_or(0),
                ),
                _ => (true, 0, 0),
            }
        }
        self.0.sort_by_key(at);
        let more = self.0.len().saturating_sub(MAX_REPORTED);
        self.0.truncate(MAX_REPORTED);
        if more > 0 {
            self.0.push(Error::Scenario {
                location: Location {
                    path: path.to_path_buf(),
                    line: None,
                    column: None,
                },
                field: None,
                message: format!("{more} more mistakes not shown"),
            });
        }
        match self.0.len() {
            0 => Error::Internal("validation failed without an error".into()),
            1 => self.0.remove(0),
            _ => Error::Several(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hint;

    #[test]
    fn serde_words_about_numbers_become_the_fields_own() {
        assert_eq!(
            hint(
                "traffic[0].over",
                "invalid type: string \"x\", expected a number",
                "\"x\""
            ),
            "\"x\" is not a number: must be a number in (0, 1000]"
        );
        assert_eq!(
            hint(
                "contender[0].rule[0].warn_at",
                "invalid type: boolean `true`, expected a number",
                "true"
            ),
            "true is not a number: must be a number in (0, 1]"
        );
        assert_eq!(
            hint(
                "policy.window",
                "invalid type: integer `900`, expected a string",
                "900"
            ),
            "900 has no unit: a duration is a string with its unit, like `\"900s\"` or `\"900ms\"`"
        );
        assert_eq!(
            hint(
                "policy.key.trusted_hops",
                "invalid type: integer `99999999999999999999` as i128, expected any value",
                "99999999999999999999"
            ),
            "99999999999999999999 is too large: must be a number of proxies from 0 to 64"
        );
        assert_eq!(
            hint(
                "profile.nginx-limit-req.burst",
                "invalid type: integer `-99999999999999999999` as i128, expected any value",
                "-99999999999999999999"
            ),
            "-99999999999999999999 is too small: must be a whole number from \
             -9223372036854775808 to 9223372036854775807"
        );
    }
}
