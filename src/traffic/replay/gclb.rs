//! Google Cloud HTTP(S) load balancer request logs: Cloud Logging `LogEntry` objects, one per
//! line (as `gcloud logging read --format=json` gives them once split into lines, or as a
//! sink exports them), with the request in `httpRequest` and the balancer's details in
//! `jsonPayload`.
//!
//! `time` is the entry's `timestamp` (RFC 3339, nanoseconds), `ip` `httpRequest.remoteIp`,
//! `method` `httpRequest.requestMethod`, `endpoint` the path of `httpRequest.requestUrl`,
//! `status` `httpRequest.status`. The recorded decision is Cloud Armor's:
//! `jsonPayload.enforcedSecurityPolicy.outcome` `DENY` is refused (a `throttle` or
//! `rate_based_ban` rule over its threshold, or a deny rule), `ACCEPT` admitted; a
//! `previewSecurityPolicy` that would `DENY` a request production served is would-refuse.

use super::common::{json_error, rfc3339, url_path, without_port};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, status_code};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub struct Gclb;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Gclb> {
    Lines::new(path, input, Gclb)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    http_request: Option<HttpRequest<'a>>,
    #[serde(borrow)]
    json_payload: Option<Payload<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct HttpRequest<'a> {
    #[serde(borrow)]
    request_method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    request_url: Option<Cow<'a, str>>,
    status: Option<u64>,
    #[serde(borrow)]
    remote_ip: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    #[serde(borrow)]
    enforced_security_policy: Option<Policy<'a>>,
    #[serde(borrow)]
    preview_security_policy: Option<Policy<'a>>,
}

#[derive(serde::Deserialize)]
struct Policy<'a> {
    #[serde(borrow)]
    outcome: Option<Cow<'a, str>>,
}

fn outcome<'b>(p: &'b Option<Policy<'_>>) -> Option<&'b str> {
    p.as_ref()?.outcome.as_deref()
}

impl LineFormat for Gclb {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let e: Entry<'_> = serde_json::from_str(line).map_err(|e| {
            (
                None,
                format!("not a Cloud Logging LogEntry: {}", json_error(&e)),
            )
        })?;
        let stamp = e.timestamp.ok_or((
            Some("timestamp"),
            "the entry has no `timestamp`".to_string(),
        ))?;
        rec.epoch_ns = rfc3339(&stamp).map_err(|m| (Some("timestamp"), m))?;
        let req = e.http_request.ok_or((
            Some("httpRequest"),
            "the entry has no `httpRequest` (not a load balancer request log)".to_string(),
        ))?;
        if let Some(ip) = &req.remote_ip {
            rec.fields[field_index(KeyField::Ip)].push_str(without_port(ip));
        }
        rec.method = req.request_method.as_deref().and_then(parse_method);
        if let Some(url) = &req.request_url {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        }
        rec.status = match req.status {
            Some(code) => status_code(code).map_err(|m| (Some("httpRequest.status"), m))?,
            None => None,
        };
        if let Some(p) = &e.json_payload {
            fn check<'b>(
                o: Option<&'b str>,
                field: &'static str,
            ) -> std::result::Result<Option<&'b str>, LineError> {
                match o {
                    None | Some("ACCEPT" | "DENY") => Ok(o),
                    Some(other) => Err((
                        Some(field),
                        format!("unknown outcome `{other}` (expected ACCEPT or DENY)"),
                    )),
                }
            }
            let enforced = check(
                outcome(&p.enforced_security_policy),
                "jsonPayload.enforcedSecurityPolicy.outcome",
            )?;
            let preview = check(
                outcome(&p.preview_security_policy),
                "jsonPayload.previewSecurityPolicy.outcome",
            )?;
            rec.production = match (enforced, preview) {
                (Some("DENY"), _) => Some(Production::Refused),
                (_, Some("DENY")) => Some(Production::WouldRefuse),
                (Some(_), _) | (_, Some(_)) => Some(Production::Admitted),
                (None, None) => None,
            };
        }
        Ok(())
    }
}

impl RecordReader for Lines<Gclb> {
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
    fn reads_the_documented_fields() {
        let text = concat!(
            r#"{"httpRequest":{"requestMethod":"GET","requestUrl":"https://example.com/api/v1?q=1","requestSize":"120","status":429,"responseSize":"300","userAgent":"curl/8.0","remoteIp":"198.51.100.4","serverIp":"10.128.0.2","latency":"0.002s"},"jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","statusDetails":"denied_by_security_policy","enforcedSecurityPolicy":{"name":"api-throttle","priority":1000,"configuredAction":"THROTTLE","outcome":"DENY","rateLimitAction":{"key":"198.51.100.4","outcome":"RATE_LIMIT_THRESHOLD_EXCEED"}}},"timestamp":"2024-03-01T12:00:00.123456789Z","severity":"WARNING"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"PUT","requestUrl":"https://example.com/","status":200,"remoteIp":"198.51.100.5"},"jsonPayload":{"enforcedSecurityPolicy":{"outcome":"ACCEPT"},"previewSecurityPolicy":{"outcome":"DENY"}},"timestamp":"2024-03-01T12:00:01Z"}"#,
            "\n",
            r#"{"httpRequest":{"requestUrl":"https://example.com/x","status":200},"timestamp":"2024-03-01T12:00:02Z"}"#,
            "\n",
        );
        let r = read_text(TraceFormat::Gclb, text);
        assert_eq!(r[0].epoch_ns, 1_709_294_400_123_456_789);
        assert_eq!(
            r[0].fields,
            ["198.51.100.4", "", "", "/api/v1"].map(String::from)
        );
        assert_eq!(
            (r[0].method, r[0].status, r[0].production),
            (Some(Method::Get), Some(429), Some(Production::Refused))
        );
        assert_eq!(
            (r[1].method, r[1].production),
            (Some(Method::Put), Some(Production::WouldRefuse))
        );
        assert_eq!((r[2].method, r[2].production), (None, None));
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Gclb,
            "",
            &[
                (r#"{"httpRequest":{}}"#, Some("timestamp")),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z"}"#,
                    Some("httpRequest"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{"status":1000}}"#,
                    Some("httpRequest.status"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{},"jsonPayload":{"enforcedSecurityPolicy":{"outcome":"MAYBE"}}}"#,
                    Some("jsonPayload.enforcedSecurityPolicy.outcome"),
                ),
                ("{", None),
            ],
        );
        assert_eq!(n, 5);
    }
}
