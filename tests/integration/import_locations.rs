//! An nginx configuration's locations imported as route-scoped rules (issue 45): one location
//! picked keeps its route scope, and locations with their own `limit_req_status` and
//! `limit_req_dry_run` import together, each rule with its own.

use crate::util::{rlsim, row, summary, write};
use std::path::Path;

/// `/a/` and `/b/`, each its own zone of 1r/s with no burst: one request a second per address.
/// `/b/` answers 503 (the default) and only logs its refusals; `/a/` answers 429.
const CONF: &str = "http {
  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;
  limit_req_zone $binary_remote_addr zone=b:1m rate=1r/s;
  limit_req_status 429;
  server {
    server_name api;
    location /a/ {
      limit_req zone=a;
    }
    location /b/ {
      limit_req zone=b;
      limit_req_status 503;
      limit_req_dry_run on;
    }
  }
}
";

fn imported(conf: &Path, args: &[&str]) -> String {
    let out = rlsim()
        .arg("import")
        .arg(conf)
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Five requests at once from one address to `/a/x`, and five to `/b/x`.
fn scenario(dir: &Path, contender: &str) -> serde_json::Value {
    let text = format!(
        "name = \"locations\"\nduration = \"1s\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"ip\"\n\
         {contender}\n\
         [[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 5\nevery = \"10s\"\nip = \"198.51.100.1\"\nendpoint = \"/a/x\"\n\
         [[traffic]]\nname = \"b\"\nkind = \"bursts\"\ncount = 5\nevery = \"10s\"\nip = \"198.51.100.1\"\nendpoint = \"/b/x\"\n"
    );
    summary(&write(dir, "s.toml", &text))
}

#[test]
fn locations_with_their_own_status_and_dry_run_import_as_one_contender() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = write(dir.path(), "nginx.conf", CONF);
    let toml = imported(&conf, &[]);
    let b = toml.split("name = \"b\"").nth(1).expect("rule b");
    assert!(
        toml.contains("refuse_status = 429\n")
            && b.contains("dry_run = true\nrefuse_status = 503\n"),
        "{toml}"
    );
    let head = toml.split("[[contender.rule]]").next().unwrap();
    assert!(!head.contains("dry_run = "), "{toml}");
    let s = scenario(
        dir.path(),
        "[[contender]]\nname = \"api\"\nimport = \"nginx.conf\"\n",
    );
    let api = row(&s, "api");
    // /a/: 1 of 5 admitted, 4 refused with 429; /b/: all 5 served (6 in all), 4 would have
    // been refused.
    assert_eq!(
        [&api["allowed"], &api["rejected"], &api["would_refuse"]],
        [6, 4, 4]
    );
    assert_eq!(api["refuse_status"], 429);
}

#[test]
fn one_location_picked_keeps_its_route_scope() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = write(dir.path(), "nginx.conf", CONF);
    let toml = imported(&conf, &["--location", "/a/"]);
    assert!(toml.contains("routes = [\"/a/*\"]"), "{toml}");
    assert!(!toml.contains("name = \"b\""), "{toml}");
    let s = scenario(
        dir.path(),
        "[[contender]]\nname = \"a\"\nimport = \"nginx.conf\"\nlocation = \"/a/\"\n",
    );
    let a = row(&s, "a");
    // /b/x is not /a/'s: never limited by it.
    assert_eq!([&a["allowed"], &a["rejected"], &a["unlimited"]], [6, 4, 5]);
}

#[test]
fn a_zone_shared_by_locations_that_answer_differently_names_both_in_nginx_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shared = CONF.replace("limit_req zone=b;", "limit_req zone=a;");
    let conf = write(dir.path(), "nginx.conf", &shared);
    let out = rlsim().arg("import").arg(&conf).output().expect("runs");
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nginx.conf:10: directive `limit_req_status`: zone `a` is applied with limit_req_status 503 in location `/b/` and limit_req_status 429 in location `/a/`"),
        "{err}"
    );
    assert!(!err.contains("Some(") && !err.contains("None"), "{err}");
}
