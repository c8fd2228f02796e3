//! Hand-computed runs of `[[contender]]` stacks: both commit semantics, matchers, per-tier
//! limits, bypass, warnings and per-rule accuracy.

use super::{DecisionSink, Detail, RunOptions, run_all};
use crate::algorithms::{Decision, Outcome};
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::traffic::{Arrival, KeySpace};

/// Every decision: time in ms, outcome, refusing or binding rule, remaining, warned.
#[derive(Default)]
struct Log(Vec<(u64, &'static str, String, u64, bool)>);

impl DecisionSink for Log {
    fn record(&mut self, a: &Arrival, d: &Decision, x: &Detail, _: &KeySpace) -> Result<()> {
        let outcome = match d.outcome {
            Outcome::Allow => "allow",
            Outcome::Delay(_) => "delay",
            Outcome::Reject { .. } => "reject",
        };
        self.0.push((
            a.time / 1_000_000,
            outcome,
            x.rule.to_string(),
            d.remaining,
            x.warned,
        ));
        Ok(())
    }
}

fn run_logged(text: &str) -> (Vec<AlgorithmReport>, Vec<Log>) {
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    let (report, logs) = run_all(
        &scenario,
        RunOptions::new().with_sinks(|_, _| Ok(Some(Log::default()))),
    )
    .unwrap();
    (
        report.algorithms,
        logs.into_iter().map(Option::unwrap).collect(),
    )
}

const TWO_RULES: &str = r#"
    [[contender.rule]]
    name = "a"
    algorithm = "fixed_window"
    limit = 3
    window = "10s"
    [[contender.rule]]
    name = "b"
    algorithm = "fixed_window"
    limit = 1
    window = "1s"
"#;

/// One client every 500 ms for 3 s.
const ONE_CLIENT: &str = r#"
    name = "commit"
    duration = "3s"
    [policy]
    limit = 3
    window = "10s"
    [[traffic]]
    name = "client"
    kind = "constant"
    rate = "2/s"
    ip = "203.0.113.7"
"#;

/// One client every 500 ms for 3 s against a: 3/10s then b: 1/1s.
///
/// all_or_nothing: at 500 ms b refuses and a has not counted, so a still has room at 1 s and
/// 2 s; at 2.5 s a (3 used) refuses. Admitted: 0, 1000, 2000.
/// in_order: at 500 ms a counted (2 used) before b refused; 1000 takes a's third; from 1.5 s
/// a refuses everything. Admitted: 0, 1000.
#[test]
fn the_two_commit_semantics_differ_where_a_later_rule_refuses() {
    let text = format!(
        r#"
        {ONE_CLIENT}
        [[contender]]
        name = "nginx"
        commit = "all_or_nothing"
        {TWO_RULES}
        [[contender]]
        name = "nestjs"
        commit = "in_order"
        {TWO_RULES}
        "#
    );
    let (reports, logs) = run_logged(&text);
    assert_eq!(
        outcomes(&logs[0]),
        [
            row(0, "allow", "b"),
            row(500, "reject", "b"),
            row(1000, "allow", "b"),
            row(1500, "reject", "b"),
            row(2000, "allow", "a"),
            row(2500, "reject", "a"),
        ]
    );
    assert_eq!(
        outcomes(&logs[1]),
        [
            row(0, "allow", "b"),
            row(500, "reject", "b"),
            row(1000, "allow", "a"),
            row(1500, "reject", "a"),
            row(2000, "reject", "a"),
            row(2500, "reject", "a"),
        ]
    );
    let (nginx, nestjs) = (&reports[0], &reports[1]);
    assert_eq!((nginx.algorithm.as_str(), nginx.admitted), ("nginx", 3));
    assert_eq!((nestjs.algorithm.as_str(), nestjs.admitted), ("nestjs", 2));
    assert_eq!(rule_tallies(nginx), [(6, 3, 1), (6, 3, 2)]);
    assert_eq!(rule_tallies(nestjs), [(6, 2, 3), (6, 2, 1)]);
}

/// A decision log's (time in ms, outcome, deciding rule) triples.
fn outcomes(log: &Log) -> Vec<(u64, String, String)> {
    log.0
        .iter()
        .map(|(t, o, r, _, _)| (*t, o.to_string(), r.clone()))
        .collect()
}

fn row(t: u64, o: &str, r: &str) -> (u64, String, String) {
    (t, o.to_string(), r.to_string())
}

/// Each rule's (applied, admitted, refused).
fn rule_tallies(r: &AlgorithmReport) -> Vec<(u64, u64, u64)> {
    r.rules
        .iter()
        .map(|x| (x.applied, x.admitted, x.refused))
        .collect()
}

/// The same client against b: 1/1s then a: 3/10s.
///
/// in_order: a request b refuses stops there, so a counts only the admitted ones (0, 1000,
/// 2000) and admits all three. every_rule (the Envoy ratelimit service): a counts every request
/// b refuses too, so a is full after 1000 (0, 500, 1000) and refuses 2000, which b admits and
/// counts: admitted 0 and 1000 only; the refusal is named after the first refusing rule.
#[test]
fn every_rule_counts_the_requests_an_earlier_rule_refuses() {
    let b_then_a = r#"
    [[contender.rule]]
    name = "b"
    algorithm = "fixed_window"
    limit = 1
    window = "1s"
    [[contender.rule]]
    name = "a"
    algorithm = "fixed_window"
    limit = 3
    window = "10s"
"#;
    let text = format!(
        r#"
        {ONE_CLIENT}
        [[contender]]
        name = "nestjs"
        commit = "in_order"
        {b_then_a}
        [[contender]]
        name = "envoy"
        commit = "every_rule"
        {b_then_a}
        "#
    );
    let (reports, logs) = run_logged(&text);
    assert_eq!(
        outcomes(&logs[0]),
        [
            row(0, "allow", "b"),
            row(500, "reject", "b"),
            row(1000, "allow", "b"),
            row(1500, "reject", "b"),
            row(2000, "allow", "b"),
            row(2500, "reject", "b"),
        ]
    );
    assert_eq!(
        outcomes(&logs[1]),
        [
            row(0, "allow", "b"),
            row(500, "reject", "b"),
            row(1000, "allow", "b"),
            row(1500, "reject", "b"),
            row(2000, "reject", "a"),
            row(2500, "reject", "b"),
        ]
    );
    let (nestjs, envoy) = (&reports[0], &reports[1]);
    assert_eq!((nestjs.algorithm.as_str(), nestjs.admitted), ("nestjs", 3));
    assert_eq!((envoy.algorithm.as_str(), envoy.admitted), ("envoy", 2));
    assert_eq!(rule_tallies(nestjs), [(6, 3, 3), (6, 3, 0)]);
    assert_eq!(rule_tallies(envoy), [(6, 2, 3), (6, 2, 1)]);
}

/// every_rule with b a dry run (the ratelimit service's `shadow_mode`) and a enforcing: every
/// request counts in both. 500 ms: only b refuses, so it is admitted as would-refuse; from
/// 1500 ms a (3 per 10 s: 0, 500, 1000) refuses too, and the enforcing refusal names the
/// request even where the dry-run b refused first (1500, 2500). Admitted: 0, 500, 1000.
#[test]
fn under_every_rule_a_dry_run_rule_refuses_only_where_no_enforcing_one_does() {
    let text = format!(
        r#"
        {ONE_CLIENT}
        [[contender]]
        name = "envoy"
        commit = "every_rule"
        [[contender.rule]]
        name = "b"
        algorithm = "fixed_window"
        limit = 1
        window = "1s"
        dry_run = true
        [[contender.rule]]
        name = "a"
        algorithm = "fixed_window"
        limit = 3
        window = "10s"
        refuse_status = 429
    "#
    );
    let (reports, logs) = run_logged(&text);
    assert_eq!(
        outcomes(&logs[0]),
        [
            row(0, "allow", "b"),
            row(500, "allow", "b"),
            row(1000, "allow", "b"),
            row(1500, "reject", "a"),
            row(2000, "reject", "a"),
            row(2500, "reject", "a"),
        ]
    );
    let envoy = &reports[0];
    assert_eq!((envoy.admitted, envoy.would_refuse), (3, Some(1)));
}

/// Seven sources and a stack of four rules: routes, skip, signed-in, tiers and a bypass list.
const MATCHERS: &str = r#"
        name = "matchers"
        duration = "10s"
        [policy]
        limit = 100
        window = "10s"
        key = "user"
        [[traffic]]
        name = "login"
        kind = "constant"
        signed_in = true
        rate = "1/s"
        user = "alice"
        endpoint = "/auth/login"
        [[traffic]]
        name = "exchange"
        kind = "constant"
        signed_in = true
        rate = "1/s"
        user = "bob"
        endpoint = "/auth/exchange"
        [[traffic]]
        name = "anon"
        kind = "constant"
        rate = "1/s"
        user = ""
        ip = "198.51.100.9"
        endpoint = "/items"
        [[traffic]]
        name = "tiered"
        kind = "constant"
        signed_in = true
        rate = "1/s"
        users = 2
        tiers = [{ name = "free" }, { name = "pro" }]
        endpoint = "/items"
        [[traffic]]
        name = "monitor"
        kind = "constant"
        rate = "1/s"
        api_key = "probe-token"
        endpoint = "/items"
        [[traffic]]
        name = "office"
        kind = "constant"
        rate = "1/s"
        ip = "10.9.8.7"
        endpoint = "/items"
        [[traffic]]
        name = "health"
        kind = "constant"
        rate = "1/s"
        endpoint = "/healthz"
        [[contender]]
        name = "stack"
        bypass = { api_keys = ["probe-token"], cidrs = ["10.9.0.0/16"], routes = ["/healthz"] }
        [[contender.rule]]
        name = "login"
        algorithm = "fixed_window"
        limit = 2
        window = "10s"
        routes = ["/auth/login"]
        [[contender.rule]]
        name = "global"
        algorithm = "fixed_window"
        limit = 1000
        window = "10s"
        skip = ["/auth/exchange"]
        [[contender.rule]]
        name = "anonymous"
        algorithm = "fixed_window"
        limit = 3
        window = "10s"
        key = "ip"
        signed_in = false
        [[contender.rule]]
        name = "plan"
        algorithm = "fixed_window"
        limit = 1
        window = "10s"
        tiers = ["free", "pro"]
        per_tier = [{ tiers = ["pro"], limit = 4 }]
        "#;

/// Routes, skip, signed-in and per-tier limits pick the rules a request meets; bypass lists
/// take requests out of every rule and are counted.
#[test]
fn matchers_tiers_and_bypass_pick_the_rules() {
    let text = MATCHERS;
    let (reports, _) = run_logged(text);
    let r = &reports[0];
    // 10 requests each from monitor, office and health: bypassed. Exchange: no rule applies.
    assert_eq!((r.bypassed, r.unlimited), (Some(30), Some(10)));
    let figures: Vec<(&str, u64, u64, u64)> = r
        .rules
        .iter()
        .map(|x| (x.name.as_str(), x.applied, x.admitted, x.refused))
        .collect();
    assert_eq!(
        figures,
        [
            // alice's logins: 2 admitted of 10.
            ("login", 10, 2, 8),
            // Everything not bypassed or skipped: login 10, anon 10, tiered 20 (2 clients at
            // 1/s each); of those the contender admitted 2 + 3 + 1 + 4.
            ("global", 40, 10, 0),
            // The anonymous source only: 3 of 10.
            ("anonymous", 10, 3, 7),
            // Client 0 of `tiered` is free (1 of 10), client 1 pro (4 of 10).
            ("plan", 10, 1, 9),
            ("plan/pro", 10, 4, 6),
        ]
    );
    assert_eq!(r.admitted, 30 + 10 + 2 + 3 + 1 + 4);
}

/// warn_at 0.8 of 10 warns from the 8th request of a window: the 8th, 9th and 10th of each
/// window carry the warning; the 11th, at 1 s, is the first refusal, 300 ms after the first
/// warning at 700 ms.
#[test]
fn warnings_start_at_the_share_and_lead_the_refusal() {
    let text = r#"
        name = "warn"
        duration = "2s"
        [policy]
        limit = 10
        window = "1s"
        [[traffic]]
        name = "client"
        kind = "constant"
        rate = "10/s"
        ip = "203.0.113.7"
        [[contender]]
        name = "warned"
        [[contender.rule]]
        name = "r"
        algorithm = "fixed_window"
        limit = 10
        window = "2s"
        warn_at = 0.8
        "#;
    let (reports, logs) = run_logged(text);
    let warned: Vec<u64> = logs[0].0.iter().filter(|x| x.4).map(|x| x.0).collect();
    assert_eq!(warned, [700, 800, 900]);
    let remaining: Vec<u64> = logs[0].0.iter().take(3).map(|x| x.3).collect();
    assert_eq!(remaining, [9, 8, 7]);
    let r = &reports[0];
    assert_eq!(r.warned, Some(3));
    let rule = &r.rules[0];
    assert_eq!((rule.warned, rule.refused, rule.keys_refused), (3, 10, 1));
    assert_eq!(rule.keys_warned_before_refusal, 1);
    assert_eq!(rule.warning_lead_min_ns, Some(300_000_000));
    assert_eq!(rule.warning_lead_mean_ns, Some(300_000_000));
}

/// A fixed window of 2 per second admits 2 requests at 900 ms and 2 at 1 s: against the
/// rule's own limit, the admissions at 1 s are the 3rd and 4th in (0, 1 s]: two violations,
/// a worst window of 4, burst factor 2. The contender-level figures are against [policy]
/// (here 10 per second, never exceeded).
#[test]
fn each_rule_is_measured_against_its_own_limit_and_window() {
    let text = r#"
        name = "per rule"
        duration = "2s"
        [policy]
        limit = 10
        window = "1s"
        [[traffic]]
        name = "edge"
        kind = "boundary"
        count = 2
        at = "1s"
        lead = "100ms"
        ip = "203.0.113.7"
        [[contender]]
        name = "fw"
        [[contender.rule]]
        name = "r"
        algorithm = "fixed_window"
        limit = 2
        window = "1s"
        "#;
    let (reports, _) = run_logged(text);
    let r = &reports[0];
    assert_eq!((r.admitted, r.policy_violations), (4, 0));
    let rule = &r.rules[0];
    assert_eq!(
        (rule.violations, rule.max_window_admitted, rule.burst_factor),
        (2, 4, 2.0)
    );
    assert_eq!((rule.keys_seen, rule.needless_rejections), (1, 0));
}

/// A contender of one rule under the policy's key for every request decides exactly as the
/// short form's algorithm does, a profile of a real library included.
#[test]
fn a_one_rule_contender_matches_the_short_form() {
    for algorithm in ["token_bucket", "nestjs-throttler", "express-rate-limit"] {
        let text = format!(
            r#"
            name = "same"
            duration = "1m"
            algorithms = ["{algorithm}"]
            [policy]
            limit = 5
            window = "1s"
            burst = 8
            [[traffic]]
            name = "users"
            kind = "poisson"
            rate = "3/s"
            users = 20
            ips = 4
            [[contender]]
            name = "tb"
            [[contender.rule]]
            name = "only"
            algorithm = "{algorithm}"
            limit = 5
            window = "1s"
            {burst}
            "#,
            burst = if algorithm == "token_bucket" {
                "burst = 8"
            } else {
                ""
            }
        );
        let (reports, _) = run_logged(&text);
        let (short, stack) = (&reports[0], &reports[1]);
        assert_eq!(short.algorithm, algorithm);
        assert!(short.rejected > 0, "{algorithm}: the case limits something");
        for (a, b) in [
            (short.admitted, stack.admitted),
            (short.rejected, stack.rejected),
            (short.policy_violations, stack.policy_violations),
            (short.needless_rejections, stack.needless_rejections),
            (short.keys_seen, stack.keys_seen),
            (short.collateral_rejections, stack.collateral_rejections),
        ] {
            assert_eq!(a, b, "{algorithm}");
        }
        assert_eq!(short.worst_window_key, stack.worst_window_key);
    }
}

/// Three clients, one request a second each (all at 0, 1 and 2 s), against one key for every
/// request (`key = []`), 2 per 1 s window: each second two of the three are admitted, 6 of 9 in
/// all, whoever sends; keyed per client (the policy's ip) the same rule admits all 9.
#[test]
fn a_global_rule_key_is_one_state_for_every_client() {
    let sources: String = (1..=3)
        .map(|i| {
            format!(
                "[[traffic]]\nname = \"c{i}\"\nkind = \"constant\"\nrate = \"1/s\"\nip = \"203.0.113.{i}\"\n"
            )
        })
        .collect();
    let rule = |name: &str, key: &str| {
        format!(
            "[[contender]]\nname = \"{name}\"\n[[contender.rule]]\nname = \"r\"\nalgorithm = \"fixed_window\"\nlimit = 2\nwindow = \"1s\"\n{key}\n"
        )
    };
    let text = format!(
        "name = \"global\"\nduration = \"3s\"\n[policy]\nlimit = 2\nwindow = \"1s\"\n{sources}{}{}",
        rule("global", "key = []"),
        rule("per_ip", "")
    );
    let (reports, logs) = run_logged(&text);
    assert_eq!(reports[0].admitted, 6);
    assert_eq!(reports[1].admitted, 9);
    let per_second: Vec<usize> = (0..3)
        .map(|s| {
            logs[0]
                .0
                .iter()
                .filter(|(t, o, ..)| t / 1000 == s && *o == "allow")
                .count()
        })
        .collect();
    assert_eq!(per_second, [2, 2, 2]);
    let scenario = Scenario::parse(&text, "t.toml".as_ref()).unwrap();
    let stack = scenario.algorithms[0].stack().unwrap();
    assert_eq!(stack.rules[0].key.describe("+"), "global");
    // Only a rule may be global: the policy and the intent judge clients.
    let policy = text.replacen("window = \"1s\"\n", "window = \"1s\"\nkey = []\n", 1);
    let err = Scenario::parse(&policy, "t.toml".as_ref()).unwrap_err();
    assert!(err.to_string().contains("policy.key"), "{err}");
}
