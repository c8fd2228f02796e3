//! Cloudflare Logpush `http_requests` datasets: one JSON object per line with the fields the
//! job selected (other fields are ignored).
//!
//! `time` is `EdgeStartTimestamp` in any of Logpush's `timestamp_format`s: `unixnano` (the
//! default, integer nanoseconds), `unix` (integer seconds; milliseconds and microseconds are told
//! apart by magnitude) or `rfc3339` (a string). `ip` is `ClientIP`, `method` `ClientRequestMethod`,
//! `endpoint` the path of `ClientRequestURI` (or `ClientRequestPath`), `status`
//! `EdgeResponseStatus`, `forwarded_for` a `RequestHeaders` custom field `x-forwarded-for`. The
//! recorded decision is `SecurityAction` (or the legacy `WAFAction` without it): `block`, `drop`,
//! `connectionClose` and the challenges are refused, `log` and `simulate` would have refused,
//! `allow`, `skip`, `bypass`, `unknown` and empty are admitted. `SecuritySources` names the
//! product that acted (`rateLimit` for a rate-limiting rule): docs/traffic.md.

use super::common::{json_error, url_path};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, status_code};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

pub struct Cloudflare;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Cloudflare> {
    Lines::new(path, input, Cloudflare)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Line<'a> {
    edge_start_timestamp: Option<Stamp<'a>>,
    #[serde(rename = "ClientIP", borrow)]
    client_ip: Option<Cow<'a, str>>,
    #[serde(borrow)]
    client_request_method: Option<Cow<'a, str>>,
    #[serde(rename = "ClientRequestURI", borrow)]
    client_request_uri: Option<Cow<'a, str>>,
    #[serde(borrow)]
    client_request_path: Option<Cow<'a, str>>,
    edge_response_status: Option<u64>,
    #[serde(borrow)]
    security_action: Option<Cow<'a, str>>,
    #[serde(rename = "WAFAction", borrow)]
    waf_action: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_headers: HashMap<Cow<'a, str>, Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Stamp<'a> {
    Number(u64),
    #[serde(borrow)]
    Text(Cow<'a, str>),
}

/// Integer Unix time in seconds, milliseconds, microseconds or nanoseconds, by magnitude
/// (seconds stay under 10^11 until the year 5138; nanoseconds are over 10^17 after 1973).
fn unix(n: u64) -> Option<u64> {
    match n {
        0..100_000_000_000 => n.checked_mul(1_000_000_000),
        100_000_000_000..100_000_000_000_000 => Some(n * 1_000_000),
        100_000_000_000_000..100_000_000_000_000_000 => Some(n * 1_000),
        _ => Some(n),
    }
}

/// A `SecurityAction` or `WAFAction` value as production's decision.
pub(super) fn action(raw: &str) -> std::result::Result<Production, String> {
    Ok(match raw {
        "" | "unknown" | "allow" | "skip" | "bypass" => Production::Admitted,
        "block"
        | "drop"
        | "connectionClose"
        | "forceConnectionClose"
        | "challenge"
        | "jschallenge"
        | "managedChallenge"
        | "challengeFailed"
        | "jschallengeFailed"
        | "managedChallengeFailed" => Production::Refused,
        "log" | "simulate" => Production::WouldRefuse,
        other => {
            return Err(format!(
                "unknown action `{other}` (expected block, challenge, jschallenge, managedChallenge, \
                 log, allow, skip, bypass or unknown)"
            ));
        }
    })
}

impl LineFormat for Cloudflare {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| {
            (
                None,
                format!("not a Cloudflare http_requests record: {}", json_error(&e)),
            )
        })?;
        let field = Some("EdgeStartTimestamp");
        rec.epoch_ns = match l.edge_start_timestamp {
            Some(Stamp::Number(n)) => unix(n).ok_or((field, format!("`{n}` is too large")))?,
            Some(Stamp::Text(t)) => match t.parse::<u64>() {
                Ok(n) => unix(n).ok_or((field, format!("`{n}` is too large")))?,
                Err(_) => super::common::rfc3339(&t).map_err(|m| (field, m))?,
            },
            None => return Err((field, "the record has no `EdgeStartTimestamp`".into())),
        };
        if let Some(ip) = l.client_ip {
            rec.fields[field_index(KeyField::Ip)].push_str(&ip);
        }
        rec.method = l.client_request_method.as_deref().and_then(parse_method);
        if let Some(uri) = l.client_request_path.or(l.client_request_uri) {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(&uri));
        }
        rec.status = match l.edge_response_status {
            Some(code) => status_code(code).map_err(|m| (Some("EdgeResponseStatus"), m))?,
            None => None,
        };
        rec.production = match (&l.security_action, &l.waf_action) {
            (Some(a), _) => Some(action(a).map_err(|m| (Some("SecurityAction"), m))?),
            (None, Some(a)) => Some(action(a).map_err(|m| (Some("WAFAction"), m))?),
            (None, None) => None,
        };
        if let Some((_, xff)) = l
            .request_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("x-forwarded-for"))
        {
            rec.forwarded_for.push_str(xff);
        }
        Ok(())
    }
}

impl RecordReader for Lines<Cloudflare> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, read_text};
    use super::super::{Production, TraceFormat};
    use crate::traffic::method::Method;

    #[test]
    fn reads_the_documented_fields_in_every_time_format() {
        let text = concat!(
            r#"{"ClientIP":"198.51.100.7","ClientRequestHost":"example.com","ClientRequestMethod":"POST","ClientRequestURI":"/login?next=%2F","EdgeResponseStatus":429,"EdgeStartTimestamp":1700000000123456789,"SecurityAction":"block","SecuritySources":["rateLimit"],"RequestHeaders":{"x-forwarded-for":"203.0.113.9"}}"#,
            "\n",
            r#"{"ClientIP":"2001:db8::1","ClientRequestMethod":"GET","ClientRequestURI":"/","EdgeResponseStatus":200,"EdgeStartTimestamp":"2023-11-14T22:13:20Z","SecurityAction":"","WAFAction":"unknown"}"#,
            "\n",
            r#"{"ClientIP":"10.0.0.1","EdgeStartTimestamp":1700000000,"WAFAction":"simulate"}"#,
            "\n",
            r#"{"ClientIP":"10.0.0.1","EdgeStartTimestamp":1700000000123}"#,
            "\n",
        );
        let r = read_text(TraceFormat::Cloudflare, text);
        assert_eq!(r[0].epoch_ns, 1_700_000_000_123_456_789);
        assert_eq!(
            r[0].fields,
            ["198.51.100.7", "", "", "/login"].map(String::from)
        );
        assert_eq!(
            (r[0].method, r[0].status, r[0].production),
            (Some(Method::Post), Some(429), Some(Production::Refused))
        );
        assert_eq!(r[0].forwarded_for, "203.0.113.9");
        assert_eq!(r[1].epoch_ns, 1_700_000_000_000_000_000);
        assert_eq!(r[1].production, Some(Production::Admitted));
        assert_eq!(r[2].epoch_ns, 1_700_000_000_000_000_000);
        assert_eq!(r[2].production, Some(Production::WouldRefuse));
        assert_eq!((r[2].method, r[2].status), (None, None));
        assert_eq!(r[3].epoch_ns, 1_700_000_000_123_000_000);
        assert_eq!(r[3].production, None);
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Cloudflare,
            "",
            &[
                (r#"{"ClientIP":"1.2.3.4"}"#, Some("EdgeStartTimestamp")),
                (
                    r#"{"EdgeStartTimestamp":"noon"}"#,
                    Some("EdgeStartTimestamp"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"EdgeResponseStatus":700}"#,
                    Some("EdgeResponseStatus"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"SecurityAction":"smite"}"#,
                    Some("SecurityAction"),
                ),
                ("ClientIP=1.2.3.4", None),
            ],
        );
        assert_eq!(n, 5);
    }
}
