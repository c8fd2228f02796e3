//! Amazon CloudFront standard logs (the legacy "access logs"): W3C extended format, tab-separated,
//! after `#Version:` and `#Fields:` header lines that name the columns. Columns are found by the
//! `#Fields` names, so a log with fewer or reordered fields reads too; without a `#Fields` line
//! the documented order is assumed.
//!
//! `time` is `date` and `time` (UTC, one-second resolution: the requests of one second are
//! placed by `same_second`), `ip` is `c-ip`, `endpoint` `cs-uri-stem`, `method` `cs-method`,
//! `status` `sc-status`, `forwarded_for` `x-forwarded-for`. CloudFront records no limiter
//! decision of its own (an AWS WAF block shows only as a 403).

use super::common::unset;
use super::input::{LineError, LineFormat};
use super::{Record, field_index, parse_method, parse_status};
use crate::policy::KeyField;
use crate::time::NANOS_PER_SEC;

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
const READ: [&str; 7] = [
    "date",
    "time",
    "c-ip",
    "cs-method",
    "cs-uri-stem",
    "sc-status",
    "x-forwarded-for",
];

/// The reader's state: where each read column is.
pub struct CloudFront {
    cols: [Option<usize>; 7],
}

impl Default for CloudFront {
    fn default() -> Self {
        CloudFront {
            cols: columns(DOCUMENTED.iter().copied()),
        }
    }
}

fn columns<'a>(names: impl Iterator<Item = &'a str> + Clone) -> [Option<usize>; 7] {
    READ.map(|want| names.clone().position(|n| n == want))
}

impl LineFormat for CloudFront {
    fn parse(&mut self, line: &str, rec: &mut Record) -> Result<(), LineError> {
        // Room for every documented column and a few AWS may add.
        let mut f = [""; 40];
        let mut n = 0;
        for (slot, value) in f.iter_mut().zip(line.split('\t')) {
            *slot = value;
            n += 1;
        }
        let get = |i: usize| self.cols[i].filter(|&c| c < n).map(|c| f[c]);
        let need = |i: usize| {
            get(i).ok_or((
                Some(READ[i]),
                format!("the line has {n} tab-separated fields and no `{}`", READ[i]),
            ))
        };
        let (date, time) = (need(0)?, need(1)?);
        rec.epoch_ns = date_time(date, time).ok_or((
            Some("date"),
            format!("`{date} {time}` is not `YYYY-MM-DD HH:MM:SS`"),
        ))?;
        if let Some(ip) = get(2).filter(|v| !unset(v)) {
            rec.fields[field_index(KeyField::Ip)].push_str(ip);
        }
        rec.method = get(3).and_then(parse_method);
        if let Some(path) = get(4).filter(|v| !unset(v)) {
            rec.fields[field_index(KeyField::Endpoint)].push_str(path);
        }
        rec.status = parse_status(get(5).unwrap_or("")).map_err(|m| (Some("sc-status"), m))?;
        if let Some(xff) = get(6).filter(|v| !unset(v)) {
            rec.forwarded_for.push_str(xff);
        }
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
    use super::super::TraceFormat;
    use super::super::tests_common::{bad_lines, read_text};
    use crate::traffic::method::Method;

    const HEADER: &str = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end\n";
    const LINE: &str = "2019-12-04\t21:02:31\tLAX1\t392\t192.0.2.100\tGET\td111111abcdef8.cloudfront.net\t/index.html\t200\t-\tMozilla/5.0%20(Windows%20NT%2010.0)\t-\t-\tHit\tSOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==\td111111abcdef8.cloudfront.net\thttps\t23\t0.001\t-\tTLSv1.2\tECDHE-RSA-AES128-GCM-SHA256\tHit\tHTTP/2.0\t-\t-\t11040\t0.001\tHit\ttext/html\t78\t-\t-";

    #[test]
    fn reads_the_documented_fields() {
        let second = LINE
            .replace("\t192.0.2.100\tGET", "\t192.0.2.200\tPOST")
            .replace("\t429\t", "\t")
            .replace("\t0.001\t-\tTLS", "\t0.001\t203.0.113.7\tTLS")
            .replace("/index.html\t200", "/api\t429");
        let recs = read_text(
            TraceFormat::Cloudfront,
            &format!("{HEADER}{LINE}\n{second}\n"),
        );
        // Two requests of one second, spread (the default): 0 and 0.5 s after it.
        assert_eq!(recs[0].epoch_ns, 1_575_493_351_000_000_000);
        assert_eq!(recs[1].epoch_ns, 1_575_493_351_500_000_000);
        assert_eq!(
            recs[0].fields,
            ["192.0.2.100", "", "", "/index.html"].map(String::from)
        );
        assert_eq!(
            (recs[0].status, recs[0].method),
            (Some(200), Some(Method::Get))
        );
        assert_eq!(recs[0].forwarded_for, "");
        assert_eq!(
            recs[1].fields,
            ["192.0.2.200", "", "", "/api"].map(String::from)
        );
        assert_eq!(
            (recs[1].status, recs[1].method),
            (Some(429), Some(Method::Post))
        );
        assert_eq!(recs[1].forwarded_for, "203.0.113.7");
        // The documented order is assumed without a header; a shorter `#Fields` is followed.
        assert_eq!(
            read_text(TraceFormat::Cloudfront, LINE)[0].fields[0],
            "192.0.2.100"
        );
        let short = read_text(
            TraceFormat::Cloudfront,
            "#Fields: time date c-ip\n21:02:31\t2019-12-04\t10.0.0.1\n",
        );
        assert_eq!(short[0].epoch_ns, 1_575_493_351_000_000_000);
        assert_eq!(short[0].fields[0], "10.0.0.1");
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Cloudfront,
            HEADER,
            &[
                (&LINE.replace("2019-12-04", "2019-13-04"), Some("date")),
                (&LINE.replace("21:02:31", "21:02"), Some("date")),
                (&LINE.replace("\t200\t", "\tOK\t"), Some("sc-status")),
                ("2019-12-04", Some("time")),
            ],
        );
        assert_eq!(n, 4);
    }
}
