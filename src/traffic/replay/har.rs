//! HAR 1.2 (HTTP Archive) traces, streamed.
//!
//! A HAR file is one JSON document, not lines, so it cannot be read line by line; loading it
//! whole would make memory grow with the file. A thread walks the document with a serde visitor
//! down to `log.entries` and deserialises one entry at a time, sending each through a bounded
//! channel: memory stays at a few entries whatever the file's size, and the source still pulls
//! records one at a time. A HAR file is one browser's session: it has no client address and no
//! user, so `ip` and `user` are empty (one client); `api_key` is the `X-Api-Key` request header
//! when there is one, `endpoint` the URL's path, `time` the entry's `startedDateTime`. An entry
//! without `startedDateTime` or `request.url` is a malformed record (skippable); a document
//! without `log.entries`, or with an entry over [`MAX_ENTRY`] bytes, is refused. An entry whose
//! URL no server sees (`data:`, `blob:`, ...) is passed over.

use super::common::json_error;
use super::format::{Detect, Format, Head};
use super::{Outcome, Record, RecordReader, field_index, trace_error};
use crate::error::{Error, Result};
use crate::policy::KeyField;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

pub(super) const FORMAT: Format = Format {
    name: "har",
    aliases: &[],
    title: "a HAR file",
    fields: &[KeyField::ApiKey, KeyField::Endpoint],
    seconds_only: false,
    extensions: &["har"],
    // A `log` key, or a document spread over lines: HAR's `{` or `{"log": {`.
    detect: Detect {
        rank: 10,
        shows: |head| match head {
            Head::Object(o) => o.contains_key("log"),
            Head::Fragment(line) => *line == "{" || line.contains("\"log\""),
            Head::Text(_) => false,
        },
    },
    open: |path, input, _, _| Ok(Box::new(HarReader::open(path, input))),
};

/// Entries buffered between the parsing thread and the source.
const CHANNEL: usize = 256;
/// The most bytes one entry may span: 64 MiB (what is kept of it is far less, but a URL or a
/// header value is held whole while it is read).
pub const MAX_ENTRY: u64 = 64 << 20;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    started_date_time: Option<String>,
    request: Option<Request>,
}

#[derive(Deserialize)]
struct Request {
    url: Option<String>,
    #[serde(default)]
    headers: Vec<Header>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

/// What the parsing thread sends: an entry with the line it ends on, or a fatal error.
type Item = std::result::Result<(u64, Entry), Error>;

pub struct HarReader {
    path: PathBuf,
    rx: Receiver<Item>,
}

impl HarReader {
    pub fn open(path: &Path, input: Box<dyn BufRead + Send>) -> HarReader {
        let (tx, rx) = sync_channel(CHANNEL);
        let lines = Arc::new(AtomicU64::new(0));
        let since_entry = Arc::new(AtomicU64::new(0));
        let inside = Arc::new(AtomicBool::new(false));
        let reader = Counting {
            inner: input,
            lines: lines.clone(),
            since_entry: since_entry.clone(),
            inside: inside.clone(),
        };
        let thread_path = path.to_path_buf();
        std::thread::spawn(move || {
            let mut de = serde_json::Deserializer::from_reader(reader);
            let seed = Root {
                tx: tx.clone(),
                lines,
                since_entry,
                inside,
                found: Arc::new(AtomicBool::new(false)),
                failed: Arc::default(),
            };
            let found = seed.found.clone();
            let failed = seed.failed.clone();
            let result = seed.deserialize(&mut de).and_then(|()| de.end());
            if result.is_ok() && !found.load(Ordering::Relaxed) {
                let err = trace_error(
                    &thread_path,
                    1,
                    None,
                    "not a HAR 1.2 document: it has no `log.entries` array".into(),
                );
                let _ = tx.send(Err(err));
            }
            if let Err(e) = result {
                // A closed channel means the source was dropped: nothing to report.
                if !e.to_string().contains(CLOSED) {
                    let field = failed.lock().unwrap().clone();
                    let err = trace_error(
                        &thread_path,
                        e.line() as u64,
                        Some(&field).filter(|f| !f.is_empty()).map(String::as_str),
                        format!("not a HAR 1.2 document: {}", json_error(&e)),
                    );
                    let _ = tx.send(Err(err));
                }
            }
        });
        HarReader {
            path: path.to_path_buf(),
            rx,
        }
    }
}

impl RecordReader for HarReader {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        loop {
            let (line, entry) = match self.rx.recv() {
                Ok(Ok(item)) => item,
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(Outcome::Eof),
            };
            let url = entry.request.as_ref().and_then(|r| r.url.as_deref());
            if url.is_none_or(reaches_a_server) {
                return self.record(line, &entry, rec);
            }
        }
    }
}

impl HarReader {
    fn record(&self, line: u64, entry: &Entry, rec: &mut Record) -> Result<Outcome> {
        rec.line = line;
        rec.clear();
        let bad = |field: &str, m: String| {
            Ok(Outcome::Bad(trace_error(&self.path, line, Some(field), m)))
        };
        let Some(stamp) = &entry.started_date_time else {
            return bad(
                "startedDateTime",
                "the entry has no `startedDateTime`".into(),
            );
        };
        let Some(url) = entry.request.as_ref().and_then(|r| r.url.as_ref()) else {
            return bad("request.url", "the entry has no `request.url`".into());
        };
        rec.epoch_ns = match chrono::DateTime::parse_from_rfc3339(stamp)
            .ok()
            .and_then(|d| d.timestamp_nanos_opt())
            .and_then(|n| u64::try_from(n).ok())
        {
            Some(t) => t,
            None => {
                let m = format!("`{stamp}` is not an ISO 8601 time between 1970 and 2262");
                return Ok(Outcome::Bad(trace_error(
                    &self.path,
                    line,
                    Some("startedDateTime"),
                    m,
                )));
            }
        };
        rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        let headers = entry.request.as_ref().map_or(&[][..], |r| &r.headers[..]);
        if let Some(h) = headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("x-api-key"))
        {
            rec.fields[field_index(KeyField::ApiKey)].push_str(&h.value);
        }
        Ok(Outcome::Record)
    }
}

/// Whether a URL names a request to a server: `http(s)` and `ws(s)` URLs and relative ones. A
/// browser records `data:`, `blob:`, `about:` and extension URLs in a HAR too (a `data:` image can
/// be megabytes), but no server, and no limiter in front of one, ever sees them.
fn reaches_a_server(url: &str) -> bool {
    let Some((scheme, _)) = url.split_once(':') else {
        return true;
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    !is_scheme
        || ["http", "https", "ws", "wss"]
            .iter()
            .any(|s| scheme.eq_ignore_ascii_case(s))
}

/// `https://api.example.com/v1/items?id=3` → `/v1/items`.
fn url_path(url: &str) -> &str {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    path.split(['?', '#']).next().unwrap_or("/")
}

const CLOSED: &str = "rlsim: replay stopped";

/// Counts the newlines read so far, to name the line an entry ends on, and the bytes since the
/// last entry, to refuse one over [`MAX_ENTRY`].
struct Counting<R> {
    inner: R,
    lines: Arc<AtomicU64>,
    since_entry: Arc<AtomicU64>,
    /// Inside `log.entries` (bytes elsewhere are skipped without being held).
    inside: Arc<AtomicBool>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let nl = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        if nl > 0 {
            self.lines.fetch_add(nl, Ordering::Relaxed);
        }
        if self.inside.load(Ordering::Relaxed)
            && self.since_entry.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > MAX_ENTRY
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("an entry longer than {} MiB", MAX_ENTRY >> 20),
            ));
        }
        Ok(n)
    }
}

/// The document root: finds `log`.
struct Root {
    tx: SyncSender<Item>,
    lines: Arc<AtomicU64>,
    /// Reset at each entry (see [`Counting`]).
    since_entry: Arc<AtomicU64>,
    inside: Arc<AtomicBool>,
    /// Set once `log.entries` is found.
    found: Arc<AtomicBool>,
    /// The path of the field an entry failed to read at (empty: none did).
    failed: Arc<Mutex<String>>,
}

impl<'de> DeserializeSeed<'de> for Root {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(Walk {
            root: self,
            depth: 0,
        })
    }
}

/// Walks `{ "log": { "entries": [ ... ] } }`, ignoring every other key.
struct Walk {
    root: Root,
    /// 0 at the document, 1 inside `log`.
    depth: u8,
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.depth == 0 {
            "a HAR document (an object with `log`)"
        } else {
            "the `log` object"
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let wanted = if self.depth == 0 { "log" } else { "entries" };
        let mut root = Some(self.root);
        while let Some(key) = map.next_key::<String>()? {
            match (key == wanted, root.take()) {
                (true, Some(r)) if self.depth == 0 => map.next_value_seed(Nested { root: r })?,
                (true, Some(r)) => map.next_value_seed(Entries { root: r })?,
                (_, r) => {
                    root = r;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct Nested {
    root: Root,
}

impl<'de> DeserializeSeed<'de> for Nested {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(Walk {
            root: self.root,
            depth: 1,
        })
    }
}

/// One entry, read through `serde_path_to_error` so that an entry the JSON gets wrong names its
/// field (`log.entries[3].request.url`) in [`Root::failed`].
struct Tracked<'a> {
    index: usize,
    failed: &'a Mutex<String>,
}

impl<'de> DeserializeSeed<'de> for Tracked<'_> {
    type Value = Entry;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Entry, D::Error> {
        let mut track = serde_path_to_error::Track::new();
        let entry = Entry::deserialize(serde_path_to_error::Deserializer::new(d, &mut track));
        if entry.is_err() {
            let inner = track.path().to_string();
            let inner = if inner == "." {
                String::new()
            } else {
                format!(".{inner}")
            };
            *self.failed.lock().unwrap() = format!("log.entries[{}]{inner}", self.index);
        }
        entry
    }
}

/// `log.entries`: each entry is sent as soon as it is read.
struct Entries {
    root: Root,
}

impl<'de> DeserializeSeed<'de> for Entries {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the `log.entries` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.root.found.store(true, Ordering::Relaxed);
        self.root.since_entry.store(0, Ordering::Relaxed);
        self.root.inside.store(true, Ordering::Relaxed);
        let mut index = 0;
        while let Some(entry) = seq.next_element_seed(Tracked {
            index,
            failed: &self.root.failed,
        })? {
            index += 1;
            self.root.since_entry.store(0, Ordering::Relaxed);
            let line = self.root.lines.load(Ordering::Relaxed) + 1;
            if self.root.tx.send(Ok((line, entry))).is_err() {
                return Err(serde::de::Error::custom(CLOSED));
            }
        }
        self.root.inside.store(false, Ordering::Relaxed);
        Ok(())
    }
}
