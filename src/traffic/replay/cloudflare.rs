//! Cloudflare Logpush `http_requests` datasets as a job writes them by default (`ndjson`): one
//! JSON object per line with the fields the job selected; any other field is ignored. Fields:
//! <https://developers.cloudflare.com/logs/reference/log-fields/zone/http_requests/>.
//!
//! - `EdgeStartTimestamp` is `time`, in the job's `timestamp_format`
//!   (<https://developers.cloudflare.com/logs/reference/log-output-options/>): `unixnano` (the
//!   default, integer nanoseconds), `unix` (integer seconds) or `rfc3339` (a string, whole
//!   seconds). Seconds have one-second resolution: such a record is placed within its second by
//!   `same_second` ([`super::seconds`]), which the value's *form* decides line by line, never its
//!   value (a `unixnano` time that falls on a whole second is exact). Integer milliseconds and
//!   microseconds (told apart by magnitude) and an RFC 3339 fraction are read as exact.
//! - `ClientIP` is `ip`; `ClientSrcPort` is checked (0 to 65535) and not kept (a record has no
//!   port).
//! - `ClientRequestMethod` is `method`: present but empty is a bad line (every request has a
//!   method); absent, the job did not select it (replayed as `GET`).
//! - `ClientRequestPath`, else the path of `ClientRequestURI`, is `endpoint` (JSON escapes undone,
//!   percent-encoding kept).
//! - `EdgeResponseStatus` is `status` (0: no response was sent).
//! - a `RequestHeaders` custom field `x-forwarded-for` is `forwarded_for`.
//! - the rate limiter's decision is read from the parallel arrays `SecuritySources` and
//!   `SecurityActions` (<https://developers.cloudflare.com/logs/reference/security-fields/>): a
//!   `rateLimit` source's action ([`action_class`]: enforcing refused, `log` would refuse, a
//!   solved or bypassed challenge admitted). A line whose sources hold no `rateLimit` is
//!   admitted: a WAF custom or managed rule, a firewall or bot block is not the rate limiter's.
//!   Legacy names: `FirewallMatchesSources`/`FirewallMatchesActions` (the arrays before 2023) and
//!   `EdgeRateLimitAction` (the previous rate limiting product: empty none, `simulate` would
//!   refuse, any other refused). Without them, `SecurityAction` (the terminating action, its
//!   product unnamed) admits when it is empty or not enforcing and says nothing (no decision)
//!   when it is; a line with none of these fields records no decision. The legacy `WAFAction`
//!   is the WAF's action, not the rate limiter's: not read.

use super::common::{json_error, json_field, rfc3339, url_path};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::seconds::{Placement, Seconds};
use super::{Production, Record, field_index, parse_method, status_code};
use crate::policy::KeyField;
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "cloudflare",
    aliases: &[],
    title: "a Cloudflare http_requests log",
    fields: &[KeyField::Ip, KeyField::Endpoint],
    // The lines whose time is in seconds (the `unix` and `rfc3339` `timestamp_format`s).
    seconds_only: true,
    extensions: &[],
    detect: Detect {
        rank: 20,
        shows: |head| head.has_any(&["EdgeStartTimestamp", "ClientRequestURI", "ClientIP"]),
    },
    open: |path, input, _, options| Ok(Box::new(reader(path, input, Placement::of(options)))),
};

/// The line format; remembers whether the last line's time was whole seconds.
#[derive(Default)]
pub struct Cloudflare {
    whole_second: bool,
}

/// A reader of a Cloudflare log: records with second-resolution times placed by `same_second`.
pub fn reader(
    path: &Path,
    input: Box<dyn BufRead + Send>,
    place: Placement,
) -> Seconds<Cloudflare> {
    Seconds::new(Lines::new(path, input, Cloudflare::default()), place)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Line<'a> {
    #[serde(borrow)]
    edge_start_timestamp: Option<Stamp<'a>>,
    #[serde(rename = "ClientIP", borrow)]
    client_ip: Option<Cow<'a, str>>,
    client_src_port: Option<u64>,
    #[serde(borrow)]
    client_request_method: Option<Cow<'a, str>>,
    #[serde(rename = "ClientRequestURI", borrow)]
    client_request_uri: Option<Cow<'a, str>>,
    #[serde(borrow)]
    client_request_path: Option<Cow<'a, str>>,
    edge_response_status: Option<u64>,
    #[serde(
        default,
        alias = "FirewallMatchesSources",
        deserialize_with = "sources"
    )]
    security_sources: Option<Classes>,
    #[serde(
        default,
        alias = "FirewallMatchesActions",
        deserialize_with = "actions"
    )]
    security_actions: Option<Classes>,
    #[serde(borrow)]
    security_action: Option<Cow<'a, str>>,
    #[serde(borrow)]
    edge_rate_limit_action: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_headers: Option<HashMap<Cow<'a, str>, Cow<'a, str>>>,
}

/// The fields a bad line's error may name.
const FIELDS: [&str; 11] = [
    "EdgeStartTimestamp",
    "ClientIP",
    "ClientSrcPort",
    "ClientRequestMethod",
    "ClientRequestURI",
    "ClientRequestPath",
    "EdgeResponseStatus",
    "SecuritySources",
    "SecurityActions",
    "SecurityAction",
    "RequestHeaders",
];

/// `EdgeStartTimestamp`: an integer (`unixnano`, `unix`) or a string (`rfc3339`).
enum Stamp<'a> {
    Number(u64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Stamp<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Stamp<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer Unix time or an RFC 3339 string")
            }
            fn visit_u64<E>(self, n: u64) -> Result<Stamp<'a>, E> {
                Ok(Stamp::Number(n))
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Stamp<'a>, E> {
                Ok(Stamp::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Stamp<'a>, E> {
                Ok(Stamp::Text(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Integer Unix time in seconds, milliseconds, microseconds or nanoseconds, by magnitude
/// (seconds stay under 10^11 until the year 5138; nanoseconds are over 10^17 after 1973), and
/// whether it is whole seconds.
fn unix(n: u64) -> Result<(u64, bool), String> {
    Ok(match n {
        0..100_000_000_000 => match n.checked_mul(1_000_000_000) {
            Some(ns) => (ns, true),
            None => {
                return Err(format!(
                    "`{n}` seconds is after 2262 (too large for nanoseconds)"
                ));
            }
        },
        100_000_000_000..100_000_000_000_000 => (n * 1_000_000, false),
        100_000_000_000_000..100_000_000_000_000_000 => (n * 1_000, false),
        _ => (n, false),
    })
}

/// What a security action says of the request, as a byte ([`Classes`]).
const ADMIT: u8 = 0;
const REFUSE: u8 = 1;
const WOULD_REFUSE: u8 = 2;
const UNKNOWN: u8 = 3;
/// A `SecuritySources` entry: the rate limiter, or another product.
const OTHER: u8 = 0;
const RATE_LIMIT: u8 = 1;

/// A `SecurityActions` value (<https://developers.cloudflare.com/logs/reference/security-fields/>):
/// an enforcing action (the request was not served: blocked, challenged, closed) refuses; `log`
/// (and the legacy `simulate`) is a dry run, which would have refused; the rest let the request
/// through: `allow`, `skip`, `bypass`, `rewrite`, `unknown` ("take no other action") and a
/// challenge solved or bypassed (the client passed it and was served).
pub(super) fn action_class(raw: &str) -> u8 {
    match raw {
        ""
        | "unknown"
        | "allow"
        | "skip"
        | "bypass"
        | "rewrite"
        | "challengeSolved"
        | "challengeBypassed"
        | "jschallengeSolved"
        | "jschallengeBypassed"
        | "managedChallengeNonInteractiveSolved"
        | "managedChallengeInteractiveSolved"
        | "managedChallengeBypassed" => ADMIT,
        "block"
        | "drop"
        | "challenge"
        | "jschallenge"
        | "managedChallenge"
        | "connectionClose"
        | "forceConnectionClose"
        | "challengeFailed"
        | "jschallengeFailed"
        | "managedChallengeFailed" => REFUSE,
        "log" | "simulate" => WOULD_REFUSE,
        _ => UNKNOWN,
    }
}

fn source_class(raw: &str) -> u8 {
    if raw == "rateLimit" {
        RATE_LIMIT
    } else {
        OTHER
    }
}

/// Entries kept inline; a longer array spills to the heap.
const INLINE: usize = 16;

/// `SecuritySources` or `SecurityActions` as one class byte per entry, read without allocating
/// (the arrays are a handful of entries; a value rlsim does not know is kept as text, rarely).
#[derive(Default)]
struct Classes {
    len: usize,
    inline: [u8; INLINE],
    spill: Vec<u8>,
    /// The first entry of class [`UNKNOWN`]: its index and text.
    unknown: Option<(usize, String)>,
}

impl Classes {
    fn get(&self, i: usize) -> u8 {
        if i < INLINE {
            self.inline[i]
        } else {
            self.spill[i - INLINE]
        }
    }

    fn push(&mut self, class: u8) {
        if self.len < INLINE {
            self.inline[self.len] = class;
        } else {
            self.spill.push(class);
        }
        self.len += 1;
    }
}

/// Reads an array (or `null`) of strings into [`Classes`] by `classify`.
struct ClassesOf(fn(&str) -> u8);

impl<'de> Visitor<'de> for ClassesOf {
    type Value = Option<Classes>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of strings")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Classes::default();
        while let Some((class, text)) = seq.next_element_seed(Entry(self.0))? {
            if class == UNKNOWN && out.unknown.is_none() {
                out.unknown = text.map(|t| (out.len, t));
            }
            out.push(class);
        }
        Ok(Some(out))
    }
}

/// One string of an array, classified (its text kept only when unknown).
struct Entry(fn(&str) -> u8);

impl<'de> DeserializeSeed<'de> for Entry {
    type Value = (u8, Option<String>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Entry {
    type Value = (u8, Option<String>);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        let class = (self.0)(v);
        Ok((class, (class == UNKNOWN).then(|| v.to_string())))
    }
}

fn sources<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Classes>, D::Error> {
    d.deserialize_option(ClassesOf(source_class))
}

fn actions<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Classes>, D::Error> {
    d.deserialize_option(ClassesOf(action_class))
}

/// The more severe of two decisions: refused over would-refuse over admitted.
fn worse(a: Option<Production>, b: Production) -> Option<Production> {
    let rank = |p: Production| match p {
        Production::Refused => 2,
        Production::WouldRefuse => 1,
        _ => 0,
    };
    Some(match a {
        Some(a) if rank(a) >= rank(b) => a,
        _ => b,
    })
}

fn decision_of(class: u8) -> Production {
    match class {
        REFUSE => Production::Refused,
        WOULD_REFUSE => Production::WouldRefuse,
        _ => Production::Admitted,
    }
}

/// The rate limiter's decision the line records (see the module's doc).
fn decision(l: &Line<'_>) -> Result<Option<Production>, LineError> {
    let mut decided = None;
    // A rate limiting rule matched but its action was not logged.
    let mut unsaid = false;
    if let Some(sources) = &l.security_sources {
        decided = Some(Production::Admitted);
        if let Some(actions) = &l.security_actions
            && actions.len != sources.len
        {
            return Err((
                Some("SecurityActions"),
                format!(
                    "{} actions for {} SecuritySources (the arrays are parallel)",
                    actions.len, sources.len
                ),
            ));
        }
        for i in (0..sources.len).filter(|&i| sources.get(i) == RATE_LIMIT) {
            let Some(actions) = &l.security_actions else {
                unsaid = true;
                break;
            };
            match actions.get(i) {
                UNKNOWN => {
                    let text = match &actions.unknown {
                        Some((at, text)) if *at == i => text.as_str(),
                        _ => "?",
                    };
                    return Err((
                        Some("SecurityActions"),
                        format!(
                            "unknown action `{text}` of a rateLimit entry (expected block, \
                             challenge, jschallenge, managedChallenge, connectionClose, log, a \
                             solved or bypassed challenge, allow, skip, bypass or unknown)"
                        ),
                    ));
                }
                class => decided = worse(decided, decision_of(class)),
            }
        }
    }
    if let Some(legacy) = &l.edge_rate_limit_action {
        decided = worse(
            decided,
            match legacy.as_ref() {
                "" => Production::Admitted,
                "simulate" | "log" => Production::WouldRefuse,
                _ => Production::Refused,
            },
        );
    }
    if decided == Some(Production::Refused) {
        return Ok(decided);
    }
    if unsaid {
        return Ok(None);
    }
    if decided.is_none()
        && let Some(terminating) = &l.security_action
    {
        decided = match action_class(terminating) {
            // Some product refused it; without `SecuritySources`, which is not said.
            REFUSE => None,
            UNKNOWN => {
                return Err((
                    Some("SecurityAction"),
                    format!(
                        "unknown action `{terminating}` (expected block, challenge, jschallenge, \
                         managedChallenge, connectionClose, log, allow, skip, bypass or unknown)"
                    ),
                ));
            }
            _ => Some(Production::Admitted),
        };
    }
    Ok(decided)
}

impl LineFormat for Cloudflare {
    fn parse(&mut self, line: &str, rec: &mut Record) -> Result<(), LineError> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| {
            (
                json_field::<Line<'_>>(line, &FIELDS),
                format!("not a Cloudflare http_requests record: {}", json_error(&e)),
            )
        })?;
        let field = Some("EdgeStartTimestamp");
        let (ns, whole) = match &l.edge_start_timestamp {
            Some(Stamp::Number(n)) => unix(*n).map_err(|m| (field, m))?,
            Some(Stamp::Text(t)) => match t.parse::<u64>() {
                Ok(n) => unix(n).map_err(|m| (field, m))?,
                Err(_) => (rfc3339(t).map_err(|m| (field, m))?, !t.contains('.')),
            },
            None => return Err((field, "the record has no `EdgeStartTimestamp`".into())),
        };
        rec.epoch_ns = ns;
        self.whole_second = whole;
        if let Some(port) = l.client_src_port
            && port > u64::from(u16::MAX)
        {
            return Err((
                Some("ClientSrcPort"),
                format!("`{port}` is not a port (0 to 65535)"),
            ));
        }
        if let Some(ip) = &l.client_ip {
            rec.fields[field_index(KeyField::Ip)].push_str(ip);
        }
        if let Some(method) = &l.client_request_method {
            if method.is_empty() {
                return Err((
                    Some("ClientRequestMethod"),
                    "empty (every request has a method)".into(),
                ));
            }
            rec.method = parse_method(method);
        }
        if let Some(uri) = l
            .client_request_path
            .as_ref()
            .or(l.client_request_uri.as_ref())
        {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(uri));
        }
        rec.status = match l.edge_response_status {
            Some(code) => status_code(code).map_err(|m| (Some("EdgeResponseStatus"), m))?,
            None => None,
        };
        rec.production = decision(&l)?;
        if let Some((_, xff)) = l
            .request_headers
            .iter()
            .flatten()
            .find(|(k, _)| k.eq_ignore_ascii_case("x-forwarded-for"))
        {
            rec.forwarded_for.push_str(xff);
        }
        Ok(())
    }

    fn whole_second(&self) -> bool {
        self.whole_second
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form, record};
    use super::super::{Production, ReplayOptions, SameSecond, TraceFormat};
    use crate::traffic::method::Method;

    /// A record as the reader must give it.
    /// Lines written from the `http_requests` field reference and the security fields' values:
    /// each decision of a `rateLimit` entry, blocks by other products, status 0, IPv6 with a
    /// port, JSON escapes and nulls.
    #[test]
    fn reads_the_documented_fields_and_the_rate_limiters_decisions() {
        let text = concat!(
            // 1. a rate limiting rule blocked it; `\/` is a JSON escape, `%2F` stays.
            r#"{"ClientIP":"2001:db8::7","ClientSrcPort":443,"ClientRequestHost":"example.com","ClientRequestMethod":"POST","ClientRequestURI":"\/login?next=%2F","EdgeResponseStatus":429,"EdgeStartTimestamp":1700000000123456789,"SecurityAction":"block","SecurityActions":["block"],"SecurityRuleIDs":["r1"],"SecuritySources":["rateLimit"],"RequestHeaders":{"x-forwarded-for":"203.0.113.9"}}"#,
            "\n",
            // 2. a rate limiting rule's managed challenge.
            r#"{"ClientIP":"198.51.100.7","ClientRequestMethod":"GET","ClientRequestPath":"/a%20b","ClientRequestURI":"/a%20b?x=1","EdgeResponseStatus":403,"EdgeStartTimestamp":1700000000200000000,"SecurityActions":["managedChallenge"],"SecurityRuleIDs":["r2"],"SecuritySources":["rateLimit"]}"#,
            "\n",
            // 3. a rate limiting rule with the log action: its dry run; a managed rule blocked.
            r#"{"ClientIP":"198.51.100.7","ClientRequestMethod":"GET","ClientRequestURI":"/","EdgeResponseStatus":403,"EdgeStartTimestamp":1700000000300000000,"SecurityAction":"block","SecurityActions":["log","block"],"SecurityRuleIDs":["r3","m1"],"SecuritySources":["rateLimit","firewallManaged"]}"#,
            "\n",
            // 4. a WAF custom rule's block is not the rate limiter's.
            r#"{"ClientIP":"198.51.100.8","ClientRequestMethod":"PUT","ClientRequestURI":"/admin","EdgeResponseStatus":403,"EdgeStartTimestamp":1700000000400000000,"SecurityAction":"block","SecurityActions":["block"],"SecurityRuleIDs":["c1"],"SecuritySources":["firewallCustom"]}"#,
            "\n",
            // 5. a challenge the client had passed: served.
            r#"{"ClientIP":"198.51.100.9","ClientRequestMethod":"DELETE","ClientRequestURI":"/cart/1","EdgeResponseStatus":200,"EdgeStartTimestamp":1700000000500000000,"SecurityActions":["managedChallengeBypassed"],"SecurityRuleIDs":["r2"],"SecuritySources":["rateLimit"]}"#,
            "\n",
            // 6. status 0 (no response), no security product matched, a null address.
            r#"{"ClientIP":null,"ClientRequestMethod":"PATCH","ClientRequestURI":"/p","EdgeResponseStatus":0,"EdgeStartTimestamp":1700000000600000000,"SecurityAction":"","SecurityActions":[],"SecurityRuleIDs":[],"SecuritySources":[]}"#,
            "\n",
        );
        let options = ReplayOptions {
            format: TraceFormat::Cloudflare,
            ..ReplayOptions::default()
        };
        let t = 1_700_000_000_000_000_000;
        let mut first = record(
            1,
            t + 123_456_789,
            "2001:db8::7",
            "/login",
            Some(Method::Post),
            Some(429),
            Some(Production::Refused),
        );
        first.forwarded_for = "203.0.113.9".into();
        let (get, admitted) = (Some(Method::Get), Some(Production::Admitted));
        assert_eq!(
            outcomes_in_every_form(&options, text)
                .into_iter()
                .map(Result::unwrap)
                .collect::<Vec<_>>(),
            [
                first,
                record(
                    2,
                    t + 200_000_000,
                    "198.51.100.7",
                    "/a%20b",
                    get,
                    Some(403),
                    Some(Production::Refused)
                ),
                record(
                    3,
                    t + 300_000_000,
                    "198.51.100.7",
                    "/",
                    get,
                    Some(403),
                    Some(Production::WouldRefuse)
                ),
                record(
                    4,
                    t + 400_000_000,
                    "198.51.100.8",
                    "/admin",
                    Some(Method::Put),
                    Some(403),
                    admitted
                ),
                record(
                    5,
                    t + 500_000_000,
                    "198.51.100.9",
                    "/cart/1",
                    Some(Method::Delete),
                    Some(200),
                    admitted
                ),
                record(
                    6,
                    t + 600_000_000,
                    "",
                    "/p",
                    Some(Method::Patch),
                    Some(0),
                    admitted
                ),
            ]
        );
    }

    /// The security arrays' names before 2023, the previous rate limiting product, and lines
    /// whose security fields name no product or are absent.
    #[test]
    fn reads_the_legacy_and_unnamed_decisions() {
        let text = concat!(
            // 1. the arrays' names before 2023.
            r#"{"ClientIP":"192.0.2.1","ClientRequestURI":"/old","EdgeStartTimestamp":1700000000700000000,"FirewallMatchesActions":["jschallenge"],"FirewallMatchesSources":["rateLimit"],"WAFAction":"unknown"}"#,
            "\n",
            // 2. the previous rate limiting product in simulate mode.
            r#"{"ClientIP":"192.0.2.2","EdgeRateLimitAction":"simulate","EdgeRateLimitID":7,"EdgeStartTimestamp":1700000000800000000}"#,
            "\n",
            // 3. a terminating block by an unnamed product: no decision; an unknown method.
            r#"{"ClientIP":"192.0.2.3","ClientRequestMethod":"PROPFIND","EdgeStartTimestamp":1700000000900000000,"SecurityAction":"block"}"#,
            "\n",
            // 4. no terminating action: not refused.
            r#"{"ClientIP":"192.0.2.4","EdgeStartTimestamp":1700000000950000000,"SecurityAction":""}"#,
            "\n",
            // 5. no security field: no decision recorded.
            r#"{"ClientIP":"192.0.2.5","EdgeStartTimestamp":1700000000990000000,"RequestHeaders":null}"#,
            "\n",
        );
        let options = ReplayOptions {
            format: TraceFormat::Cloudflare,
            ..ReplayOptions::default()
        };
        let t = 1_700_000_000_000_000_000;
        let admitted = Some(Production::Admitted);
        assert_eq!(
            outcomes_in_every_form(&options, text)
                .into_iter()
                .map(Result::unwrap)
                .collect::<Vec<_>>(),
            [
                record(
                    1,
                    t + 700_000_000,
                    "192.0.2.1",
                    "/old",
                    None,
                    None,
                    Some(Production::Refused)
                ),
                record(
                    2,
                    t + 800_000_000,
                    "192.0.2.2",
                    "",
                    None,
                    None,
                    Some(Production::WouldRefuse)
                ),
                record(3, t + 900_000_000, "192.0.2.3", "", None, None, None),
                record(4, t + 950_000_000, "192.0.2.4", "", None, None, admitted),
                record(5, t + 990_000_000, "192.0.2.5", "", None, None, None),
            ]
        );
    }

    /// `unix` and `rfc3339` times are whole seconds, placed by `same_second`; a `unixnano` time
    /// on a whole second, a millisecond time and an RFC 3339 fraction are exact.
    #[test]
    fn second_resolution_lines_are_placed_by_same_second() {
        let text = concat!(
            r#"{"EdgeStartTimestamp":"2023-11-14T22:13:20Z"}"#,
            "\n",
            r#"{"EdgeStartTimestamp":"2023-11-14T22:13:20Z"}"#,
            "\n",
            r#"{"EdgeStartTimestamp":1700000000}"#,
            "\n",
            r#"{"EdgeStartTimestamp":1700000001000000000}"#,
            "\n",
            r#"{"EdgeStartTimestamp":"2023-11-14T23:13:21+01:00"}"#,
            "\n",
            r#"{"EdgeStartTimestamp":1700000001}"#,
            "\n",
            r#"{"EdgeStartTimestamp":1700000001700}"#,
            "\n",
            r#"{"EdgeStartTimestamp":"2023-11-14T22:13:21.9Z"}"#,
            "\n",
        );
        let times = |same_second| {
            let options = ReplayOptions {
                format: TraceFormat::Cloudflare,
                same_second,
                ..ReplayOptions::default()
            };
            outcomes_in_every_form(&options, text)
                .into_iter()
                .map(|r| r.map(|r| (r.line, r.epoch_ns - 1_700_000_000_000_000_000)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            times(SameSecond::Spread),
            [
                Ok((1, 0)),
                Ok((2, 333_333_333)),
                Ok((3, 666_666_666)),
                Ok((4, 1_000_000_000)),
                Ok((5, 1_000_000_000)),
                Ok((6, 1_500_000_000)),
                Ok((7, 1_700_000_000)),
                Ok((8, 1_900_000_000)),
            ]
        );
        assert_eq!(
            times(SameSecond::Together),
            [
                Ok((1, 0)),
                Ok((2, 0)),
                Ok((3, 0)),
                Ok((4, 1_000_000_000)),
                Ok((5, 1_000_000_000)),
                Ok((6, 1_000_000_000)),
                Ok((7, 1_700_000_000)),
                Ok((8, 1_900_000_000)),
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Cloudflare,
            "",
            &[
                (r#"{"ClientIP":"1.2.3.4"}"#, Some("EdgeStartTimestamp")),
                (
                    r#"{"EdgeStartTimestamp":"2023-11-14T22:13:20.1234567891Z"}"#,
                    Some("EdgeStartTimestamp"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1.5e9}"#,
                    Some("EdgeStartTimestamp"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"ClientSrcPort":65536}"#,
                    Some("ClientSrcPort"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"ClientRequestMethod":""}"#,
                    Some("ClientRequestMethod"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"EdgeResponseStatus":"200"}"#,
                    Some("EdgeResponseStatus"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"SecuritySources":["waf","rateLimit"],"SecurityActions":["block"]}"#,
                    Some("SecurityActions"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"SecuritySources":["rateLimit"],"SecurityActions":["smite"]}"#,
                    Some("SecurityActions"),
                ),
                (
                    r#"{"EdgeStartTimestamp":1,"ClientIP":"1.2"#,
                    Some("ClientIP"),
                ),
                ("ClientIP=1.2.3.4", None),
            ],
        );
        assert_eq!(n, 10);
    }
}
