//! Envoy access logs: the default text format and JSON (`json_format` with the default
//! format's fields, keyed as Envoy's documentation and Istio name them).
//!
//! The default format is
//! `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
//! %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
//! "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%"
//! "%UPSTREAM_HOST%"`. `time` is `START_TIME` (milliseconds), `method` and `endpoint` the
//! request's (the path without its query), `status` `RESPONSE_CODE`, `forwarded_for` the
//! `X-Forwarded-For` header. The default format has no client address: `ip` is the last
//! address of `X-Forwarded-For` (the one Envoy appends with `use_remote_address`); JSON's
//! `downstream_remote_address` is used when the log has it. The recorded decision is
//! `RESPONSE_FLAGS`: `RL` (rate limited, by the global or the local rate-limit filter) is
//! refused, any other flags admitted.

use super::common::{json_error, quoted_fields, rfc3339, unset, url_path, without_port};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub struct EnvoyText;
pub struct EnvoyJson;

pub fn text_reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<EnvoyText> {
    Lines::new(path, input, EnvoyText)
}

pub fn json_reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<EnvoyJson> {
    Lines::new(path, input, EnvoyJson)
}

/// `RESPONSE_FLAGS` as production's decision: `RL` is a rate-limit refusal.
fn decision(flags: &str) -> Production {
    if flags.split(',').any(|f| f == "RL") {
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
        if n < 3 {
            return Err((
                None,
                format!("{n} fields after the time where the default format has 12"),
            ));
        }
        let mut request = f[0].split(' ');
        let (method, path) = (request.next().unwrap_or(""), request.next().unwrap_or(""));
        rec.status = parse_status(f[1]).map_err(|m| (Some("RESPONSE_CODE"), m))?;
        fill(rec, method, path, f[2], f[7], "");
        Ok(())
    }
}

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
                None,
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
        let s = |v: &Option<Cow<'_, str>>| v.as_deref().unwrap_or("").to_string();
        // Strings borrowed from `l` and `rec` at once: copy the few short ones.
        let (method, path, flags) = (s(&l.method), s(&l.path), s(&l.response_flags));
        let (xff, remote) = (s(&l.x_forwarded_for), s(&l.downstream_remote_address));
        fill(rec, &method, &path, &flags, &xff, &remote);
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
    use super::super::tests_common::{bad_lines, read_text};
    use super::super::{Production, TraceFormat};
    use crate::traffic::method::Method;

    const LINE: &str = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations?x=1 HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80""#;

    #[test]
    fn reads_the_default_text_format() {
        let limited = LINE
            .replace(" 204 - ", " 429 RL ")
            .replace("\"10.0.35.28\"", "\"203.0.113.1, 10.0.35.29\"");
        let r = read_text(TraceFormat::Envoy, &format!("{LINE}\n{limited}\n"));
        assert_eq!(r[0].epoch_ns, 1_460_751_420_310_000_000);
        assert_eq!(
            r[0].fields,
            ["10.0.35.28", "", "", "/api/v1/locations"].map(String::from)
        );
        assert_eq!(
            (r[0].method, r[0].status, r[0].production),
            (Some(Method::Post), Some(204), Some(Production::Admitted))
        );
        assert_eq!(r[1].fields[0], "10.0.35.29");
        assert_eq!(r[1].forwarded_for, "203.0.113.1, 10.0.35.29");
        assert_eq!(
            (r[1].status, r[1].production),
            (Some(429), Some(Production::Refused))
        );
    }

    #[test]
    fn reads_json() {
        let text = concat!(
            r#"{"start_time":"2016-04-15T20:17:00.310Z","method":"GET","path":"/a","protocol":"HTTP/1.1","response_code":429,"response_flags":"RL","x_forwarded_for":"198.51.100.1","user_agent":"curl","downstream_remote_address":"192.0.2.5:41234"}"#,
            "\n",
            r#"{"start_time":"2016-04-15T20:17:00.311Z","method":"DELETE","path":"/b","response_code":"200","response_flags":"-","x_forwarded_for":null}"#,
            "\n"
        );
        let r = read_text(TraceFormat::EnvoyJson, text);
        assert_eq!(r[0].fields, ["192.0.2.5", "", "", "/a"].map(String::from));
        assert_eq!(r[0].forwarded_for, "198.51.100.1");
        assert_eq!(
            (r[0].status, r[0].production),
            (Some(429), Some(Production::Refused))
        );
        assert_eq!(r[1].epoch_ns, 1_460_751_420_311_000_000);
        assert_eq!(
            (r[1].method, r[1].status, r[1].production),
            (Some(Method::Delete), Some(200), Some(Production::Admitted))
        );
        assert_eq!(r[1].fields[0], "");
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
                ("[2016-04-15T20:17:00.310Z] \"POST /a HTTP/2", None),
            ],
        );
        let json = bad_lines(
            TraceFormat::EnvoyJson,
            "",
            &[
                (r#"{"method":"GET"}"#, Some("start_time")),
                (
                    r#"{"start_time":"2016-04-15T20:17:00Z","response_code":9}"#,
                    Some("response_code"),
                ),
                ("[x]", None),
            ],
        );
        assert_eq!((text, json), (4, 3));
    }
}
