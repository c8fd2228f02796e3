//! nginx access logs that carry production's limiter decisions: a JSON `log_format` (one object
//! per line, `escape=json`, keys named like nginx's variables) and a text `log_format` read
//! through its own template (the source's `log_format` option, else [`DEFAULT_LOG_FORMAT`]).
//!
//! Read from nginx's own documentation and source:
//! <https://nginx.org/en/docs/http/ngx_http_log_module.html#log_format> (`log_format`,
//! `escape=default|json|none`), <https://nginx.org/en/docs/http/ngx_http_core_module.html#variables>,
//! <https://nginx.org/en/docs/http/ngx_http_limit_req_module.html#var_limit_req_status>,
//! <https://nginx.org/en/docs/http/ngx_http_realip_module.html#var_realip_remote_addr>, and
//! `src/http/modules/ngx_http_log_module.c`. The variables read:
//!
//! - time: `$msec` (`%T.%03M`, `ngx_http_log_msec`: epoch seconds and milliseconds; an integer
//!   is whole seconds, up to 9 decimals are exact), else `$time_iso8601` or `$time_local`
//!   (whole seconds: the requests of a second are placed by `same_second`), less
//!   `$request_time`;
//! - `ip`: `$remote_addr`, else the first address of `$http_x_forwarded_for`, else
//!   `$realip_remote_addr`; `user`: `$remote_user`; `api_key`: `$http_x_api_key`;
//! - `method`: `$request_method`, else the first word of `$request`; `endpoint`: `$uri`, else
//!   `$request_uri`, else the second word of `$request`, without the query (percent-encoding as
//!   logged);
//! - `status`: `$status` (`%03ui`: `000` when no response was sent, `009` for HTTP/0.9, which
//!   has no status line: none); `forwarded_for`: `$http_x_forwarded_for`;
//! - `cost` and `actual_cost`: variables of those names, which nginx does not define: a
//!   configuration that logs a query's cost defines them (`map $upstream_http_x_query_cost
//!   $cost { default $upstream_http_x_query_cost; }`, or `set`), read as a trace's columns;
//! - production's decision: `$limit_req_status` (`PASSED`, `DELAYED`, `REJECTED`,
//!   `DELAYED_DRY_RUN`, `REJECTED_DRY_RUN`; `-`: no `limit_req` decided the request, and the
//!   status stays for the back-test to compare with the contender's refusal status).
//!
//! The time is the request's start, `$msec − $request_time`: `$request_time` is counted from the
//! cached wall-clock millisecond the request was created at, and `limit_req` decides then, so
//! the difference is that instant exactly (a delayed request is logged after its delay, and
//! would otherwise be placed late).
//!
//! Escaping (`ngx_http_log_escape`, `ngx_escape_json`): with `escape=default` a variable's `"`,
//! `\`, and bytes under 32 or over 126 are written `\xXX`, which is undone; `escape=json` writes
//! `\"`, `\\`, `\n`-style and `\u00XX` escapes (undone by the JSON parser in `nginx_json`, by hand
//! in a text template declared `escape=json ...`); `escape=none` writes values as they are, so
//! nothing is undone. A variable with no value is `-` with the default escaping and empty with
//! the others: both are none.

use super::clf::is_clf;
use super::clf_time::StampCache;
use super::common::{json_error, rfc3339};
use super::format::{Detect, Format, Head};
use super::input::{self, LineError, LineFormat, Lines, TraceData};
use super::seconds::{Placement, placed};
use super::{
    Outcome, Production, Record, RecordReader, field_index, parse_actual_cost, parse_cost,
    parse_method, parse_status, seconds_ns,
};
use crate::error::{Error, Result};
use crate::policy::KeyField;
use crate::time::NANOS_PER_SEC;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// A text `log_format` (the source's, else [`DEFAULT_LOG_FORMAT`]).
pub(super) const TEXT: Format = Format {
    name: "nginx",
    aliases: &[],
    title: "an nginx access log",
    fields: &KeyField::ALL,
    // By its `log_format` (`ReplayOptions::seconds_only`).
    seconds_only: false,
    extensions: &[],
    // Before CLF: nginx's default text format for back-tests is `combined` then `$msec
    // $request_time $limit_req_status`.
    detect: Detect {
        rank: 50,
        shows: |head| head.text().is_some_and(is_default_text),
    },
    open: |path, input, _, options| {
        let template = match &options.log_format {
            Some(t) => t.clone(),
            None => Template::parse(DEFAULT_LOG_FORMAT).expect("the default parses"),
        };
        Ok(text_reader(path, input, template, Placement::of(options)))
    },
};

/// A JSON `log_format`, keys named like nginx's variables.
pub(super) const JSON: Format = Format {
    name: "nginx_json",
    detect: Detect {
        rank: 60,
        shows: |head| matches!(head, Head::Object(o) if is_json_line(o)),
    },
    open: |path, input, _, options| json_reader(path, &options.data, input, Placement::of(options)),
    ..TEXT
};

/// A line of [`DEFAULT_LOG_FORMAT`]: the combined format's, then two decimals of 3 digits.
fn is_default_text(line: &str) -> bool {
    let tail: Vec<&str> = line.rsplitn(4, ' ').collect();
    is_clf(line) && tail.len() == 4 && is_decimal(tail[2], 3) && is_decimal(tail[1], 3)
}

/// Digits, a dot, then exactly `decimals` digits (`$msec`, `$request_time`).
fn is_decimal(word: &str, decimals: usize) -> bool {
    word.split_once('.').is_some_and(|(whole, frac)| {
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && frac.len() == decimals
            && frac.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A JSON line of nginx's variables: no `time` (a JSON Lines trace's), and `msec`, or an nginx
/// time with a request.
fn is_json_line(o: &serde_json::Map<String, serde_json::Value>) -> bool {
    let has = |k: &str| o.contains_key(k);
    !has("time")
        && (has("msec")
            || ((has("time_iso8601") || has("time_local"))
                && (has("request") || has("request_uri") || has("remote_addr"))))
}

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
    TimeLocal,
    RequestTime,
    RemoteAddr,
    RealipRemoteAddr,
    ForwardedFor,
    RemoteUser,
    ApiKey,
    Request,
    RequestMethod,
    Uri,
    RequestUri,
    Status,
    LimitReqStatus,
    Cost,
    ActualCost,
    Other,
}

impl Var {
    fn of(name: &str) -> Var {
        match name {
            "msec" => Var::Msec,
            "time_iso8601" => Var::TimeIso8601,
            "time_local" => Var::TimeLocal,
            "request_time" => Var::RequestTime,
            "remote_addr" => Var::RemoteAddr,
            "realip_remote_addr" => Var::RealipRemoteAddr,
            "http_x_forwarded_for" => Var::ForwardedFor,
            "remote_user" => Var::RemoteUser,
            "http_x_api_key" => Var::ApiKey,
            "request" => Var::Request,
            "request_method" => Var::RequestMethod,
            "uri" => Var::Uri,
            "request_uri" => Var::RequestUri,
            "status" => Var::Status,
            "limit_req_status" => Var::LimitReqStatus,
            "cost" => Var::Cost,
            "actual_cost" => Var::ActualCost,
            _ => Var::Other,
        }
    }
}

/// A variable's name for the life of the process: a malformed line's field is a `&'static str`
/// ([`LineError`]). Interned, so parsing a template again does not leak again.
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(n);
    n
}

/// How a `log_format` escapes variables' values (its `escape=` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Escape {
    /// `\xXX` for `"`, `\`, and bytes under 32 or over 126.
    #[default]
    Default,
    /// JSON string escapes.
    Json,
    /// Values written as they are.
    None,
}

/// One piece of a text `log_format`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    /// The variable and its name (the field a malformed value is reported under).
    Var(Var, &'static str),
}

/// A text `log_format`, parsed: literals and variables, and how values are escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    escape: Escape,
}

impl Template {
    /// Parses `$name` and `${name}` variables between literals, as nginx's `log_format` does,
    /// after an optional `escape=default|json|none` word (the directive's parameter).
    /// Refused: two variables with nothing between them (the line could not be cut), and a
    /// template with neither `$msec`, `$time_iso8601` nor `$time_local`.
    pub fn parse(text: &str) -> std::result::Result<Template, String> {
        let (escape, body) = match text.trim_start().strip_prefix("escape=") {
            Some(rest) => {
                let (word, body) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let escape = match word {
                    "default" => Escape::Default,
                    "json" => Escape::Json,
                    "none" => Escape::None,
                    other => {
                        return Err(format!(
                            "unknown log format escaping `{other}` (nginx's are default, json and none)"
                        ));
                    }
                };
                (escape, body.trim_start())
            }
            None => (Escape::Default, text),
        };
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = body;
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
            } else if matches!(pieces.last(), Some(Piece::Var(..))) {
                return Err(format!(
                    "`${name}` follows another variable with nothing between them in log_format `{text}`: the line could not be cut"
                ));
            }
            pieces.push(Piece::Var(Var::of(name), intern(name)));
            rest = after;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        let template = Template { pieces, escape };
        if !template.has(Var::Msec) && !template.seconds_only() {
            return Err(format!(
                "log_format `{text}` records no time: it needs `$msec` (or `$time_iso8601` or `$time_local`, one-second resolution)"
            ));
        }
        Ok(template)
    }

    fn has(&self, var: Var) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Var(v, _) if *v == var))
    }

    /// Whether the only time the template records is one-second (`$time_iso8601`,
    /// `$time_local`): its requests of a second are placed by `same_second`.
    pub fn seconds_only(&self) -> bool {
        !self.has(Var::Msec) && (self.has(Var::TimeIso8601) || self.has(Var::TimeLocal))
    }
}

/// The values of one logged request, by variable: borrowed from the line (the text form) or
/// from the parsed JSON; empty when absent.
#[derive(Default)]
struct Values<'a> {
    msec: &'a str,
    iso: &'a str,
    local: &'a str,
    request_time: &'a str,
    remote_addr: &'a str,
    realip_remote_addr: &'a str,
    forwarded_for: &'a str,
    remote_user: &'a str,
    api_key: &'a str,
    request: &'a str,
    request_method: &'a str,
    uri: &'a str,
    request_uri: &'a str,
    status: &'a str,
    limit_req_status: &'a str,
    cost: &'a str,
    actual_cost: &'a str,
}

impl<'a> Values<'a> {
    fn set(&mut self, var: Var, value: &'a str) {
        let slot = match var {
            Var::Msec => &mut self.msec,
            Var::TimeIso8601 => &mut self.iso,
            Var::TimeLocal => &mut self.local,
            Var::RequestTime => &mut self.request_time,
            Var::RemoteAddr => &mut self.remote_addr,
            Var::RealipRemoteAddr => &mut self.realip_remote_addr,
            Var::ForwardedFor => &mut self.forwarded_for,
            Var::RemoteUser => &mut self.remote_user,
            Var::ApiKey => &mut self.api_key,
            Var::Request => &mut self.request,
            Var::RequestMethod => &mut self.request_method,
            Var::Uri => &mut self.uri,
            Var::RequestUri => &mut self.request_uri,
            Var::Status => &mut self.status,
            Var::LimitReqStatus => &mut self.limit_req_status,
            Var::Cost => &mut self.cost,
            Var::ActualCost => &mut self.actual_cost,
            Var::Other => return,
        };
        *slot = value;
    }

    /// Fills `rec` from the values (see the module docs), undoing `escape` in the values that
    /// may hold escaped bytes (the log module's own variables, times and the status, never do).
    fn fill(
        &self,
        rec: &mut Record,
        escape: Escape,
        stamps: &mut StampCache,
    ) -> std::result::Result<(), LineError> {
        let (end, seconds) = if let Some(msec) = present(self.msec) {
            (msec_ns(msec).map_err(|m| (Some("msec"), m))?, false)
        } else if let Some(iso) = present(self.iso) {
            (rfc3339(iso).map_err(|m| (Some("time_iso8601"), m))?, true)
        } else if let Some(local) = present(self.local) {
            (
                stamps.parse(local).map_err(|m| (Some("time_local"), m))?,
                true,
            )
        } else {
            return Err((
                Some("msec"),
                "the line records no time (`$msec`, `$time_iso8601` or `$time_local`)".into(),
            ));
        };
        let mut took = match present(self.request_time) {
            Some(t) => seconds_ns(t).map_err(|m| (Some("request_time"), m))?,
            None => 0,
        };
        if seconds {
            // The end is somewhere in its second: the start's second is taken as that of the
            // second's middle less the request time, so that the start stays on a whole second
            // for `same_second` to place (a 4 ms request stays in its second).
            took = (took + NANOS_PER_SEC / 2 - 1) / NANOS_PER_SEC * NANOS_PER_SEC;
        }
        rec.epoch_ns = end.checked_sub(took).ok_or((
            Some("request_time"),
            "the request took longer than its end time".to_string(),
        ))?;
        rec.status = match self.status {
            // HTTP/0.9 has no status line; nginx logs it as 9.
            "009" => None,
            s => parse_status(s).map_err(|m| (Some("status"), m))?,
        };
        rec.production =
            Production::parse(self.limit_req_status).map_err(|m| (Some("limit_req_status"), m))?;
        rec.cost = parse_cost(self.cost).map_err(|m| (Some("cost"), m))?;
        rec.actual_cost =
            parse_actual_cost(self.actual_cost).map_err(|m| (Some("actual_cost"), m))?;
        let mut request = present(self.request).unwrap_or("").split(' ');
        let (method, target) = (request.next().unwrap_or(""), request.next().unwrap_or(""));
        rec.method = parse_method(present(self.request_method).unwrap_or(method));
        // `$remote_addr` is the client once the realip module has read the forwarding header;
        // without it, the header's first address is, else the peer.
        let ip = present(self.remote_addr)
            .or_else(|| {
                present(self.forwarded_for)
                    .map(|x| x.split(',').next().unwrap_or("").trim())
                    .filter(|x| !x.is_empty())
            })
            .or_else(|| present(self.realip_remote_addr));
        let path = present(self.uri)
            .or_else(|| present(self.request_uri))
            .or_else(|| present(target))
            .map(|p| p.split('?').next().unwrap_or(p));
        for (field, value) in [
            (KeyField::Ip, ip),
            (KeyField::User, present(self.remote_user)),
            (KeyField::ApiKey, present(self.api_key)),
            (KeyField::Endpoint, path),
        ] {
            if let Some(v) = value {
                unescape(&mut rec.fields[field_index(field)], v, escape);
            }
        }
        if let Some(xff) = present(self.forwarded_for) {
            unescape(&mut rec.forwarded_for, xff, escape);
        }
        Ok(())
    }
}

/// A value nginx logged, unless empty or `-` (nginx's mark of an unset variable).
fn present(v: &str) -> Option<&str> {
    (!v.is_empty() && v != "-").then_some(v)
}

/// `$msec` as nanoseconds since the epoch: decimal seconds, exactly (nginx writes
/// milliseconds); an integer is whole seconds; more than 9 decimals is finer than a nanosecond.
fn msec_ns(raw: &str) -> std::result::Result<u64, String> {
    if let Some((_, frac)) = raw.split_once('.')
        && frac.len() > 9
        && frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!(
            "`{raw}` has {} decimals: at most 9 (nanoseconds) are read exactly",
            frac.len()
        ));
    }
    seconds_ns(raw).map_err(|m| format!("{m} since 1970 (`$msec`: `1733112345.123`)"))
}

/// Appends `value` to `out` with `escape`'s escapes undone. Without a backslash (nearly every
/// value) it is copied as is; bytes decoded into invalid UTF-8 become U+FFFD.
fn unescape(out: &mut String, value: &str, escape: Escape) {
    if escape == Escape::None || memchr::memchr(b'\\', value.as_bytes()).is_none() {
        out.push_str(value);
        return;
    }
    let b = value.as_bytes();
    let hex = |i: usize| -> Option<u8> {
        let d = |c: u8| (c as char).to_digit(16);
        Some((d(*b.get(i)?)? * 16 + d(*b.get(i + 1)?)?) as u8)
    };
    let mut bytes = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let decoded = match (escape, b[i], b.get(i + 1)) {
            (Escape::Default, b'\\', Some(b'x')) => hex(i + 2).map(|c| (c, 4)),
            (Escape::Json, b'\\', Some(&c)) => match c {
                b'"' | b'\\' | b'/' => Some((c, 2)),
                b'n' => Some((b'\n', 2)),
                b'r' => Some((b'\r', 2)),
                b't' => Some((b'\t', 2)),
                b'b' => Some((8, 2)),
                b'f' => Some((12, 2)),
                // nginx writes `\u00XX` for the other control bytes only.
                b'u' if b.get(i + 2..i + 4) == Some(b"00") => hex(i + 4).map(|c| (c, 6)),
                _ => None,
            },
            _ => None,
        };
        match decoded {
            Some((c, len)) => {
                bytes.push(c);
                i += len;
            }
            // Not an escape nginx writes: kept as logged.
            None => {
                bytes.push(b[i]);
                i += 1;
            }
        }
    }
    out.push_str(&String::from_utf8_lossy(&bytes));
}

/// A text access log in a declared `log_format`.
pub struct NginxText {
    template: Template,
    stamps: StampCache,
}

impl LineFormat for NginxText {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let mut values = Values::default();
        let mut rest = line;
        let pieces = &self.template.pieces;
        // The field a literal that is not where the template puts it is reported under: the
        // variable after it (the one the line does not reach), else the one before it.
        let near = |i: usize| {
            let name = |p: Option<&Piece>| match p {
                Some(Piece::Var(_, name)) => Some(*name),
                _ => None,
            };
            name(pieces.get(i + 1)).or_else(|| name(i.checked_sub(1).and_then(|j| pieces.get(j))))
        };
        for (i, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Literal(lit) => {
                    rest = rest.strip_prefix(lit.as_str()).ok_or_else(|| {
                        (
                            near(i),
                            format!(
                                "the line does not follow the log_format: expected `{lit}` at `{}`",
                                clip(rest)
                            ),
                        )
                    })?;
                }
                Piece::Var(var, name) => {
                    // A variable runs up to the next literal (nginx escapes `"` and `\` in
                    // values, so a quoted value ends at its quote).
                    let (value, after) = match pieces.get(i + 1) {
                        Some(Piece::Literal(next)) => {
                            let at = find_literal(rest, next, self.template.escape).ok_or_else(|| {
                                let missing = near(i + 1).filter(|n| n != name).unwrap_or(name);
                                (Some(missing), format!("the line ends before `{next}`, which the log_format expects (a truncated line?)"))
                            })?;
                            (&rest[..at], &rest[at..])
                        }
                        _ => (rest, ""),
                    };
                    values.set(*var, value);
                    rest = after;
                }
            }
        }
        // The log module writes `$status` always (`%03ui`): an empty one is a broken line,
        // where a JSON log may leave the key out.
        if values.status.is_empty() && self.template.has(Var::Status) {
            return Err((
                Some("status"),
                "no status where the log_format has `$status`".into(),
            ));
        }
        values.fill(rec, self.template.escape, &mut self.stamps)
    }
}

/// Where `literal` starts in `text`: with `escape=json` a quote preceded by an odd number of
/// backslashes is inside the value (`\"`), not its end.
/// Literals are a few bytes: their first byte is searched (`memchr`), the rest compared.
fn find_literal(text: &str, literal: &str, escape: Escape) -> Option<usize> {
    let (bytes, lit) = (text.as_bytes(), literal.as_bytes());
    let first = *lit.first()?;
    let mut from = 0;
    loop {
        let at = from + memchr::memchr(first, &bytes[from..])?;
        from = at + 1;
        if !bytes[at..].starts_with(lit) {
            continue;
        }
        if escape == Escape::Json
            && bytes[..at]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count()
                % 2
                == 1
        {
            continue;
        }
        return Some(at);
    }
}

/// At most 40 characters of `text`, for a message.
fn clip(text: &str) -> &str {
    text.char_indices()
        .nth(40)
        .map_or(text, |(i, _)| &text[..i])
}

/// A JSON `log_format`: one object per line, keys named like the variables.
#[derive(Default)]
pub struct NginxJson {
    stamps: StampCache,
}

impl LineFormat for NginxJson {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        // Typed, borrowed fields, as for JSON Lines: other keys are skipped unparsed.
        let j: JsonLine<'_> = serde_json::from_str(line).map_err(|e| {
            let field = if e.is_eof() { last_key(line) } else { None };
            (field, format!("not a JSON log line: {}", json_error(&e)))
        })?;
        let msec = text(j.msec, "msec")?;
        let iso = text(j.time_iso8601, "time_iso8601")?;
        let local = text(j.time_local, "time_local")?;
        let request_time = text(j.request_time, "request_time")?;
        let remote_addr = text(j.remote_addr, "remote_addr")?;
        let realip = text(j.realip_remote_addr, "realip_remote_addr")?;
        let xff = text(j.http_x_forwarded_for, "http_x_forwarded_for")?;
        let user = text(j.remote_user, "remote_user")?;
        let api_key = text(j.http_x_api_key, "http_x_api_key")?;
        let request = text(j.request, "request")?;
        let method = text(j.request_method, "request_method")?;
        let uri = text(j.uri, "uri")?;
        let request_uri = text(j.request_uri, "request_uri")?;
        let limit = text(j.limit_req_status, "limit_req_status")?;
        let status = text(j.status, "status")?;
        let cost = text(j.cost, "cost")?;
        let actual_cost = text(j.actual_cost, "actual_cost")?;
        let values = Values {
            msec: msec.as_str(),
            iso: iso.as_str(),
            local: local.as_str(),
            request_time: request_time.as_str(),
            remote_addr: remote_addr.as_str(),
            realip_remote_addr: realip.as_str(),
            forwarded_for: xff.as_str(),
            remote_user: user.as_str(),
            api_key: api_key.as_str(),
            request: request.as_str(),
            request_method: method.as_str(),
            uri: uri.as_str(),
            request_uri: request_uri.as_str(),
            status: status.as_str(),
            limit_req_status: limit.as_str(),
            cost: cost.as_str(),
            actual_cost: actual_cost.as_str(),
        };
        // The JSON parser has undone `escape=json` already.
        values.fill(rec, Escape::None, &mut self.stamps)
    }
}

/// The keys [`JsonLine`] reads.
const KEYS: [&str; 17] = [
    "msec",
    "time_iso8601",
    "time_local",
    "request_time",
    "remote_addr",
    "realip_remote_addr",
    "http_x_forwarded_for",
    "remote_user",
    "http_x_api_key",
    "request",
    "request_method",
    "uri",
    "request_uri",
    "status",
    "limit_req_status",
    "cost",
    "actual_cost",
];

/// The last key of a line cut short (the field it ends in), when it is one of [`KEYS`].
fn last_key(line: &str) -> Option<&'static str> {
    let at = line.rfind("\":")?;
    let name = &line[line[..at].rfind('"')? + 1..at];
    KEYS.iter().copied().find(|k| *k == name)
}

/// The keys of a JSON `log_format` line that make a record.
#[derive(serde::Deserialize)]
struct JsonLine<'a> {
    #[serde(borrow)]
    msec: Option<Scalar<'a>>,
    #[serde(borrow)]
    time_iso8601: Option<Scalar<'a>>,
    #[serde(borrow)]
    time_local: Option<Scalar<'a>>,
    #[serde(borrow)]
    request_time: Option<Scalar<'a>>,
    #[serde(borrow)]
    remote_addr: Option<Scalar<'a>>,
    #[serde(borrow)]
    realip_remote_addr: Option<Scalar<'a>>,
    #[serde(borrow)]
    http_x_forwarded_for: Option<Scalar<'a>>,
    #[serde(borrow)]
    remote_user: Option<Scalar<'a>>,
    #[serde(borrow)]
    http_x_api_key: Option<Scalar<'a>>,
    #[serde(borrow)]
    request: Option<Scalar<'a>>,
    #[serde(borrow)]
    request_method: Option<Scalar<'a>>,
    #[serde(borrow)]
    uri: Option<Scalar<'a>>,
    #[serde(borrow)]
    request_uri: Option<Scalar<'a>>,
    #[serde(borrow)]
    status: Option<Scalar<'a>>,
    #[serde(borrow)]
    limit_req_status: Option<Scalar<'a>>,
    #[serde(borrow)]
    cost: Option<Scalar<'a>>,
    #[serde(borrow)]
    actual_cost: Option<Scalar<'a>>,
}

/// A JSON value as nginx logs one: a string (`"$msec"`), a number (`$msec` unquoted), or null.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Scalar<'a> {
    Int(u64),
    Float(f64),
    #[serde(borrow)]
    Str(Cow<'a, str>),
    Null(()),
    Other(serde::de::IgnoredAny),
}

/// The text of a key's value (empty when absent), or the malformed line naming the key.
fn text<'a>(
    v: Option<Scalar<'a>>,
    field: &'static str,
) -> std::result::Result<Text<'a>, LineError> {
    match v {
        None => Ok(Text::Str(Cow::Borrowed(""))),
        Some(s) => s.text().map_err(|m| (Some(field), m)),
    }
}

/// A scalar's text: the string, or a number's digits written on the stack.
enum Text<'a> {
    Str(Cow<'a, str>),
    Number([u8; 32], usize),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Str(s) => s,
            Text::Number(buf, len) => std::str::from_utf8(&buf[..*len]).unwrap_or(""),
        }
    }
}

/// Digits a number of this many significant digits or fewer is read back exactly from an
/// `f64` (its shortest round-trip form is the number as written: `f64::DIGITS`).
const EXACT_DIGITS: usize = f64::DIGITS as usize;

impl<'a> Scalar<'a> {
    fn text(self) -> std::result::Result<Text<'a>, String> {
        use std::io::Write;
        let mut buf = [0u8; 32];
        let mut w = &mut buf[..];
        match self {
            Scalar::Str(t) => return Ok(Text::Str(t)),
            Scalar::Null(()) => return Ok(Text::Str(Cow::Borrowed(""))),
            Scalar::Other(_) => return Err("not a string or a number".into()),
            Scalar::Int(n) => write!(w, "{n}").map_err(|_| "too long".to_string())?,
            Scalar::Float(f) if f < 0.0 => return Err(format!("`{f}` is negative")),
            // An unquoted `$msec` or `$request_time`: serde parses it into an f64, whose
            // shortest round-trip form is the number as logged when it has at most 15
            // significant digits (nginx's `1733112345.123` has 13); more could be another.
            Scalar::Float(f) => {
                write!(w, "{f}").map_err(|_| format!("`{f:e}` is too large"))?;
            }
        }
        let len = 32 - w.len();
        let digits = buf[..len]
            .iter()
            .filter(|b| b.is_ascii_digit())
            .skip_while(|&&b| b == b'0')
            .count();
        if buf[..len].contains(&b'.') && digits > EXACT_DIGITS {
            return Err(format!(
                "the unquoted number `{}` has more than {EXACT_DIGITS} significant digits, too many to read exactly: quote it in the log_format",
                String::from_utf8_lossy(&buf[..len])
            ));
        }
        Ok(Text::Number(buf, len))
    }
}

/// The text reader of `log_format` `template`; a template whose only time is one-second is read
/// a second at a time ([`placed`]).
pub fn text_reader(
    path: &Path,
    input: Box<dyn BufRead + Send>,
    template: Template,
    place: Placement,
) -> Box<dyn RecordReader> {
    let seconds = template.seconds_only();
    let lines = Lines::new(
        path,
        input,
        NginxText {
            template,
            stamps: StampCache::default(),
        },
    );
    placed(lines, seconds, place)
}

/// Lines looked at for the time a JSON log records.
const LOOK: usize = 5;

/// The JSON reader: a log whose first record has no `msec`, only `time_iso8601` or
/// `time_local`, is read a second at a time ([`placed`]) (one `log_format` writes every line).
pub fn json_reader(
    path: &Path,
    data: &TraceData,
    input: Box<dyn BufRead + Send>,
    place: Placement,
) -> Result<Box<dyn RecordReader>> {
    let lines = Lines::new(path, input, NginxJson::default());
    Ok(placed(lines, json_seconds_only(path, data)?, place))
}

/// Whether the first JSON record among the first lines has a one-second time and no `msec`.
fn json_seconds_only(path: &Path, data: &TraceData) -> Result<bool> {
    let mut head = input::open(path, data)?;
    let mut buf = Vec::new();
    for _ in 0..LOOK {
        buf.clear();
        if input::read_line_capped(&mut *head, &mut buf, super::MAX_LINE)
            .map_err(|e| Error::io(path, e))?
            == 0
        {
            break;
        }
        let Ok(line) = serde_json::from_slice::<JsonLine<'_>>(&buf) else {
            continue;
        };
        let set = |v: &Option<Scalar<'_>>| match v {
            Some(Scalar::Str(s)) => present(s).is_some(),
            Some(Scalar::Int(_) | Scalar::Float(_)) => true,
            _ => false,
        };
        return Ok(!set(&line.msec) && (set(&line.time_iso8601) || set(&line.time_local)));
    }
    Ok(false)
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

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{Production, ReplayOptions, TraceFormat};
    use super::*;
    use crate::traffic::method::Method;

    /// 2026-11-29T12:00:00Z.
    const B: u64 = 1_795_953_600 * NANOS_PER_SEC;
    const MS: u64 = 1_000_000;

    /// A record as the reader must give it.
    #[allow(clippy::too_many_arguments)]
    fn rec(
        line: u64,
        epoch_ns: u64,
        [ip, user, api_key, endpoint]: [&str; 4],
        method: Option<Method>,
        status: Option<u16>,
        production: Option<Production>,
        forwarded_for: &str,
    ) -> Record {
        Record {
            epoch_ns,
            fields: [ip, user, api_key, endpoint].map(String::from),
            source: String::new(),
            role: None,
            status,
            production,
            method,
            forwarded_for: forwarded_for.into(),
            cost: None,
            actual_cost: None,
            tokens: [None; 4],
            stream: 0,
            line,
        }
    }

    fn read(options: &ReplayOptions, text: &str) -> Vec<Record> {
        outcomes_in_every_form(options, text)
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    fn options(format: TraceFormat, log_format: Option<&str>) -> ReplayOptions {
        ReplayOptions {
            format,
            log_format: log_format.map(|t| Template::parse(t).unwrap()),
            ..ReplayOptions::default()
        }
    }

    /// A log in nginx's default template: see [`reads_the_default_text_template`].
    const DEFAULT_LINES: &str = concat!(
        "192.0.2.10 - alice [29/Nov/2026:12:00:00 +0000] \"POST /api/items?page=2 HTTP/1.1\" 200 512 \"-\" \"curl/8.5.0\" 1795953600.123 0.004 PASSED\n",
        "2001:db8::7 - - [29/Nov/2026:12:00:00 +0000] \"GET /search/\\x22quoted\\x22%20x\\x5C?q=\\x22 HTTP/1.1\" 503 197 \"-\" \"Mozilla/5.0 (X11; Linux)\" 1795953600.250 0.000 REJECTED\n",
        "192.0.2.11 - - [29/Nov/2026:12:00:01 +0000] \"PUT /cart HTTP/1.1\" 200 512 \"-\" \"curl/8.5.0\" 1795953601.700 0.500 DELAYED\n",
        "192.0.2.12 - - [29/Nov/2026:12:00:01 +0000] \"DELETE /cart/7 HTTP/2.0\" 204 0 \"-\" \"curl/8.5.0\" 1795953601.300 0.001 DELAYED_DRY_RUN\n",
        "192.0.2.12 - - [29/Nov/2026:12:00:01 +0000] \"PATCH /cart/7 HTTP/2.0\" 200 5 \"-\" \"curl/8.5.0\" 1795953601.400 0.000 REJECTED_DRY_RUN\n",
        "192.0.2.13 - - [29/Nov/2026:12:00:02 +0000] \"GET /slow HTTP/1.1\" 499 0 \"-\" \"curl/8.5.0\" 1795953602.000 1.250 PASSED\n",
        "192.0.2.14 - - [29/Nov/2026:12:00:02 +0000] \"GET /drop HTTP/1.1\" 444 0 \"-\" \"curl/8.5.0\" 1795953602.010 0.000 -\n",
        "192.0.2.15 - - [29/Nov/2026:12:00:02 +0000] \"GET /gone HTTP/1.1\" 000 0 \"-\" \"curl/8.5.0\" 1795953602.020 0.020 PASSED\n",
        "192.0.2.16 - - [29/Nov/2026:12:00:02 +0000] \"GET /admin HTTP/1.1\" 403 153 \"-\" \"curl/8.5.0\" 1795953602.030 0.001 -\n",
        "192.0.2.17 - - [29/Nov/2026:12:00:03 +0000] \"HEAD / HTTP/1.1\" 200 0 \"-\" \"curl/8.5.0\" 1795953603 0.000 PASSED\n",
    );

    /// The default template (`combined` then `$msec $request_time $limit_req_status`): every
    /// `$limit_req_status`, statuses 499, 444 and 000, IPv6, `\xXX` escapes in the path
    /// undone (percent-encoding kept), the method from `$request`, an integer `$msec`.
    #[test]
    fn reads_the_default_text_template() {
        use Production::*;
        assert_eq!(
            read(&options(TraceFormat::Nginx, None), DEFAULT_LINES),
            [
                rec(
                    1,
                    B + 119 * MS,
                    ["192.0.2.10", "alice", "", "/api/items"],
                    Some(Method::Post),
                    Some(200),
                    Some(Admitted),
                    ""
                ),
                rec(
                    2,
                    B + 250 * MS,
                    ["2001:db8::7", "", "", "/search/\"quoted\"%20x\\"],
                    Some(Method::Get),
                    Some(503),
                    Some(Refused),
                    ""
                ),
                rec(
                    3,
                    B + 1200 * MS,
                    ["192.0.2.11", "", "", "/cart"],
                    Some(Method::Put),
                    Some(200),
                    Some(Delayed),
                    ""
                ),
                rec(
                    4,
                    B + 1299 * MS,
                    ["192.0.2.12", "", "", "/cart/7"],
                    Some(Method::Delete),
                    Some(204),
                    Some(WouldDelay),
                    ""
                ),
                rec(
                    5,
                    B + 1400 * MS,
                    ["192.0.2.12", "", "", "/cart/7"],
                    Some(Method::Patch),
                    Some(200),
                    Some(WouldRefuse),
                    ""
                ),
                rec(
                    6,
                    B + 750 * MS,
                    ["192.0.2.13", "", "", "/slow"],
                    Some(Method::Get),
                    Some(499),
                    Some(Admitted),
                    ""
                ),
                rec(
                    7,
                    B + 2010 * MS,
                    ["192.0.2.14", "", "", "/drop"],
                    Some(Method::Get),
                    Some(444),
                    None,
                    ""
                ),
                rec(
                    8,
                    B + 2000 * MS,
                    ["192.0.2.15", "", "", "/gone"],
                    Some(Method::Get),
                    Some(0),
                    Some(Admitted),
                    ""
                ),
                rec(
                    9,
                    B + 2029 * MS,
                    ["192.0.2.16", "", "", "/admin"],
                    Some(Method::Get),
                    Some(403),
                    None,
                    ""
                ),
                rec(
                    10,
                    B + 3000 * MS,
                    ["192.0.2.17", "", "", "/"],
                    Some(Method::Head),
                    Some(200),
                    Some(Admitted),
                    ""
                ),
            ]
        );
    }

    /// A custom template with `$request_method`, `$uri`, `$http_x_forwarded_for` and
    /// `$time_iso8601` as its only time: one-second resolution, so the requests of a second are
    /// spread over it (`same_second`'s default); the request time moves a request to an
    /// earlier second only when it is over half a second.
    #[test]
    fn reads_a_custom_template_with_a_one_second_time() {
        let template = "escape=default $time_iso8601 $remote_addr $request_method \"$uri\" $status \"$http_x_forwarded_for\" $http_x_api_key $request_time $limit_req_status";
        let text = concat!(
            "2026-11-29T12:00:00+00:00 10.0.0.1 GET \"/a\\x5Cb\" 200 \"203.0.113.9, 10.0.0.1\" key1 0.004 PASSED\n",
            "2026-11-29T12:00:00+00:00 - POST \"/login\" 429 \"198.51.100.2\" - 0.000 REJECTED\n",
            "2026-11-29T12:00:03+00:00 10.0.0.3 HEAD \"/b\" 000 \"-\" - 1.200 -\n",
            "2026-11-29T12:00:02+00:00 10.0.0.4 OPTIONS \"/c\" 200 \"-\" - 0.000 DELAYED\n",
            "2026-11-29T14:00:04+02:00 10.0.0.5 BREW \"/pot\" 418 \"-\" - 0.000 PASSED\n",
        );
        use Production::*;
        assert_eq!(
            read(&options(TraceFormat::Nginx, Some(template)), text),
            [
                rec(
                    1,
                    B,
                    ["10.0.0.1", "", "key1", "/a\\b"],
                    Some(Method::Get),
                    Some(200),
                    Some(Admitted),
                    "203.0.113.9, 10.0.0.1"
                ),
                rec(
                    2,
                    B + 500 * MS,
                    ["198.51.100.2", "", "", "/login"],
                    Some(Method::Post),
                    Some(429),
                    Some(Refused),
                    "198.51.100.2"
                ),
                rec(
                    3,
                    B + 2000 * MS,
                    ["10.0.0.3", "", "", "/b"],
                    Some(Method::Head),
                    Some(0),
                    None,
                    ""
                ),
                rec(
                    4,
                    B + 2500 * MS,
                    ["10.0.0.4", "", "", "/c"],
                    Some(Method::Options),
                    Some(200),
                    Some(Delayed),
                    ""
                ),
                rec(
                    5,
                    B + 4000 * MS,
                    ["10.0.0.5", "", "", "/pot"],
                    None,
                    Some(418),
                    Some(Admitted),
                    ""
                ),
            ]
        );
    }

    /// An nginx `escape=json` log: see [`reads_json_escaped_lines`].
    const JSON_LINES: &str = concat!(
        r#"{"msec":"1795953600.123","request_time":"0.004","remote_addr":"2001:db8::7","request":"POST /api/items?page=2 HTTP/1.1","request_uri":"/api/items?page=2","status":"200","http_x_forwarded_for":"","limit_req_status":"PASSED"}"#,
        "\n",
        r#"{"msec":"1795953600.250","request_time":"0.000","remote_addr":"192.0.2.10","request":"GET /s/\"q\"\\x\u001f%20?a=\"b\" HTTP/1.1","request_uri":"/s/\"q\"\\x\u001f%20?a=\"b\"","status":"503","http_x_forwarded_for":"203.0.113.9, 10.0.0.1","limit_req_status":"REJECTED"}"#,
        "\n",
        r#"{"msec":"1795953601.700","request_time":"0.500","remote_addr":"192.0.2.11","request":"PUT /cart HTTP/1.1","request_uri":"/cart","status":"200","http_x_forwarded_for":"","limit_req_status":"DELAYED"}"#,
        "\n",
        r#"{"msec":"1795953601.300","request_time":"0.001","remote_addr":"192.0.2.12","request":"DELETE /cart/7 HTTP/2.0","request_uri":"/cart/7","status":"204","http_x_forwarded_for":"","limit_req_status":"DELAYED_DRY_RUN"}"#,
        "\n",
        r#"{"msec":"1795953601.400","request_time":"0.000","remote_addr":"192.0.2.12","request":"PATCH /cart/7 HTTP/2.0","request_uri":"/cart/7","status":"200","http_x_forwarded_for":"","limit_req_status":"REJECTED_DRY_RUN"}"#,
        "\n",
        r#"{"msec":1795953602.5,"request_time":0.25,"remote_addr":"192.0.2.13","request":"GET /slow HTTP/1.1","request_uri":"/slow","status":"499","http_x_forwarded_for":"","limit_req_status":""}"#,
        "\n",
        r#"{"msec":"1795953602.020","request_time":"0.020","remote_addr":"192.0.2.15","request":"GET /gone HTTP/1.1","request_uri":"/gone","status":"000","http_x_forwarded_for":"","limit_req_status":"PASSED"}"#,
        "\n",
        r#"{"msec":"1795953602.030","request_time":"0.001","remote_addr":"","realip_remote_addr":"10.1.1.1","request":"GET /admin HTTP/1.1","request_uri":"/admin","status":403,"http_x_forwarded_for":"","limit_req_status":""}"#,
        "\n",
        r#"{"msec":"1795953603","request_time":"0.000","remote_addr":"192.0.2.17","request_method":"HEAD","request":"-","request_uri":"/","status":"200","http_x_forwarded_for":"","limit_req_status":"PASSED"}"#,
        "\n",
    );

    /// A JSON `log_format ... escape=json` (not-found variables are empty): every
    /// `$limit_req_status`, statuses 499 and 000 and a 403 that is not the limiter's, JSON
    /// escapes undone, unquoted numbers, `$realip_remote_addr` when nothing else names the
    /// client, an integer `$msec`.
    /// `$cost` and `$actual_cost`, variables a configuration defines to log a query's cost,
    /// are the trace's `cost` and `actual_cost`, in a text template and as JSON keys (strings
    /// or numbers); `-` or an empty value is none.
    #[test]
    fn reads_a_cost_and_an_actual_cost_the_configuration_logs() {
        let template = "$msec $remote_addr \"$request\" $status $cost $actual_cost";
        let text = concat!(
            "1795953600.000 10.0.0.1 \"POST /graphql HTTP/1.1\" 200 150 30\n",
            "1795953600.500 10.0.0.1 \"POST /graphql HTTP/1.1\" 200 12 -\n",
            "1795953601.000 10.0.0.2 \"GET /health HTTP/1.1\" 200 - -\n",
        );
        let json = concat!(
            r#"{"msec": "1795953600.000", "remote_addr": "10.0.0.1", "request": "POST /graphql HTTP/1.1", "status": 200, "cost": 150, "actual_cost": "30"}"#,
            "\n",
            r#"{"msec": "1795953600.500", "remote_addr": "10.0.0.1", "request": "POST /graphql HTTP/1.1", "status": 200, "cost": "12", "actual_cost": ""}"#,
            "\n",
            r#"{"msec": "1795953601.000", "remote_addr": "10.0.0.2", "request": "GET /health HTTP/1.1", "status": 200}"#,
            "\n",
        );
        let costs = |records: Vec<Record>| {
            records
                .iter()
                .map(|r| (r.cost, r.actual_cost))
                .collect::<Vec<_>>()
        };
        let want = [(Some(150), Some(30)), (Some(12), None), (None, None)];
        let text_options = options(TraceFormat::Nginx, Some(template));
        assert_eq!(costs(read(&text_options, text)), want);
        assert_eq!(
            costs(read(&options(TraceFormat::NginxJson, None), json)),
            want
        );
        let line = |cost: &str, actual: &str| {
            format!(
                r#"{{"msec": "1795953600.000", "remote_addr": "10.0.0.1", "cost": {cost}, "actual_cost": {actual}}}"#
            )
        };
        let bad = [line("0", "0"), line("\"many\"", "1"), line("5", "-1")];
        let cases: Vec<(&str, Option<&str>)> = vec![
            (bad[0].as_str(), Some("cost")),
            (bad[1].as_str(), Some("cost")),
            (bad[2].as_str(), Some("actual_cost")),
        ];
        assert_eq!(bad_lines(TraceFormat::NginxJson, "", &cases), 3);
    }

    #[test]
    fn reads_json_escaped_lines() {
        use Production::*;
        assert_eq!(
            read(&options(TraceFormat::NginxJson, None), JSON_LINES),
            [
                rec(
                    1,
                    B + 119 * MS,
                    ["2001:db8::7", "", "", "/api/items"],
                    Some(Method::Post),
                    Some(200),
                    Some(Admitted),
                    ""
                ),
                rec(
                    2,
                    B + 250 * MS,
                    ["192.0.2.10", "", "", "/s/\"q\"\\x\u{1f}%20"],
                    Some(Method::Get),
                    Some(503),
                    Some(Refused),
                    "203.0.113.9, 10.0.0.1"
                ),
                rec(
                    3,
                    B + 1200 * MS,
                    ["192.0.2.11", "", "", "/cart"],
                    Some(Method::Put),
                    Some(200),
                    Some(Delayed),
                    ""
                ),
                rec(
                    4,
                    B + 1299 * MS,
                    ["192.0.2.12", "", "", "/cart/7"],
                    Some(Method::Delete),
                    Some(204),
                    Some(WouldDelay),
                    ""
                ),
                rec(
                    5,
                    B + 1400 * MS,
                    ["192.0.2.12", "", "", "/cart/7"],
                    Some(Method::Patch),
                    Some(200),
                    Some(WouldRefuse),
                    ""
                ),
                rec(
                    6,
                    B + 2250 * MS,
                    ["192.0.2.13", "", "", "/slow"],
                    Some(Method::Get),
                    Some(499),
                    None,
                    ""
                ),
                rec(
                    7,
                    B + 2000 * MS,
                    ["192.0.2.15", "", "", "/gone"],
                    Some(Method::Get),
                    Some(0),
                    Some(Admitted),
                    ""
                ),
                rec(
                    8,
                    B + 2029 * MS,
                    ["10.1.1.1", "", "", "/admin"],
                    Some(Method::Get),
                    Some(403),
                    None,
                    ""
                ),
                rec(
                    9,
                    B + 3000 * MS,
                    ["192.0.2.17", "", "", "/"],
                    Some(Method::Head),
                    Some(200),
                    Some(Admitted),
                    ""
                ),
            ]
        );
    }

    /// `escape=none` undoes nothing; `escape=json` in a text template undoes JSON's escapes
    /// and a `\"` does not end a quoted value.
    #[test]
    fn escapes_undone_as_the_log_format_declares() {
        let mut out = String::new();
        unescape(&mut out, r"/a\x22\x5Cb\xC3\xA9\xFF\x2", Escape::Default);
        assert_eq!(out, "/a\"\\bé\u{fffd}\\x2");
        out.clear();
        unescape(&mut out, r"/a\x22\u001f", Escape::None);
        assert_eq!(out, r"/a\x22\u001f");
        out.clear();
        unescape(&mut out, r#"/a\"\\\n\u001f\u0041\q"#, Escape::Json);
        assert_eq!(out, "/a\"\\\n\u{1f}A\\q");
        let template = "escape=json $msec \"$uri\" $status";
        let line = "1795953600.5 \"/q\\\"x\\\" y\" 200\n";
        let r = read(&options(TraceFormat::Nginx, Some(template)), line);
        assert_eq!(
            r,
            [rec(
                1,
                B + 500 * MS,
                ["", "", "", "/q\"x\" y"],
                None,
                Some(200),
                None,
                ""
            )]
        );
        let e = Template::parse("escape=html $msec").unwrap_err();
        assert!(e.contains("unknown log format escaping `html`"), "{e}");
    }

    /// Malformed lines of both forms, refused naming the file, line and field: a missing
    /// field, a truncated line, a value of the wrong type, an out-of-range number, a `$msec`
    /// finer than nanoseconds, an unknown decision.
    #[test]
    fn malformed_lines_name_their_field() {
        let good = "192.0.2.10 - - [29/Nov/2026:12:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"curl\" 1795953600.123 0.004 PASSED";
        let text = bad_lines(
            TraceFormat::Nginx,
            "",
            &[
                (
                    &good.replace(" 0.004 PASSED", " 0.004"),
                    Some("limit_req_status"),
                ),
                (
                    "192.0.2.10 - - [29/Nov/2026:12:00:00 +0000] \"GET /a HT",
                    Some("status"),
                ),
                (&good.replace(" 200 ", " abc "), Some("status")),
                (&good.replace(" 200 ", " 999 "), Some("status")),
                (
                    &good.replace("1795953600.123", "99999999999.000"),
                    Some("msec"),
                ),
                (
                    &good.replace("1795953600.123", "1795953600.1234567891"),
                    Some("msec"),
                ),
                (&good.replace("PASSED", "LIMITED"), Some("limit_req_status")),
                (
                    &good.replace(" 0.004 ", " 1795953601.000 "),
                    Some("request_time"),
                ),
                (&good.replace("\" 200 5", "\"  5"), Some("status")),
            ],
        );
        let good = r#"{"msec":"1795953600.123","request_time":"0.004","remote_addr":"192.0.2.10","request":"GET /a HTTP/1.1","status":"200","limit_req_status":"PASSED"}"#;
        let json = bad_lines(
            TraceFormat::NginxJson,
            "",
            &[
                (
                    &good.replace(r#""msec":"1795953600.123","#, ""),
                    Some("msec"),
                ),
                (&good[..good.len() - 30], Some("status")),
                (&good[..good.len() - 3], Some("limit_req_status")),
                (&good.replace(r#""200""#, r#""abc""#), Some("status")),
                (&good.replace(r#""200""#, "true"), Some("status")),
                (&good.replace(r#""200""#, "999"), Some("status")),
                (&good.replace(r#""1795953600.123""#, "1e30"), Some("msec")),
                (
                    &good.replace("1795953600.123", "1795953600.1234567891"),
                    Some("msec"),
                ),
                (
                    &good.replace(r#""1795953600.123""#, "1795953600.1234567"),
                    Some("msec"),
                ),
                (&good.replace("PASSED", "LIMITED"), Some("limit_req_status")),
            ],
        );
        assert_eq!((text, json), (9, 10));
    }
}
