//! Requests that weigh more than one, through the engine: the short form's algorithms count
//! cost, a stack's rules count cost or requests, and validation refuses a limiter that cannot
//! weigh what the traffic sends.

use super::{RunOptions, RunReport, run_all};
use crate::scenario::Scenario;

/// The run of the scenario `text`.
fn run(text: &str) -> RunReport {
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    run_all(&scenario, RunOptions::new()).unwrap().0
}

/// One client, one request a second for 10 s, each of cost 10, and `rest` appended.
fn scenario(rest: &str) -> String {
    format!(
        r#"
        name = "weighed"
        duration = "10s"
        algorithms = ["fixed_window", "token_bucket"]
        [policy]
        limit = 30
        window = "10s"
        [[traffic]]
        name = "client"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.1"
        cost = 10
        {rest}
        "#
    )
}

#[test]
fn the_short_form_counts_cost() {
    let report = run(&scenario(""));
    let admitted: Vec<u64> = report.algorithms.iter().map(|r| r.admitted).collect();
    // Fixed window: 30 points in the one 10 s window, three requests of 10.
    // Token bucket: 30 tokens, 3 more a second. Levels before each request (t = 0..9):
    // 30 → 20, 23 → 13, 16 → 6, 9 (refused), 12 → 2, 5, 8 (refused), 11 → 1, 4, 7 (refused):
    // admitted at 0, 1, 2, 4 and 7.
    assert_eq!(admitted, [3, 5]);
    // In points: 100 offered; 30 and 50 admitted.
    let points: Vec<(u64, u64, u64)> = report
        .algorithms
        .iter()
        .map(|r| r.cost.map(|c| (c.offered, c.admitted, c.rejected)).unwrap())
        .collect();
    assert_eq!(points, [(100, 30, 70), (100, 50, 50)]);
    assert_eq!(report.algorithms[1].sources[0].cost.unwrap().admitted, 50);
}

/// A stack counting requests and points on one key: the points rule (30 a window) refuses
/// the fourth request, long before the requests rule (5 a window) would.
#[test]
fn a_stack_counts_requests_and_points_and_the_points_rule_refuses_first() {
    let text = scenario(
        r#"
        [[contender]]
        name = "graphql"
        [[contender.rule]]
        name = "requests"
        algorithm = "fixed_window"
        limit = 5
        window = "10s"
        unit = "requests"
        [[contender.rule]]
        name = "points"
        algorithm = "fixed_window"
        limit = 30
        window = "10s"
        "#,
    );
    let report = run(&text);
    let r = report
        .algorithms
        .iter()
        .find(|r| r.algorithm == "graphql")
        .unwrap();
    assert_eq!((r.offered, r.admitted), (10, 3));
    let rule = |n: &str| r.rules.iter().find(|x| x.name == n).unwrap();
    assert_eq!((rule("points").admitted, rule("points").refused), (3, 7));
    assert_eq!(rule("requests").refused, 0);
}

/// A method's own cost: writes weigh 10, reads the source's 1.
#[test]
fn a_method_has_a_cost_of_its_own() {
    let text = r#"
        name = "methods"
        duration = "10s"
        algorithms = ["fixed_window"]
        [policy]
        limit = 25
        window = "10s"
        [[traffic]]
        name = "writes"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.1"
        methods = [{ method = "POST", cost = 10 }]
        [[traffic]]
        name = "reads"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.2"
    "#;
    let report = run(text);
    let r = &report.algorithms[0];
    let source = |n: &str| r.sources.iter().find(|s| s.name == n).unwrap();
    // Each address its own key of 25 points: two writes of 10, and every read of 1.
    assert_eq!(source("writes").admitted, 2);
    assert_eq!(source("reads").admitted, 10);
}

#[test]
fn a_limiter_that_cannot_weigh_is_refused_with_the_field_to_change() {
    let text = scenario("").replace(
        r#"["fixed_window", "token_bucket"]"#,
        r#"["fixed_window", "nginx-limit-req"]"#,
    );
    let err = Scenario::parse(&text, "t.toml".as_ref())
        .unwrap_err()
        .to_string();
    assert!(err.contains("algorithms[1]"), "{err}");
    assert!(
        err.contains("`nginx-limit-req` cannot weigh a request"),
        "{err}"
    );
    assert!(err.contains("source `client`"), "{err}");
    let rule = |unit: &str| {
        scenario(&format!(
            r#"
            [[contender]]
            name = "nginx"
            [[contender.rule]]
            name = "zone"
            algorithm = "nginx-limit-req"
            limit = 5
            window = "10s"
            {unit}
            "#
        ))
    };
    let err = Scenario::parse(&rule(""), "t.toml".as_ref())
        .unwrap_err()
        .to_string();
    assert!(err.contains("contender[0].rule[0].algorithm"), "{err}");
    assert!(err.contains("unit = \"requests\""), "{err}");
    // Counting its requests, nginx decides the costly traffic as it would the same requests
    // of cost 1.
    let admitted = |text: &str| {
        let report = run(text);
        let nginx = report.algorithms.iter().find(|r| r.algorithm == "nginx");
        nginx.unwrap().admitted
    };
    let counted = rule(r#"unit = "requests""#);
    let unit_cost = counted.replace("cost = 10", "");
    assert_eq!(admitted(&counted), admitted(&unit_cost));
    assert!(admitted(&counted) < 10);
}

#[test]
fn cost_fields_are_checked_with_their_names() {
    let bad = |fields: &str| {
        let text = scenario("").replace("cost = 10", fields);
        Scenario::parse(&text, "t.toml".as_ref())
            .unwrap_err()
            .to_string()
    };
    assert!(bad("cost = 0").contains("traffic[0].cost"));
    let e = bad(r#"cost_dist = "uniform""#);
    assert!(e.contains("cost_max"), "{e}");
    let e = bad(r#"cost_dist = "uniform"
        cost_min = 9
        cost_max = 3"#);
    assert!(e.contains("9 is above cost_max 3"), "{e}");
    let e = bad("cost_sigma = 2.0");
    assert!(
        e.contains("traffic[0].cost_sigma") && e.contains("needs `cost_dist`"),
        "{e}"
    );
    let e = bad(r#"cost = 3
        costs = [{ cost = 1 }]"#);
    assert!(e.contains("not both"), "{e}");
    let e = bad(r#"cost_dist = "pareto""#);
    assert!(e.contains("unknown cost_dist `pareto`"), "{e}");
    let e = bad(r#"endpoints = [{ path = "/a", cost = 3 }]"#);
    assert!(e.contains("traffic[0].endpoints[0].cost"), "{e}");
}

/// Shopify's refund: each request asks for 10 points and settles 4, its response ending
/// 1.5 s after it; the refunding rule gets 6 points back then.
#[test]
fn a_refunding_rule_gets_back_what_responses_did_not_cost() {
    let text = scenario(
        r#"
        actual_cost = 4
        response_time = "1500ms"
        [[contender]]
        name = "refunding"
        [[contender.rule]]
        name = "points"
        algorithm = "fixed_window"
        limit = 30
        window = "10s"
        refunds = true
        "#,
    );
    let report = run(&text);
    let r = |n: &str| report.algorithms.iter().find(|r| r.algorithm == n).unwrap();
    // Counts at each second (charge 10, 6 back 1.5 s later): 10, 20, (14) 24, (18) 28,
    // (22) 32 refused, (16) 26, 36 refused, (20) 30, 40 refused, (24) 34 refused.
    let refunding = r("refunding");
    assert_eq!((refunding.offered, refunding.admitted), (10, 6));
    let cost = refunding.cost.unwrap();
    assert_eq!((cost.admitted, cost.settled), (60, Some(24)));
    // The short form's limiters keep what they charged: 3 and 5 admitted, as without refunds.
    assert_eq!(r("fixed_window").admitted, 3);
    assert_eq!(r("fixed_window").cost.unwrap().settled, Some(12));
    assert_eq!(r("token_bucket").admitted, 5);
}

#[test]
fn refunds_are_refused_where_nothing_can_be_given_back() {
    let refused = |rest: &str, field: &str, says: &str| {
        let err = Scenario::parse(&scenario(rest), "t.toml".as_ref()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(field) && text.contains(says), "{text}");
        assert_eq!(err.exit_code(), 2);
    };
    let rule = |extra: &str| {
        format!(
            "actual_cost = 4\n[[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\n{extra}\nrefunds = true\n"
        )
    };
    refused(
        &rule("algorithm = \"fixed_window\"\nlimit = 5\nwindow = \"10s\"\nunit = \"requests\""),
        "contender[0].rule[0].refunds",
        "nothing to give back",
    );
    refused(
        &rule("algorithm = \"governor\"\nlimit = 5\nwindow = \"10s\""),
        "contender[0].rule[0].refunds",
        "cannot give back",
    );
    refused("actual_share = 1.5", "traffic[0].actual_share", "[0, 1]");
    refused(
        "actual_share = 0.5\nactual_share_min = 0.6",
        "traffic[0].actual_share_min",
        "above actual_share",
    );
    refused(
        "actual_share_min = 0.5",
        "traffic[0].actual_share_min",
        "needs",
    );
    refused(
        "response_time = \"1s\"",
        "traffic[0].response_time",
        "nothing settles",
    );
    refused(
        "actual_cost = 4\nactual_share = 0.5",
        "traffic[0].actual_share",
        "not both",
    );
}

/// A shaper's refund lands when the delayed response ends: its delay plus the response time.
#[test]
fn a_delayed_request_refunds_when_its_response_ends() {
    let text = |refunds: bool| {
        format!(
            r#"
        name = "shaped"
        duration = "10s"
        algorithms = ["fixed_window"]
        [policy]
        limit = 100
        window = "10s"
        [[traffic]]
        name = "client"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.1"
        cost = 4
        actual_cost = 1
        response_time = "5s"
        [[contender]]
        name = "queue"
        [[contender.rule]]
        name = "points"
        algorithm = "leaky_bucket"
        limit = 10
        window = "10s"
        burst = 10
        refunds = {refunds}
        "#
        )
    };
    let run = |refunds: bool| {
        let report = run(&text(refunds));
        let r = report
            .algorithms
            .into_iter()
            .find(|r| r.algorithm == "queue");
        let r = r.unwrap();
        (r.admitted, r.delayed, r.rejected)
    };
    // One place a second drains; a request takes 4 and fits while under 7 s are queued ahead.
    // Refunds of 3 land 5 s after each request leaves the queue: at 5 s (the first's), 9 s
    // (the second's, delayed 3 s). Admitted at 0, 1 (3 s), 2 (6 s), 5 (4 s), 7 (6 s), 9 (5 s).
    assert_eq!(run(true), (6, 5, 4));
    // Without: the queue holds 12 s after 2 s, and only the request at 6 s fits again.
    assert_eq!(run(false), (4, 3, 6));
}

#[test]
fn a_deployed_contender_neither_refunds_nor_counts_requests() {
    for rule in ["refunds = true", "unit = \"requests\""] {
        let text = scenario(&format!(
            "actual_cost = 4\n[[contender]]\nname = \"c\"\n\
             deployment = {{ replicas = 2, store = \"shared\" }}\n\
             rule = [{{ name = \"r\", algorithm = \"fixed_window\", limit = 30, window = \"10s\", {rule} }}]\n"
        ));
        let err = Scenario::parse(&text, "t.toml".as_ref()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("contender[0].deployment") && text.contains("not modelled"),
            "{text}"
        );
    }
}

/// The figures judged against an intent in units of cost: `(violations, over_intent,
/// needless rejections, needless units, max window units)` of each algorithm.
fn judged_in_cost(rest: &str) -> Vec<(u64, u64, u64, u64, u64)> {
    run(&scenario(rest))
        .algorithms
        .iter()
        .map(|r| {
            let c = r.cost.unwrap();
            (
                r.policy_violations,
                c.over_intent.unwrap(),
                r.needless_rejections,
                c.needless.unwrap(),
                r.max_window_admitted,
            )
        })
        .collect()
}

/// An intent of `limit` points per 10 s per client.
fn cost_intent(limit: u32) -> String {
    format!("[intent]\nunit = \"cost\"\nlimit = {limit}\nwindow = \"10s\"")
}

/// Admitted (see `the_short_form_counts_cost`): fixed window at 0, 1, 2; token bucket at 0, 1,
/// 2, 4 and 7, 10 points each. Against 30 points per 10 s the bucket's admissions at 4 and 7
/// take the window to 40 and 50: two violations, 10 points over each. Every refusal finds a
/// window of 30 already: none is needless.
#[test]
fn an_intent_in_cost_sums_points_in_its_windows() {
    let intent = &cost_intent(30);
    assert_eq!(
        judged_in_cost(intent),
        [(0, 0, 0, 0, 30), (2, 20, 0, 0, 50)]
    );
    let report = run(&scenario(intent));
    let bucket = &report.algorithms[1];
    // The weighted exact log admits 0, 1 and 2 and refuses the rest.
    assert_eq!((bucket.wrongly_allowed, bucket.wrongly_rejected), (2, 0));
    assert_eq!(bucket.sources[0].cost.unwrap().over_intent, Some(20));
    assert_eq!(bucket.worst_window_units, [10, 10, 10, 10, 10]);
}

/// Against 60 points: no window of either goes over (50 at most), and every refusal is
/// needless: the fixed window's 7 (after 0, 1, 2 nothing more is admitted in the run), the
/// bucket's 5 (at 3, 5, 6, 8 and 9 the windows ending then and at 4 and 7 hold at most 50,
/// with room for 10).
#[test]
fn refusals_with_room_in_every_window_are_needless_in_points() {
    let intent = &cost_intent(60);
    assert_eq!(
        judged_in_cost(intent),
        [(0, 0, 7, 70, 30), (0, 0, 5, 50, 50)]
    );
}

/// Each request settles 5 of its 10 points: the intent weighs what was settled. The bucket
/// (charging 10 up front, no refunds) then holds a window to 25 settled points: within 30, and
/// each of its 5 refusals (5 points each) would have fit.
#[test]
fn an_intent_in_cost_weighs_what_requests_settled() {
    let rest = &format!("actual_cost = 5\n{}", cost_intent(30));
    assert_eq!(judged_in_cost(rest), [(0, 0, 7, 35, 15), (0, 0, 5, 25, 25)]);
}

#[test]
fn an_intent_unit_other_than_requests_cost_or_tokens_is_refused() {
    let text = scenario("[intent]\nunit = \"points\"");
    let err = Scenario::parse(&text, "t.toml".as_ref()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("intent.unit"), "{msg}");
    assert!(
        msg.contains(
            r#"expected "requests", "cost", "input_tokens", "output_tokens" or "tokens", got "points""#
        ),
        "{msg}"
    );
}
