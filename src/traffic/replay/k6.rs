//! k6 results written with `k6 run --out json=FILE`: one JSON object per line, `Metric` lines
//! declaring each metric and `Point` lines with one sample each. Each point of `http_reqs` is
//! one request; every other line is passed over (not a bad line).
//!
//! `time` is the point's `data.time` (RFC 3339, nanoseconds), `method` the `method` tag,
//! `endpoint` the path of the `url` tag, `status` the `status` tag (`0`, no answer, is none),
//! `user` the `vu` tag when the run tags points with it (`--system-tags` with `vu`). k6 is the
//! client, so there is no client address and no limiter decision (a 429 is in `status`).

use super::common::{json_error, rfc3339, url_path};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub struct K6;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<K6> {
    Lines::new(path, input, K6)
}

#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    metric: Cow<'a, str>,
    #[serde(borrow)]
    data: Option<Data<'a>>,
}

#[derive(serde::Deserialize)]
struct Data<'a> {
    #[serde(borrow)]
    time: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tags: Tags<'a>,
}

#[derive(serde::Deserialize, Default)]
struct Tags<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    url: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow)]
    vu: Option<Cow<'a, str>>,
}

impl LineFormat for K6 {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        self.parse_line(line, rec).map(|_| ())
    }

    fn parse_line(&mut self, line: &str, rec: &mut Record) -> std::result::Result<bool, LineError> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| {
            (
                None,
                format!("not a k6 JSON output line: {}", json_error(&e)),
            )
        })?;
        if l.kind != "Point" || l.metric != "http_reqs" {
            return Ok(false);
        }
        let data = l
            .data
            .ok_or((Some("data"), "an http_reqs point has no `data`".to_string()))?;
        let time = data
            .time
            .ok_or((Some("data.time"), "the point has no `time`".to_string()))?;
        rec.epoch_ns = rfc3339(&time).map_err(|m| (Some("data.time"), m))?;
        let tags = data.tags;
        rec.method = tags.method.as_deref().and_then(parse_method);
        if let Some(url) = &tags.url {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        }
        rec.status = match tags.status.as_deref() {
            None | Some("0") => None,
            Some(s) => parse_status(s).map_err(|m| (Some("data.tags.status"), m))?,
        };
        if let Some(vu) = &tags.vu {
            rec.fields[field_index(KeyField::User)].push_str(vu);
        }
        Ok(true)
    }
}

impl RecordReader for Lines<K6> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::TraceFormat;
    use super::super::tests_common::{bad_lines, read_text};
    use crate::traffic::method::Method;

    #[test]
    fn reads_http_reqs_points_and_passes_over_the_rest() {
        let text = concat!(
            r#"{"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"http_reqs"}"#,
            "\n",
            r#"{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":1,"tags":{"expected_response":"true","group":"","method":"GET","name":"http://test.k6.io/","proto":"HTTP/1.1","scenario":"default","status":"200","url":"http://test.k6.io/news?p=2","vu":"3"}},"metric":"http_reqs"}"#,
            "\n",
            r#"{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":102.2,"tags":{"method":"GET","status":"200","url":"http://test.k6.io/"}},"metric":"http_req_duration"}"#,
            "\n",
            r#"{"metric":"http_reqs","type":"Point","data":{"time":"2017-05-09T12:34:46Z","value":1,"tags":{"method":"PATCH","status":"0","url":"http://test.k6.io/"}}}"#,
            "\n",
        );
        let r = read_text(TraceFormat::K6, text);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].epoch_ns, 1_494_333_285_239_531_499);
        assert_eq!(r[0].fields, ["", "3", "", "/news"].map(String::from));
        assert_eq!(
            (r[0].method, r[0].status, r[0].line),
            (Some(Method::Get), Some(200), 2)
        );
        assert_eq!(
            (r[1].method, r[1].status, r[1].line),
            (Some(Method::Patch), None, 4)
        );
        assert_eq!(r[1].fields[3], "/");
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::K6,
            "",
            &[
                (r#"{"type":"Point","metric":"http_reqs"}"#, Some("data")),
                (
                    r#"{"type":"Point","metric":"http_reqs","data":{"value":1}}"#,
                    Some("data.time"),
                ),
                (
                    r#"{"type":"Point","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46Z","tags":{"status":"abc"}}}"#,
                    Some("data.tags.status"),
                ),
                ("k6 says hello", None),
            ],
        );
        assert_eq!(n, 4);
    }
}
