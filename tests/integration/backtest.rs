//! The back-test against production's decisions (docs/backtest.md): a confusion matrix
//! computed by hand, its outputs, and the nginx access log formats that carry the decisions.

use crate::util::{by_name, rlsim, run_scenario, write};
use rlsim::Scenario;
use rlsim::metrics::{BacktestReport, BacktestRow};

const S: u64 = 1_000_000_000;

/// Ten requests of clients `a` and `b`, with what production decided (the last only a 503).
pub(super) const TRACE: &str = "time,ip,endpoint,status,decision\n\
    0,a,/x,200,PASSED\n\
    1000000000,a,/x,200,PASSED\n\
    2000000000,a,/y,200,PASSED\n\
    3000000000,a,/x,503,REJECTED\n\
    4000000000,a,/y,200,PASSED\n\
    5000000000,b,/x,503,REJECTED\n\
    6000000000,b,/x,200,PASSED\n\
    10000000000,a,/x,200,PASSED\n\
    11000000000,a,/x,503,REJECTED\n\
    12000000000,b,/y,503,\n";

fn scenario_text(extra: &str) -> String {
    format!(
        "name = \"bt\"\nduration = \"1m\"\nalgorithms = [\"fixed_window\", \"sliding_window_log\"]\n\
         [policy]\nlimit = 3\nwindow = \"10s\"\nkey = \"ip\"\n\
         [[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n{extra}"
    )
}

pub(super) fn row(name: &str, cells: [u64; 4]) -> (String, [u64; 4]) {
    (name.to_string(), cells)
}

pub(super) fn cells(r: &BacktestRow) -> (String, [u64; 4]) {
    let c = [
        r.both_admitted,
        r.both_refused,
        r.only_production_refused,
        r.only_contender_refused,
    ];
    (r.name.clone(), c)
}

#[test]
fn a_fixed_window_against_ten_known_decisions_fills_each_cell_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    let path = write(dir.path(), "s.toml", &scenario_text(""));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let b: &BacktestReport = by_name(&reports, "fixed_window").backtest.as_ref().unwrap();
    // 3 per 10 s per address, windows [0, 10 s) and [10 s, 20 s):
    //  a at 0, 1, 2 s: both admit; a at 3 s: both refuse; a at 4 s: only the window refuses;
    //  b at 5 s: only production refused, b at 6 s both admit; a at 10 s: both admit (a new
    //  window); a at 11 s: only production; b at 12 s: a 503 (refusal status), only production.
    assert_eq!(
        [
            b.both_admitted,
            b.both_refused,
            b.only_production_refused,
            b.only_contender_refused,
            b.decisions
        ],
        [5, 1, 3, 1, 10]
    );
    assert_eq!(b.agreement, 0.6);
    assert_eq!(b.refuse_status, 503);
    let routes: Vec<_> = b.routes.iter().map(cells).collect();
    assert_eq!(routes, [row("/x", [4, 1, 2, 0]), row("/y", [1, 0, 1, 1])]);
    let clients: Vec<_> = b.clients.iter().map(cells).collect();
    assert_eq!(clients, [row("a", [4, 1, 1, 1]), row("b", [1, 0, 2, 0])]);
    // a at 4 s and b at 5 s: no cause the log names (a whole window's retry after, no request
    // within 1 ms, nothing delayed); a at 11 s and b at 12 s follow their keys' earlier
    // disagreements within the window.
    assert_eq!(
        [
            b.cause_slot_edge,
            b.cause_log_order,
            b.cause_delayed_time,
            b.cause_after_earlier,
            b.cause_unexplained
        ],
        [0, 0, 0, 2, 2]
    );
    let instants: Vec<(u64, &str, &str, &str)> = b
        .disagreements
        .iter()
        .map(|d| {
            (
                d.time_ns,
                d.client.as_str(),
                d.production.as_str(),
                d.cause.as_str(),
            )
        })
        .collect();
    assert_eq!(
        instants,
        [
            (4 * S, "a", "admitted", "unexplained"),
            (5 * S, "b", "refused", "unexplained"),
            (11 * S, "a", "refused", "after_earlier"),
            (12 * S, "b", "refused", "after_earlier"),
        ]
    );
}

#[test]
fn a_refusal_status_of_429_makes_the_503_a_served_request() {
    // Only the last record is read by its status; under 429 it is production serving it.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "trace.csv",
        &TRACE.replace(",503,\n", ",429,\n"),
    );
    let path = write(dir.path(), "s.toml", &scenario_text(""));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let b = by_name(&reports, "fixed_window").backtest.as_ref().unwrap();
    assert_eq!(
        [b.both_admitted, b.only_production_refused],
        [6, 2],
        "status 429 is not the default refusal status (503)"
    );
}

#[test]
fn no_decision_in_the_trace_is_no_backtest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", "time,ip\n0,a\n1,b\n");
    let path = write(dir.path(), "s.toml", &scenario_text(""));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    assert!(reports.iter().all(|r| r.backtest.is_none()));
}

#[test]
fn the_model_comes_first_on_the_terminal_and_backtest_csv_has_every_scope() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    write(
        dir.path(),
        "s.toml",
        &scenario_text("[backtest]\nmodel = \"sliding_window_log\"\n"),
    );
    let out = rlsim()
        .current_dir(dir.path())
        .args(["run", "s.toml", "--out", "out"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let section = stdout
        .split("back-test against production (docs/backtest.md):\n")
        .nth(1)
        .expect("the back-test section");
    let first = section.lines().next().unwrap();
    assert!(
        first.starts_with("  modelled as sliding_window_log: "),
        "{first}"
    );
    assert!(
        section.contains("what if fixed_window: 60.0% agree"),
        "{section}"
    );
    let csv = std::fs::read_to_string(dir.path().join("out/backtest.csv")).unwrap();
    assert!(csv.starts_with(
        "contender,scope,name,both_admitted,both_refused,only_production_refused,only_contender_refused,agreement\n"
    ));
    assert!(
        csv.contains("fixed_window,all,all,5,1,3,1,0.600000\n"),
        "{csv}"
    );
    assert!(csv.contains("fixed_window,route,/y,1,0,1,1,"), "{csv}");
    assert!(csv.contains("fixed_window,client,b,1,0,2,0,"), "{csv}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["algorithms"][0]["backtest"]["only_contender_refused"],
        1
    );
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        report.contains("## Back-test against production"),
        "{report}"
    );
}

#[test]
fn a_model_that_is_no_contender_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    write(
        dir.path(),
        "s.toml",
        &scenario_text("[backtest]\nmodel = \"gcra\"\n"),
    );
    let out = rlsim()
        .current_dir(dir.path())
        .args(["check", "s.toml"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("s.toml:13")
            && stderr.contains("backtest.model")
            && stderr.contains("no contender is named `gcra`"),
        "{stderr}"
    );
}

/// The virtual times, addresses, endpoints and decisions of an nginx log replayed as `format`.
fn nginx_records(
    log: &str,
    format: &str,
    extra: &str,
) -> Result<Vec<(u64, String, String)>, String> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "access.log", log);
    let path = write(
        dir.path(),
        "s.toml",
        &format!(
            "name = \"n\"\nduration = \"1h\"\n[policy]\nlimit = 5\nwindow = \"1s\"\nkey = \"ip\"\n\
             [[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"access.log\"\nformat = \"{format}\"\n{extra}"
        ),
    );
    let s = Scenario::load(&path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    rlsim::traffic::export::for_each_request(&s.traffic, s.seed, |r| {
        out.push((r.time, r.fields[0].to_string(), r.fields[3].to_string()));
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

#[test]
fn nginx_json_lines_are_placed_at_msec_less_request_time() {
    let log = concat!(
        r#"{"msec":"1733112345.123","request_time":"0.000","remote_addr":"10.0.0.1","uri":"/a","status":"200","limit_req_status":"PASSED"}"#,
        "\n",
        // Delayed 0.5 s: logged at .700, decided at .200.
        r#"{"msec":"1733112345.700","request_time":"0.500","remote_addr":"10.0.0.2","request":"GET /b?q=1 HTTP/1.1","status":200,"limit_req_status":"DELAYED","other":[1]}"#,
        "\n",
        r#"{"msec":1733112345.250,"remote_addr":"10.0.0.3","uri":"/c","status":"503","limit_req_status":"REJECTED"}"#,
        "\n",
    );
    let r = nginx_records(log, "nginx_json", "sort_window = \"1s\"").unwrap();
    // Virtual 0 is the first record's second (the policy window is 1 s).
    let ms = 1_000_000;
    assert_eq!(
        r,
        [
            (123 * ms, "10.0.0.1".into(), "/a".into()),
            (200 * ms, "10.0.0.2".into(), "/b".into()),
            (250 * ms, "10.0.0.3".into(), "/c".into()),
        ]
    );
    let bad =
        nginx_records("{\"msec\":\"x\",\"remote_addr\":\"a\"}\n", "nginx_json", "").unwrap_err();
    assert!(
        bad.contains("access.log:1:") && bad.contains("`msec`"),
        "{bad}"
    );
}

#[test]
fn nginx_text_lines_follow_the_declared_log_format_or_the_default() {
    let declared =
        "log_format = '$msec $request_time $remote_addr \"$request\" $status $limit_req_status'";
    let log = "1733112345.010 0.000 10.0.0.1 \"GET /a HTTP/1.1\" 200 PASSED\n\
               1733112345.900 0.300 10.0.0.2 \"GET /b HTTP/1.1\" 200 DELAYED\n";
    let ms = 1_000_000;
    assert_eq!(
        nginx_records(log, "nginx", declared).unwrap(),
        [
            (10 * ms, "10.0.0.1".into(), "/a".into()),
            (600 * ms, "10.0.0.2".into(), "/b".into()),
        ]
    );
    let default = "10.0.0.9 - - [02/Dec/2024:04:05:45 +0000] \"GET /d HTTP/1.1\" 503 197 \"-\" \"curl\" 1733112345.050 0.000 REJECTED\n";
    assert_eq!(
        nginx_records(default, "nginx", "").unwrap(),
        [(50 * ms, "10.0.0.9".into(), "/d".into())]
    );
    let e = nginx_records(log, "nginx", "log_format = '$remote_addr $status'").unwrap_err();
    assert!(
        e.contains("log_format") && e.contains("needs `$msec`"),
        "{e}"
    );
    let e = nginx_records(log, "nginx", "log_format = '$msec$status'").unwrap_err();
    assert!(e.contains("nothing between them"), "{e}");
    let e = nginx_records(log, "csv", "log_format = '$msec'").unwrap_err();
    assert!(e.contains("only with `format = \"nginx\"`"), "{e}");
}

/// `recorded = true` judges production itself: its row is the trace's own decisions (the 503
/// with no decision a refusal at the default `refuse_status`); its back-test against production
/// agrees on every request, and the models' back-tests are unchanged.
#[test]
fn a_recorded_contender_is_production_judged_against_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    let extra = "[[contender]]\nname = \"production\"\nrecorded = true\n";
    let path = write(dir.path(), "s.toml", &scenario_text(extra));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let p = by_name(&reports, "production");
    // Served: a at 0, 1, 2, 4, 10 s and b at 6 s; refused: a at 3, 11 s, b at 5, 12 s.
    assert_eq!((p.offered, p.admitted, p.rejected), (10, 6, 4));
    // 3 per any 10 s: a's 4th within 10 s at 4 s (0, 1, 2, 4) and at 10 s (1, 2, 4, 10).
    assert_eq!(p.policy_violations, 2);
    assert_eq!(p.backtest.as_ref().unwrap().agreement, 1.0);
    let b = by_name(&reports, "fixed_window").backtest.as_ref().unwrap();
    assert_eq!((b.both_admitted, b.both_refused, b.decisions), (5, 1, 10));
}

/// `rlsim run PATH` exits 2 with every one of `messages` on standard error.
fn refused(path: &std::path::Path, messages: &[&str]) {
    let out = rlsim().arg("run").arg(path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for m in messages {
        assert!(stderr.contains(m), "{m:?} not in {stderr}");
    }
}

/// A recorded contender needs a trace that records decisions, and takes no rules.
#[test]
fn a_recorded_contender_refuses_synthetic_traffic_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    let synthetic = "name = \"r\"\nduration = \"10s\"\n[policy]\nlimit = 3\nwindow = \"10s\"\n\
        [[traffic]]\nname = \"steady\"\nkind = \"constant\"\nrate = \"1/s\"\n\
        [[contender]]\nname = \"production\"\nrecorded = true\n";
    let path = write(dir.path(), "syn.toml", synthetic);
    refused(
        &path,
        &[
            "field `contender[0].recorded`: source `steady` is not a replay",
            "syn.toml:12",
        ],
    );
    write(dir.path(), "trace.csv", TRACE);
    let ruled = scenario_text(
        "[[contender]]\nname = \"production\"\nrecorded = true\n\
         [[contender.rule]]\nname = \"r\"\nalgorithm = \"gcra\"\nlimit = 1\nwindow = \"1s\"\n",
    );
    let path = write(dir.path(), "ruled.toml", &ruled);
    refused(
        &path,
        &["field `contender[0].rule`: a recorded contender decides as the trace says"],
    );
    let modelled = scenario_text(
        "[backtest]\nmodel = \"production\"\n[[contender]]\nname = \"production\"\nrecorded = true\n",
    );
    let path = write(dir.path(), "model.toml", &modelled);
    refused(
        &path,
        &["field `backtest.model`: `production` is production's own record"],
    );
}
