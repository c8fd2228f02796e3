//! Every measured figure on a tiny trace, with the expected value worked out by hand.

use crate::util::{boundary_attack, by_name, run_scenario, run_toml, write};
use rlsim::Scenario;
use rlsim::metrics::AlgorithmReport;

const S: u64 = 1_000_000_000;

/// Runs `algorithms` on a replayed trace (`time` in ns, then `ip`, `user`) under `policy`.
fn run_trace(policy: &str, algorithms: &str, trace: &str) -> Vec<AlgorithmReport> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", &format!("time,ip,user\n{trace}"));
    let path = write(
        dir.path(),
        "s.toml",
        &format!(
            "name = \"t\"\nduration = \"1m\"\nalgorithms = [{algorithms}]\n{policy}\n\
             [[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
        ),
    );
    run_scenario(&Scenario::load(&path).unwrap())
}

const L2_W10: &str = "[policy]\nlimit = 2\nwindow = \"10s\"";

#[test]
fn a_small_burst_allowance_rejects_needlessly() {
    // L = 2 per 10 s, but the token bucket holds one token (B = 1) and refills 0.2/s.
    // t = 0: admitted (bucket 1 → 0). t = 1 s: 0.2 token, rejected.
    // The window (−9 s, 1 s] holds one admission, and no later window containing 1 s gets any:
    // admitting it would have kept every window at 2 ≤ L. Needless, and the sliding log admits it.
    let policy = format!("{L2_W10}\n[algorithm.token_bucket]\nburst = 1");
    let r = run_trace(
        &policy,
        "\"token_bucket\", \"sliding_window_log\"",
        "0,a,u\n1000000000,a,u\n",
    );
    let tb = by_name(&r, "token_bucket");
    assert_eq!(
        (tb.admitted, tb.rejected, tb.needless_rejections),
        (1, 1, 1)
    );
    assert_eq!(tb.needless_rejection_rate, 1.0);
    assert_eq!((tb.wrongly_allowed, tb.wrongly_rejected), (0, 1));
    assert_eq!(tb.wrongly_decided_share, 0.5); // 1 of 2 requests
    // The key asked for 2 in 10 s, within the policy, and was limited: a false positive.
    assert_eq!((tb.keys_within_policy, tb.false_positive_keys), (1, 1));
    let log = by_name(&r, "sliding_window_log");
    assert_eq!(
        (
            log.admitted,
            log.needless_rejections,
            log.false_positive_keys
        ),
        (2, 0, 0)
    );
    assert_eq!(log.wrongly_decided_share, 0.0);
}

#[test]
fn sliding_counter_estimate_error_and_false_positive() {
    // L = 2 per 10 s. Requests at 0, 9 s and 10 s.
    // 0: estimate 0, true 0 (not scored). Admitted; curr = 1.
    // 9 s: estimate curr = 1, true 1: error 0. Admitted; curr = 2.
    // 10 s: new window, elapsed 0: estimate 2·(10−0)/10 + 0 = 2, true count in (0, 10] is 1
    //   (the request at 0 left): error |2 − 1|/1 = 1. 2 is not < 2: rejected.
    // mean_rate_error = (0 + 1) / 2 = 0.5.
    // Offered windows never hold 3, so the key is within the policy: a false positive, and the
    // rejection is needless (windows ending in [10 s, 20 s) would hold 9 s and 10 s: 2).
    let r = run_trace(
        L2_W10,
        "\"sliding_window_counter\", \"fixed_window\"",
        "0,a,u\n9000000000,a,u\n10000000000,a,u\n",
    );
    let swc = by_name(&r, "sliding_window_counter");
    assert_eq!((swc.admitted, swc.rejected), (2, 1));
    assert_eq!(swc.mean_rate_error, Some(0.5));
    assert_eq!(
        (
            swc.false_positive_keys,
            swc.needless_rejections,
            swc.wrongly_rejected
        ),
        (1, 1, 1)
    );
    // The fixed window starts over at 10 s and admits all three. Its estimates: 0 (skipped),
    // 1 vs 1, then 0 (new window) vs 1: error 1. Mean (0 + 1)/2 = 0.5.
    let fw = by_name(&r, "fixed_window");
    assert_eq!((fw.admitted, fw.mean_rate_error), (3, Some(0.5)));
    assert_eq!((fw.max_window_admitted, fw.policy_violations), (2, 0));
}

#[test]
fn exact_algorithms_report_no_estimate() {
    let r = run_trace(L2_W10, "\"sliding_window_log\", \"gcra\"", "0,a,u\n");
    assert!(r.iter().all(|a| a.mean_rate_error.is_none()));
}

#[test]
fn boundary_attack_classification() {
    // The attacker's 200 requests in 100 ms exceed 100/min: its key is over the policy.
    // The fixed window never limits it (a false negative) and admits 100 that the exact log
    // rejects (the second batch).
    let r = run_toml(&boundary_attack(&[
        "fixed_window",
        "sliding_window_log",
        "sliding_window_counter",
    ]));
    let fw = by_name(&r, "fixed_window");
    assert_eq!((fw.keys_over_policy, fw.false_negative_keys), (1, 1));
    assert_eq!((fw.wrongly_allowed, fw.wrongly_rejected), (100, 0));
    assert_eq!(fw.wrongly_decided_share, 0.5);
    assert_eq!(
        (
            fw.roles.abusive_offered,
            fw.roles.abusive_admitted,
            fw.roles.abusive_leakage
        ),
        (200, 200, Some(1.0))
    );
    // Fixed window estimates: first batch, estimate = true = k for k = 1..99 (error 0, the
    // first request is not scored); second batch, request j sees estimate j (its new window)
    // against true 100 + j: error 100/(100 + j).
    let expected = (0..100).map(|j| 100.0 / (100.0 + j as f64)).sum::<f64>() / 199.0;
    assert!((fw.mean_rate_error.unwrap() - expected).abs() < 1e-12);
    // The sliding counter's estimate is exact here: k for the first batch, and at 60 s
    // 100·(60 − 0)/60 + 0 = 100 = the true count.
    assert_eq!(
        by_name(&r, "sliding_window_counter").mean_rate_error,
        Some(0.0)
    );
    let log = by_name(&r, "sliding_window_log");
    assert_eq!(
        (
            log.false_negative_keys,
            log.wrongly_allowed,
            log.roles.abusive_leakage
        ),
        (0, 0, Some(0.5))
    );
    for a in &r {
        assert_eq!(
            a.remaining_lies, 0,
            "{}: remaining never promises a rejected request",
            a.algorithm
        );
    }
}

#[test]
fn nat_collateral_damage() {
    // 4 users at 3/s behind 2 IPs, against 5/s per IP (a fixed window). The source sends every
    // 1/12 s, cycling users 0, 1, 2, 3; users 0 and 2 share IP 0, users 1 and 3 IP 1. In each
    // second IP 0 sees users 0, 2, 0, 2, 0, 2: the 6th (user 2) is rejected; likewise user 3 on
    // IP 1. Each user sends 3/s, within 5/s: 10 s × 2 = 20 collateral rejections, 2 clients.
    let nat = |key: &str| {
        format!(
            "name = \"nat\"\nduration = \"10s\"\nalgorithms = [\"fixed_window\"]\n\
             [policy]\nlimit = 5\nwindow = \"1s\"\nkey = \"{key}\"\n\
             [[traffic]]\nname = \"office\"\nkind = \"nat\"\narrival = \"constant\"\nusers = 4\nips = 2\nrate = \"3/s\"\n"
        )
    };
    let r = run_toml(&nat("ip"));
    let fw = by_name(&r, "fixed_window");
    assert_eq!(fw.rejected, 20);
    assert_eq!((fw.collateral_rejections, fw.collateral_clients), (20, 2));
    // Both IPs got 50 of 60: equal shares, Jain's index 1.
    assert_eq!(fw.fairness_jain, 1.0);
    // Keyed by user nobody shares a key and nobody is rejected.
    let r = run_toml(&nat("user"));
    assert_eq!(by_name(&r, "fixed_window").collateral_rejections, 0);
}

#[test]
fn fairness_over_legit_keys() {
    // L = 1 per 10 s. Key a sends 2 at t = 0 (1 admitted: x = 1/2), key b sends 1 (x = 1).
    // Jain = (0.5 + 1)² / (2 · (0.25 + 1)) = 2.25 / 2.5 = 0.9.
    let r = run_trace(
        "[policy]\nlimit = 1\nwindow = \"10s\"",
        "\"fixed_window\"",
        "0,a,u\n0,a,u\n0,b,v\n",
    );
    assert_eq!(by_name(&r, "fixed_window").fairness_jain, 0.9);
}

#[test]
fn retry_exactly_at_retry_after_is_admitted() {
    // L = 1 per 10 s, fixed window. 0: admitted. 5 s: rejected, Retry-After 5 s. 10 s: the
    // retry arrives exactly when promised, in a new window: admitted.
    let r = run_trace(
        "[policy]\nlimit = 1\nwindow = \"10s\"",
        "\"fixed_window\"",
        "0,a,u\n5000000000,a,u\n10000000000,a,u\n",
    );
    let fw = by_name(&r, "fixed_window");
    assert_eq!(
        (
            fw.retries_at_retry_after,
            fw.retries_at_retry_after_admitted
        ),
        (1, 1)
    );
    assert_eq!(fw.remaining_lies, 0);
}

#[test]
fn live_keys_and_memory() {
    // W = 10 s. Keys a and b at 0, c at 25 s: by then a and b have been idle for 15 s and are
    // evicted, so the peak is 2 live keys and the end 1.
    let trace = "0,a,u\n0,b,v\n25000000000,c,w\n";
    let r = run_trace(
        L2_W10,
        "\"fixed_window\", \"sliding_window_log\", \"token_bucket\", \"sliding_window_counter\"",
        trace,
    );
    for a in &r {
        assert_eq!(
            (a.keys_seen, a.peak_live_keys, a.final_live_keys),
            (3, 2, 1),
            "{}",
            a.algorithm
        );
        assert_eq!(a.state_bytes_per_key, a.peak_state_bytes as f64 / 2.0);
    }
    // Redis estimates at the peak (2 keys, one entry each): string keys of 80 bytes, a sorted
    // set of 80 + 32 per member, a two-field hash of 104.
    let redis: Vec<u64> = r.iter().map(|a| a.peak_redis_bytes).collect();
    assert_eq!(redis, [2 * 80, 2 * (80 + 32), 2 * 104, 2 * 80]);
    assert_eq!(by_name(&r, "sliding_window_log").redis_bytes_per_key, 112.0);
}

#[test]
fn shaper_delays_legit_traffic() {
    // Leaky bucket, 1 per second, queue of 2 (B = 2). Two legit requests at 0: the first leaves
    // at once, the second 1 s later. Delay figures: one delayed request, 1 s.
    let r = run_trace(
        "[policy]\nlimit = 1\nwindow = \"1s\"\nburst = 2",
        "\"leaky_bucket\"",
        "0,a,u\n0,a,u\n",
    );
    let lb = by_name(&r, "leaky_bucket");
    assert_eq!((lb.allowed, lb.delayed), (1, 1));
    assert_eq!(
        (lb.delay.count, lb.delay.max_ns, lb.delay.mean_ns),
        (1, S, S as f64)
    );
    assert_eq!(
        (lb.roles.legit_delayed, lb.roles.legit_delay_max_ns),
        (1, S)
    );
    // Released 1 s apart: never 2 in a 1 s window.
    assert_eq!(
        (
            lb.max_window_admitted,
            lb.policy_violations,
            lb.last_event_ns
        ),
        (1, 0, S)
    );
}

#[test]
fn boundary_delay_percentiles() {
    // Leaky bucket under the boundary attack (see exact.rs): the first batch's k-th request
    // (k = 1..99) waits k·600 ms, and the one admitted from the second batch 59.9 s.
    // Mean = (0.6 s · (1 + … + 99) + 59.9 s) / 100 = (2970 + 59.9) / 100 s = 30.299 s.
    let r = run_toml(&boundary_attack(&["leaky_bucket"]));
    let d = &by_name(&r, "leaky_bucket").delay;
    assert_eq!((d.count, d.max_ns), (100, 59_900_000_000));
    assert!((d.mean_ns - 30_299_000_000.0).abs() < 1.0, "{}", d.mean_ns);
    // Percentiles carry three significant figures: the 50th of 100 is 50·600 ms = 30 s, the
    // 90th 54 s, the 99th 59.4 s.
    let close = |got: u64, want: f64| (got as f64 - want).abs() <= want * 0.001;
    assert!(close(d.p50_ns, 30e9), "{}", d.p50_ns);
    assert!(close(d.p90_ns, 54e9), "{}", d.p90_ns);
    assert!(close(d.p99_ns, 59.4e9), "{}", d.p99_ns);
    // No legit traffic here.
    assert_eq!(by_name(&r, "leaky_bucket").roles.legit_delayed, 0);
}
