//! A small looped trace's records, kept from its first reading and read back for each further
//! repetition. Reopening builds a reader (a CSV reader's state machine, a HAR document) whose
//! cost a one-line trace pays once per record: a million repetitions took minutes.

use super::{Outcome, Record, RecordReader, trace_error};
use std::path::PathBuf;
use std::sync::Arc;

/// Most records kept: a trace with more pays for reopening over as many records.
pub(super) const MAX_RECORDS: usize = 1 << 16;

/// One read of the first reading: a record, or a malformed line that was skipped.
// Nearly every entry is a record, so boxing them would only add an allocation each.
#[allow(clippy::large_enum_variant)]
pub(super) enum Entry {
    Record(Record),
    Skipped,
}

/// What a looped replay keeps of its trace.
pub(super) enum Tape {
    /// Nothing: the trace is reopened for each repetition.
    Off,
    /// The first reading, being recorded.
    Recording(Vec<Entry>),
    /// The whole first reading, read back for each repetition.
    Ready(Arc<[Entry]>),
}

impl Tape {
    /// Records one read of the first reading; stops recording past [`MAX_RECORDS`].
    pub(super) fn record(&mut self, entry: impl FnOnce() -> Entry) {
        if let Tape::Recording(entries) = self {
            if entries.len() < MAX_RECORDS {
                entries.push(entry());
            } else {
                *self = Tape::Off;
            }
        }
    }

    /// A reader of the first reading for the next repetition, or `None` to reopen the trace.
    pub(super) fn reader(&mut self, path: PathBuf, has_parts: bool) -> Option<TapeReader> {
        if let Tape::Recording(entries) = self {
            *self = Tape::Ready(std::mem::take(entries).into());
        }
        let Tape::Ready(entries) = self else {
            return None;
        };
        Some(TapeReader {
            path,
            entries: entries.clone(),
            at: 0,
            has_parts,
        })
    }
}

/// Reads back a recorded reading, as the trace's own reader read it.
pub(super) struct TapeReader {
    path: PathBuf,
    entries: Arc<[Entry]>,
    at: usize,
    has_parts: bool,
}

impl RecordReader for TapeReader {
    fn read(&mut self, rec: &mut Record) -> crate::error::Result<Outcome> {
        let Some(entry) = self.entries.get(self.at) else {
            return Ok(Outcome::Eof);
        };
        self.at += 1;
        Ok(match entry {
            Entry::Record(r) => {
                // In place: the slot's strings keep their allocations.
                for (to, from) in rec.fields.iter_mut().zip(&r.fields) {
                    to.clone_from(from);
                }
                rec.source.clone_from(&r.source);
                rec.epoch_ns = r.epoch_ns;
                rec.role = r.role;
                rec.status = r.status;
                rec.production = r.production;
                rec.method = r.method;
                rec.cost = r.cost;
                rec.actual_cost = r.actual_cost;
                rec.tokens = r.tokens;
                rec.stream = r.stream;
                rec.forwarded_for.clone_from(&r.forwarded_for);
                rec.line = r.line;
                Outcome::Record
            }
            // Only a skipped line is recorded (any other ended the first reading): counted
            // again, its message unused.
            Entry::Skipped => Outcome::Bad(trace_error(&self.path, 0, None, "skipped line".into())),
        })
    }

    fn has_parts(&self) -> bool {
        self.has_parts
    }
}
