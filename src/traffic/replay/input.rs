//! The bytes of a trace, and reading them with bounded memory.
//!
//! A trace is read once per algorithm (and once more per loop), so it is normally reopened from
//! its path. Two kinds are read once, at validation, and held in memory instead: a path that is
//! not a regular file (a pipe or a device can be read only once, and `/dev/zero` never ends: at
//! most [`MAX_IN_MEMORY`]), and a small file played with `loop` (reopening a two-line file a
//! million times costs more than holding it). Every line is at most [`MAX_LINE`] bytes: a longer
//! one is a malformed line (skippable), never an allocation the size of the file.

use super::{Outcome, Record, trace_error};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The longest line (or CSV record) a trace may have: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;
/// The largest trace held in memory because it is not a regular file (a pipe): 64 MiB.
pub const MAX_IN_MEMORY: u64 = 64 << 20;
/// Bytes per `read()` of a trace file.
pub(super) const CHUNK: usize = 1 << 18;
/// A looped trace up to this size is held in memory rather than reopened each repetition.
const MAX_LOOPED_IN_MEMORY: u64 = 4 << 20;

/// The trace's bytes when they are held in memory; `None`: reopened from the path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceData(Option<Arc<[u8]>>);

impl TraceData {
    /// Opens `path` once: returns its bytes when it is not a regular file or a small looped
    /// file, else nothing (it will be reopened).
    pub fn load(path: &Path, loops: u32) -> Result<TraceData> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let regular = meta.is_file();
        if regular && (loops <= 1 || meta.len() > MAX_LOOPED_IN_MEMORY) {
            return Ok(TraceData(None));
        }
        let mut bytes = Vec::new();
        file.take(MAX_IN_MEMORY + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        if bytes.len() as u64 > MAX_IN_MEMORY {
            return Err(trace_error(
                path,
                1,
                None,
                format!(
                    "not a regular file and longer than {} MiB: a pipe or device is read into memory once; write the trace to a file instead",
                    MAX_IN_MEMORY >> 20
                ),
            ));
        }
        Ok(TraceData(Some(bytes.into())))
    }
}

impl TraceData {
    /// Whether the bytes are held in memory.
    pub fn held(&self) -> bool {
        self.0.is_some()
    }
}

#[cfg(test)]
impl TraceData {
    /// A trace held in memory, as if read from a pipe.
    pub(super) fn in_memory(bytes: Vec<u8>) -> TraceData {
        TraceData(Some(bytes.into()))
    }
}

/// A fresh reader over the trace, decompressed when it is a gzip or zstd stream.
pub(super) fn open(path: &Path, data: &TraceData) -> Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn BufRead + Send> = match &data.0 {
        Some(bytes) => Box::new(Cursor::new(bytes.clone())),
        None => {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            Box::new(BufReader::with_capacity(CHUNK, file))
        }
    };
    decompressed(path, raw)
}

/// A compression a trace can come in, known by its magic bytes (never by the file's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    fn of(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            _ => Compression::None,
        }
    }
}

/// `raw` as it is, or through a streaming decoder (gzip members concatenated, as rotated logs
/// are, read as one stream): memory stays at the decoder's window and one chunk.
fn decompressed(path: &Path, mut raw: Box<dyn BufRead + Send>) -> Result<Box<dyn BufRead + Send>> {
    let head = loop {
        match raw.fill_buf() {
            Ok(head) => break head,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, e)),
        }
    };
    // A magic number split across reads would need four bytes buffered; a file's first read
    // has them (a pipe's is held in memory whole).
    Ok(match Compression::of(head) {
        Compression::None => raw,
        Compression::Gzip => Box::new(BufReader::with_capacity(
            CHUNK,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Compression::Zstd => {
            let decoder =
                zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| Error::io(path, e))?;
            Box::new(BufReader::with_capacity(CHUNK, decoder))
        }
    })
}

/// Whether replaying the trace is worth a parsing thread ([`super::ahead`]): a file of more
/// than two chunks (a small one is read in one or two `read()` calls; a trace in memory has
/// nothing to read).
pub(super) fn worth_a_thread(path: &Path, data: &TraceData) -> bool {
    data.0.is_none() && std::fs::metadata(path).is_ok_and(|m| m.len() > 2 * CHUNK as u64)
}

/// Reads up to and including the next `\n` into `buf`, at most `MAX_LINE + 1` bytes of it; the
/// rest of a longer line is read and dropped. Returns the bytes read into `buf` (0 at the end)
/// and whether the line was too long. Searches the reader's buffer with `memchr` and copies
/// each line once: a replay reads millions of short lines.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<(usize, bool)> {
    read_line_up_to(input, buf, MAX_LINE + 1)
}

/// Up to `cap` bytes of the next line into `buf` (the rest of the line dropped): how many.
pub(super) fn read_line_capped(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<usize> {
    read_line_up_to(input, buf, cap).map(|(n, _)| n)
}

fn read_line_up_to(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    let mut n = 0;
    loop {
        let avail = match input.fill_buf() {
            Ok(avail) => avail,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((n, n == cap));
        }
        let room = &avail[..avail.len().min(cap - n)];
        let (take, found) = match memchr::memchr(b'\n', room) {
            Some(i) => (i + 1, true),
            None => (room.len(), false),
        };
        buf.extend_from_slice(&room[..take]);
        input.consume(take);
        n += take;
        if found {
            return Ok((n, false));
        }
        if n == cap {
            break;
        }
    }
    // Too long: drop the rest of the line.
    loop {
        let avail = match input.fill_buf() {
            Ok(avail) => avail,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((n, true));
        }
        match memchr::memchr(b'\n', avail) {
            Some(i) => {
                input.consume(i + 1);
                return Ok((n, true));
            }
            None => {
                let len = avail.len();
                input.consume(len);
            }
        }
    }
}

/// A malformed line: the field at fault (if one is) and what is wrong.
pub(super) type LineError = (Option<&'static str>, String);

/// Parses one line of a line-based format into a record; `Err((field, message))` if malformed.
pub(super) trait LineFormat: Send {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError>;

    /// [`LineFormat::parse`], or `Ok(false)` for a line that is no request and no mistake
    /// either (a `#Fields` header, a k6 point of another metric): passed over, not counted.
    fn parse_line(&mut self, line: &str, rec: &mut Record) -> std::result::Result<bool, LineError> {
        self.parse(line, rec).map(|()| true)
    }

    /// Whether the record last parsed has a one-second-resolution time, to be placed within
    /// its second by `same_second` ([`super::seconds::Seconds`] asks). A format whose times are
    /// all seconds need not say; one whose resolution varies by line (Cloudflare's
    /// `timestamp_format`) says it per line.
    fn whole_second(&self) -> bool {
        true
    }
}

/// Reads a line-based file with a reused buffer, skipping blank lines. Invalid UTF-8 and
/// over-long lines are malformed lines like any other (skippable).
pub(super) struct Lines<F> {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: u64,
    format: F,
}

impl<F: LineFormat> Lines<F> {
    pub(super) fn new(path: &Path, input: Box<dyn BufRead + Send>, format: F) -> Self {
        Lines {
            path: path.to_path_buf(),
            input,
            buf: Vec::new(),
            line: 0,
            format,
        }
    }

    /// The format's state (what it says of the line last parsed).
    pub(super) fn format(&self) -> &F {
        &self.format
    }

    pub(super) fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        loop {
            self.buf.clear();
            let (n, too_long) =
                read_line(&mut self.input, &mut self.buf).map_err(|e| Error::io(&self.path, e))?;
            if n == 0 {
                return Ok(Outcome::Eof);
            }
            self.line += 1;
            let bad = |m: String| Ok(Outcome::Bad(trace_error(&self.path, self.line, None, m)));
            if too_long {
                return bad(format!(
                    "line longer than {} MiB (the limit of one trace record)",
                    MAX_LINE >> 20
                ));
            }
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return bad("not valid UTF-8".into());
            };
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            rec.line = self.line;
            rec.clear();
            return Ok(match self.format.parse_line(text, rec) {
                Ok(true) => Outcome::Record,
                Ok(false) => continue,
                Err((field, m)) => Outcome::Bad(trace_error(&self.path, self.line, field, m)),
            });
        }
    }
}

/// Passes a trace to the CSV parser with every line cut at [`MAX_LINE`] bytes (the rest of the
/// line is dropped and its number noted, so that its record is reported malformed), and fails
/// once a record grows past that much (an unclosed quote swallowing the file).
pub(super) struct Capped {
    inner: Box<dyn BufRead + Send>,
    /// Bytes since the last newline passed on.
    column: usize,
    /// Newlines passed on.
    newlines: u64,
    dropping: bool,
    /// Lines (1-based) that were cut, in order.
    pub(super) cut: VecDeque<u64>,
    /// Bytes passed on since the parser last returned a record.
    pub(super) since_record: usize,
}

/// Slack for what the CSV parser reads ahead of the record it returns.
const READ_AHEAD: usize = 1 << 16;

impl Capped {
    pub(super) fn new(inner: Box<dyn BufRead + Send>) -> Self {
        Capped {
            inner,
            column: 0,
            newlines: 0,
            dropping: false,
            cut: VecDeque::new(),
            since_record: 0,
        }
    }
}

impl Capped {
    /// Newlines passed on so far.
    pub(super) fn newlines(&self) -> u64 {
        self.newlines
    }
}

impl Read for Capped {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let avail = self.inner.fill_buf()?;
            if avail.is_empty() || out.is_empty() {
                return Ok(0);
            }
            if self.dropping {
                let (len, found) = match avail.iter().position(|&b| b == b'\n') {
                    Some(i) => (i, true),
                    None => (avail.len(), false),
                };
                self.inner.consume(len);
                self.dropping = !found;
                continue;
            }
            let mut n = 0;
            for &b in avail.iter().take(out.len()) {
                if b == b'\n' {
                    self.column = 0;
                    self.newlines += 1;
                } else if self.column == MAX_LINE {
                    self.dropping = true;
                    self.cut.push_back(self.newlines + 1);
                    break;
                } else {
                    self.column += 1;
                }
                out[n] = b;
                n += 1;
            }
            self.inner.consume(n);
            self.since_record += n;
            if self.since_record > MAX_LINE + READ_AHEAD {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a record longer than {} MiB (an unclosed quote?)",
                        MAX_LINE >> 20
                    ),
                ));
            }
            if n > 0 {
                return Ok(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ReplayOptions, TraceFormat, open_ahead};
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::io::Write;

    /// Every outcome of reading `path` to the end: records, and bad lines by their message.
    fn outcomes(path: &Path, options: &ReplayOptions) -> Vec<std::result::Result<Record, String>> {
        let spec = crate::policy::KeySpec::new(vec![crate::policy::KeyField::Ip]).unwrap();
        let mut reader = open_ahead(path, options, Some(&spec)).unwrap();
        let mut out = Vec::new();
        loop {
            let mut rec = Record::default();
            match reader.read(&mut rec) {
                Ok(Outcome::Record) => out.push(Ok(rec)),
                Ok(Outcome::Eof) => return out,
                Ok(Outcome::Bad(e)) | Err(e) => out.push(Err(e.to_string())),
            }
        }
    }

    /// A file large enough to be read and parsed on a thread reads exactly like the same bytes
    /// held in memory (a plain reader): random combined-log and JSON lines with bad ones, CRLF, blank
    /// lines, a line longer than `MAX_LINE`, invalid UTF-8, and a last line without newline.
    #[test]
    fn a_file_parsed_ahead_reads_like_the_same_bytes_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        for (seed, format) in [(1, TraceFormat::Clf), (2, TraceFormat::Jsonl)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let path = dir.path().join(format!("t{seed}"));
            let mut bytes = Vec::new();
            let (mut second, mut long) = (0, false);
            for _ in 0..12_000 {
                second += rng.random_range(0..2);
                let ip = format!(
                    "10.0.{}.{}",
                    rng.random_range(0..4),
                    rng.random_range(0..250)
                );
                let good = match format {
                    TraceFormat::Clf => format!(
                        "{ip} - - [29/Nov/2026:00:{:02}:{:02} +0000] \"GET /p?q HTTP/1.1\" 200 5 \"-\" \"c\"",
                        second / 60 % 60,
                        second % 60
                    ),
                    _ => format!("{{\"time\":{second}000000000,\"ip\":\"{ip}\"}}"),
                };
                let line: Vec<u8> = match rng.random_range(0..40) {
                    0 => b"not a record".to_vec(),
                    1 => Vec::new(),
                    2 => vec![0xff, 0xfe, b'x'],
                    3 => format!("{good}\r").into_bytes(),
                    4 if bytes.len() > CHUNK && !long => {
                        long = true;
                        vec![b'y'; MAX_LINE + 10]
                    }
                    _ => good.into_bytes(),
                };
                bytes.extend_from_slice(&line);
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(b"last line without newline");
            std::fs::File::create(&path)
                .unwrap()
                .write_all(&bytes)
                .unwrap();
            let options = ReplayOptions {
                format,
                ..ReplayOptions::default()
            };
            let ahead = outcomes(&path, &options);
            let in_memory = outcomes(
                &path,
                &ReplayOptions {
                    data: TraceData(Some(bytes.into())),
                    ..options
                },
            );
            assert!(ahead.iter().filter(|o| o.is_ok()).count() > 10_000);
            assert!(
                ahead
                    .iter()
                    .any(|o| o.as_ref().is_err_and(|e| e.contains("longer than")))
            );
            assert_eq!(ahead, in_memory);
        }
    }
}
