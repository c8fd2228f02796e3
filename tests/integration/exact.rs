//! Hand-computed truths: exact counts the engine must reproduce, with the arithmetic written out.

use crate::util::{boundary_attack, by_name, run_toml};

#[test]
fn boundary_attack_doubles_the_fixed_window_and_nothing_else() {
    // L = 100/min. The attacker sends 100 requests at 59.9 s and 100 at 60.0 s.
    let r = run_toml(&boundary_attack(&[]));

    // Fixed window: window [0, 60 s) counts the first 100, window [60 s, 120 s) the next 100.
    // All 200 are admitted within 100 ms: the rolling window (0.1 s, 60.1 s] holds 200 = 2L.
    let fw = by_name(&r, "fixed_window");
    assert_eq!((fw.offered, fw.admitted, fw.rejected), (200, 200, 0));
    assert_eq!(fw.max_window_admitted, 200);
    assert_eq!(fw.burst_factor, 2.0);
    // Admissions 101..200 each see more than 100 in their window.
    assert_eq!(fw.policy_violations, 100);
    assert_eq!(fw.worst_window_key, "203.0.113.7");
    assert_eq!(fw.worst_window_end_ns, 60_000_000_000);

    // Sliding log: at 60.0 s the window (0 s, 60 s] still holds the 100 from 59.9 s.
    let log = by_name(&r, "sliding_window_log");
    assert_eq!((log.admitted, log.rejected), (100, 100));
    assert_eq!((log.burst_factor, log.policy_violations), (1.0, 0));

    // Sliding counter at 60.0 s: previous = 100, elapsed = 0: 100·(60−0)/60 + 0 = 100, not < 100.
    let swc = by_name(&r, "sliding_window_counter");
    assert_eq!((swc.admitted, swc.rejected), (100, 100));

    // Token bucket (B = 100, 100 tokens/min): full at 59.9 s, 100 taken; 100 ms refills
    // 100·0.1/60 = 0.17 token, so nothing at 60.0 s.
    let tb = by_name(&r, "token_bucket");
    assert_eq!((tb.admitted, tb.rejected), (100, 100));

    // GCRA: T = 600 ms, τ = 99·T = 59.4 s. After 100 at 59.9 s, TAT = 59.9 + 100·0.6 = 119.9 s;
    // at 60.0 s the earliest allowed time is 119.9 − 59.4 = 60.5 s, so all 100 are rejected.
    let gcra = by_name(&r, "gcra");
    assert_eq!((gcra.admitted, gcra.rejected), (100, 100));

    // Leaky bucket (queue 100, one departure per 600 ms): the first batch fills the queue, the
    // first request leaving at once. At 60.0 s that one has left, so exactly one more fits,
    // departing in the slot after the 100th: 59.9 + 100·0.6 = 119.9 s, a delay of 59.9 s.
    let lb = by_name(&r, "leaky_bucket");
    assert_eq!((lb.allowed, lb.delayed, lb.rejected), (1, 100, 99));
    assert_eq!(lb.delay.max_ns, 59_900_000_000);
    // Departures are 600 ms apart: any 60 s window holds at most 100.
    assert_eq!((lb.max_window_admitted, lb.policy_violations), (100, 0));
    assert_eq!(lb.last_event_ns, 119_900_000_000);
}

#[test]
fn token_bucket_admits_burst_plus_refill_of_a_long_burst() {
    // 1000 requests 10 ms apart from t = 0 (the last at 9.99 s), B = 100, refill 100/min.
    // Admitted = 100 + floor(100 · 9.99 s / 60 s) = 100 + floor(16.65) = 116.
    let r = run_toml(
        r#"
        name = "long burst"
        duration = "10s"
        algorithms = ["token_bucket", "gcra"]
        [policy]
        limit = 100
        window = "1m"
        [[traffic]]
        name = "client"
        kind = "constant"
        rate = "100/s"
        "#,
    );
    let tb = by_name(&r, "token_bucket");
    assert_eq!((tb.offered, tb.admitted), (1000, 116));
    // W/L = 600 ms is a whole number of ns: GCRA decides exactly like the token bucket.
    assert_eq!(by_name(&r, "gcra").admitted, 116);
}

#[test]
fn rejected_requests_do_not_consume_the_fixed_window() {
    // 10 requests/s against 5 per second: each 1 s window admits exactly its first 5.
    let r = run_toml(
        r#"
        name = "steady overload"
        duration = "10s"
        algorithms = ["fixed_window", "sliding_window_log"]
        [policy]
        limit = 5
        window = "1s"
        [[traffic]]
        name = "client"
        kind = "constant"
        rate = "10/s"
        "#,
    );
    for name in ["fixed_window", "sliding_window_log"] {
        let a = by_name(&r, name);
        // Arrivals at 0, 100 ms, ..., 9.9 s: 10 per window, the first 5 admitted in each.
        assert_eq!((a.offered, a.admitted, a.rejected), (100, 50, 50), "{name}");
        assert_eq!(a.max_window_admitted, 5, "{name}");
    }
}

#[test]
fn nat_users_share_their_ip_key() {
    // 4 users behind 2 IPs, each user sending 3/s at a constant rate, against 5/s per IP.
    // Per IP: 2 users · 3/s = 6/s offered, so a 1 s fixed window admits 5 of every 6.
    let r = run_toml(
        r#"
        name = "nat"
        duration = "10s"
        algorithms = ["fixed_window"]
        [policy]
        limit = 5
        window = "1s"
        key = "ip"
        [[traffic]]
        name = "office"
        kind = "nat"
        arrival = "constant"
        users = 4
        ips = 2
        rate = "3/s"
        "#,
    );
    let fw = by_name(&r, "fixed_window");
    // 4 users · 3/s · 10 s = 120 offered; per IP per second 6 offered, 5 admitted.
    assert_eq!((fw.offered, fw.admitted, fw.rejected), (120, 100, 20));
    assert_eq!(fw.keys_seen, 2);
}

#[test]
fn keying_on_user_separates_nat_users() {
    let r = run_toml(
        r#"
        name = "nat by user"
        duration = "10s"
        algorithms = ["fixed_window"]
        [policy]
        limit = 5
        window = "1s"
        key = "user"
        [[traffic]]
        name = "office"
        kind = "nat"
        arrival = "constant"
        users = 4
        ips = 2
        rate = "3/s"
        "#,
    );
    let fw = by_name(&r, "fixed_window");
    assert_eq!((fw.offered, fw.admitted, fw.rejected), (120, 120, 0));
    assert_eq!(fw.keys_seen, 4);
}

#[test]
fn bursts_are_counted_per_window() {
    // 8 requests every 2 s against 5/s: each burst is cut to 5 by every algorithm except the
    // leaky bucket, which queues up to 5 (the 6th to 8th are rejected too).
    let r = run_toml(
        r#"
        name = "bursts"
        duration = "10s"
        [policy]
        limit = 5
        window = "1s"
        [[traffic]]
        name = "batch"
        kind = "bursts"
        count = 8
        every = "2s"
        "#,
    );
    for a in &r {
        assert_eq!(a.offered, 40, "{}", a.algorithm);
        assert_eq!(a.admitted, 25, "{}: 5 of each of 5 bursts", a.algorithm);
        assert_eq!(a.policy_violations, 0, "{}", a.algorithm);
    }
    // The shaper admits all 5 but spaces them 200 ms apart: 4 of each burst wait.
    assert_eq!(by_name(&r, "leaky_bucket").delayed, 20);
}

#[test]
fn per_algorithm_overrides_apply() {
    let r = run_toml(
        r#"
        name = "override"
        duration = "1s"
        algorithms = ["token_bucket", "gcra"]
        [policy]
        limit = 10
        window = "1s"
        [algorithm.token_bucket]
        burst = 3
        [[traffic]]
        name = "burst"
        kind = "bursts"
        count = 20
        every = "1s"
        "#,
    );
    let tb = by_name(&r, "token_bucket");
    assert_eq!((tb.burst, tb.admitted), (3, 3));
    let gcra = by_name(&r, "gcra");
    assert_eq!((gcra.burst, gcra.admitted), (10, 10));
}
