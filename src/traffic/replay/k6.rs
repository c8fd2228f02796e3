//! k6 results written with `k6 run --out json=FILE`
//! (<https://grafana.com/docs/k6/latest/results-output/real-time/json/>): one JSON object per
//! line, of two types only (k6's `output/json/wrapper.go`): `Metric`, declaring a metric, and
//! `Point`, one sample of one metric (`data.time`, `data.value`, `data.tags`, which is `null`
//! for an untagged sample). Each point of `http_reqs` (a counter k6 adds 1 to per request) is
//! one request; `Metric` lines and other metrics' points are passed over (not bad lines); a line
//! of another `type` (a `Sample`, which k6 never writes) is not k6's and is refused.
//!
//! `time` is the point's `data.time` (RFC 3339, up to nanoseconds), `method` the `method` tag,
//! `endpoint` the path of the `url` tag (JSON escapes undone, percent-encoding kept), `status`
//! the `status` tag (`0`: no response, the request failed), `user` the `vu` tag when the run tags
//! points with it (`--system-tags` with `vu`). An `http_reqs` point must have its value, 1. k6 is
//! the client, so there is no client address and no limiter decision (a 429 is in `status`).

use super::common::{json_error, json_field, rfc3339, url_path};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "k6",
    aliases: &[],
    title: "a k6 JSON result",
    fields: &[KeyField::User, KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 40,
        shows: |head| head.has_all(&["type", "metric"]),
    },
    open: |path, input, _, _| Ok(Box::new(reader(path, input))),
};

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
    value: Option<f64>,
    #[serde(borrow, default)]
    tags: Option<Tags<'a>>,
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

/// The fields a bad line's error may name.
const FIELDS: [&str; 10] = [
    "type",
    "metric",
    "data",
    "data.time",
    "data.value",
    "data.tags",
    "data.tags.method",
    "data.tags.url",
    "data.tags.status",
    "data.tags.vu",
];

impl LineFormat for K6 {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        self.parse_line(line, rec).map(|_| ())
    }

    fn parse_line(&mut self, line: &str, rec: &mut Record) -> std::result::Result<bool, LineError> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| {
            (
                json_field::<Line<'_>>(line, &FIELDS),
                format!("not a k6 JSON output line: {}", json_error(&e)),
            )
        })?;
        match l.kind.as_ref() {
            "Metric" => return Ok(false),
            "Point" if l.metric != "http_reqs" => return Ok(false),
            "Point" => {}
            other => {
                return Err((
                    Some("type"),
                    format!(
                        "`{other}` is not a k6 JSON output line (k6 writes `Metric` and `Point`)"
                    ),
                ));
            }
        }
        let data = l
            .data
            .ok_or((Some("data"), "an http_reqs point has no `data`".to_string()))?;
        let time = data
            .time
            .ok_or((Some("data.time"), "the point has no `time`".to_string()))?;
        rec.epoch_ns = rfc3339(&time).map_err(|m| (Some("data.time"), m))?;
        match data.value {
            Some(1.0) => {}
            Some(v) => {
                return Err((
                    Some("data.value"),
                    format!("an http_reqs point counts one request: `{v}` is not 1"),
                ));
            }
            None => {
                return Err((Some("data.value"), "the point has no `value`".to_string()));
            }
        }
        let Some(tags) = data.tags else {
            return Ok(true);
        };
        rec.method = tags.method.as_deref().and_then(parse_method);
        if let Some(url) = &tags.url {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        }
        rec.status = match tags.status.as_deref() {
            None => None,
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
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{Record, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    fn rec(
        line: u64,
        epoch_ns: u64,
        vu: &str,
        endpoint: &str,
        method: Option<Method>,
        status: Option<u16>,
    ) -> Result<Record, String> {
        Ok(Record {
            epoch_ns,
            fields: ["", vu, "", endpoint].map(String::from),
            status,
            method,
            line,
            ..Record::default()
        })
    }

    /// Lines as k6's JSON output writes them (its `output/json` tests and docs): a `Metric`
    /// line, `http_reqs` points (a failed request's status 0, JSON escapes, percent-encoding,
    /// `null` tags) and other metrics' points, with `null` tags too, passed over.
    #[test]
    fn reads_http_reqs_points_and_passes_over_the_rest() {
        let text = concat!(
            r#"{"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"http_reqs"}"#,
            "\n",
            r#"{"metric":"http_reqs","type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":1,"tags":{"expected_response":"true","group":"","method":"GET","name":"http://test.k6.io/","proto":"HTTP/1.1","scenario":"default","status":"200","url":"http://test.k6.io/news%20feed?p=2","vu":"3"}}}"#,
            "\n",
            r#"{"metric":"http_req_duration","type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":102.2,"tags":{"method":"GET","status":"200","url":"http://test.k6.io/"}}}"#,
            "\n",
            r#"{"metric":"vus","type":"Point","data":{"time":"2017-05-09T12:34:45Z","value":5,"tags":null}}"#,
            "\n",
            r#"{"metric":"http_reqs","type":"Point","data":{"time":"2017-05-09T12:34:46Z","value":1,"tags":{"error":"dial: i/o timeout","error_code":"1211","method":"PATCH","status":"0","url":"http:\/\/test.k6.io\/a\u0026b","vu":"1"},"metadata":{"trace_id":"x"}}}"#,
            "\n",
            r#"{"metric":"http_reqs","type":"Point","data":{"time":"2017-05-09T12:34:47Z","value":1,"tags":null}}"#,
            "\n",
        );
        let options = ReplayOptions {
            format: TraceFormat::K6,
            ..ReplayOptions::default()
        };
        let t = 1_494_333_285_000_000_000;
        assert_eq!(
            outcomes_in_every_form(&options, text),
            [
                rec(
                    2,
                    t + 239_531_499,
                    "3",
                    "/news%20feed",
                    Some(Method::Get),
                    Some(200)
                ),
                rec(
                    5,
                    t + 1_000_000_000,
                    "1",
                    "/a&b",
                    Some(Method::Patch),
                    Some(0)
                ),
                rec(6, t + 2_000_000_000, "", "", None, None),
            ]
        );
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
                    r#"{"type":"Point","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46Z","tags":{}}}"#,
                    Some("data.value"),
                ),
                (
                    r#"{"type":"Point","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46.0000000001Z","value":1}}"#,
                    Some("data.time"),
                ),
                (
                    r#"{"type":"Point","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46Z","value":1,"tags":{"status":"abc"}}}"#,
                    Some("data.tags.status"),
                ),
                (
                    r#"{"type":"Point","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46Z","value":"1"}}"#,
                    Some("data.value"),
                ),
                (
                    r#"{"type":"Sample","metric":"http_reqs","data":{"time":"2017-05-09T12:34:46Z","value":1}}"#,
                    Some("type"),
                ),
                (r#"{"type":"Point","data":{}}"#, None),
                ("k6 says hello", None),
            ],
        );
        assert_eq!(n, 9);
    }
}
