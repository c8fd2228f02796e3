//! The documentation against the command line: every command and flag is documented, the
//! manual pages exist and keep their examples intact.

use crate::util::{repo, rlsim};
use clap::CommandFactory;
use rlsim::cli::Cli;

/// README.md and every docs/*.md, concatenated.
fn documentation() -> String {
    let mut text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for path in crate::util::files_in("docs", "md") {
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
    rlsim()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    expected = expected.iter().map(|c| format!("rlsim-{c}.1")).collect();
    expected.push("rlsim.1".into());
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rlsim.1")).unwrap(),
        main
    );

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
        let lines: Vec<&str> = section
            .lines()
            .skip(2)
            .take_while(|l| *l != ".fi")
            .collect();
        let unescaped: Vec<String> = lines
            .iter()
            .map(|l| {
                l.replace("\\-", "-")
                    .replace("\\(aq", "'")
                    .replace("\\*(Aq", "'")
            })
            .map(|l| l.replace("\\e", "\\").replace("\\\\", "\\"))
            .collect();
        assert_eq!(unescaped, examples, "rlsim man {command}");
    }
    assert!(!main.contains(".SH EXTRA"), "{main}");

    let out = rlsim().args(["man", "verfy"]).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("unknown command `verfy`: did you mean `verify`?"),
        "{err}"
    );
}

/// Where an example comes from, and the command line as written.
struct Example {
    source: String,
    command: String,
    /// Examples of one code block run in order: a later line may use an earlier one's output.
    block: usize,
}

/// The lines after the `Example:`/`Examples:` header of a `--help` text, up to a blank line;
/// a command is separated from its comment by two spaces or more.
fn help_examples(args: &[&str]) -> Vec<Example> {
    let help = stdout(&rlsim().args(args).arg("--help").assert().success());
    help.lines()
        .skip_while(|l| !l.starts_with("Example"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| Example {
            source: format!("rlsim {} --help", args.join(" ")).replace("  ", " "),
            command: l.trim().split("  ").next().unwrap().to_string(),
            block: 0,
        })
        .collect()
}

/// The lines of README.md's and docs/*.md's `sh` code blocks that run rlsim (`rlsim ...`, or
/// another program handing work to rlsim, `... | xargs rlsim ...`), without a trailing
/// `# comment`. Block ids start at 1.
fn markdown_examples() -> Vec<Example> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut examples = Vec::new();
    let mut blocks = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(repo()).unwrap().display().to_string();
        let mut in_sh = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                in_sh = line == "```sh" || line == "```bash";
                blocks += 1;
                continue;
            }
            let line = line.trim();
            let command = match line.find(" # ") {
                Some(i) => line[..i].trim_end(),
                None => line,
            };
            if in_sh && (command.starts_with("rlsim ") || command.contains(" rlsim ")) {
                examples.push(Example {
                    source: format!("{name}:{}", n + 1),
                    command: command.to_string(),
                    block: blocks,
                });
            }
        }
    }
    examples
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The shipped scenarios `examples` name, with every data file and config, into `dir/scenarios`.
fn copy_scenarios(dir: &std::path::Path, examples: &[Example]) {
    let scenarios = dir.join("scenarios");
    copy_dir(&repo().join("scenarios/data"), &scenarios.join("data"));
    copy_dir(
        &repo().join("scenarios/configs"),
        &scenarios.join("configs"),
    );
    for example in examples {
        for word in example.command.split_whitespace() {
            if let Some(name) = word.strip_prefix("scenarios/")
                && name.ends_with(".toml")
            {
                let from = repo().join("scenarios").join(name);
                assert!(from.is_file(), "{}: no {word}", example.source);
                std::fs::copy(from, scenarios.join(name)).unwrap();
            }
        }
    }
}

/// Every example command of `--help`, README.md and docs/*.md runs and exits 0: through `sh`
/// (pipes and redirections as written), with the built rlsim first on PATH, in a directory
/// holding a copy of the shipped scenarios the examples name (all of them would make the
/// `check scenarios/` examples take minutes in a debug build). A Redis address is replaced by a
/// live Redis (or the example is skipped, see crate::external). Not run: a line whose first
/// program is not installed (GNU parallel, Slurm's sbatch) or that reads a shell variable set
/// by a job scheduler, and the lines after it in its code block (they use its output).
#[test]
fn every_documented_example_runs() {
    let mut examples = help_examples(&[]);
    for (command, _) in commands() {
        examples.extend(help_examples(&[&command]));
    }
    examples.extend(markdown_examples());
    assert!(examples.len() > 20, "{} examples", examples.len());

    let dir = tempfile::tempdir().unwrap();
    copy_scenarios(dir.path(), &examples);
    let shell = Shell::new(dir.path());
    let redis = std::cell::OnceCell::new();
    // `rlsim probe` examples target the bundled service as docs/probe.md starts it.
    let service = std::cell::OnceCell::new();
    let mut seen = std::collections::HashSet::new();
    let mut broken_block = None;
    // An example talking to a server (a live Redis, the probe's service) mostly waits on it: those
    // run in order on a thread of their own while the others go on, and so do the lines after one
    // in its code block (or its command's help), which may read its output. No other example
    // reads what they write (verify prints, probe writes probe-out/).
    let mut lane_groups = std::collections::HashSet::new();
    let results = std::thread::scope(|s| {
        let (to_lane, lane) = std::sync::mpsc::channel::<(&Example, String)>();
        let shell = &shell;
        let waiting = s.spawn(move || {
            lane.iter()
                .map(|(e, c)| shell.run(e, &c))
                .collect::<Vec<_>>()
        });
        let mut results = Vec::new();
        for example in &examples {
            let mut command = example.command.clone();
            if example.block > 0 && broken_block == Some(example.block) {
                continue;
            }
            if !installed(command.split_whitespace().next().unwrap()) || command.contains('$') {
                broken_block = Some(example.block);
                continue;
            }
            // The same command twice (in help and in the README) runs once.
            if example.block == 0 && !seen.insert(command.clone()) {
                continue;
            }
            let mut waits = false;
            if let Some(at) = command.find("redis://") {
                let end = command[at..]
                    .find(|c: char| c.is_whitespace())
                    .map_or(command.len(), |e| at + e);
                let live = redis.get_or_init(crate::store::some_redis);
                let Some((_, url)) = live else { continue };
                command.replace_range(at..end, url);
                waits = true;
            }
            if command.contains(crate::probe::DOCUMENTED_TARGET) {
                let live = service.get_or_init(|| crate::probe::service(5, 1));
                command = command.replace(crate::probe::DOCUMENTED_TARGET, &live.target);
                waits = true;
            }
            if command.contains("&& man ")
                && !crate::external::require_external(
                    crate::external::on_path("man"),
                    "man",
                    "apt-get install man-db",
                )
            {
                continue;
            }
            let group = (
                example.block,
                (example.block == 0).then_some(&example.source),
            );
            if waits || lane_groups.contains(&group) {
                lane_groups.insert(group);
                to_lane.send((example, command)).unwrap();
            } else {
                results.push(shell.run(example, &command));
            }
        }
        drop(to_lane);
        results.extend(waiting.join().unwrap());
        results
    });
    let ran = results.len();
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran > 20, "{ran} examples ran");
}

/// Whether `program` (an example's first word) is installed.
fn installed(program: &str) -> bool {
    match program {
        "rlsim" => true,
        // moreutils has a `parallel` too, which takes other arguments.
        "parallel" => std::process::Command::new("parallel")
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU parallel")),
        _ => std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success()),
    }
}

/// `sh` in the examples' directory, with the built rlsim first on PATH.
struct Shell {
    dir: std::path::PathBuf,
    home: std::path::PathBuf,
    path: String,
}

impl Shell {
    fn new(dir: &std::path::Path) -> Shell {
        let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_rlsim"));
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Shell {
            dir: dir.to_path_buf(),
            home: dir.join("home"),
            path,
        }
    }

    /// Runs `command` (`example`'s, its addresses made live): an error names the example.
    fn run(&self, example: &Example, command: &str) -> Result<(), String> {
        // A redirection's directory exists, as on the machine the example was written for.
        for target in command.split("> ").skip(1) {
            let file = target.split_whitespace().next().unwrap_or("");
            let file = file.replacen('~', &self.home.display().to_string(), 1);
            if let Some(parent) = self.dir.join(file).parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
        }
        let out = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(&self.dir)
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "{}: `{}` exited {:?}: {}",
            example.source,
            example.command,
            out.status.code(),
            err.lines().last().unwrap_or("")
        ))
    }
}
