//! CSV traces: a header with `time` and any of `ip`, `user`, `api_key`, `endpoint`, `source`,
//! `role` (others ignored). `time` is integer nanoseconds since the Unix epoch or an RFC 3339
//! timestamp. `source` and `role` are what `rlsim traffic` writes, read back so that a replayed
//! trace keeps its sources apart. `status` (an HTTP status) and `decision` (what production's
//! limiter decided: [`super::Production::parse`]) are production's record, for back-tests;
//! `method` and `x_forwarded_for` are the request's, as `rlsim traffic` writes them.

use super::format::{Detect, Format};
use super::input::{Capped, MAX_LINE};
use super::{
    Outcome, Production, Record, RecordReader, TOKEN_FIELDS, field_index, parse_actual_cost,
    parse_cost, parse_method, parse_role, parse_status, parse_time, trace_error,
};
use crate::error::Result;
use crate::policy::{KeyField, KeySpec};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// CSV with a header; the format of a file no other claims.
pub(super) const FORMAT: Format = Format {
    name: "csv",
    aliases: &[],
    title: "this CSV trace",
    fields: &KeyField::ALL,
    seconds_only: false,
    extensions: &["csv"],
    detect: Detect {
        rank: 70,
        shows: |head| {
            head.text()
                .is_some_and(|line| line.split(',').any(|h| h.trim() == "time"))
        },
    },
    open: |path, input, key_spec, _| Ok(Box::new(CsvReader::open(path, input, key_spec)?)),
};

pub struct CsvReader {
    path: PathBuf,
    reader: csv::Reader<Capped>,
    record: csv::StringRecord,
    time_col: usize,
    /// Column of each identity field, indexed like `KeyField::ALL`.
    cols: [Option<usize>; 4],
    source_col: Option<usize>,
    role_col: Option<usize>,
    status_col: Option<usize>,
    decision_col: Option<usize>,
    method_col: Option<usize>,
    cost_col: Option<usize>,
    actual_cost_col: Option<usize>,
    xff_col: Option<usize>,
    /// The LLM columns present: the token columns ([`TOKEN_FIELDS`]) and `stream`.
    llm_cols: Vec<(&'static str, usize)>,
}

impl CsvReader {
    pub fn open(
        path: &Path,
        input: Box<dyn BufRead + Send>,
        key_spec: Option<&KeySpec>,
    ) -> Result<CsvReader> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(false)
            .trim(csv::Trim::All)
            .from_reader(Capped::new(input));
        let header_err = |m: String| trace_error(path, 1, None, m);
        let headers = reader
            .headers()
            .map_err(|e| header_err(format!("cannot read the CSV header: {e}")))?
            .clone();
        if reader.get_ref().cut.front() == Some(&1) {
            return Err(header_err(format!(
                "the header is longer than {} MiB",
                MAX_LINE >> 20
            )));
        }
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
            source_col: col("source"),
            role_col: col("role"),
            status_col: col("status"),
            decision_col: col("decision"),
            method_col: col("method"),
            cost_col: col("cost"),
            actual_cost_col: col("actual_cost"),
            xff_col: col("x_forwarded_for"),
            llm_cols: TOKEN_FIELDS
                .iter()
                .chain(&["stream"])
                .filter_map(|&name| Some((name, col(name)?)))
                .collect(),
        })
    }
}

impl RecordReader for CsvReader {
    fn has_parts(&self) -> bool {
        self.source_col.is_some() || self.role_col.is_some()
    }

    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        rec.line = match read_record(&self.path, &mut self.reader, &mut self.record)? {
            Ok(line) => line,
            Err(outcome) => return Ok(outcome),
        };
        let line = rec.line;
        let bad = |field, m| Ok(Outcome::Bad(trace_error(&self.path, line, field, m)));
        rec.epoch_ns = match parse_time(&self.record[self.time_col]) {
            Ok(t) => t,
            Err(m) => return bad(Some("time"), m),
        };
        rec.clear();
        if let Some(c) = self.role_col {
            match parse_role(&self.record[c]) {
                Ok(role) => rec.role = role,
                Err(m) => return bad(Some("role"), m),
            }
        }
        if let Some(c) = self.status_col {
            match parse_status(&self.record[c]) {
                Ok(status) => rec.status = status,
                Err(m) => return bad(Some("status"), m),
            }
        }
        if let Some(c) = self.decision_col {
            match Production::parse(&self.record[c]) {
                Ok(decision) => rec.production = decision,
                Err(m) => return bad(Some("decision"), m),
            }
        }
        if let Some(c) = self.source_col {
            rec.source.push_str(&self.record[c]);
        }
        if let Some(c) = self.method_col {
            rec.method = parse_method(&self.record[c]);
        }
        if let Some(c) = self.cost_col {
            match parse_cost(&self.record[c]) {
                Ok(cost) => rec.cost = cost,
                Err(m) => return bad(Some("cost"), m),
            }
        }
        if let Some(c) = self.actual_cost_col {
            match parse_actual_cost(&self.record[c]) {
                Ok(actual) => rec.actual_cost = actual,
                Err(m) => return bad(Some("actual_cost"), m),
            }
        }
        if let Some(c) = self.xff_col {
            rec.forwarded_for.push_str(&self.record[c]);
        }
        for &(name, c) in &self.llm_cols {
            if let Err(m) = rec.set_llm(name, &self.record[c]) {
                return bad(Some(name), m);
            }
        }
        for (i, col) in self.cols.iter().enumerate() {
            if let Some(c) = col {
                rec.fields[i].push_str(&self.record[*c]);
            }
        }
        Ok(Outcome::Record)
    }
}

/// Reads the next record of a CSV trace into `record`: its line, or the outcome to return
/// instead (the end, or a malformed record: unreadable, or with a line cut at `MAX_LINE`). An
/// I/O error is an error.
pub(super) fn read_record(
    path: &Path,
    reader: &mut csv::Reader<Capped>,
    record: &mut csv::StringRecord,
) -> Result<std::result::Result<u64, Outcome>> {
    let result = reader.read_record(record);
    reader.get_mut().since_record = 0;
    match result {
        Ok(false) => return Ok(Err(Outcome::Eof)),
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
            let line = match e.kind() {
                // An I/O error has no position: name the line the reader reached.
                csv::ErrorKind::Io(_) => reader.get_ref().newlines() + 1,
                _ => line,
            };
            let err = trace_error(path, line, None, format!("unreadable record: {message}"));
            // An I/O error ends the file; a malformed record can be skipped.
            return match e.kind() {
                csv::ErrorKind::Io(_) => Err(err),
                _ => Ok(Err(Outcome::Bad(err))),
            };
        }
    }
    let line = record.position().map_or(0, |p| p.line());
    if was_cut(reader, line) {
        return Ok(Err(Outcome::Bad(trace_error(
            path,
            line,
            None,
            format!(
                "line longer than {} MiB (the limit of one trace record)",
                MAX_LINE >> 20
            ),
        ))));
    }
    Ok(Ok(line))
}

/// Whether a line of the record just read, which starts at line `start`, was cut at `MAX_LINE`.
fn was_cut(reader: &mut csv::Reader<Capped>, start: u64) -> bool {
    let end = reader.position().line();
    let cut = &mut reader.get_mut().cut;
    while cut.front().is_some_and(|&l| l < start) {
        cut.pop_front();
    }
    match cut.front() {
        Some(&l) if l < end || l == start => {
            cut.pop_front();
            true
        }
        _ => false,
    }
}
