//! Where outputs go: devices and FIFOs written in place (never renamed over), inputs never
//! overwritten, temporary files removed on signals, standard output and broken pipes, and the
//! bounds on reading a scenario file.
//!
//! No test here ever targets the real `/dev/null` (a bug would replace it for the whole machine):
//! FIFOs made in a temporary directory and `/dev/full` stand in for devices.

use crate::util::{repo, rlsim, write};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A small run: 3 requests through two algorithms.
const SMALL: &str = r#"name = "small"
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
const ENDLESS: &str = r#"name = "endless"
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

fn mkfifo(path: &Path) {
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

fn text(bytes: &[u8]) -> String {
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
        log.starts_with("time_ns,algorithm,key,outcome,delay_ns,retry_after_ns\n"),
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
    assert!(trace.starts_with("time,ip,user,api_key,endpoint,source,role\n"));
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
        .filter(|n| n.starts_with('.'))
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
        stdout.starts_with("time_ns,algorithm,key,outcome,delay_ns,retry_after_ns\n"),
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
    let big = write(
        dir.path(),
        "big.toml",
        &ENDLESS.replace("duration = \"1h\"", "duration = \"2s\""),
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
fn a_check_of_its_own_output_finds_no_change_on_every_shipped_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = rlsim()
        .current_dir(repo())
        .args(["check", "scenarios", "--format", "json"])
        .assert()
        .code(0);
    let baseline = write(dir.path(), "b.json", &text(&out.get_output().stdout));
    let out = rlsim()
        .current_dir(repo())
        .args(["check", "scenarios", "--baseline"])
        .arg(&baseline)
        .assert()
        .code(0);
    let report = text(&out.get_output().stdout);
    let line = report
        .lines()
        .find(|l| l.starts_with("baseline: "))
        .unwrap();
    assert!(
        line.ends_with(" metrics compared, 0 changed, 0 regressed"),
        "{report}"
    );
    assert!(!line.starts_with("baseline: 0 "), "{report}");
}

#[test]
fn a_check_that_checks_nothing_fails_visibly() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &SMALL.replace("expect = [\"* offered == 3\"]\n", ""),
    );
    let out = rlsim().arg("check").arg(&path).assert().code(1);
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.contains("note: small has no expectations"),
        "{stdout}"
    );
    assert!(stdout.ends_with("0 passed, 0 failed\n"), "{stdout}");
    assert!(text(&out.get_output().stderr).contains("error: nothing was checked"));
}

#[test]
fn cli_help_completions_and_man_page() {
    let help = rlsim().args(["run", "--help"]).assert().code(0);
    let help = text(&help.get_output().stdout);
    for output in [
        "summary.json",
        "summary.csv",
        "timeseries.csv",
        "delays.csv",
        "throughput.json",
        "charts/*.svg",
        "report.md",
        "report.html",
        "--decisions",
        "Examples:",
    ] {
        assert!(help.contains(output), "run --help lacks {output}:\n{help}");
    }
    assert!(
        !help.contains("check"),
        "run --help mentions check:\n{help}"
    );

    let top = rlsim().arg("--help").assert().code(0);
    assert!(text(&top.get_output().stdout).contains("Examples:\n  rlsim run"));

    let seed = rlsim()
        .args(["run", "scenarios/boundary.toml", "--seed", "-1"])
        .current_dir(repo())
        .assert()
        .code(2);
    let err = text(&seed.get_output().stderr);
    assert!(err.contains("'-1'") && err.contains("--seed"), "{err}");

    let bash = rlsim().args(["completions", "bash"]).assert().code(0);
    let bash = text(&bash.get_output().stdout);
    assert!(bash.contains("complete -F _rlsim") && bash.contains("--decisions"));
    let zsh = rlsim().args(["completions", "zsh"]).assert().code(0);
    assert!(text(&zsh.get_output().stdout).starts_with("#compdef rlsim"));
    rlsim().args(["completions", "tcsh"]).assert().code(2);

    let man = rlsim().arg("man").assert().code(0);
    let man = text(&man.get_output().stdout);
    assert!(
        man.starts_with(".ie \\n(.g .ds Aq") || man.contains(".TH rlsim 1"),
        "{man}"
    );
    assert!(
        man.contains(".TH rlsim 1") && man.contains(".SH SUBCOMMANDS"),
        "{man}"
    );
}

#[test]
fn the_documented_summary_csv_header_is_the_real_one() {
    let docs = std::fs::read_to_string(repo().join("docs/outputs.md")).unwrap();
    let section = &docs[docs.find("## `summary.csv`").unwrap()..];
    let documented = section.lines().skip_while(|l| *l != "```").nth(1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    rlsim()
        .current_dir(repo())
        .args(["run", "scenarios/boundary.toml", "--quiet", "--out"])
        .arg(dir.path())
        .assert()
        .code(0);
    let csv = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
    assert_eq!(documented, csv.lines().next().unwrap());
}

#[test]
fn a_control_character_in_a_name_gives_well_formed_junit() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &SMALL.replace("name = \"small\"", "name = \"sm\\u0001all\\u001b[31m\""),
    );
    let junit = dir.path().join("junit.xml");
    rlsim()
        .arg("check")
        .arg(&path)
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(0);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        !xml.chars().any(|c| c < ' ' && c != '\n'),
        "a character XML 1.0 forbids: {xml:?}"
    );
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut suites = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "testsuite" => {
                let name = e.try_get_attribute("name").unwrap().unwrap();
                let value: &str = &name.value;
                suites.push(quick_xml::escape::unescape(value).unwrap().into_owned());
            }
            _ => {}
        }
    }
    assert_eq!(suites, ["sm\\u{1}all\\u{1b}[31m"]);
}
