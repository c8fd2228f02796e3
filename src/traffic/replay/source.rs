//! [`ReplaySource`]: a trace's records, in time order, as arrivals.

use super::tape::{Entry, Tape};
use super::{
    Logged, Outcome, Record, RecordReader, ReplayOptions, field_index, open_ahead, trace_error,
};
use crate::algorithms::KeyId;
use crate::error::Result;
use crate::policy::{KeyField, KeySpec};
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId, KeySpace, Source, reads_forwarded};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

/// How a replay's reading of its trace ended ([`Source::replay_end`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayEnd {
    /// Records read from the trace, every repetition's (every line for each part of a split
    /// trace).
    pub records: u64,
    /// Records replayed as this source's requests.
    pub replayed: u64,
    /// The record the source stopped at, its time at or past its `stop`, with records left
    /// unread after it; `None` when the trace ended first.
    pub stopped: Option<Stopped>,
}

/// The first record a replay did not replay because its time is at or past the source's stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Its virtual time.
    pub time: Nanos,
    /// Its time in the log (ns since the Unix epoch, or as written for small values).
    pub logged: u64,
    /// Its line in the trace file, from 1.
    pub line: u64,
    /// Its repetition of `loop`, from 0.
    pub repetition: u32,
}

/// A `replay` source: its trace's records in `[start, stop)`, in time order, as arrivals (the
/// trace read and parsed on a second thread; `loop`, `speed` and gaps as its options say).
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
    /// Records read but not yet released (and free slots, in `free`), read in place.
    records: Vec<Record>,
    /// The local key number of the record in each slot of `records`, when the reader numbers
    /// keys ([`RecordReader::local_key`]).
    locals: Vec<Option<u32>>,
    /// By local key number: the key and client it was interned as (`UNSEEN`: not yet), for
    /// the keyspace at `keys_at`.
    interned: Vec<(KeyId, ClientId)>,
    keys_at: usize,
    /// The local numbers do not read what the keyspace at `keys_at` reads: every record is
    /// interned in it.
    unnumbered: bool,
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
    /// Malformed lines skipped so far (`--skip-bad-lines`).
    skipped: u64,
    eof: bool,
    scratch: String,
    /// A small looped trace's first reading, read back for the next repetitions.
    tape: Tape,
    has_parts: bool,
    /// The slot of the record last returned as an arrival ([`Source::last_record`]).
    released: Option<usize>,
    /// What [`Source::replay_end`] reports.
    end: ReplayEnd,
}

impl ReplaySource {
    /// Opens the trace at `path` for source number `source`, replaying within `[start, stop)` with
    /// keys made by `key_spec`. Fails if the file cannot be opened or its format read.
    pub fn open(
        path: &Path,
        source: u16,
        start: Nanos,
        stop: Nanos,
        key_spec: &KeySpec,
        options: &ReplayOptions,
    ) -> Result<Self> {
        let reader = open_ahead(path, options, Some(key_spec))?;
        // Held in memory because small and looped (see `TraceData::load`): read it once.
        let tape = if options.loops > 1 && options.data.held() {
            Tape::Recording(Vec::new())
        } else {
            Tape::Off
        };
        Ok(ReplaySource {
            path: path.to_path_buf(),
            has_parts: reader.has_parts(),
            tape,
            reader,
            source,
            start,
            stop,
            key_spec: key_spec.clone(),
            options: options.clone(),
            pending: BinaryHeap::new(),
            records: Vec::new(),
            locals: Vec::new(),
            interned: Vec::new(),
            keys_at: 0,
            unnumbered: false,
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
            released: None,
            end: ReplayEnd::default(),
        })
    }

    /// Reads one record into the sort buffer; false at the end of the file.
    fn fill_one(&mut self) -> Result<bool> {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.records.push(Record::default());
            self.locals.push(None);
            self.records.len() - 1
        });
        let rec = &mut self.records[slot];
        loop {
            match self.reader.read(rec)? {
                Outcome::Eof => {
                    self.free.push(slot);
                    return Ok(false);
                }
                Outcome::Bad(_) if self.options.skip_bad_lines => {
                    self.tape.record(|| Entry::Skipped);
                    self.skipped += 1;
                }
                Outcome::Bad(mut e) => {
                    if let crate::error::Error::Trace { message, .. } = &mut e {
                        message.push_str("; pass --skip-bad-lines to skip malformed lines");
                    }
                    return Err(e);
                }
                Outcome::Record => {
                    self.tape.record(|| Entry::Record(rec.clone()));
                    self.end.records += 1;
                    break;
                }
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
        self.locals[slot] = self.reader.local_key();
        // The interned ids of a few records on: out of cache at a few hundred thousand keys.
        if let Some(ahead) = self.reader.local_key_ahead(PREFETCH_AHEAD) {
            crate::prefetch::prefetch(&self.interned, ahead as usize);
        }
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
            self.reader = match self.tape.reader(self.path.clone(), self.has_parts) {
                Some(tape) => Box::new(tape),
                None => open_ahead(&self.path, &self.options, Some(&self.key_spec))?,
            };
            // A new read numbers its keys anew.
            self.interned.clear();
            self.last = None;
            self.newest = 0;
            self.seq = 0;
            self.eof = false;
        }
    }

    /// The key and client of the record in `slot`: interned once per local key number, then
    /// read from `interned` (one small array instead of the keyspace's table).
    fn intern(&mut self, slot: usize, keys: &mut KeySpace) -> (KeyId, ClientId) {
        let rec = &self.records[slot];
        // The client is the record's user; without one, the key stands in for it.
        let intern = |keys: &mut KeySpace| {
            let value_of = |f| rec.fields[field_index(f)].as_str();
            keys.intern_with_client(&self.key_spec, value_of, &rec.forwarded_for)
        };
        let Some(local) = self.locals[slot] else {
            return intern(keys);
        };
        // A source serves one keyspace; should it be handed another, its ids are not these.
        let at = keys as *const KeySpace as usize;
        if at != self.keys_at {
            self.keys_at = at;
            self.interned.clear();
            // Local numbers that leave out a header this keyspace reads do not tell keys apart.
            let numbered = reads_forwarded(&self.key_spec, self.options.identity_paths);
            self.unnumbered = keys.reads_forwarded(&self.key_spec) && !numbered;
        }
        if self.unnumbered {
            return intern(keys);
        }
        let local = local as usize;
        if let Some(&ids) = self.interned.get(local)
            && ids != UNSEEN
        {
            return ids;
        }
        let ids = intern(keys);
        if self.interned.len() <= local {
            self.interned.resize(local + 1, UNSEEN);
        }
        self.interned[local] = ids;
        ids
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
            // Released: the slot is free for the next read, after this call.
            self.free.push(slot);
            let rec = &self.records[slot];
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
            let keep = !self.other_part(rec)
                && !sampled_out(&self.key_spec, self.options.sample, &mut self.scratch, rec);
            if time < self.start || !keep {
                continue;
            }
            if time >= self.stop {
                self.end.stopped = Some(Stopped {
                    time,
                    logged: epoch,
                    line: rec.line,
                    repetition: self.loop_index,
                });
                return Ok(None);
            }
            let method = self.records[slot].method.unwrap_or_default().code();
            let cost = self.records[slot].cost.unwrap_or(1);
            if let (true, Some(name)) = (cost > 1, &self.options.unweighed) {
                return Err(trace_error(
                    &self.path,
                    self.records[slot].line,
                    Some("cost"),
                    format!(
                        "this request weighs {cost}, but contender `{name}` cannot weigh a \
                         request: drop it, or count its requests (`unit = \"requests\"` on its rule)"
                    ),
                ));
            }
            let refund = match self.records[slot].actual_cost {
                Some(actual) if actual > cost => {
                    return Err(trace_error(
                        &self.path,
                        self.records[slot].line,
                        Some("actual_cost"),
                        format!(
                            "the request settled {actual} but asked for {cost} (its `cost`, 1 \
                             if none): an actual cost is at most the cost charged up front"
                        ),
                    ));
                }
                Some(actual) => cost - actual,
                None => 0,
            };
            let tokens = self.records[slot].llm().map_err(|(field, m)| {
                trace_error(&self.path, self.records[slot].line, Some(field), m)
            })?;
            let (key, client) = self.intern(slot, keys);
            self.released = Some(slot);
            let mut arrival = Arrival::new(time, key, client, self.source);
            arrival.method = method;
            arrival.cost = cost;
            arrival.refund = refund;
            arrival.tokens = tokens.unwrap_or_default();
            arrival.stream = self.records[slot].stream;
            let rec = &self.records[slot];
            if rec.production.is_some() || rec.status.is_some() {
                let route = keys.intern_route(&rec.fields[field_index(KeyField::Endpoint)]);
                arrival.logged = Logged::new(rec.production, rec.status, route);
            }
            self.end.replayed += 1;
            return Ok(Some(arrival));
        }
        Ok(None)
    }

    /// Lines skipped in one full read of the trace; 0 for a part of a split trace that is not
    /// its first (every part reads every line, and the first reports them).
    fn skipped_lines(&self) -> u64 {
        if self.options.reports_skipped() {
            self.skipped
        } else {
            0
        }
    }

    fn last_record(&self) -> Option<&Record> {
        // The slot is free but not reused before the next read.
        self.released.map(|slot| &self.records[slot])
    }

    fn replay_end(&self) -> Option<ReplayEnd> {
        Some(self.end)
    }
}

/// Whether `sample` (under 1) leaves out the record's key, by a hash of the key's text.
fn sampled_out(key_spec: &KeySpec, sample: f64, scratch: &mut String, rec: &Record) -> bool {
    if sample >= 1.0 {
        return false;
    }
    key_spec.render_with(scratch, |field, out| {
        out.push_str(&rec.fields[field_index(field)])
    });
    (fnv1a(scratch.as_bytes()) as f64 / u64::MAX as f64) >= sample
}

/// How many records ahead to ask for a record's interned ids.
const PREFETCH_AHEAD: usize = 16;

/// A local key number not interned yet.
const UNSEEN: (KeyId, ClientId) = (KeyId::MAX, ClientId::MAX);

/// FNV-1a: a fixed hash, so `sample` keeps the same keys in every rlsim version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::super::{SameSecond, TraceData, TraceFormat, input::CHUNK};
    use super::*;
    use crate::policy::KeyField;
    use rand::{Rng, SeedableRng};

    /// Every arrival of a replay (time, key, client), and the error that ended it if one did,
    /// with the lines skipped.
    type Replayed = (Vec<(Nanos, String, String)>, Option<String>, u64);

    fn replay(path: &Path, spec: &KeySpec, options: &ReplayOptions) -> Replayed {
        let mut keys = KeySpace::new();
        let mut source = ReplaySource::open(path, 0, 0, Nanos::MAX, spec, options).unwrap();
        let mut out = Vec::new();
        loop {
            match source.next_arrival(&mut keys) {
                Ok(Some(a)) => out.push((
                    a.time,
                    keys.name(a.key).to_string(),
                    keys.client_name(a.client).to_string(),
                )),
                Ok(None) => return (out, None, source.skipped_lines()),
                Err(e) => return (out, Some(e.to_string()), source.skipped_lines()),
            }
        }
    }

    /// The key an `xff` identity trusting 10.0.0.0/8 gives (nginx's `set_real_ip_from
    /// 10.0.0.0/8; real_ip_header X-Forwarded-For; real_ip_recursive on`).
    fn real_ip() -> KeySpec {
        use crate::policy::identity::{IdentityFn, Rule};
        KeySpec::identity(IdentityFn::new(Rule::XffTrusted(vec![
            "10.0.0.0/8".parse().unwrap(),
        ])))
    }

    /// A CSV trace of `rounds` rounds of three clients behind one proxy (10.0.0.1), each naming
    /// its client in `X-Forwarded-For` when `header`, one request every 10 ms.
    fn behind_one_proxy(rounds: usize, header: bool) -> String {
        let mut csv = String::from(if header {
            "time,ip,x_forwarded_for\n"
        } else {
            "time,ip\n"
        });
        let mut t = 0u64;
        for _ in 0..rounds {
            for client in ["203.0.113.1", "203.0.113.2", "198.51.100.3, 10.0.0.9"] {
                t += 10_000_000;
                match header {
                    true => csv.push_str(&format!("{t},10.0.0.1,\"{client}\"\n")),
                    false => csv.push_str(&format!("{t},10.0.0.1\n")),
                }
            }
        }
        csv
    }

    /// The distinct keys of a replay, in order of first appearance, with their requests.
    fn keys_of(replayed: &Replayed) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for (_, key, _) in &replayed.0 {
            match out.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += 1,
                None => out.push((key.clone(), 1)),
            }
        }
        out
    }

    /// A replayed record's X-Forwarded-For reaches the identity function as a synthetic
    /// request's does: three clients behind one trusted proxy are three keys (the second
    /// entry of the third client's header, 10.0.0.9, is a trusted hop and skipped); without
    /// the header they are the proxy's one key. The same through the parsing thread (a file of
    /// over 512 KiB, its keys numbered there), and nothing of it under a key on `ip`.
    #[test]
    fn a_replayed_forwarded_for_reaches_the_identity_function() {
        let dir = tempfile::tempdir().unwrap();
        let replay_csv = |csv: String, spec: &KeySpec| {
            let path = dir.path().join("t.csv");
            std::fs::write(&path, &csv).unwrap();
            let options = ReplayOptions::default();
            let out = replay(&path, spec, &options);
            assert_eq!(out.1, None);
            keys_of(&out)
        };
        let three = |n| {
            vec![
                ("203.0.113.1".to_string(), n),
                ("203.0.113.2".to_string(), n),
                ("198.51.100.3".to_string(), n),
            ]
        };
        assert_eq!(replay_csv(behind_one_proxy(4, true), &real_ip()), three(4));
        let one = vec![("10.0.0.1".to_string(), 12)];
        assert_eq!(replay_csv(behind_one_proxy(4, false), &real_ip()), one);
        let ip = KeySpec::new(vec![KeyField::Ip]).unwrap();
        assert_eq!(replay_csv(behind_one_proxy(4, true), &ip), one);
        // Large enough for the parsing thread, which numbers each (address, header) apart.
        let big = behind_one_proxy(20_000, true);
        assert!(big.len() > 2 * CHUNK);
        assert_eq!(replay_csv(big, &real_ip()), three(20_000));
    }

    /// A combined log of `lines` random lines: a few hundred addresses, some users, bad lines,
    /// blank ones, CRLF, a last line without newline; seconds that go back by up to `back`.
    fn random_log(seed: u64, lines: usize, back: u64) -> Vec<u8> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut bytes = Vec::new();
        let mut second = 1000u64;
        for _ in 0..lines {
            second += rng.random_range(0..3);
            let at = second - rng.random_range(0..=back).min(second);
            let ip = format!(
                "10.0.{}.{}",
                rng.random_range(0..3),
                rng.random_range(0..200)
            );
            let user = ["-", "-", "-", "ann", "bob"][rng.random_range(0..5)];
            let path = ["/a", "/b?x=1", "/c/d"][rng.random_range(0..3)];
            let good = format!(
                "{ip} - {user} [29/Nov/2026:{:02}:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"agent with some length to it\"",
                at / 3600 % 24,
                at / 60 % 60,
                at % 60
            );
            match rng.random_range(0..500) {
                0 => bytes.extend_from_slice(b"not a record"),
                1 => {}
                2 => bytes.extend_from_slice(&[0xff, 0xfe]),
                3 => bytes.extend_from_slice(format!("{good}\r").as_bytes()),
                _ => bytes.extend_from_slice(good.as_bytes()),
            }
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(
            b"10.9.9.9 - - [29/Nov/2026:23:59:59 +0000] \"GET /z HTTP/1.1\" 200 1",
        );
        bytes
    }

    /// A file large enough to be read and parsed on a second thread replays exactly like the
    /// same bytes held in memory (read and parsed in place), under every option that changes
    /// what is read: bad lines failing or skipped, sorting, loops, sampling, one part of a
    /// split trace, keys on one or two fields, requests of a second spread or together.
    #[test]
    fn the_parsing_thread_replays_like_the_plain_reader() {
        let dir = tempfile::tempdir().unwrap();
        let ip = KeySpec::new(vec![KeyField::Ip]).unwrap();
        let ip_endpoint = KeySpec::new(vec![KeyField::Ip, KeyField::Endpoint]).unwrap();
        let endpoint = KeySpec::new(vec![KeyField::Endpoint]).unwrap();
        let mut threaded = 0;
        for seed in 0..4u64 {
            let back = [0, 0, 2, 2][seed as usize];
            let bytes = random_log(seed, 9000, back);
            assert!(bytes.len() > 2 * CHUNK);
            let path = dir.path().join(format!("t{seed}.log"));
            std::fs::write(&path, &bytes).unwrap();
            let cases: [(&KeySpec, ReplayOptions); 6] = [
                (&ip, ReplayOptions::default()),
                (
                    &ip,
                    ReplayOptions {
                        skip_bad_lines: true,
                        ..Default::default()
                    },
                ),
                (
                    &ip_endpoint,
                    ReplayOptions {
                        skip_bad_lines: true,
                        sort_window: 3 * crate::time::NANOS_PER_SEC,
                        loops: 3,
                        same_second: SameSecond::Together,
                        ..Default::default()
                    },
                ),
                (
                    &ip,
                    ReplayOptions {
                        skip_bad_lines: true,
                        sort_window: 3 * crate::time::NANOS_PER_SEC,
                        sample: 0.5,
                        ..Default::default()
                    },
                ),
                (
                    &ip,
                    ReplayOptions {
                        skip_bad_lines: true,
                        sort_window: 3 * crate::time::NANOS_PER_SEC,
                        abusive: vec!["10.0.1.0/24".parse().unwrap()],
                        part: Some(super::super::Part {
                            source: String::new(),
                            role: crate::traffic::Role::Abusive,
                            first: true,
                        }),
                        ..Default::default()
                    },
                ),
                (
                    &endpoint,
                    ReplayOptions {
                        skip_bad_lines: true,
                        sort_window: 3 * crate::time::NANOS_PER_SEC,
                        ..Default::default()
                    },
                ),
            ];
            for (case, (spec, options)) in cases.into_iter().enumerate() {
                let options = ReplayOptions {
                    format: TraceFormat::Clf,
                    ..options
                };
                let file = replay(&path, spec, &options.clone());
                let in_memory = replay(
                    &path,
                    spec,
                    &ReplayOptions {
                        data: TraceData::in_memory(bytes.clone()),
                        ..options.clone()
                    },
                );
                assert_eq!(file, in_memory, "seed {seed}, case {case}");
                if file.1.is_none() {
                    threaded += 1;
                    assert!(file.0.len() > 2000, "{}", file.0.len());
                }
            }
        }
        // Most cases replay to the end (the others end on a bad line or one out of order).
        assert!(threaded >= 13, "{threaded}");
    }
}
