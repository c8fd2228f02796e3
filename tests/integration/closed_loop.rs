//! Closed-loop clients: retries on the virtual clock, hand-computed.

use crate::util::{by_name, rlsim, run_scenario, write};
use rlsim::Scenario;
use rlsim::metrics::AlgorithmReport;

const S: u64 = 1_000_000_000;

/// One fixed window of 1 request per 10 s, a replayed trace of one IP, and `on_reject`.
fn run(trace: &str, on_reject: &str) -> AlgorithmReport {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", &format!("time,ip\n{trace}"));
    let path = write(
        dir.path(),
        "s.toml",
        &format!(
            "name = \"t\"\nduration = \"1m\"\nalgorithms = [\"fixed_window\"]\n\
             [policy]\nlimit = 1\nwindow = \"10s\"\n\
             [[traffic]]\nname = \"client\"\nkind = \"replay\"\npath = \"trace.csv\"\non_reject = {on_reject}\n"
        ),
    );
    let r = run_scenario(&Scenario::load(&path).unwrap());
    by_name(&r, "fixed_window").clone()
}

#[test]
fn honouring_retry_after_retries_at_the_boundary_and_is_admitted() {
    // 0: admitted. 3 s: rejected, Retry-After 7 s (the window ends at 10 s). The client waits
    // exactly that: its retry arrives at 10 s, in a new window, and is admitted.
    let fw = run(
        "0,a\n3000000000,a\n",
        r#"{ retry = "retry_after", max_retries = 1 }"#,
    );
    assert_eq!(
        (
            fw.offered,
            fw.retries,
            fw.admitted,
            fw.rejected,
            fw.abandoned
        ),
        (3, 1, 2, 1, 0)
    );
    assert_eq!(
        (
            fw.retries_at_retry_after,
            fw.retries_at_retry_after_admitted
        ),
        (1, 1)
    );
    assert_eq!(
        (fw.attempts_per_request, fw.request_success_rate),
        (1.5, 1.0)
    );
    // The last retry came 7 s after the last first try; one retry was ever pending.
    assert_eq!(
        (fw.retry_backlog_drain_ns, fw.peak_pending_retries),
        (7 * S, 1)
    );
    assert_eq!(fw.clients_gave_up, 0);
}

#[test]
fn immediate_retries_hammer_the_same_closed_window() {
    // Two requests at 0 against 1 per 10 s: the second is rejected and retried at once, three
    // times, each rejected in the same window; then the client gives up.
    let fw = run(
        "0,a\n0,a\n",
        r#"{ retry = "immediately", max_retries = 3 }"#,
    );
    assert_eq!(
        (fw.offered, fw.retries, fw.rejected, fw.abandoned),
        (5, 3, 4, 1)
    );
    // 5 attempts for 2 requests, 1 of them served.
    assert_eq!(
        (fw.attempts_per_request, fw.request_success_rate),
        (2.5, 0.5)
    );
    assert_eq!((fw.clients_gave_up, fw.retry_backlog_drain_ns), (1, 0));
}

#[test]
fn exponential_backoff_doubles_up_to_the_cap() {
    // Rejected at 0; backoff 1 s, 2 s, 4 s, then capped at 4 s: retries at 1 s, 3 s, 7 s
    // (rejected: still the window [0, 10 s)) and 11 s (a new window: admitted).
    let fw = run(
        "0,a\n0,a\n",
        r#"{ retry = "backoff", max_retries = 5, base = "1s", cap = "4s", jitter = "none" }"#,
    );
    assert_eq!(
        (
            fw.offered,
            fw.retries,
            fw.admitted,
            fw.rejected,
            fw.abandoned
        ),
        (6, 4, 2, 4, 0)
    );
    assert_eq!(fw.retry_backlog_drain_ns, 11 * S);
    assert_eq!(fw.last_event_ns, 11 * S);
}

#[test]
fn retries_are_tagged_in_the_time_series() {
    let fw = run(
        "0,a\n0,a\n",
        r#"{ retry = "immediately", max_retries = 2 }"#,
    );
    let retries: u64 = fw.timeseries.iter().map(|b| b.retries).sum();
    assert_eq!((retries, fw.timeseries[0].offered), (2, 4));
}

#[test]
fn bad_reactions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (on_reject, expected) in [
        (r#"{ retry = "sometimes" }"#, "unknown reaction `sometimes`"),
        (
            r#"{ retry = "backof", jitter = "full" }"#,
            "on_reject.retry`: unknown reaction `backof`: did you mean `backoff`?",
        ),
        (
            r#"{ retry = "backoff", jitter = "ful" }"#,
            "on_reject.jitter`: unknown jitter `ful`: did you mean `full`?",
        ),
        (
            r#"{ retry = "immediately", jitter = "full" }"#,
            "only `retry = \"backoff\"` uses `jitter`",
        ),
        (
            r#"{ retry = "backoff", base = "2s", cap = "1s" }"#,
            "at most `cap`",
        ),
        (
            r#"{ retry = "backoff", jitter = "wild" }"#,
            "unknown jitter `wild`",
        ),
        (
            r#"{ retry = "immediately", max_retries = 0 }"#,
            "field `traffic[0].on_reject.max_retries`: 0 is too small: must be a whole number of retries from 1 to 1000",
        ),
        // Waits that would carry a retry past the end of virtual time (once an internal error,
        // exit 70, from a wrapped-around time).
        (
            r#"{ retry = "immediately", rtt = "18446744073709551615ns" }"#,
            "on_reject.rtt`: 3 retries waiting this long after the scenario's end would pass the end of virtual time",
        ),
        (
            r#"{ retry = "backoff", base = "18446744073709551615ns", cap = "18446744073709551615ns" }"#,
            "on_reject.cap`: 3 retries waiting this long",
        ),
        (
            // Each fits alone, not together: 2 × (cap + rtt) > 2^64 ns.
            r#"{ retry = "backoff", max_retries = 2, cap = "60000d", rtt = "60000d" }"#,
            "on_reject.cap`: 2 retries waiting this long",
        ),
    ] {
        let toml = format!(
            "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 1\nwindow = \"1s\"\n\
             [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\non_reject = {on_reject}\n"
        );
        let path = write(dir.path(), "bad.toml", &toml);
        let out = rlsim().arg("run").arg(&path).assert().code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains("bad.toml:10:"), "{stderr}");
        assert!(stderr.contains("traffic[0].on_reject"), "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected `{expected}` in {stderr}"
        );
    }
}
