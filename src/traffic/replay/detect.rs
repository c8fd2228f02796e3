//! Which format a trace is in, from its first non-empty lines (after decompression), when the
//! source does not say: each native log has a shape no other has (a `#Fields` header, an
//! `EdgeStartTimestamp` key, an Envoy `[time] "request"` start), which its file's
//! [`Detect`](super::format::Detect) tests. A trace that matches none is read by its file's
//! extension ([`TraceFormat::from_path`]).

use super::TraceFormat;
use super::format::Head;
use super::input::{self, TraceData};
use crate::error::Result;
use std::path::Path;
use strum::VariantArray;

/// Lines looked at before falling back to the extension.
const LOOK: usize = 5;
/// Bytes of a line looked at (a HAR document's first line may be the whole file).
const HEAD: usize = 64 << 10;

/// The trace's format by its content, else by its extension.
pub fn detect_format(path: &Path, data: &TraceData) -> Result<TraceFormat> {
    let mut input = input::open(path, data)?;
    let mut buf = Vec::new();
    for _ in 0..LOOK {
        buf.clear();
        if input::read_line_capped(&mut *input, &mut buf, HEAD)
            .map_err(|e| crate::error::Error::io(path, e))?
            == 0
        {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(format) = by_line(line) {
            return Ok(format);
        }
    }
    Ok(TraceFormat::from_path(path))
}

/// The format one line shows, if it shows one: the first, by rank, whose test accepts it.
fn by_line(line: &str) -> Option<TraceFormat> {
    let object;
    let head = if !line.starts_with('{') {
        Head::Text(line)
    } else if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(line) {
        object = o;
        Head::Object(&object)
    } else {
        Head::Fragment(line)
    };
    let mut formats = TraceFormat::VARIANTS.to_vec();
    formats.sort_by_key(|f| f.detect().rank);
    formats.into_iter().find(|f| (f.detect().shows)(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_first_line() {
        let cases = [
            ("#Version: 1.0", TraceFormat::Cloudfront),
            ("#Fields: date time c-ip", TraceFormat::Cloudfront),
            (
                r#"{"EdgeStartTimestamp":1,"ClientIP":"a"}"#,
                TraceFormat::Cloudflare,
            ),
            (r#"{"httpRequest":{},"timestamp":"x"}"#, TraceFormat::Gclb),
            (
                r#"{"type":"Metric","metric":"http_reqs","data":{}}"#,
                TraceFormat::K6,
            ),
            (r#"{"attack":"","seq":0,"code":200}"#, TraceFormat::Vegeta),
            (
                r#"{"start_time":"x","method":"GET"}"#,
                TraceFormat::EnvoyJson,
            ),
            (r#"{"time":1,"ip":"a"}"#, TraceFormat::Jsonl),
            (
                r#"{"msec":"1733112345.123","remote_addr":"a"}"#,
                TraceFormat::NginxJson,
            ),
            (
                r#"{"time_local":"29/Nov/2026:12:00:00 +0000","request":"GET / HTTP/1.1"}"#,
                TraceFormat::NginxJson,
            ),
            (
                "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"ua\" 971211336.123 0.000 PASSED",
                TraceFormat::Nginx,
            ),
            ("{", TraceFormat::Har),
            (r#"{"log": {"version": "1.2","#, TraceFormat::Har),
            (
                r#"[2016-04-15T20:17:00.310Z] "POST /a HTTP/2" 204 - 1 0 2 1 "-" "-" "-" "-" "-""#,
                TraceFormat::Envoy,
            ),
            (
                "https 2018-07-02T22:23:00.186641Z app/lb/1 1.2.3.4:5 - 0 0 0 200 200 1 1 \"GET / HTTP/1.1\"",
                TraceFormat::Alb,
            ),
            (
                "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1",
                TraceFormat::Clf,
            ),
            ("time,ip,endpoint", TraceFormat::Csv),
            (
                "1584630330123456789,200,1203000,0,5,,aGVsbG8=,,0,GET,http://h/,",
                TraceFormat::VegetaCsv,
            ),
        ];
        for (line, format) in cases {
            assert_eq!(by_line(line), Some(format), "{line}");
        }
        assert_eq!(by_line("hello world"), None);
        assert_eq!(by_line("1,200,1203000,0,5,,,,0,GET,http://h/,"), None);
    }

    #[test]
    fn blank_lines_are_passed_and_unknown_content_falls_back_to_the_extension() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.log");
        std::fs::write(&p, "\n\n#Fields: date time\n").unwrap();
        assert_eq!(
            detect_format(&p, &TraceData::default()).unwrap(),
            TraceFormat::Cloudfront
        );
        std::fs::write(&p, "nothing known\n").unwrap();
        assert_eq!(
            detect_format(&p, &TraceData::default()).unwrap(),
            TraceFormat::Clf
        );
    }
}
