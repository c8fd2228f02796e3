//! Replaying recorded traffic.

use crate::util::{by_name, run_scenario, write};
use rlsim::Scenario;

#[test]
fn replays_rfc3339_and_nanosecond_times_aligned_to_the_day() {
    let dir = tempfile::tempdir().unwrap();
    // Three requests from one IP at 12:00:59.5, 12:00:59.9 and 12:01:00.1 UTC: virtual time 0 is
    // midnight, so a 1-minute fixed window sees the :59/:00 boundary exactly as production did.
    write(
        dir.path(),
        "trace.csv",
        "time,ip,endpoint,status\n\
         2026-11-29T12:00:59.5Z,198.51.100.1,/login,200\n\
         2026-11-29T12:00:59.9Z,198.51.100.1,/login,200\n\
         2026-11-29T12:01:00.100+00:00,198.51.100.1,/login,200\n\
         2026-11-29T12:01:01Z,198.51.100.2,/login,200\n",
    );
    let path = write(
        dir.path(),
        "s.toml",
        r#"
        name = "replay"
        duration = "1d"
        algorithms = ["fixed_window", "sliding_window_log"]
        [policy]
        limit = 2
        window = "1m"
        [[traffic]]
        name = "log"
        kind = "replay"
        path = "trace.csv"
        "#,
    );
    let scenario = Scenario::load(&path).unwrap();
    let r = run_scenario(&scenario);
    let fw = by_name(&r, "fixed_window");
    // 12:00:59.5 and 12:00:59.9 fill window 12:00; 12:01:00.1 opens window 12:01.
    assert_eq!((fw.offered, fw.admitted, fw.keys_seen), (4, 4, 2));
    assert_eq!(fw.max_window_admitted, 3);
    let log = by_name(&r, "sliding_window_log");
    assert_eq!((log.admitted, log.rejected), (3, 1));
}

#[test]
fn replays_nanosecond_times_as_virtual_time() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "trace.csv",
        "time,user\n59900000000,alice\n59900000000,alice\n60000000000,alice\n",
    );
    let path = write(
        dir.path(),
        "s.toml",
        r#"
        name = "replay"
        duration = "2m"
        algorithms = ["fixed_window"]
        [policy]
        limit = 2
        window = "1m"
        key = "user"
        [[traffic]]
        name = "log"
        kind = "replay"
        path = "trace.csv"
        "#,
    );
    let r = run_scenario(&Scenario::load(&path).unwrap());
    let fw = by_name(&r, "fixed_window");
    assert_eq!((fw.offered, fw.admitted, fw.max_window_admitted), (3, 3, 3));
    assert_eq!(fw.worst_window_key, "alice");
}
