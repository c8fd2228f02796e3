//! Signals and standard output: temporary files removed on SIGINT/SIGTERM/SIGHUP with exit code
//! 128 + signal, `--decisions -`, and a closed pipe ending rlsim quietly.

use super::{ENDLESS, SMALL, text};
use crate::util::{rlsim, write};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rlsim-") || n.starts_with(".tmp"))
        .collect()
}

/// Waits (bounded) for `child` to exit, killing it if it does not.
fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("rlsim did not exit after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `args` in `dir`, waits for its temporary files to appear, sends `signal`, and checks
/// the exit code and that no temporary file is left.
fn interrupt(args: &[&str], dir: &Path, signal: &str, code: i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlsim"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while temp_files(dir).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{args:?} ended before any temporary file appeared: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(sent.success());
    let status = wait_bounded(&mut child);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(
        status.code(),
        Some(code),
        "{args:?} {signal}: {status} {err}"
    );
    assert!(err.contains("stopped by SIG"), "{err}");
    assert_eq!(temp_files(dir), Vec::<String>::new(), "{args:?} {signal}");
    assert!(!dir.join("decisions.csv").exists() && !dir.join("trace.csv").exists());
}

#[test]
fn signals_remove_temporary_files_and_exit_128_plus_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "endless.toml", ENDLESS);
    let run = [
        "run",
        "endless.toml",
        "--quiet",
        "--decisions",
        "decisions.csv",
    ];
    interrupt(&run, dir.path(), "-TERM", 143);
    interrupt(&run, dir.path(), "-INT", 130);
    interrupt(&run, dir.path(), "-HUP", 129);
    let traffic = ["traffic", "endless.toml", "--out", "trace.csv"];
    interrupt(&traffic, dir.path(), "-TERM", 143);
}

#[test]
fn decisions_dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.toml", SMALL);
    let out = rlsim()
        .current_dir(dir.path())
        .args(["run", "s.toml", "--decisions", "-"])
        .assert()
        .code(0);
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.starts_with("time_ns,algorithm,key,outcome,delay_ns,retry_after_ns,rule,remaining,reset_ns,warning,client,source\n"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 7, "{stdout}");
    // The table goes beside the log, on standard error.
    let stderr = text(&out.get_output().stderr);
    assert!(stderr.contains("fixed_window") && stderr.contains("2 passed, 0 failed"));
    assert!(!dir.path().join("-").exists());

    let out = rlsim()
        .arg("run")
        .arg(&scenario)
        .args(["--decisions", "-", "--format", "json"])
        .assert()
        .code(2);
    assert!(text(&out.get_output().stderr).contains("both need standard output"));
}

/// Runs `args` with standard output a pipe that is closed after the first bytes.
fn close_early(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlsim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here: rlsim's next write meets a broken pipe.
    let status = wait_bounded(&mut child);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // 50 000 requests: 2.8 MB of trace and 7.5 MB of decisions, far past the pipe's buffer, so
    // the writes after the close meet a broken pipe (a run then finishes without printing).
    let big = write(
        dir.path(),
        "big.toml",
        &ENDLESS.replace("duration = \"1h\"", "duration = \"50ms\""),
    );
    let big = big.to_str().unwrap();
    for args in [
        &["traffic", big, "--out", "-"][..],
        &["run", big, "--quiet", "--decisions", "-"][..],
    ] {
        let (status, err) = close_early(args);
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.to_lowercase().contains("broken pipe"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("error"), "{args:?}: {err}");
    }
}
