//! vegeta results as `vegeta encode --to json` writes them (vegeta's `Result` in
//! `lib/results.go`, <https://github.com/tsenart/vegeta/blob/master/lib/results.go>): one JSON
//! object per line per request (`attack`, `seq`, `code`, `timestamp`, `latency`, `bytes_out`,
//! `bytes_in`, `error`, `body`, `method`, `url`, `headers`).
//!
//! Fields read: `time` is `timestamp` (RFC 3339, nanoseconds), `method` `method`, `endpoint`
//! the path of `url` (percent-encoding kept), `status` `code` (`0`: the request got no answer, a
//! status of its own). vegeta is the client: there is no client address, no user and no limiter
//! decision. `vegeta encode --to csv` is [`super::vegeta_csv`].

use super::common::{json_error, json_field, rfc3339, url_path};
use super::format::{Detect, Format};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Record, RecordReader, field_index, parse_method, status_code};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "vegeta",
    aliases: &[],
    title: "a vegeta result",
    fields: &[KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    detect: Detect {
        rank: 50,
        shows: |head| head.has_all(&["attack", "seq", "code"]),
    },
    open: |path, input, _, _| Ok(Box::new(reader(path, input))),
};

pub struct Vegeta;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Vegeta> {
    Lines::new(path, input, Vegeta)
}

/// The keys a result is read from, to name the one a line gets wrong.
const FIELDS: [&str; 4] = ["timestamp", "code", "method", "url"];

#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    code: Option<u64>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    url: Option<Cow<'a, str>>,
}

impl LineFormat for Vegeta {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| {
            (
                json_field::<Line<'_>>(line, &FIELDS),
                format!("not a vegeta JSON result: {}", json_error(&e)),
            )
        })?;
        let stamp = l.timestamp.ok_or((
            Some("timestamp"),
            "the result has no `timestamp`".to_string(),
        ))?;
        rec.epoch_ns = rfc3339(&stamp).map_err(|m| (Some("timestamp"), m))?;
        rec.status = status_code(l.code.unwrap_or(0)).map_err(|m| (Some("code"), m))?;
        rec.method = l.method.as_deref().and_then(parse_method);
        if let Some(url) = &l.url {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        }
        Ok(())
    }
}

impl RecordReader for Lines<Vegeta> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::TraceFormat;
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use crate::traffic::method::Method;

    #[test]
    fn reads_the_documented_fields() {
        let text = concat!(
            r#"{"attack":"","seq":0,"code":200,"timestamp":"2020-03-19T16:05:30.123456789+01:00","latency":1203000,"bytes_out":0,"bytes_in":12,"error":"","body":"aGVsbG8=","method":"GET","url":"http://localhost:8080/items/7?x","headers":{"Content-Type":["text/plain"]}}"#,
            "\n",
            r#"{"attack":"a","seq":1,"code":0,"timestamp":"2020-03-19T15:05:30.2Z","latency":0,"bytes_out":0,"bytes_in":0,"error":"dial tcp: connection refused","body":null,"method":"POST","url":"http://localhost:8080/","headers":null}"#,
            "\n",
        );
        let options = super::super::ReplayOptions {
            format: TraceFormat::Vegeta,
            ..Default::default()
        };
        let r: Vec<_> = outcomes_in_every_form(&options, text)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(r[0].epoch_ns, 1_584_630_330_123_456_789);
        assert_eq!(r[0].fields, ["", "", "", "/items/7"].map(String::from));
        assert_eq!((r[0].method, r[0].status), (Some(Method::Get), Some(200)));
        assert_eq!(r[1].epoch_ns, 1_584_630_330_200_000_000);
        assert_eq!((r[1].method, r[1].status), (Some(Method::Post), Some(0)));
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::Vegeta,
            "",
            &[
                (r#"{"code":200}"#, Some("timestamp")),
                (r#"{"timestamp":"yesterday"}"#, Some("timestamp")),
                (
                    r#"{"timestamp":"2020-03-19T15:05:30.1234567891Z"}"#,
                    Some("timestamp"),
                ),
                (
                    r#"{"timestamp":"2020-03-19T15:05:30Z","code":42}"#,
                    Some("code"),
                ),
                (
                    r#"{"timestamp":"2020-03-19T15:05:30Z","code":600}"#,
                    Some("code"),
                ),
                ("GET http://x/", None),
            ],
        );
        assert_eq!(n, 6);
    }
}
