//! Absolute time: profiles of libraries that read the wall clock see a replay's own timestamps,
//! and a synthetic scenario's `start`.

use crate::util::{by_name, rlsim, run_scenario, write};
use rlsim::Scenario;

const PROFILE: &str = "python-limits-sliding-window-counter";

/// `1 per 11 seconds` of the library's sliding counter, over `traffic`, with `head` on top.
fn scenario(head: &str, traffic: &str) -> String {
    format!(
        "name = \"t\"\nduration = \"30s\"\n{head}algorithms = [\"{PROFILE}\"]\n\
         [policy]\nlimit = 1\nwindow = \"1s\"\n\
         [profile.{PROFILE}]\nlimit = \"1 per 11 seconds\"\n\
         [[traffic]]\nname = \"client\"\n{traffic}"
    )
}

/// (admitted, rejected) of the scenario `text`, run from a file in `dir`.
fn outcome(dir: &std::path::Path, text: &str) -> (u64, u64) {
    let path = write(dir, "s.toml", text);
    let r = run_scenario(&Scenario::load(&path).unwrap());
    let r = by_name(&r, PROFILE);
    (r.admitted, r.rejected)
}

#[test]
fn a_replay_aligns_the_librarys_windows_to_the_traces_own_time() {
    // 1735689593 s is a multiple of 11 s: both hits fall in one window, and `limits` refuses
    // the second. From rlsim's former origin (2026-01-01 + 0) the second hit fell in the next
    // window, weighted 1 − 2/11, and was admitted.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "trace.csv",
        "time,ip\n1735689593000000000,a\n1735689603000000000,a\n",
    );
    let text = scenario("", "kind = \"replay\"\npath = \"trace.csv\"\n");
    assert_eq!(
        Scenario::load(&write(dir.path(), "s.toml", &text))
            .unwrap()
            .start,
        1_735_689_593_000_000_000
    );
    assert_eq!(outcome(dir.path(), &text), (1, 1));
}

#[test]
fn a_sorted_replay_starts_at_its_earliest_record_less_its_offset() {
    // Out of order within `sort_window`: the earliest record (line 3) is virtual 0's instant,
    // rounded down to the policy window (1 s), less the 2 s `offset`.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "trace.csv",
        "time,ip\n1735689593500000000,a\n1735689592700000000,a\n1735689603000000000,a\n",
    );
    let text = scenario(
        "",
        "kind = \"replay\"\npath = \"trace.csv\"\nsort_window = \"1s\"\noffset = \"2s\"\n",
    );
    let s = Scenario::load(&write(dir.path(), "s.toml", &text)).unwrap();
    assert_eq!(s.start, 1_735_689_590_000_000_000);
}

#[test]
fn a_synthetic_scenario_starts_at_its_start_instant() {
    // Two requests 10 s apart (6/min from 0). From 2024-12-31T23:59:53Z, a multiple of 11 s,
    // they share a window and the second is refused; from the default start (2026-01-01, 8 s
    // into an 11 s window) the second is in the next window and admitted.
    let dir = tempfile::tempdir().unwrap();
    let traffic = "kind = \"constant\"\nrate = \"6/min\"\nip = \"192.0.2.1\"\n";
    let text = |head: &str| scenario(head, traffic).replace("30s", "20s");
    assert_eq!(
        outcome(dir.path(), &text("start = \"2024-12-31T23:59:53Z\"\n")),
        (1, 1)
    );
    assert_eq!(outcome(dir.path(), &text("")), (2, 0));
    // An offset is an instant too.
    assert_eq!(
        outcome(dir.path(), &text("start = \"2025-01-01T00:59:53+01:00\"\n")),
        (1, 1)
    );
}

#[test]
fn start_is_refused_when_malformed_or_beside_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", "time,ip\n0,a\n");
    let bad = scenario(
        "start = \"yesterday\"\n",
        "kind = \"constant\"\nrate = \"6/min\"\nip = \"192.0.2.1\"\n",
    );
    let both = scenario(
        "start = \"2025-01-01T00:00:00Z\"\n",
        "kind = \"replay\"\npath = \"trace.csv\"\n",
    );
    for (text, says) in [
        (bad, "`yesterday` is not an RFC 3339 instant"),
        (both, "a replay starts at its trace's own time"),
    ] {
        let path = write(dir.path(), "s.toml", &text);
        let out = rlsim().arg("check").arg(&path).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            stderr.contains(says) && stderr.contains("s.toml:3"),
            "{stderr}"
        );
    }
}
