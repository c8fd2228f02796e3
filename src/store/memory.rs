//! `rlsim store-memory`: the bytes each algorithm's state really takes in a Redis, beside
//! rlsim's estimate ([`Limiter::redis_bytes`]).
//!
//! Two measures per case: `MEMORY USAGE` of the keys (summed over the rate-limit key's Redis
//! keys, averaged over a sample), which leaves out the expires entry, allocator rounding and
//! the keyspace's hash buckets; and the `INFO memory` `used_memory` delta over many keys,
//! divided by their number, which has them all.

use super::scripts::{Bound, ScriptKind};
use super::{GC_TTL_MS, Namespace, StoreUrl};
use crate::algorithms::{
    AlgorithmKind, KeyedLimiter, Limiter, LimiterVisitor, Params, ProfileKind,
};
use crate::error::{Error, Result};
use crate::time::{NANOS_PER_MILLI, NANOS_PER_MIN};
use std::fmt::Write as _;
use strum::VariantArray;

/// Requests per key of each case: one for every algorithm, and for the sorted sets a log
/// just under and just over the listpack limit (128 members), a long one, and one shrunk
/// back to two members after holding 129.
const LOG_SIZES: [usize; 4] = [1, 128, 129, 1000];
/// Decisions sent per pipeline.
const BATCH: usize = 1000;
/// At most this many script calls per case (fewer keys for long logs).
const CALLS: usize = 400_000;

/// One measured case.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub algorithm: &'static str,
    /// Requests made per key (all admitted), or members left after a shrink.
    pub case: String,
    pub keys: usize,
    /// Redis's encoding of the (first) key.
    pub encoding: String,
    /// Mean `MEMORY USAGE` per rate-limit key (bytes).
    pub memory_usage: f64,
    /// `used_memory` delta / keys (bytes).
    pub info_delta: f64,
    /// rlsim's estimate per key (bytes).
    pub estimate: f64,
}

/// Measures every script with `keys` keys per case (fewer for long logs).
pub fn measure(url: &str, keys: usize) -> Result<Vec<Row>> {
    let url = StoreUrl::parse(url)?;
    let mut con = url.connect()?;
    let mut rows = Vec::new();
    for &kind in ScriptKind::VARIANTS {
        let logs = matches!(
            kind,
            ScriptKind::SlidingWindowLog | ScriptKind::ArticleRedisZsetLog
        );
        let sizes: &[usize] = if logs { &LOG_SIZES } else { &[1] };
        for &m in sizes {
            rows.push(case(&url, &mut con, kind, m, false, keys)?);
        }
        if logs {
            rows.push(case(&url, &mut con, kind, 129, true, keys)?);
        }
    }
    Ok(rows)
}

/// The algorithm a script stores, built with a limit no case reaches.
fn algorithm(kind: ScriptKind) -> AlgorithmKind {
    match kind {
        ScriptKind::FixedWindow => AlgorithmKind::FixedWindow,
        ScriptKind::SlidingWindowLog => AlgorithmKind::SlidingWindowLog,
        ScriptKind::SlidingWindowCounter => AlgorithmKind::SlidingWindowCounter,
        ScriptKind::TokenBucket => AlgorithmKind::TokenBucket,
        ScriptKind::LeakyBucket => AlgorithmKind::LeakyBucket,
        ScriptKind::Gcra => AlgorithmKind::Gcra,
        ScriptKind::ArticleRedisZsetLog => AlgorithmKind::Profile(ProfileKind::ArticleRedisZsetLog),
        ScriptKind::ArticleLuaFixedWindow => {
            AlgorithmKind::Profile(ProfileKind::ArticleLuaFixedWindow)
        }
    }
}

/// The request times of one key: `m` requests 1 ms apart, then for a shrink one more just
/// before the first `m - 1` leave the window.
fn times(m: usize, shrink: bool) -> Vec<u64> {
    let mut t: Vec<u64> = (0..m as u64).map(|j| j * NANOS_PER_MILLI).collect();
    if shrink {
        t.push(NANOS_PER_MIN + (m as u64 - 1) * NANOS_PER_MILLI - 1);
    }
    t
}

fn case(
    url: &StoreUrl,
    con: &mut redis::Connection,
    kind: ScriptKind,
    m: usize,
    shrink: bool,
    keys: usize,
) -> Result<Row> {
    let keys = keys.min(CALLS / m).max(1);
    let times = times(m, shrink);
    let params = Params {
        limit: 10_000,
        window: NANOS_PER_MIN,
        burst: 10_000,
    };
    let bound = Bound::for_limiter(algorithm(kind), params, None)
        .map_err(|e| Error::Internal(e.to_string()))?;
    let estimate = estimate(kind, params, &times, keys)?;
    let failed = |e: redis::RedisError| Error::Store {
        url: url.url.clone(),
        message: format!("measuring {}: {e}", kind.name()),
        during_run: true,
    };
    redis::Script::new(kind.source())
        .load(con)
        .map_err(failed)?;
    let ns = Namespace::fresh();
    let before = used_memory(con).map_err(failed)?;
    write_keys(con, &ns, &bound, &times, keys).map_err(failed)?;
    let after = used_memory(con).map_err(failed)?;
    let (usage, sample, encoding) = usage(con, &ns, kind, keys).map_err(failed)?;
    ns.remove(con).map_err(failed)?;
    let case = if shrink {
        format!("{m} then shrunk to 2")
    } else {
        format!("{m} request{}", if m == 1 { "" } else { "s" })
    };
    Ok(Row {
        algorithm: kind.name(),
        case,
        keys,
        encoding,
        memory_usage: usage as f64 / sample as f64,
        info_delta: (after as f64 - before as f64) / keys as f64,
        estimate,
    })
}

/// rlsim's estimate of the Redis bytes per key of `kind` after requests at `times` on each of
/// `keys` keys.
fn estimate(kind: ScriptKind, params: Params, times: &[u64], keys: usize) -> Result<f64> {
    struct Model<'a> {
        times: &'a [u64],
        keys: usize,
    }
    impl LimiterVisitor for Model<'_> {
        type Output = f64;
        fn visit<L: Limiter + 'static>(self, limiter: L) -> f64 {
            let mut keyed = KeyedLimiter::new(limiter);
            for key in 0..self.keys as u32 {
                for &t in self.times {
                    keyed.decide(key, t);
                }
            }
            keyed.memory().redis_bytes as f64 / self.keys as f64
        }
    }
    algorithm(kind)
        .visit(params, Model { times, keys })
        .map_err(|e| Error::Internal(e.to_string()))
}

/// Runs the script of `bound` for requests at `times` on `keys` keys of `ns`, pipelined.
fn write_keys(
    con: &mut redis::Connection,
    ns: &Namespace,
    bound: &Bound,
    times: &[u64],
    keys: usize,
) -> redis::RedisResult<()> {
    let kind = bound.kind;
    // Loaded by the caller, before the memory was first read.
    let script = redis::Script::new(kind.source());
    let mut names = String::new();
    let mut pipe = redis::pipe();
    let mut queued = 0;
    for key in 0..keys as u32 {
        ns.key(0, key, &mut names);
        for &t in times {
            let call = pipe.cmd("EVALSHA").arg(script.get_hash()).arg(kind.keys());
            call.arg(&names);
            if kind.keys() == 2 {
                call.arg(format!("{names}:exp"));
            }
            let time = bound.time_arg(t).expect("times are small");
            call.arg(time)
                .arg(GC_TTL_MS)
                .arg(&bound.args[..])
                .arg(1)
                .ignore();
            queued += 1;
            if queued == BATCH {
                pipe.query::<()>(con)?;
                pipe.clear();
                queued = 0;
            }
        }
    }
    if queued > 0 {
        pipe.query::<()>(con)?;
    }
    Ok(())
}

/// `MEMORY USAGE` summed over a sample of the keys of `ns`, the sample's size, and the first
/// key's encoding.
fn usage(
    con: &mut redis::Connection,
    ns: &Namespace,
    kind: ScriptKind,
    keys: usize,
) -> redis::RedisResult<(u64, u32, String)> {
    let mut names = String::new();
    let sample = keys.min(100) as u32;
    let mut usage = 0u64;
    for key in 0..sample {
        ns.key(0, key, &mut names);
        usage += memory_usage(con, &names)?;
        if kind.keys() == 2 {
            usage += memory_usage(con, &format!("{names}:exp"))?;
        }
    }
    ns.key(0, 0, &mut names);
    let encoding: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg(&names)
        .query(con)?;
    Ok((usage, sample, encoding))
}

fn used_memory(con: &mut redis::Connection) -> redis::RedisResult<u64> {
    let info: String = redis::cmd("INFO").arg("memory").query(con)?;
    Ok(info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0))
}

fn memory_usage(con: &mut redis::Connection, key: &str) -> redis::RedisResult<u64> {
    // SAMPLES 0: every element, not an estimate from five.
    let bytes: Option<u64> = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query(con)?;
    Ok(bytes.unwrap_or(0))
}

/// The table, in Markdown (docs/redis.md quotes it).
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| algorithm | case | keys | encoding | MEMORY USAGE / key | INFO delta / key | rlsim estimate / key |\n\
         |---|---|---:|---|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} |",
            r.algorithm, r.case, r.keys, r.encoding, r.memory_usage, r.info_delta, r.estimate
        );
    }
    out
}
