//! `rlsim import` and `[[contender]] import`: nginx configurations, the shipped ones accepted
//! by nginx itself, and the refusals their documentation's arithmetic gives, end to end.

use crate::util::{repo, rlsim, row, summary, write};
use std::path::{Path, PathBuf};

fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn shipped() -> Vec<PathBuf> {
    let dir = repo().join("scenarios/configs/nginx");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/configs/nginx")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
        .collect();
    out.sort();
    out
}

#[test]
fn nginx_t_accepts_every_shipped_config() {
    let found = nginx();
    if !crate::external::require_external(found.is_some(), "nginx", "apt-get install nginx") {
        return;
    }
    let nginx = found.expect("found");
    let configs = shipped();
    assert!(configs.len() >= 6, "{configs:?}");
    for conf in configs {
        let prefix = tempfile::tempdir().expect("tempdir");
        let p = prefix.path().display().to_string();
        let out = std::process::Command::new(&nginx)
            .args(["-t", "-q", "-p", &p, "-c"])
            .arg(&conf)
            .args([
                "-g",
                &format!("pid {p}/nginx.pid; error_log {p}/error.log;"),
            ])
            .output()
            .expect("nginx runs");
        assert!(
            out.status.success(),
            "nginx -t refuses {}: {}",
            conf.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_shipped_config_imports() {
    for conf in shipped() {
        rlsim()
            .arg("import")
            .arg(&conf)
            .arg("--quiet")
            .assert()
            .success();
    }
}

/// two_zones.conf (docs: `rate=10r/s burst=5 nodelay` per address and 100r/s burst=20 per key,
/// inherited by /api/ and by the requests no location takes; /login its own 1r/s burst=2
/// nodelay; /health a return): counted by hand in scenarios/nginx_import.toml's comment.
#[test]
fn two_inherited_zones_refuse_exactly_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/nginx_import.toml"));
    let api = row(&s, "api.example.com");
    assert_eq!(api["offered"], 75);
    assert_eq!(api["rejected"], 23);
    assert_eq!(api["unlimited"], 10);
    assert_eq!(api["refuse_status"], 429);
    let rejected = |source: &str| {
        api["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .find(|x| x["name"] == source)
            .map(|x| x["rejected"].clone())
            .unwrap_or_else(|| panic!("no source {source}: {}", api["sources"]))
    };
    // browser: 4 of 10 per second by its address; login: 7 of 10; partner: the key's last 4.
    assert_eq!(rejected("browser"), 12);
    assert_eq!(rejected("login"), 7);
    assert_eq!(rejected("monitor"), 0);
    assert_eq!(rejected("partner"), 4);
    let dry = row(&s, "dry-run");
    assert_eq!(
        (dry["rejected"].clone(), dry["would_refuse"].clone()),
        (0.into(), 23.into())
    );
    assert!(api.get("would_refuse").is_none_or(|w| w == 0));
}

/// `rlsim import`'s output, pasted into a scenario, decides as `import = ...` does.
#[test]
fn the_printed_contender_decides_as_the_direct_import() {
    let conf = repo().join("scenarios/configs/nginx/two_zones.conf");
    let out = rlsim().arg("import").arg(&conf).output().expect("runs");
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout).expect("utf-8");
    for line in [
        "routes = [\"/api/*\", \"/*\"]",
        "skip = [\"/login*\", \"/health\"]",
        "profile = { burst = 5, nodelay = true, rate = \"10r/s\" }",
        "has_api_key = true",
        "refuse_status = 429",
        "# note: location `= /health` is answered by `return`",
    ] {
        assert!(toml.contains(line), "{line} missing in:\n{toml}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario =
        std::fs::read_to_string(repo().join("scenarios/nginx_import.toml")).expect("scenario");
    let head = scenario.split("[[contender]]").next().expect("head");
    let traffic = &scenario[scenario.find("[[traffic]]").expect("traffic")..];
    let head = head.replace(
        "    \"dry-run rejected == 0\",\n    \"dry-run would_refuse == 23\",\n",
        "",
    );
    let pasted = write(
        dir.path(),
        "pasted.toml",
        &format!("{head}\n{toml}\n{traffic}"),
    );
    let s = summary(&pasted);
    let api = row(&s, "api.example.com");
    assert_eq!(
        (api["rejected"].clone(), api["unlimited"].clone()),
        (23.into(), 10.into())
    );
}

fn import_error(dir: &Path, conf: &str) -> String {
    let path = write(dir, "bad.conf", conf);
    let out = rlsim().arg("import").arg(&path).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8(out.stderr).expect("utf-8")
}

#[test]
fn a_config_that_cannot_be_imported_exits_2_naming_file_line_and_directive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = import_error(
        dir.path(),
        "http {\n  server {\n    location / {\n      limit_req zone=nope;\n    }\n  }\n}\n",
    );
    assert!(
        err.contains("bad.conf:4: directive `limit_req`: unknown limit_req_zone \"nope\""),
        "{err}"
    );
    let err = import_error(
        dir.path(),
        "http {\n  limit_req_zone $binary_remote_addr zone=a:1m rate=ten;\n}\n",
    );
    assert!(
        err.contains("bad.conf:2: directive `limit_req_zone`: rate `ten`: must be a whole number of requests per second or minute (`10r/s`, `30r/m`) from 1 to 4294967295"),
        "{err}"
    );
    let err = import_error(dir.path(), "http {\n  server {\n");
    assert!(err.contains("bad.conf:"), "{err}");
}

/// delay.conf: `rate=2r/s burst=4` without nodelay; 10 requests at once: the first passes, the
/// next 4 wait (excess − 0)·1000/rate ms = 500, 1000, 1500 and 2000 ms, the other 5 are refused.
#[test]
fn a_delaying_zone_delays_by_the_excess_and_refuses_past_the_burst() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = repo().join("scenarios/configs/nginx/delay.conf");
    let scenario = format!(
        "name = \"delay\"\nduration = \"1s\"\n[policy]\nlimit = 2\nwindow = \"1s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"www\"\nimport = \"{}\"\nlocation = \"/\"\n\
         [[traffic]]\nname = \"c\"\nkind = \"bursts\"\ncount = 10\nevery = \"10s\"\nip = \"198.51.100.1\"\nendpoint = \"/\"\n",
        conf.display()
    );
    let path = write(dir.path(), "delay.toml", &scenario);
    let s = summary(&path);
    let www = row(&s, "www");
    assert_eq!(www["allowed"], 1);
    assert_eq!(www["delayed"], 4);
    assert_eq!(www["rejected"], 5);
    assert_eq!(www["roles"]["legit_delay_max_ns"], 2_000_000_000u64);
}

/// map_exempt.conf: the geo's 192.0.2.10 maps to an empty key, never limited; another address
/// gets 1 + burst 10 of 20 sent at once.
#[test]
fn a_map_exemption_is_never_limited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = repo().join("scenarios/configs/nginx/map_exempt.conf");
    let scenario = format!(
        "name = \"exempt\"\nduration = \"1s\"\n[policy]\nlimit = 5\nwindow = \"1s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"www\"\nimport = \"{}\"\n\
         [[traffic]]\nname = \"monitor\"\nkind = \"bursts\"\ncount = 20\nevery = \"10s\"\nip = \"192.0.2.10\"\n\
         [[traffic]]\nname = \"other\"\nkind = \"bursts\"\ncount = 20\nevery = \"10s\"\nip = \"198.51.100.1\"\n",
        conf.display()
    );
    let path = write(dir.path(), "exempt.toml", &scenario);
    let s = summary(&path);
    let www = row(&s, "www");
    assert_eq!(www["bypassed"], 20);
    assert_eq!(www["rejected"], 9);
}

/// A zone keyed on `$server_name` is one state for every client of the server: two clients
/// sending 5 at once against `rate=1r/s burst=2 nodelay` get 1 + 2 admitted between them (keyed
/// per address, each would get 3).
#[test]
fn a_server_wide_zone_is_one_key_for_every_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = write(
        dir.path(),
        "global.conf",
        "http {\n  limit_req_zone $server_name zone=all:1m rate=1r/s;\n  server {\n    server_name api;\n    location / {\n      limit_req zone=all burst=2 nodelay;\n    }\n  }\n}\n",
    );
    let out = rlsim().arg("import").arg(&conf).output().expect("runs");
    assert!(out.status.success(), "{out:?}");
    let toml = String::from_utf8(out.stdout).expect("utf-8");
    assert!(toml.contains("key = []"), "{toml}");
    assert!(
        toml.contains("one state that all its clients share"),
        "{toml}"
    );
    let scenario = format!(
        "name = \"global\"\nduration = \"1s\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"api\"\nimport = \"{}\"\n\
         [[traffic]]\nname = \"a\"\nkind = \"bursts\"\ncount = 5\nevery = \"10s\"\nip = \"198.51.100.1\"\n\
         [[traffic]]\nname = \"b\"\nkind = \"bursts\"\ncount = 5\nevery = \"10s\"\nip = \"198.51.100.2\"\n",
        conf.display()
    );
    let s = summary(&write(dir.path(), "global.toml", &scenario));
    let api = row(&s, "api");
    assert_eq!(api["allowed"], 3);
    assert_eq!(api["rejected"], 7);
}
