//! AWS Application Load Balancer access logs, as documented in "Access logs for your Application
//! Load Balancer" (<https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-access-logs.html>):
//! one request per line, space-separated fields, some quoted (`type time elb client:port
//! target:port ... elb_status_code target_status_code ... "request" "user_agent" ...
//! request_creation_time "actions_executed" ...`; fields AWS appends later are ignored, and a
//! log of the older, shorter layout ends after `"request"` or later).
//!
//! Fields read: `time` is `request_creation_time` (when the balancer received the request,
//! microseconds), or `time` (when it answered) in a log without it. `ip` is `client:port`'s
//! address: ALB writes an IPv6 client unbracketed (`2001:db8::1:2817`), so the port is what
//! follows the last `:`. `request` is `METHOD URL PROTOCOL` with the URL as the client sent it
//! (ALB preserves it as is, spaces included): the method is up to the first space, the protocol
//! after the last, the URL between, and `endpoint` its path (percent-encoding kept, a `\"` inside
//! the quotes read as `"`); `- - -` or a `-` method is a request ALB could not parse (no method,
//! no endpoint). `status` is `elb_status_code` (`-`: none). The recorded decision is AWS WAF's,
//! when `actions_executed` has `waf`: WAF as the last action is WAF's rejection (whatever status
//! it answered with: 403 unless a custom response code), refused; WAF followed by another action
//! admitted. A line without `waf` records no decision.

use super::common::{quoted_fields, rfc3339, unset, url_path};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "alb",
    aliases: &[],
    title: "an ALB access log",
    fields: &[KeyField::Ip, KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 40,
        shows: |head| head.text().is_some_and(starts_like_alb),
    },
    open: |path, input, _, _| Ok(Box::new(reader(path, input))),
};

/// A request type, then an RFC 3339 time.
fn starts_like_alb(line: &str) -> bool {
    let mut words = line.split(' ');
    matches!(
        (words.next(), words.next()),
        (Some("http" | "https" | "h2" | "grpcs" | "ws" | "wss"), Some(stamp))
            if chrono::DateTime::parse_from_rfc3339(stamp).is_ok()
    )
}

/// The ALB fields rlsim reads, by position.
const TIME: usize = 1;
const CLIENT: usize = 3;
const ELB_STATUS: usize = 8;
const REQUEST: usize = 12;
const CREATED: usize = 21;
const ACTIONS: usize = 22;

/// Fields read from a line: the ALB fields up to `actions_executed`.
const READ: usize = ACTIONS + 1;

/// The documented names of the fields up to `request`, to name the first one a short line lacks.
const NAMES: [&str; REQUEST + 1] = [
    "type",
    "time",
    "elb",
    "client:port",
    "target:port",
    "request_processing_time",
    "target_processing_time",
    "response_processing_time",
    "elb_status_code",
    "target_status_code",
    "received_bytes",
    "sent_bytes",
    "request",
];

pub struct Alb;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Alb> {
    Lines::new(path, input, Alb)
}

/// `client:port`'s address: the port follows the last `:` (IPv6 unbracketed, as ALB writes it;
/// a bracketed one is read too). `None`: not an address and a port.
fn client_ip(raw: &str) -> Option<&str> {
    let colon = memchr::memrchr(b':', raw.as_bytes())?;
    let (ip, port) = (&raw[..colon], &raw[colon + 1..]);
    let ip = ip
        .strip_prefix('[')
        .and_then(|i| i.strip_suffix(']'))
        .unwrap_or(ip);
    (port.parse::<u16>().is_ok() && ip.parse::<std::net::IpAddr>().is_ok()).then_some(ip)
}

/// `request`'s three parts: method, URL (spaces kept), protocol.
fn request_parts(raw: &str) -> Option<(&str, &str, &str)> {
    let first = memchr::memchr(b' ', raw.as_bytes())?;
    let last = memchr::memrchr(b' ', raw.as_bytes())?;
    (last > first).then(|| (&raw[..first], &raw[first + 1..last], &raw[last + 1..]))
}

/// Appends `path` to `out` with the quoted field's escapes (`\"`, `\\`) undone.
fn push_unescaped(out: &mut String, path: &str) {
    if memchr::memchr(b'\\', path.as_bytes()).is_none() {
        out.push_str(path);
        return;
    }
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
}

impl LineFormat for Alb {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let mut f = [""; READ];
        let n = quoted_fields(line, &mut f)
            .ok_or((None, "a quoted field is not closed".to_string()))?;
        if n <= REQUEST {
            return Err((
                Some(NAMES[n]),
                format!(
                    "the line ends after {n} fields, before `{}` (an ALB log line has at least {})",
                    NAMES[n],
                    REQUEST + 1
                ),
            ));
        }
        let (stamp, name) = match f[CREATED] {
            created if n > CREATED && !unset(created) => (created, "request_creation_time"),
            _ => (f[TIME], "time"),
        };
        rec.epoch_ns = rfc3339(stamp).map_err(|m| (Some(name), m))?;
        if !unset(f[CLIENT]) {
            let ip = client_ip(f[CLIENT]).ok_or_else(|| {
                (
                    Some("client:port"),
                    format!("`{}` is not an IP address and a port", f[CLIENT]),
                )
            })?;
            rec.fields[field_index(KeyField::Ip)].push_str(ip);
        }
        rec.status = parse_status(f[ELB_STATUS]).map_err(|m| (Some("elb_status_code"), m))?;
        let (method, url, _) = request_parts(f[REQUEST]).ok_or_else(|| {
            (
                Some("request"),
                format!("`{}` is not `METHOD URL PROTOCOL`", f[REQUEST]),
            )
        })?;
        rec.method = parse_method(method);
        if !unset(url) && !unset(method) {
            push_unescaped(
                &mut rec.fields[field_index(KeyField::Endpoint)],
                url_path(url),
            );
        }
        let actions = f[ACTIONS];
        let last = memchr::memrchr(b',', actions.as_bytes()).map_or(actions, |i| &actions[i + 1..]);
        if last == "waf" {
            // "If this is the final action, AWS WAF determined that the request should be
            // rejected" (the ALB documentation, `actions_executed`).
            rec.production = Some(Production::Refused);
        } else if actions.split(',').any(|a| a == "waf") {
            rec.production = Some(Production::Admitted);
        }
        Ok(())
    }
}

impl RecordReader for Lines<Alb> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form, record as expected};
    use super::super::{Production, Record, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    /// The documentation's HTTP entry.
    const LINE: &str = r#"http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/api/items?id=3 HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-""#;

    #[test]
    fn reads_the_documented_fields() {
        let lines = [
            LINE.to_string(),
            // IPv6, unbracketed as ALB writes it; a URL with a space, an escaped quote and
            // percent-encoding, sent as is.
            LINE.replace("192.168.131.39:2817", "2001:db8::1:2817")
                .replace("/api/items?id=3", r#"/a%20b/c d/\"q\"?x=1"#),
            // WAF, the last action: rejected (403, or a custom response code).
            LINE.replace(" 200 200 34", " 403 - 34")
                .replace("\"forward\"", "\"waf\"")
                .replace("GET http", "POST http"),
            LINE.replace(" 200 200 34", " 429 - 34")
                .replace("\"forward\"", "\"waf\""),
            // WAF, then forwarded: admitted.
            LINE.replace("\"forward\"", "\"waf,forward\""),
            // A request ALB could not parse, and no response sent (`-`).
            LINE.replace(
                "GET http://www.example.com:80/api/items?id=3 HTTP/1.1",
                "- - -",
            )
            .replace(" 200 200 34", " - - 34"),
            // The older layout, ending at `trace_id`: the time is `time`'s.
            LINE[..LINE.find(r#" "-" "-" 0"#).unwrap()].replace("10.0.0.1:80 ", "- "),
        ];
        let text = lines.join("\n") + "\n";
        let options = ReplayOptions {
            format: TraceFormat::Alb,
            ..ReplayOptions::default()
        };
        let got: Vec<Record> = outcomes_in_every_form(&options, &text)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let created = 1_530_570_168_364_000_000;
        let (get, post) = (Some(Method::Get), Some(Method::Post));
        let (refused, admitted) = (Some(Production::Refused), Some(Production::Admitted));
        assert_eq!(
            got,
            [
                expected(
                    1,
                    created,
                    "192.168.131.39",
                    "/api/items",
                    get,
                    Some(200),
                    None
                ),
                expected(
                    2,
                    created,
                    "2001:db8::1",
                    r#"/a%20b/c d/"q""#,
                    get,
                    Some(200),
                    None
                ),
                expected(
                    3,
                    created,
                    "192.168.131.39",
                    "/api/items",
                    post,
                    Some(403),
                    refused
                ),
                expected(
                    4,
                    created,
                    "192.168.131.39",
                    "/api/items",
                    get,
                    Some(429),
                    refused
                ),
                expected(
                    5,
                    created,
                    "192.168.131.39",
                    "/api/items",
                    get,
                    Some(200),
                    admitted
                ),
                expected(6, created, "192.168.131.39", "", None, None, None),
                expected(
                    7,
                    1_530_570_180_186_641_000,
                    "192.168.131.39",
                    "/api/items",
                    get,
                    Some(200),
                    None
                ),
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let bad = bad_lines(
            TraceFormat::Alb,
            "",
            &[
                (
                    "http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5",
                    Some("target:port"),
                ),
                (
                    &LINE.replace("2018-07-02T22:22:48.364000Z", "yesterday"),
                    Some("request_creation_time"),
                ),
                (
                    &LINE.replace(
                        "2018-07-02T22:22:48.364000Z",
                        "2018-07-02T22:22:48.3640000001Z",
                    ),
                    Some("request_creation_time"),
                ),
                (
                    &LINE.replace(" 200 200 34", " 2000 200 34"),
                    Some("elb_status_code"),
                ),
                (
                    &LINE.replace("192.168.131.39:2817", "192.168.131.39"),
                    Some("client:port"),
                ),
                (
                    &LINE.replace("192.168.131.39:2817", "2001:db8::1:99999"),
                    Some("client:port"),
                ),
                (&LINE.replace(" HTTP/1.1\"", "\""), Some("request")),
                (
                    "http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 \"GET / HTTP/1.1",
                    None,
                ),
            ],
        );
        assert_eq!(bad, 8);
    }
}
