//! Reading a trace file on a second thread, so that the `read()` calls overlap the simulation.
//!
//! On the machines rlsim is measured on, copying a cached file out of the kernel was 20-30% of
//! a replay's time: the thread reads the next chunks while the source parses the current one.
//! A fixed set of buffers goes round between the two threads through two bounded channels
//! (filled ones one way, used ones back), so memory is [`BUFFERS`] × [`CHUNK`] whatever the
//! file's size, all of it allocated when the file is opened. The bytes, their order and the
//! errors are those of a plain `BufReader` over the file: everything that counts lines and
//! names fields stays on the reading side.

use std::io::{self, BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Bytes per `read()`: the plain reader's buffer size.
pub(super) const CHUNK: usize = 1 << 18;
/// Buffers in circulation: one being parsed, the others read ahead.
const BUFFERS: usize = 4;

/// A chunk read (its buffer and how much of it holds data; 0 at the end of the file), or the
/// error the read gave.
type Filled = io::Result<(Vec<u8>, usize)>;

/// A `BufRead` over a file read ahead by a background thread.
pub(super) struct ReadAhead {
    current: Vec<u8>,
    len: usize,
    pos: usize,
    /// The file ended or failed: nothing more comes.
    done: bool,
    /// `None` only while being dropped (closed before the thread is joined).
    channels: Option<(Receiver<Filled>, SyncSender<Vec<u8>>)>,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `input` (a file) in chunks of `chunk` bytes.
    pub(super) fn new(
        mut input: impl Read + Send + 'static,
        chunk: usize,
    ) -> io::Result<ReadAhead> {
        let (filled_tx, filled_rx) = sync_channel::<Filled>(BUFFERS);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(BUFFERS);
        // Allocated here, not by the thread, so that the heap is at its peak once opened.
        for _ in 0..BUFFERS {
            empty_tx
                .send(vec![0; chunk.max(1)])
                .expect("the receiver is alive and has room");
        }
        let thread = std::thread::Builder::new()
            .name("rlsim-trace-read".into())
            .spawn(move || {
                // Ends when the file ends or fails, or when the reader is dropped (a channel
                // closes).
                while let Ok(mut buf) = empty_rx.recv() {
                    let read = loop {
                        match input.read(&mut buf) {
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            other => break other,
                        }
                    };
                    let last = !matches!(read, Ok(n) if n > 0);
                    if filled_tx.send(read.map(|n| (buf, n))).is_err() || last {
                        return;
                    }
                }
            })?;
        Ok(ReadAhead {
            current: Vec::new(),
            len: 0,
            pos: 0,
            done: false,
            channels: Some((filled_rx, empty_tx)),
            thread: Some(thread),
        })
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.len && !self.done {
            let (filled, empty) = self.channels.as_ref().expect("open until dropped");
            let used = std::mem::take(&mut self.current);
            if !used.is_empty() {
                // The thread may have stopped (end of file): the buffer is then not needed.
                let _ = empty.send(used);
            }
            self.pos = 0;
            self.len = 0;
            match filled.recv() {
                Ok(Ok((buf, n))) => {
                    self.current = buf;
                    self.len = n;
                    self.done = n == 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Err(io::Error::other("the trace's reading thread stopped"));
                }
            }
        }
        Ok(&self.current[self.pos..self.len])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.len);
    }
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing both channels wakes the thread wherever it waits; it finishes at most the
        // read in progress.
        self.channels = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::{BufReader, Cursor};

    /// Every line, read with `read_until`.
    fn lines(mut input: impl BufRead) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            if input.read_until(b'\n', &mut line).unwrap() == 0 {
                return out;
            }
            out.push(line);
        }
    }

    /// A reader that hands out at most `max` bytes per call and fails after `fail_at` bytes.
    struct Stingy {
        data: Cursor<Vec<u8>>,
        max: usize,
        fail_at: Option<u64>,
    }

    impl Read for Stingy {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.fail_at.is_some_and(|at| self.data.position() >= at) {
                return Err(io::Error::other("disk on fire"));
            }
            let n = out.len().min(self.max);
            self.data.read(&mut out[..n])
        }
    }

    #[test]
    fn an_empty_file_ends_at_once() {
        let mut r = ReadAhead::new(Cursor::new(Vec::new()), 8).unwrap();
        assert_eq!(r.fill_buf().unwrap(), b"");
        assert_eq!(r.fill_buf().unwrap(), b"");
    }

    #[test]
    fn a_read_error_comes_where_the_plain_reader_gives_it() {
        let data = b"one\ntwo\nthree\n".repeat(10);
        let stingy = || Stingy {
            data: Cursor::new(data.clone()),
            max: 5,
            fail_at: Some(23),
        };
        // Lines up to the error, what was read of the next one, and the error.
        let read = |mut input: Box<dyn BufRead>| {
            let mut lines = Vec::new();
            loop {
                let mut line = Vec::new();
                match input.read_until(b'\n', &mut line) {
                    Ok(_) => lines.push(line),
                    Err(e) => return (lines, line, e.to_string()),
                }
            }
        };
        let ahead = read(Box::new(ReadAhead::new(stingy(), 16).unwrap()));
        let plain = read(Box::new(BufReader::with_capacity(16, stingy())));
        assert_eq!(ahead, plain);
        assert_eq!(ahead.0.len(), 5);
        assert_eq!(ahead.2, "disk on fire");
    }

    #[test]
    fn dropping_it_half_way_stops_the_thread() {
        // Far more chunks than buffers: the thread is blocked on a full channel when dropped.
        let mut r = ReadAhead::new(Cursor::new(vec![b'x'; 1 << 16]), 16).unwrap();
        assert_eq!(r.fill_buf().unwrap().len(), 16);
        drop(r); // joins: a hang here is the failure
    }

    proptest! {
        /// Any bytes (CRLF, a last line without newline, lines longer than a chunk, invalid
        /// UTF-8), any chunk size and read granularity: the same lines as a plain `BufReader`.
        #[test]
        fn reads_what_a_plain_reader_reads(
            data in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(0xff), any::<u8>(), Just(b'a')],
                0..3000,
            ),
            chunk in 1usize..700,
            max in 1usize..900,
        ) {
            let stingy = || Stingy { data: Cursor::new(data.clone()), max, fail_at: None };
            let ahead = ReadAhead::new(stingy(), chunk).unwrap();
            let plain = BufReader::with_capacity(chunk, stingy());
            prop_assert_eq!(lines(ahead), lines(plain));
        }
    }
}
