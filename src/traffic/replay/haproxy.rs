//! HAProxy access logs: `option httplog` and a custom `log-format` the source declares
//! (`log_format`, the same string as HAProxy's directive), with or without the syslog header
//! HAProxy writes before each line (`log stdout format raw` writes none).
//!
//! HAProxy's documentation, configuration.txt (<https://docs.haproxy.org/2.6/configuration.html>):
//! 8.2.3 "HTTP log format" (httplog is `%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC
//! %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r`), 8.2.6 "Custom log format" (items,
//! flags, the alias table), 8.4 "Timing events", 8.5 "Stream state at disconnection" and 8.6
//! "Non-printable characters" (`#XX`). Read: the time (below), `%ci` (`ip`), `%ST` (`status`,
//! `-1`: no response), `%ts`/`%tsc` (the decision, below), `%r`, `%HM`, `%HP`, `%HPO`, `%HU`
//! (`method`, `endpoint`), `%hr` with its captures named (`%{X-Forwarded-For|Host}hr`), and
//! samples written as the fetch they hold: `%[date(0,ms)]` (also `s`, `us`), `%[src]`,
//! `%[req.hdr(X-Forwarded-For)]`, `%[req.hdr(X-API-Key)]`. Any other item is read and ignored.
//!
//! The time: a log-format item evaluates when the log is written, at the stream's end, so the
//! instant the `http-request` rules ran is logged exactly only by a variable set then
//! (`http-request set-var(txn.t) date(0,ms)` before the deny, logged `%[var(txn.t)]`), which the
//! source's `log_format` writes as `%[date(0,ms)]`. Otherwise it is derived from HAProxy's dates:
//! `%tr` (the request's first byte, ms) plus `%TR` (until its headers were complete, when the
//! rules run), or the accept date (`%Ts`+`%ms`, `%t`) plus `%Tq` (or `%Th`+`%Ti`+`%TR`): each a
//! millisecond truncated, so not exact (the run says so). `%t`/`%tr` are local time without a
//! zone, read as UTC. A date of one-second resolution (`%T`, `%Tl`, `%trg`, `%trl`, `%Ts` alone)
//! has its second's requests placed by `same_second`.
//!
//! The decision: the log names no rule. `%ts` starting `PR`/`PT` (the proxy blocked the request
//! while reading it: `http-request deny`, `tarpit`) or `LR` (answered it itself: `http-request
//! return`) leaves the status to be judged by the contender's refusal status; any other state
//! (the request went on, or ended otherwise) is admitted by the proxy's rules, whatever status a
//! server answered. Without `%ts` the status alone is judged, as for any status-only log.

use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::seconds::{Placement, placed};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use crate::time::{NANOS_PER_MICRO, NANOS_PER_MILLI, NANOS_PER_SEC};
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

pub(super) const FORMAT: Format = Format {
    name: "haproxy",
    aliases: &[],
    title: "a HAProxy log",
    fields: &[KeyField::Ip, KeyField::ApiKey, KeyField::Endpoint],
    // By its `log-format` (`ReplayOptions::seconds_only`).
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 30,
        shows: |head| head.text().is_some_and(is_httplog),
    },
    open: |path, input, _, options| {
        Ok(reader(
            path,
            input,
            options.haproxy_template(),
            Placement::of(options),
        ))
    },
};

/// `option httplog`'s format (configuration.txt 8.2.3), read when the source names none.
pub const HTTPLOG: &str = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc \
     %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r";

/// The items a record is made of; every other item is read and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// `%[date(0,<unit>)]`: the declared decision time, in units of this many ns.
    Date(u64),
    /// `%Ts`: the accept date, epoch seconds.
    Ts,
    /// `%ms`: the accept date's milliseconds.
    Ms,
    /// `%t`: the accept date, local, ms.
    AcceptDate,
    /// `%tr`: the request date, local, ms.
    RequestDate,
    /// `%T`, `%Tl`: the accept date with its zone, seconds.
    AcceptZoned,
    /// `%trg`, `%trl`: the request date with its zone, seconds.
    RequestZoned,
    Th,
    Ti,
    TR,
    Tq,
    Client,
    Port,
    Status,
    Termination,
    Request,
    Method,
    /// `%HP`: the URI without its query (absolute for some requests).
    Path,
    /// `%HPO`: the path alone.
    PathOnly,
    /// `%HU`: the URI with its query.
    Uri,
    /// `%hr`: `{a|b}`, the captured request headers (absent without captures).
    Captures,
    /// `%hs`, `%hrl`'s kin: brace-delimited, absent without captures; not read.
    OtherCaptures,
    Xff,
    ApiKey,
    Other,
}

impl Item {
    /// An alias (`ci` of `%ci`).
    fn alias(name: &str) -> Item {
        match name {
            "Ts" => Item::Ts,
            "ms" => Item::Ms,
            "t" => Item::AcceptDate,
            "tr" => Item::RequestDate,
            "T" | "Tl" => Item::AcceptZoned,
            "trg" | "trl" => Item::RequestZoned,
            "Th" => Item::Th,
            "Ti" => Item::Ti,
            "TR" => Item::TR,
            "Tq" => Item::Tq,
            "ci" => Item::Client,
            "cp" => Item::Port,
            "ST" => Item::Status,
            "ts" | "tsc" => Item::Termination,
            "r" => Item::Request,
            "HM" => Item::Method,
            "HP" => Item::Path,
            "HPO" => Item::PathOnly,
            "HU" => Item::Uri,
            "hr" => Item::Captures,
            "hs" => Item::OtherCaptures,
            _ => Item::Other,
        }
    }

    /// A sample expression (`date(0,ms)` of `%[date(0,ms)]`), by the fetch it holds.
    fn sample(expr: &str) -> std::result::Result<Item, String> {
        let e = expr.replace(' ', "").to_ascii_lowercase();
        Ok(match e.as_str() {
            "date" | "date(0)" | "date(0,s)" => Item::Date(NANOS_PER_SEC),
            "date(0,ms)" => Item::Date(NANOS_PER_MILLI),
            "date(0,us)" => Item::Date(NANOS_PER_MICRO),
            _ if e.starts_with("date(") => {
                return Err(format!(
                    "`%[{expr}]`: only date(0,s), date(0,ms) and date(0,us) are read as the time (an offset would move it)"
                ));
            }
            "src" => Item::Client,
            _ => match header_of(&e) {
                Some("x-forwarded-for") => Item::Xff,
                Some("x-api-key") => Item::ApiKey,
                _ => Item::Other,
            },
        })
    }

    /// The field a malformed value is reported under.
    fn field(self) -> &'static str {
        match self {
            Item::Date(_) => "%[date]",
            Item::Ts => "%Ts",
            Item::Ms => "%ms",
            Item::AcceptDate => "%t",
            Item::RequestDate => "%tr",
            Item::AcceptZoned => "%T",
            Item::RequestZoned => "%trg",
            Item::Th => "%Th",
            Item::Ti => "%Ti",
            Item::TR => "%TR",
            Item::Tq => "%Tq",
            Item::Client => "%ci",
            Item::Port => "%cp",
            Item::Status => "%ST",
            Item::Termination => "%tsc",
            Item::Request => "%r",
            Item::Method => "%HM",
            Item::Path => "%HP",
            Item::PathOnly => "%HPO",
            Item::Uri => "%HU",
            Item::Captures => "%hr",
            Item::OtherCaptures => "%hs",
            Item::Xff => "%[req.hdr(X-Forwarded-For)]",
            Item::ApiKey => "%[req.hdr(X-API-Key)]",
            Item::Other => "line",
        }
    }

    /// Whether the value is read unescaped (the strings a record keeps).
    fn unescaped(self) -> bool {
        matches!(
            self,
            Item::Request | Item::Path | Item::PathOnly | Item::Uri | Item::Xff | Item::ApiKey
        )
    }

    /// Whether HAProxy writes the value with `#XX` escapes (8.6: the request and headers).
    fn hash_escaped(self) -> bool {
        matches!(
            self,
            Item::Request
                | Item::Path
                | Item::PathOnly
                | Item::Uri
                | Item::Captures
                | Item::OtherCaptures
        )
    }
}

/// The header a `req.hdr(<name>)` (`hdr`, `req.fhdr`) fetch reads, lowercase.
fn header_of(expr: &str) -> Option<&str> {
    let args = ["req.hdr(", "req.fhdr(", "hdr("]
        .iter()
        .find_map(|p| expr.strip_prefix(p))?;
    let args = args.strip_suffix(')')?;
    Some(args.split(',').next().unwrap_or(args))
}

/// One piece of a log-format.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    /// Blanks: HAProxy writes one space, unless the last thing written was one.
    Separator,
    Item {
        item: Item,
        /// `+Q`: a string is written in double quotes.
        quoted: bool,
        /// `+E`: `"`, `\` and `]` are written after a `\`.
        escaped: bool,
    },
}

/// Where a record's time comes from (the best the log-format has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeFrom {
    /// A declared `%[date(...)]`: the instant the rules ran.
    Sample,
    /// `%tr` plus `%TR` when logged.
    RequestDate,
    /// The accept date (`%Ts`+`%ms`, else `%t`) plus `%Tq` (or `%Th`+`%Ti`+`%TR`) when logged.
    AcceptDate,
    /// A date to the second.
    Seconds,
}

/// What a captured request header is, by its name in `%{...}hr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    Xff,
    ApiKey,
    Other,
}

/// A log-format, parsed (shared: every opening of the trace reads by the same one, and a
/// source's options stay small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(Arc<Parsed>);

#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    pieces: Vec<Piece>,
    captures: Vec<Capture>,
    time: TimeFrom,
}

impl Template {
    /// Parses HAProxy's log-format syntax (configuration.txt 8.2.6): `%alias`, `%[sample]`,
    /// `%{flags}` before either, `%%`, `%o`'s flags applied to the items after it, blanks merged
    /// into one separator and `\` escaping the next character. Refused: two items with nothing
    /// between them (unless the first is self-delimited: quoted, or `%hr`), an unquoted `%r`
    /// before a blank (it has blanks of its own), `+X` on an item read, and a log-format with no
    /// time.
    pub fn parse(text: &str) -> std::result::Result<Template, String> {
        let mut pieces = Vec::new();
        let mut captures = Vec::new();
        let mut literal = String::new();
        let (mut all_quoted, mut all_escaped) = (false, false);
        let mut chars = text.char_indices().peekable();
        let flush = |literal: &mut String, pieces: &mut Vec<Piece>| {
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(literal)));
            }
        };
        while let Some((i, c)) = chars.next() {
            match c {
                ' ' | '\t' => {
                    while chars.next_if(|&(_, c)| c == ' ' || c == '\t').is_some() {}
                    flush(&mut literal, &mut pieces);
                    pieces.push(Piece::Separator);
                }
                '\\' => match chars.next() {
                    Some((_, c)) => literal.push(c),
                    None => return Err(format!("a `\\` ends log-format `{text}`")),
                },
                '%' if chars.next_if(|&(_, c)| c == '%').is_some() => literal.push('%'),
                '%' => {
                    let rest = &text[i + 1..];
                    let (spec, used) = item_spec(rest).map_err(|m| {
                        format!("{m} in log-format `{text}` (at `%{}`)", clip(rest))
                    })?;
                    for _ in 0..rest[..used].chars().count() {
                        chars.next();
                    }
                    if spec.name == Some("o") {
                        all_quoted = spec.flag("Q").unwrap_or(all_quoted);
                        all_escaped = spec.flag("E").unwrap_or(all_escaped);
                        continue;
                    }
                    let item = match spec.name {
                        Some(name) => Item::alias(name),
                        None => Item::sample(spec.expr)?,
                    };
                    if item != Item::Other && spec.flag("X") == Some(true) {
                        return Err(format!(
                            "`%{}`: +X (hexadecimal) is not read; drop it from the log-format",
                            &rest[..used]
                        ));
                    }
                    if item == Item::Captures {
                        captures = captures_named(spec.names);
                    }
                    flush(&mut literal, &mut pieces);
                    if let Some(Piece::Item {
                        item: prev, quoted, ..
                    }) = pieces.last()
                        && !*quoted
                        && !matches!(prev, Item::Captures | Item::OtherCaptures)
                    {
                        return Err(format!(
                            "`%{}` follows another item with nothing between them in log-format `{text}`: the line could not be cut",
                            &rest[..used]
                        ));
                    }
                    pieces.push(Piece::Item {
                        item,
                        quoted: spec.flag("Q").unwrap_or(all_quoted),
                        escaped: spec.flag("E").unwrap_or(all_escaped),
                    });
                }
                c => literal.push(c),
            }
        }
        flush(&mut literal, &mut pieces);
        refuse_unquoted_request(&pieces, text)?;
        let time = time_from(&pieces, text)?;
        Ok(Template(Arc::new(Parsed {
            pieces,
            captures,
            time,
        })))
    }

    /// Whether records are timed at the instant the rules ran (a declared `%[date(...)]`),
    /// rather than from a logged date.
    pub fn exact_time(&self) -> bool {
        self.0.time == TimeFrom::Sample
    }

    /// Whether the times have one-second resolution.
    pub fn seconds_only(&self) -> bool {
        self.0.time == TimeFrom::Seconds
    }

    /// What the times are taken from, for the run's warning.
    pub fn time_source(&self) -> &'static str {
        match self.0.time {
            TimeFrom::Sample => "a declared %[date(...)]",
            TimeFrom::RequestDate => "%tr (plus %TR when logged)",
            TimeFrom::AcceptDate => "the accept date (plus %Tq when logged)",
            TimeFrom::Seconds => "a date to the second",
        }
    }
}

/// An item's text after `%`: optional `(name)`, `{args}`, then an alias or `[expr]`.
struct Spec<'a> {
    /// The alias; `None` for a sample.
    name: Option<&'a str>,
    expr: &'a str,
    /// Arguments: flags (`+Q`, `-E`) and, for `%hr`, the captures' names (`a|b`).
    args: Vec<&'a str>,
    names: &'a str,
}

impl Spec<'_> {
    /// `Some(true)` for `+flag`, `Some(false)` for `-flag`.
    fn flag(&self, flag: &str) -> Option<bool> {
        self.args.iter().rev().find_map(|a| {
            let (sign, f) = a.split_at_checked(1)?;
            (f.eq_ignore_ascii_case(flag)).then_some(sign == "+")
        })
    }
}

/// Parses one item's text (after `%`); the spec and the bytes it used.
fn item_spec(rest: &str) -> std::result::Result<(Spec<'_>, usize), String> {
    let mut at = 0;
    // HAProxy 3's `%(name)` names an item for JSON encoding: not needed here.
    if rest.starts_with('(') {
        at = rest.find(')').ok_or("`%(` without `)`")? + 1;
    }
    let mut args = Vec::new();
    let mut names = "";
    if rest[at..].starts_with('{') {
        let end = at + rest[at..].find('}').ok_or("`%{` without `}`")?;
        for a in rest[at + 1..end].split(',') {
            if a.starts_with(['+', '-']) {
                args.push(a);
            } else {
                names = a;
            }
        }
        at = end + 1;
    }
    if rest[at..].starts_with('[') {
        let mut depth = 0;
        for (k, b) in rest.bytes().enumerate().skip(at) {
            match b {
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        let spec = Spec {
                            name: None,
                            expr: &rest[at + 1..k],
                            args,
                            names,
                        };
                        return Ok((spec, k + 1));
                    }
                }
                _ => {}
            }
        }
        return Err("`%[` without `]`".into());
    }
    let end = rest[at..]
        .find(|c: char| !c.is_ascii_alphanumeric())
        .map_or(rest.len(), |k| at + k);
    if end == at {
        return Err("a `%` with no item name (write `%%` for a `%`)".into());
    }
    let spec = Spec {
        name: Some(&rest[at..end]),
        expr: "",
        args,
        names,
    };
    Ok((spec, end))
}

/// At most 40 characters of `text`, for a message.
fn clip(text: &str) -> &str {
    text.char_indices()
        .nth(40)
        .map_or(text, |(i, _)| &text[..i])
}

/// The values of one logged request, borrowed from the line (unescaped when they had escapes).
#[derive(Default)]
struct Values<'a> {
    date: Option<(&'a str, u64)>,
    ts: Option<&'a str>,
    ms: Option<&'a str>,
    accept: Option<&'a str>,
    request_date: Option<&'a str>,
    zoned: Option<(&'a str, Item)>,
    th: Option<&'a str>,
    ti: Option<&'a str>,
    tr: Option<&'a str>,
    tq: Option<&'a str>,
    client: Option<&'a str>,
    port: Option<&'a str>,
    status: Option<&'a str>,
    termination: Option<&'a str>,
    request: Option<Cow<'a, str>>,
    method: Option<&'a str>,
    path: Option<Cow<'a, str>>,
    path_only: Option<Cow<'a, str>>,
    uri: Option<Cow<'a, str>>,
    captures: Option<&'a str>,
    xff: Option<Cow<'a, str>>,
    api_key: Option<Cow<'a, str>>,
}

impl<'a> Values<'a> {
    fn set(&mut self, item: Item, raw: &'a str, value: Cow<'a, str>) {
        match item {
            Item::Date(unit) => self.date = Some((raw, unit)),
            Item::Ts => self.ts = Some(raw),
            Item::Ms => self.ms = Some(raw),
            Item::AcceptDate => self.accept = Some(raw),
            Item::RequestDate => self.request_date = Some(raw),
            Item::AcceptZoned | Item::RequestZoned => self.zoned = Some((raw, item)),
            Item::Th => self.th = Some(raw),
            Item::Ti => self.ti = Some(raw),
            Item::TR => self.tr = Some(raw),
            Item::Tq => self.tq = Some(raw),
            Item::Client => self.client = Some(raw),
            Item::Port => self.port = Some(raw),
            Item::Status => self.status = Some(raw),
            Item::Termination => self.termination = Some(raw),
            Item::Request => self.request = Some(value),
            Item::Method => self.method = Some(raw),
            Item::Path => self.path = Some(value),
            Item::PathOnly => self.path_only = Some(value),
            Item::Uri => self.uri = Some(value),
            Item::Captures => self.captures = Some(raw),
            Item::Xff => self.xff = Some(value),
            Item::ApiKey => self.api_key = Some(value),
            Item::OtherCaptures | Item::Other => {}
        }
    }
}

/// A value HAProxy logged, unless `-` (an unset string) or empty.
fn present<'b>(v: &'b Option<Cow<'_, str>>) -> Option<&'b str> {
    v.as_deref().filter(|s| !s.is_empty() && *s != "-")
}

/// Undoes `#XX` (8.6) when `hash`, and `+E`'s `\` when `backslash`; borrowed when there is none.
fn unescape(raw: &str, hash: bool, backslash: bool) -> std::result::Result<Cow<'_, str>, String> {
    let has_hash = hash && raw.contains('#');
    let has_backslash = backslash && raw.contains('\\');
    if !has_hash && !has_backslash {
        return Ok(Cow::Borrowed(raw));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' if has_hash => {
                let hex = raw
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        format!("`#` not followed by two hex digits in `{}`", clip(raw))
                    })?;
                out.push(hex);
                i += 3;
            }
            b'\\' if has_backslash && i + 1 < bytes.len() => {
                out.push(bytes[i + 1]);
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| format!("`{}` unescapes to invalid UTF-8", clip(raw)))
}

/// The message after a syslog header: RFC 3164 (`Feb  6 12:14:14 localhost haproxy[14389]: `,
/// after an optional `<PRI>`) or RFC 5424 (`<134>1 TIMESTAMP HOST APP PID MSGID SD `); a line
/// without one as it is.
fn without_syslog_header(line: &str) -> &str {
    let mut s = line;
    let mut pri = false;
    if let Some(r) = s.strip_prefix('<')
        && let Some((n, after)) = r.split_once('>')
        && (1..=3).contains(&n.len())
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        s = after;
        pri = true;
    }
    if pri && let Some(r) = s.strip_prefix("1 ") {
        // TIMESTAMP HOSTNAME APP-NAME PROCID MSGID, then `-` or [structured data].
        let mut r = r;
        for _ in 0..5 {
            r = r.split_once(' ').map_or("", |(_, after)| after);
        }
        return match r.strip_prefix("- ") {
            Some(msg) => msg,
            None => r.find("] ").map_or(r, |k| &r[k + 2..]),
        };
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let b = s.as_bytes();
    if b.len() > 16
        && MONTHS.contains(&&s[..3])
        && b[3] == b' '
        && b[6] == b' '
        && b[9] == b':'
        && b[12] == b':'
        && b[15] == b' '
    {
        // `[host] tag[pid]: `: the message starts after the first `: `.
        if let Some(k) = s[16..].find(": ") {
            return &s[16 + k + 2..];
        }
    }
    s
}

/// Whether a line (after any syslog header) has httplog's shape: `ip:port [dd/Mmm/yyyy:HH:MM:SS.mmm]
/// frontend backend/server TR/Tw/Tc/Tr/Ta`.
pub(super) fn is_httplog(line: &str) -> bool {
    let mut words = without_syslog_header(line).split(' ');
    let (Some(client), Some(date), Some(_), Some(server), Some(timers)) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return false;
    };
    client.rsplit_once(':').is_some_and(|(ip, port)| {
        ip.parse::<std::net::IpAddr>().is_ok() && port.parse::<u16>().is_ok()
    }) && date
        .strip_prefix('[')
        .and_then(|d| d.strip_suffix(']'))
        .is_some_and(|d| local_ms(d).is_ok())
        && server.contains('/')
        && timers.split('/').count() == 5
}

/// `06/Feb/2009:12:14:14.655` (`%tr`, `%t`: local time, no zone; read as UTC) in ns.
fn local_ms(raw: &str) -> std::result::Result<u64, String> {
    let (secs, frac) = raw
        .rsplit_once('.')
        .ok_or_else(|| format!("`{raw}` has no milliseconds (dd/Mmm/yyyy:HH:MM:SS.mmm)"))?;
    if frac.len() != 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{raw}`: HAProxy writes exactly 3 digits of milliseconds"
        ));
    }
    let t = chrono::NaiveDateTime::parse_from_str(secs, "%d/%b/%Y:%H:%M:%S")
        .map_err(|e| format!("`{raw}` is not a date dd/Mmm/yyyy:HH:MM:SS.mmm ({e})"))?;
    let ms: u64 = frac.parse().expect("3 digits");
    epoch_secs(t.and_utc().timestamp(), raw).map(|s| s + ms * NANOS_PER_MILLI)
}

/// `06/Feb/2009:12:14:14 +0000` (`%T`, `%trg`...) in ns.
fn zoned(raw: &str) -> std::result::Result<u64, String> {
    let t = chrono::DateTime::parse_from_str(raw, "%d/%b/%Y:%H:%M:%S %z")
        .map_err(|e| format!("`{raw}` is not a date dd/Mmm/yyyy:HH:MM:SS +zzzz ({e})"))?;
    epoch_secs(t.timestamp(), raw)
}

fn epoch_secs(secs: i64, raw: &str) -> std::result::Result<u64, String> {
    u64::try_from(secs)
        .ok()
        .and_then(|s| s.checked_mul(NANOS_PER_SEC))
        .ok_or_else(|| format!("`{raw}` is outside the supported range (1970 to 2262)"))
}

/// A non-negative integer of at most `max`.
fn number(raw: &str, max: u64, what: &str) -> std::result::Result<u64, String> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{raw}` is not {what}"));
    }
    match raw.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "`{raw}` is out of range for {what} (at most {max})"
        )),
    }
}

/// A timer in ms: `None` for `-1` (the event never happened).
fn timer(raw: Option<&str>, item: Item) -> std::result::Result<Option<u64>, LineError> {
    match raw {
        None | Some("-1") => Ok(None),
        Some(t) => number(
            t.trim_start_matches('+'),
            u32::MAX as u64,
            "a timer in milliseconds",
        )
        .map(|n| Some(n * NANOS_PER_MILLI))
        .map_err(|m| (Some(item.field()), m)),
    }
}

/// The ms from the accept date to the end of the request's headers: `%Tq`, else the sum of the
/// logged `%Th`, `%Ti` and `%TR`.
fn accept_to_rules(v: &Values<'_>) -> std::result::Result<u64, LineError> {
    if let Some(tq) = timer(v.tq, Item::Tq)? {
        return Ok(tq);
    }
    Ok(timer(v.th, Item::Th)?.unwrap_or(0)
        + timer(v.ti, Item::Ti)?.unwrap_or(0)
        + timer(v.tr, Item::TR)?.unwrap_or(0))
}

/// The termination state's first two characters (8.5), checked: the cause and the phase.
fn termination(raw: &str) -> std::result::Result<(u8, u8), String> {
    let b = raw.as_bytes();
    let ok = b.len() >= 2
        && b.len() <= 4
        && b"CSPLRIDUKcs-".contains(&b[0])
        && b"RQCHDLT-".contains(&b[1]);
    if !ok {
        return Err(format!(
            "`{raw}` is not a termination state (two to four characters, like `----` or `PR--`)"
        ));
    }
    Ok((b[0], b[1]))
}

impl Template {
    /// Cuts `line` by the pieces into `values` (HAProxy writes a separator's space only after
    /// something that was not one: an absent `%hr` leaves a single space).
    fn cut<'a>(&self, line: &'a str, v: &mut Values<'a>) -> std::result::Result<(), LineError> {
        let mut rest = line;
        let mut last_space = true;
        // A literal that is not there: the item it introduces is missing or malformed.
        let off = |k: usize, expected: &str, rest: &str| {
            (
                self.field_after(k),
                format!(
                    "the line does not follow the log-format: expected `{expected}` at `{}`",
                    clip(rest)
                ),
            )
        };
        for (k, piece) in self.0.pieces.iter().enumerate() {
            match piece {
                Piece::Separator => {
                    if !last_space {
                        rest = rest.strip_prefix(' ').ok_or_else(|| off(k, " ", rest))?;
                        last_space = true;
                    }
                }
                Piece::Literal(lit) => {
                    rest = rest
                        .strip_prefix(lit.as_str())
                        .ok_or_else(|| off(k, lit, rest))?;
                    last_space = false;
                }
                Piece::Item {
                    item,
                    quoted,
                    escaped,
                } => {
                    let (raw, after) =
                        cut_item(*item, *quoted, *escaped, rest, self.0.pieces.get(k + 1))?;
                    if after.len() < rest.len() {
                        last_space = false;
                    }
                    rest = after;
                    let value = if item.unescaped() {
                        unescape(raw, item.hash_escaped(), *escaped)
                            .map_err(|m| (Some(item.field()), m))?
                    } else {
                        Cow::Borrowed(raw)
                    };
                    v.set(*item, raw, value);
                }
            }
        }
        if !rest.is_empty() {
            return Err((
                self.field_after(self.0.pieces.len()),
                format!("text after the log-format's last item: `{}`", clip(rest)),
            ));
        }
        Ok(())
    }
}

impl Template {
    /// The field of the first item read from piece `k` on, else of the last one before it.
    fn field_after(&self, k: usize) -> Option<&'static str> {
        let field = |p: &Piece| match p {
            Piece::Item { item, .. } if *item != Item::Other => Some(item.field()),
            _ => None,
        };
        self.0.pieces[k.min(self.0.pieces.len())..]
            .iter()
            .find_map(field)
            .or_else(|| {
                self.0.pieces[..k.min(self.0.pieces.len())]
                    .iter()
                    .rev()
                    .find_map(field)
            })
    }
}

/// One item's raw value at the start of `rest` (without its quotes or braces), and what follows.
fn cut_item<'a>(
    item: Item,
    quoted: bool,
    escaped: bool,
    rest: &'a str,
    next: Option<&Piece>,
) -> std::result::Result<(&'a str, &'a str), LineError> {
    let field = Some(item.field());
    // HAProxy quotes strings only (`+Q` leaves numbers bare).
    if quoted && let Some(inner) = rest.strip_prefix('"') {
        let b = inner.as_bytes();
        let mut j = 0;
        while j < b.len() && b[j] != b'"' {
            j += if escaped && b[j] == b'\\' { 2 } else { 1 };
        }
        if j >= b.len() {
            return Err((field, "the quoted value is not closed".to_string()));
        }
        return Ok((&inner[..j], &inner[j + 1..]));
    }
    if matches!(item, Item::Captures | Item::OtherCaptures) {
        // `{...}`, or nothing at all when no header is captured (8.2.3).
        return match rest.strip_prefix('{') {
            Some(inner) => {
                let end = inner
                    .find('}')
                    .ok_or((field, "the captured headers' `{` is not closed".to_string()))?;
                Ok((&inner[..end], &inner[end + 1..]))
            }
            None => Ok(("", rest)),
        };
    }
    let until = match next {
        Some(Piece::Literal(lit)) => lit.as_str(),
        Some(Piece::Separator) => " ",
        _ => return Ok((rest, "")),
    };
    // An IPv6 client has colons of its own: `%ci:%cp` is cut at the address's last colon.
    if item == Item::Client && until.starts_with(':') {
        let run = rest
            .find(|c: char| !(c.is_ascii_hexdigit() || c == ':' || c == '.'))
            .unwrap_or(rest.len());
        if let Some(k) = rest[..run].rfind(':')
            && rest[k..].starts_with(until)
        {
            return Ok((&rest[..k], &rest[k..]));
        }
    }
    let at = rest.find(until).ok_or_else(|| {
        (
            field,
            format!("the line ends before `{until}`, which the log-format expects"),
        )
    })?;
    Ok((&rest[..at], &rest[at..]))
}

/// A logged URI's path as HAProxy's `%HP` cuts it (at `?` only: a `#` logged `#23` is part of
/// it), without the scheme and host of an absolute URI.
fn path_of(uri: &str) -> &str {
    let uri = uri.split('?').next().unwrap_or(uri);
    let path = match uri.find("://") {
        Some(i) => uri[i + 3..].find('/').map_or("", |j| &uri[i + 3 + j..]),
        None => uri,
    };
    if path.is_empty() { "/" } else { path }
}

/// A HAProxy log in a log-format.
pub struct Haproxy {
    template: Template,
}

impl Haproxy {
    fn fill(&self, v: &Values<'_>, rec: &mut Record) -> std::result::Result<(), LineError> {
        rec.epoch_ns = self.time(v)?;
        if let Some(s) = v.status {
            rec.status = if s == "-1" {
                Some(0)
            } else {
                parse_status(s).map_err(|m| (Some("%ST"), m))?
            };
        }
        if let Some(t) = v.termination {
            let (cause, phase) = termination(t).map_err(|m| (Some("%tsc"), m))?;
            // Blocked (`P`) or answered (`L`) by the proxy while it read the request: the
            // status says whether it was a refusal like the contender's.
            let by_the_rules = matches!(cause, b'P' | b'L') && matches!(phase, b'R' | b'T');
            if !by_the_rules {
                rec.production = Some(Production::Admitted);
            }
        }
        if let Some(p) = v.port {
            number(p, u16::MAX as u64, "a TCP port").map_err(|m| (Some("%cp"), m))?;
        }
        let request = present(&v.request).filter(|r| *r != "<BADREQ>");
        let mut words = request.unwrap_or("").split(' ');
        let (r_method, r_uri) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let method = v
            .method
            .filter(|m| *m != "-" && *m != "<BADREQ>")
            .unwrap_or(r_method);
        rec.method = parse_method(method);
        let path = present(&v.path_only)
            .or_else(|| present(&v.path).map(path_of))
            .or_else(|| present(&v.uri).map(path_of))
            .or_else(|| (!r_uri.is_empty()).then(|| path_of(r_uri)))
            .filter(|p| *p != "<BADREQ>");
        if let Some(p) = path {
            rec.fields[field_index(KeyField::Endpoint)].push_str(p);
        }
        let mut xff = present(&v.xff).map(Cow::Borrowed);
        let mut api_key = present(&v.api_key).map(Cow::Borrowed);
        if let Some(raw) = v.captures {
            for (value, capture) in raw.split('|').zip(&self.template.0.captures) {
                let slot = match capture {
                    Capture::Xff => &mut xff,
                    Capture::ApiKey => &mut api_key,
                    Capture::Other => continue,
                };
                if slot.is_none() && !value.is_empty() {
                    *slot = Some(unescape(value, true, false).map_err(|m| (Some("%hr"), m))?);
                }
            }
        }
        let client = v.client.filter(|c| *c != "-");
        if let Some(c) = client
            && c != "unix"
            && c.parse::<std::net::IpAddr>().is_err()
        {
            return Err((Some("%ci"), format!("`{c}` is not an IP address")));
        }
        // The client the rules keyed: `req.hdr(X-Forwarded-For)` is the header's last entry
        // (the address the nearest proxy saw), else the connection's peer.
        let forwarded = xff
            .as_deref()
            .and_then(|x| x.rsplit(',').next())
            .map(str::trim);
        let ip = forwarded.filter(|a| !a.is_empty()).or(client);
        if let Some(ip) = ip {
            rec.fields[field_index(KeyField::Ip)].push_str(ip);
        }
        if let Some(x) = &xff {
            rec.forwarded_for.push_str(x);
        }
        if let Some(k) = &api_key {
            rec.fields[field_index(KeyField::ApiKey)].push_str(k);
        }
        Ok(())
    }

    /// The record's time (see the module docs).
    fn time(&self, v: &Values<'_>) -> std::result::Result<u64, LineError> {
        let bad = |item: Item| move |m: String| (Some(item.field()), m);
        let missing = |item: Item| (Some(item.field()), "the line records no time".to_string());
        match self.template.0.time {
            TimeFrom::Sample | TimeFrom::Seconds if v.date.is_some() => {
                let (raw, unit) = v.date.expect("checked");
                let n =
                    number(raw, u64::MAX / unit, "an epoch date").map_err(bad(Item::Date(unit)))?;
                Ok(n * unit)
            }
            TimeFrom::Sample => Err(missing(Item::Date(NANOS_PER_MILLI))),
            TimeFrom::RequestDate => {
                let raw = v.request_date.ok_or_else(|| missing(Item::RequestDate))?;
                let t = local_ms(raw).map_err(bad(Item::RequestDate))?;
                Ok(t + timer(v.tr, Item::TR)?.unwrap_or(0))
            }
            TimeFrom::AcceptDate => {
                let t = match (v.ts, v.ms, v.accept) {
                    (Some(s), Some(ms), _) => {
                        let s = number(s, u64::MAX / NANOS_PER_SEC - 1, "epoch seconds")
                            .map_err(bad(Item::Ts))?;
                        let ms = number(ms, 999, "milliseconds").map_err(bad(Item::Ms))?;
                        s * NANOS_PER_SEC + ms * NANOS_PER_MILLI
                    }
                    (_, _, Some(t)) => local_ms(t).map_err(bad(Item::AcceptDate))?,
                    _ => return Err(missing(Item::Ts)),
                };
                Ok(t + accept_to_rules(v)?)
            }
            TimeFrom::Seconds => match (v.ts, v.zoned) {
                (Some(s), _) => number(s, u64::MAX / NANOS_PER_SEC, "epoch seconds")
                    .map(|s| s * NANOS_PER_SEC)
                    .map_err(bad(Item::Ts)),
                (None, Some((raw, item))) => zoned(raw).map_err(bad(item)),
                (None, None) => Err(missing(Item::Ts)),
            },
        }
    }
}

impl LineFormat for Haproxy {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let mut values = Values::default();
        self.template
            .cut(without_syslog_header(line), &mut values)?;
        self.fill(&values, rec)
    }
}

impl RecordReader for Lines<Haproxy> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

/// The captured headers `%{A|B}hr` names, in `capture request header` order.
fn captures_named(names: &str) -> Vec<Capture> {
    names
        .split('|')
        .filter(|n| !n.is_empty())
        .map(|n| match n.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Capture::Xff,
            "x-api-key" => Capture::ApiKey,
            _ => Capture::Other,
        })
        .collect()
}

/// An unquoted `%r` followed by a blank cannot be cut from the line: it has blanks of its own.
fn refuse_unquoted_request(pieces: &[Piece], text: &str) -> std::result::Result<(), String> {
    for (k, piece) in pieces.iter().enumerate() {
        if let Piece::Item {
            item: Item::Request,
            quoted: false,
            ..
        } = piece
            && pieces.get(k + 1) == Some(&Piece::Separator)
        {
            return Err(format!(
                "`%r` is followed by a blank in log-format `{text}` but has blanks of its own: write it `%{{+Q}}r` or put a literal after it"
            ));
        }
    }
    Ok(())
}

/// Where a template's records take their time from (the most exact item it has).
fn time_from(pieces: &[Piece], text: &str) -> std::result::Result<TimeFrom, String> {
    let has = |want: &dyn Fn(Item) -> bool| {
        pieces
            .iter()
            .any(|p| matches!(p, Piece::Item { item, .. } if want(*item)))
    };
    Ok(
        if has(&|i| matches!(i, Item::Date(u) if u < NANOS_PER_SEC)) {
            TimeFrom::Sample
        } else if has(&|i| i == Item::RequestDate) {
            TimeFrom::RequestDate
        } else if has(&|i| i == Item::AcceptDate)
            || (has(&|i| i == Item::Ts) && has(&|i| i == Item::Ms))
        {
            TimeFrom::AcceptDate
        } else if has(&|i| {
            matches!(
                i,
                Item::Date(_) | Item::Ts | Item::AcceptZoned | Item::RequestZoned
            )
        }) {
            TimeFrom::Seconds
        } else {
            return Err(format!(
                "log-format `{text}` records no time: it needs `%tr`, `%t`, `%Ts` with `%ms`, or a variable set from date(0,ms) when the rules run, written `%[date(0,ms)]`"
            ));
        },
    )
}

/// The reader of a log in `template`; a second-resolution one places each second's requests.
pub fn reader(
    path: &Path,
    input: Box<dyn BufRead + Send>,
    template: Template,
    place: Placement,
) -> Box<dyn RecordReader> {
    let seconds = template.seconds_only();
    placed(
        Lines::new(path, input, Haproxy { template }),
        seconds,
        place,
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{ReplayOptions, TraceFormat};
    use super::*;
    use crate::traffic::method::Method;

    /// httplog lines: the documentation's example (8.2.3, with its syslog header), then lines a
    /// real HAProxy 2.6 wrote (`<PRI>` header, and `log stdout format raw`'s none): a return
    /// (`LR--`), a rate-limit deny (429, `PR--`), another deny (403, `PR--`), IPv6 with `#22`,
    /// a server's own 429 (`----`), a request cut short (`CR--`, `<BADREQ>`, `%TR` -1), and a
    /// client gone before the answer (status -1).
    const HTTPLOG_LINES: &str = concat!(
        "Feb  6 12:14:14 localhost haproxy[14389]: 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {1wt.eu} {} \"GET /index.html HTTP/1.1\"\n",
        "<134>Dec  6 06:56:52 localhost haproxy[20890]: 127.0.0.1:34590 [06/Dec/2026:06:56:52.929] web web/<NOSRV> 0/-1/-1/-1/0 200 73 - - LR-- 1/1/0/0/0 0/0 \"GET /a?x=1 HTTP/1.1\"\n",
        "127.0.0.1:34598 [06/Dec/2026:06:56:52.935] web web/<NOSRV> 0/-1/-1/-1/0 429 225 - - PR-- 1/1/0/0/0 0/0 \"GET /deny HTTP/1.1\"\n",
        "127.0.0.1:34608 [06/Dec/2026:06:56:52.941] web web/<NOSRV> 0/-1/-1/-1/0 403 192 - - PR-- 1/1/0/0/0 0/0 \"GET /block HTTP/1.1\"\n",
        "::1:38276 [06/Dec/2026:06:56:52.947] web web/<NOSRV> 2/-1/-1/-1/0 200 73 - - LR-- 1/1/0/0/0 0/0 \"GET /q%20a#22b HTTP/1.1\"\n",
        "192.0.2.7:4242 [06/Dec/2026:06:56:53.001] web app/srv1 1/0/0/5/6 429 120 - - ---- 1/1/1/1/0 0/0 \"POST http://h:80/api/x?y=1 HTTP/1.1\"\n",
        "127.0.0.1:34628 [06/Dec/2026:06:56:57.418] web web/<NOSRV> -1/-1/-1/-1/200 400 0 - - CR-- 2/2/0/0/0 0/0 \"<BADREQ>\"\n",
        "192.0.2.8:4243 [06/Dec/2026:06:56:57.500] web app/srv1 0/0/1/-1/9 -1 0 - - CD-- 1/1/1/1/0 0/0 \"DELETE /api/y HTTP/1.1\"\n",
    );

    fn rec(ns: u64, ip: &str, path: &str, method: Option<Method>, status: u16) -> Record {
        let mut r = Record {
            epoch_ns: ns,
            status: Some(status),
            method,
            ..Record::default()
        };
        r.fields[field_index(KeyField::Ip)] = ip.into();
        r.fields[field_index(KeyField::Endpoint)] = path.into();
        r
    }

    fn options(log_format: Option<&str>) -> ReplayOptions {
        ReplayOptions {
            format: TraceFormat::Haproxy,
            haproxy_log_format: log_format.map(|f| Template::parse(f).unwrap()),
            ..ReplayOptions::default()
        }
    }

    fn records(log_format: Option<&str>, text: &str) -> Vec<Record> {
        outcomes_in_every_form(&options(log_format), text)
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    #[test]
    fn httplog_lines_read_field_by_field() {
        let got = records(None, HTTPLOG_LINES);
        let s = |secs: u64, ms: u64| secs * NANOS_PER_SEC + ms * NANOS_PER_MILLI;
        let admitted = |r: Record| Record {
            production: Some(Production::Admitted),
            ..r
        };
        let get = Some(Method::Get);
        let want = [
            // %tr + %TR: 12:14:14.655 + 10 ms.
            admitted(rec(s(1233922454, 665), "10.0.1.2", "/index.html", get, 200)),
            rec(s(1796540212, 929), "127.0.0.1", "/a", get, 200),
            rec(s(1796540212, 935), "127.0.0.1", "/deny", get, 429),
            rec(s(1796540212, 941), "127.0.0.1", "/block", get, 403),
            rec(s(1796540212, 949), "::1", "/q%20a\"b", get, 200),
            admitted(rec(
                s(1796540213, 2),
                "192.0.2.7",
                "/api/x",
                Some(Method::Post),
                429,
            )),
            admitted(rec(s(1796540217, 418), "127.0.0.1", "", None, 400)),
            admitted(rec(
                s(1796540217, 500),
                "192.0.2.8",
                "/api/y",
                Some(Method::Delete),
                0,
            )),
        ];
        assert_eq!(got.len(), want.len());
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(
                *g,
                Record {
                    line: k as u64 + 1,
                    ..w
                },
                "line {}",
                k + 1
            );
        }
    }

    /// A custom log-format: IPv6 client, the decision time declared `%[date(0,ms)]`, captures
    /// named (X-Forwarded-For's last entry is the client), `#XX` in a capture, `%o`'s quotes.
    #[test]
    fn a_custom_log_format_with_declared_time_and_captures() {
        let format = "%{+Q}o %ci:%cp %[date(0,ms)] %ST %tsc %{Host|X-Forwarded-For}hr %HM %HU %r";
        let text = concat!(
            "2001:db8::7:51234 1733112345123 429 PR-- {api.example|203.0.113.9, 198.51.100.4} \"GET\" \"/v1/items?page=2\" \"GET /v1/items?page=2 HTTP/1.1\"\n",
            "2001:db8::7:51235 1733112345124 200 ---- {api.example|} \"PUT\" \"/v1/a#23b\" \"PUT /v1/a#23b HTTP/1.1\"\n",
            "10.1.2.3:80 1733112345125 200 ---- {a|b#7Cc} \"-\" \"-\" \"-\"\n",
        );
        let got = records(Some(format), text);
        let mut first = rec(
            1_733_112_345_123_000_000,
            "198.51.100.4",
            "/v1/items",
            Some(Method::Get),
            429,
        );
        first.forwarded_for = "203.0.113.9, 198.51.100.4".into();
        first.line = 1;
        let mut second = rec(
            1_733_112_345_124_000_000,
            "2001:db8::7",
            "/v1/a#b",
            Some(Method::Put),
            200,
        );
        second.production = Some(Production::Admitted);
        second.line = 2;
        let mut third = rec(1_733_112_345_125_000_000, "b|c", "", None, 200);
        third.production = Some(Production::Admitted);
        third.forwarded_for = "b|c".into();
        third.line = 3;
        assert_eq!(got, [first, second, third]);
        assert!(Template::parse(format).unwrap().exact_time());
        assert!(!Template::parse(HTTPLOG).unwrap().exact_time());
    }

    /// `%Ts`+`%ms` plus `%Tq`; a second-resolution date places a second's requests (`spread`).
    #[test]
    fn accept_dates_and_second_resolution() {
        let got = records(Some("%Ts.%ms %Tq %ci"), "1733112345.007 12 10.0.0.1\n");
        assert_eq!(got[0].epoch_ns, 1_733_112_345_019_000_000);
        let got = records(
            Some("%ci [%trg] %ST"),
            "10.0.0.1 [06/Feb/2009:12:14:14 +0100] 200\n10.0.0.1 [06/Feb/2009:12:14:14 +0100] 200\n",
        );
        let second = (1233922454 - 3600) * NANOS_PER_SEC;
        assert_eq!(
            got.iter().map(|r| r.epoch_ns).collect::<Vec<_>>(),
            [second, second + NANOS_PER_SEC / 2]
        );
    }

    #[test]
    fn malformed_lines_name_the_field() {
        let good = "10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 \"GET / HTTP/1.1\"";
        let missing = good.replace(" [06/Feb/2009:12:14:14.655]", "");
        let truncated = &good[..good.len() - 6];
        let wrong_type = good.replace(" 10/0/", " ten/0/");
        let out_of_range = good.replace(":33317", ":70000");
        let fraction = good.replace("14.655]", "14.6551]");
        let state = good.replace(" ---- ", " XY-- ");
        let status = good.replace(" 200 ", " 999 ");
        let n = bad_lines(
            TraceFormat::Haproxy,
            "",
            &[
                (&missing, Some("%tr")),
                (truncated, Some("%r")),
                (&wrong_type, Some("%TR")),
                (&out_of_range, Some("%cp")),
                (&fraction, Some("%tr")),
                (&state, Some("%tsc")),
                (&status, Some("%ST")),
            ],
        );
        assert_eq!(n, 7);
    }

    #[test]
    fn templates_the_line_cannot_be_cut_by_are_refused() {
        for (format, want) in [
            ("%ci%cp [%tr]", "nothing between them"),
            ("%ci %ST", "records no time"),
            ("[%tr] %r %ST", "has blanks of its own"),
            ("%{+X}ci [%tr]", "+X"),
            ("[%tr] %[date(3600,ms)]", "an offset"),
            ("[%tr] %{+Q", "without `}`"),
        ] {
            let err = Template::parse(format).unwrap_err();
            assert!(err.contains(want), "{format}: {err}");
        }
        // Self-delimited items may touch: a quoted string, the captures' braces.
        assert!(Template::parse("[%tr] %{+Q}r%ST %hr%ci").is_ok());
    }

    #[test]
    fn httplog_is_detected_with_or_without_a_syslog_header() {
        for line in HTTPLOG_LINES.lines() {
            assert!(is_httplog(line), "{line}");
        }
        assert!(!is_httplog(
            "127.0.0.1 - - [06/Feb/2009:12:14:14 +0000] \"GET / HTTP/1.1\" 200 5"
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("haproxy.log");
        std::fs::write(&path, HTTPLOG_LINES).unwrap();
        let data = super::super::TraceData::default();
        assert_eq!(
            super::super::detect_format(&path, &data).unwrap(),
            TraceFormat::Haproxy
        );
        assert_eq!(
            without_syslog_header(
                "<134>1 2026-12-06T06:56:52.929+00:00 host haproxy 20890 - - msg x"
            ),
            "msg x"
        );
    }
}
