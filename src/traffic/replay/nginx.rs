//! nginx access logs that carry production's limiter decisions: a JSON `log_format` (one object
//! per line, `escape=json`, keys named like nginx's variables) and a text `log_format` read
//! through its own template (the source's `log_format` option, else [`DEFAULT_LOG_FORMAT`]).
//!
//! The time is the request's start, `$msec − $request_time`: `$request_time` is counted from the
//! cached wall-clock millisecond the request was created at, and `limit_req` decides then, so
//! the difference is that instant exactly (a delayed request is logged after its delay, and
//! would otherwise be placed late). `$limit_req_status` is production's decision; without it
//! the status stays for the back-test to compare with the contender's refusal status.

use super::common::json_error;
use super::input::{LineFormat, Lines};
use super::{
    Outcome, Production, Record, RecordReader, field_index, parse_status, parse_time, seconds_ns,
};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

/// The text `log_format` read when the source names none: nginx's `combined`, then the three
/// variables a back-test needs.
pub const DEFAULT_LOG_FORMAT: &str = "$remote_addr - $remote_user [$time_local] \"$request\" \
     $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $msec $request_time \
     $limit_req_status";

/// The variables a trace record is made of; every other variable is read and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Var {
    Msec,
    TimeIso8601,
    RequestTime,
    RemoteAddr,
    ForwardedFor,
    RemoteUser,
    ApiKey,
    Request,
    Uri,
    RequestUri,
    Status,
    LimitReqStatus,
    Other,
}

impl Var {
    fn of(name: &str) -> Var {
        match name {
            "msec" => Var::Msec,
            "time_iso8601" => Var::TimeIso8601,
            "request_time" => Var::RequestTime,
            "remote_addr" => Var::RemoteAddr,
            "http_x_forwarded_for" => Var::ForwardedFor,
            "remote_user" => Var::RemoteUser,
            "http_x_api_key" => Var::ApiKey,
            "request" => Var::Request,
            "uri" => Var::Uri,
            "request_uri" => Var::RequestUri,
            "status" => Var::Status,
            "limit_req_status" => Var::LimitReqStatus,
            _ => Var::Other,
        }
    }

    /// The field a malformed value is reported under.
    fn field(self) -> &'static str {
        match self {
            Var::Msec => "msec",
            Var::TimeIso8601 => "time_iso8601",
            Var::RequestTime => "request_time",
            Var::Status => "status",
            Var::LimitReqStatus => "limit_req_status",
            _ => "line",
        }
    }
}

/// One piece of a text `log_format`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Var(Var),
}

/// A text `log_format`, parsed: literals and variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `$name` and `${name}` variables between literals, as nginx's `log_format` does.
    /// Refused: two variables with nothing between them (the line could not be cut), and a
    /// template with neither `$msec` nor `$time_iso8601`.
    pub fn parse(text: &str) -> std::result::Result<Template, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if c != '$' {
                literal.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
            let (name, after) = match rest[1..].strip_prefix('{') {
                Some(braced) => braced
                    .split_once('}')
                    .ok_or_else(|| format!("`${{` without `}}` in log_format `{text}`"))?,
                None => {
                    let end = rest[1..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .map_or(rest.len(), |i| i + 1);
                    (&rest[1..end], &rest[end..])
                }
            };
            if name.is_empty() {
                return Err(format!(
                    "a `$` with no variable name in log_format `{text}`"
                ));
            }
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            } else if matches!(pieces.last(), Some(Piece::Var(_))) {
                return Err(format!(
                    "`${name}` follows another variable with nothing between them in log_format `{text}`: the line could not be cut"
                ));
            }
            pieces.push(Piece::Var(Var::of(name)));
            rest = after;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        let has = |v| pieces.contains(&Piece::Var(v));
        if !has(Var::Msec) && !has(Var::TimeIso8601) {
            return Err(format!(
                "log_format `{text}` records no time: it needs `$msec` (or `$time_iso8601`, one-second resolution)"
            ));
        }
        Ok(Template { pieces })
    }
}

/// The values of one logged request, by variable.
#[derive(Default)]
struct Values<'a> {
    msec: Option<Cow<'a, str>>,
    iso: Option<Cow<'a, str>>,
    request_time: Option<Cow<'a, str>>,
    remote_addr: Option<Cow<'a, str>>,
    forwarded_for: Option<Cow<'a, str>>,
    remote_user: Option<Cow<'a, str>>,
    api_key: Option<Cow<'a, str>>,
    request: Option<Cow<'a, str>>,
    uri: Option<Cow<'a, str>>,
    request_uri: Option<Cow<'a, str>>,
    status: Option<Cow<'a, str>>,
    limit_req_status: Option<Cow<'a, str>>,
}

type Bad = (Option<&'static str>, String);

impl<'a> Values<'a> {
    fn set(&mut self, var: Var, value: Cow<'a, str>) {
        let slot = match var {
            Var::Msec => &mut self.msec,
            Var::TimeIso8601 => &mut self.iso,
            Var::RequestTime => &mut self.request_time,
            Var::RemoteAddr => &mut self.remote_addr,
            Var::ForwardedFor => &mut self.forwarded_for,
            Var::RemoteUser => &mut self.remote_user,
            Var::ApiKey => &mut self.api_key,
            Var::Request => &mut self.request,
            Var::Uri => &mut self.uri,
            Var::RequestUri => &mut self.request_uri,
            Var::Status => &mut self.status,
            Var::LimitReqStatus => &mut self.limit_req_status,
            Var::Other => return,
        };
        *slot = Some(value);
    }

    /// Fills `rec` from the values (see the module docs for the time and the decision).
    fn fill(self, rec: &mut Record) -> std::result::Result<(), Bad> {
        let end = match (present(&self.msec), present(&self.iso)) {
            (Some(msec), _) => parse_time(msec).map_err(|m| (Some("msec"), m))?,
            (None, Some(iso)) => parse_time(iso).map_err(|m| (Some("time_iso8601"), m))?,
            (None, None) => return Err((Some("msec"), "the line records no time".into())),
        };
        let took = match present(&self.request_time) {
            Some(t) => seconds_ns(t).map_err(|m| (Some("request_time"), m))?,
            None => 0,
        };
        rec.epoch_ns = end.checked_sub(took).ok_or((
            Some("request_time"),
            "the request took longer than its end time".to_string(),
        ))?;
        rec.status =
            parse_status(present(&self.status).unwrap_or("")).map_err(|m| (Some("status"), m))?;
        if let Some(decision) = present(&self.limit_req_status) {
            rec.production =
                Production::parse(decision).map_err(|m| (Some("limit_req_status"), m))?;
        }
        // `$remote_addr` is the client once the realip module has read the forwarding header;
        // without it, the header's first address is.
        let ip = present(&self.remote_addr).or_else(|| {
            present(&self.forwarded_for).map(|x| x.split(',').next().unwrap_or("").trim())
        });
        let path = present(&self.uri)
            .or_else(|| present(&self.request_uri))
            .or_else(|| present(&self.request).and_then(|r| r.split(' ').nth(1)))
            .map(|p| p.split('?').next().unwrap_or(p));
        for (field, value) in [
            (KeyField::Ip, ip),
            (KeyField::User, present(&self.remote_user)),
            (KeyField::ApiKey, present(&self.api_key)),
            (KeyField::Endpoint, path),
        ] {
            if let Some(v) = value {
                rec.fields[field_index(field)].push_str(v);
            }
        }
        Ok(())
    }
}

/// A value nginx logged, unless empty or `-` (nginx's mark of an unset variable).
fn present<'b>(v: &'b Option<Cow<'_, str>>) -> Option<&'b str> {
    v.as_deref().filter(|s| !s.is_empty() && *s != "-")
}

/// A text access log in a declared `log_format`.
pub struct NginxText {
    template: Template,
}

impl LineFormat for NginxText {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), Bad> {
        let mut values = Values::default();
        let mut rest = line;
        let pieces = &self.template.pieces;
        for (i, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Literal(lit) => {
                    rest = rest.strip_prefix(lit.as_str()).ok_or_else(|| {
                        (
                            None,
                            format!(
                                "the line does not follow the log_format: expected `{lit}` at `{}`",
                                clip(rest)
                            ),
                        )
                    })?;
                }
                Piece::Var(var) => {
                    // A variable runs up to the next literal (nginx escapes `"` in values).
                    let (value, after) = match pieces.get(i + 1) {
                        Some(Piece::Literal(next)) => {
                            let at = rest.find(next.as_str()).ok_or_else(|| {
                                (Some(var.field()), format!("the line ends before `{next}`, which the log_format expects"))
                            })?;
                            (&rest[..at], &rest[at..])
                        }
                        _ => (rest, ""),
                    };
                    values.set(*var, Cow::Borrowed(value));
                    rest = after;
                }
            }
        }
        values.fill(rec)
    }
}

/// At most 40 characters of `text`, for a message.
fn clip(text: &str) -> &str {
    text.char_indices()
        .nth(40)
        .map_or(text, |(i, _)| &text[..i])
}

/// A JSON `log_format`: one object per line, keys named like the variables.
pub struct NginxJson;

impl LineFormat for NginxJson {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), Bad> {
        // Typed, borrowed fields, as for JSON Lines: other keys are skipped unparsed.
        let j: JsonLine<'_> = serde_json::from_str(line)
            .map_err(|e| (None, format!("not a JSON log line: {}", json_error(&e))))?;
        let mut values = Values::default();
        for (var, value) in [
            (Var::Msec, j.msec),
            (Var::TimeIso8601, j.time_iso8601),
            (Var::RequestTime, j.request_time),
            (Var::RemoteAddr, j.remote_addr),
            (Var::ForwardedFor, j.http_x_forwarded_for),
            (Var::RemoteUser, j.remote_user),
            (Var::ApiKey, j.http_x_api_key),
            (Var::Request, j.request),
            (Var::Uri, j.uri),
            (Var::RequestUri, j.request_uri),
            (Var::Status, j.status),
            (Var::LimitReqStatus, j.limit_req_status),
        ] {
            if let Some(v) = value {
                values.set(var, v.text().map_err(|m| (Some(var.field()), m))?);
            }
        }
        values.fill(rec)
    }
}

/// The keys of a JSON `log_format` line that make a record.
#[derive(serde::Deserialize)]
struct JsonLine<'a> {
    #[serde(borrow)]
    msec: Option<Scalar<'a>>,
    #[serde(borrow)]
    time_iso8601: Option<Scalar<'a>>,
    #[serde(borrow)]
    request_time: Option<Scalar<'a>>,
    #[serde(borrow)]
    remote_addr: Option<Scalar<'a>>,
    #[serde(borrow)]
    http_x_forwarded_for: Option<Scalar<'a>>,
    #[serde(borrow)]
    remote_user: Option<Scalar<'a>>,
    #[serde(borrow)]
    http_x_api_key: Option<Scalar<'a>>,
    #[serde(borrow)]
    request: Option<Scalar<'a>>,
    #[serde(borrow)]
    uri: Option<Scalar<'a>>,
    #[serde(borrow)]
    request_uri: Option<Scalar<'a>>,
    #[serde(borrow)]
    status: Option<Scalar<'a>>,
    #[serde(borrow)]
    limit_req_status: Option<Scalar<'a>>,
}

/// A JSON value as nginx logs one: a string (`"$msec"`), a number (`$msec` unquoted), or null.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Scalar<'a> {
    Int(u64),
    Float(f64),
    #[serde(borrow)]
    Text(Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

impl<'a> Scalar<'a> {
    fn text(self) -> std::result::Result<Cow<'a, str>, String> {
        match self {
            Scalar::Text(t) => Ok(t),
            Scalar::Int(n) => Ok(Cow::Owned(n.to_string())),
            // An unquoted `$msec` read as a float: microseconds are exact in an f64 at today's
            // epoch (under 2^53), and nginx logs milliseconds.
            Scalar::Float(f) if f >= 0.0 => {
                let micros = (f * 1e6).round() as u64;
                Ok(Cow::Owned(format!(
                    "{}.{:06}",
                    micros / 1_000_000,
                    micros % 1_000_000
                )))
            }
            Scalar::Float(f) => Err(format!("`{f}` is negative")),
            Scalar::Other(_) => Ok(Cow::Borrowed("")),
        }
    }
}

/// The text reader of `log_format` `template`.
pub fn text_reader(
    path: &Path,
    input: Box<dyn BufRead + Send>,
    template: Template,
) -> Lines<NginxText> {
    Lines::new(path, input, NginxText { template })
}

pub fn json_reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<NginxJson> {
    Lines::new(path, input, NginxJson)
}

impl RecordReader for Lines<NginxText> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

impl RecordReader for Lines<NginxJson> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}
