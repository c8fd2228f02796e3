//! HAProxy stick-table limits: `rlsim import` of haproxy.cfg end to end, the refusals the
//! freq_ctr arithmetic gives, bad configurations (exit 2 naming file, line and directive), and
//! the back-test against a real HAProxy (Debian's 2.6) driven on a loopback port by
//! `rlsim::drive`, its own log replayed through the very configuration it ran, imported; and
//! the trusted-proxy tracking pattern's key, HAProxy's denials against rlsim's.
//!
//! The real-HAProxy test is skipped with a message when haproxy is missing (`.ci/run` installs
//! it and sets `RLSIM_REQUIRE_EXTERNAL=1`, which makes a missing haproxy a failure).

use crate::util::{repo, rlsim, row, run_scenario, summary, within_5s, write};
use rlsim::Scenario;
use rlsim::drive::{DriveOptions, Request, drive};
use rlsim::metrics::BacktestReport;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const HAPROXY: &str = "/usr/sbin/haproxy";

#[test]
fn import_prints_the_stick_table_rule() {
    let out = rlsim()
        .arg("import")
        .arg(repo().join("scenarios/configs/haproxy/per_ip.cfg"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "algorithm = \"haproxy-http-req-rate\"",
        "limit = 10",
        "window = \"10s\"",
        "key = { identity = \"peer\", ipv6_prefix = 128 }",
        "routes = [\"/api*\"]",
        "bypass = { cidrs = [\"10.0.0.0/8\", \"192.168.0.0/16\"] }",
        "refuse_status = 429",
        "profile = { expire = \"30s\", operator = \"gt\", period = \"10s\", threshold = 10 }",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    // The output pasted into a scenario is itself valid.
    let dir = tempfile::tempdir().unwrap();
    let scenario = format!(
        "name = \"pasted\"\nduration = \"3s\"\n[policy]\nlimit = 10\nwindow = \"10s\"\nkey = \"ip\"\n{text}\n\
         [[traffic]]\nname = \"c\"\nkind = \"bursts\"\ncount = 15\nevery = \"1s\"\nip = \"198.51.100.7\"\nendpoint = \"/api/x\"\n"
    );
    let s = summary(&write(dir.path(), "pasted.toml", &scenario));
    // As scenarios/haproxy_import.toml's client: 10 pass, then every request is denied.
    assert_eq!(row(&s, "web")["rejected"], 35);
}

/// scenarios/haproxy_import.toml, counted by hand in its comment.
#[test]
fn the_shipped_scenario_refuses_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/haproxy_import.toml"));
    let web = row(&s, "web");
    assert_eq!(web["offered"], 75);
    assert_eq!(web["rejected"], 35);
    assert_eq!(web["bypassed"], 15);
    assert_eq!(web["unlimited"], 15);
}

/// An X-API-Key tracker with `ge` and an acl name; a period crossing: 10 at 0 s pass with
/// `ge 11` (rates 1..10), and at 15 s the previous period weighs 10·5000/10000 = 5, so 5 more
/// pass (rates 6..10) and the 6th at 15 s (rate 11) is refused. A request without the key is
/// not tracked (`has_api_key = true`).
#[test]
fn an_api_key_tracker_with_an_acl_crosses_a_period() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "haproxy.cfg",
        "frontend api\n  bind :80\n  stick-table type string size 1m expire 1m store http_req_rate(10s)\n\
         acl too_fast sc1_http_req_rate ge 11\n  http-request track-sc1 req.hdr(X-API-Key)\n\
         http-request return status 429 if too_fast\n",
    );
    let scenario = format!(
        "name = \"key\"\nduration = \"16s\"\n[policy]\nlimit = 10\nwindow = \"10s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"api\"\nimport = \"{}\"\n\
         [[traffic]]\nname = \"k\"\nkind = \"bursts\"\ncount = 10\nevery = \"1m\"\napi_key = \"k1\"\nip = \"198.51.100.1\"\n\
         [[traffic]]\nname = \"k2\"\nkind = \"bursts\"\ncount = 6\nevery = \"1m\"\nstart = \"15s\"\napi_key = \"k1\"\nip = \"198.51.100.2\"\n\
",
        cfg.display()
    );
    let s = summary(&write(dir.path(), "key.toml", &scenario));
    let api = row(&s, "api");
    assert_eq!(api["rejected"], 1, "{api}");
    assert_eq!(api["rules"][0]["applied"], 16, "{api}");
}

fn import_error(dir: &Path, cfg: &str) -> String {
    let path = write(dir, "bad.cfg", cfg);
    let out = rlsim()
        .args(["import", "--kind", "haproxy"])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    String::from_utf8(out.stderr).expect("utf-8")
}

#[test]
fn a_config_that_cannot_be_imported_exits_2_naming_file_line_and_directive() {
    let dir = tempfile::tempdir().unwrap();
    let table = "frontend f\n  stick-table type ip size 1k expire 10s store http_req_rate(10s)\n";
    let cases = [
        (
            format!("{table}  http-request deny if {{ sc_http_req_rate(0) gt 5 }}\n  http-request track-sc0 src\n"),
            "bad.cfg:3: directive `http-request deny`: the deny (line 3) runs before track-sc0",
        ),
        (
            format!("{table}  http-request track-sc0 req.cook(sid)\n  http-request deny if {{ sc_http_req_rate(0) gt 5 }}\n"),
            "bad.cfg:3: directive `http-request track-sc0`: track-sc fetch `req.cook(sid)` is not modelled",
        ),
        (
            format!("{table}  acl a src 1.2.3.4\n  http-request track-sc0 src\n  http-request deny if a || {{ sc_http_req_rate(0) gt 5 }}\n"),
            "bad.cfg:5: directive `http-request deny`: `||` in a condition is not modelled",
        ),
        (
            format!("{table}  http-request track-sc0 src\n  http-request deny if {{ path_beg /api }} {{ sc_http_req_rate(0) gt 5 }}\n"),
            "bad.cfg:4: directive `http-request deny`: the deny is narrower than the tracking",
        ),
        (
            "frontend f\n  stick-table type ipv4 size 1k store http_req_rate(10s)\n".into(),
            "bad.cfg:2: directive `stick-table`: type `ipv4` is not a stick-table type",
        ),
        (
            "frontend f\n  stick-table type ip size 1k store http_req_rate(0s)\n".into(),
            "bad.cfg:2: directive `stick-table`: http_req_rate period `0s`: must be a duration from 1ms to 2147483647ms (~24.8 days, HAProxy's largest timer)",
        ),
        (
            "frontend f\n  stick-table type ip size 1k store conn_rate(10s)\n  http-request track-sc0 src\n  http-request deny if { sc_http_req_rate(0) gt 5 }\n".into(),
            "bad.cfg:2: directive `stick-table`: table `f` does not store http_req_rate",
        ),
        (
            format!("{table}  http-request track-sc0 src\n  http-request deny if {{ sc_http_req_rate(0) gt 5 }}\n  http-request deny if {{ sc_http_req_rate(0) gt 50 }}\n"),
            "bad.cfg:5: directive `http-request deny`: a second deny by a tracked rate",
        ),
        (
            format!("{table}  http-request track-sc0 src\n  http-request deny if too_fast\n"),
            "bad.cfg:4: directive `http-request deny`: acl `too_fast` is not defined",
        ),
        (
            "frontend f\n  bind :80\n".into(),
            "bad.cfg:1: directive `frontend`: no frontend or listen denies by a tracked http_req_rate",
        ),
        (
            "  bind :80\n".into(),
            "bad.cfg:1: directive `bind`: directive outside any section",
        ),
    ];
    for (cfg, want) in cases {
        let err = import_error(dir.path(), &cfg);
        assert!(err.contains(want), "want `{want}` in:\n{err}\nfor:\n{cfg}");
    }
}

/// The access log line: the ms the rules ran (`date(0,ms)` taken just before track-sc0, so the
/// same poll-loop clock reading HAProxy counted the request at), the client, path and status.
const LOG_FORMAT: &str = r#"log-format '{"time":%[var(txn.t),mul(1000000)],"ip":"%[var(txn.ip)]","endpoint":"%HP","status":%ST}'"#;

/// How HAProxy logs, and how the back-test's replay source reads it.
struct Log {
    /// The `log` line of `global`.
    global: &'static str,
    /// The frontend's logging lines.
    frontend: &'static str,
    /// The replay source's format options.
    source: &'static str,
}

/// rlsim's JSON Lines, written by a JSON `log-format`.
const JSON: Log = Log {
    global: "log stdout format raw local0",
    frontend: LOG_FORMAT,
    source: "format = \"jsonl\"",
};

/// HAProxy's own `option httplog` behind a syslog header, with X-Forwarded-For captured: the
/// source names the capture, the times are `%tr` (+ `%TR`).
const HTTPLOG: Log = Log {
    global: "log stdout format rfc3164 local0",
    frontend: "option httplog\n    capture request header X-Forwarded-For len 40",
    source: "format = \"haproxy\"\nlog_format = \"%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %{X-Forwarded-For}hr %hs %{+Q}r\"",
};

/// A custom text `log-format` with the decision time in a variable: the source's copy writes
/// `%[var(txn.t)]` as the fetch it holds, `%[date(0,ms)]`.
const CUSTOM: Log = Log {
    global: "log stdout format raw local0",
    frontend: "capture request header X-Forwarded-For len 40\n    log-format \"%ci:%cp [%tr] %ST %tsc %hr %[var(txn.t)] %{+Q}r\"",
    source: "format = \"haproxy\"\nlog_format = \"%ci:%cp [%tr] %ST %tsc %{X-Forwarded-For}hr %[date(0,ms)] %{+Q}r\"",
};

/// HAProxy in the foreground, stopped when dropped.
struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        // `-db`: one foreground process, so killing it stops HAProxy.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The configuration HAProxy runs, and rlsim imports: a deny before a `return status 200`
/// (rules run in order; the return answers what the deny let through, no backend needed).
fn cfg(port: u16, log: &Log) -> String {
    let (global, frontend) = (log.global, log.frontend);
    format!(
        "global\n    {global}\n    nbthread 1\n\
         defaults\n    mode http\n    log global\n    option dontlognull\n    timeout client 10s\n    timeout server 10s\n    timeout connect 5s\n\
         frontend web\n    bind 127.0.0.1:{port}\n    {frontend}\n\
         \x20   stick-table type string size 10k expire 10s store http_req_rate(1s)\n\
         \x20   http-request set-var(txn.t) date(0,ms)\n\
         \x20   http-request set-var(txn.ip) req.hdr(X-Forwarded-For)\n\
         \x20   http-request track-sc0 req.hdr(X-Forwarded-For)\n\
         \x20   http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt 20 }}\n\
         \x20   http-request return status 200 content-type text/plain string ok\n"
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// HAProxy running the configuration `cfg` writes for a port, logging to `access.jsonl`.
fn start(dir: &Path, cfg: &dyn Fn(u16) -> String) -> (Haproxy, u16) {
    let port = free_port();
    let path = write(dir, "haproxy.cfg", &cfg(port));
    let check = Command::new(HAPROXY)
        .arg("-c")
        .arg("-f")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "haproxy -c: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let log = std::fs::File::create(dir.join("access.jsonl")).unwrap();
    let child = Command::new(HAPROXY)
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdout(Stdio::from(log))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let haproxy = Haproxy(child);
    if within_5s(|| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()) {
        return (haproxy, port);
    }
    panic!("haproxy did not listen on {port}");
}

/// Four clients, each sending about 28 requests a second for 2.5 s (a few over the 20 per
/// second the deny allows), at intervals from a fixed pseudo-random sequence: 10 to 60 ms.
fn plan() -> Vec<Request> {
    let mut requests = Vec::new();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for client in 1..=4u64 {
        let mut t = client * 3_000_000;
        while t < 2_500_000_000 {
            requests.push(Request::get(t, "/a", &format!("10.0.0.{client}")));
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += 10_000_000 + (state >> 33) % 50_000_000;
        }
    }
    requests.sort_by_key(|r| r.at);
    requests
}

/// Drives HAProxy logging as `log`, then back-tests its log against the imported haproxy.cfg:
/// the report and the run's warnings.
fn run_once(log: &Log) -> (BacktestReport, Vec<String>) {
    let dir: PathBuf = tempfile::tempdir().unwrap().keep();
    let plan = plan();
    {
        let (_haproxy, port) = start(&dir, &|port| cfg(port, log));
        let options = DriveOptions {
            connections: 64,
            ..DriveOptions::new(&format!("http://127.0.0.1:{port}"))
        };
        let sent = drive(&plan, &options).unwrap();
        let failed: Vec<_> = sent.iter().filter(|s| s.status.is_none()).collect();
        assert!(failed.is_empty(), "failed requests {failed:?}");
        // HAProxy logs at the stream's end: wait for the last lines.
        let log = dir.join("access.jsonl");
        within_5s(|| std::fs::read_to_string(&log).is_ok_and(|s| s.lines().count() >= plan.len()));
    }
    let path = write(
        &dir,
        "backtest.toml",
        &format!(
            "name = \"haproxy\"\nduration = \"1m\"\n[policy]\nlimit = 20\nwindow = \"1s\"\nkey = \"ip\"\n\
             [[contender]]\nname = \"haproxy\"\nimport = \"haproxy.cfg\"\n\
             [[traffic]]\nname = \"haproxy\"\nkind = \"replay\"\npath = \"access.jsonl\"\n{}\nsort_window = \"2s\"\n",
            log.source
        ),
    );
    let scenario = Scenario::load(&path).unwrap();
    let warnings = rlsim::traffic::sampling_warnings(&scenario.traffic);
    let reports = run_scenario(&scenario);
    let b = reports[0]
        .backtest
        .clone()
        .expect("the log records HAProxy's decisions");
    std::fs::remove_dir_all(&dir).ok();
    (b, warnings)
}

/// Prints the agreement and each disagreement's cause.
fn print(name: &str, b: &BacktestReport) {
    eprintln!(
        "agreement with haproxy ({name}): {:.2}% of {} ({} disagreements: {} slot edge, {} log order, {} after earlier, {} delayed time, {} unexplained)",
        b.agreement * 100.0,
        b.decisions,
        b.only_production_refused + b.only_contender_refused,
        b.cause_slot_edge,
        b.cause_log_order,
        b.cause_after_earlier,
        b.cause_delayed_time,
        b.cause_unexplained
    );
}

fn haproxy_found() -> bool {
    crate::external::require_external(
        Path::new(HAPROXY).exists(),
        "haproxy",
        "apt-get install haproxy",
    )
}

#[test]
fn a_real_haproxy_s_decisions_are_reproduced_from_its_own_log() {
    if !haproxy_found() {
        return;
    }
    let (b, _) = run_once(&JSON);
    print("JSON", &b);
    assert_eq!(b.decisions as usize, plan().len(), "every request logged");
    assert!(b.both_refused > 0, "the deny refused some requests");
    // The log carries the very millisecond HAProxy counted each request at (see LOG_FORMAT),
    // so the only room left is the order of requests within one millisecond.
    assert!(b.agreement >= 0.99, "{b:?}");
}

/// HAProxy's own text log read as `format = "haproxy"`: the custom log-format with the decision
/// time in a variable (declared `%[date(0,ms)]`) agrees as well as the JSON log does; httplog,
/// timed from `%tr` + `%TR`, says in the run's warnings that it cannot be exact, and is held to
/// what a millisecond date allows (below).
#[test]
fn a_real_haproxy_s_text_logs_are_back_tested() {
    if !haproxy_found() {
        return;
    }
    let (custom, warnings) = run_once(&CUSTOM);
    print("custom log-format, %[var(txn.t)]", &custom);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        custom.decisions as usize,
        plan().len(),
        "every request logged"
    );
    assert!(custom.both_refused > 0, "the deny refused some requests");
    assert!(custom.agreement >= 0.99, "{custom:?}");

    let (httplog, warnings) = run_once(&HTTPLOG);
    print("option httplog, %tr", &httplog);
    assert!(
        warnings.len() == 1 && warnings[0].contains("a back-test from %tr cannot be exact"),
        "{warnings:?}"
    );
    assert_eq!(
        httplog.decisions as usize,
        plan().len(),
        "every request logged"
    );
    assert!(httplog.both_refused > 0, "the deny refused some requests");
    // `%tr` is the date the request's first byte was read, `%TR` (0 on loopback) the wait for
    // its headers: measured against the variable on loopback (docs/traffic.md), their sum is
    // within 1 ms of the rules' instant, HAProxy's own clock (not this test's). A 1 ms shift
    // changes a decision only when another request of its key sits within that millisecond of
    // a period's edge; with 4 keys at ~28 requests a second such a shift touches a few of the
    // 283 decisions at most, and each disagreement spreads to the rest of its key's second at
    // most: 95% leaves room for that and fails on any misreading of the log.
    assert!(httplog.agreement >= 0.95, "{httplog:?}");
}

/// A log-format the line could not be cut by is refused when the scenario loads, naming the
/// source's `log_format`; `log_format` on a format that has none is refused too.
#[test]
fn a_haproxy_log_format_that_cannot_cut_a_line_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "h.log", "");
    for (options, want) in [
        (
            "format = \"haproxy\"\nlog_format = \"%ci%cp [%tr]\"",
            "`%cp` follows another item with nothing between them",
        ),
        (
            "format = \"haproxy\"\nlog_format = \"%ci %ST\"",
            "records no time",
        ),
        (
            "format = \"csv\"\nlog_format = \"%ci [%tr]\"",
            "`log_format` is read only with",
        ),
    ] {
        let path = write(
            dir.path(),
            "s.toml",
            &format!(
                "name = \"h\"\nduration = \"1s\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"ip\"\n\
                 [[traffic]]\nname = \"t\"\nkind = \"replay\"\npath = \"h.log\"\n{options}\n"
            ),
        );
        let err = Scenario::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("log_format") && err.contains(want),
            "{want}: {err}"
        );
    }
}

/// The trusted-proxy pattern as HAProxy runs it: the tracking and deny rules rlsim imports,
/// after an `http-request set-src req.hdr(X-Peer)` that only the running copy has (the test's
/// requests all come from 127.0.0.1; the header says which peer each stands for).
fn trusted_cfg(port: Option<u16>) -> String {
    let head = match port {
        Some(port) => format!(
            "global\n    nbthread 1\n\
             defaults\n    mode http\n    timeout client 10s\n    timeout server 10s\n    timeout connect 5s\n\
             frontend web\n    bind 127.0.0.1:{port}\n    http-request set-src req.hdr(X-Peer)\n"
        ),
        None => "frontend web\n    bind 127.0.0.1:80\n".into(),
    };
    format!(
        "{head}    acl TRUSTED src 10.0.0.0/8\n\
         \x20   stick-table type ip size 10k expire 30s store http_req_rate(10s)\n\
         \x20   http-request track-sc0 req.hdr_ip(x-forwarded-for,-1) if TRUSTED\n\
         \x20   http-request track-sc0 src unless TRUSTED\n\
         \x20   http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt 5 }}\n\
         \x20   http-request return status 200 content-type text/plain string ok\n"
    )
}

/// tests/integration/import_haproxy.rs's hand-counted traffic sent to a real HAProxy (well
/// inside one 10 s period, so the rates are plain counts): two clients behind the trusted proxy
/// 10.0.0.1, each with a forged first X-Forwarded-For entry, 8 requests each; two clients
/// straight from 198.51.100.7 forging different X-Forwarded-For, 8 each. HAProxy denies 6 of
/// the first (keyed by the last entry) and 11 of the second (keyed by the peer), and so does
/// the imported configuration run by rlsim.
#[test]
fn a_real_haproxy_keys_the_trusted_proxy_pattern_as_imported() {
    if !haproxy_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let groups = [
        ("10.0.0.1", ["6.6.6.6, 203.0.113.1", "6.6.6.6, 203.0.113.2"]),
        ("198.51.100.7", ["203.0.113.3", "203.0.113.4"]),
    ];
    let mut plan = Vec::new();
    for (peer, xffs) in groups {
        for (k, xff) in xffs.iter().enumerate() {
            for i in 0..8u64 {
                let mut r = Request::get((k as u64 * 8 + i) * 5_000_000, "/a", xff);
                r.headers.push(("X-Peer".into(), peer.into()));
                plan.push(r);
            }
        }
    }
    plan.sort_by_key(|r| r.at);
    let denied = {
        let (_haproxy, port) = start(dir.path(), &|port| trusted_cfg(Some(port)));
        let sent = drive(
            &plan,
            &DriveOptions::new(&format!("http://127.0.0.1:{port}")),
        )
        .unwrap();
        let mut denied = [0, 0];
        for (r, s) in plan.iter().zip(&sent) {
            assert!(matches!(s.status, Some(200 | 429)), "{s:?}");
            let behind = r.headers.iter().any(|(_, v)| v == "10.0.0.1");
            denied[usize::from(!behind)] += usize::from(s.status == Some(429));
        }
        denied
    };
    assert_eq!(
        denied,
        [6, 11],
        "HAProxy's denials: behind the proxy, direct"
    );

    let cfg = write(dir.path(), "imported.cfg", &trusted_cfg(None));
    let forger = |n: u8| {
        format!(
            "[[traffic]]\nname = \"forger{n}\"\nkind = \"bursts\"\ncount = 8\nevery = \"1m\"\n\
             ip = \"198.51.100.7\"\nforge_xff = [\"203.0.113.{n}\"]\n"
        )
    };
    let scenario = format!(
        "name = \"trusted\"\nduration = \"1s\"\n[policy]\nlimit = 5\nwindow = \"10s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"web\"\nimport = \"{}\"\n\
         [[traffic]]\nname = \"behind\"\nkind = \"bursts\"\ncount = 8\nevery = \"1m\"\nusers = 2\n\
         via = \"proxy\"\nproxy_range = \"10.0.0.1/32\"\nforge_xff = [\"6.6.6.6\"]\n{}{}",
        cfg.display(),
        forger(3),
        forger(4)
    );
    let s = summary(&write(dir.path(), "s.toml", &scenario));
    let web = row(&s, "web");
    let behind = crate::util::rejected(web, "behind").as_u64().unwrap() as usize;
    let total = web["rejected"].as_u64().unwrap() as usize;
    assert_eq!([behind, total - behind], denied, "rlsim's: {web}");
}
