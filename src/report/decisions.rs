//! The `--decisions` log: one CSV row per request per algorithm, in time order.
//!
//! Algorithms run in parallel, so each writes its rows to a temporary part file (beside the
//! destination, or in the system's temporary directory for standard output, a device or a FIFO);
//! the parts are then merged by `(time, algorithm order)` into the destination, which appears
//! only once complete. Memory stays flat however many decisions there are.

use crate::algorithms::{Decision, Outcome};
use crate::error::{Error, Result};
use crate::output::{Destination, TempFile};
use crate::sim::{DecisionSink, Detail};
use crate::traffic::{Arrival, KeySpace, SourceSpec};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

/// The first six columns are the log's original ones, in their order; the next four are what
/// the response would carry (docs/outputs.md maps them to `RateLimit`, `X-RateLimit-*` and
/// `Retry-After`); the last two say who sent the request: the real client the intent judges
/// (its name) and the source.
pub const HEADER: [&str; 12] = [
    "time_ns",
    "algorithm",
    "key",
    "outcome",
    "delay_ns",
    "retry_after_ns",
    "rule",
    "remaining",
    "reset_ns",
    "warning",
    "client",
    "source",
];

/// Where the merged log goes.
pub struct DecisionLog {
    destination: Destination,
}

/// One algorithm's rows, in a temporary file deleted unless merged.
pub struct DecisionPart {
    algorithm: String,
    /// The sources' names, by index.
    sources: Vec<String>,
    writer: csv::Writer<BufWriter<TempFile>>,
    /// The user's path, for messages.
    path: PathBuf,
    time: itoa::Buffer,
    delay: itoa::Buffer,
    retry: itoa::Buffer,
    remaining: itoa::Buffer,
    reset: itoa::Buffer,
}

impl DecisionLog {
    /// A log that the merged parts will be written to at `destination` (a file, or standard
    /// output).
    pub fn new(destination: Destination) -> Self {
        DecisionLog { destination }
    }

    /// A part file for one algorithm, over `sources`.
    pub fn part(&self, algorithm: &str, sources: &[SourceSpec]) -> Result<DecisionPart> {
        let file = self.destination.scratch_file()?;
        Ok(DecisionPart {
            algorithm: algorithm.to_string(),
            sources: sources.iter().map(|s| s.name.clone()).collect(),
            writer: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(BufWriter::with_capacity(1 << 16, file)),
            path: self.destination.path().to_path_buf(),
            time: itoa::Buffer::new(),
            delay: itoa::Buffer::new(),
            retry: itoa::Buffer::new(),
            remaining: itoa::Buffer::new(),
            reset: itoa::Buffer::new(),
        })
    }

    /// Merges the parts (in algorithm order) into the destination (`stdout` for `-`). A regular
    /// file appears only once complete; the parts are deleted either way.
    pub fn write(&self, parts: Vec<DecisionPart>, stdout: &mut dyn Write) -> Result<()> {
        let io = |e: std::io::Error| self.destination.err(e);
        let mut readers = Vec::with_capacity(parts.len());
        let mut _keep_alive = Vec::with_capacity(parts.len());
        for part in parts {
            let file = part.writer.into_inner().map_err(|e| io(e.into_error()))?;
            let file = file.into_inner().map_err(|e| io(e.into_error()))?;
            let reader = file.reopen().map_err(io)?;
            readers.push(
                csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(BufReader::new(reader)),
            );
            _keep_alive.push(file);
        }
        let out = self.destination.create(stdout)?;
        let mut writer = csv::Writer::from_writer(out);
        let csv_err = |e: csv::Error| match e.into_kind() {
            csv::ErrorKind::Io(e) => io(e),
            other => Error::Internal(format!("decision log: {other:?}")),
        };
        writer.write_record(HEADER).map_err(csv_err)?;
        let mut records: Vec<csv::ByteRecord> = vec![csv::ByteRecord::new(); readers.len()];
        let mut heap = BinaryHeap::with_capacity(readers.len());
        let mut advance = |i: usize, records: &mut Vec<csv::ByteRecord>| -> Result<Option<u64>> {
            if !readers[i]
                .read_byte_record(&mut records[i])
                .map_err(csv_err)?
            {
                return Ok(None);
            }
            let time = std::str::from_utf8(&records[i][0])
                .ok()
                .and_then(|t| t.parse().ok())
                .expect("rlsim wrote this time itself");
            Ok(Some(time))
        };
        for i in 0..records.len() {
            if let Some(t) = advance(i, &mut records)? {
                heap.push(Reverse((t, i)));
            }
        }
        while let Some(Reverse((_, i))) = heap.pop() {
            writer.write_byte_record(&records[i]).map_err(csv_err)?;
            if let Some(t) = advance(i, &mut records)? {
                heap.push(Reverse((t, i)));
            }
        }
        writer
            .into_inner()
            .map_err(|e| io(e.into_error()))?
            .finish()
    }
}

impl DecisionSink for DecisionPart {
    fn record(
        &mut self,
        arrival: &Arrival,
        decision: &Decision,
        detail: &Detail<'_>,
        keys: &KeySpace,
    ) -> Result<()> {
        let (delay, retry) = match decision.outcome {
            Outcome::Allow => (0, None),
            Outcome::Delay(d) => (d, None),
            Outcome::Reject { retry_after } => (0, Some(retry_after)),
        };
        let retry = match retry {
            Some(r) => self.retry.format(r).as_bytes(),
            None => b"",
        };
        self.writer
            .write_record([
                self.time.format(arrival.time).as_bytes(),
                self.algorithm.as_bytes(),
                keys.name(arrival.key).as_bytes(),
                // A dry run's admitted refusal is marked as what it would have been.
                if detail.deciders.would_refuse {
                    b"would_reject"
                } else {
                    decision.outcome.label().as_bytes()
                },
                self.delay.format(delay).as_bytes(),
                retry,
                detail.rule.as_bytes(),
                // No rule applied (bypass, skipped route): no rate-limit headers at all.
                if detail.unlimited {
                    b""
                } else {
                    self.remaining.format(decision.remaining).as_bytes()
                },
                if detail.unlimited {
                    b""
                } else {
                    self.reset.format(decision.reset_at).as_bytes()
                },
                if detail.warned { b"1" } else { b"0" },
                keys.client_name(arrival.client).as_bytes(),
                self.sources[arrival.source as usize].as_bytes(),
            ])
            .map_err(|e| Error::io(&self.path, e.into()))
    }
}

impl DecisionPart {
    /// Flushes buffered rows (errors surface here rather than at merge time).
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush().map_err(|e| Error::io(&self.path, e))
    }
}
