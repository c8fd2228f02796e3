//! Identity functions in contender rule keys: each rule keys every request by what the origin
//! sees of *that* request, so a forger's per-request header reaches exactly the rules that
//! believe it. The figures are the short form's under the same identity (worked out in
//! `tests/integration/identity.rs`): a rule keyed by an identity function decides like the
//! short form keyed by it.

use super::{RunOptions, run_all};
use crate::metrics::{AlgorithmReport, SourceKeys};
use crate::scenario::Scenario;

/// One contender per `(name, key)`, each one sliding-window-log rule of 60 per minute keyed by
/// `key`, over 2 minutes of `sources`. The policy keys by the true address.
fn scenario(keys: &[(&str, &str)], sources: &str) -> String {
    let mut text = format!(
        "name = \"id\"\nduration = \"2m\"\n[policy]\nlimit = 60\nwindow = \"1m\"\nkey = \"ip\"\n{sources}\n"
    );
    for (name, key) in keys {
        text.push_str(&format!(
            "[[contender]]\nname = \"{name}\"\n[[contender.rule]]\nname = \"r\"\n\
             algorithm = \"sliding_window_log\"\nlimit = 60\nwindow = \"1m\"\nkey = {key}\n"
        ));
    }
    text
}

fn run_text(text: &str) -> Vec<AlgorithmReport> {
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    let (report, _) = run_all(&scenario, RunOptions::new()).unwrap();
    report.algorithms
}

fn contender<'a>(reports: &'a [AlgorithmReport], name: &str) -> &'a AlgorithmReport {
    reports.iter().find(|r| r.algorithm == name).unwrap()
}

/// `(offered, admitted)` of source `source`.
fn served(r: &AlgorithmReport, source: &str) -> (u64, u64) {
    let s = r.sources.iter().find(|s| s.name == source).unwrap();
    (s.offered, s.admitted)
}

/// The rule's distinct keys per client of `source`: `(max, mean)`.
fn keys_per_client(r: &AlgorithmReport, source: &str) -> (f64, f64) {
    let list: &[SourceKeys] = r.rules[0].keys_per_client.as_deref().unwrap();
    let k = list.iter().find(|k| k.source == source).unwrap();
    (k.max, k.mean)
}

/// A rotator at 10/s via the CDN: 1200 requests in 2 minutes, a new first X-Forwarded-For
/// entry on each.
const ROTATOR: &str =
    "[[traffic]]\nname = \"rotator\"\nkind = \"xff_rotator\"\nrate = \"10/s\"\nvia = \"cdn\"\n";
/// Straight to the origin at 10/s, a new CF-Connecting-IP on each request.
const BYPASS: &str = "[[traffic]]\nname = \"bypass\"\nkind = \"cdn_bypass\"\nrate = \"10/s\"\n";

/// The blind guard believes every forged entry: one key per request, 1200 admitted. Every
/// function that reads the chain from the trusted side (one hop, the CDN's CIDRs), the CDN's
/// header (which the edge overwrites with the true client), the NestJS article's guard (which reads
/// that header first) or the socket peer (one edge) has one key for it: 60 per rolling minute, 120.
#[test]
fn a_forged_xff_rotator_meets_each_identity_function() {
    let keys = [
        ("blind", "{ identity = \"first_xff\" }"),
        ("hops", "{ identity = \"xff\", trusted_hops = 1 }"),
        (
            "cidrs",
            "{ identity = \"xff\", trusted = [\"173.245.48.0/20\"] }",
        ),
        ("seed_guard", "{ identity = \"headers\" }"),
        ("cdn", "{ identity = \"cdn_header\" }"),
        ("peer", "{ identity = \"peer\" }"),
    ];
    let reports = run_text(&scenario(&keys, ROTATOR));
    let blind = contender(&reports, "blind");
    assert_eq!(served(blind, "rotator"), (1200, 1200));
    assert_eq!(keys_per_client(blind, "rotator"), (1200.0, 1200.0));
    assert_eq!(blind.rules[0].keys_seen, 1200);
    for name in ["hops", "cidrs", "seed_guard", "cdn", "peer"] {
        let r = contender(&reports, name);
        assert_eq!(served(r, "rotator"), (1200, 120), "{name}");
        assert_eq!(keys_per_client(r, "rotator"), (1.0, 1.0), "{name}");
        assert_eq!(r.rules[0].keys_seen, 1, "{name}");
        assert_eq!(r.rules[0].refused, 1080, "{name}");
    }
    // The policy's key (the true address) saw one client whatever the rules believed.
    assert_eq!(blind.keys_seen, 1);
}

/// A CDN bypass has no X-Forwarded-For and a fresh CF-Connecting-IP: the NestJS article's guard
/// believes the header (1200 keys), `cdn_header` does not (its peer is outside the CDN's ranges),
/// and the blind guard falls back to the peer, the forger itself.
#[test]
fn a_cdn_bypass_escapes_the_seed_guard_but_not_the_cdn_ranges() {
    let keys = [
        ("seed_guard", "{ identity = \"headers\" }"),
        ("cdn", "{ identity = \"cdn_header\" }"),
        ("blind", "{ identity = \"first_xff\" }"),
    ];
    let reports = run_text(&scenario(&keys, BYPASS));
    let guard = contender(&reports, "seed_guard");
    assert_eq!(served(guard, "bypass"), (1200, 1200));
    assert_eq!(keys_per_client(guard, "bypass"), (1200.0, 1200.0));
    for name in ["cdn", "blind"] {
        let r = contender(&reports, name);
        assert_eq!(served(r, "bypass"), (1200, 120), "{name}");
        assert_eq!(keys_per_client(r, "bypass"), (1.0, 1.0), "{name}");
    }
}

/// 4 signed-in users behind one address and 4 anonymous ones behind another, 40/min each.
/// `user_else` gives every member its own 60/min (all 320 admitted) and the guests one
/// address key at 160/min against 60 (120 admitted): 5 rule keys. Keyed by the address alone,
/// the members share one key too.
#[test]
fn user_else_keys_signed_in_users_by_user_and_others_by_address() {
    let sources = "[[traffic]]\nname = \"members\"\nkind = \"constant\"\nusers = 4\nip = \"198.51.100.1\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\nsigned_in = true\n\
                   [[traffic]]\nname = \"guests\"\nkind = \"constant\"\nusers = 4\nip = \"198.51.100.2\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\n";
    let keys = [
        (
            "tracker",
            "{ identity = \"user_else\", fallback = { identity = \"cdn_header\" } }",
        ),
        ("address", "{ identity = \"cdn_header\" }"),
    ];
    let reports = run_text(&scenario(&keys, sources));
    let tracker = contender(&reports, "tracker");
    assert_eq!(served(tracker, "members"), (320, 320));
    assert_eq!(served(tracker, "guests"), (320, 120));
    assert_eq!(tracker.rules[0].keys_seen, 5);
    assert_eq!(keys_per_client(tracker, "members"), (1.0, 1.0));
    let address = contender(&reports, "address");
    assert_eq!(served(address, "members"), (320, 120));
    assert_eq!(address.rules[0].keys_seen, 2);
}

/// 8 IPv6 clients of one source share a /64: aggregated they are one key at 240/min (120
/// admitted in two minutes), kept whole 8 keys at 30/min each (all 480 admitted).
#[test]
fn ipv6_clients_of_one_prefix_share_a_rule_key() {
    let sources = "[[traffic]]\nname = \"v6\"\nkind = \"constant\"\nusers = 8\nipv6 = true\nrate = \"30/min\"\n";
    let keys = [
        ("whole", "{ identity = \"peer\", ipv6_prefix = 128 }"),
        ("prefix", "{ identity = \"peer\" }"),
    ];
    let reports = run_text(&scenario(&keys, sources));
    let whole = contender(&reports, "whole");
    assert_eq!((whole.rules[0].keys_seen, served(whole, "v6").1), (8, 480));
    let prefix = contender(&reports, "prefix");
    assert_eq!(
        (prefix.rules[0].keys_seen, served(prefix, "v6").1),
        (1, 120)
    );
}

/// Rules keyed by fields report no keys per client (so other scenarios' contenders keep their
/// summary.json), and key the rotator by its true address.
#[test]
fn rules_keyed_by_fields_report_no_keys_per_client() {
    let reports = run_text(&scenario(&[("by_ip", "\"ip\"")], ROTATOR));
    assert_eq!(reports[0].rules[0].keys_per_client, None);
    assert_eq!(served(&reports[0], "rotator"), (1200, 120));
}

/// One client at 40/min on each of two routes, via the CDN. Keyed by its address alone it is
/// one key at 80/min against 60 (120 of 160 admitted in two minutes); with `fields =
/// ["endpoint"]` (NestJS's budget per handler) one key per route, each under the limit.
#[test]
fn an_identity_with_the_endpoint_keys_per_route() {
    let sources = "[[traffic]]\nname = \"a\"\nkind = \"constant\"\nip = \"198.51.100.1\"\nendpoint = \"/a\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\n\
                   [[traffic]]\nname = \"b\"\nkind = \"constant\"\nip = \"198.51.100.1\"\nendpoint = \"/b\"\n\
                   rate = \"40/min\"\nvia = \"cdn\"\n";
    let keys = [
        ("client", "{ identity = \"cdn_header\" }"),
        (
            "per_route",
            "{ identity = \"cdn_header\", fields = [\"endpoint\"] }",
        ),
    ];
    let reports = run_text(&scenario(&keys, sources));
    let client = contender(&reports, "client");
    assert_eq!((client.offered, client.admitted), (160, 120));
    assert_eq!(client.rules[0].keys_seen, 1);
    let per_route = contender(&reports, "per_route");
    assert_eq!((per_route.offered, per_route.admitted), (160, 160));
    assert_eq!(per_route.rules[0].keys_seen, 2);
    assert_eq!(
        per_route.rules[0].key.describe("+"),
        "cdn_header(cf-connecting-ip, trusted=15 networks)+endpoint"
    );
}
