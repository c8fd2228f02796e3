//! Replay of recorded traffic, streamed one record at a time in any of several formats.
//!
//! A format reader ([`formats`]) turns lines into [`Record`]s (epoch nanoseconds and the four
//! identity fields); [`ReplaySource`] applies the options: sorting within a bounded window, idle
//! gaps capped, keys sampled by hash, speed, offset and loops. Memory is bounded by the sort
//! window and by the requests of one second (for spreading a one-second-resolution log), never
//! by the file's size. Virtual time 0 is the first record's time rounded down to a multiple of
//! the policy window, which keeps the trace aligned to the window grid fixed windows saw in
//! production (`floor(epoch/W)`); a trace of small nanosecond values (under one window) is used
//! as is.

mod csv_reader;
mod formats;
mod har;

use crate::error::{Error, Location, Result};
use crate::policy::{KeyField, KeySpec};
use crate::time::{NANOS_PER_DAY, Nanos};
use formats::{Outcome, RecordReader};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Arrival, KeySpace, Source};

/// The format of a trace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// CSV with a header: `time` and any of `ip`, `user`, `api_key`, `endpoint`.
    Csv,
    /// One JSON object per line: `time` and any of the same fields (plus ignored others).
    Jsonl,
    /// nginx/Apache combined (or common) log format, one-second resolution.
    Clf,
    /// HAR 1.2, a JSON document: `log.entries[].startedDateTime`.
    Har,
}

impl TraceFormat {
    pub fn parse(name: &str) -> Option<TraceFormat> {
        Some(match name {
            "csv" => TraceFormat::Csv,
            "jsonl" | "ndjson" => TraceFormat::Jsonl,
            "clf" | "combined" => TraceFormat::Clf,
            "har" => TraceFormat::Har,
            _ => return None,
        })
    }

    /// By extension: `.jsonl`/`.ndjson`, `.log`, `.har`, anything else CSV.
    pub fn from_path(path: &Path) -> TraceFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson") => TraceFormat::Jsonl,
            Some("log") => TraceFormat::Clf,
            Some("har") => TraceFormat::Har,
            _ => TraceFormat::Csv,
        }
    }
}

/// What to do with requests logged in the same second (one-second-resolution formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSecond {
    /// `n` requests in one second go at `k/n` s, `k = 0..n`.
    Spread,
    /// All at the start of the second: the burst as the log shows it.
    Together,
}

/// How many lines a replay skipped (`--skip-bad-lines`). Shared by every build of the source;
/// each run stores its count, so the figure is that of one full read.
#[derive(Debug, Clone, Default)]
pub struct SkipCounter(Arc<AtomicU64>);

impl SkipCounter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl PartialEq for SkipCounter {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// The options of a `replay` source.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    pub format: TraceFormat,
    /// 2.0 replays twice as fast.
    pub speed: f64,
    /// Added to every virtual time.
    pub offset: Nanos,
    /// Times to play the trace; each repetition starts at the previous one's last record.
    pub loops: u32,
    /// Fraction of keys kept, chosen by a hash of the key so a key is all in or all out.
    pub sample: f64,
    /// Records up to this much out of order are sorted; 0 refuses any.
    pub sort_window: Nanos,
    /// Idle gaps longer than this are cut to it.
    pub max_gap: Option<Nanos>,
    pub same_second: SameSecond,
    /// Virtual time 0 is the first record's time rounded down to a multiple of this (the
    /// policy window), so fixed windows see the trace's boundaries where production did.
    pub align: Nanos,
    /// Count and skip malformed lines instead of failing.
    pub skip_bad_lines: bool,
    pub skipped: SkipCounter,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            format: TraceFormat::Csv,
            speed: 1.0,
            offset: 0,
            loops: 1,
            sample: 1.0,
            sort_window: 0,
            max_gap: None,
            same_second: SameSecond::Spread,
            align: NANOS_PER_DAY,
            skip_bad_lines: false,
            skipped: SkipCounter::default(),
        }
    }
}

/// One trace record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub epoch_ns: u64,
    /// Indexed like `KeyField::ALL`.
    pub fields: [String; 4],
    pub line: u64,
}

/// Opens `path` and checks that it can supply `time` and every field `key_spec` uses.
pub fn check_trace_header(path: &Path, key_spec: &KeySpec, options: &ReplayOptions) -> Result<()> {
    formats::check_key(path, key_spec, options)?;
    formats::open(path, Some(key_spec), options).map(|_| ())
}

pub(crate) fn trace_error(path: &Path, line: u64, field: Option<&str>, message: String) -> Error {
    Error::Trace {
        location: Location {
            path: path.to_path_buf(),
            line: Some(line as usize),
            column: None,
        },
        field: field.map(str::to_string),
        message,
    }
}

pub struct ReplaySource {
    path: PathBuf,
    reader: Box<dyn RecordReader>,
    source: u16,
    start: Nanos,
    stop: Nanos,
    key_spec: KeySpec,
    options: ReplayOptions,
    /// Records read but not yet released, by (time, reading order, slot in `records`).
    pending: BinaryHeap<Reverse<(u64, u64, usize)>>,
    records: Vec<Option<Record>>,
    free: Vec<usize>,
    seq: u64,
    newest: u64,
    /// The last released record's time and line.
    last: Option<(u64, u64)>,
    first: Option<u64>,
    origin: Option<u64>,
    /// Nanoseconds removed by `max_gap` in this repetition.
    cut: u64,
    /// Added to the times of this repetition; and the last time released.
    loop_shift: u64,
    last_trace_time: u64,
    loop_index: u32,
    skipped: u64,
    eof: bool,
    scratch: String,
}

impl ReplaySource {
    pub fn open(
        path: &Path,
        source: u16,
        start: Nanos,
        stop: Nanos,
        key_spec: &KeySpec,
        options: &ReplayOptions,
    ) -> Result<Self> {
        Ok(ReplaySource {
            path: path.to_path_buf(),
            reader: formats::open(path, None, options)?,
            source,
            start,
            stop,
            key_spec: key_spec.clone(),
            options: options.clone(),
            pending: BinaryHeap::new(),
            records: Vec::new(),
            free: Vec::new(),
            seq: 0,
            newest: 0,
            last: None,
            first: None,
            origin: None,
            cut: 0,
            loop_shift: 0,
            last_trace_time: 0,
            loop_index: 0,
            skipped: 0,
            eof: false,
            scratch: String::new(),
        })
    }

    /// Reads one record into the sort buffer; false at the end of the file.
    fn fill_one(&mut self) -> Result<bool> {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.records.push(None);
            self.records.len() - 1
        });
        let mut rec = self.records[slot].take().unwrap_or_default();
        loop {
            match self.reader.read(&mut rec)? {
                Outcome::Eof => {
                    self.records[slot] = Some(rec);
                    self.free.push(slot);
                    return Ok(false);
                }
                Outcome::Bad(_) if self.options.skip_bad_lines => {
                    self.skipped += 1;
                    self.options
                        .skipped
                        .0
                        .store(self.skipped, Ordering::Relaxed);
                }
                Outcome::Bad(e) => return Err(e),
                Outcome::Record => break,
            }
        }
        if let Some((prev, prev_line)) = self.last
            && rec.epoch_ns < prev
        {
            let why = if self.options.sort_window == 0 {
                "the trace must be in time order (or set `sort_window`)".to_string()
            } else {
                "it is further out of order than `sort_window` allows".to_string()
            };
            return Err(trace_error(
                &self.path,
                rec.line,
                Some("time"),
                format!("earlier than the record at line {prev_line}: {why}"),
            ));
        }
        self.newest = self.newest.max(rec.epoch_ns);
        self.pending.push(Reverse((rec.epoch_ns, self.seq, slot)));
        self.seq += 1;
        self.records[slot] = Some(rec);
        Ok(true)
    }

    /// The next record in time order, or `None` at the end of the trace (all loops).
    fn next_record(&mut self) -> Result<Option<usize>> {
        loop {
            while !self.eof {
                // A record is final once one more than `sort_window` later has been read.
                let ready = self.pending.peek().is_some_and(|Reverse((t, _, _))| {
                    self.options.sort_window == 0
                        || self.newest.saturating_sub(*t) > self.options.sort_window
                });
                if ready {
                    break;
                }
                if !self.fill_one()? {
                    self.eof = true;
                }
            }
            if let Some(Reverse((_, _, slot))) = self.pending.pop() {
                return Ok(Some(slot));
            }
            // End of file: loop again if asked.
            self.loop_index += 1;
            if self.loop_index >= self.options.loops {
                return Ok(None);
            }
            let (Some(first), Some(origin)) = (self.first, self.origin) else {
                return Ok(None);
            };
            // The next repetition's first record lands on this one's last.
            self.loop_shift = self.last_trace_time - (first - origin);
            self.cut = 0;
            self.reader = formats::open(&self.path, None, &self.options)?;
            self.last = None;
            self.newest = 0;
            self.eof = false;
        }
    }

    fn sampled_out(&mut self, rec: &Record) -> bool {
        if self.options.sample >= 1.0 {
            return false;
        }
        let mut buf = std::mem::take(&mut self.scratch);
        self.key_spec.render_with(&mut buf, |field, out| {
            out.push_str(&rec.fields[field_index(field)])
        });
        let h = fnv1a(buf.as_bytes());
        self.scratch = buf;
        (h as f64 / u64::MAX as f64) >= self.options.sample
    }
}

impl Source for ReplaySource {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        while let Some(slot) = self.next_record()? {
            let rec = self.records[slot].take().expect("filled");
            self.free.push(slot);
            let epoch = rec.epoch_ns;
            if let Some((prev, _)) = self.last
                && let Some(max_gap) = self.options.max_gap
                && epoch - prev > max_gap
            {
                self.cut += epoch - prev - max_gap;
            }
            self.last = Some((epoch, rec.line));
            let first = *self.first.get_or_insert(epoch);
            let origin = *self
                .origin
                .get_or_insert(first - first % self.options.align);
            // `cut` is at most the sum of the gaps since `first`, so this cannot underflow.
            let trace_time = epoch - origin - self.cut + self.loop_shift;
            self.last_trace_time = trace_time;
            let scaled = if self.options.speed == 1.0 {
                trace_time
            } else {
                (trace_time as f64 / self.options.speed) as u64
            };
            let time = scaled.saturating_add(self.options.offset);
            let keep = !self.sampled_out(&rec);
            self.records[slot] = Some(rec);
            if time < self.start || !keep {
                continue;
            }
            if time >= self.stop {
                return Ok(None);
            }
            let rec = self.records[slot].as_ref().expect("just put back");
            let key = keys.intern(&self.key_spec, |field| &rec.fields[field_index(field)]);
            let user = &rec.fields[field_index(KeyField::User)];
            // The client is the record's user; without one, the key stands in for it.
            let client = if user.is_empty() {
                keys.intern_client_for_key(key)
            } else {
                keys.intern_client(user)
            };
            return Ok(Some(Arrival::new(time, key, client, self.source)));
        }
        Ok(None)
    }
}

pub(crate) fn field_index(field: KeyField) -> usize {
    KeyField::ALL
        .iter()
        .position(|f| *f == field)
        .expect("known field")
}

/// FNV-1a: a fixed hash, so `sample` keeps the same keys in every rlsim version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
