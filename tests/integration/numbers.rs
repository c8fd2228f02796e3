//! Every number a user writes is bounded, and a refusal says the value, the range and its unit
//! in rlsim's words (issue 46): scenario fields in the file and through `--set`, command-line
//! flags and imported configurations. Each range is tested at both edges.

use crate::util::{repo, rlsim, write};
use rlsim::Scenario;
use rlsim::scenario::Override;
use std::path::Path;

const SCENARIO: &str = "name = \"x\"\nduration = \"10s\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n\
                        [[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\n";

/// `SCENARIO` with `set` applied as `--set`s: the error's message, or `None` when accepted.
fn with_set(set: &[&str]) -> Option<String> {
    let overrides: Vec<Override> = set.iter().map(|s| Override::parse(s).unwrap()).collect();
    Scenario::parse_with(SCENARIO, Path::new("n.toml"), &overrides)
        .err()
        .map(|e| {
            assert_eq!(e.exit_code(), 2, "{e}");
            e.to_string()
        })
}

/// The binary's standard error, checked to have exited 2.
fn refused(args: &[&str]) -> String {
    let out = rlsim().args(args).output().expect("runs");
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

/// Reported: serde's `invalid type: integer ... as i128, expected i64`.
#[test]
fn a_limit_past_u64_through_set_says_its_range() {
    let boundary = repo().join("scenarios/boundary.toml");
    let err = refused(&[
        "run",
        boundary.to_str().unwrap(),
        "--set",
        "policy.limit=18446744073709551616",
    ]);
    assert_eq!(
        err,
        "error: --set policy.limit=18446744073709551616: field `policy.limit`: \
         18446744073709551616 is too large: must be a whole number of requests from 1 to \
         4294967295\n"
    );
}

#[test]
fn a_limit_past_u64_in_the_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = SCENARIO.replace("limit = 10", "limit = 18446744073709551616");
    let path = write(dir.path(), "big.toml", &text);
    let err = refused(&["run", path.to_str().unwrap()]);
    assert!(
        err.ends_with(
            "big.toml:4:9: field `policy.limit`: 18446744073709551616 is too large: must be a \
             whole number of requests from 1 to 4294967295\n"
        ),
        "{err}"
    );
}

/// Each whole-number field at both edges of its range, and the ways a value can miss it.
#[test]
fn scenario_whole_numbers_are_bounded_with_their_range_and_unit() {
    let requests = "a whole number of requests from 1 to 4294967295";
    // A window of 4294967295 s keeps 4294967295 requests in it within every algorithm's
    // arithmetic (gcra's interval of 1 s, token_bucket's burst × window / gcd).
    let window = "policy.window=4294967295s";
    let most = "policy.limit=4294967295";
    // A million users need addresses of their own: one fixed address.
    let ip = "traffic[0].ip=10.0.0.1";
    for (field, last, past, range, extra) in [
        ("policy.limit", "4294967295", "4294967296", requests, ip),
        ("policy.burst", "4294967295", "4294967296", requests, most),
        (
            "seed",
            "9223372036854775807",
            "9223372036854775808",
            "a whole number from 0 to 9223372036854775807",
            ip,
        ),
        (
            "replicates",
            "10000",
            "10001",
            "a whole number of seeds from 1 to 10000",
            ip,
        ),
        (
            "traffic[0].users",
            "1000000",
            "1000001",
            "a whole number of clients from 1 to 1000000",
            ip,
        ),
    ] {
        let set = format!("{field}={last}");
        assert_eq!(with_set(&[&set, extra, window]), None, "{set}");
        let set = format!("{field}={past}");
        assert_eq!(
            with_set(&[&set, extra, window]).as_deref(),
            Some(
                format!("--set {set}: field `{field}`: {past} is too large: must be {range}")
                    .as_str()
            )
        );
    }
    for (value, why) in [
        ("0", "0 is too small"),
        (
            "-99999999999999999999",
            "-99999999999999999999 is too small",
        ),
        ("1.5", "1.5 is not a whole number"),
        ("1e3", "1e3 is not a whole number"),
        ("inf", "inf is not a whole number"),
        ("nan", "nan is not a whole number"),
        ("abc", "\"abc\" is not a number"),
        ("[1]", "[1] is not a number"),
    ] {
        assert_eq!(
            with_set(&[&format!("policy.limit={value}")]).as_deref(),
            Some(
                format!(
                    "--set policy.limit={value}: field `policy.limit`: {why}: must be {requests}"
                )
                .as_str()
            )
        );
    }
}

/// Durations stop at u64 nanoseconds, rates at u64 requests per u64 nanoseconds.
#[test]
fn durations_and_rates_state_their_range() {
    assert_eq!(with_set(&["duration=213503d"]), None);
    assert_eq!(
        with_set(&["duration=213504d"]).as_deref(),
        Some(
            "--set duration=213504d: field `duration`: `213504d` is too large: a \
             duration is at most 18446744073709551615ns (about 584 years)"
        )
    );
    assert_eq!(
        with_set(&["traffic[0].rate=99999999999999999999/s"]).as_deref(),
        Some(
            "--set traffic[0].rate=99999999999999999999/s: field `traffic[0].rate`: \
             `99999999999999999999/s` is out of range: a rate, as whole requests per whole \
             nanoseconds, must have both at most 18446744073709551615"
        )
    );
}

/// Reported: `--speed 1e308` printed a 309-digit speed and went on.
#[test]
fn probe_speed_is_bounded() {
    let boundary = repo().join("scenarios/boundary.toml");
    let probe = |speed: &str| {
        refused(&[
            "probe",
            boundary.to_str().unwrap(),
            "--target",
            "http://127.0.0.1:1",
            "--out",
            "unused",
            "--speed",
            speed,
        ])
    };
    let range = "must be a number of scenario seconds per real second from 0.000001 to 1000000";
    assert_eq!(
        probe("1e308").lines().next().unwrap(),
        format!("error: invalid value '1e308' for '--speed <SPEED>': too large: {range}")
    );
    for (speed, why) in [
        ("nan", "not a number"),
        ("0", "too small"),
        ("1000001", "too large"),
    ] {
        assert!(
            probe(speed).starts_with(&format!(
                "error: invalid value '{speed}' for '--speed <SPEED>': {why}: {range}\n"
            )),
            "{speed}"
        );
    }
}

/// Every numeric flag, past its range, in its own words.
#[test]
fn numeric_flags_state_their_range() {
    let b = repo().join("scenarios/boundary.toml");
    let b = b.to_str().unwrap();
    let probe = [
        "probe",
        b,
        "--target",
        "http://127.0.0.1:1",
        "--out",
        "unused",
    ];
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["run", b, "--seed", "18446744073709551616"],
            "'--seed <N>': too large: must be a whole number from 0 to 18446744073709551615",
            "",
        ),
        (
            vec!["sweep", b, "--seed", "-1"],
            "'--seed <N>': too small: must be a whole number from 0 to 18446744073709551615",
            "",
        ),
        (
            vec!["run", b, "--replicates", "10001"],
            "'--replicates <N>': too large: must be a whole number of seeds from 1 to 10000",
            "",
        ),
        (
            vec!["bench", "--requests", "1e9"],
            "'--requests <N>': not a whole number: must be a whole number of requests from 1 to 1000000000",
            "",
        ),
        (
            vec![
                "verify",
                b,
                "--store",
                "redis://127.0.0.1:1",
                "--limit",
                "0",
            ],
            "'--limit <N>': too small: must be a whole number of decisions from 1 to 18446744073709551615",
            "",
        ),
        (
            vec![
                "store-memory",
                "--store",
                "redis://127.0.0.1:1",
                "--keys",
                "1000001",
            ],
            "'--keys <N>': too large: must be a whole number of keys from 1 to 1000000",
            "",
        ),
        (
            vec!["--connections", "1025"],
            "'--connections <CONNECTIONS>': too large: must be a whole number of connections from 1 to 1024",
            "probe",
        ),
        (
            vec!["--max-requests", "99999999999999999999"],
            "'--max-requests <N>': too large: must be a whole number of requests from 1 to 18446744073709551615",
            "probe",
        ),
        (
            vec!["--refuse-status", "600"],
            "'--refuse-status <REFUSE_STATUS>': too large: must be an HTTP status from 100 to 599",
            "probe",
        ),
        (
            vec!["--timeout", "0s"],
            "'--timeout <DURATION>': too short: must be a duration from 1ms to 1h",
            "probe",
        ),
        (
            vec!["--max-duration", "721h"],
            "'--max-duration <DURATION>': too long: must be a duration from 1ms to 720h",
            "probe",
        ),
    ];
    for (args, expected, prefix) in cases {
        let args: Vec<&str> = match prefix {
            "probe" => probe.iter().copied().chain(args).collect(),
            _ => args,
        };
        let err = refused(&args);
        let value = args.last().unwrap();
        assert!(
            err.starts_with(&format!("error: invalid value '{value}' for {expected}\n")),
            "{args:?}: {err}"
        );
    }
}

/// Reported: nginx's `rate=1e23r/s` said `invalid rate` and no more.
#[test]
fn nginx_numbers_state_their_range() {
    let dir = tempfile::tempdir().unwrap();
    let import = |rate: &str, burst: &str| {
        let conf = format!(
            "http {{\n  limit_req_zone $binary_remote_addr zone=a:10m rate={rate};\n  \
             server {{ location / {{ limit_req zone=a burst={burst}; }} }}\n}}\n"
        );
        let path = write(dir.path(), "n.conf", &conf);
        rlsim()
            .args(["import", "--kind", "nginx", "-q"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let ok = import("4294967295r/m", "4294967295");
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    let rate = "must be a whole number of requests per second or minute (`10r/s`, `30r/m`) \
                from 1 to 4294967295";
    for (r, burst, expected) in [
        (
            "1e23r/s",
            "1",
            format!("n.conf:2: directive `limit_req_zone`: rate `1e23r/s`: {rate}"),
        ),
        (
            "4294967296r/s",
            "1",
            format!("n.conf:2: directive `limit_req_zone`: rate `4294967296r/s`: {rate}"),
        ),
        (
            "1r/s",
            "4294967296",
            "n.conf:3: directive `limit_req`: burst `4294967296`: must be a whole number of \
             requests from 1 to 4294967295"
                .to_string(),
        ),
    ] {
        let out = import(r, burst);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.ends_with(&format!("{expected}\n")), "{err}");
    }
}

/// A number of each imported kind past its range, in the kind's own field and rlsim's words.
#[test]
fn imported_numbers_state_their_range() {
    let requests = "must be a whole number of requests from 1 to 4294967295";
    let cases: [(&str, &str, &str, String); 7] = [
        (
            "express-rate-limit",
            "e.json",
            "{\n  \"windowMs\": 1000,\n  \"limit\": 1e400\n}\n",
            format!("e.json:3:16: field `limit`: 1e400 is out of range: {requests}"),
        ),
        (
            "nestjs-throttler",
            "n.json",
            "[{ \"ttl\": \"x\", \"limit\": 3 }]\n",
            "n.json:1:13: field `[0].ttl`: \"x\" is not a number: must be a whole number of \
             milliseconds from 1 to 4294967295"
                .to_string(),
        ),
        (
            "cloudflare",
            "c.json",
            "{\n  \"expression\": \"true\",\n  \"action\": \"block\",\n  \"ratelimit\": {\n    \
             \"characteristics\": [\"cf.colo.id\", \"ip.src\"],\n    \"period\": 1e30,\n    \
             \"requests_per_period\": 10\n  }\n}\n",
            "c.json:6:18: field `ratelimit.period`: 1e30 is out of range: must be a period of 10, \
             60, 120, 300, 600 or 3600 seconds"
                .to_string(),
        ),
        (
            "aws-usage-plan",
            "a.json",
            "{\n  \"name\": \"p\",\n  \"throttle\": {\"burstLimit\": 4294967296,\n    \"rateLimit\": 10}\n}\n",
            format!(
                "a.json:3: directive `throttle.burstLimit`: 4294967296 is too large: {requests}"
            ),
        ),
        (
            "traefik",
            "t.yaml",
            "http:\n  middlewares:\n    rl:\n      rateLimit:\n        average: 4294967296\n",
            "t.yaml:5: directive `http.middlewares.rl.rateLimit.average`: 4294967296 is too \
             large: must be a whole number of requests from 0 to 4294967295"
                .to_string(),
        ),
        (
            "envoy-ratelimit",
            "r.yaml",
            "domain: d\ndescriptors:\n  - key: generic_key\n    rate_limit: {unit: second, \
             requests_per_unit: 99999999999999999999}\n",
            "100000000000000000000 is too large: must be a whole number of requests from 0 to \
             4294967295"
                .to_string(),
        ),
        (
            "envoy-local",
            "l.yaml",
            &ENVOY_LOCAL.replace("max_tokens: 4", "max_tokens: 4294967296"),
            "max_tokens`: 4294967296 is too large: must be a whole number of tokens from 1 to \
             4294967295"
                .to_string(),
        ),
    ];
    for (kind, name, text, expected) in cases {
        crate::util::import_refused(kind, name, text, &[&expected]);
    }
}

/// HAProxy's timers stop at its largest, its status and thresholds at rlsim's.
#[test]
fn haproxy_numbers_state_their_range() {
    for (from, to, expected) in [
        (
            "deny_status 429",
            "deny_status 700",
            "h.cfg:19: directive `http-request deny`: deny_status `700` is too large: must be an \
             HTTP status from 400 to 599",
        ),
        (
            "http_req_rate(10s)",
            "http_req_rate(2147484s)",
            "h.cfg:14: directive `stick-table`: http_req_rate period `2147484s`: must be a \
             duration from 1ms to 2147483647ms (~24.8 days, HAProxy's largest timer)",
        ),
        (
            "gt 10",
            "gt 4294967296",
            "h.cfg:19: directive `http-request deny`: acl `too_fast` (line 17): `4294967296` is \
             too large: must be a whole number of requests from 0 to 4294967295",
        ),
    ] {
        let text = HAPROXY.replace(from, to);
        crate::util::import_refused("haproxy", "h.cfg", &text, &[expected]);
    }
    // The largest of each imports.
    let dir = tempfile::tempdir().unwrap();
    let text = HAPROXY
        .replace("http_req_rate(10s)", "http_req_rate(2147483647ms)")
        .replace("gt 10", "gt 4294967295")
        .replace("deny_status 429", "deny_status 599");
    let path = write(dir.path(), "h.cfg", &text);
    let out = rlsim()
        .args(["import", "--kind", "haproxy", "-q"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

const HAPROXY: &str = include_str!("../../scenarios/configs/haproxy/per_ip.cfg");

const ENVOY_LOCAL: &str = include_str!("../../scenarios/configs/envoy/local_ratelimit.yaml");
