//! [`ReplaySource`]: a trace's records, in time order, as arrivals.

use super::{Outcome, Record, RecordReader, ReplayOptions, field_index, open, trace_error};
use crate::error::Result;
use crate::policy::KeySpec;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace, Source};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

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
    /// The latest time read so far, and its line.
    newest: u64,
    newest_line: u64,
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
            reader: open(path, None, options)?,
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
            newest_line: 0,
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
                    // Every part of a split trace reads every line: the first one counts.
                    if self.options.skipped_lines().is_some() {
                        self.options.skipped.set(self.skipped);
                    }
                }
                Outcome::Bad(e) => return Err(e),
                Outcome::Record => break,
            }
        }
        // Out of order by more than `sort_window` behind the latest record read is an error,
        // whether or not the records in between have been released yet.
        if self.seq > 0 && self.newest - rec.epoch_ns.min(self.newest) > self.options.sort_window {
            let why = if self.options.sort_window == 0 {
                "the trace must be in time order (or set `sort_window`)"
            } else {
                "it is further out of order than `sort_window` allows"
            };
            return Err(trace_error(
                &self.path,
                rec.line,
                Some("time"),
                format!(
                    "earlier than the record at line {} by {}: {why}",
                    self.newest_line,
                    crate::time::format_duration(self.newest - rec.epoch_ns),
                ),
            ));
        }
        if self.seq == 0 || rec.epoch_ns >= self.newest {
            self.newest = rec.epoch_ns;
            self.newest_line = rec.line;
        }
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
            self.reader = open(&self.path, None, &self.options)?;
            self.last = None;
            self.newest = 0;
            self.seq = 0;
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

    /// Whether the record belongs to another part of a split trace.
    fn other_part(&self, rec: &Record) -> bool {
        self.options
            .part
            .as_ref()
            .is_some_and(|p| p.source != rec.source || p.role != self.options.role_of(rec))
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
            // `cut` is at most the sum of the gaps since `first`, so this cannot underflow; a
            // repetition can push times past what a u64 holds, which is refused by name.
            let Some(trace_time) = (epoch - origin - self.cut).checked_add(self.loop_shift) else {
                return Err(trace_error(
                    &self.path,
                    rec.line,
                    Some("time"),
                    format!(
                        "repetition {} of `loop` puts this record past the largest virtual time (about 584 years)",
                        self.loop_index + 1
                    ),
                ));
            };
            self.last_trace_time = trace_time;
            let scaled = if self.options.speed == 1.0 {
                trace_time
            } else {
                (trace_time as f64 / self.options.speed) as u64
            };
            let time = scaled.saturating_add(self.options.offset);
            let keep = !self.other_part(&rec) && !self.sampled_out(&rec);
            self.records[slot] = Some(rec);
            if time < self.start || !keep {
                continue;
            }
            if time >= self.stop {
                return Ok(None);
            }
            let rec = self.records[slot].as_ref().expect("just put back");
            // The client is the record's user; without one, the key stands in for it.
            let (key, client) =
                keys.intern_with_client(&self.key_spec, |field| &rec.fields[field_index(field)]);
            return Ok(Some(Arrival::new(time, key, client, self.source)));
        }
        Ok(None)
    }
}

/// FNV-1a: a fixed hash, so `sample` keeps the same keys in every rlsim version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
