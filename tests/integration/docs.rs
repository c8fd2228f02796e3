//! The documentation against the command line: every command and flag is documented, the
//! manual pages exist and keep their examples intact.

use crate::util::{repo, rlsim};
use clap::CommandFactory;
use rlsim::cli::Cli;

/// README.md and every docs/*.md, concatenated.
fn documentation() -> String {
    let mut text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for path in docs {
        text.push_str(&std::fs::read_to_string(path).unwrap());
    }
    text
}

/// Every subcommand (but `help`) with its long flags (but `--help` and `--version`).
fn commands() -> Vec<(String, Vec<String>)> {
    let mut cli = Cli::command();
    cli.build();
    cli.get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(|s| {
            let flags = s
                .get_arguments()
                .filter_map(|a| a.get_long())
                .filter(|l| !matches!(*l, "help" | "version"))
                .map(|l| format!("--{l}"))
                .collect();
            (s.get_name().to_string(), flags)
        })
        .collect()
}

/// Whether `flag` is written as on a command line (followed by a space, `=`, a backtick, a
/// bracket...: `--out` is not found inside `--out-dir`) in `text`.
fn has_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        !text[i + flag.len()..]
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Every command is documented as `rlsim COMMAND`, and each of its flags in a paragraph (or a
/// code block's line) that names the command: `rlsim COMMAND` or `` `COMMAND` ``.
#[test]
fn every_command_and_flag_is_documented() {
    let docs = documentation();
    // Paragraphs; in a code block, each line is one.
    let mut paragraphs: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut current = String::new();
    for line in docs.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            paragraphs.push(std::mem::take(&mut current));
        } else if in_code {
            paragraphs.push(line.to_string());
        } else if line.trim().is_empty() || line.starts_with('#') {
            paragraphs.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    paragraphs.push(current);
    let mut missing = Vec::new();
    for (command, flags) in commands() {
        let invocation = format!("rlsim {command}");
        if !has_flag(&docs, &invocation) {
            missing.push(invocation.clone());
        }
        let about: Vec<&String> = paragraphs
            .iter()
            .filter(|p| has_flag(p, &invocation) || p.contains(&format!("`{command}`")))
            .collect();
        for flag in flags {
            if !about.iter().any(|p| has_flag(p, &flag)) {
                missing.push(format!("{invocation} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not documented in README.md or docs/*.md (in a paragraph naming the command):\n{}",
        missing.join("\n")
    );
}

fn stdout(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// `rlsim man` lists a page per command, each exists (`rlsim man COMMAND`, and as a file of
/// `rlsim man --dir`), and every page's examples are kept line for line.
#[test]
fn every_man_page_it_refers_to_exists_with_its_examples_intact() {
    let main = stdout(&rlsim().arg("man").assert().success());
    assert!(main.contains(".TH rlsim 1"), "{main}");
    let referred: Vec<String> = main
        .lines()
        .filter_map(|l| l.strip_prefix("rlsim\\-")?.strip_suffix("(1)"))
        .map(|c| c.replace("\\-", "-"))
        .collect();
    let mut expected: Vec<String> = commands().into_iter().map(|(c, _)| c).collect();
    assert_eq!(referred, expected, "{main}");

    let dir = tempfile::tempdir().unwrap();
    rlsim().args(["man", "--dir"]).arg(dir.path()).assert().success();
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    expected = expected.iter().map(|c| format!("rlsim-{c}.1")).collect();
    expected.push("rlsim.1".into());
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(std::fs::read_to_string(dir.path().join("rlsim.1")).unwrap(), main);

    for (command, _) in commands() {
        let page = stdout(&rlsim().args(["man", &command]).assert().success());
        assert!(page.contains(&format!(".TH rlsim-{command} 1")), "{page}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(format!("rlsim-{command}.1"))).unwrap(),
            page
        );
        // The examples of `--help`, each on its own unfilled line (roff escapes `-` and `\`).
        let help = stdout(&rlsim().args([&command, "--help"]).assert().success());
        let examples: Vec<&str> = help
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .skip(1)
            .collect();
        if examples.is_empty() {
            assert!(!page.contains(".SH EXAMPLES"), "{page}");
            continue;
        }
        let section = &page[page.find(".SH EXAMPLES\n.nf\n").expect(&page)..];
        let lines: Vec<&str> = section.lines().skip(2).take_while(|l| *l != ".fi").collect();
        let unescaped: Vec<String> = lines
            .iter()
            .map(|l| l.replace("\\-", "-").replace("\\(aq", "'").replace("\\*(Aq", "'"))
            .map(|l| l.replace("\\e", "\\").replace("\\\\", "\\"))
            .collect();
        assert_eq!(unescaped, examples, "rlsim man {command}");
    }
    assert!(!main.contains(".SH EXTRA"), "{main}");

    let out = rlsim().args(["man", "verfy"]).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("unknown command `verfy`: did you mean `verify`?"), "{err}");
}
