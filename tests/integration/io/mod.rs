//! Where outputs go: devices and FIFOs written in place (never renamed over), inputs never
//! overwritten, temporary files removed on signals, standard output and broken pipes, and the
//! bounds on reading a scenario file.
//!
//! No test here ever targets the real `/dev/null` (a bug would replace it for the whole machine):
//! FIFOs made in a temporary directory and `/dev/full` stand in for devices.

mod cli;
mod signals;

use crate::util::{rlsim, write};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A small run: 3 requests through two algorithms.
pub const SMALL: &str = r#"name = "small"
duration = "3s"
algorithms = ["fixed_window", "gcra"]
expect = ["* offered == 3"]
[policy]
limit = 2
window = "1s"
[[traffic]]
name = "users"
kind = "constant"
rate = "1/s"
"#;

/// A run far too long to finish while a test waits: 3.6 billion requests.
pub const ENDLESS: &str = r#"name = "endless"
duration = "1h"
algorithms = ["fixed_window", "gcra"]
[policy]
limit = 100
window = "1s"
[[traffic]]
name = "flood"
kind = "constant"
rate = "1000000/s"
"#;

pub fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn assert_devices_intact() {
    for dev in ["/dev/null", "/dev/full"] {
        let m = std::fs::symlink_metadata(dev).unwrap();
        assert!(
            m.file_type().is_char_device(),
            "{dev} is no longer a device"
        );
    }
}

/// Reads a FIFO to its end on another thread. [`FifoReader::finish`] returns what was read; if
/// rlsim never opened the FIFO, it opens the writing end itself so the reader is not stuck.
struct FifoReader {
    path: PathBuf,
    thread: std::thread::JoinHandle<Vec<u8>>,
}

impl FifoReader {
    fn start(path: &Path) -> FifoReader {
        let p = path.to_path_buf();
        let thread = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(&p)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        });
        FifoReader {
            path: path.to_path_buf(),
            thread,
        }
    }

    fn finish(self) -> Vec<u8> {
        use std::os::unix::fs::OpenOptionsExt;
        for _ in 0..600 {
            if self.thread.is_finished() {
                break;
            }
            // O_NONBLOCK: succeeds only while the reader has the FIFO open; closing it at once
            // gives the reader its end of file.
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(0o4000)
                .open(&self.path);
            std::thread::sleep(Duration::from_millis(100));
        }
        self.thread.join().unwrap()
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_fifo_output_is_written_in_place_never_renamed_over() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.toml", SMALL);
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);

    let reader = FifoReader::start(&fifo);
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--decisions")
        .arg(&fifo)
        .arg("--quiet")
        .timeout(Duration::from_secs(120))
        .assert()
        .code(0);
    let log = text(&reader.finish());
    assert!(is_fifo(&fifo), "the FIFO was replaced");
    assert!(
        log.starts_with("time_ns,algorithm,key,outcome,delay_ns,retry_after_ns,rule,remaining,reset_ns,warning,client,source\n"),
        "{log}"
    );
    assert_eq!(log.lines().count(), 1 + 3 * 2, "{log}");

    let reader = FifoReader::start(&fifo);
    rlsim()
        .arg("traffic")
        .arg(&scenario)
        .arg("--out")
        .arg(&fifo)
        .timeout(Duration::from_secs(120))
        .assert()
        .code(0);
    let trace = text(&reader.finish());
    assert!(is_fifo(&fifo));
    assert!(trace.starts_with("time,ip,user,api_key,endpoint,source,role,method\n"));
    assert_eq!(trace.lines().count(), 4, "{trace}");

    let reader = FifoReader::start(&fifo);
    rlsim()
        .arg("check")
        .arg(&scenario)
        .arg("--junit")
        .arg(&fifo)
        .timeout(Duration::from_secs(120))
        .assert()
        .code(0);
    let xml = text(&reader.finish());
    assert!(is_fifo(&fifo));
    assert!(
        xml.contains("<testsuite name=\"small\" tests=\"2\""),
        "{xml}"
    );

    // A FIFO among the `--out DIR` files is written in place too.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let summary = out.join("summary.json");
    mkfifo(&summary);
    let reader = FifoReader::start(&summary);
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .timeout(Duration::from_secs(120))
        .assert()
        .code(0);
    let json = text(&reader.finish());
    assert!(is_fifo(&summary));
    assert!(json.contains("\"name\": \"small\""), "{json}");
    assert!(out.join("summary.csv").is_file());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .chain(std::fs::read_dir(&out).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The manifest of the files rlsim owns there is an output, not a temporary file.
        .filter(|n| n.starts_with('.') && n != ".rlsim-manifest")
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert_devices_intact();
}

#[test]
fn a_full_device_is_a_write_error_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.toml", SMALL);
    let cases: [&[&str]; 3] = [
        &["run", "S", "--quiet", "--decisions", "/dev/full"],
        &["traffic", "S", "--out", "/dev/full"],
        &["check", "S", "--junit", "/dev/full"],
    ];
    for args in cases {
        let out = rlsim()
            .args(args.iter().map(|a| match *a {
                "S" => scenario.as_os_str(),
                a => a.as_ref(),
            }))
            .assert()
            .code(2);
        let err = text(&out.get_output().stderr);
        assert!(
            err.contains("/dev/full: No space left on device"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains(".rlsim-"),
            "{args:?} names a temporary file: {err}"
        );
        assert_devices_intact();
    }
}

#[test]
fn an_output_naming_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "time,ip\n0,192.0.2.1\n1000,192.0.2.1\n",
    )
    .unwrap();
    let scenario = write(
        dir.path(),
        "s.toml",
        r#"name = "r"
duration = "1s"
algorithms = ["gcra"]
expect = ["* offered == 2"]
[policy]
limit = 1
window = "1s"
[[traffic]]
name = "trace"
kind = "replay"
path = "t.csv"
"#,
    );
    let before = (
        std::fs::read(&scenario).unwrap(),
        std::fs::read(dir.path().join("t.csv")).unwrap(),
    );
    let s = scenario.to_str().unwrap();
    let trace = dir.path().join("t.csv");
    let t = trace.to_str().unwrap();
    let via_dot = dir.path().join(".").join("s.toml");
    let cases: [(&[&str], &str); 5] = [
        (&["run", s, "--decisions", s], "--decisions"),
        (&["run", s, "--decisions", t], "--decisions"),
        (
            &["run", s, "--decisions", via_dot.to_str().unwrap()],
            "--decisions",
        ),
        (&["traffic", s, "--out", t], "--out"),
        (&["check", s, "--junit", s], "--junit"),
    ];
    for (args, flag) in cases {
        let out = rlsim().args(args).assert().code(2);
        let err = text(&out.get_output().stderr);
        assert!(
            err.contains(flag) && err.contains("is an input of this run"),
            "{args:?}: {err}"
        );
    }
    let after = (
        std::fs::read(&scenario).unwrap(),
        std::fs::read(dir.path().join("t.csv")).unwrap(),
    );
    assert_eq!(before, after);
}

#[test]
fn a_scenario_file_is_bounded_and_read_once() {
    let out = rlsim().args(["run", "/dev/zero"]).assert().code(2);
    assert_eq!(
        text(&out.get_output().stderr),
        "error: /dev/zero: larger than 16 MiB: not a scenario file\n"
    );

    let dir = tempfile::tempdir().unwrap();
    let name = "n".repeat(50 << 20);
    let huge = write(
        dir.path(),
        "huge.toml",
        &SMALL.replace("name = \"small\"", &format!("name = \"{name}\"")),
    );
    let out = rlsim().arg("run").arg(&huge).assert().code(2);
    assert!(text(&out.get_output().stderr).contains("huge.toml: larger than 16 MiB"));
    let long = write(
        dir.path(),
        "long.toml",
        &SMALL.replace(
            "name = \"small\"",
            &format!("name = \"{}\"", &name[..1 << 20]),
        ),
    );
    let out = rlsim().arg("run").arg(&long).assert().code(2);
    assert_eq!(
        text(&out.get_output().stderr),
        format!(
            "error: {}:1:8: field `name`: 1048576 bytes long; at most 256 are accepted\n",
            long.display()
        )
    );

    // A FIFO can be read once: `run` reads it once for the scenario and its hash.
    let fifo = dir.path().join("scenario.fifo");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, SMALL).unwrap())
    };
    let out_dir = dir.path().join("out");
    rlsim()
        .arg("run")
        .arg(&fifo)
        .arg("--out")
        .arg(&out_dir)
        .arg("--quiet")
        .timeout(Duration::from_secs(120))
        .assert()
        .code(0);
    writer.join().unwrap();
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("small"));
}

#[test]
fn errors_name_the_users_path_never_a_temporary_one() {
    // /proc accepts no new file: creating the temporary file beside the output fails.
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.toml", SMALL);
    let cases: [&[&str]; 3] = [
        &["traffic", "S", "--out", "/proc/rlsim-test.csv"],
        &["run", "S", "--quiet", "--decisions", "/proc/rlsim-test.csv"],
        &["check", "S", "--junit", "/proc/rlsim-test.csv"],
    ];
    for args in cases {
        let out = rlsim()
            .args(args.iter().map(|a| match *a {
                "S" => scenario.as_os_str(),
                a => a.as_ref(),
            }))
            .assert()
            .code(2);
        assert_eq!(
            text(&out.get_output().stderr),
            "error: /proc/rlsim-test.csv: No such file or directory (os error 2)\n",
            "{args:?}"
        );
    }
}
