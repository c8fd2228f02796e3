//! The Redis store against a real redis-server (docs/redis.md).
//!
//! Each test starts its own `redis-server` (no persistence, a free loopback port) and stops it
//! when done. Without `redis-server` on PATH, the tests that only need some Redis use
//! `RLSIM_REDIS_URL`; with neither, they skip (listed at the end of `cargo test`), unless
//! `RLSIM_REQUIRE_EXTERNAL=1` (CI), where a missing Redis fails them. The errors a bad or
//! unreachable address gives need no Redis at all.

use crate::util::{repo, rlsim, write};
use predicates::prelude::*;
use proptest::prelude::*;
use rlsim::algorithms::{
    AlgorithmKind, Decision, KeyedLimiter, Limiter, LimiterSpec, LimiterVisitor, Params,
    ProfileKind,
};
use rlsim::sim::RemoteFactory;
use rlsim::sim::Tally;
use rlsim::store::{Mode, RedisStore};
use rlsim::traffic::Arrival;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A redis-server of the test's own, killed on drop.
pub(crate) struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts one, or `None` if `redis-server` is not on PATH.
    fn start() -> Option<Server> {
        let dir = tempfile::tempdir().unwrap();
        // A free port: bound, then released for redis-server (it retries below if taken).
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let mut child = match child {
                Ok(c) => c,
                Err(_) => return None,
            };
            let url = format!("redis://127.0.0.1:{port}");
            for _ in 0..200 {
                if ping(&url) {
                    return Some(Server {
                        child,
                        url,
                        _dir: dir,
                    });
                }
                if child.try_wait().unwrap().is_some() {
                    break; // the port was taken: try another
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start");
    }

    fn con(&self) -> redis::Connection {
        redis::Client::open(self.url.as_str())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn ping(url: &str) -> bool {
    redis::Client::open(url)
        .and_then(|c| c.get_connection())
        .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
        .is_ok()
}

/// Our own server, or `None` after a recorded skip (crate::external).
fn own_server() -> Option<Server> {
    let server = Server::start();
    // Without one, a recorded skip (a panic under RLSIM_REQUIRE_EXTERNAL=1).
    crate::external::require_external(
        server.is_some(),
        "redis-server",
        "apt-get install redis-server",
    );
    server
}

/// A Redis to talk to: our own, else `RLSIM_REDIS_URL`, else `None` after a recorded skip.
pub(crate) fn some_redis() -> Option<(Option<Server>, String)> {
    if let Some(s) = Server::start() {
        let url = s.url.clone();
        return Some((Some(s), url));
    }
    match std::env::var("RLSIM_REDIS_URL") {
        Ok(url) if ping(&url) => Some((None, url)),
        _ => {
            crate::external::require_external(
                false,
                "redis-server or RLSIM_REDIS_URL",
                "apt-get install redis-server, or set RLSIM_REDIS_URL=redis://HOST:PORT",
            );
            None
        }
    }
}

fn rlsim_keys(url: &str) -> usize {
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    redis::cmd("KEYS")
        .arg("rlsim:*")
        .query::<Vec<String>>(&mut con)
        .unwrap()
        .len()
}

/// Every script: the six algorithms and the two articles'.
const SCRIPTED: [AlgorithmKind; 8] = [
    AlgorithmKind::FixedWindow,
    AlgorithmKind::SlidingWindowLog,
    AlgorithmKind::SlidingWindowCounter,
    AlgorithmKind::TokenBucket,
    AlgorithmKind::LeakyBucket,
    AlgorithmKind::Gcra,
    AlgorithmKind::Profile(ProfileKind::ArticleRedisZsetLog),
    AlgorithmKind::Profile(ProfileKind::ArticleLuaFixedWindow),
];

/// Replays `hits` (key, time, cost) through the model and the store; (decisions, agreed,
/// first). A kind that cannot weigh gets every request at cost 1.
fn replay(
    url: &str,
    kind: AlgorithmKind,
    params: Params,
    hits: &[(u32, u64, u32)],
) -> (u64, u64, String) {
    struct V<'a> {
        store: &'a RedisStore,
        spec: LimiterSpec,
        hits: &'a [(u32, u64, u32)],
        weighs: bool,
    }
    impl LimiterVisitor for V<'_> {
        type Output = Tally;
        fn visit<L: Limiter + 'static>(self, limiter: L) -> Tally {
            let mut remote = self
                .store
                .open(0, self.spec.kind().name(), self.spec)
                .unwrap();
            let mut keyed = KeyedLimiter::new(limiter);
            for &(key, time, cost) in self.hits {
                let cost = if self.weighs { cost } else { 1 };
                let model: Decision = keyed.decide_n(key, time, cost);
                let mut arrival = Arrival::new(time, key, 0, 0);
                arrival.cost = cost;
                remote.decide(&arrival, &model);
            }
            remote.finish().unwrap()
        }
    }
    let store = RedisStore::open(url, Mode::Verify { limit: u64::MAX }).unwrap();
    let t = kind
        .visit(
            params,
            V {
                store: &store,
                spec: LimiterSpec::new(kind, params).unwrap(),
                hits,
                weighs: kind.weighs(),
            },
        )
        .unwrap();
    assert_eq!(t.script, Some(kind.name()));
    (t.decisions, t.agreed, format!("{:?}", t.first))
}

/// Random traces: a few keys, bursts at one instant, gaps up to several windows, times on
/// the ns and on the ms grid (the seed scripts' clock), costs mostly 1, up to two above the
/// capacity.
fn traces() -> impl Strategy<Value = (u64, u64, u64, Vec<(u32, u64, u32)>)> {
    (1u64..8, 1u64..2000, 1u64..6).prop_flat_map(|(limit, window_ms, burst)| {
        let window = window_ms * 1_000_000;
        let step = prop_oneof![
            Just(0u64),
            0..window / 7 + 1,
            0..3 * window,
            (0..4u64).prop_map(|ms| ms * 1_000_000),
        ];
        let most = (limit.max(burst) + 2) as u32;
        let cost = prop_oneof![3 => Just(1u32), 2 => 1..=most];
        let hits = proptest::collection::vec((0u32..3, step, cost), 1..120).prop_map(|steps| {
            let mut t = 0u64;
            steps
                .into_iter()
                .map(|(k, dt, c)| {
                    t += dt;
                    (k, t, c)
                })
                .collect::<Vec<_>>()
        });
        (Just(limit), Just(window), Just(burst), hits)
    })
}

#[test]
fn every_script_agrees_with_its_model_on_random_traces() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&traces(), |(limit, window, burst, hits)| {
            let params = Params {
                limit,
                window,
                burst,
            };
            for kind in SCRIPTED {
                let (n, agreed, first) = replay(&url, kind, params, &hits);
                prop_assert_eq!(n, hits.len() as u64);
                prop_assert_eq!(
                    agreed,
                    n,
                    "{} {:?}: first disagreement {}",
                    kind,
                    params,
                    first
                );
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(rlsim_keys(&url), 0, "every run's keys are removed");
}

/// A scenario with retries (clients react to the decisions' retry-after), every script.
fn retrying(seed: u64, limit: u64, window: &str) -> String {
    format!(
        "name = \"redis\"\nseed = {seed}\nduration = \"20s\"\n\
         algorithms = [\"fixed_window\", \"sliding_window_log\", \"sliding_window_counter\", \
         \"token_bucket\", \"leaky_bucket\", \"gcra\", \"article-redis-zset-log\", \"article-redis-lua-fixed-window\"]\n\
         [policy]\nlimit = {limit}\nwindow = \"{window}\"\nburst = 3\n\
         [[traffic]]\nname = \"users\"\nkind = \"poisson\"\nrate = \"40/s\"\nusers = 5\n\
         on_reject = {{ retry = \"retry_after\", max_retries = 3, rtt = \"7ms\" }}\n"
    )
}

#[test]
fn verify_agrees_on_seeded_scenarios_with_retries() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // At once: each run waits on Redis's round trips, and has keys of its own (Namespace).
    std::thread::scope(|s| {
        for (seed, limit, window) in [(1, 5, "1s"), (2, 20, "3s"), (3, 3, "250ms")] {
            let (dir, url) = (dir.path(), &url);
            s.spawn(move || {
                let path = write(
                    dir,
                    &format!("s{seed}.toml"),
                    &retrying(seed, limit, window),
                );
                let out = rlsim()
                    .args(["verify", path.to_str().unwrap(), "--store", url])
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{text}{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(text.matches(" ok ").count(), 8, "{text}");
                assert!(!text.contains("DISAGREE"), "{text}");
            });
        }
    });
}

/// Requests that weigh more than one, with retries: every algorithm's script weighs them as
/// its model does (beyond the capacity too: costs reach 25 against a limit of 10 and a burst
/// of 20).
#[test]
fn verify_agrees_on_costly_requests() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "costly.toml",
        "name = \"costly\"\nseed = 5\nduration = \"30s\"\n\
         algorithms = [\"fixed_window\", \"sliding_window_log\", \"sliding_window_counter\", \
         \"token_bucket\", \"leaky_bucket\", \"gcra\"]\n\
         [policy]\nlimit = 10\nwindow = \"2s\"\nburst = 20\n\
         [[traffic]]\nname = \"queries\"\nkind = \"poisson\"\nrate = \"4/s\"\nusers = 3\n\
         cost_dist = \"zipf\"\ncost_max = 25\n\
         on_reject = { retry = \"retry_after\", max_retries = 2, rtt = \"5ms\" }\n",
    );
    let out = rlsim()
        .args(["verify", path.to_str().unwrap(), "--store", &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches(" ok ").count(), 6, "{text}");
}

/// `rlsim verify` of a shipped scenario over its first 5 000 requests agrees (or, with nothing
/// to compare, says so).
fn verify_prefix(path: &Path, url: &str) {
    let out = rlsim()
        .args([
            "verify",
            path.to_str().unwrap(),
            "--store",
            url,
            "--limit",
            "5000",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    // A scenario of stacked contenders only (nestjs_throttler) has nothing to compare: exit 1.
    let nothing = !text.contains(" ok ") && err.contains("nothing was verified");
    assert!(
        out.status.success() || (nothing && out.status.code() == Some(1)),
        "{}: {text}{err}",
        path.display(),
    );
    assert!(!text.contains("DISAGREE"), "{text}");
}

#[test]
fn verify_agrees_on_every_shipped_scenario_over_a_prefix() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let scenarios = crate::util::files_in("scenarios", "toml");
    // Three runs at a time, each taking the next scenario: a run waits on Redis's round trips,
    // and has keys of its own (Namespace).
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let take = || next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                while let Some(path) = scenarios.get(take()) {
                    verify_prefix(path, &url);
                }
            });
        }
    });
    assert_eq!(rlsim_keys(&url), 0);
}

/// The outputs of a run through Redis are the in-memory run's, byte for byte.
#[test]
fn a_run_through_redis_writes_the_in_memory_outputs() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &retrying(9, 4, "1s"));
    let (mem, red) = (dir.path().join("mem"), dir.path().join("redis"));
    rlsim()
        .args(["run", path.to_str().unwrap(), "--quiet", "--out"])
        .arg(&mem)
        .assert()
        .success();
    rlsim()
        .args(["run", path.to_str().unwrap(), "--store", &url, "--out"])
        .arg(&red)
        .assert()
        .success()
        .stderr(predicates::str::contains(format!("decided through {url}")));
    for f in ["summary.csv", "timeseries.csv", "delays.csv"] {
        assert_eq!(
            std::fs::read(mem.join(f)).unwrap(),
            std::fs::read(red.join(f)).unwrap(),
            "{f}"
        );
    }
    assert_eq!(rlsim_keys(&url), 0, "the run's keys are removed");
}

#[test]
fn a_flushed_script_is_reloaded() {
    let Some(server) = own_server() else {
        return;
    };
    let params = Params {
        limit: 2,
        window: 1_000_000_000,
        burst: 1,
    };
    struct V<'a>(&'a RedisStore, &'a Server, Params);
    impl LimiterVisitor for V<'_> {
        type Output = (Vec<Decision>, Tally);
        fn visit<L: Limiter + 'static>(self, limiter: L) -> Self::Output {
            let spec = LimiterSpec::new(AlgorithmKind::Gcra, self.2).unwrap();
            let mut remote = self.0.open(0, "gcra", spec).unwrap();
            let mut keyed = KeyedLimiter::new(limiter);
            let mut out = Vec::new();
            for t in [0, 1, 2] {
                let model = keyed.decide(0, t);
                out.push(remote.decide(&Arrival::new(t, 0, 0, 0), &model));
                // Between decisions, the server forgets every script.
                redis::cmd("SCRIPT")
                    .arg("FLUSH")
                    .query::<()>(&mut self.1.con())
                    .unwrap();
            }
            (out, remote.finish().unwrap())
        }
    }
    let store = RedisStore::open(&server.url, Mode::Drive).unwrap();
    let (decisions, tally) = AlgorithmKind::Gcra
        .visit(params, V(&store, &server, params))
        .unwrap();
    let admitted: Vec<bool> = decisions.iter().map(|d| d.outcome.is_admitted()).collect();
    // GCRA, 2 per second, burst 1: one admitted, then refused for 500 ms.
    assert_eq!(admitted, [true, false, false]);
    assert_eq!(tally.agreed, 3);
}

#[test]
fn a_bad_or_unreachable_address_is_bad_input_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo().join("scenarios/boundary.toml");
    for (url, says) in [
        ("http://127.0.0.1:6390", "expected redis://HOST:PORT"),
        ("redis://127.0.0.1:notaport", "not a Redis address"),
        // Port 1 on loopback: nothing listens there.
        ("redis://127.0.0.1:1", "cannot connect"),
    ] {
        let out = dir.path().join("out");
        rlsim()
            .args(["run", scenario.to_str().unwrap(), "--store", url, "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(says));
        assert!(!out.exists(), "{url}: nothing written");
        rlsim()
            .args(["verify", scenario.to_str().unwrap(), "--store", url])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

#[test]
fn a_user_without_scripting_is_refused_before_the_run() {
    let Some(server) = own_server() else {
        return;
    };
    redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "noscript",
            "on",
            ">pw",
            "~*",
            "+@all",
            "-@scripting",
        ])
        .query::<()>(&mut server.con())
        .unwrap();
    let url = server.url.replace("redis://", "redis://noscript:pw@");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    rlsim()
        .args([
            "run",
            repo().join("scenarios/boundary.toml").to_str().unwrap(),
        ])
        .args(["--store", &url, "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "cannot load the fixed_window script",
        ))
        .stderr(predicates::str::contains("no permissions"))
        // The password is not shown.
        .stderr(predicates::str::contains("pw@").not());
    assert!(!out.exists());
}

#[test]
fn a_store_dying_mid_run_fails_the_run_and_writes_nothing() {
    let Some(mut server) = own_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 180 000 decisions: some seconds through Redis, so it is still running when killed once
    // its first keys appear; the rest of a failed run is in memory only.
    let path = write(
        dir.path(),
        "long.toml",
        "name = \"long\"\nduration = \"10m\"\nalgorithms = [\"gcra\"]\n\
         [policy]\nlimit = 100\nwindow = \"1m\"\n\
         [[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"300/s\"\nusers = 50\n",
    );
    let out = dir.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("rlsim"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--quiet",
            "--store",
            &server.url,
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the server once the run has written keys into it.
    let mut con = server.con();
    while redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap() == 0 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.kill();
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("the connection failed"), "{stderr}");
    assert!(stderr.contains("gcra at request"), "{stderr}");
    assert!(result.stdout.is_empty());
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

#[test]
fn store_memory_measures_every_script_and_the_sorted_set_encodings() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let out = rlsim()
        .args([
            "store-memory",
            "--store",
            &url,
            "--keys",
            "50",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let row = |alg: &str, case: &str| {
        rows.iter()
            .find(|r| r["algorithm"] == alg && r["case"] == case)
            .unwrap_or_else(|| panic!("no row {alg} {case}"))
    };
    for kind in SCRIPTED {
        let r = row(kind.name(), "1 request");
        assert!(r["memory_usage"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["info_delta"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["estimate"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(
        row("sliding_window_log", "128 requests")["encoding"],
        "listpack"
    );
    assert_eq!(
        row("sliding_window_log", "129 requests")["encoding"],
        "skiplist"
    );
    // Back to 2 members, still a skiplist: Redis never converts back.
    assert_eq!(
        row("sliding_window_log", "129 then shrunk to 2")["encoding"],
        "skiplist"
    );
    assert_eq!(
        row("article-redis-zset-log", "129 requests")["encoding"],
        "skiplist"
    );
    assert_eq!(rlsim_keys(&url), 0);
}

/// `verify` of a scenario whose contenders all decide in memory compares nothing: like `check`
/// with nothing to check, it fails (exit 1) and says so.
#[test]
fn verify_with_nothing_to_verify_fails() {
    let Some((_server, url)) = some_redis() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "stacked.toml",
        "name = \"stacked only\"\nduration = \"10s\"\n\
         [policy]\nlimit = 5\nwindow = \"1s\"\n\
         [[contender]]\nname = \"two-rules\"\nrule = [\
         { name = \"per-ip\", algorithm = \"gcra\", limit = 5, window = \"1s\" }, \
         { name = \"all\", algorithm = \"fixed_window\", limit = 50, window = \"1s\" }]\n\
         [[traffic]]\nname = \"users\"\nkind = \"constant\"\nrate = \"10/s\"\n",
    );
    rlsim()
        .args(["verify", path.to_str().unwrap(), "--store", &url])
        .assert()
        .code(1)
        .stdout(predicates::str::contains("two-rules  not stored"))
        .stderr(predicates::str::contains("error: nothing was verified"));
    let out = rlsim()
        .args([
            "verify",
            path.to_str().unwrap(),
            "--store",
            &url,
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (doc["verified"].as_u64(), doc["passed"].as_bool()),
        (Some(0), Some(false))
    );
    assert_eq!(doc["algorithms"][0]["algorithm"], "two-rules");
}

#[test]
fn a_signal_mid_run_removes_every_key_of_the_run() {
    let Some(server) = own_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Long enough to be running through Redis when the signal comes; several algorithms, so
    // several connections are writing at that moment.
    let path = write(
        dir.path(),
        "long.toml",
        "name = \"long\"\nduration = \"10m\"\nalgorithms = [\"gcra\", \"fixed_window\", \"sliding_window_log\", \"token_bucket\"]\n\
         [policy]\nlimit = 100\nwindow = \"1m\"\n\
         [[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"300/s\"\nusers = 500\n",
    );
    let mut con = server.con();
    for round in 0..3 {
        for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
            let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("rlsim"))
                .args([
                    "run",
                    path.to_str().unwrap(),
                    "--quiet",
                    "--store",
                    &server.url,
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Signal once the run has written a few hundred keys (writes are in flight then).
            let start = std::time::Instant::now();
            while redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap() < 200 {
                assert!(child.try_wait().unwrap().is_none(), "the run ended early");
                assert!(start.elapsed().as_secs() < 60, "no keys appeared");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let sent = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{signal}: {stderr}");
            assert_eq!(
                rlsim_keys(&server.url),
                0,
                "round {round}, {signal}: {stderr}"
            );
        }
    }
}
