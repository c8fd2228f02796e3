//! Replay input under hostile conditions: over-long lines,
//! invalid UTF-8 in every line format, HAR documents without entries, pipes and devices, loops
//! held in memory, `sort_window` as documented, times past the u64 range, the skipped count in
//! `summary.json`, and traces that keep their sources and roles.

use crate::util::{repo, rlsim, run_scenario, write};
use rlsim::Scenario;
use rlsim::traffic::Role;
use rlsim::traffic::export::for_each_request;
use std::path::Path;

/// A replay scenario for `file` with extra `[[traffic]]` lines, keyed on `key`.
fn scenario_text(file: &str, extra: &str, key: &str) -> String {
    format!(
        "name = \"r\"\nduration = \"1d\"\n[policy]\nlimit = 5\nwindow = \"1m\"\nkey = \"{key}\"\n[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"{file}\"\n{extra}\n"
    )
}

fn scenario(dir: &Path, file: &str, extra: &str) -> Result<Scenario, String> {
    let path = write(dir, "s.toml", &scenario_text(file, extra, "ip"));
    Scenario::load(&path).map_err(|e| e.to_string())
}

/// Every replayed request's time, or the error that stopped the replay.
fn times(s: &Scenario) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for_each_request(&s.traffic, s.seed, |r| {
        out.push(r.time);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The lines the (replay) first source skipped in a pass over the traffic.
fn skipped(s: &Scenario) -> u64 {
    match &s.traffic[0].arrivals {
        rlsim::traffic::Arrivals::Replay { .. } => {
            for_each_request(&s.traffic, s.seed, |_| Ok(()))
                .unwrap()
                .skipped_lines[0]
        }
        _ => panic!("a replay source"),
    }
}

/// Asserts the replay fails naming `expected`, and that with `--skip-bad-lines` it keeps
/// `kept` records and counts `bad` skipped lines.
fn bad_lines(s: Scenario, expected: &str, kept: usize, bad: u64) {
    let e = times(&s).unwrap_err();
    assert!(e.contains(expected), "expected `{expected}` in: {e}");
    let s = s.with_skip_bad_lines();
    assert_eq!(times(&s).unwrap().len(), kept);
    assert_eq!(skipped(&s), bad);
}

#[test]
fn lines_over_a_mebibyte_are_malformed_lines_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(2 << 20);
    write(
        dir.path(),
        "t.csv",
        &format!("time,ip\n1,a\n2,{long}\n3,c\n"),
    );
    let s = scenario(dir.path(), "t.csv", "").unwrap();
    bad_lines(s, "t.csv:3: line longer than 1 MiB", 2, 1);
    write(
        dir.path(),
        "t.jsonl",
        &format!(
            "{{\"time\": 1, \"ip\": \"a\"}}\n{{\"time\": 2, \"ip\": \"{long}\"}}\n{{\"time\": 3, \"ip\": \"c\"}}\n"
        ),
    );
    let s = scenario(dir.path(), "t.jsonl", "").unwrap();
    bad_lines(s, "t.jsonl:2: line longer than 1 MiB", 2, 1);
    // An unclosed quote would make one CSV record of the rest of the file: refused, not held.
    let short_lines = "1,b\n".repeat(1 << 19);
    write(
        dir.path(),
        "q.csv",
        &format!("time,ip\n1,a\n2,\"open\n{short_lines}"),
    );
    let s = scenario(dir.path(), "q.csv", "").unwrap();
    let e = times(&s.with_skip_bad_lines()).unwrap_err();
    assert!(
        e.contains("unreadable record: a record longer than 1 MiB (an unclosed quote?)"),
        "{e}"
    );
}

#[test]
fn invalid_utf8_is_a_skippable_line_in_every_line_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut jsonl = b"{\"time\": 1, \"ip\": \"a\"}\n{\"time\": 2, \"ip\": \"".to_vec();
    jsonl.extend_from_slice(b"\xff\xfe\"}\n{\"time\": 3, \"ip\": \"c\"}\n");
    std::fs::write(dir.path().join("t.jsonl"), jsonl).unwrap();
    let s = scenario(dir.path(), "t.jsonl", "").unwrap();
    bad_lines(s, "t.jsonl:2: not valid UTF-8", 2, 1);

    let line = |ip: &str, s: u32| {
        format!("{ip} - - [29/Nov/2026:00:00:0{s} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\"\n")
    };
    let mut log = line("203.0.113.1", 1).into_bytes();
    log.extend_from_slice(
        &line("203.0.113.\u{fffd}", 2)
            .replace('\u{fffd}', "\u{1}")
            .into_bytes(),
    );
    let at = log.iter().rposition(|&b| b == 1).unwrap();
    log[at] = 0xff;
    log.extend_from_slice(line("203.0.113.3", 3).as_bytes());
    std::fs::write(dir.path().join("access.log"), log).unwrap();
    let s = scenario(dir.path(), "access.log", "").unwrap();
    bad_lines(s, "access.log:2: not valid UTF-8", 2, 1);
}

#[test]
fn har_entries_without_a_time_are_skippable_and_a_har_needs_entries() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.har",
        r#"{"log": {"version": "1.2", "entries": [
  {"startedDateTime": "2026-11-29T00:00:01Z", "request": {"url": "https://x/a"}},
  {"request": {"url": "https://x/b"}},
  {"startedDateTime": "2026-11-29T00:00:03Z", "request": {"url": "https://x/c"}}
]}}"#,
    );
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text("t.har", "", "endpoint"),
    );
    let s = Scenario::load(&path).unwrap();
    bad_lines(s, "t.har:3: field `startedDateTime`", 2, 1);

    for empty in ["{}", "{\"log\": {}}", "{\"log\": {\"version\": \"1.2\"}}"] {
        write(dir.path(), "e.har", empty);
        let path = write(
            dir.path(),
            "s.toml",
            &scenario_text("e.har", "", "endpoint"),
        );
        let s = Scenario::load(&path).unwrap();
        let e = times(&s).unwrap_err();
        assert!(
            e.contains("e.har:1: not a HAR 1.2 document: it has no `log.entries`"),
            "{empty}: {e}"
        );
    }
}

/// A key as long as a line may hold (and a HAR URL of 4 MB) goes through every output in time
/// linear in it: charts show its start and length, the data files keep it whole.
#[test]
fn a_field_of_megabytes_runs_through_every_output_shown_short_and_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let key = format!("/{}", "k".repeat((1 << 20) - 100));
    let url = format!("https://x{}", "/u".repeat(2 << 20));
    let data = format!("data:image/png;base64,{}", "A".repeat(4 << 20));
    let entry = |t: u32, url: &str| {
        format!(r#"{{"startedDateTime": "2026-11-29T00:00:0{t}Z", "request": {{"url": "{url}"}}}}"#)
    };
    let traces = [
        ("t.csv", format!("time,endpoint\n1,{key}\n2,{key}\n")),
        (
            "t.jsonl",
            format!(
                "{{\"time\": 1, \"endpoint\": \"{key}\"}}\n{{\"time\": 2, \"endpoint\": \"{key}\"}}\n"
            ),
        ),
        (
            "t.har",
            format!(
                r#"{{"log": {{"entries": [{}, {}, {}]}}}}"#,
                entry(1, &url),
                entry(2, &data),
                entry(3, &url)
            ),
        ),
    ];
    for (file, text) in traces {
        write(dir.path(), file, &text);
        let mut toml = scenario_text(file, "", "endpoint").replace("limit = 5", "limit = 1");
        toml = toml.replace(
            "name = \"r\"",
            "name = \"r\"\nalgorithms = [\"fixed_window\"]",
        );
        let path = write(dir.path(), "s.toml", &toml);
        let out = dir.path().join("out");
        rlsim()
            .args(["run", "--quiet", "--out"])
            .arg(&out)
            .arg(&path)
            .assert()
            .code(0);
        let long = if file.ends_with("har") {
            url.len() - "https://x".len()
        } else {
            key.len()
        };
        let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let row = &json["algorithms"][0];
        // Two requests on the one key (the HAR's `data:` image reached no server): 1 refused.
        assert_eq!(
            (row["admitted"].as_u64(), row["rejected"].as_u64()),
            (Some(1), Some(1)),
            "{file}"
        );
        assert_eq!(
            row["worst_window_key"].as_str().map(str::len),
            Some(long),
            "{file}"
        );
        let svg = std::fs::read_to_string(out.join("charts/worst_moment.svg")).unwrap();
        let shown = format!("… ({long} bytes)");
        assert!(svg.contains(&shown), "{file}: no `{shown}`");
        assert!(
            svg.len() < 200_000,
            "{file}: worst_moment.svg is {} bytes",
            svg.len()
        );
    }
}

/// A JSON record the parser refuses names the file's line, the field, what was found and what
/// was expected in words, and the column: never serde's own `at line 1 column N`.
#[test]
fn json_errors_name_line_field_and_column_in_every_json_format() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "t.jsonl",
            "",
            "{\"time\": 1, \"ip\": \"a\"}\n{\"time\": 2, \"ip\": 5}\n",
            "t.jsonl:2: field `ip`: not a trace record: found the number 5, expected a string (column 19)",
        ),
        (
            "v.json",
            "format = \"vegeta\"",
            "{\"timestamp\":\"2026-11-29T00:00:01Z\",\"code\":200,\"url\":\"http://x/a\"}\n\
             {\"timestamp\":\"2026-11-29T00:00:01Z\",\"code\":\"x\",\"url\":\"http://x/a\"}\n",
            "v.json:2: field `code`: not a vegeta JSON result: found the string \"x\", expected a whole number from 0 to 18446744073709551615 (column 46)",
        ),
        (
            "e.json",
            "format = \"envoy_json\"",
            "{\"start_time\":\"2026-11-29T00:00:01Z\",\"path\":\"/a\",\"response_code\":200}\n\
             {\"start_time\":\"2026-11-29T00:00:01Z\",\"METHOD\":7,\"path\":\"/a\"}\n",
            "e.json:2: field `METHOD`: not an Envoy JSON access-log record: found the number 7, expected a string (column 47)",
        ),
        (
            "t.har",
            "",
            "{\"log\": {\"entries\": [\n\
             {\"startedDateTime\": \"2026-11-29T00:00:01Z\", \"request\": {\"url\": \"https://x/a\"}},\n\
             {\"startedDateTime\": \"2026-11-29T00:00:02Z\", \"request\": {\"url\": 5}}\n]}}\n",
            "t.har:3: field `log.entries[1].request.url`: not a HAR 1.2 document: found the number 5, expected a string (column 65)",
        ),
    ];
    for (file, extra, text, expected) in cases {
        write(dir.path(), file, text);
        let path = write(
            dir.path(),
            "s.toml",
            &scenario_text(file, extra, "endpoint"),
        );
        let e = times(&Scenario::load(&path).unwrap()).unwrap_err();
        let e = e.replace(&format!("{}/", dir.path().display()), "");
        assert!(e.starts_with(expected), "{file}:\n{e}\nnot\n{expected}");
    }
}

#[test]
fn a_device_that_never_ends_is_refused_at_validation() {
    let found = Path::new("/dev/zero").exists();
    if !crate::external::require_external(found, "/dev/zero", "a Unix system with /dev") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario_text("/dev/zero", "", "ip"));
    rlsim()
        .arg("run")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "/dev/zero:1: not a regular file and longer than 64 MiB",
        ));
}

#[test]
fn a_trace_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if !crate::external::require_external(made, "mkfifo", "apt-get install coreutils") {
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, "time,ip\n1,a\n2,b\n3,c\n").unwrap())
    };
    let path = write(dir.path(), "s.toml", &scenario_text("t.csv", "", "ip"));
    let s = Scenario::load(&path).unwrap();
    writer.join().unwrap();
    // Read at validation, replayed from memory, as often as asked.
    assert_eq!(times(&s).unwrap(), [1, 2, 3]);
    assert_eq!(times(&s).unwrap(), [1, 2, 3]);
}

#[test]
fn a_small_looped_trace_is_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "time,ip\n0,a\n1000000000,b\n");
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text("t.csv", "loop = 1000000", "ip").replace("\"1d\"", "\"1m\""),
    );
    let s = Scenario::load(&path).unwrap();
    // Not reopened: the replay no longer needs the file.
    std::fs::remove_file(dir.path().join("t.csv")).unwrap();
    let t = times(&s).unwrap();
    // Repetition k plays its records at k s and k+1 s; the minute keeps 60 + 59 of them.
    assert_eq!(t.len(), 119);
    assert_eq!(
        &t[..5],
        [
            0,
            1_000_000_000,
            1_000_000_000,
            2_000_000_000,
            2_000_000_000
        ]
    );
}

#[test]
fn sort_window_refuses_records_further_out_of_order_than_it() {
    let dir = tempfile::tempdir().unwrap();
    const S: u64 = 1_000_000_000;
    write(
        dir.path(),
        "t.csv",
        &format!("time,ip\n0,a\n{},b\n{},c\n", 10 * S, 5 * S),
    );
    // 5 s out of order with a 1 s window: an error, as the docs say.
    let s = scenario(dir.path(), "t.csv", "sort_window = \"1s\"").unwrap();
    let e = times(&s).unwrap_err();
    assert!(
        e.contains("t.csv:4: field `time`: earlier than the record at line 3 by 5s"),
        "{e}"
    );
    let s = scenario(dir.path(), "t.csv", "sort_window = \"5s\"").unwrap();
    assert_eq!(times(&s).unwrap(), [0, 5 * S, 10 * S]);
}

#[test]
fn looping_past_the_largest_time_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    // `b` is sampled out (a fixed hash), so the source goes on to the next repetitions.
    write(dir.path(), "t.csv", "time,ip\n0,a\n9223372036854775807,b\n");
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text("t.csv", "loop = 3\nsample = 0.5", "ip").replace("\"1d\"", "\"1h\""),
    );
    rlsim()
        .args(["run", "--quiet"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "t.csv:3: field `time`: repetition 3 of `loop` puts this record past the largest virtual time",
        ));
}

#[test]
fn skipped_lines_are_in_summary_json_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.jsonl",
        "{\"time\": 1, \"ip\": \"a\"}\nnot json\n{\"time\": \"soon\"}\n{\"time\": 3, \"ip\": \"c\"}\n",
    );
    let path = write(dir.path(), "s.toml", &scenario_text("t.jsonl", "", "ip"));
    let out = dir.path().join("out");
    rlsim()
        .args(["run", "--quiet", "--skip-bad-lines", "--out"])
        .arg(&out)
        .arg(&path)
        .assert()
        .success();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["scenario"]["sources"][0]["skipped_lines"], 2);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("2 malformed lines skipped"), "{report}");
}

#[test]
fn generated_sources_have_no_skipped_lines_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(repo().join("scenarios/boundary.toml"))
        .assert()
        .success();
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!summary.contains("skipped_lines"));
}

/// Per source and algorithm: (algorithm, source, role, offered, admitted, delayed, rejected).
type Figures = Vec<(String, String, Role, u64, u64, u64, u64)>;

fn per_source(s: &Scenario) -> (Figures, Vec<(String, f64, Option<f64>)>) {
    let reports = run_scenario(s);
    let mut sources = Vec::new();
    let mut roles = Vec::new();
    for a in &reports {
        for src in &a.sources {
            sources.push((
                a.algorithm.clone(),
                src.name.clone(),
                src.role,
                src.offered,
                src.admitted,
                src.delayed,
                src.rejected,
            ));
        }
        roles.push((
            a.algorithm.clone(),
            a.roles.legit_goodput,
            a.roles.abusive_leakage,
        ));
    }
    sources.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    (sources, roles)
}

#[test]
fn rlsim_traffic_output_replays_with_its_sources_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    let boundary = repo().join("scenarios/boundary.toml");
    let trace = dir.path().join("trace.csv");
    rlsim()
        .args(["traffic", "--out"])
        .arg(&trace)
        .arg(&boundary)
        .assert()
        .success();
    let original = Scenario::load(&boundary).unwrap();
    let replayed = Scenario::parse(
        "name = \"replayed\"\nduration = \"3m\"\n[policy]\nlimit = 100\nwindow = \"1m\"\nkey = \"ip\"\n\
         [[traffic]]\nname = \"trace\"\nkind = \"replay\"\npath = \"trace.csv\"\n",
        &dir.path().join("s.toml"),
    )
    .unwrap();
    let names: Vec<_> = replayed
        .traffic
        .iter()
        .map(|t| (t.name.as_str(), t.role))
        .collect();
    assert_eq!(names, [("users", Role::Legit), ("attacker", Role::Abusive)]);
    let (want, want_roles) = per_source(&original);
    let (got, got_roles) = per_source(&replayed);
    assert_eq!(got, want);
    assert_eq!(got_roles, want_roles);
    // The attacker's 200 requests: fixed windows admit all of them (100 each side of the
    // boundary), the others 100 of them (the leaky bucket 101: one drains at the boundary).
    let leakage = |alg: &str| got_roles.iter().find(|r| r.0 == alg).unwrap().2;
    assert_eq!(leakage("fixed_window"), Some(1.0));
    assert_eq!(leakage("sliding_window_log"), Some(0.5));
    assert_eq!(leakage("token_bucket"), Some(0.5));
    assert_eq!(leakage("leaky_bucket"), Some(101.0 / 200.0));
}

#[test]
fn json_lines_keep_their_sources_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.jsonl",
        "{\"time\": 1, \"ip\": \"a\", \"source\": \"web\", \"role\": \"legit\"}\n\
         {\"time\": 2, \"ip\": \"b\", \"source\": \"bot\", \"role\": \"abusive\"}\n\
         {\"time\": 3, \"ip\": \"a\", \"source\": \"web\", \"role\": \"legit\"}\n",
    );
    let s = scenario(dir.path(), "t.jsonl", "").unwrap();
    let names: Vec<_> = s
        .traffic
        .iter()
        .map(|t| (t.name.as_str(), t.role))
        .collect();
    assert_eq!(names, [("web", Role::Legit), ("bot", Role::Abusive)]);
    let mut seen = Vec::new();
    for_each_request(&s.traffic, s.seed, |r| {
        seen.push((r.time, r.source.to_string()));
        Ok(())
    })
    .unwrap();
    assert_eq!(
        seen,
        [(1, "web".into()), (2, "bot".into()), (3, "web".into())]
    );
    write(
        dir.path(),
        "u.jsonl",
        "{\"time\": 1, \"ip\": \"a\", \"role\": \"attacker\"}\n",
    );
    let s = scenario(dir.path(), "u.jsonl", "").unwrap();
    let e = times(&s).unwrap_err();
    assert!(
        e.contains("u.jsonl:1: field `role`: unknown role `attacker`"),
        "{e}"
    );
}

#[test]
fn access_logs_mark_abusive_addresses_and_networks() {
    let dir = tempfile::tempdir().unwrap();
    let line = |ip: &str, s: u32| {
        format!("{ip} - - [29/Nov/2026:00:00:0{s} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\"\n")
    };
    write(
        dir.path(),
        "access.log",
        &[
            line("192.0.2.1", 1),
            line("203.0.113.9", 2),
            line("198.51.100.7", 3),
            line("192.0.2.1", 4),
        ]
        .concat(),
    );
    let s = scenario(
        dir.path(),
        "access.log",
        "abusive = [\"203.0.113.0/24\", \"198.51.100.7\"]",
    )
    .unwrap();
    let names: Vec<_> = s
        .traffic
        .iter()
        .map(|t| (t.name.as_str(), t.role))
        .collect();
    assert_eq!(
        names,
        [("log", Role::Legit), ("log (abusive)", Role::Abusive)]
    );
    let reports = run_scenario(&s);
    let fw = reports
        .iter()
        .find(|a| a.algorithm == "fixed_window")
        .unwrap();
    assert_eq!((fw.roles.legit_offered, fw.roles.abusive_offered), (2, 2));
    let e = scenario(dir.path(), "access.log", "abusive = [\"203.0.113.0/33\"]").unwrap_err();
    assert!(
        e.contains("field `traffic[0].abusive[0]`: `203.0.113.0/33` is neither an IP address nor a CIDR network"),
        "{e}"
    );
}

#[test]
fn the_shipped_replay_marks_its_scraper() {
    let s = Scenario::load(&repo().join("scenarios/replay.toml")).unwrap();
    let reports = run_scenario(&s);
    // The scraper's 540 requests (3 a second for three minutes) are the abusive ones; the
    // windows admit 60 of them a minute (180), the buckets also their initial burst.
    let want = [
        ("fixed_window", 180),
        ("sliding_window_log", 180),
        ("sliding_window_counter", 180),
        ("token_bucket", 239),
        ("leaky_bucket", 240),
        ("gcra", 239),
    ];
    for (alg, admitted) in want {
        let a = reports.iter().find(|a| a.algorithm == alg).unwrap();
        assert_eq!(a.roles.abusive_offered, 540, "{alg}");
        assert_eq!(a.roles.abusive_admitted, admitted, "{alg}");
        assert_eq!(
            a.roles.abusive_leakage,
            Some(admitted as f64 / 540.0),
            "{alg}"
        );
        // The 30 visitors keep every request: 1783 lines in all, 540 of them the scraper's.
        assert_eq!(a.roles.legit_offered, 1243, "{alg}");
        assert_eq!(a.roles.legit_goodput, 1.0, "{alg}");
    }
}

#[test]
fn a_bad_line_names_the_option_and_is_reported_once_and_not_under_quiet() {
    let dir = tempfile::tempdir().unwrap();
    // Two parts (`source` values) read the same trace: one bad line between them.
    write(
        dir.path(),
        "parts.csv",
        "time,ip,source\n0,10.0.0.1,web\n1000,10.0.0.2,api\nbad,line,x\n2000,10.0.0.1,web\n",
    );
    let path = write(
        dir.path(),
        "s.toml",
        "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n[[traffic]]\nname = \"t\"\nkind = \"replay\"\npath = \"parts.csv\"\nformat = \"csv\"\n",
    );
    let run = |args: &[&str]| {
        let out = rlsim()
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(dir.path().join("out"))
            .arg(&path)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stderr) = run(&["--quiet"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("parts.csv:4: field `time`: `bad` is neither")
            && stderr
                .trim_end()
                .ends_with("; pass --skip-bad-lines to skip malformed lines"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--skip-bad-lines"]);
    assert_eq!(code, 0, "{stderr}");
    let skipped: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{stderr}");
    assert!(
        skipped[0].starts_with("source `web`: skipped 1 malformed line of ")
            && skipped[0].ends_with("parts.csv"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--skip-bad-lines", "--quiet"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
}
