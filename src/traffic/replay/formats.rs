//! Line-based trace formats (JSON Lines and the combined log format) and the format dispatch.

use super::csv_reader::CsvReader;
use super::{Record, ReplayOptions, SameSecond, TraceFormat, field_index, trace_error};
use crate::error::{Error, Result};
use crate::policy::{KeyField, KeySpec};
use crate::time::NANOS_PER_SEC;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// What one read gave.
pub enum Outcome {
    Record,
    Eof,
    /// A malformed line: an error, or a skipped line with `--skip-bad-lines`.
    Bad(Error),
}

/// A stream of trace records.
pub trait RecordReader: Send {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome>;
}

/// Refuses a key the format cannot supply: formats with a fixed set of fields cannot key on the
/// others (checked when the scenario is loaded; `rlsim traffic` reads every field regardless).
pub fn check_key(path: &Path, key_spec: &KeySpec, options: &ReplayOptions) -> Result<()> {
    // Formats with a fixed set of fields cannot key on the others.
    let has: &[KeyField] = match options.format {
        TraceFormat::Clf => &[KeyField::Ip, KeyField::User, KeyField::Endpoint],
        TraceFormat::Har => &[KeyField::ApiKey, KeyField::Endpoint],
        TraceFormat::Csv | TraceFormat::Jsonl => &KeyField::ALL,
    };
    if let Some(field) = key_spec.fields().iter().find(|f| !has.contains(f)) {
        let format = match options.format {
            TraceFormat::Clf => "the combined log format",
            _ => "a HAR file",
        };
        return Err(trace_error(
            path,
            1,
            None,
            format!("the policy keys on `{field}`, which {format} does not record"),
        ));
    }
    Ok(())
}

/// Opens a trace; with `key_spec`, a CSV header must have a column for each of its fields.
pub fn open(
    path: &Path,
    key_spec: Option<&KeySpec>,
    options: &ReplayOptions,
) -> Result<Box<dyn RecordReader>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(match options.format {
        TraceFormat::Csv => Box::new(CsvReader::open(path, file, key_spec)?),
        TraceFormat::Jsonl => Box::new(Lines::new(path, file, Jsonl)),
        TraceFormat::Har => Box::new(super::har::HarReader::open(path, file)),
        TraceFormat::Clf => Box::new(Clf {
            lines: Lines::new(path, file, ClfLine),
            same_second: options.same_second,
            batch: VecDeque::new(),
            spare: Vec::new(),
            lookahead: None,
            deferred: VecDeque::new(),
        }),
    })
}

/// Parses a trace timestamp into nanoseconds since the Unix epoch.
pub fn parse_time(raw: &str) -> std::result::Result<u64, String> {
    if raw.bytes().all(|b| b.is_ascii_digit()) && !raw.is_empty() {
        return raw
            .parse::<u64>()
            .map_err(|_| format!("`{raw}` is too large for nanoseconds"));
    }
    let dt = chrono::DateTime::parse_from_rfc3339(raw).map_err(|e| {
        format!("`{raw}` is neither integer nanoseconds nor an RFC 3339 timestamp ({e})")
    })?;
    to_epoch_ns(dt, raw)
}

fn to_epoch_ns(
    dt: chrono::DateTime<chrono::FixedOffset>,
    raw: &str,
) -> std::result::Result<u64, String> {
    dt.timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("`{raw}` is outside the supported range (1970 to 2262)"))
}

/// Parses one line of a line-based format into a record; `Err((field, message))` if malformed.
trait LineFormat: Send {
    fn parse(
        &self,
        line: &str,
        rec: &mut Record,
    ) -> std::result::Result<(), (Option<&'static str>, String)>;
}

/// Reads a line-based file with a reused buffer, skipping blank lines.
struct Lines<F> {
    path: PathBuf,
    reader: BufReader<File>,
    buf: String,
    line: u64,
    format: F,
}

impl<F: LineFormat> Lines<F> {
    fn new(path: &Path, file: File, format: F) -> Self {
        Lines {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 16, file),
            buf: String::new(),
            line: 0,
            format,
        }
    }

    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        loop {
            self.buf.clear();
            let n = self.reader.read_line(&mut self.buf).map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    trace_error(&self.path, self.line + 1, None, "not valid UTF-8".into())
                } else {
                    Error::io(&self.path, e)
                }
            })?;
            if n == 0 {
                return Ok(Outcome::Eof);
            }
            self.line += 1;
            let text = self.buf.trim();
            if text.is_empty() {
                continue;
            }
            rec.line = self.line;
            for f in &mut rec.fields {
                f.clear();
            }
            return Ok(match self.format.parse(text, rec) {
                Ok(()) => Outcome::Record,
                Err((field, m)) => Outcome::Bad(trace_error(&self.path, self.line, field, m)),
            });
        }
    }
}

/// JSON Lines: `{"time": ..., "ip": ..., "user": ..., "api_key": ..., "endpoint": ...}`;
/// `method`, `status` and any other key are ignored. `time` is like CSV's (a number or a string).
struct Jsonl;

impl LineFormat for Jsonl {
    fn parse(
        &self,
        line: &str,
        rec: &mut Record,
    ) -> std::result::Result<(), (Option<&'static str>, String)> {
        // Borrowed, typed fields: no per-line tree of values (most of the cost of a large file).
        let r: JsonRecord<'_> =
            serde_json::from_str(line).map_err(|e| (None, format!("not a trace record: {e}")))?;
        rec.epoch_ns = match r.time {
            Some(JsonTime::Nanos(n)) => n,
            Some(JsonTime::Text(s)) => parse_time(&s).map_err(|m| (Some("time"), m))?,
            None => return Err((Some("time"), "the record has no `time`".into())),
        };
        for (field, value) in [
            (KeyField::Ip, r.ip),
            (KeyField::User, r.user),
            (KeyField::ApiKey, r.api_key),
            (KeyField::Endpoint, r.endpoint),
        ] {
            if let Some(v) = value {
                rec.fields[field_index(field)].push_str(&v);
            }
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct JsonRecord<'a> {
    #[serde(borrow)]
    time: Option<JsonTime<'a>>,
    #[serde(borrow)]
    ip: Option<Cow<'a, str>>,
    #[serde(borrow)]
    user: Option<Cow<'a, str>>,
    #[serde(borrow)]
    api_key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    endpoint: Option<Cow<'a, str>>,
}

/// `time`: integer nanoseconds or a timestamp string.
enum JsonTime<'a> {
    Nanos(u64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for JsonTime<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = JsonTime<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("integer nanoseconds or an RFC 3339 timestamp")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Nanos(v))
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(
                self,
                v: &str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Text(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl RecordReader for Lines<Jsonl> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

/// One line of the combined log format:
/// `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326 "ref" "ua"`.
/// `ip` is the first field, `user` the third (`-` for none), `endpoint` the request's path.
struct ClfLine;

impl LineFormat for ClfLine {
    fn parse(
        &self,
        line: &str,
        rec: &mut Record,
    ) -> std::result::Result<(), (Option<&'static str>, String)> {
        let mut parts = line.splitn(4, ' ');
        let (Some(ip), Some(_ident), Some(user), Some(rest)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err((
                None,
                "not a combined log line: expected `IP IDENT USER [TIME] \"REQUEST\" ...`".into(),
            ));
        };
        let rest = rest
            .strip_prefix('[')
            .ok_or((Some("time"), "no `[` before the time".to_string()))?;
        let (stamp, rest) = rest
            .split_once(']')
            .ok_or((Some("time"), "no `]` after the time".to_string()))?;
        let dt = chrono::DateTime::parse_from_str(stamp, "%d/%b/%Y:%H:%M:%S %z").map_err(|e| {
            (
                Some("time"),
                format!("`{stamp}` is not like `10/Oct/2000:13:55:36 -0700` ({e})"),
            )
        })?;
        rec.epoch_ns = to_epoch_ns(dt, stamp).map_err(|m| (Some("time"), m))?;
        let request = rest
            .trim_start()
            .strip_prefix('"')
            .and_then(|r| r.split_once('"'))
            .map(|(req, _)| req)
            .ok_or((
                Some("request"),
                "no quoted request after the time".to_string(),
            ))?;
        let path = request.split(' ').nth(1).unwrap_or("");
        rec.fields[field_index(KeyField::Ip)].push_str(ip);
        if user != "-" {
            rec.fields[field_index(KeyField::User)].push_str(user);
        }
        rec.fields[field_index(KeyField::Endpoint)].push_str(path.split('?').next().unwrap_or(""));
        Ok(())
    }
}

/// The combined log format: one-second timestamps, so the requests of one second are read
/// together and spread evenly across it (or kept at its start).
struct Clf {
    lines: Lines<ClfLine>,
    same_second: SameSecond,
    batch: VecDeque<Record>,
    spare: Vec<Record>,
    lookahead: Option<Record>,
    deferred: VecDeque<Error>,
}

impl RecordReader for Clf {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        if self.batch.is_empty()
            && let Some(e) = self.deferred.pop_front()
        {
            return Ok(Outcome::Bad(e));
        }
        if self.batch.is_empty() {
            // Gather the requests of the next second (bad lines are passed on in place).
            let first = match self.lookahead.take() {
                Some(r) => r,
                None => {
                    let mut r = self.spare.pop().unwrap_or_default();
                    match self.lines.read(&mut r)? {
                        Outcome::Record => r,
                        other => return Ok(other),
                    }
                }
            };
            let second = first.epoch_ns;
            self.batch.push_back(first);
            loop {
                let mut r = self.spare.pop().unwrap_or_default();
                match self.lines.read(&mut r)? {
                    Outcome::Record if r.epoch_ns == second => self.batch.push_back(r),
                    Outcome::Record => {
                        self.lookahead = Some(r);
                        break;
                    }
                    Outcome::Eof => break,
                    Outcome::Bad(e) => {
                        // Reported after this second's records, so that skipping it does not
                        // split the second in two.
                        self.spare.push(r);
                        self.deferred.push_back(e);
                    }
                }
            }
            if self.same_second == SameSecond::Spread {
                spread(&mut self.batch);
            }
        }
        let mut out = self.batch.pop_front().expect("filled above");
        std::mem::swap(rec, &mut out);
        self.spare.push(out);
        Ok(Outcome::Record)
    }
}

/// `n` records of one second at `k/n` s after it.
fn spread(batch: &mut VecDeque<Record>) {
    let n = batch.len() as u64;
    for (k, r) in batch.iter_mut().enumerate() {
        r.epoch_ns += k as u64 * NANOS_PER_SEC / n;
    }
}
