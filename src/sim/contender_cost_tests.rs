//! What a contender costs: the peak memory of its rules together, and its decisions timed.

use super::{RunOptions, run_all};
use crate::scenario::Scenario;

/// Ten clients on /a for the first 3 s, ten others on /b from 10 s to 13 s; one rule per
/// route. Idle keys are swept every second (the policy's window), so /a's ten keys are gone
/// long before /b's arrive: the rules never hold more than 10 keys together, though each rule
/// peaked at 10 (the sum of their peaks, what was reported before, is 20).
#[test]
fn peak_memory_is_the_peak_of_the_sum() {
    let text = r#"
        name = "peaks"
        duration = "20s"
        [policy]
        limit = 100
        window = "1s"
        [[traffic]]
        name = "a"
        kind = "constant"
        users = 10
        rate = "2/s"
        endpoint = "/a"
        stop = "3s"
        [[traffic]]
        name = "b"
        kind = "constant"
        users = 10
        rate = "2/s"
        endpoint = "/b"
        start = "10s"
        stop = "13s"
        [[contender]]
        name = "two"
        [[contender.rule]]
        name = "ra"
        algorithm = "fixed_window"
        limit = 100
        window = "1s"
        routes = ["/a"]
        [[contender.rule]]
        name = "rb"
        algorithm = "fixed_window"
        limit = 100
        window = "1s"
        routes = ["/b"]
    "#;
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    let (report, _) = run_all(&scenario, RunOptions::new().timed(true)).unwrap();
    let r = &report.algorithms[0];
    assert_eq!(r.offered, 120);
    assert_eq!(r.peak_live_keys, 10);
    // b's keys: sweeps follow the requests, and none comes after b's last.
    assert_eq!(r.final_live_keys, 10);
    // Every captured decision was timed at least once, in whole passes.
    let t = &report.throughput[0];
    assert!(t.decisions_timed >= 120);
    assert_eq!(t.decisions_timed % 120, 0);
}

/// Reads (GET) and writes (POST) from one address, 1/s each for 10 s; a rule takes only
/// writes, 2 per 10 s: every read meets no rule (10 unlimited), 2 of the 10 writes pass.
#[test]
fn a_rule_matches_http_methods() {
    let text = r#"
        name = "methods"
        duration = "10s"
        [policy]
        limit = 100
        window = "10s"
        [[traffic]]
        name = "reads"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.1"
        [[traffic]]
        name = "writes"
        kind = "constant"
        rate = "1/s"
        ip = "198.51.100.1"
        method = "post"
        [[traffic]]
        name = "mixed"
        kind = "constant"
        rate = "10/s"
        ip = "198.51.100.2"
        methods = [{ method = "GET", weight = 1 }, { method = "POST", weight = 1 }]
        [[contender]]
        name = "writes"
        [[contender.rule]]
        name = "post"
        algorithm = "fixed_window"
        limit = 2
        window = "10s"
        methods = ["POST"]
    "#;
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    let (report, _) = run_all(&scenario, RunOptions::new().timed(true)).unwrap();
    let r = &report.algorithms[0];
    let source = |n: &str| r.sources.iter().find(|s| s.name == n).unwrap();
    assert_eq!(
        (source("reads").offered, source("reads").admitted),
        (10, 10)
    );
    assert_eq!(
        (source("writes").offered, source("writes").admitted),
        (10, 2)
    );
    // The mix: some of its 100 requests are POSTs, drawn per request; the rule applies to
    // exactly those, and the rest meet no rule.
    let mixed = source("mixed");
    let rule = &r.rules[0];
    let mixed_posts = rule.applied - 10;
    assert!(mixed_posts > 0 && mixed_posts < 100, "{mixed_posts}");
    assert_eq!(r.unlimited, Some(10 + (100 - mixed_posts)));
    assert_eq!(mixed.admitted, 100 - mixed_posts + 2);
}
