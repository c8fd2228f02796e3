//! CSV traces: a header with `time` and any of `ip`, `user`, `api_key`, `endpoint` (others
//! ignored). `time` is integer nanoseconds since the Unix epoch or an RFC 3339 timestamp.

use super::formats::{Outcome, RecordReader, parse_time};
use super::{Record, field_index, trace_error};
use crate::error::Result;
use crate::policy::{KeyField, KeySpec};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

pub struct CsvReader {
    path: PathBuf,
    reader: csv::Reader<BufReader<File>>,
    record: csv::StringRecord,
    time_col: usize,
    /// Column of each identity field, indexed like `KeyField::ALL`.
    cols: [Option<usize>; 4],
}

impl CsvReader {
    pub fn open(path: &Path, file: File, key_spec: Option<&KeySpec>) -> Result<CsvReader> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(false)
            .trim(csv::Trim::All)
            .from_reader(BufReader::new(file));
        let header_err = |m: String| trace_error(path, 1, None, m);
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
        let mut cols = [None; 4];
        for field in KeyField::ALL {
            cols[field_index(field)] = col(field.name());
            if key_spec.is_some_and(|k| k.uses(field)) && cols[field_index(field)].is_none() {
                return Err(header_err(format!(
                    "the policy keys on `{field}`, but the header has no `{field}` column"
                )));
            }
        }
        Ok(CsvReader {
            path: path.to_path_buf(),
            reader,
            record: csv::StringRecord::new(),
            time_col,
            cols,
        })
    }
}

impl RecordReader for CsvReader {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => return Ok(Outcome::Eof),
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                let message = match e.kind() {
                    csv::ErrorKind::UnequalLengths {
                        expected_len, len, ..
                    } => format!("{len} fields where the header has {expected_len}"),
                    csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
                    _ => e.to_string(),
                };
                let err = trace_error(
                    &self.path,
                    line,
                    None,
                    format!("unreadable record: {message}"),
                );
                // An I/O error ends the file; a malformed record can be skipped.
                return Ok(match e.kind() {
                    csv::ErrorKind::Io(_) => return Err(err),
                    _ => Outcome::Bad(err),
                });
            }
        }
        rec.line = self.record.position().map_or(0, |p| p.line());
        let raw = &self.record[self.time_col];
        rec.epoch_ns = match parse_time(raw) {
            Ok(t) => t,
            Err(m) => {
                return Ok(Outcome::Bad(trace_error(
                    &self.path,
                    rec.line,
                    Some("time"),
                    m,
                )));
            }
        };
        for (i, col) in self.cols.iter().enumerate() {
            rec.fields[i].clear();
            if let Some(c) = col {
                rec.fields[i].push_str(&self.record[*c]);
            }
        }
        Ok(Outcome::Record)
    }
}
