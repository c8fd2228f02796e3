//! `rlsim import` of Traefik dynamic configurations (`rateLimit` middlewares) and
//! `[[contender]] import`, end to end: the refusals Traefik's source gives, counted by hand in
//! scenarios/traefik_import.toml, and bad input named by file, line and field path.

use crate::util::{import_refused, repo, rlsim, row, source, summary, write};

/// dynamic.yaml: /api* average 10/s burst 5 (maxDelay 50 ms), /login 6/min burst 2 (maxDelay
/// 500 ms): a burst of 10 passes 5 and refuses 5 (each would wait 100 ms or more); a client at
/// 20/s passes 9, then alternates a 50 ms delay (served) and a 100 ms wait (refused, its token
/// given back); a burst of 10 to /login passes 2.
#[test]
fn traefik_reserve_and_cancel_refuse_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/traefik_import.toml"));
    let t = row(&s, "traefik");
    assert_eq!(t["offered"], 100);
    assert_eq!(t["rejected"], 48);
    assert_eq!(t["refuse_status"], 429);
    assert_eq!(source(t, "browser")["rejected"], 15);
    assert_eq!(source(t, "steady")["rejected"], 25);
    assert_eq!(source(t, "steady")["delayed"], 26);
    assert_eq!(source(t, "login")["rejected"], 8);
}

/// `rlsim import`'s output pasted into a scenario decides as `import = ...` does.
#[test]
fn the_printed_traefik_contender_decides_as_the_direct_import() {
    let conf = repo().join("scenarios/configs/traefik/dynamic.yaml");
    let out = rlsim().arg("import").arg(&conf).output().expect("runs");
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout).expect("utf-8");
    for line in [
        "algorithm = \"go-x-time-rate\"",
        "routes = [\"/api*\"]",
        "profile = { average = 10, burst = 5, max_delay = \"50ms\", period = \"1s\" }",
        "profile = { average = 6, burst = 2, max_delay = \"500ms\", period = \"1m\" }",
        "commit = \"in_order\"",
    ] {
        assert!(toml.contains(line), "{line} missing in:\n{toml}");
    }
    let shipped =
        std::fs::read_to_string(repo().join("scenarios/traefik_import.toml")).expect("scenario");
    let pasted = shipped
        .replace(
            "[[contender]]\nname = \"traefik\"\nimport = \"configs/traefik/dynamic.yaml\"\n",
            "",
        )
        .replace("traefik ", "traefik-dynamic ")
        .replace("[policy]", &format!("{toml}\n[policy]"));
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "pasted.toml", &pasted);
    let s = summary(&p);
    let t = row(&s, "traefik-dynamic");
    assert_eq!(
        (t["offered"].clone(), t["rejected"].clone()),
        (100.into(), 48.into())
    );
}

fn refused(yaml: &str, expect: &[&str]) {
    import_refused("traefik", "bad.yaml", yaml, expect);
}

#[test]
fn bad_traefik_configs_name_file_line_and_field() {
    let head = "http:\n  middlewares:\n    rl:\n      rateLimit:\n";
    refused(
        &format!("{head}        average: 10\n        burst: many\n"),
        &[
            "bad.yaml:6:",
            "bad.yaml:6: directive `http.middlewares.rl.rateLimit.burst`: many is not a whole number: must be a whole number of requests from 0 to 4294967295",
        ],
    );
    refused(
        &format!("{head}        average: 10\n        period: soon\n"),
        &[
            "bad.yaml:6:",
            "`http.middlewares.rl.rateLimit.period`",
            "not a duration",
        ],
    );
    refused(
        &format!(
            "{head}        average: 10\n        redis:\n          endpoints: [\"127.0.0.1:6379\"]\n"
        ),
        &[
            "bad.yaml:6:",
            "`http.middlewares.rl.rateLimit.redis`",
            "Redis-backed",
        ],
    );
    refused(
        &format!(
            "{head}        average: 10\n        sourceCriterion:\n          ipStrategy:\n            excludedIPs: [\"10.0.0.0/8\"]\n"
        ),
        &[
            "bad.yaml:8:",
            "sourceCriterion.ipStrategy.excludedIPs`",
            "socket peer",
        ],
    );
    refused(
        &format!("{head}        average: 10\n        rate: 5\n"),
        &[
            "bad.yaml:6:",
            "`http.middlewares.rl.rateLimit.rate`",
            "not supported",
        ],
    );
    refused(
        "http:\n  middlewares: [1, 2\n",
        &["bad.yaml:", "directive `yaml`"],
    );
    refused(
        "http:\n  routers: {}\n",
        &["bad.yaml:1:", "nothing to import"],
    );
}
