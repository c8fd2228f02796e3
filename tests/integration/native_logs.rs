//! Native log formats end to end: each shipped scenario's logs replayed by the binary, a gzip
//! and a zstd copy giving byte-identical outputs, `rlsim traffic` round-tripping a replayed
//! log's method, status and decision, and a sampled log's warning.

use crate::util::{repo, rlsim, write};
use std::io::Write;
use std::path::Path;

/// The shipped scenarios of native logs.
const SCENARIOS: [&str; 5] = [
    "replay_aws.toml",
    "replay_edge.toml",
    "replay_envoy.toml",
    "replay_load_tools.toml",
    "replay_nginx.toml",
];

/// A compression of a log's bytes.
type Pack = dyn Fn(&[u8]) -> Vec<u8>;

fn stdout_of(args: &[&str], scenario: &Path) -> String {
    let out = rlsim().args(args).arg(scenario).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `scenarios/NAME` copied into `dir` with its logs compressed by `pack` (under a name without
/// a compression suffix: the magic bytes decide), and the nginx.conf files a contender imports.
fn packed_copy(dir: &Path, name: &str, pack: &Pack) -> std::path::PathBuf {
    packed_logs(dir, pack);
    copy_scenario(dir, name)
}

/// `scenarios/NAME` copied into `dir`, beside the logs of [`packed_logs`].
fn copy_scenario(dir: &Path, name: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo().join("scenarios").join(name)).unwrap();
    write(dir, name, &text)
}

/// Every shipped native log compressed by `pack` into `dir`, and the nginx.conf files a
/// contender imports.
fn packed_logs(dir: &Path, pack: &Pack) {
    std::fs::create_dir_all(dir.join("data/native")).unwrap();
    for entry in std::fs::read_dir(repo().join("scenarios/data/native")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(
            dir.join("data/native").join(path.file_name().unwrap()),
            pack(&bytes),
        )
        .unwrap();
    }
    let nginx = dir.join("configs/nginx");
    std::fs::create_dir_all(&nginx).unwrap();
    for entry in std::fs::read_dir(repo().join("scenarios/configs/nginx")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, nginx.join(path.file_name().unwrap())).unwrap();
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn compressed_copies_give_byte_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    // The logs are compressed once per codec (level 19 is slow in a debug build), for every
    // scenario.
    let packs: [&Pack; 2] = [&gzip, &|b: &[u8]| zstd::encode_all(b, 19).unwrap()];
    for (k, pack) in packs.into_iter().enumerate() {
        packed_logs(&dir.path().join(format!("{k}")), pack);
    }
    for name in SCENARIOS {
        let plain = repo().join("scenarios").join(name);
        let want_run = stdout_of(&["run", "--format", "json"], &plain);
        let want_trace = stdout_of(&["traffic", "--quiet"], &plain);
        for k in 0..packs.len() {
            let copy = copy_scenario(&dir.path().join(format!("{k}")), name);
            let run = stdout_of(&["run", "--format", "json"], &copy);
            // The summary names the scenario's (and its traces') directory; the rest is the
            // same bytes.
            let unpath =
                |s: &str, p: &Path| s.replace(&p.parent().unwrap().display().to_string(), "DIR");
            assert_eq!(unpath(&run, &copy), unpath(&want_run, &plain), "{name} {k}");
            assert_eq!(
                stdout_of(&["traffic", "--quiet"], &copy),
                want_trace,
                "{name} {k}"
            );
        }
    }
}

/// Export a replayed native log, replay the export, export again: the same file, methods,
/// statuses and decisions included.
#[test]
fn a_replayed_log_round_trips_through_rlsim_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let first = stdout_of(
        &["traffic", "--quiet"],
        &repo().join("scenarios/replay_edge.toml"),
    );
    assert!(first.starts_with(
        "time,ip,user,api_key,endpoint,source,role,method,status,decision,x_forwarded_for\n"
    ));
    assert!(
        first.contains(
            ",203.0.113.66,,,/products/7,cloudflare (abusive),abusive,GET,429,refused,\n"
        )
    );
    assert!(first.contains(",POST,200,admitted,\n"));
    write(dir.path(), "trace.csv", &first);
    let again = write(
        dir.path(),
        "again.toml",
        "name = \"again\"\nduration = \"5m\"\n[policy]\nlimit = 60\nwindow = \"1m\"\nkey = \"ip\"\n\
         [[traffic]]\nname = \"trace\"\nkind = \"replay\"\npath = \"trace.csv\"\n",
    );
    assert_eq!(stdout_of(&["traffic", "--quiet"], &again), first);
}

#[test]
fn shipped_scenarios_detect_their_formats_and_pass_their_checks() {
    for name in SCENARIOS {
        rlsim()
            .arg("check")
            .arg(repo().join("scenarios").join(name))
            .assert()
            .success();
    }
}

#[test]
fn a_sampled_log_says_which_figures_stay_valid() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("scenarios/replay_envoy.toml"))
        .unwrap()
        .replace(
            "path = \"data/native/envoy.log\"",
            "path = \"data/native/envoy.log\"\nsample_rate = 10",
        );
    let copy = packed_copy(dir.path(), "replay_envoy.toml", &|b: &[u8]| b.to_vec());
    std::fs::write(&copy, text).unwrap();
    let out = rlsim().arg("run").arg(&copy).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("warning: source `envoy` is a sampled log (1 request in 10 kept)")
            && err.contains("shares (the fractions refused, goodput, leakage) stay valid")
            && err.contains("per-key limiter decisions do not"),
        "{err}"
    );
    let bad = std::fs::read_to_string(&copy)
        .unwrap()
        .replace("sample_rate = 10", "sample_rate = 0");
    std::fs::write(&copy, bad).unwrap();
    let out = rlsim().arg("run").arg(&copy).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("sample_rate")
            && err.contains("0 is too small: must be a whole number from 1 to 1000000"),
        "{err}"
    );
}

#[test]
fn the_time_resolution_range_runs_both_extremes() {
    let out = rlsim()
        .args(["run", "--quiet", "--time-resolution-range"])
        .arg(repo().join("scenarios/replay_aws.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("time resolution: each figure over the two extreme placements"),
        "{err}"
    );
    assert!(err.contains("  fixed_window: admitted "), "{err}");
    let none = rlsim()
        .args(["run", "--quiet", "--time-resolution-range"])
        .arg(repo().join("scenarios/replay_envoy.toml"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8(none.stderr)
            .unwrap()
            .contains("no source has one-second timestamps")
    );
}
