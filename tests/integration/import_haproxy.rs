//! `rlsim import` of haproxy.cfg: the trusted-proxy tracking pattern (`track-sc0
//! req.hdr_ip(x-forwarded-for,-1) if { src NET }` then `track-sc0 src`), `--server` picking a
//! section, and errors naming the line of what cannot be imported. The real HAProxy proves the
//! pattern's key in tests/integration/haproxy.rs.

use crate::util::{imported, rlsim, row, source, summary, write};
use std::path::Path;

const TABLE: &str = "  stick-table type ip size 100k expire 30s store http_req_rate(10s)\n";
const DENY: &str = "  http-request deny deny_status 429 if { sc_http_req_rate(0) gt 5 }\n";
const KEY: &str = "key = { identity = \"xff\", ipv6_prefix = 128, recursive = false, trusted = [\"10.0.0.0/8\"] }";

/// The pattern as users write it: anonymous or named acls, `unless` or no condition on the
/// `src` rule, either order.
fn patterns() -> [(&'static str, String); 5] {
    let xff = "  http-request track-sc0 req.hdr_ip(x-forwarded-for,-1)";
    let src = "  http-request track-sc0 src";
    let acl = "  acl TRUSTED src 10.0.0.0/8\n";
    [
        (
            "blocks",
            format!("{xff} if {{ src 10.0.0.0/8 }}\n{src} unless {{ src 10.0.0.0/8 }}\n"),
        ),
        (
            "named",
            format!("{acl}{xff} if TRUSTED\n{src} unless TRUSTED\n"),
        ),
        (
            "src_for_the_rest",
            format!("{acl}{xff} if TRUSTED\n{src}\n"),
        ),
        (
            "src_first",
            format!("{acl}{src} unless TRUSTED\n{xff} if TRUSTED\n"),
        ),
        (
            "req_hdr",
            format!(
                "{acl}  http-request track-sc0 req.hdr(X-Forwarded-For) if TRUSTED\n{src} if !TRUSTED\n"
            ),
        ),
    ]
}

fn cfg(tracks: &str) -> String {
    format!("frontend web\n  bind :80\n{TABLE}{tracks}{DENY}")
}

#[test]
fn import_haproxy_trusted_proxy_pattern_keys_by_the_last_xff_entry_from_trusted_peers() {
    let dir = tempfile::tempdir().unwrap();
    for (name, tracks) in patterns() {
        let path = write(dir.path(), &format!("{name}.cfg"), &cfg(&tracks));
        let text = imported(&path);
        assert!(text.contains(KEY), "{name}: {KEY} missing from:\n{text}");
        assert!(
            !text.contains("bypass"),
            "{name}: not an exemption:\n{text}"
        );
    }
}

/// Hand-counted, `gt 5` over 10 s, one burst at 0 s: two clients behind the trusted proxy
/// 10.0.0.1, each forging a first X-Forwarded-For entry (6.6.6.6) and sending 8, are keyed by
/// the entry the proxy appended: 5 pass and 3 are refused each (6). Two sources straight from
/// 198.51.100.7, each forging another X-Forwarded-For and sending 8, are keyed by their source
/// address: one key of 16, 5 pass, 11 are refused. Keyed by the peer (or by 6.6.6.6) the
/// proxied clients would share one key (11 refused); keyed by X-Forwarded-For the forgers would
/// have two (6).
#[test]
fn import_haproxy_trusted_proxy_pattern_refuses_the_hand_counted_requests() {
    let dir = tempfile::tempdir().unwrap();
    for (name, tracks) in patterns() {
        let cfg = write(dir.path(), &format!("{name}.cfg"), &cfg(&tracks));
        let forger = |n: u8| {
            format!(
                "[[traffic]]\nname = \"forger{n}\"\nkind = \"bursts\"\ncount = 8\nevery = \"1m\"\n\
                 ip = \"198.51.100.7\"\nforge_xff = [\"203.0.113.{n}\"]\n"
            )
        };
        let scenario = format!(
            "name = \"trusted\"\nduration = \"1s\"\n[policy]\nlimit = 5\nwindow = \"10s\"\nkey = \"ip\"\n\
             [[contender]]\nname = \"web\"\nimport = \"{}\"\n\
             [[traffic]]\nname = \"behind\"\nkind = \"bursts\"\ncount = 8\nevery = \"1m\"\nusers = 2\n\
             via = \"proxy\"\nproxy_range = \"10.0.0.1/32\"\nforge_xff = [\"6.6.6.6\"]\n{}{}",
            cfg.display(),
            forger(1),
            forger(2)
        );
        let s = summary(&write(dir.path(), "s.toml", &scenario));
        let web = row(&s, "web");
        assert_eq!(web["offered"], 32, "{name}");
        assert_eq!(source(web, "behind")["rejected"], 6, "{name}: {web}");
        assert_eq!(web["rejected"], 17, "{name}: {web}");
    }
}

fn refused(dir: &Path, cfg: &str, args: &[&str]) -> String {
    let path = write(dir, "bad.cfg", cfg);
    let out = rlsim()
        .args(["import", "--kind", "haproxy"])
        .arg(&path)
        .args(args)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{cfg}");
    let err = String::from_utf8(out.stderr).expect("utf-8");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// What cannot be imported is named at its own line: the track rule's, not the deny's.
#[test]
fn import_haproxy_errors_name_the_line_of_what_cannot_be_imported() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "  http-request track-sc0 src if { src 10.0.0.0/8 }\n".to_string(),
            "bad.cfg:4: directive `http-request track-sc0`: a positive src term",
        ),
        (
            "  acl TRUSTED src 10.0.0.0/8\n  http-request track-sc0 req.hdr_ip(x-forwarded-for,-1) if TRUSTED\n  http-request track-sc0 src unless { src 192.168.0.0/16 }\n".into(),
            "bad.cfg:6: directive `http-request track-sc0`: ",
        ),
        (
            "  http-request track-sc0 req.cook(sid)\n".into(),
            "bad.cfg:4: directive `http-request track-sc0`: track-sc fetch `req.cook(sid)` is not modelled",
        ),
        (
            "  http-request track-sc0 req.hdr(X-API-Key)\n  http-request track-sc0 src\n".into(),
            "bad.cfg:5: directive `http-request track-sc0`: ",
        ),
    ];
    for (tracks, want) in cases {
        let err = refused(dir.path(), &cfg(&tracks), &[]);
        assert!(err.contains(want), "want `{want}` in:\n{err}");
    }
}

/// `--server NAME` (and a scenario's `server = "NAME"`) picks the frontend or listen of that
/// name; a name no section has is refused listing the sections; `--location` is nginx's.
#[test]
fn import_haproxy_server_picks_a_section() {
    let dir = tempfile::tempdir().unwrap();
    let two = format!(
        "{}\nlisten api\n  bind :81\n{TABLE}  http-request track-sc0 src\n  http-request deny if {{ sc_http_req_rate(0) gt 9 }}\nbackend st\n{TABLE}",
        cfg("  http-request track-sc0 src\n")
    );
    let path = write(dir.path(), "two.cfg", &two);
    let out = rlsim()
        .arg("import")
        .arg(&path)
        .args(["--server", "api"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("\n[[contender]]\n").count(), 1, "{text}");
    assert!(
        text.contains("name = \"api\"") && text.contains("limit = 9"),
        "{text}"
    );

    let err = refused(dir.path(), &two, &["--server", "www"]);
    for want in ["bad.cfg", "`www`", "frontend `web`", "listen `api`"] {
        assert!(err.contains(want), "want {want} in:\n{err}");
    }
    let err = refused(dir.path(), &two, &["--location", "/api/"]);
    assert!(err.contains("nginx") && err.contains("--server"), "{err}");

    let scenario = format!(
        "name = \"pick\"\nduration = \"1s\"\n[policy]\nlimit = 5\nwindow = \"10s\"\nkey = \"ip\"\n\
         [[contender]]\nname = \"prod\"\nimport = \"{}\"\nserver = \"api\"\n\
         [[traffic]]\nname = \"c\"\nkind = \"bursts\"\ncount = 12\nevery = \"1m\"\nip = \"198.51.100.7\"\n",
        path.display()
    );
    let s = summary(&write(dir.path(), "pick.toml", &scenario));
    assert_eq!(row(&s, "prod")["rejected"], 3);
}

/// Traefik's file is one contender: `--server` is refused, as the docs say.
#[test]
fn import_haproxy_server_is_refused_for_kinds_imported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "dynamic.yaml",
        "http:\n  middlewares:\n    rl:\n      rateLimit:\n        average: 10\n",
    );
    let out = rlsim()
        .arg("import")
        .arg(&path)
        .args(["--server", "x"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("imported whole") && err.contains("traefik"),
        "{err}"
    );
}

/// `rlsim --help` and `rlsim import --help` speak for every kind imported, not nginx alone.
#[test]
fn import_haproxy_help_speaks_for_every_kind() {
    let help = |args: &[&str]| {
        let out = rlsim().args(args).output().expect("runs");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let main = help(&["--help"]);
    let line = main
        .lines()
        .find(|l| l.trim_start().starts_with("import"))
        .expect("import listed");
    assert!(!line.contains("(nginx)"), "{line}");
    let import = help(&["import", "--help"]);
    assert!(!import.contains("(nginx)"), "{import}");
    let server = import
        .split("--server <NAME>")
        .nth(1)
        .and_then(|s| s.split("--location").next())
        .expect("--server documented");
    for want in ["server_name", "HAProxy", "frontend", "listen"] {
        assert!(
            server.contains(want),
            "{want} missing from --server's help:{server}"
        );
    }
}

/// `track-sc0 req.hdr_ip(X-Forwarded-For,-1)` then `track-sc0 src`: the last entry, else (no
/// header) the source address: `trusted_hops = 1`, with no note of untracked requests.
#[test]
fn import_haproxy_xff_then_src_keys_by_the_last_entry_else_the_peer() {
    let dir = tempfile::tempdir().unwrap();
    let tracks =
        "  http-request track-sc0 req.hdr_ip(X-Forwarded-For,-1)\n  http-request track-sc0 src\n";
    let text = imported(&write(dir.path(), "h.cfg", &cfg(tracks)));
    let key = "key = { identity = \"xff\", ipv6_prefix = 128, trusted_hops = 1 }";
    assert!(text.contains(key), "{key} missing from:\n{text}");
    assert!(!text.contains("not tracked"), "{text}");
}

/// Notes speak the config's language: the header as the file writes it.
#[test]
fn import_haproxy_notes_name_the_header_as_written() {
    let dir = tempfile::tempdir().unwrap();
    for header in ["X-Forwarded-For", "X-Real-IP"] {
        let tracks = format!("  http-request track-sc0 req.hdr({header})\n");
        let text = imported(&write(dir.path(), "h.cfg", &cfg(&tracks)));
        let want = format!("a request without {header} is not tracked");
        assert!(text.contains(&want), "{want} missing from:\n{text}");
    }
}
