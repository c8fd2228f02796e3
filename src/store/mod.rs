//! A real Redis as the limiters' store: `rlsim run --store redis://...` and `rlsim verify`.
//!
//! Each algorithm runs as a Lua script (`store::scripts`) through `EVALSHA` (loaded once with
//! `SCRIPT LOAD` when the store is opened; a `NOSCRIPT` reply, after a `SCRIPT FLUSH` or a
//! restart, reloads it once). The virtual time is a script argument, so expiry is decided on
//! the virtual clock: each state carries the times it needs (a window index, a last refill, a
//! theoretical arrival time, the log's scores) and a script treats a stale state as fresh,
//! exactly as the in-memory limiter treats an evicted key. Redis's own TTL only collects the
//! garbage of a run that died: every write sets `PEXPIRE key` to [`GC_TTL_MS`] of wall time,
//! which no decision reads. Keys live under `rlsim:{RUN}:` (one hash slot: `{RUN}` is a
//! cluster hash tag) and are removed when the run ends, fails, or is interrupted.

pub(crate) mod memory;
pub(crate) mod scripts;
pub(crate) mod verify;

use crate::algorithms::{Decision, LimiterSpec};
use crate::error::{Error, Result};
use crate::sim::{Remote, RemoteFactory, Tally};
use crate::traffic::Arrival;
use scripts::{Bound, ScriptKind, Unscripted};
use std::fmt::Write as _;
use std::sync::{Mutex, RwLock};
use std::time::Duration;
use strum::VariantArray;

/// Wall-clock TTL of every key a run writes: only a crashed run's leftovers ever reach it.
pub const GC_TTL_MS: u64 = 24 * 3600 * 1000;
/// How long connecting may take before the store counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one reply may take before the connection counts as dropped.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// A validated `--store` address: `redis://HOST:PORT[/DB]` (or `redis+unix:///path`).
#[derive(Debug, Clone)]
pub struct StoreUrl {
    /// The address as given, its password (if any) replaced by `***`: what messages show.
    pub url: String,
    info: redis::ConnectionInfo,
}

/// `url` without its password (`redis://user:***@host:port`).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

impl StoreUrl {
    /// Parses `url`; a scheme other than Redis's, or a malformed address, is bad input.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let shown = redact(url);
        let bad = |why: String| Error::Usage(format!("--store {shown}: {why}"));
        if !(url.starts_with("redis://") || url.starts_with("redis+unix://")) {
            return Err(bad(
                "expected redis://HOST:PORT (or redis+unix:///PATH)".into()
            ));
        }
        let info = redis::IntoConnectionInfo::into_connection_info(url)
            .map_err(|e| bad(format!("not a Redis address ({e})")))?;
        Ok(StoreUrl { url: shown, info })
    }

    fn client(&self) -> Result<redis::Client> {
        redis::Client::open(self.info.clone()).map_err(|e| self.unusable(e))
    }

    /// An error found before the run (exit 2).
    fn unusable(&self, e: impl std::fmt::Display) -> Error {
        Error::Store {
            url: self.url.clone(),
            message: e.to_string(),
            during_run: false,
        }
    }

    /// Opens a connection, with timeouts, checked with `PING`.
    pub fn connect(&self) -> Result<redis::Connection> {
        let mut con = self
            .client()?
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|e| self.unusable(format!("cannot connect: {e}")))?;
        con.set_read_timeout(Some(REPLY_TIMEOUT))
            .and_then(|()| con.set_write_timeout(Some(REPLY_TIMEOUT)))
            .map_err(|e| self.unusable(e))?;
        redis::cmd("PING")
            .query::<String>(&mut con)
            .map_err(|e| self.unusable(format!("PING failed: {e}")))?;
        Ok(con)
    }
}

/// The keys of one run: `rlsim:{RUN}:ALGORITHM:KEY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    prefix: String,
}

impl Namespace {
    /// A namespace no other run shares: the wall-clock time, the process id and a counter.
    pub fn fresh() -> Namespace {
        static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Namespace::named(&format!("{nanos:x}-{}-{n}", std::process::id()))
    }

    /// The namespace of the run named `run`: keys are prefixed `rlsim:{RUN}:` (a Redis Cluster
    /// hash tag, so every key of a run is in one slot).
    pub fn named(run: &str) -> Namespace {
        Namespace {
            prefix: format!("rlsim:{{{run}}}:"),
        }
    }

    /// The prefix every key of the run starts with (`rlsim:{RUN}:`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The `SCAN MATCH` pattern of every key of the run.
    pub fn pattern(&self) -> String {
        // Glob specials in a run id would widen the match: escape them.
        let mut out = String::new();
        for c in self.prefix.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('*');
        out
    }

    /// Writes the name of key `key` of algorithm `algorithm` into `buf` (cleared first).
    pub fn key(&self, algorithm: usize, key: u32, buf: &mut String) {
        buf.clear();
        let _ = write!(buf, "{}{algorithm}:{key}", self.prefix);
    }

    /// Deletes every key of the run (`SCAN` + `UNLINK`); the number deleted.
    pub fn remove(&self, con: &mut redis::Connection) -> redis::RedisResult<u64> {
        let pattern = self.pattern();
        let (mut cursor, mut removed) = (0u64, 0u64);
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query(con)?;
            if !keys.is_empty() {
                removed += redis::cmd("UNLINK").arg(&keys).query::<u64>(con)?;
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }
}

/// Namespaces in use, removed by the signal handler if the process is stopped.
static LIVE: Mutex<Vec<(StoreUrl, Namespace)>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<(StoreUrl, Namespace)>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Held shared by every script call while it is in flight. The signal handler takes it
/// exclusively before deleting the run's keys, so a write still in flight lands before the
/// deletion (each ends within [`REPLY_TIMEOUT`]), and keeps it until the process exits, so none
/// starts after it.
static WRITES: RwLock<()> = RwLock::new(());

/// Removes the keys of every open store (on SIGINT, SIGTERM, SIGHUP), once no script call is
/// in flight; no call starts again before the process exits.
fn remove_live() {
    let writes = WRITES.write().unwrap_or_else(|p| p.into_inner());
    for (url, ns) in live().iter() {
        if let Ok(mut con) = url.connect() {
            let _ = ns.remove(&mut con);
        }
    }
    std::mem::forget(writes);
}

/// Whose decision a run follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `rlsim run --store`: Redis decides, the model only watches.
    Drive,
    /// `rlsim verify`: the model decides (the trace stays the scenario's) and Redis is
    /// compared, for at most `limit` decisions per algorithm.
    Verify {
        /// The most decisions compared per algorithm.
        limit: u64,
    },
}

/// An opened Redis store: the scripts loaded, a namespace for the run.
pub struct RedisStore {
    url: StoreUrl,
    namespace: Namespace,
    mode: Mode,
}

impl RedisStore {
    /// Connects and loads every script: an unreachable store or one refusing scripts
    /// (`NOPERM`, scripting disabled) is an error here, before anything runs or is written.
    pub fn open(url: &str, mode: Mode) -> Result<RedisStore> {
        let url = StoreUrl::parse(url)?;
        let mut con = url.connect()?;
        for &kind in ScriptKind::VARIANTS {
            redis::Script::new(kind.source())
                .load(&mut con)
                .map_err(|e| {
                    url.unusable(format!("cannot load the {} script: {e}", kind.name()))
                })?;
        }
        let namespace = Namespace::fresh();
        live().push((url.clone(), namespace.clone()));
        crate::output::on_signal(remove_live);
        Ok(RedisStore {
            url,
            namespace,
            mode,
        })
    }

    /// The store's address, its password (if any) shown as `***`.
    pub fn url(&self) -> &str {
        &self.url.url
    }

    /// Removes the run's keys; the number removed.
    pub fn close(self) -> Result<u64> {
        let removed = self.remove_keys();
        removed.map_err(|e| Error::Store {
            url: self.url.url.clone(),
            message: format!(
                "cannot remove the run's keys {}*: {e}",
                self.namespace.prefix()
            ),
            during_run: true,
        })
    }

    fn remove_keys(&self) -> Result<u64, String> {
        let mut con = self.url.connect().map_err(|e| e.to_string())?;
        self.namespace.remove(&mut con).map_err(|e| e.to_string())
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        // Also after a failed run (close() was not reached): best effort.
        let _ = self.remove_keys();
        live().retain(|(_, ns)| *ns != self.namespace);
    }
}

impl RemoteFactory for RedisStore {
    fn open(&self, index: usize, name: &str, limiter: LimiterSpec) -> Result<Box<dyn Remote>> {
        let profile = limiter.as_profile();
        let bound = match Bound::for_limiter(limiter.kind(), limiter.params(), profile.as_ref()) {
            Ok(b) => Some(b),
            // verify reports such an algorithm as not stored; a run through Redis cannot have it.
            Err(Unscripted::NoScript) if matches!(self.mode, Mode::Verify { .. }) => None,
            Err(e) => {
                return Err(Error::Usage(format!("--store: algorithm `{name}`: {e}")));
            }
        };
        let con = match bound {
            Some(_) => Some(self.url.connect()?),
            None => None,
        };
        Ok(Box::new(RedisRemote {
            url: self.url.url.clone(),
            namespace: self.namespace.clone(),
            index,
            con,
            script: bound.map(|b| redis::Script::new(b.kind.source())),
            bound,
            mode: self.mode,
            key: String::new(),
            exp_key: String::new(),
            tally: Tally::new(name, bound.map(|b| b.kind.name())),
            failure: None,
        }))
    }
}

/// One algorithm's connection and script.
struct RedisRemote {
    url: String,
    namespace: Namespace,
    index: usize,
    con: Option<redis::Connection>,
    script: Option<redis::Script>,
    bound: Option<Bound>,
    mode: Mode,
    /// Reused key-name buffers.
    key: String,
    exp_key: String,
    tally: Tally,
    failure: Option<Error>,
}

impl RedisRemote {
    fn call(&mut self, arrival: &Arrival) -> Result<Decision, String> {
        let (Some(bound), Some(script), Some(con)) = (&self.bound, &self.script, &mut self.con)
        else {
            return Err("no script".into());
        };
        let Some(time) = bound.time_arg(arrival.time) else {
            return Err(format!(
                "virtual time {} ns is past {} ns, the last the {} script computes exactly in \
                 Lua's doubles",
                arrival.time,
                bound.max_now,
                bound.kind.name()
            ));
        };
        self.namespace.key(self.index, arrival.key, &mut self.key);
        let mut invocation = script.key(&self.key);
        if bound.kind.keys() == 2 {
            self.exp_key.clear();
            self.exp_key.push_str(&self.key);
            self.exp_key.push_str(":exp");
            invocation.key(&self.exp_key);
        }
        let _writing = WRITES.read().unwrap_or_else(|p| p.into_inner());
        let reply: Vec<i64> = invocation
            .arg(time)
            .arg(GC_TTL_MS)
            .arg(&bound.args[..])
            .arg(arrival.cost)
            .invoke(con)
            .map_err(|e| describe(&e))?;
        bound
            .decode(arrival.time, &reply)
            .ok_or_else(|| format!("the {} script replied {reply:?}", bound.kind.name()))
    }
}

/// A Redis error in words, naming the cases a user can act on.
fn describe(e: &redis::RedisError) -> String {
    if e.is_connection_dropped() || e.is_io_error() || e.is_timeout() {
        format!("the connection failed: {e}")
    } else {
        format!("Redis refused the script: {e}")
    }
}

impl Remote for RedisRemote {
    fn decide(&mut self, arrival: &Arrival, model: &Decision) -> Decision {
        if self.failure.is_some() || self.bound.is_none() {
            return *model;
        }
        if let Mode::Verify { limit } = self.mode
            && self.tally.decisions >= limit
        {
            return *model;
        }
        match self.call(arrival) {
            Ok(stored) => {
                self.tally.record(arrival, model, &stored);
                match self.mode {
                    Mode::Drive => stored,
                    Mode::Verify { .. } => *model,
                }
            }
            Err(message) => {
                self.failure = Some(Error::Store {
                    url: self.url.clone(),
                    message: format!(
                        "{} at request {} (virtual time {} ns): {message}",
                        self.tally.algorithm,
                        self.tally.decisions + 1,
                        arrival.time
                    ),
                    during_run: true,
                });
                // Nothing more is asked of the store: the run ends fast and fails.
                self.con = None;
                *model
            }
        }
    }

    fn finish(&mut self) -> Result<Tally> {
        match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(self.tally.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_redis_addresses() {
        let u = StoreUrl::parse("redis://127.0.0.1:6390").unwrap();
        assert_eq!(u.url, "redis://127.0.0.1:6390");
        assert!(StoreUrl::parse("redis://localhost:6390/3").is_ok());
        let u = StoreUrl::parse("redis://me:secret@127.0.0.1:6390").unwrap();
        assert_eq!(u.url, "redis://me:***@127.0.0.1:6390");
        assert_eq!(redact("redis://me@h:1"), "redis://me@h:1");
        let e = StoreUrl::parse("http://me:secret@h:1")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
        for bad in [
            "http://127.0.0.1:6390",
            "127.0.0.1:6390",
            "redis://:notaport",
            "",
        ] {
            let e = StoreUrl::parse(bad).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{bad}: {e}");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("--store"), "{e}");
        }
    }

    #[test]
    fn keys_are_namespaced_per_run_and_algorithm() {
        let ns = Namespace::named("abc-12");
        let mut buf = String::from("junk");
        ns.key(3, 17, &mut buf);
        assert_eq!(buf, "rlsim:{abc-12}:3:17");
        assert_eq!(ns.pattern(), "rlsim:{abc-12}:*");
        assert_eq!(Namespace::named("a*[b]").pattern(), "rlsim:{a\\*\\[b\\]}:*");
        assert_ne!(Namespace::fresh(), Namespace::fresh());
    }
}
