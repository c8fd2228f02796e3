//! The back-test against a real nginx (issue 26's done-when): traffic sent in real time by
//! `rlsim::drive` to Debian's nginx on a loopback port with `limit_req` configured three ways (a
//! nodelay zone, a delaying zone, two zones on one location), then nginx's own JSON access log
//! replayed through the very configuration nginx ran, imported. Every disagreement must get a
//! named cause, and the agreement must reach 99.5%.
//!
//! What nginx's millisecond clock allows: nginx decides on its monotonic millisecond while
//! `$msec` is the wall clock rounded separately, so an elapsed time read from the log can be off
//! by 1 ms. A decision flips only when its request falls in that millisecond before or after a
//! slot edge, and the key's next decision then flips back (`after_earlier`): at most about
//! `rate × 1 ms` of the decisions of a saturated key (docs/backtest.md). At 20r/s that is 2%
//! (measured 97.2% to 99.3%), at 1r/s 0.1%; the zones here are 1r/s and 2r/s, and each
//! configuration sends about 2 000 requests so that one unlucky pair moves the figure by 0.1%.
//!
//! Skipped with a message when nginx is missing (`.ci/run` installs it and sets
//! `RLSIM_REQUIRE_EXTERNAL=1`, which makes a missing nginx a failure).
//!
//! A test binary of its own: cargo runs test binaries one after another, so nginx's clock is
//! not shared with the integration tests' hundreds of runs, and the two tests here take turns.

#[path = "integration/external.rs"]
#[allow(dead_code, unused_imports)]
mod external;
#[path = "integration/util.rs"]
#[allow(dead_code, unused_imports)]
mod util;

use crate::util::{run_scenario, within_5s, write};
use rlsim::Scenario;
use rlsim::drive::{DriveOptions, Request, drive};
use rlsim::metrics::BacktestReport;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const NGINX: &str = "/usr/sbin/nginx";

/// The access log: what the back-test reads (`$msec`, `$request_time`, `$limit_req_status`).
const LOG_FORMAT: &str = r#"log_format backtest escape=json '{"msec":"$msec","request_time":"$request_time","remote_addr":"$remote_addr","uri":"$uri","status":"$status","limit_req_status":"$limit_req_status"}';"#;

/// One configuration: the `http`-level zones, the location `/`'s `limit_req` lines and other
/// locations (`ROOT` stands for the document root).
struct Config {
    name: &'static str,
    zones: &'static str,
    limits: &'static str,
    locations: &'static str,
}

const CONFIGS: [Config; 4] = [
    Config {
        name: "nodelay",
        zones: "limit_req_zone $binary_remote_addr zone=api:1m rate=1r/s;",
        limits: "limit_req zone=api burst=3 nodelay;",
        locations: "",
    },
    Config {
        name: "delay",
        zones: "limit_req_zone $binary_remote_addr zone=api:1m rate=1r/s;",
        limits: "limit_req zone=api burst=3;",
        locations: "",
    },
    Config {
        name: "two_zones",
        zones: "limit_req_zone $binary_remote_addr zone=ip:1m rate=2r/s;\n\
                limit_req_zone $binary_remote_addr zone=slow:1m rate=60r/m;",
        limits: "limit_req zone=ip burst=1 nodelay;\nlimit_req zone=slow burst=4 nodelay;",
        locations: "",
    },
    // Issue 45: locations with their own limit_req_status and limit_req_dry_run, one import.
    Config {
        name: "per_location",
        zones: "limit_req_zone $binary_remote_addr zone=api:1m rate=1r/s;\n\
                limit_req_zone $binary_remote_addr zone=b:1m rate=1r/s;",
        limits: "limit_req zone=api burst=2 nodelay;\nlimit_req_status 429;",
        locations: "location /b/ {\n      limit_req zone=b burst=1 nodelay;\n      limit_req_dry_run on;\n      root ROOT;\n    }",
    },
];

/// The configurations a probe's synthetic traffic (to `/a` only) can exercise whole.
const PROBED: usize = 3;

/// The least agreement required (issue 26).
const REQUIRED: f64 = 0.995;

/// Clients sending at once; each holds up to `burst` connections while nginx delays them.
const CLIENTS: u64 = 60;

/// nginx on `port` with `config`, in `dir` (its prefix), one process, stopped when dropped.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        // `master_process off`: this is the only process, so killing it stops nginx.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn conf(dir: &Path, port: u16, config: &Config) -> String {
    let d = dir.display();
    format!(
        "worker_processes 1;\nmaster_process off;\ndaemon off;\nuser root;\npid {d}/nginx.pid;\n\
         error_log {d}/logs/error.log warn;\nevents {{ worker_connections 512; }}\n\
         http {{\n  {LOG_FORMAT}\n  {zones}\n\
           client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n\
           fastcgi_temp_path {d}/tmp/fastcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n  scgi_temp_path {d}/tmp/scgi;\n\
           server {{\n    listen 127.0.0.1:{port};\n    server_name backtest;\n\
             set_real_ip_from 127.0.0.1;\n    real_ip_header X-Forwarded-For;\n\
             access_log {d}/logs/access.log backtest;\n\
             location / {{\n      {limits}\n      root {d}/html;\n    }}\n    {locations}\n  }}\n}}\n",
        zones = config.zones,
        limits = config.limits,
        locations = config.locations.replace("ROOT", &format!("{d}/html")),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(dir: &Path, config: &Config) -> (Nginx, u16) {
    for sub in ["logs", "html/b", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("html/a"), "ok").unwrap();
    std::fs::write(dir.join("html/b/a"), "ok").unwrap();
    let port = free_port();
    let conf_path = write(dir, "nginx.conf", &conf(dir, port, config));
    let check = Command::new(NGINX)
        .arg("-t")
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("logs/error.log"))
        .arg("-c")
        .arg(&conf_path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "nginx -t: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let child = Command::new(NGINX)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("logs/error.log"))
        .arg("-c")
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let nginx = Nginx(child);
    // Up once it accepts a connection.
    if within_5s(|| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()) {
        return (nginx, port);
    }
    panic!(
        "nginx did not listen on {port}: {:?}",
        std::fs::read_to_string(dir.join("logs/error.log"))
    );
}

/// `CLIENTS` clients, each sending about 2.7 requests a second for 12 s (over the 1r/s and
/// 2r/s zones), at intervals from a fixed pseudo-random sequence: 100 to 640 ms; every third
/// client to `/b/a`, the others to `/a`.
fn plan() -> Vec<Request> {
    let mut requests = Vec::new();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for client in 1..=CLIENTS {
        let mut t = client * 3_000_000;
        let path = if client % 3 == 0 { "/b/a" } else { "/a" };
        while t < 12_000_000_000 {
            requests.push(Request::get(
                t,
                path,
                &format!("10.0.{}.{}", client / 250, client % 250 + 1),
            ));
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += 100_000_000 + (state >> 33) % 540_000_000;
        }
    }
    requests.sort_by_key(|r| r.at);
    requests
}

fn backtest(dir: &Path, config: &Config) -> BacktestReport {
    let path = write(
        dir,
        "backtest.toml",
        &format!(
            "name = \"nginx-{}\"\nduration = \"1m\"\n{}\n[policy]\nlimit = 20\nwindow = \"1s\"\nkey = \"ip\"\n\
             [[traffic]]\nname = \"nginx\"\nkind = \"replay\"\npath = \"logs/access.log\"\nformat = \"nginx_json\"\nsort_window = \"5s\"\n",
            config.name, "[[contender]]\nname = \"nginx\"\nimport = \"nginx.conf\"\n"
        ),
    );
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    reports[0]
        .backtest
        .clone()
        .expect("the log records nginx's decisions")
}

fn run_config(config: &Config) -> BacktestReport {
    let dir = tempfile::tempdir().unwrap();
    let dir: PathBuf = dir.keep();
    let plan = plan();
    {
        let (_nginx, port) = start(&dir, config);
        let options = DriveOptions {
            // Enough for every client's delayed requests at once (burst 3 each).
            connections: 4 * CLIENTS as usize,
            ..DriveOptions::new(&format!("http://127.0.0.1:{port}"))
        };
        let sent = drive(&plan, &options).unwrap();
        let failed: Vec<_> = sent.iter().filter(|s| s.status.is_none()).collect();
        assert!(
            failed.is_empty(),
            "{}: failed requests {failed:?}",
            config.name
        );
        // nginx logs a request after its response is sent: wait for the last lines before
        // stopping it.
        let log = dir.join("logs/access.log");
        within_5s(|| std::fs::read_to_string(&log).is_ok_and(|s| s.lines().count() >= plan.len()));
    }
    let b = backtest(&dir, config);
    std::fs::remove_dir_all(&dir).ok();
    b
}

/// Held by each test for its whole run: one nginx and one sender at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_real_nginx_s_decisions_are_reproduced_from_its_own_access_log() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !crate::external::require_external(
        Path::new(NGINX).exists(),
        "nginx",
        "apt-get install nginx",
    ) {
        return;
    }
    // Every configuration is measured before any is judged, so a failure shows all three. One
    // at a time, though they mostly wait: four nginx at once on 2 cores flipped more decisions at
    // slot edges.
    let results: Vec<(&Config, BacktestReport)> =
        CONFIGS.iter().map(|c| (c, run_config(c))).collect();
    let measured: Vec<String> = results
        .iter()
        .map(|(config, b)| {
            format!(
                "{}: {:.2}% of {} ({} disagreements: {} slot edge, {} log order, {} delayed time, {} after earlier)",
                config.name,
                b.agreement * 100.0,
                b.decisions,
                b.only_production_refused + b.only_contender_refused,
                b.cause_slot_edge,
                b.cause_log_order,
                b.cause_delayed_time,
                b.cause_after_earlier
            )
        })
        .collect();
    eprintln!("agreement with nginx: {}", measured.join("; "));
    for (config, b) in &results {
        assert_eq!(
            b.decisions as usize,
            plan().len(),
            "{}: every request logged",
            config.name
        );
        // Every route's zone refused some requests: under a dry run, nginx's REJECTED_DRY_RUN.
        for route in &b.routes {
            assert!(
                route.both_refused > 0,
                "{}: the zone of {} refused some requests",
                config.name,
                route.name
            );
        }
        assert!(
            b.agreement >= REQUIRED,
            "{}: {measured:?} {b:?}",
            config.name
        );
        assert_eq!(
            b.cause_unexplained, 0,
            "{}: every disagreement has a cause: {:?}",
            config.name, b.disagreements
        );
    }
}

/// `rlsim probe` of a real nginx (issue 27): the same three configurations, probed with a
/// scenario importing the very nginx.conf, each decision of the imported contender compared
/// with nginx's answer on the instant the probe sent the request. From client-side times the
/// agreement is bounded by the clock effects docs/probe.md names (nginx stamps a request on
/// arrival, on its own millisecond clock, cached once per event loop turn, so a busy turn
/// stamps several requests alike); the log-time back-test above is the exact one. Measured
/// here on a quiet machine over 7 runs of 1 003 requests: 96.6% to 100% per configuration, the
/// lowest on the first configuration of a run (connections still opening), most 99.2% to 100%;
/// under the whole test suite on 2 cores, 92.0%: the client's clock and nginx's drift apart with
/// the load, which a test cannot pin. What it does pin: every request decided, nginx refusing,
/// and at least 85% agreement, which a probe that lost the clients' addresses (every request
/// one key: nearly all refused) cannot reach. A configuration under the bar is probed once more
/// on a fresh nginx (even alone, a first configuration once measured 74.4%).
#[test]
fn a_probe_of_a_real_nginx_agrees_with_its_imported_config_from_the_probes_own_times() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !crate::external::require_external(
        Path::new(NGINX).exists(),
        "nginx",
        "apt-get install nginx",
    ) {
        return;
    }
    let mut measured = Vec::new();
    // One at a time: probes at once load the machine and the client's clock drifts from nginx's
    // (measured at once: 69.6% to 85.2%).
    for config in &CONFIGS[..PROBED] {
        // The client's clock is the machine's: a run that a busy moment pushed under the bar is
        // run again once, on a fresh nginx. A probe that lost the addresses fails both.
        let mut attempt = probe(config);
        if attempt.1 < 0.85 {
            eprintln!("{} (run again)", attempt.0);
            attempt = probe(config);
        }
        let (line, agreement) = attempt;
        eprintln!("{line}");
        assert!(agreement >= 0.85, "{line}");
        measured.push(line);
    }
    eprintln!("probe agreement with nginx: {}", measured.join("; "));
}

/// One probe of a fresh nginx running `config`: its line for the message and the agreement,
/// after asserting every request was decided and nginx refused some.
fn probe(config: &Config) -> (String, f64) {
    let dir = tempfile::tempdir().unwrap();
    let (_nginx, port) = start(dir.path(), config);
    let scenario = write(
        dir.path(),
        "probe.toml",
        "name = \"nginx probe\"\nseed = 5\nduration = \"8s\"\n\
         [policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"nginx\"\nimport = \"nginx.conf\"\n\
         [[traffic]]\nname = \"clients\"\nkind = \"poisson\"\nrate = \"3/s\"\nusers = 40\nendpoint = \"/a\"\n",
    );
    let out = dir.path().join("out");
    let run = crate::util::rlsim()
        .args([
            "probe",
            "--quiet",
            "--refuse-status",
            "503",
            "--connections",
            "160",
        ])
        .args(["--target", &format!("http://127.0.0.1:{port}"), "--out"])
        .arg(&out)
        .arg(&scenario)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}: {}",
        config.name,
        String::from_utf8_lossy(&run.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let b = &crate::util::row(&summary, "nginx")["backtest"];
    let (agreement, decisions) = (
        b["agreement"].as_f64().unwrap(),
        b["decisions"].as_u64().unwrap(),
    );
    let cause = |c: &str| b[format!("cause_{c}")].as_u64().unwrap_or(0);
    assert!(decisions > 800, "{}: {decisions} requests", config.name);
    assert!(
        b["both_refused"].as_u64().unwrap() > 0,
        "{}: nothing refused",
        config.name
    );
    let line = format!(
        "{}: {:.2}% of {decisions} (slot edge {}, log order {}, after earlier {}, none {})",
        config.name,
        agreement * 100.0,
        cause("slot_edge"),
        cause("log_order"),
        cause("after_earlier"),
        cause("unexplained"),
    );
    (line, agreement)
}
