//! Each identity function on hand-built requests, with the answer worked out by hand.

use super::*;
use strum::VariantArray;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn nets(list: &[&str]) -> Vec<IpNet> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

fn key(f: &IdentityFn, seen: &Seen) -> String {
    f.apply(seen).to_string()
}

/// Client 198.51.100.7 forges `X-Forwarded-For: 6.6.6.6`, goes through a CDN edge
/// (173.245.48.1) and the origin's proxy (192.0.2.1). The CDN appends the client and sets
/// CF-Connecting-IP; the proxy appends the edge and sets X-Real-IP to it.
fn through_cdn_and_proxy(xff: &[IpAddr]) -> Seen<'_> {
    Seen {
        client: ip("198.51.100.7"),
        peer: ip("192.0.2.1"),
        xff,
        real_ip: Some(ip("173.245.48.1")),
        cf_connecting_ip: Some(ip("198.51.100.7")),
        user: None,
    }
}

const CHAIN: [&str; 3] = ["6.6.6.6", "198.51.100.7", "173.245.48.1"];

#[test]
fn socket_peer_and_true_address() {
    let xff: Vec<IpAddr> = CHAIN.iter().map(|s| ip(s)).collect();
    let seen = through_cdn_and_proxy(&xff);
    assert_eq!(key(&IdentityFn::new(Rule::Peer), &seen), "192.0.2.1");
    assert_eq!(key(&IdentityFn::new(Rule::Ip), &seen), "198.51.100.7");
}

#[test]
fn blind_first_xff_believes_the_forger() {
    let xff: Vec<IpAddr> = CHAIN.iter().map(|s| ip(s)).collect();
    let seen = through_cdn_and_proxy(&xff);
    assert_eq!(key(&IdentityFn::new(Rule::FirstXff), &seen), "6.6.6.6");
    // Without the header, the peer.
    assert_eq!(
        key(
            &IdentityFn::new(Rule::FirstXff),
            &Seen::direct(ip("203.0.113.9"), None)
        ),
        "203.0.113.9"
    );
}

#[test]
fn forged_chain_through_trusted_hops() {
    let xff: Vec<IpAddr> = CHAIN.iter().map(|s| ip(s)).collect();
    let seen = through_cdn_and_proxy(&xff);
    // From the server out: peer 192.0.2.1, then 173.245.48.1, 198.51.100.7, 6.6.6.6.
    let hops = |n| key(&IdentityFn::new(Rule::XffHops(n)), &seen);
    assert_eq!(hops(0), "192.0.2.1");
    assert_eq!(hops(1), "173.245.48.1", "one hop too few: the CDN edge");
    assert_eq!(
        hops(2),
        "198.51.100.7",
        "exactly the two proxies: the client"
    );
    assert_eq!(hops(3), "6.6.6.6", "one too many: the forged entry");
    assert_eq!(hops(9), "6.6.6.6", "past the chain: the farthest entry");
}

#[test]
fn trusted_proxy_cidrs_stop_at_the_first_untrusted_hop() {
    let xff: Vec<IpAddr> = CHAIN.iter().map(|s| ip(s)).collect();
    let seen = through_cdn_and_proxy(&xff);
    let both = IdentityFn::new(Rule::XffTrusted(nets(&["192.0.2.0/24", "173.245.48.0/20"])));
    assert_eq!(key(&both, &seen), "198.51.100.7");
    let proxy_only = IdentityFn::new(Rule::XffTrusted(nets(&["192.0.2.0/24"])));
    assert_eq!(key(&proxy_only, &seen), "173.245.48.1");
    // A direct forger: its peer is not trusted, so its header is never read.
    let forged = [ip("6.6.6.6")];
    let direct = Seen {
        xff: &forged,
        ..Seen::direct(ip("203.0.113.9"), None)
    };
    assert_eq!(key(&both, &direct), "203.0.113.9");
    // Every hop trusted: the farthest.
    let all = IdentityFn::new(Rule::XffTrusted(nets(&["0.0.0.0/0"])));
    assert_eq!(key(&all, &seen), "6.6.6.6");
}

#[test]
fn cdn_header_only_from_the_cdn_ranges() {
    let f = IdentityFn::new(Rule::CdnHeader {
        header: Header::CfConnectingIp,
        trusted: nets(&["173.245.48.0/20"]),
    });
    // Through the CDN (the edge is the peer): the header.
    let via_cdn = Seen {
        peer: ip("173.245.48.1"),
        cf_connecting_ip: Some(ip("198.51.100.7")),
        ..Seen::direct(ip("198.51.100.7"), None)
    };
    assert_eq!(key(&f, &via_cdn), "198.51.100.7");
    // A forger outside the range sending CF-Connecting-IP itself: its own address.
    let bypass = Seen {
        cf_connecting_ip: Some(ip("6.6.6.6")),
        ..Seen::direct(ip("203.0.113.9"), None)
    };
    assert_eq!(key(&f, &bypass), "203.0.113.9");
    // The NestJS article's guard believes it.
    assert_eq!(key(&IdentityFn::new(Rule::Headers), &bypass), "6.6.6.6");
    // A trusted peer without the header: the peer.
    let bare = Seen::direct(ip("173.245.48.9"), None);
    assert_eq!(key(&f, &bare), "173.245.48.9");
}

#[test]
fn seed_guard_order_is_cf_then_real_ip_then_first_xff_then_peer() {
    let xff = [ip("6.6.6.6")];
    let mut seen = Seen {
        xff: &xff,
        real_ip: Some(ip("7.7.7.7")),
        cf_connecting_ip: Some(ip("8.8.8.8")),
        ..Seen::direct(ip("203.0.113.9"), None)
    };
    let f = IdentityFn::new(Rule::Headers);
    assert_eq!(key(&f, &seen), "8.8.8.8");
    seen.cf_connecting_ip = None;
    assert_eq!(key(&f, &seen), "7.7.7.7");
    seen.real_ip = None;
    assert_eq!(key(&f, &seen), "6.6.6.6");
    seen.xff = &[];
    assert_eq!(key(&f, &seen), "203.0.113.9");
}

#[test]
fn user_else_fallback() {
    let f = IdentityFn::new(Rule::UserElse(Box::new(IdentityFn::new(Rule::XffHops(1)))));
    let xff = [ip("198.51.100.7")];
    let anonymous = Seen {
        peer: ip("173.245.48.1"),
        xff: &xff,
        ..Seen::direct(ip("198.51.100.7"), None)
    };
    assert_eq!(key(&f, &anonymous), "198.51.100.7");
    let signed_in = Seen {
        user: Some("alice"),
        ..anonymous
    };
    assert_eq!(key(&f, &signed_in), "user:alice");
    assert_eq!(f.to_string(), "user_else(xff(trusted_hops=1))");
}

#[test]
fn ipv6_aggregates_to_a_prefix() {
    let a = Seen::direct(ip("2001:db8:1:2:aaaa::1"), None);
    let b = Seen::direct(ip("2001:db8:1:2:bbbb:cccc:dddd:2"), None);
    let c = Seen::direct(ip("2001:db8:1:3::1"), None);
    let f64_ = IdentityFn::new(Rule::Peer);
    assert_eq!(key(&f64_, &a), "2001:db8:1:2::/64");
    assert_eq!(key(&f64_, &b), "2001:db8:1:2::/64", "same /64, same key");
    assert_eq!(key(&f64_, &c), "2001:db8:1:3::/64");
    let f48 = IdentityFn {
        ipv6_prefix: 48,
        ..IdentityFn::new(Rule::Peer)
    };
    assert_eq!(key(&f48, &c), "2001:db8:1::/48");
    let whole = IdentityFn {
        ipv6_prefix: 128,
        ..IdentityFn::new(Rule::Peer)
    };
    assert_eq!(key(&whole, &a), "2001:db8:1:2:aaaa::1");
    // IPv4 is never cut.
    assert_eq!(key(&f48, &Seen::direct(ip("10.1.2.3"), None)), "10.1.2.3");
    assert_eq!(f48.to_string(), "peer(ipv6_prefix=48)");
}

#[test]
fn names_parse_with_hints() {
    for &kind in IdentityKind::VARIANTS {
        assert_eq!(IdentityKind::parse(kind.name()), Ok(kind));
    }
    assert_eq!(
        IdentityKind::parse("cdn_headr"),
        Err("unknown identity `cdn_headr`: did you mean `cdn_header`?".into())
    );
    assert_eq!(
        Header::parse("CF-Connecting-IP"),
        Ok(Header::CfConnectingIp)
    );
}
