//! A replay the run did not play whole says so: a trace cut at the scenario's `duration` with
//! records left, and a trace with no record, in the verdict's warnings (the terminal and
//! summary.json alike).

use crate::util::{rlsim, summary, write};

/// A 10-second policy over `duration`, every algorithm's exact one, replaying trace.csv.
fn scenario(duration: &str) -> String {
    format!(
        "name = \"cut\"\nduration = \"{duration}\"\nalgorithms = [\"sliding_window_log\"]\n\
         [policy]\nlimit = 100\nwindow = \"10s\"\n\
         [[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    )
}

/// The texts of the summary's `replay` warnings.
fn replay_warnings(summary: &serde_json::Value) -> Vec<String> {
    let warnings = summary["verdict"]["warnings"].as_array().expect("warnings");
    warnings
        .iter()
        .filter(|w| w["kind"] == "replay")
        .map(|w| w["text"].as_str().unwrap().to_string())
        .collect()
}

/// Ten records, one a second from 0 s (nanosecond times, used as virtual time), lines 2 to 11:
/// a 5-second run replays the five at 0 to 4 s and stops at the one at 5 s, line 7, without
/// reading the four after it.
#[test]
fn a_replay_cut_at_the_duration_says_what_it_left_unread() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,ip\n");
    for s in 0..10u64 {
        csv.push_str(&format!("{},198.51.100.1\n", s * 1_000_000_000));
    }
    write(dir.path(), "trace.csv", &csv);
    let path = write(dir.path(), "s.toml", &scenario("5s"));
    let s = summary(&path);
    assert_eq!(s["algorithms"][0]["offered"], 5);
    let warnings = replay_warnings(&s);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    for part in [
        "source log stopped at the scenario's duration (5s) after replaying 5 records of ",
        "trace.csv: the rest of the log, from line 7 (5s into the run) on, was not read",
        "the figures cover only the log's first 5s; raise duration",
    ] {
        assert!(w.contains(part), "{part:?} not in {w}");
    }
    // The terminal's verdict says it too.
    let out = rlsim().arg("run").arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    assert!(
        stdout.contains("warning: source log stopped at the scenario's"),
        "{stdout}"
    );
    // A duration past the last record replays it all, and says nothing.
    let whole = summary(&write(dir.path(), "s.toml", &scenario("1m")));
    assert_eq!(whole["algorithms"][0]["offered"], 10);
    assert_eq!(replay_warnings(&whole), Vec::<String>::new());
}

/// A header alone, and lines all skipped as malformed: nothing replayed, and the run's figures
/// (legit_goodput 0 over 0 requests) are said to mean nothing.
#[test]
fn an_empty_trace_is_named_and_its_figures_said_to_mean_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario("1m"));
    for (trace, skipped) in [
        ("time,ip\n", ""),
        (
            "time,ip\nx,1\ny,2\n",
            " (all 2 of its lines were malformed and skipped)",
        ),
    ] {
        write(dir.path(), "trace.csv", trace);
        let out = rlsim()
            .args(["run", "--format", "json", "--quiet", "--skip-bad-lines"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["algorithms"][0]["offered"], 0);
        let warnings = replay_warnings(&s);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        for part in [
            "source log replayed nothing: ",
            &format!(
                "trace.csv has no records{skipped}; its figures are over 0 requests and mean nothing"
            ),
            "the run offered no request at all, so legit_goodput 0.0000 and every share are 0 over 0 requests, not measurements",
        ] {
            assert!(w.contains(part), "{part:?} not in {w}");
        }
    }
}
