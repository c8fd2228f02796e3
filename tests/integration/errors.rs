//! Bad input: a clear message naming file, line and field, exit code 2, and no output files.

use crate::util::{rlsim, write};

const HEAD: &str = "name = \"x\"\nduration = \"1m\"\n";
const POLICY: &str = "[policy]\nlimit = 10\nwindow = \"1s\"\n";
const TRAFFIC: &str = "[[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n";

/// Runs `rlsim run` on `toml` (with `files` beside it) and checks the failure.
pub(crate) fn assert_fails(toml: &str, files: &[(&str, &str)], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    let path = write(dir.path(), "bad.toml", toml);
    let out_dir = dir.path().join("out");
    let decisions = dir.path().join("decisions.csv");
    let output = rlsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out_dir)
        .arg("--decisions")
        .arg(&decisions)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.stdout.is_empty(), "nothing on stdout");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for e in expected {
        assert!(stderr.contains(e), "expected `{e}` in: {stderr}");
    }
    assert!(!out_dir.exists(), "no output directory after a failed run");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1 + files.len(), "no partial files: {left:?}");
}

#[test]
fn malformed_toml() {
    assert_fails(
        "name = \"x\"\n[policy\nlimit = 1\n",
        &[],
        &["bad.toml:2:", "malformed TOML"],
    );
}

#[test]
fn unknown_field_names_the_field_and_line() {
    let toml = format!("{HEAD}[policy]\nlimit = 10\nwindow = \"1s\"\nburts = 3\n{TRAFFIC}");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:6:", "`policy.burts`", "unknown field"],
    );
}

#[test]
fn unknown_algorithm_suggests_the_intended_name() {
    let toml = format!("{HEAD}algorithms = [\"gcra\", \"token_buckt\"]\n{POLICY}{TRAFFIC}");
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:3:",
            "`algorithms[1]`",
            "did you mean `token_bucket`",
        ],
    );
}

#[test]
fn unknown_traffic_kind_and_arrival_suggest_the_intended_name() {
    let source = "[[traffic]]\nname = \"a\"\nkind = \"credential_stufing\"\nips = 5\n";
    assert_fails(
        &format!("{HEAD}{POLICY}{source}"),
        &[],
        &[
            "bad.toml:8:8",
            "`traffic[0].kind`",
            "unknown traffic kind `credential_stufing`: did you mean `credential_stuffing`?",
        ],
    );
    let source = format!("{TRAFFIC}arrival = \"spiek\"\n");
    assert_fails(
        &format!("{HEAD}{POLICY}{source}"),
        &[],
        &[
            "bad.toml:10:11",
            "`traffic[0].arrival`",
            "unknown arrival `spiek`: did you mean `spike`?",
        ],
    );
    let source = format!("{TRAFFIC}arrival = \"zzz\"\n");
    assert_fails(
        &format!("{HEAD}{POLICY}{source}"),
        &[],
        &[
            "unknown arrival `zzz` (known: constant, poisson, ramp, sine, onoff, mmpp, spike, phases)",
        ],
    );
}

#[test]
fn zero_window() {
    let toml = format!("{HEAD}[policy]\nlimit = 10\nwindow = \"0s\"\n{TRAFFIC}");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:5:", "`policy.window`", "greater than zero"],
    );
}

#[test]
fn zero_and_negative_limits() {
    let toml = format!("{HEAD}[policy]\nlimit = 0\nwindow = \"1s\"\n{TRAFFIC}");
    let range = "must be a whole number of requests from 1 to 4294967295";
    assert_fails(
        &toml,
        &[],
        &[&format!(
            "bad.toml:4:9: field `policy.limit`: 0 is too small: {range}"
        )],
    );
    let toml = format!("{HEAD}[policy]\nlimit = -5\nwindow = \"1s\"\n{TRAFFIC}");
    assert_fails(
        &toml,
        &[],
        &[&format!(
            "bad.toml:4:9: field `policy.limit`: -5 is too small: {range}"
        )],
    );
}

#[test]
fn negative_rate() {
    let toml =
        format!("{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"-3/s\"\n");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:9:", "`traffic[0].rate`", "negative"],
    );
}

#[test]
fn wrong_type() {
    let toml = format!("{HEAD}[policy]\nlimit = \"ten\"\nwindow = \"1s\"\n{TRAFFIC}");
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:4:9: field `policy.limit`: \"ten\" is not a number: must be a whole number of requests from 1 to 4294967295",
        ],
    );
}

#[test]
fn field_not_used_by_the_traffic_kind() {
    let toml = format!("{HEAD}{POLICY}{TRAFFIC}count = 5\n");
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].count`",
            "not used by traffic kind `constant`",
        ],
    );
}

#[test]
fn missing_required_field() {
    let toml = format!("{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 3\n");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:8:", "`traffic[0].every`", "requires `every`"],
    );
}

#[test]
fn boundary_off_the_window_grid() {
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"boundary\"\ncount = 3\nat = \"1.5s\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].at`",
            "multiple of the policy window",
        ],
    );
}

#[test]
fn unreadable_trace_line() {
    let trace = "time,ip\n100,10.0.0.1\nsoon,10.0.0.2\n";
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    );
    assert_fails(
        &toml,
        &[("trace.csv", trace)],
        &["trace.csv:3:", "field `time`", "`soon`"],
    );
}

#[test]
fn trace_with_a_missing_column() {
    let trace = "time,ip\n100,10.0.0.1\n200\n";
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    );
    assert_fails(
        &toml,
        &[("trace.csv", trace)],
        &["trace.csv:3:", "1 fields where the header has 2"],
    );
}

#[test]
fn trace_without_the_key_column() {
    let trace = "time,user\n100,alice\n";
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    );
    assert_fails(
        &toml,
        &[("trace.csv", trace)],
        &["trace.csv:1:", "keys on `ip`", "no `ip` column"],
    );
}

#[test]
fn out_of_order_trace() {
    let trace = "time,ip\n200,10.0.0.1\n100,10.0.0.1\n";
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    );
    assert_fails(
        &toml,
        &[("trace.csv", trace)],
        &[
            "trace.csv:3:",
            "field `time`",
            "earlier than the record at line 2",
        ],
    );
}

#[test]
fn missing_scenario_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = rlsim()
        .arg("run")
        .arg(dir.path().join("nope.toml"))
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("nope.toml"), "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    rlsim().args(["run"]).assert().code(2);
    rlsim()
        .args(["run", "x.toml", "--format", "yaml"])
        .assert()
        .code(2);
    rlsim().args(["frobnicate"]).assert().code(2);
}

#[test]
fn impossible_override_names_its_table() {
    // W/L under 1 ns: GCRA's emission interval would be 0.
    let toml = format!(
        "{HEAD}algorithms = [\"gcra\"]\n{POLICY}[algorithm.gcra]\nlimit = 2000000000\nwindow = \"1ns\"\n{TRAFFIC}"
    );
    assert_fails(
        &toml,
        &[],
        &["bad.toml:", "`algorithm.gcra`", "emission interval"],
    );
}

#[test]
fn boundary_attack_outside_the_source_window() {
    // The scenario lasts 1 minute; an attack at 5 minutes would send nothing.
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"boundary\"\ncount = 3\nat = \"5m\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &["bad.toml:10:", "`traffic[0].at`", "would send nothing"],
    );
}

#[test]
fn missing_trace_names_the_scenario_line() {
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"nope.csv\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &["bad.toml:9:", "`traffic[0].path`", "nope.csv"],
    );
}

#[test]
fn unwritable_out_leaves_no_decision_log() {
    // `--out` under a regular file cannot be created: the run fails after simulating, and the
    // decision log it had ready is not left behind as if the run had completed.
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.toml", &format!("{HEAD}{POLICY}{TRAFFIC}"));
    let blocker = write(dir.path(), "file", "");
    let decisions = dir.path().join("decisions.csv");
    rlsim()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(blocker.join("out"))
        .arg("--decisions")
        .arg(&decisions)
        .assert()
        .code(2);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left.len(),
        2,
        "only the scenario and the blocking file: {left:?}"
    );
}

#[test]
fn absurd_volume_is_refused_up_front() {
    // 1000 requests per nanosecond for a minute: 6·10^13 requests, days of simulation.
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1000/ns\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:9:",
            "`traffic[0].rate`",
            "would send about 6.0e13 requests",
        ],
    );
}

/// A policy whose key is `key` (on line 6), with the usual one source.
fn with_key(key: &str) -> String {
    format!("{HEAD}[policy]\nlimit = 10\nwindow = \"1s\"\nkey = {key}\n{TRAFFIC}")
}

#[test]
fn unknown_identity_suggests_the_intended_name() {
    assert_fails(
        &with_key("{ identity = \"cdn_headr\" }"),
        &[],
        &[
            "bad.toml:6:",
            "`policy.key.identity`",
            "did you mean `cdn_header`",
        ],
    );
}

#[test]
fn malformed_cidr_in_a_trusted_list() {
    assert_fails(
        &with_key("{ identity = \"xff\", trusted = [\"10.0.0.0/8\", \"173.245.48.0/33\"] }"),
        &[],
        &[
            "bad.toml:6:",
            "`policy.key.trusted[1]`",
            "malformed CIDR `173.245.48.0/33`",
        ],
    );
    // And in a source's range.
    let toml = format!("{HEAD}{POLICY}{TRAFFIC}via = \"cdn\"\ncdn_range = \"cdn.example\"\n");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:11:", "`traffic[0].cdn_range`", "malformed CIDR"],
    );
}

#[test]
fn trusted_hops_on_an_identity_without_xff() {
    assert_fails(
        &with_key("{ identity = \"cdn_header\", trusted_hops = 1 }"),
        &[],
        &[
            "bad.toml:6:",
            "`policy.key.trusted_hops`",
            "not used by identity `cdn_header`",
            "only `xff` counts X-Forwarded-For hops",
        ],
    );
    // Inside a fallback, the field path says so.
    assert_fails(
        &with_key(
            "{ identity = \"user_else\", fallback = { identity = \"peer\", trusted_hops = 2 } }",
        ),
        &[],
        &["bad.toml:6:", "`policy.key.fallback.trusted_hops`"],
    );
}

#[test]
fn xff_needs_hops_or_cidrs_and_sources_need_addresses() {
    assert_fails(
        &with_key("{ identity = \"xff\" }"),
        &[],
        &[
            "bad.toml:6:",
            "`policy.key.trusted_hops`",
            "needs `trusted_hops`",
        ],
    );
    let toml = format!("{HEAD}{POLICY}{TRAFFIC}via = [\"cdn\", \"proxi\"]\n");
    assert_fails(
        &toml,
        &[],
        &["bad.toml:10:", "`traffic[0].via`", "did you mean `proxy`"],
    );
    let toml = format!("{HEAD}{POLICY}{TRAFFIC}forge_xff = [\"1.2.3.4\", \"evil\"]\n");
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].forge_xff[1]`",
            "not an IP address",
        ],
    );
    let toml = format!(
        "{HEAD}{POLICY}[[traffic]]\nname = \"a\"\nkind = \"cdn_bypass\"\nrate = \"1/s\"\nvia = \"cdn\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].via`",
            "not used by traffic kind `cdn_bypass`",
        ],
    );
}

/// A contender with one rule (`extra` goes into the rule, `more` after it).
fn contender(extra: &str, more: &str) -> String {
    format!(
        "{HEAD}{POLICY}{TRAFFIC}[[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\nalgorithm = \"fixed_window\"\nlimit = 5\nwindow = \"1s\"\n{extra}{more}"
    )
}

#[test]
fn contender_unknown_rule_field() {
    assert_fails(
        &contender("limt = 3\n", ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].limt`",
            "unknown field",
        ],
    );
}

#[test]
fn contender_rule_matching_nothing() {
    assert_fails(
        &contender("routes = [\"/login\"]\n", ""),
        &[],
        &[
            "bad.toml:13:",
            "`contender[0].rule[0].name`",
            "rule `r` matches no request",
        ],
    );
}

#[test]
fn contender_overlapping_tier_list() {
    let rule = "per_tier = [{ tiers = [\"free\", \"pro\"], limit = 1 }, { tiers = [\"pro\"], limit = 9 }]\n";
    assert_fails(
        &contender(rule, ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].per_tier[1].tiers[0]`",
            "tier `pro` is already in an earlier per_tier entry",
        ],
    );
    assert_fails(
        &contender("tiers = [\"free\", \"free\"]\n", ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].tiers[1]`",
            "listed twice",
        ],
    );
}

#[test]
fn contender_malformed_cidr() {
    let toml = format!(
        "{HEAD}{POLICY}{TRAFFIC}[[contender]]\nname = \"c\"\nbypass = {{ cidrs = [\"10.0.0.0/33\"] }}\n[[contender.rule]]\nname = \"r\"\nalgorithm = \"gcra\"\nlimit = 5\nwindow = \"1s\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:12:",
            "`contender[0].bypass.cidrs[0]`",
            "`10.0.0.0/33` is not a CIDR block",
        ],
    );
}

#[test]
fn contender_duplicate_names() {
    let again = "[[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\nalgorithm = \"gcra\"\nlimit = 5\nwindow = \"1s\"\n";
    assert_fails(
        &contender("", again),
        &[],
        &[
            "bad.toml:18:",
            "`contender[1].name`",
            "another contender is already named `c`",
        ],
    );
    // A contender may not take the name of a short-form algorithm either.
    let toml = format!(
        "{HEAD}algorithms = [\"gcra\"]\n{POLICY}{TRAFFIC}[[contender]]\nname = \"gcra\"\n[[contender.rule]]\nname = \"r\"\nalgorithm = \"gcra\"\nlimit = 5\nwindow = \"1s\"\n"
    );
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:12:",
            "`contender[0].name`",
            "already the name of an algorithm",
        ],
    );
}

#[test]
fn contender_bad_warn_at_and_commit() {
    assert_fails(
        &contender("warn_at = 1.5\n", ""),
        &[],
        &["bad.toml:17:", "`contender[0].rule[0].warn_at`", "(0, 1]"],
    );
    let toml = contender("", "").replace("name = \"c\"\n", "name = \"c\"\ncommit = \"nginx\"\n");
    assert_fails(
        &toml,
        &[],
        &[
            "bad.toml:12:",
            "`contender[0].commit`",
            "all_or_nothing, in_order or every_rule",
        ],
    );
}

#[test]
fn contender_rule_with_a_bad_identity_function_is_refused() {
    assert_fails(
        &contender("key = { identity = \"xff\" }\n", ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].key.trusted_hops`",
            "needs `trusted_hops`",
        ],
    );
    assert_fails(
        &contender(
            "key = { identity = \"cdn_header\", trusted = [\"10.0.0.0/33\"] }\n",
            "",
        ),
        &[],
        &["bad.toml:17:", "`contender[0].rule[0].key.trusted[0]`"],
    );
}

#[test]
fn contender_bad_methods() {
    assert_fails(
        &contender("methods = [\"FETCH\"]\n", ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].methods[0]`",
            "unknown method `FETCH`",
        ],
    );
    assert_fails(
        &contender("methods = []\n", ""),
        &[],
        &[
            "bad.toml:17:",
            "`contender[0].rule[0].methods`",
            "at least one method",
        ],
    );
    // The traffic sends only GET.
    assert_fails(
        &contender("methods = [\"POST\"]\n", ""),
        &[],
        &[
            "bad.toml:13:",
            "`contender[0].rule[0].name`",
            "matches no request",
        ],
    );
}

#[test]
fn traffic_bad_methods() {
    let with = |line: &str| format!("{HEAD}{POLICY}{TRAFFIC}{line}");
    assert_fails(
        &with("method = \"GOT\"\n"),
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].method`",
            "unknown method `GOT`",
        ],
    );
    assert_fails(
        &with("methods = [{ method = \"PUTT\", weight = 2 }]\n"),
        &[],
        &[
            "bad.toml:10:",
            "`traffic[0].methods[0].method`",
            "unknown method `PUTT`",
        ],
    );
    assert_fails(
        &with("method = \"GET\"\nmethods = [{ method = \"POST\" }]\n"),
        &[],
        &["bad.toml:11:", "`traffic[0].methods`", "not both"],
    );
}

#[test]
fn a_trace_error_mid_run_leaves_no_directory_it_created() {
    // The bad line comes after thousands of decisions, so the decision log's temporary file
    // (and the directories it needed) exist when the error ends the run; a directory that was
    // there before stays.
    let dir = tempfile::tempdir().unwrap();
    let mut trace = String::from("time,ip\n");
    for i in 0..3000 {
        trace.push_str(&format!("{},10.0.0.{}\n", i * 1000, i % 50));
    }
    trace.push_str("soon,10.0.0.1\n");
    write(dir.path(), "trace.csv", &trace);
    std::fs::create_dir(dir.path().join("kept")).unwrap();
    let toml = format!(
        "{HEAD}algorithms = [\"gcra\"]\n{POLICY}[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"trace.csv\"\n"
    );
    let path = write(dir.path(), "s.toml", &toml);
    for decisions in ["new/deeper/log.csv", "kept/log.csv"] {
        rlsim()
            .current_dir(dir.path())
            .arg("run")
            .arg(&path)
            .args(["--decisions", decisions])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("trace.csv:3002:"));
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["kept", "s.toml", "trace.csv"], "{decisions}");
        assert_eq!(
            std::fs::read_dir(dir.path().join("kept")).unwrap().count(),
            0
        );
    }
}

#[test]
fn unknown_fields_suggest_the_intended_one() {
    let policy = POLICY.replace("limit", "limt");
    assert_fails(
        &format!("{HEAD}{policy}{TRAFFIC}"),
        &[],
        &["bad.toml:4:1: field `policy.limt`: unknown field `limt`: did you mean `limit`?"],
    );
    let traffic = TRAFFIC.replace("rate", "rat");
    let (_, stderr) = fails_with(&format!("{HEAD}{POLICY}{traffic}"));
    assert!(
        stderr.contains("field `traffic[0].rat`: unknown field `rat`: did you mean `rate`?"),
        "{stderr}"
    );
    // Not one of sixty names listed.
    assert!(!stderr.contains("expected one of"), "{stderr}");
    // Nothing close: the known fields are listed.
    let policy = POLICY.replace("limit", "zzzz");
    let (_, stderr) = fails_with(&format!("{HEAD}{policy}{TRAFFIC}"));
    assert!(
        stderr.contains("unknown field `zzzz`, expected one of `limit`"),
        "{stderr}"
    );
}

/// `rlsim run` on `toml`: its exit code (2, checked) and standard error.
fn fails_with(toml: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", toml);
    let out = rlsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    (2, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_bare_number_for_a_rate_or_duration_suggests_the_unit() {
    let traffic = TRAFFIC.replace("rate = \"1/s\"", "rate = 50");
    assert_fails(
        &format!("{HEAD}{POLICY}{traffic}"),
        &[],
        &[
            "bad.toml:9:8: field `traffic[0].rate`: 50 has no unit: a rate is a string with its unit, like `\"50/min\"` or `\"50/s\"`",
        ],
    );
    let policy = POLICY.replace("window = \"1s\"", "window = 900");
    assert_fails(
        &format!("{HEAD}{policy}{TRAFFIC}"),
        &[],
        &[
            "bad.toml:5:10: field `policy.window`",
            "a duration is a string with its unit, like `\"900s\"`",
        ],
    );
    // The same through --set, which names the override instead of a line.
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &format!("{HEAD}{POLICY}{TRAFFIC}"));
    for (set, hint) in [
        ("traffic[0].rate=50", "like `\"50/min\"` or `\"50/s\"`"),
        ("traffic.a.rate=2.5", "like `\"2.5/min\"` or `\"2.5/s\"`"),
        ("policy.window=900", "like `\"900s\"`"),
    ] {
        rlsim()
            .arg("run")
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join("out"))
            .arg("--set")
            .arg(set)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "error: --set {set}: field `"
            )))
            .stderr(predicates::str::contains(hint));
    }
}

#[test]
fn a_fixed_ip_must_be_an_address_when_a_contender_rule_keys_by_identity() {
    let contender = "[[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"tracker\"\nalgorithm = \"gcra\"\nlimit = 10\nwindow = \"1s\"\nkey = { identity = \"peer\" }\n";
    let traffic = format!("{TRAFFIC}ip = \"scraper-host\"\n");
    assert_fails(
        &format!("{HEAD}{POLICY}{traffic}{contender}"),
        &[],
        &[
            "bad.toml:10:6: field `traffic[0].ip`: `scraper-host` is not an IP address, which rule `tracker` needs: it keys by an identity function",
        ],
    );
    // Keyed by fields only, a name is a fine `ip`.
    let fields = contender.replace("{ identity = \"peer\" }", "\"ip\"");
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "ok.toml",
        &format!("{HEAD}{POLICY}{traffic}{fields}"),
    );
    rlsim()
        .arg("check")
        .arg(&path)
        .assert()
        .code(predicates::ord::ne(2));
}

#[test]
fn several_mistakes_are_reported_in_file_order() {
    // The source (line 6) comes before the policy (line 8): both are reported, in that order.
    let toml = "name = \"x\"\nduration = \"1m\"\n[[traffic]]\nname = \"a\"\nkind = \"constant\"\n\
                rate = \"fast\"\n[policy]\nlimit = 0\nwindow = \"1s\"\n";
    assert_fails(
        toml,
        &[],
        &[
            "bad.toml:6:",
            "`traffic[0].rate`",
            "bad.toml:8:",
            "`policy.limit`",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", toml);
    let output = rlsim()
        .arg("check")
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("error: ")
            && lines[0].contains("bad.toml:6:8: field `traffic[0].rate`"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("error: ") && lines[1].contains("bad.toml:8:9: field `policy.limit`"),
        "{stderr}"
    );
}
