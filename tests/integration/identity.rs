//! Client identity behind proxies, end to end: forgers against each identity function, and the
//! distinct keys each real client produced.

use crate::util::{by_name, repo, rlsim, run_toml};
use rlsim::metrics::SourceReport;

/// 60/min per key over 2 minutes, one exact algorithm; `sources` appended.
fn scenario(key: &str, sources: &str) -> String {
    format!(
        "name = \"id\"\nduration = \"2m\"\nalgorithms = [\"sliding_window_log\"]\n\
         [policy]\nlimit = 60\nwindow = \"1m\"\nkey = {key}\n{sources}"
    )
}

/// A rotator at 10/s via the CDN: 1200 requests in 2 minutes.
const ROTATOR: &str =
    "[[traffic]]\nname = \"rotator\"\nkind = \"xff_rotator\"\nrate = \"10/s\"\nvia = \"cdn\"\n";
/// A CDN bypass at 10/s, forging CF-Connecting-IP.
const BYPASS: &str = "[[traffic]]\nname = \"bypass\"\nkind = \"cdn_bypass\"\nrate = \"10/s\"\n";

fn source(toml: &str, name: &str) -> SourceReport {
    let reports = run_toml(toml);
    let r = by_name(&reports, "sliding_window_log");
    r.sources.iter().find(|s| s.name == name).unwrap().clone()
}

#[test]
fn xff_rotator_escapes_blind_first_xff_but_not_trusted_hops() {
    let blind = source(
        &scenario("{ identity = \"first_xff\" }", ROTATOR),
        "rotator",
    );
    assert_eq!(blind.offered, 1200);
    assert_eq!(blind.admitted, 1200, "one key per request: never limited");
    assert_eq!(blind.keys_per_client_max, Some(1200.0));
    assert_eq!(blind.keys_per_client_mean, Some(1200.0));

    let hops = source(
        &scenario("{ identity = \"xff\", trusted_hops = 1 }", ROTATOR),
        "rotator",
    );
    assert_eq!(hops.offered, 1200);
    // One key, held to exactly 60 in every rolling minute: 120 in two minutes.
    assert_eq!(hops.admitted, 120);
    assert_eq!(hops.keys_per_client_max, Some(1.0));

    // Trusted CIDRs of the CDN: the same, read by range instead of count.
    let cidrs = source(
        &scenario(
            "{ identity = \"xff\", trusted = [\"173.245.48.0/20\"] }",
            ROTATOR,
        ),
        "rotator",
    );
    assert_eq!(
        (cidrs.admitted, cidrs.keys_per_client_max),
        (120, Some(1.0))
    );
}

#[test]
fn cdn_bypass_escapes_the_seed_guard_but_not_cdn_ranges() {
    let seed_guard = source(&scenario("{ identity = \"headers\" }", BYPASS), "bypass");
    assert_eq!(
        (seed_guard.admitted, seed_guard.keys_per_client_max),
        (1200, Some(1200.0))
    );
    let ranges = source(&scenario("{ identity = \"cdn_header\" }", BYPASS), "bypass");
    assert_eq!(
        (ranges.admitted, ranges.keys_per_client_max),
        (120, Some(1.0))
    );
}

#[test]
fn user_else_keys_signed_in_users_by_user_and_others_by_address() {
    // 4 signed-in users share one NAT address; 4 anonymous users share another. Each sends
    // 40/min (constant). By user, every signed-in user has its own 60/min; the anonymous
    // share one address key at 160/min against 60.
    let sources = "[[traffic]]\nname = \"members\"\nkind = \"constant\"\nusers = 4\nip = \"198.51.100.1\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\nsigned_in = true\n\
                   [[traffic]]\nname = \"guests\"\nkind = \"constant\"\nusers = 4\nip = \"198.51.100.2\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\n";
    let toml = scenario(
        "{ identity = \"user_else\", fallback = { identity = \"cdn_header\" } }",
        sources,
    );
    let reports = run_toml(&toml);
    let r = by_name(&reports, "sliding_window_log");
    let members = &r.sources[0];
    assert_eq!((members.offered, members.admitted), (320, 320));
    let guests = &r.sources[1];
    assert_eq!(guests.offered, 320);
    assert_eq!(
        guests.admitted, 120,
        "one address key: 60 per rolling minute"
    );
    // Keys: 4 users + 1 address.
    assert_eq!(r.keys_seen, 5);
}

#[test]
fn ipv6_clients_of_one_prefix_share_a_key() {
    // 8 IPv6 clients of one source are generated in one /48 (and one /64): keyed whole they
    // are 8 keys, aggregated to /64 one.
    let sources = "[[traffic]]\nname = \"v6\"\nkind = \"constant\"\nusers = 8\nipv6 = true\nrate = \"30/min\"\n";
    let whole = run_toml(&scenario(
        "{ identity = \"peer\", ipv6_prefix = 128 }",
        sources,
    ));
    let r = by_name(&whole, "sliding_window_log");
    assert_eq!((r.keys_seen, r.sources[0].admitted), (8, 480));
    let agg = run_toml(&scenario("{ identity = \"peer\" }", sources));
    let r = by_name(&agg, "sliding_window_log");
    // 240/min on one key against 60: 120 in two minutes.
    assert_eq!((r.keys_seen, r.sources[0].admitted), (1, 120));
}

#[test]
fn short_form_keys_report_no_keys_per_client() {
    let toml = scenario("\"ip\"", BYPASS.replace("cdn_bypass", "constant").as_str());
    let s = source(&toml, "bypass");
    assert_eq!(s.keys_per_client_max, None);
}

#[test]
fn forgers_are_deterministic() {
    let run = |dir: &std::path::Path| {
        rlsim()
            .arg("run")
            .arg(repo().join("scenarios/proxies.toml"))
            .arg("--out")
            .arg(dir)
            .arg("--quiet")
            .assert()
            .success();
        std::fs::read(dir.join("summary.json")).unwrap()
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    assert_eq!(run(a.path()), run(b.path()));
}
