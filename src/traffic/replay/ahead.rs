//! Reading and parsing a trace on a second thread, so that both overlap the simulation.
//!
//! Reading a cached file, cutting its lines, parsing their fields and timestamps, and interning
//! their keys were two thirds of a replay's time on one core. The thread owns the format's
//! reader and sends what each of its reads gave, in order, in batches of [`BATCH`]; a fixed set
//! of batches goes round between the two threads through two bounded channels (filled ones one
//! way, used ones back), and each record's strings keep their room from one use to the next, so
//! nothing is allocated per line and memory is [`BATCHES`] batches whatever the file's size.
//! The records, the malformed lines and the errors, and their order, are the reader's own: line
//! numbers and field names come from the format reader, whichever thread runs it. With a key
//! spec, the thread also numbers each record's key ([`LocalKeys`]).

use super::local_keys::LocalKeys;
use super::{Outcome, Record, RecordReader};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Reads per batch.
const BATCH: usize = 1024;
/// Batches in circulation: one being replayed, the others parsed ahead.
const BATCHES: usize = 4;

/// What one read gave.
#[derive(Default)]
enum Got {
    Record,
    Bad(Error),
    #[default]
    Eof,
    Failed(Error),
}

#[derive(Default)]
struct Item {
    got: Got,
    rec: Record,
    /// The record's local key number (with a key spec).
    key: u32,
}

/// Filled batches from the thread, used ones back to it.
type Channels = (Receiver<Vec<Item>>, SyncSender<Vec<Item>>);

/// A [`RecordReader`] run on a background thread.
pub(super) struct ParseAhead {
    path: PathBuf,
    current: Vec<Item>,
    pos: usize,
    /// The reader ended or failed: nothing more comes.
    done: bool,
    has_parts: bool,
    numbered: bool,
    key: u32,
    /// `None` only while being dropped (closed before the thread is joined).
    channels: Option<Channels>,
    thread: Option<JoinHandle<()>>,
}

impl ParseAhead {
    /// Starts reading `reader` (of the trace at `path`); with `numbers`, numbering the records'
    /// keys.
    pub(super) fn new(
        path: &Path,
        mut reader: Box<dyn RecordReader>,
        mut numbers: Option<LocalKeys>,
    ) -> Result<ParseAhead> {
        let (filled_tx, filled_rx) = sync_channel::<Vec<Item>>(BATCHES);
        let (empty_tx, empty_rx) = sync_channel::<Vec<Item>>(BATCHES);
        for _ in 0..BATCHES {
            empty_tx
                .send(Vec::with_capacity(BATCH))
                .expect("the receiver is alive and has room");
        }
        let has_parts = reader.has_parts();
        let numbered = numbers.is_some();
        let thread = std::thread::Builder::new()
            .name("rlsim-trace-parse".into())
            .spawn(move || {
                // Ends when the reader ends or fails, or when the `ParseAhead` is dropped (a
                // channel closes).
                while let Ok(mut batch) = empty_rx.recv() {
                    let mut n = 0;
                    let mut last = false;
                    while n < BATCH && !last {
                        if n == batch.len() {
                            batch.push(Item::default());
                        }
                        let item = &mut batch[n];
                        item.got = match reader.read(&mut item.rec) {
                            Ok(Outcome::Record) => Got::Record,
                            Ok(Outcome::Bad(e)) => Got::Bad(e),
                            Ok(Outcome::Eof) => {
                                last = true;
                                Got::Eof
                            }
                            Err(e) => {
                                last = true;
                                Got::Failed(e)
                            }
                        };
                        n += 1;
                    }
                    batch.truncate(n);
                    if let Some(numbers) = &mut numbers {
                        let is_record = |item: &&mut Item| matches!(item.got, Got::Record);
                        let ids = numbers.number(
                            batch
                                .iter()
                                .filter(|i| matches!(i.got, Got::Record))
                                .map(|i| &i.rec),
                        );
                        for (item, &id) in batch.iter_mut().filter(is_record).zip(ids) {
                            item.key = id;
                        }
                    }
                    if filled_tx.send(batch).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(|e| Error::io(path, e))?;
        Ok(ParseAhead {
            path: path.to_path_buf(),
            current: Vec::new(),
            pos: 0,
            done: false,
            has_parts,
            numbered,
            key: 0,
            channels: Some((filled_rx, empty_tx)),
            thread: Some(thread),
        })
    }
}

impl RecordReader for ParseAhead {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        if self.pos == self.current.len() {
            if self.done {
                return Ok(Outcome::Eof);
            }
            let (filled, empty) = self.channels.as_ref().expect("open until dropped");
            let used = std::mem::take(&mut self.current);
            if used.capacity() > 0 {
                // The thread may have stopped (end of file): the batch is then not needed.
                let _ = empty.send(used);
            }
            self.pos = 0;
            match filled.recv() {
                Ok(batch) => self.current = batch,
                Err(_) => {
                    self.done = true;
                    return Err(Error::io(
                        &self.path,
                        std::io::Error::other("the trace's parsing thread stopped"),
                    ));
                }
            }
        }
        let item = &mut self.current[self.pos];
        self.pos += 1;
        if let Got::Record = item.got {
            // The caller's used record goes back to the thread, strings and all.
            std::mem::swap(rec, &mut item.rec);
            self.key = item.key;
            return Ok(Outcome::Record);
        }
        match std::mem::take(&mut item.got) {
            Got::Record => unreachable!("returned above"),
            Got::Bad(e) => Ok(Outcome::Bad(e)),
            Got::Eof => {
                self.done = true;
                Ok(Outcome::Eof)
            }
            Got::Failed(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    fn has_parts(&self) -> bool {
        self.has_parts
    }

    fn local_key(&self) -> Option<u32> {
        self.numbered.then_some(self.key)
    }

    fn local_key_ahead(&self, n: usize) -> Option<u32> {
        let item = self.current.get((self.pos + n).checked_sub(1)?)?;
        self.numbered.then_some(item.key)
    }
}

impl Drop for ParseAhead {
    fn drop(&mut self) {
        // Closing both channels wakes the thread wherever it waits; it finishes at most the
        // batch in progress.
        self.channels = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{KeyField, KeySpec};

    /// A reader that gives `n` records (keyed `k % 7`), a malformed line every 5th read, then
    /// fails or ends.
    struct Scripted {
        read: u64,
        n: u64,
        fail: bool,
    }

    impl RecordReader for Scripted {
        fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
            self.read += 1;
            if self.read > self.n {
                if self.fail {
                    return Err(Error::Internal(format!("failed at read {}", self.read)));
                }
                return Ok(Outcome::Eof);
            }
            if self.read.is_multiple_of(5) {
                return Ok(Outcome::Bad(Error::Internal(format!("bad {}", self.read))));
            }
            rec.line = self.read;
            rec.fields[0] = format!("k{}", self.read % 7);
            Ok(Outcome::Record)
        }

        fn has_parts(&self) -> bool {
            true
        }
    }

    /// What each read gave: a record's line and local key, or the error's text.
    fn reads(reader: &mut dyn RecordReader, max: usize) -> Vec<String> {
        let mut rec = Record::default();
        (0..max)
            .map(|_| match reader.read(&mut rec) {
                Ok(Outcome::Record) => format!("{} {:?}", rec.line, reader.local_key()),
                Ok(Outcome::Eof) => "eof".into(),
                Ok(Outcome::Bad(e)) => format!("bad: {e}"),
                Err(e) => format!("err: {e}"),
            })
            .collect()
    }

    #[test]
    fn gives_the_readers_outcomes_in_order_across_batches() {
        let spec = KeySpec::new(vec![KeyField::Ip]).unwrap();
        for (n, fail) in [
            (0, false),
            (3000, false),
            (2500, true),
            (BATCH as u64 - 1, true),
        ] {
            let scripted = || Scripted { read: 0, n, fail };
            let mut ahead = ParseAhead::new(
                Path::new("t"),
                Box::new(scripted()),
                Some(LocalKeys::new(&spec, false)),
            )
            .unwrap();
            assert!(ahead.has_parts());
            let got = reads(&mut ahead, n as usize + 3);
            // The plain reader, numbering keys by hand: k0..k6 in order of first appearance.
            let mut plain = scripted();
            let mut seen = Vec::new();
            let mut want = reads(&mut plain, n as usize + 1);
            for w in want.iter_mut().filter(|w| w.ends_with("None")) {
                let line: u64 = w.split(' ').next().unwrap().parse().unwrap();
                let key = line % 7;
                let local = seen.iter().position(|&k| k == key).unwrap_or_else(|| {
                    seen.push(key);
                    seen.len() - 1
                });
                *w = format!("{line} Some({local})");
            }
            // After the end or the failure, the thread is gone: the end, again and again.
            want.extend(["eof".to_string(), "eof".to_string()]);
            assert_eq!(got, want, "n {n}, fail {fail}");
            assert!(got[n as usize].starts_with(if fail { "err: " } else { "eof" }));
        }
    }

    #[test]
    fn without_a_key_spec_it_numbers_nothing() {
        let scripted = Scripted {
            read: 0,
            n: 10,
            fail: false,
        };
        let mut ahead = ParseAhead::new(Path::new("t"), Box::new(scripted), None).unwrap();
        assert_eq!(reads(&mut ahead, 2), ["1 None", "2 None"]);
    }

    #[test]
    fn dropping_it_half_way_stops_the_thread() {
        // Far more batches than circulate: the thread is blocked on a full channel when dropped.
        let scripted = Scripted {
            read: 0,
            n: 1 << 20,
            fail: false,
        };
        let mut ahead = ParseAhead::new(Path::new("t"), Box::new(scripted), None).unwrap();
        assert_eq!(reads(&mut ahead, 1), ["1 None"]);
        drop(ahead); // joins: a hang here is the failure
    }
}
