//! Envoy access logs, as documented in "Access logging"
//! (<https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage>):
//! the default text format and JSON (`json_format` with the default format's fields, keyed as
//! Envoy's documentation and Istio name them).
//!
//! The default format is
//! `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
//! %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
//! "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%"
//! "%UPSTREAM_HOST%"`: twelve fields after the time, every one of them written (`-` when
//! unset), so a line with fewer is cut short, and the request is always three words (method,
//! path, protocol). Fields read: `time` is `START_TIME` (milliseconds), `method` and `endpoint`
//! the request's (the path without its query, percent-encoding kept), `status` `RESPONSE_CODE`
//! (`0`: no response was sent, a status of its own), `forwarded_for` the `X-Forwarded-For`
//! header; the byte counts and durations must be numbers. The default format has no client
//! address: `ip` is the last address of `X-Forwarded-For` (the one Envoy appends with
//! `use_remote_address`); JSON's `downstream_remote_address` (without its port) is used when the
//! log has it. The recorded decision is `RESPONSE_FLAGS`: `RL` (`RateLimited`: rate limited by
//! the global or the local rate-limit filter) is refused, any other flags (`-`, `UH`, `RLSE`: the
//! rate-limit service failed, which is no limit's decision) admitted.

use super::common::{
    json_error, json_field, quoted_fields, rfc3339, unset, url_path, without_port,
};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

/// The default text format.
pub(super) const TEXT: Format = Format {
    name: "envoy",
    aliases: &[],
    title: "an Envoy access log",
    fields: &[KeyField::Ip, KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 20,
        shows: |head| head.text().is_some_and(starts_like_text),
    },
    open: |path, input, _, _| Ok(Box::new(text_reader(path, input))),
};

/// `json_format` with the default format's fields.
pub(super) const JSON: Format = Format {
    name: "envoy_json",
    detect: Detect {
        rank: 70,
        shows: |head| head.has_any(&["start_time", "START_TIME", "response_flags"]),
    },
    open: |path, input, _, _| Ok(Box::new(json_reader(path, input))),
    ..TEXT
};

/// `[RFC 3339 time] "request`.
fn starts_like_text(line: &str) -> bool {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(stamp, after)| {
            chrono::DateTime::parse_from_rfc3339(stamp).is_ok()
                && after.trim_start().starts_with('"')
        })
}

pub struct EnvoyText;
pub struct EnvoyJson;

pub fn text_reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<EnvoyText> {
    Lines::new(path, input, EnvoyText)
}

pub fn json_reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<EnvoyJson> {
    Lines::new(path, input, EnvoyJson)
}

/// `RESPONSE_FLAGS` (short or `%RESPONSE_FLAGS_LONG%` names) as production's decision: `RL` is a
/// rate-limit refusal.
fn decision(flags: &str) -> Production {
    if flags.split(',').any(|f| f == "RL" || f == "RateLimited") {
        Production::Refused
    } else {
        Production::Admitted
    }
}

/// The request's fields common to both forms.
fn fill(rec: &mut Record, method: &str, path: &str, flags: &str, xff: &str, remote: &str) {
    rec.method = parse_method(method);
    if !unset(path) {
        rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(path));
    }
    rec.production = Some(decision(flags));
    if !unset(xff) {
        rec.forwarded_for.push_str(xff);
    }
    let ip = if unset(remote) {
        xff.rsplit(',').next().map_or("", str::trim)
    } else {
        without_port(remote)
    };
    if !unset(ip) {
        rec.fields[field_index(KeyField::Ip)].push_str(ip);
    }
}

/// The default format's fields after `[START_TIME]`, by name.
const TEXT_FIELDS: [&str; 12] = [
    "request",
    "RESPONSE_CODE",
    "RESPONSE_FLAGS",
    "BYTES_RECEIVED",
    "BYTES_SENT",
    "DURATION",
    "X-ENVOY-UPSTREAM-SERVICE-TIME",
    "X-FORWARDED-FOR",
    "USER-AGENT",
    "X-REQUEST-ID",
    ":AUTHORITY",
    "UPSTREAM_HOST",
];

impl LineFormat for EnvoyText {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let rest = line
            .strip_prefix('[')
            .ok_or((Some("START_TIME"), "no `[` before the time".to_string()))?;
        let (stamp, rest) = rest
            .split_once(']')
            .ok_or((Some("START_TIME"), "no `]` after the time".to_string()))?;
        rec.epoch_ns = rfc3339(stamp).map_err(|m| (Some("START_TIME"), m))?;
        let mut f = [""; 12];
        let n = quoted_fields(rest, &mut f)
            .ok_or((None, "a quoted field is not closed".to_string()))?;
        if n < f.len() {
            return Err((
                Some(TEXT_FIELDS[n]),
                format!(
                    "the line ends after {n} fields after the time, before `{}` (the default format has 12)",
                    TEXT_FIELDS[n]
                ),
            ));
        }
        let (method, path) = f[0]
            .split_once(' ')
            .and_then(|(method, rest)| Some((method, rest.rsplit_once(' ')?.0)))
            .ok_or_else(|| {
                (
                    Some("request"),
                    format!("`{}` is not `METHOD PATH PROTOCOL`", f[0]),
                )
            })?;
        rec.status = parse_status(f[1]).map_err(|m| (Some("RESPONSE_CODE"), m))?;
        // Numbers, or `-` where Envoy had none (a duration not measured, no upstream).
        for k in 3..=6 {
            if !unset(f[k]) && f[k].parse::<u64>().is_err() {
                return Err((Some(TEXT_FIELDS[k]), format!("`{}` is not a number", f[k])));
            }
        }
        fill(rec, method, path, f[2], f[7], "");
        Ok(())
    }
}

/// The keys (and their aliases, as a line writes them) a record is read from, to name the one
/// a line gets wrong.
const JSON_FIELDS: [&str; 19] = [
    "start_time",
    "START_TIME",
    "timestamp",
    "method",
    "METHOD",
    "request_method",
    "path",
    "PATH",
    "request_path",
    "response_code",
    "RESPONSE_CODE",
    "status",
    "response_flags",
    "RESPONSE_FLAGS",
    "x_forwarded_for",
    "x-forwarded-for",
    "X-FORWARDED-FOR",
    "downstream_remote_address",
    "DOWNSTREAM_REMOTE_ADDRESS",
];

#[derive(serde::Deserialize)]
struct JsonLine<'a> {
    #[serde(alias = "START_TIME", alias = "timestamp", borrow)]
    start_time: Option<Cow<'a, str>>,
    #[serde(alias = "METHOD", alias = "request_method", borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(alias = "PATH", alias = "request_path", borrow)]
    path: Option<Cow<'a, str>>,
    #[serde(alias = "RESPONSE_CODE", alias = "status", borrow)]
    response_code: Option<Code<'a>>,
    #[serde(alias = "RESPONSE_FLAGS", borrow)]
    response_flags: Option<Cow<'a, str>>,
    #[serde(alias = "x-forwarded-for", alias = "X-FORWARDED-FOR", borrow)]
    x_forwarded_for: Option<Cow<'a, str>>,
    #[serde(alias = "DOWNSTREAM_REMOTE_ADDRESS", borrow)]
    downstream_remote_address: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Code<'a> {
    Number(u64),
    #[serde(borrow)]
    Text(Cow<'a, str>),
}

impl LineFormat for EnvoyJson {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let l: JsonLine<'_> = serde_json::from_str(line).map_err(|e| {
            (
                json_field::<JsonLine<'_>>(line, &JSON_FIELDS),
                format!("not an Envoy JSON access-log record: {}", json_error(&e)),
            )
        })?;
        let stamp = l.start_time.ok_or((
            Some("start_time"),
            "the record has no `start_time`".to_string(),
        ))?;
        rec.epoch_ns = rfc3339(&stamp).map_err(|m| (Some("start_time"), m))?;
        rec.status = match &l.response_code {
            None => Ok(None),
            Some(Code::Number(n)) => super::status_code(*n),
            Some(Code::Text(t)) => parse_status(t),
        }
        .map_err(|m| (Some("response_code"), m))?;
        fn s<'a>(v: &'a Option<Cow<'_, str>>) -> &'a str {
            v.as_deref().unwrap_or("")
        }
        fill(
            rec,
            s(&l.method),
            s(&l.path),
            s(&l.response_flags),
            s(&l.x_forwarded_for),
            s(&l.downstream_remote_address),
        );
        Ok(())
    }
}

impl RecordReader for Lines<EnvoyText> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

impl RecordReader for Lines<EnvoyJson> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{Production, Record, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    /// The documentation's example of the default format.
    const LINE: &str = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations?x=1 HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80""#;

    fn record(line: u64, epoch_ns: u64, ip: &str, endpoint: &str) -> Record {
        Record {
            epoch_ns,
            fields: [ip, "", "", endpoint].map(String::from),
            line,
            ..Record::default()
        }
    }

    fn read(format: TraceFormat, lines: &[String]) -> Vec<Record> {
        let options = ReplayOptions {
            format,
            ..ReplayOptions::default()
        };
        outcomes_in_every_form(&options, &(lines.join("\n") + "\n"))
            .into_iter()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn reads_the_default_text_format() {
        let got = read(
            TraceFormat::Envoy,
            &[
                LINE.to_string(),
                // Rate limited (global or local filter), behind a proxy: the last address is
                // the one Envoy appended.
                LINE.replace(" 204 - ", " 429 RL ")
                    .replace("\"10.0.35.28\"", "\"203.0.113.1, 2001:db8::7\"")
                    .replace("/api/v1/locations?x=1", "/a%20b"),
                // Another flag, no upstream, no response sent (status 0), unset fields.
                LINE.replace(" 204 - 154 0 226 100 ", " 0 UC 154 0 226 - ")
                    .replace("\"10.0.35.28\"", "\"-\"")
                    .replace("POST ", "GET "),
                // A request Envoy could not parse: every part unset.
                LINE.replace("POST /api/v1/locations?x=1 HTTP/2", "- - -")
                    .replace(" 204 - ", " 400 DPE "),
            ],
        );
        let t = 1_460_751_420_310_000_000;
        let admitted = Some(Production::Admitted);
        let mut first = record(1, t, "10.0.35.28", "/api/v1/locations");
        (first.method, first.status, first.production) = (Some(Method::Post), Some(204), admitted);
        first.forwarded_for = "10.0.35.28".into();
        let mut limited = record(2, t, "2001:db8::7", "/a%20b");
        limited.method = Some(Method::Post);
        (limited.status, limited.production) = (Some(429), Some(Production::Refused));
        limited.forwarded_for = "203.0.113.1, 2001:db8::7".into();
        let mut gone = record(3, t, "", "/api/v1/locations");
        (gone.method, gone.status, gone.production) = (Some(Method::Get), Some(0), admitted);
        let mut unparsed = record(4, t, "10.0.35.28", "");
        (unparsed.status, unparsed.production) = (Some(400), admitted);
        unparsed.forwarded_for = "10.0.35.28".into();
        assert_eq!(got, [first, limited, gone, unparsed]);
    }

    #[test]
    fn reads_json() {
        let got = read(
            TraceFormat::EnvoyJson,
            &[
                r#"{"start_time":"2016-04-15T20:17:00.310Z","method":"GET","path":"/a?q","protocol":"HTTP/1.1","response_code":429,"response_flags":"RL","x_forwarded_for":"198.51.100.1","user_agent":"curl","downstream_remote_address":"[2001:db8::5]:41234"}"#.to_string(),
                r#"{"start_time":"2016-04-15T20:17:00.311Z","method":"DELETE","path":"/b","response_code":"200","response_flags":"-","x_forwarded_for":null,"downstream_remote_address":"192.0.2.5:41234"}"#.to_string(),
                r#"{"start_time":"2016-04-15T20:17:00.312Z","method":"GET","path":"/c","response_code":0,"response_flags":"UC","x_forwarded_for":"198.51.100.1, 192.0.2.9"}"#.to_string(),
                r#"{"START_TIME":"2016-04-15T20:17:00.313Z","METHOD":"PUT","PATH":"/d","RESPONSE_CODE":"0","RESPONSE_FLAGS":"RateLimited"}"#.to_string(),
            ],
        );
        let ms = |k: u64| 1_460_751_420_310_000_000 + k * 1_000_000;
        let mut a = record(1, ms(0), "2001:db8::5", "/a");
        (a.method, a.status, a.production) =
            (Some(Method::Get), Some(429), Some(Production::Refused));
        a.forwarded_for = "198.51.100.1".into();
        let mut b = record(2, ms(1), "192.0.2.5", "/b");
        (b.method, b.status, b.production) =
            (Some(Method::Delete), Some(200), Some(Production::Admitted));
        let mut c = record(3, ms(2), "192.0.2.9", "/c");
        (c.method, c.status, c.production) =
            (Some(Method::Get), Some(0), Some(Production::Admitted));
        c.forwarded_for = "198.51.100.1, 192.0.2.9".into();
        let mut d = record(4, ms(3), "", "/d");
        (d.method, d.status, d.production) =
            (Some(Method::Put), Some(0), Some(Production::Refused));
        assert_eq!(got, [a, b, c, d]);
    }

    #[test]
    fn bad_lines_name_their_field() {
        let text = bad_lines(
            TraceFormat::Envoy,
            "",
            &[
                ("2016-04-15 GET /", Some("START_TIME")),
                (
                    &LINE.replace("2016-04-15T", "2016-13-15T"),
                    Some("START_TIME"),
                ),
                (&LINE.replace(" 204 ", " 20x "), Some("RESPONSE_CODE")),
                (&LINE.replace(" 154 ", " many "), Some("BYTES_RECEIVED")),
                (&LINE[..LINE.find(" 226 ").unwrap()], Some("DURATION")),
                (&LINE.replace(" HTTP/2\"", "\""), Some("request")),
                ("[2016-04-15T20:17:00.310Z] \"POST /a HTTP/2", None),
            ],
        );
        let json = bad_lines(
            TraceFormat::EnvoyJson,
            "",
            &[
                (r#"{"method":"GET"}"#, Some("start_time")),
                (r#"{"start_time":"yesterday"}"#, Some("start_time")),
                (
                    r#"{"start_time":"2016-04-15T20:17:00.3100000001Z"}"#,
                    Some("start_time"),
                ),
                (
                    r#"{"start_time":"2016-04-15T20:17:00Z","response_code":9}"#,
                    Some("response_code"),
                ),
                (
                    r#"{"start_time":"2016-04-15T20:17:00Z","response_code":"OK"}"#,
                    Some("response_code"),
                ),
                ("[x]", None),
            ],
        );
        assert_eq!((text, json), (7, 6));
    }
}
