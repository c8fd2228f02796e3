//! Amazon CloudFront standard logs (the legacy "access logs"), as documented in "Standard
//! logging reference" (<https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logs-reference.html>):
//! W3C extended format, tab-separated, after `#Version:` and `#Fields:` header lines that name
//! the columns. Columns are found by the `#Fields` names, so a log with fewer or reordered fields
//! reads too; without a `#Fields` line the documented 33 are assumed. A line with fewer fields
//! than the header declares is cut short (malformed, naming the first missing field).
//!
//! Fields read: `time` is `date` and `time` (UTC, one-second resolution: the requests of one
//! second are placed by `same_second`), `ip` is `c-ip`, `endpoint` `cs-uri-stem`, `method`
//! `cs-method`, `status` `sc-status` (`000`: the viewer left before any response, status 0),
//! `forwarded_for` `x-forwarded-for`. Field values are URL-encoded by CloudFront (spaces,
//! controls, `%` and the documented characters): an escape of an ASCII character is undone, so a
//! path keeps the client's own percent-encoding (`%2520` is `%20`); non-ASCII stays encoded.
//!
//! The recorded decision is CloudFront's own, from `x-edge-result-type` and
//! `x-edge-detailed-result-type`: `LimitExceeded` (a CloudFront quota refused the request) is
//! refused; a response CloudFront gave itself (`Hit`, `RefreshHit`, `OriginShieldHit`,
//! `Redirect`, `CapacityExceeded`, an `Error` of its own such as `ClientGeoBlocked`) is admitted
//! by any rate limiter; the origin's answer (`Miss`, an `Error` from the origin) records no
//! decision, so its status speaks as in any log (an origin limiter's 429).

use super::common::unset;
use super::format::{Detect, Format};
use super::input::Lines;
use super::input::{LineError, LineFormat};
use super::seconds::{Placement, Seconds};
use super::{Production, Record, field_index, parse_method, parse_status};
use crate::policy::KeyField;
use crate::time::NANOS_PER_SEC;

pub(super) const FORMAT: Format = Format {
    name: "cloudfront",
    aliases: &[],
    title: "a CloudFront standard log",
    fields: &[KeyField::Ip, KeyField::Endpoint],
    seconds_only: true,
    extensions: &[],
    detect: Detect {
        rank: 10,
        shows: |head| {
            head.text()
                .is_some_and(|line| line.starts_with("#Version:") || line.starts_with("#Fields:"))
        },
    },
    open: |path, input, _, options| {
        Ok(Box::new(Seconds::new(
            Lines::new(path, input, CloudFront::default()),
            Placement::of(options),
        )))
    },
};

/// The columns of a CloudFront standard log, in the documented order.
const DOCUMENTED: [&str; 33] = [
    "date",
    "time",
    "x-edge-location",
    "sc-bytes",
    "c-ip",
    "cs-method",
    "cs(Host)",
    "cs-uri-stem",
    "sc-status",
    "cs(Referer)",
    "cs(User-Agent)",
    "cs-uri-query",
    "cs(Cookie)",
    "x-edge-result-type",
    "x-edge-request-id",
    "x-host-header",
    "cs-protocol",
    "cs-bytes",
    "time-taken",
    "x-forwarded-for",
    "ssl-protocol",
    "ssl-cipher",
    "x-edge-response-result-type",
    "cs-protocol-version",
    "fle-status",
    "fle-encrypted-fields",
    "c-port",
    "time-to-first-byte",
    "x-edge-detailed-result-type",
    "sc-content-type",
    "sc-content-len",
    "sc-range-start",
    "sc-range-end",
];

/// The columns read, in this order.
const READ: [&str; 9] = [
    "date",
    "time",
    "c-ip",
    "cs-method",
    "cs-uri-stem",
    "sc-status",
    "x-forwarded-for",
    "x-edge-result-type",
    "x-edge-detailed-result-type",
];

/// Fields of a line kept for reading: every documented column and a few AWS may add.
const ROOM: usize = 48;

/// The reader's state: where each read column is, and what the header declares.
pub struct CloudFront {
    cols: [Option<usize>; READ.len()],
    /// The declared columns' names (a line with fewer fields is cut short).
    names: Vec<String>,
}

impl Default for CloudFront {
    fn default() -> Self {
        CloudFront {
            cols: columns(DOCUMENTED.iter().copied()),
            names: DOCUMENTED.map(String::from).to_vec(),
        }
    }
}

fn columns<'a>(names: impl Iterator<Item = &'a str> + Clone) -> [Option<usize>; READ.len()] {
    READ.map(|want| names.clone().position(|n| n == want))
}

/// CloudFront's decision from `x-edge-result-type` and `x-edge-detailed-result-type` (see the
/// module's documentation); `None`: the origin answered.
fn decision(result: &str, detailed: &str) -> Option<Production> {
    if result == "LimitExceeded" || detailed == "LimitExceeded" {
        return Some(Production::Refused);
    }
    match result {
        "" | "-" | "Miss" => None,
        // `Error`'s detail says whose: the origin's (`OriginDnsError`, `AbortedOrigin`, `Error`:
        // an error response, from the cache or the origin) or CloudFront's own refusal.
        "Error" if detailed.is_empty() || detailed == "Error" || detailed.contains("Origin") => {
            None
        }
        _ => Some(Production::Admitted),
    }
}

/// Appends a CloudFront field value with its URL-encoding of ASCII characters undone (`%20` is a
/// space, `%25` a `%`); an escape of a byte above 127, or a `%` not followed by two hex digits,
/// is kept as written.
fn push_decoded(out: &mut String, raw: &str) {
    if !raw.contains('%') {
        out.push_str(raw);
        return;
    }
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = raw.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
            && b < 0x80
            && hex.bytes().all(|h| h.is_ascii_hexdigit())
        {
            out.push(char::from(b));
            i += 3;
            continue;
        }
        let next = memchr::memchr(b'%', &bytes[i + 1..]).map_or(bytes.len(), |k| i + 1 + k);
        out.push_str(&raw[i..next]);
        i = next;
    }
}

impl LineFormat for CloudFront {
    fn parse(&mut self, line: &str, rec: &mut Record) -> Result<(), LineError> {
        let mut f = [""; ROOM];
        let mut n = 0;
        for value in line.split('\t') {
            if let Some(slot) = f.get_mut(n) {
                *slot = value;
            }
            n += 1;
        }
        if n < self.names.len() {
            let missing = &self.names[n];
            // The field's name when it is a documented column (an error names a static field).
            let field = DOCUMENTED.iter().find(|d| **d == missing.as_str()).copied();
            return Err((
                field,
                format!(
                    "the line has {n} tab-separated fields where `#Fields` declares {}: it ends before `{missing}`",
                    self.names.len()
                ),
            ));
        }
        let get = |i: usize| self.cols[i].filter(|&c| c < n.min(ROOM)).map(|c| f[c]);
        let (date, time) = (get(0).unwrap_or(""), get(1).unwrap_or(""));
        rec.epoch_ns = date_time(date, time).ok_or((
            Some("date"),
            format!("`{date} {time}` is not `YYYY-MM-DD HH:MM:SS`"),
        ))?;
        if let Some(ip) = get(2).filter(|v| !unset(v)) {
            rec.fields[field_index(KeyField::Ip)].push_str(ip);
        }
        rec.method = get(3).and_then(parse_method);
        if let Some(path) = get(4).filter(|v| !unset(v)) {
            push_decoded(&mut rec.fields[field_index(KeyField::Endpoint)], path);
        }
        rec.status = parse_status(get(5).unwrap_or("")).map_err(|m| (Some("sc-status"), m))?;
        if let Some(xff) = get(6).filter(|v| !unset(v)) {
            push_decoded(&mut rec.forwarded_for, xff);
        }
        rec.production = decision(get(7).unwrap_or(""), get(8).unwrap_or(""));
        Ok(())
    }

    fn parse_line(&mut self, line: &str, rec: &mut Record) -> Result<bool, LineError> {
        if let Some(header) = line.strip_prefix('#') {
            if let Some(names) = header.strip_prefix("Fields:") {
                self.cols = columns(names.split_whitespace());
                if self.cols[0].is_none() || self.cols[1].is_none() {
                    return Err((
                        Some("#Fields"),
                        "the header names no `date` and `time` columns".to_string(),
                    ));
                }
                self.names.clear();
                self.names
                    .extend(names.split_whitespace().map(String::from));
            }
            return Ok(false);
        }
        self.parse(line, rec).map(|()| true)
    }
}

/// `YYYY-MM-DD` and `HH:MM:SS` (UTC) as nanoseconds since the Unix epoch.
fn date_time(date: &str, time: &str) -> Option<u64> {
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let mut t = time.split(':');
    let (h, min, s) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    if d.next().is_some() || t.next().is_some() || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let date = chrono::NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m as u32, day as u32)?;
    let days = u64::try_from(
        date.signed_duration_since(chrono::NaiveDate::default())
            .num_days(),
    )
    .ok()?;
    ((days * 86_400) + h * 3600 + min * 60 + s).checked_mul(NANOS_PER_SEC)
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{Production, Record, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    const HEADER: &str = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end\n";
    /// The documentation's first example line (a cache hit).
    const LINE: &str = "2019-12-04\t21:02:31\tLAX1\t392\t192.0.2.100\tGET\td111111abcdef8.cloudfront.net\t/index.html\t200\t-\tMozilla/5.0%20(Windows%20NT%2010.0)\t-\t-\tHit\tSOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==\td111111abcdef8.cloudfront.net\thttps\t23\t0.001\t-\tTLSv1.2\tECDHE-RSA-AES128-GCM-SHA256\tHit\tHTTP/2.0\t-\t-\t11040\t0.001\tHit\ttext/html\t78\t-\t-";

    /// `LINE` at `time` with a status and the three result types.
    fn line(time: &str, status: &str, result: &str, detailed: &str) -> String {
        LINE.replace("21:02:31", time)
            .replace("\t200\t", &format!("\t{status}\t"))
            .replace("\tHit\tSOX", &format!("\t{result}\tSOX"))
            .replace("\tHit\tHTTP", &format!("\t{result}\tHTTP"))
            .replace("\tHit\ttext", &format!("\t{detailed}\ttext"))
    }

    fn expected(line: u64, epoch_ns: u64, status: u16, production: Option<Production>) -> Record {
        Record {
            epoch_ns,
            fields: ["192.0.2.100", "", "", "/index.html"].map(String::from),
            status: Some(status),
            production,
            method: Some(Method::Get),
            line,
            ..Record::default()
        }
    }

    #[test]
    fn reads_the_documented_fields() {
        let lines = [
            // Two requests of one second (spread, the default: 0 and 0.5 s after it); the
            // documentation's example ends one line with a tab.
            LINE.to_string(),
            format!("{LINE}\t"),
            // IPv6 behind a proxy, a POST, a path URL-encoded by the log (`%2520`: the client's
            // `%20`; `%20`: a space) and non-ASCII left encoded.
            LINE.replace("21:02:31", "21:02:32")
                .replace(
                    "192.0.2.100\tGET",
                    "2001:0db8:85a3:0000:0000:8a2e:0370:7334\tPOST",
                )
                .replace("/index.html", "/a%2520b/c%20d/%E2%82%AC")
                .replace("\t0.001\t-\tTLS", "\t0.001\t203.0.113.7\tTLS"),
            // CloudFront's quota refused it.
            line("21:02:33", "503", "LimitExceeded", "LimitExceeded"),
            // A block that is not a rate limiter's: admitted as far as any limiter goes.
            line("21:02:34", "403", "Error", "ClientGeoBlocked"),
            // The origin's answers: no decision, the status speaks.
            line("21:02:35", "429", "Miss", "Miss"),
            line("21:02:36", "502", "Error", "OriginDnsError"),
            // The viewer left before any response: `000`.
            line("21:02:37", "000", "Error", "ClientHungUpRequest"),
            // A header naming fewer, reordered columns is followed.
            "#Fields: time date c-ip sc-status".to_string(),
            "21:02:38\t2019-12-04\t-\t200".to_string(),
        ];
        let text = format!("{HEADER}{}\n", lines.join("\n"));
        let options = ReplayOptions {
            format: TraceFormat::Cloudfront,
            ..ReplayOptions::default()
        };
        let got: Vec<Record> = outcomes_in_every_form(&options, &text)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let at = |s: u64| (1_575_493_351 + s) * 1_000_000_000;
        let admitted = Some(Production::Admitted);
        let mut ipv6 = expected(5, at(1), 200, admitted);
        ipv6.fields = [
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "",
            "",
            "/a%20b/c d/%E2%82%AC",
        ]
        .map(String::from);
        ipv6.method = Some(Method::Post);
        ipv6.forwarded_for = "203.0.113.7".to_string();
        let short = Record {
            epoch_ns: at(7),
            status: Some(200),
            line: 12,
            ..Record::default()
        };
        assert_eq!(
            got,
            [
                expected(3, at(0), 200, admitted),
                expected(4, at(0) + 500_000_000, 200, admitted),
                ipv6,
                expected(6, at(2), 503, Some(Production::Refused)),
                expected(7, at(3), 403, admitted),
                expected(8, at(4), 429, None),
                expected(9, at(5), 502, None),
                expected(10, at(6), 0, admitted),
                short,
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Cloudfront,
            HEADER,
            &[
                (&LINE[..LINE.rfind('\t').unwrap()], Some("sc-range-end")),
                ("2019-12-04\t21:02:31\tLAX1", Some("sc-bytes")),
                (&LINE.replace("2019-12-04", "2019-13-04"), Some("date")),
                (&LINE.replace("21:02:31", "21:02"), Some("date")),
                (&LINE.replace("\t200\t", "\tOK\t"), Some("sc-status")),
                (&LINE.replace("\t200\t", "\t1000\t"), Some("sc-status")),
            ],
        );
        assert_eq!(n, 6);
    }
}
