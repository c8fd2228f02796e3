//! The back-test of a `[[contender]]` (docs/backtest.md): its routes and real clients named as
//! the short form names them, and each rule's own refusal status and dry run read against
//! production's log request by request.

use crate::backtest::{TRACE, cells, row};
use crate::util::{by_name, rlsim, run_scenario, write};
use rlsim::Scenario;

fn scenario(contender: &str) -> String {
    format!(
        "name = \"bt\"\nduration = \"1m\"\n\
         [policy]\nlimit = 3\nwindow = \"10s\"\nkey = \"ip\"\n\
         [[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n{contender}"
    )
}

/// One fixed-window rule as the short form's `fixed_window`: 3 per 10 s per address.
const ONE_RULE: &str = "[[contender]]\nname = \"stack\"\n\
    [[contender.rule]]\nname = \"per-ip\"\nalgorithm = \"fixed_window\"\nlimit = 3\nwindow = \"10s\"\nkey = \"ip\"\n";

#[test]
fn a_contender_names_routes_and_clients_as_the_short_form_does() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    let path = write(dir.path(), "s.toml", &scenario(ONE_RULE));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let b = by_name(&reports, "stack").backtest.as_ref().unwrap();
    // The same decisions as the short form's fixed_window (backtest.rs counts them by hand):
    // a's 5th request in [0, 10 s) at 4 s only the window refuses, and so on.
    let routes: Vec<_> = b.routes.iter().map(cells).collect();
    assert_eq!(routes, [row("/x", [4, 1, 2, 0]), row("/y", [1, 0, 1, 1])]);
    // Each address is one client, whatever route it asks for: not `a|||/x` and `a|||/y`.
    let clients: Vec<_> = b.clients.iter().map(cells).collect();
    assert_eq!(clients, [row("a", [4, 1, 1, 1]), row("b", [1, 0, 2, 0])]);
}

#[test]
fn per_request_uris_leave_one_client_per_address_and_its_violations() {
    // Client a sends 5 requests in 1 s, each to its own URI; the rule keys by address and
    // refuses nothing (limit 10), so the intent (3 per 10 s per client) sees 2 violations.
    let dir = tempfile::tempdir().unwrap();
    let mut trace = String::from("time,ip,endpoint,status\n");
    for i in 0..5u64 {
        trace.push_str(&format!("{},a,/t/{i:06},200\n", i * 200_000_000));
    }
    write(dir.path(), "trace.csv", &trace);
    let lax = ONE_RULE.replace("limit = 3", "limit = 10");
    let path = write(dir.path(), "s.toml", &scenario(&lax));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let stack = by_name(&reports, "stack");
    assert_eq!((stack.admitted, stack.policy_violations), (5, 2));
}

#[test]
fn backtest_csv_and_the_terminal_name_a_contenders_routes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    write(dir.path(), "s.toml", &scenario(ONE_RULE));
    rlsim()
        .current_dir(dir.path())
        .args(["run", "s.toml", "--out", "out"])
        .assert()
        .success();
    let csv = std::fs::read_to_string(dir.path().join("out/backtest.csv")).unwrap();
    for line in [
        "stack,route,/x,4,1,2,0,",
        "stack,route,/y,1,0,1,1,",
        "stack,client,a,4,1,1,1,",
    ] {
        assert!(csv.contains(line), "{line} not in {csv}");
    }
    assert!(!csv.contains("stack,route,,"), "{csv}");
}

#[test]
fn a_dry_run_refusal_agrees_with_productions_rejected_dry_run() {
    // 3 per 10 s: the 4th and 5th requests are refused by the window, admitted by the dry run,
    // and logged by nginx as REJECTED_DRY_RUN: five agreements of five.
    let dir = tempfile::tempdir().unwrap();
    let trace = "time,ip,status,decision\n0,a,200,PASSED\n1000000000,a,200,PASSED\n\
        2000000000,a,200,PASSED\n3000000000,a,200,REJECTED_DRY_RUN\n4000000000,a,200,REJECTED_DRY_RUN\n";
    write(dir.path(), "trace.csv", trace);
    let dry = ONE_RULE.replace("name = \"stack\"\n", "name = \"stack\"\ndry_run = true\n");
    let path = write(dir.path(), "s.toml", &scenario(&dry));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let stack = by_name(&reports, "stack");
    assert_eq!((stack.admitted, stack.would_refuse), (5, Some(2)));
    let b = stack.backtest.as_ref().unwrap();
    assert_eq!(
        [b.both_admitted, b.both_refused, b.only_production_refused],
        [3, 2, 0]
    );
    assert_eq!(b.agreement, 1.0);
}

/// Route `/x`: 2 per 10 s, refusing with 503; route `/y`: 1 per 10 s, a dry run refusing with
/// 429 (as two nginx locations with their own `limit_req_status` and `limit_req_dry_run`).
const TWO_RULES: &str = "[[contender]]\nname = \"stack\"\n\
    [[contender.rule]]\nname = \"x\"\nalgorithm = \"fixed_window\"\nlimit = 2\nwindow = \"10s\"\nkey = \"ip\"\nroutes = [\"/x\"]\n\
    [[contender.rule]]\nname = \"y\"\nalgorithm = \"fixed_window\"\nlimit = 1\nwindow = \"10s\"\nkey = \"ip\"\nroutes = [\"/y\"]\nrefuse_status = 429\ndry_run = true\n";

#[test]
fn each_rule_reads_productions_status_by_its_own_refuse_status_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    // Statuses only: a status is production's refusal when it is the route's rule's status.
    let trace = "time,ip,endpoint,status\n\
        0,a,/x,200\n1000000000,a,/x,200\n2000000000,a,/x,503\n3000000000,a,/y,200\n\
        4000000000,a,/y,200\n5000000000,a,/y,503\n6000000000,a,/x,429\n7000000000,a,/y,429\n";
    write(dir.path(), "trace.csv", trace);
    let path = write(dir.path(), "s.toml", &scenario(TWO_RULES));
    let reports = run_scenario(&Scenario::load(&path).unwrap());
    let stack = by_name(&reports, "stack");
    // /x: 0 s and 1 s admitted, 2 s refused (503: both), 6 s refused (429 is no /x refusal:
    // only the contender). /y: 3 s admitted; 4, 5 and 7 s refused by the dry run and served:
    // 4 s production 200 and 5 s production 503 (no /y refusal) disagree, 7 s's 429 agrees.
    assert_eq!(
        (stack.admitted, stack.rejected, stack.would_refuse),
        (6, 2, Some(3))
    );
    let b = stack.backtest.as_ref().unwrap();
    assert_eq!(
        [
            b.both_admitted,
            b.both_refused,
            b.only_production_refused,
            b.only_contender_refused
        ],
        [3, 2, 0, 3]
    );
    let routes: Vec<_> = b.routes.iter().map(cells).collect();
    assert_eq!(routes, [row("/x", [2, 1, 0, 1]), row("/y", [1, 1, 0, 2])]);
}

#[test]
fn a_rules_refuse_status_outside_400_to_599_names_its_field() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", TRACE);
    let bad = TWO_RULES.replace("refuse_status = 429", "refuse_status = 200");
    let path = write(dir.path(), "s.toml", &scenario(&bad));
    let out = rlsim().arg("run").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("contender[0].rule[1].refuse_status")
            && stderr.contains("200 is too small: must be an HTTP status from 400 to 599"),
        "{stderr}"
    );
}

/// A dry run's refusal 0.5 ms before its window opens, which production (on its own
/// millisecond) admitted, is a slot edge as an enforced refusal there is: the cause reads the
/// refusing rule's retry after, not the request's served outcome.
#[test]
fn a_dry_run_refusal_at_a_slot_edge_is_named_slot_edge() {
    let dir = tempfile::tempdir().unwrap();
    // 1 per second: the second request, 0.5 ms before the next window, only the model refuses.
    let trace = "time,ip,status,decision\n0,a,200,PASSED\n999500000,a,200,PASSED\n";
    write(dir.path(), "trace.csv", trace);
    let rule = ONE_RULE.replace("limit = 3\nwindow = \"10s\"", "limit = 1\nwindow = \"1s\"");
    for (contender, refused) in [
        (rule.clone(), (1, None)),
        (
            rule.replace("name = \"stack\"\n", "name = \"stack\"\ndry_run = true\n"),
            (0, Some(1)),
        ),
    ] {
        let path = write(dir.path(), "s.toml", &scenario(&contender));
        let reports = run_scenario(&Scenario::load(&path).unwrap());
        let stack = by_name(&reports, "stack");
        assert_eq!((stack.rejected, stack.would_refuse), refused);
        let b = stack.backtest.as_ref().unwrap();
        assert_eq!(
            (
                b.only_contender_refused,
                b.cause_slot_edge,
                b.cause_unexplained
            ),
            (1, 1, 0),
            "{:?}",
            b.disagreements
        );
    }
}
