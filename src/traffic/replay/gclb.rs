//! Google Cloud HTTP(S) load balancer request logs: Cloud Logging `LogEntry` objects, one per
//! line (as `gcloud logging read --format=json` gives them once split into lines, or as a sink
//! exports them), the request in `httpRequest`
//! (<https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry#HttpRequest>) and the
//! balancer's details in `jsonPayload`
//! (<https://cloud.google.com/load-balancing/docs/https/https-logging-monitoring>), with Cloud
//! Armor's (<https://cloud.google.com/armor/docs/request-logging>).
//!
//! `time` is the entry's `timestamp` (RFC 3339, up to nanoseconds: more digits are refused),
//! `ip` `httpRequest.remoteIp` (without the port it may carry: `192.0.2.1:80`,
//! `[2001:db8::1]:443`), `method` `httpRequest.requestMethod`, `endpoint` the path of
//! `httpRequest.requestUrl` (JSON escapes undone, percent-encoding kept), `status`
//! `httpRequest.status` (0: no response was sent).
//!
//! The recorded decision is Cloud Armor's rate-based rule's: the policy that applied is
//! `jsonPayload.enforcedSecurityPolicy`, and it is a rate-based rule when its
//! `configuredAction` is `THROTTLE` or `RATE_BASED_BAN` or it has a `rateLimitAction` (whose
//! `outcome` is `RATE_LIMIT_THRESHOLD_CONFORM`, `RATE_LIMIT_THRESHOLD_EXCEED` or
//! `BAN_THRESHOLD_EXCEED`). Its `outcome` `DENY` (or an exceeding `rateLimitAction`) is refused,
//! `ACCEPT` admitted. A rule of another kind (a WAF or an allow/deny list's `DENY`), or no
//! policy at all, is not the rate limiter's decision: the request was not limited (admitted).
//! A `previewSecurityPolicy` rate-based rule that would deny a request that was not refused is
//! would-refuse (preview mode is Cloud Armor's dry run).

use super::common::{json_error, json_field, rfc3339, url_path, without_port};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, status_code};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "gclb",
    aliases: &[],
    title: "a Google Cloud load balancer log",
    fields: &[KeyField::Ip, KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 30,
        shows: |head| head.has_any(&["httpRequest"]),
    },
    open: |path, input, _, _| Ok(Box::new(reader(path, input))),
};

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
#[serde(rename_all = "camelCase")]
struct Policy<'a> {
    #[serde(borrow)]
    outcome: Option<Cow<'a, str>>,
    #[serde(borrow)]
    configured_action: Option<Cow<'a, str>>,
    #[serde(borrow)]
    rate_limit_action: Option<RateLimitAction<'a>>,
}

#[derive(serde::Deserialize)]
struct RateLimitAction<'a> {
    #[serde(borrow)]
    outcome: Option<Cow<'a, str>>,
}

/// The fields a bad line's error may name.
const FIELDS: [&str; 14] = [
    "timestamp",
    "httpRequest",
    "httpRequest.requestMethod",
    "httpRequest.requestUrl",
    "httpRequest.status",
    "httpRequest.remoteIp",
    "jsonPayload",
    "jsonPayload.enforcedSecurityPolicy",
    "jsonPayload.enforcedSecurityPolicy.outcome",
    "jsonPayload.enforcedSecurityPolicy.configuredAction",
    "jsonPayload.enforcedSecurityPolicy.rateLimitAction.outcome",
    "jsonPayload.previewSecurityPolicy",
    "jsonPayload.previewSecurityPolicy.outcome",
    "jsonPayload.previewSecurityPolicy.rateLimitAction.outcome",
];

/// Whether a policy's rule is rate-based and denied the request (`None`: not rate-based, so not
/// the rate limiter's decision; another rule's outcome, whatever it is, is not read). `at`
/// names the policy's `outcome` and `rateLimitAction.outcome` fields.
fn rate_denied(
    p: &Policy<'_>,
    at: [&'static str; 2],
) -> std::result::Result<Option<bool>, LineError> {
    let exceeded = match p.rate_limit_action.as_ref().map(|r| r.outcome.as_deref()) {
        None => None,
        Some(None | Some("RATE_LIMIT_THRESHOLD_CONFORM")) => Some(false),
        Some(Some("RATE_LIMIT_THRESHOLD_EXCEED" | "BAN_THRESHOLD_EXCEED")) => Some(true),
        Some(Some(other)) => {
            return Err((
                Some(at[1]),
                format!(
                    "unknown outcome `{other}` (expected RATE_LIMIT_THRESHOLD_CONFORM, \
                     RATE_LIMIT_THRESHOLD_EXCEED or BAN_THRESHOLD_EXCEED)"
                ),
            ));
        }
    };
    let rate_based = exceeded.is_some()
        || matches!(
            p.configured_action.as_deref(),
            Some("THROTTLE" | "RATE_BASED_BAN")
        );
    if !rate_based {
        return Ok(None);
    }
    let denied = match p.outcome.as_deref() {
        None | Some("ACCEPT") => false,
        Some("DENY") => true,
        Some(other) => {
            return Err((
                Some(at[0]),
                format!("unknown outcome `{other}` of a rate-based rule (expected ACCEPT or DENY)"),
            ));
        }
    };
    Ok(Some(denied || exceeded == Some(true)))
}

const ENFORCED: [&str; 2] = [
    "jsonPayload.enforcedSecurityPolicy.outcome",
    "jsonPayload.enforcedSecurityPolicy.rateLimitAction.outcome",
];
const PREVIEW: [&str; 2] = [
    "jsonPayload.previewSecurityPolicy.outcome",
    "jsonPayload.previewSecurityPolicy.rateLimitAction.outcome",
];

impl LineFormat for Gclb {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let e: Entry<'_> = serde_json::from_str(line).map_err(|err| {
            (
                json_field::<Entry<'_>>(line, &FIELDS),
                format!("not a Cloud Logging LogEntry: {}", json_error(&err)),
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
        let payload = e.json_payload.as_ref();
        let enforced = match payload.and_then(|p| p.enforced_security_policy.as_ref()) {
            Some(p) => rate_denied(p, ENFORCED)?,
            None => None,
        };
        let preview = match payload.and_then(|p| p.preview_security_policy.as_ref()) {
            Some(p) => rate_denied(p, PREVIEW)?,
            None => None,
        };
        rec.production = Some(match (enforced, preview) {
            (Some(true), _) => Production::Refused,
            (_, Some(true)) => Production::WouldRefuse,
            _ => Production::Admitted,
        });
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
    use super::super::tests_common::{bad_lines, outcomes_in_every_form, record};
    use super::super::{Production, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    /// Entries written from the `LogEntry`, load balancer and Cloud Armor request logging
    /// references: a throttle's and a rate-based ban's denials, a throttle's acceptance, a WAF
    /// rule's deny (not the rate limiter's), a preview throttle, no policy, status 0, addresses
    /// with ports (IPv6 too), JSON escapes and percent-encoding.
    #[test]
    fn reads_the_documented_fields_and_cloud_armors_rate_decisions() {
        let text = concat!(
            r#"{"httpRequest":{"requestMethod":"GET","requestUrl":"https://example.com/api/v1?q=1","requestSize":"120","status":429,"responseSize":"300","userAgent":"curl/8.0","remoteIp":"[2001:db8::4]:443","serverIp":"10.128.0.2","latency":"0.002s"},"jsonPayload":{"@type":"type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry","statusDetails":"denied_by_security_policy","enforcedSecurityPolicy":{"name":"api-throttle","priority":1000,"configuredAction":"THROTTLE","outcome":"DENY","rateLimitAction":{"key":"2001:db8::4","outcome":"RATE_LIMIT_THRESHOLD_EXCEED"}}},"timestamp":"2024-03-01T12:00:00.123456789Z","severity":"WARNING"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"POST","requestUrl":"https://example.com/login","status":403,"remoteIp":"198.51.100.5:51234"},"jsonPayload":{"statusDetails":"denied_by_security_policy","enforcedSecurityPolicy":{"name":"ban","priority":900,"configuredAction":"RATE_BASED_BAN","outcome":"DENY","rateLimitAction":{"key":"198.51.100.5","outcome":"BAN_THRESHOLD_EXCEED"}}},"timestamp":"2024-03-01T12:00:00.5Z"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"GET","requestUrl":"https://example.com/","status":200,"remoteIp":"198.51.100.6"},"jsonPayload":{"statusDetails":"response_sent_by_backend","enforcedSecurityPolicy":{"name":"api-throttle","priority":1000,"configuredAction":"THROTTLE","outcome":"ACCEPT","rateLimitAction":{"key":"198.51.100.6","outcome":"RATE_LIMIT_THRESHOLD_CONFORM"}}},"timestamp":"2024-03-01T12:00:01Z"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"GET","requestUrl":"https://example.com/?id=1%27--","status":403,"remoteIp":"198.51.100.7"},"jsonPayload":{"statusDetails":"denied_by_security_policy","enforcedSecurityPolicy":{"name":"waf","priority":100,"configuredAction":"DENY","outcome":"DENY","preconfiguredExprIds":["owasp-crs-v030001-id942110-sqli"]}},"timestamp":"2024-03-01T12:00:02Z"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"PUT","requestUrl":"https://example.com/items/7","status":200,"remoteIp":"198.51.100.8"},"jsonPayload":{"enforcedSecurityPolicy":{"name":"default","priority":2147483647,"configuredAction":"ALLOW","outcome":"ACCEPT"},"previewSecurityPolicy":{"name":"api-throttle","priority":1000,"configuredAction":"THROTTLE","outcome":"DENY","rateLimitAction":{"key":"198.51.100.8","outcome":"RATE_LIMIT_THRESHOLD_EXCEED"}}},"timestamp":"2024-03-01T12:00:03Z"}"#,
            "\n",
            r#"{"httpRequest":{"requestMethod":"DELETE","requestUrl":"https://example.com/a%2Fb\/c?x=1\u0026y=2","status":0,"remoteIp":"2001:db8::9"},"jsonPayload":{"statusDetails":"client_disconnected_before_any_response"},"timestamp":"2024-03-01T13:00:04+01:00"}"#,
            "\n",
            r#"{"httpRequest":{"requestUrl":"https://example.com/x"},"timestamp":"2024-03-01T12:00:05Z"}"#,
            "\n",
        );
        let options = ReplayOptions {
            format: TraceFormat::Gclb,
            ..ReplayOptions::default()
        };
        let t = 1_709_294_400_000_000_000;
        let s = 1_000_000_000;
        let get = Some(Method::Get);
        assert_eq!(
            outcomes_in_every_form(&options, text)
                .into_iter()
                .map(Result::unwrap)
                .collect::<Vec<_>>(),
            [
                record(
                    1,
                    t + 123_456_789,
                    "2001:db8::4",
                    "/api/v1",
                    get,
                    Some(429),
                    Some(Production::Refused)
                ),
                record(
                    2,
                    t + s / 2,
                    "198.51.100.5",
                    "/login",
                    Some(Method::Post),
                    Some(403),
                    Some(Production::Refused)
                ),
                record(
                    3,
                    t + s,
                    "198.51.100.6",
                    "/",
                    get,
                    Some(200),
                    Some(Production::Admitted)
                ),
                record(
                    4,
                    t + 2 * s,
                    "198.51.100.7",
                    "/",
                    get,
                    Some(403),
                    Some(Production::Admitted)
                ),
                record(
                    5,
                    t + 3 * s,
                    "198.51.100.8",
                    "/items/7",
                    Some(Method::Put),
                    Some(200),
                    Some(Production::WouldRefuse)
                ),
                record(
                    6,
                    t + 4 * s,
                    "2001:db8::9",
                    "/a%2Fb/c",
                    Some(Method::Delete),
                    Some(0),
                    Some(Production::Admitted)
                ),
                record(
                    7,
                    t + 5 * s,
                    "",
                    "/x",
                    None,
                    None,
                    Some(Production::Admitted)
                ),
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Gclb,
            "",
            &[
                (r#"{"httpRequest":{}}"#, Some("timestamp")),
                (
                    r#"{"httpRequest":{},"timestamp":"2024-03-01T12:00:02.1234567891Z"}"#,
                    Some("timestamp"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z"}"#,
                    Some("httpRequest"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{"status":1000}}"#,
                    Some("httpRequest.status"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{"status":"200"}}"#,
                    Some("httpRequest.status"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{},"jsonPayload":{"enforcedSecurityPolicy":{"configuredAction":"THROTTLE","outcome":"MAYBE"}}}"#,
                    Some("jsonPayload.enforcedSecurityPolicy.outcome"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{},"jsonPayload":{"previewSecurityPolicy":{"rateLimitAction":{"outcome":"SOON"}}}}"#,
                    Some("jsonPayload.previewSecurityPolicy.rateLimitAction.outcome"),
                ),
                (
                    r#"{"timestamp":"2024-03-01T12:00:02Z","httpRequest":{"remoteIp":"1.2"#,
                    Some("httpRequest.remoteIp"),
                ),
                ("{", None),
            ],
        );
        assert_eq!(n, 9);
    }
}
