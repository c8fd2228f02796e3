//! `rlsim import` and `[[contender]] import` of JSON-described limiters (express-rate-limit and
//! @nestjs/throttler options, Cloudflare rate limiting rules): the shipped examples, the refusals their documentation's
//! arithmetic gives, end to end, and bad input exiting 2 with file, line and field.

use crate::util::{rejected, repo, rlsim, row, summary, write};
use std::path::{Path, PathBuf};

fn shipped(kind: &str) -> Vec<PathBuf> {
    let dir = repo().join("scenarios/configs").join(kind);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

/// Every shipped example imports, its kind detected from its keys alone.
#[test]
fn every_shipped_json_config_imports_as_its_detected_kind() {
    for kind in ["express-rate-limit", "nestjs-throttler", "cloudflare"] {
        let configs = shipped(kind);
        assert!(configs.len() >= 2, "{configs:?}");
        for conf in configs {
            let out = rlsim().arg("import").arg(&conf).output().expect("runs");
            assert!(
                out.status.success(),
                "{}: {}",
                conf.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let toml = String::from_utf8(out.stdout).expect("utf-8");
            assert!(
                toml.contains(&format!("({kind})")),
                "{}: {toml}",
                conf.display()
            );
        }
    }
}

/// scenarios/json_imports.toml, counted by hand in its comment: express-rate-limit refuses the
/// 4th and 5th of each burst and `other`'s hit (the 6th in the address's window); NestJS keys
/// per route, so `other` passes, and `long` refuses the burst's 3rd hit at 2 s.
#[test]
fn json_imports_refuse_exactly_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/json_imports.toml"));
    let express = row(&s, "express");
    assert_eq!(
        (express["offered"].clone(), express["rejected"].clone()),
        (18.into(), 9.into())
    );
    assert_eq!(rejected(express, "burst"), 6);
    assert_eq!(rejected(express, "other"), 3);
    assert_eq!(express["refuse_status"], 429);
    let nestjs = row(&s, "nestjs");
    assert_eq!(
        (nestjs["offered"].clone(), nestjs["rejected"].clone()),
        (18.into(), 7.into())
    );
    assert_eq!(rejected(nestjs, "burst"), 7);
    assert_eq!(rejected(nestjs, "other"), 0);
}

fn one_contender(
    dir: &Path,
    config: &str,
    name: &str,
    traffic: &str,
    duration: &str,
) -> serde_json::Value {
    let conf = write(dir, name, config);
    let scenario = format!(
        "name = \"t\"\nduration = \"{duration}\"\n[policy]\nlimit = 10\nwindow = \"1m\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"c\"\nimport = \"{}\"\n{traffic}",
        conf.display()
    );
    let path = write(dir, "t.toml", &scenario);
    let s = summary(&path);
    row(&s, "c").clone()
}

/// The README's example, `windowMs: 15 * 60 * 1000, limit: 100`: 101 requests at once at 0 and
/// at 15 min: each time the window (from the first hit) admits 100 and refuses the 101st.
#[test]
fn express_readme_example_admits_100_per_15_minutes_from_the_first_hit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = one_contender(
        dir.path(),
        "{\"windowMs\": 900000, \"limit\": 100, \"standardHeaders\": \"draft-8\", \"legacyHeaders\": false}",
        "express.json",
        "[[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 101\nevery = \"15m\"\nip = \"198.51.100.1\"\n",
        "16m",
    );
    assert_eq!(
        (c["offered"].clone(), c["rejected"].clone()),
        (202.into(), 2.into())
    );
}

/// The NestJS docs' `[{ ttl: 60000, limit: 10 }]`: 11 at once at 0, 30 and 60 s. The 11th
/// blocks the key for the ttl (60 s), so all 11 at 30 s are refused; at 60 s the hits have
/// expired and the block ends: 10 pass again. With `blockDuration: 1000` the block ends before
/// 30 s and the storage's `resetBlockedRequest` clears the hits with it: 10 pass at 30 s too.
#[test]
fn nestjs_docs_example_blocks_for_the_ttl_and_a_short_block_forgets_the_hits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let traffic = "[[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 11\nevery = \"30s\"\nip = \"198.51.100.1\"\n";
    let c = one_contender(
        dir.path(),
        "[{\"ttl\": 60000, \"limit\": 10}]",
        "n.json",
        traffic,
        "61s",
    );
    assert_eq!(
        (c["offered"].clone(), c["rejected"].clone()),
        (33.into(), 13.into())
    );
    let c = one_contender(
        dir.path(),
        "[{\"ttl\": 60000, \"limit\": 10, \"blockDuration\": 1000}]",
        "n.json",
        traffic,
        "61s",
    );
    assert_eq!(
        (c["offered"].clone(), c["rejected"].clone()),
        (33.into(), 3.into())
    );
}

/// `rlsim import`'s output, pasted into a scenario, decides as `import = ...` does.
#[test]
fn the_printed_json_contenders_decide_as_the_direct_import() {
    let scenario =
        std::fs::read_to_string(repo().join("scenarios/json_imports.toml")).expect("scenario");
    let head = &scenario[..scenario.find("expect = [").expect("expect")];
    let policy = "[policy]\nlimit = 3\nwindow = \"1s\"\nkey = \"ip\"\n";
    let traffic = &scenario[scenario.find("[[traffic]]").expect("traffic")..];
    let mut pasted = format!("{head}{policy}");
    for (name, conf) in [
        ("express", "scenarios/configs/express-rate-limit/api.json"),
        ("nestjs", "scenarios/configs/nestjs-throttler/forroot.json"),
    ] {
        let out = rlsim()
            .arg("import")
            .arg(repo().join(conf))
            .output()
            .expect("runs");
        assert!(out.status.success());
        let toml = String::from_utf8(out.stdout).expect("utf-8");
        pasted.push_str(&toml.replace(
            &format!(
                "name = \"{}\"",
                if name == "express" {
                    "express-rate-limit"
                } else {
                    "nestjs-throttler"
                }
            ),
            &format!("name = \"{name}\""),
        ));
        pasted.push('\n');
    }
    pasted.push_str(traffic);
    let dir = tempfile::tempdir().expect("tempdir");
    let s = summary(&write(dir.path(), "pasted.toml", &pasted));
    assert_eq!(row(&s, "express")["rejected"], 9);
    assert_eq!(row(&s, "nestjs")["rejected"], 7);
}

fn import_error(dir: &Path, name: &str, text: &str, kind: Option<&str>) -> String {
    let path = write(dir, name, text);
    let mut cmd = rlsim();
    cmd.arg("import").arg(&path);
    if let Some(k) = kind {
        cmd.args(["--kind", k]);
    }
    let out = cmd.output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).expect("utf-8")
}

#[test]
fn bad_json_exits_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let cases: [(&str, &str, Option<&str>, &str); 7] = [
        // Syntax: a missing comma, at its line and column.
        (
            "e.json",
            "{\n  \"windowMs\": 1000\n  \"limit\": 3\n}",
            Some("express-rate-limit"),
            "e.json:3:3:",
        ),
        // Type: a string where a number goes, with the field path.
        (
            "e.json",
            "{\n  \"windowMs\": 1000,\n  \"limit\": \"3\"\n}",
            None,
            "e.json:3:",
        ),
        // A misspelt option.
        (
            "e.json",
            "{\n  \"windowMs\": 1000,\n  \"window\": 3\n}",
            None,
            "unknown field `window`",
        ),
        // Semantic: negative, refused options.
        (
            "e.json",
            "{\n  \"windowMs\": 1000,\n  \"limit\": -1\n}",
            None,
            "e.json:3: field `limit`: -1 is too small: must be a whole number from 0 to 4294967295",
        ),
        (
            "e.json",
            "{\n  \"windowMs\": 1000,\n  \"skipFailedRequests\": true\n}",
            None,
            "e.json:3: field `skipFailedRequests`: true uncounts",
        ),
        (
            "n.json",
            "{\"throttlers\": [\n  {\"ttl\": 1000, \"limit\": 3},\n  {\"name\": \"x\", \"ttl\": \"1s\", \"limit\": 3}\n]}",
            None,
            "n.json:3:",
        ),
        (
            "n.json",
            "[\n  {\"ttl\": 1000,\n   \"limit\": 0}\n]",
            None,
            "n.json:3: field `[0].limit`",
        ),
    ];
    for (name, text, kind, want) in cases {
        let err = import_error(d, name, text, kind);
        assert!(err.contains(want), "want {want:?} in {err}");
    }
    // Selecting part of a file is nginx's alone.
    let path = write(d, "ok.json", "{\"windowMs\": 1000}");
    let out = rlsim()
        .arg("import")
        .arg(&path)
        .args(["--server", "x"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is imported whole"));
    // The type error names its path too.
    let err = import_error(
        d,
        "e.json",
        "{\n  \"windowMs\": 1000,\n  \"limit\": \"3\"\n}",
        None,
    );
    assert!(
        err.contains(
            "e.json:3:14: field `limit`: \"3\" is not a number: must be a whole number of requests from 1 to 4294967295"
        ),
        "{err}"
    );
}

/// A scenario importing a bad JSON file fails the same way, exit 2, at the JSON's line.
#[test]
fn a_scenario_importing_bad_json_exits_2_at_the_json_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "bad.json", "{\n  \"windowMs\": 0\n}");
    let scenario = "name = \"t\"\nduration = \"1s\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"ip\"\n\
        [[contender]]\nname = \"c\"\nimport = \"bad.json\"\n\
        [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n";
    let path = write(dir.path(), "t.toml", scenario);
    let out = rlsim().arg("check").arg(&path).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json:2: field `windowMs`: must be greater than zero"),
        "{err}"
    );
}

/// Two Cloudflare rules on one address, in order: `login` (/login, 2 per 10 s, blocked 60 s)
/// before `site` (every path, 4 per 10 s, mitigation_timeout 0). `a` sends 3 to /login at
/// 0, 5, 10 and 15 s; `b` 2 to /home at 1, 6, 11 and 16 s. Counted by hand:
/// - 0 s: a1, a2 pass `login` and `site` (each counts 2); a3 is `login`'s 3rd in 10 s: refused,
///   the address blocked until 60 s, and `site` never sees it (the evaluation ends).
/// - 1 s: b1, b2 pass `site` (4 in its window: a1, a2, b1, b2).
/// - 5 s: a's 3 refused by the block.
/// - 6 s: b's 2 refused by `site`: its window (-4 s, 6 s] holds 4, a's /login hits among them.
/// - 10 s, 15 s: a's 3 refused by the block each time.
/// - 11 s: the hits of 0 s and 1 s have left `site`'s window (t + 10 s <= 11 s): b's 2 pass.
/// - 16 s: `site` holds the 2 of 11 s: b's 2 pass (4).
///   a: 12 offered, 2 admitted, 10 refused; b: 8 offered, 6 admitted, 2 refused. 20 offered, 12
///   refused.
#[test]
fn cloudflare_rules_refuse_exactly_the_hand_counted_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = r#"{"name": "zone", "kind": "zone", "phase": "http_ratelimit", "rules": [
  {"description": "login", "expression": "(http.request.uri.path eq \"/login\")", "action": "block",
   "ratelimit": {"characteristics": ["ip.src", "cf.colo.id"], "period": 10, "requests_per_period": 2, "mitigation_timeout": 60}},
  {"description": "site", "expression": "(http.request.uri.path wildcard \"/*\")", "action": "block",
   "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 10, "requests_per_period": 4, "mitigation_timeout": 0}}
]}"#;
    let traffic = "[[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 3\nevery = \"5s\"\nip = \"198.51.100.1\"\nendpoint = \"/login\"\n\
        [[traffic]]\nname = \"b\"\nkind = \"bursts\"\ncount = 2\nevery = \"5s\"\nstart = \"1s\"\nip = \"198.51.100.1\"\nendpoint = \"/home\"\n";
    let c = one_contender(dir.path(), rules, "cf.json", traffic, "20s");
    assert_eq!(
        (c["offered"].clone(), c["rejected"].clone()),
        (20.into(), 12.into())
    );
    assert_eq!(rejected(&c, "a"), 10);
    assert_eq!(rejected(&c, "b"), 2);
    assert_eq!(c["refuse_status"], 429);
}

/// scenarios/cloudflare_import.toml, counted by hand in its comment: `login` blocks the stuffer
/// from its 4th POST, the GETs of /login meet no rule, and `api` refuses 3 of each burst of 8.
#[test]
fn cloudflare_import_scenario_refuses_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/cloudflare_import.toml"));
    let c = row(&s, "cloudflare");
    assert_eq!(
        (c["offered"].clone(), c["rejected"].clone()),
        (84.into(), 36.into())
    );
    assert_eq!(rejected(c, "stuffer"), 27);
    assert_eq!(rejected(c, "browser"), 0);
    assert_eq!(rejected(c, "app"), 9);
    // `rlsim import`'s output, pasted, decides the same.
    let out = rlsim()
        .arg("import")
        .arg(repo().join("scenarios/configs/cloudflare/ruleset.json"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout).expect("utf-8");
    assert!(toml.contains("commit = \"in_order\""), "{toml}");
    let scenario =
        std::fs::read_to_string(repo().join("scenarios/cloudflare_import.toml")).expect("scenario");
    let head = &scenario[..scenario.find("[[contender]]").expect("contender")];
    let traffic = &scenario[scenario.find("[[traffic]]").expect("traffic")..];
    let pasted = format!(
        "{head}{}\n{traffic}",
        toml.replace("name = \"zone_rate_limits\"", "name = \"cloudflare\"")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let s = summary(&write(dir.path(), "pasted.toml", &pasted));
    assert_eq!(row(&s, "cloudflare")["rejected"], 36);
}

#[test]
fn bad_cloudflare_rules_exit_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rule = |period: &str, extra: &str| {
        format!(
            "{{\"expression\": \"(http.request.uri.path eq \\\"/a\\\")\",\n \"action\": \"block\",\n \"ratelimit\": {{\"characteristics\": [\"ip.src\", \"cf.colo.id\"],\n  \"period\": {period},\n  \"requests_per_period\": 5{extra}}}}}"
        )
    };
    let cases = [
        (
            rule("30", ""),
            "cf.json:4: field `ratelimit.period`: 30: Cloudflare's rate limiting rules take a period of 10, 60, 120, 300, 600 or 3600 seconds",
        ),
        (
            rule("60", ",\n  \"score_response_header_name\": \"x-score\""),
            "cf.json:6: field `ratelimit.score_response_header_name`: unsupported",
        ),
        (
            rule("60", "").replace("eq \\\"/a\\\"", "contains \\\"/a\\\""),
            "cf.json:1: field `expression`:",
        ),
    ];
    for (text, want) in cases {
        let err = import_error(dir.path(), "cf.json", &text, None);
        assert!(err.contains(want), "want {want:?} in {err}");
    }
    let err = import_error(
        dir.path(),
        "cf.json",
        &rule("60", ""),
        Some("nestjs-throttler"),
    );
    assert!(err.contains("cf.json:1:"), "{err}");
}
