//! The command line around the outputs: `check` against its own output, a check that checks
//! nothing, help, completions, the man page, the documented CSV header, and JUnit escaping.

use super::{SMALL, text};
use crate::util::{repo, rlsim, write};

/// Also the gate on the shipped scenarios: each passes its expectations (exit 0, the count line).
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
    // The shipped scenarios pass their expectations (the same pass: a third over them would
    // only repeat it).
    assert!(
        report.contains("pass  boundary attack: fixed_window burst_factor == 2.0 (measured 2)"),
        "{report}"
    );
    assert!(report.ends_with(" passed, 0 failed\n"), "{report}");
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
