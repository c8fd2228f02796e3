//! vegeta results as `vegeta encode --to csv` writes them: one CSV record per request, no
//! header, twelve columns in the order of vegeta's own encoder and decoder (`NewCSVEncoder`,
//! `NewCSVDecoder` in `lib/results.go`, <https://github.com/tsenart/vegeta/blob/master/lib/results.go>):
//! `timestamp` (Unix nanoseconds), `code`, `latency` (nanoseconds), `bytes_out`, `bytes_in`,
//! `error`, `body` (base64), `attack`, `seq`, `method`, `url`, `headers` (base64).
//!
//! Fields read: `time` is `timestamp` (exact integer nanoseconds), `status` `code` (`0`: the
//! request got no answer, a status of its own), `method` `method`, `endpoint` the path of `url`
//! (percent-encoding kept). `latency`, `bytes_out`, `bytes_in` and `seq` are checked to be the
//! integers vegeta writes; `error`, `attack`, `body` and `headers` are not read. vegeta is the
//! client: there is no client address, no user and no limiter decision. A quoted field may span
//! lines (vegeta's encoder quotes an error with a newline): records are read by the CSV parser,
//! not by line.

use super::common::url_path;
use super::csv_trace::read_record;
use super::format::{Detect, Format};
use super::input::Capped;
use super::{Outcome, Record, RecordReader, field_index, parse_method, status_code, trace_error};
use crate::error::Result;
use crate::policy::KeyField;
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub(super) const FORMAT: Format = Format {
    name: "vegeta_csv",
    aliases: &[],
    title: "a vegeta CSV result",
    fields: &[KeyField::Endpoint],
    seconds_only: false,
    extensions: &[],
    // After CSV: a header with a `time` column is a CSV trace's.
    detect: Detect {
        rank: 80,
        shows: |head| head.text().is_some_and(is_vegeta_csv),
    },
    open: |path, input, _, _| Ok(Box::new(VegetaCsv::open(path, input))),
};

/// A vegeta CSV result: no header, and its first five columns integers, the first Unix
/// nanoseconds (16 digits or more since 1970-04-27).
fn is_vegeta_csv(line: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut cols = line.split(',');
    cols.next().is_some_and(|t| t.len() >= 16 && digits(t))
        && cols.by_ref().take(4).filter(|c| digits(c)).count() == 4
}

/// The columns vegeta writes, in order.
const COLUMNS: [&str; 12] = [
    "timestamp",
    "code",
    "latency",
    "bytes_out",
    "bytes_in",
    "error",
    "body",
    "attack",
    "seq",
    "method",
    "url",
    "headers",
];
const TIMESTAMP: usize = 0;
const CODE: usize = 1;
const METHOD: usize = 9;
const URL: usize = 10;
/// The integer columns rlsim does not use but checks (vegeta's decoder refuses a record
/// without them).
const INTEGERS: [usize; 4] = [2, 3, 4, 8];

pub struct VegetaCsv {
    path: PathBuf,
    reader: csv::Reader<Capped>,
    record: csv::StringRecord,
}

impl VegetaCsv {
    pub fn open(path: &Path, input: Box<dyn BufRead + Send>) -> VegetaCsv {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            // The record's length is checked here, to name the first missing column.
            .flexible(true)
            .trim(csv::Trim::Fields)
            .from_reader(Capped::new(input));
        VegetaCsv {
            path: path.to_path_buf(),
            reader,
            record: csv::StringRecord::new(),
        }
    }

    fn parse(&self, rec: &mut Record) -> std::result::Result<(), (Option<&'static str>, String)> {
        let r = &self.record;
        if r.len() != COLUMNS.len() {
            let field = COLUMNS.get(r.len()).copied();
            return Err((
                field,
                format!(
                    "{} fields where vegeta writes {}{}",
                    r.len(),
                    COLUMNS.len(),
                    field.map_or(String::new(), |f| format!(": it ends before `{f}`"))
                ),
            ));
        }
        rec.epoch_ns = r[TIMESTAMP].parse::<u64>().map_err(|_| {
            (
                Some("timestamp"),
                format!(
                    "`{}` is not Unix nanoseconds (an integer, 0 to 2^64 - 1)",
                    &r[TIMESTAMP]
                ),
            )
        })?;
        let code = r[CODE].parse::<u64>().map_err(|_| {
            (
                Some("code"),
                format!("`{}` is not an HTTP status code", &r[CODE]),
            )
        })?;
        rec.status = status_code(code).map_err(|m| (Some("code"), m))?;
        for k in INTEGERS {
            let ok = match k {
                // Latency is a signed duration in Go; the counts are unsigned.
                2 => r[k].parse::<i64>().is_ok(),
                _ => r[k].parse::<u64>().is_ok(),
            };
            if !ok {
                return Err((Some(COLUMNS[k]), format!("`{}` is not an integer", &r[k])));
            }
        }
        rec.method = parse_method(&r[METHOD]);
        if !r[URL].is_empty() {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(&r[URL]));
        }
        Ok(())
    }
}

impl RecordReader for VegetaCsv {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        let line = match read_record(&self.path, &mut self.reader, &mut self.record)? {
            Ok(line) => line,
            Err(outcome) => return Ok(outcome),
        };
        rec.clear();
        rec.line = line;
        Ok(match self.parse(rec) {
            Ok(()) => Outcome::Record,
            Err((field, m)) => Outcome::Bad(trace_error(&self.path, line, field, m)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, outcomes_in_every_form};
    use super::super::{Record, ReplayOptions, TraceFormat};
    use crate::traffic::method::Method;

    /// A result as vegeta's encoder writes it (`aGVsbG8=` is `hello`; the headers are
    /// `Content-Type: text/plain`).
    const LINE: &str = "1584630330123456789,200,1203000,0,5,,aGVsbG8=,,0,GET,http://localhost:8080/items/7?x=1,Q29udGVudC1UeXBlOiB0ZXh0L3BsYWluDQoNCg==";

    fn record(line: u64, epoch_ns: u64, endpoint: &str, method: Method, status: u16) -> Record {
        Record {
            epoch_ns,
            fields: ["", "", "", endpoint].map(String::from),
            status: Some(status),
            method: Some(method),
            line,
            ..Record::default()
        }
    }

    #[test]
    fn reads_vegetas_columns() {
        let text = [
            LINE.to_string(),
            // No answer: code 0, an error quoted over two lines, an empty body.
            "1584630330200000000,0,0,0,0,\"Post \"\"http://localhost:8080/\"\":\ndial tcp: connection refused\",,a,1,POST,http://localhost:8080/,".to_string(),
            // Refused by the server; a path with percent-encoding, a method rlsim does not model.
            "1584630330300000000,429,900000,12,0,,,a,2,PROPFIND,https://h/a%20b/c?q,".to_string(),
        ]
        .join("\n")
            + "\n";
        let options = ReplayOptions {
            format: TraceFormat::VegetaCsv,
            ..ReplayOptions::default()
        };
        let got: Vec<Record> = outcomes_in_every_form(&options, &text)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let mut patch = record(4, 1_584_630_330_300_000_000, "/a%20b/c", Method::Get, 429);
        patch.method = None;
        assert_eq!(
            got,
            [
                record(1, 1_584_630_330_123_456_789, "/items/7", Method::Get, 200),
                record(2, 1_584_630_330_200_000_000, "/", Method::Post, 0),
                patch,
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let n = bad_lines(
            TraceFormat::VegetaCsv,
            "",
            &[
                ("1584630330123456789,200,1203000", Some("bytes_out")),
                (
                    &LINE.replace("1584630330123456789", "2020-03-19T15:05:30Z"),
                    Some("timestamp"),
                ),
                (
                    &LINE.replace("1584630330123456789", "-1"),
                    Some("timestamp"),
                ),
                (&LINE.replace(",200,", ",42,"), Some("code")),
                (&LINE.replace(",200,", ",70000,"), Some("code")),
                (&LINE.replace(",1203000,", ",1.2ms,"), Some("latency")),
                (&format!("{LINE},extra"), None),
            ],
        );
        assert_eq!(n, 7);
    }
}
