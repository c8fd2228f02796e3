//! Replay of a recorded trace (CSV), streamed one record at a time.
//!
//! The trace has a header with a `time` column and any of `ip`, `user`, `api_key`, `endpoint`
//! (other columns are ignored). `time` is integer nanoseconds since the Unix epoch or an RFC 3339
//! timestamp. Virtual time 0 is midnight UTC of the first record's day: this keeps the trace's
//! alignment to wall-clock minutes and hours, which is what fixed windows (`floor(now/W)`) see in
//! production, while a hand-written trace of small nanosecond values is used as is.

use super::{Arrival, KeySpace, Source};
use crate::error::{Error, Location, Result};
use crate::policy::{KeyField, KeySpec};
use crate::time::{NANOS_PER_DAY, Nanos};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

pub struct ReplaySource {
    path: PathBuf,
    reader: csv::Reader<BufReader<File>>,
    record: csv::StringRecord,
    source: u16,
    start: Nanos,
    stop: Nanos,
    key_spec: KeySpec,
    time_col: usize,
    /// Column of each key field the policy uses, indexed like `KeyField::ALL`.
    field_cols: [Option<usize>; 4],
    origin: Option<u64>,
    last: Option<(u64, u64)>,
    done: bool,
}

/// Opens `path` and checks that its header has `time` and every field `key_spec` uses.
pub fn check_trace_header(path: &Path, key_spec: &KeySpec) -> Result<()> {
    open_reader(path, key_spec).map(|_| ())
}

type Opened = (csv::Reader<BufReader<File>>, usize, [Option<usize>; 4]);

fn open_reader(path: &Path, key_spec: &KeySpec) -> Result<Opened> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .trim(csv::Trim::All)
        .from_reader(BufReader::new(file));
    let header_err = |message: String| Error::Trace {
        location: Location {
            path: path.to_path_buf(),
            line: Some(1),
            column: None,
        },
        field: None,
        message,
    };
    let headers = reader
        .headers()
        .map_err(|e| header_err(format!("cannot read the CSV header: {e}")))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let time_col = col("time").ok_or_else(|| {
        header_err(format!(
            "the header has no `time` column (found: {})",
            headers.iter().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let mut field_cols = [None; 4];
    for (i, field) in KeyField::ALL.into_iter().enumerate() {
        field_cols[i] = col(field.name());
        if key_spec.uses(field) && field_cols[i].is_none() {
            return Err(header_err(format!(
                "the policy keys on `{field}`, but the header has no `{field}` column"
            )));
        }
    }
    Ok((reader, time_col, field_cols))
}

impl ReplaySource {
    pub fn open(
        path: &Path,
        source: u16,
        start: Nanos,
        stop: Nanos,
        key_spec: &KeySpec,
    ) -> Result<Self> {
        let (reader, time_col, field_cols) = open_reader(path, key_spec)?;
        Ok(ReplaySource {
            path: path.to_path_buf(),
            reader,
            record: csv::StringRecord::new(),
            source,
            start,
            stop,
            key_spec: key_spec.clone(),
            time_col,
            field_cols,
            origin: None,
            last: None,
            done: false,
        })
    }

    fn error(&self, line: u64, field: Option<&str>, message: String) -> Error {
        Error::Trace {
            location: Location {
                path: self.path.clone(),
                line: Some(line as usize),
                column: None,
            },
            field: field.map(str::to_string),
            message,
        }
    }
}

impl Source for ReplaySource {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        while !self.done {
            let has_record = self.reader.read_record(&mut self.record).map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                self.error(
                    line,
                    None,
                    format!("unreadable record: {}", e.kind_message()),
                )
            })?;
            if !has_record {
                self.done = true;
                break;
            }
            let line = self.record.position().map_or(0, |p| p.line());
            let raw = &self.record[self.time_col];
            let epoch_ns = parse_time(raw).map_err(|m| self.error(line, Some("time"), m))?;
            if let Some((prev, prev_line)) = self.last
                && epoch_ns < prev
            {
                return Err(self.error(
                    line,
                    Some("time"),
                    format!("`{raw}` is earlier than the record at line {prev_line}: the trace must be in time order"),
                ));
            }
            self.last = Some((epoch_ns, line));
            let origin = *self
                .origin
                .get_or_insert(epoch_ns - epoch_ns % NANOS_PER_DAY);
            let time = epoch_ns - origin;
            if time < self.start {
                continue;
            }
            if time >= self.stop {
                self.done = true;
                break;
            }
            let (record, cols) = (&self.record, &self.field_cols);
            let key = keys.intern(&self.key_spec, |field| {
                let i = KeyField::ALL
                    .iter()
                    .position(|f| *f == field)
                    .expect("known field");
                cols[i].map_or("", |c| &record[c])
            });
            // The client is the `user` column when there is one, otherwise the key itself.
            let user_col = cols[KeyField::ALL
                .iter()
                .position(|f| *f == KeyField::User)
                .expect("known field")];
            let client = match user_col {
                Some(c) => keys.intern_client(&record[c]),
                None => keys.intern_client_for_key(key),
            };
            return Ok(Some(Arrival::new(time, key, client, self.source)));
        }
        Ok(None)
    }
}

/// Parses a trace timestamp into nanoseconds since the Unix epoch.
fn parse_time(raw: &str) -> std::result::Result<u64, String> {
    if raw.bytes().all(|b| b.is_ascii_digit()) && !raw.is_empty() {
        return raw
            .parse::<u64>()
            .map_err(|_| format!("`{raw}` is too large for nanoseconds"));
    }
    let dt = chrono::DateTime::parse_from_rfc3339(raw).map_err(|e| {
        format!("`{raw}` is neither integer nanoseconds nor an RFC 3339 timestamp ({e})")
    })?;
    dt.timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("`{raw}` is outside the supported range (1970 to 2262)"))
}

trait KindMessage {
    fn kind_message(&self) -> String;
}

impl KindMessage for csv::Error {
    fn kind_message(&self) -> String {
        match self.kind() {
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => {
                format!("{len} fields where the header has {expected_len}")
            }
            csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
            _ => self.to_string(),
        }
    }
}
