//! The network path of a synthetic client (`via = "cdn" | "proxy" | "direct"`) and the headers
//! it forges: from them, what the origin sees of each of its requests ([`Wire`]).
//!
//! A client's wire is built once, when the client is created. The two forging attack kinds
//! change one forged address per request, in place, drawn from the source's own
//! `Stream::Forgery` stream (`rng.rs`): nothing is allocated per request.

use super::{ClientId, Identity, KeySpace, Source};
use crate::error::Result;
use crate::policy::KeySpec;
use crate::policy::identity::Seen;
use crate::traffic::Arrival;
use ipnet::IpNet;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use std::net::{IpAddr, Ipv4Addr};

/// One hop between the client and the origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum Hop {
    /// A CDN edge: appends its peer to `X-Forwarded-For` and sets `CF-Connecting-IP` to it.
    Cdn,
    /// A reverse proxy (nginx's usual setup): appends its peer to `X-Forwarded-For` and sets
    /// `X-Real-IP` to it.
    Proxy,
}

impl Hop {
    /// The name `via = "..."` gives: `cdn` or `proxy`.
    pub fn name(self) -> &'static str {
        match self {
            Hop::Cdn => "cdn",
            Hop::Proxy => "proxy",
        }
    }
}

/// Default edge addresses of `via = "cdn"`: Cloudflare's first published range.
pub const DEFAULT_CDN_RANGE: &str = "173.245.48.0/20";
/// Default addresses of `via = "proxy"`: the documentation range TEST-NET-1.
pub const DEFAULT_PROXY_RANGE: &str = "192.0.2.0/24";
/// Edges (or proxies) a source's clients are spread over: client `j` goes through the
/// `(j mod 64)`-th host of the range.
const EDGES: u32 = 64;

/// Which forged address changes on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rotation {
    /// Every forged address stays the same from request to request.
    None,
    /// A fresh first `X-Forwarded-For` entry (`kind = "xff_rotator"`).
    Xff,
    /// A fresh `CF-Connecting-IP` (`kind = "cdn_bypass"`; a CDN on the path overwrites it).
    Cf,
}

/// A source's path to the origin and what its clients forge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// From the client to the origin; empty: direct.
    pub hops: Vec<Hop>,
    /// The CDN's edge addresses: client `j` reaches the origin through host `j mod 64`.
    pub cdn_range: IpNet,
    /// The reverse proxies' addresses, assigned to clients as the CDN's edges are.
    pub proxy_range: IpNet,
    /// Forged `X-Forwarded-For` entries, leftmost first.
    pub forge_xff: Vec<IpAddr>,
    /// A forged `X-Real-IP` (a proxy on the path overwrites it).
    pub forge_real_ip: Option<IpAddr>,
    /// A forged `CF-Connecting-IP` (a CDN on the path overwrites it).
    pub forge_cf: Option<IpAddr>,
    /// Which forged address changes on every request.
    pub rotation: Rotation,
    /// Clients are signed in (their user is known to the server).
    pub signed_in: bool,
}

impl Network {
    /// Whether the server sees the client's own connection and nothing forged: then what it
    /// sees follows from the address alone and no [`Wire`] is kept.
    pub fn is_plain(&self) -> bool {
        self.hops.is_empty()
            && self.forge_xff.is_empty()
            && self.forge_real_ip.is_none()
            && self.forge_cf.is_none()
            && self.rotation == Rotation::None
    }
}

impl Default for Network {
    fn default() -> Self {
        Network {
            hops: Vec::new(),
            cdn_range: DEFAULT_CDN_RANGE.parse().expect("valid"),
            proxy_range: DEFAULT_PROXY_RANGE.parse().expect("valid"),
            forge_xff: Vec::new(),
            forge_real_ip: None,
            forge_cf: None,
            rotation: Rotation::None,
            signed_in: false,
        }
    }
}

/// What the origin sees of one client's requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire {
    client: IpAddr,
    peer: IpAddr,
    xff: Vec<IpAddr>,
    real_ip: Option<IpAddr>,
    cf: Option<IpAddr>,
    rotation: Rotation,
}

/// Host `j mod 64` of `net` (its first hosts, so a small range is used whole).
fn edge(net: &IpNet, j: u32) -> IpAddr {
    let k = (j % EDGES) as usize;
    net.hosts()
        .nth(k)
        .or_else(|| net.hosts().next())
        .unwrap_or(net.addr())
}

impl Wire {
    /// The wire of client `j` at address `client` on `net`; a rotated address starts at
    /// `first_forged`.
    pub fn new(client: IpAddr, j: u32, net: &Network, first_forged: IpAddr) -> Wire {
        let rotated = usize::from(net.rotation == Rotation::Xff);
        let mut xff = Vec::with_capacity(rotated + net.forge_xff.len() + net.hops.len());
        if net.rotation == Rotation::Xff {
            xff.push(first_forged);
        }
        xff.extend_from_slice(&net.forge_xff);
        let mut cf = net.forge_cf;
        if net.rotation == Rotation::Cf {
            cf = Some(first_forged);
        }
        let mut real_ip = net.forge_real_ip;
        let mut sender = client;
        for hop in &net.hops {
            xff.push(sender);
            match hop {
                Hop::Cdn => {
                    cf = Some(sender);
                    sender = edge(&net.cdn_range, j);
                }
                Hop::Proxy => {
                    real_ip = Some(sender);
                    sender = edge(&net.proxy_range, j);
                }
            }
        }
        // A CDN overwrites a forged CF-Connecting-IP: nothing left to rotate.
        let rotation = match net.rotation {
            Rotation::Cf if net.hops.contains(&Hop::Cdn) => Rotation::None,
            r => r,
        };
        Wire {
            client,
            peer: sender,
            xff,
            real_ip,
            cf,
            rotation,
        }
    }

    /// A replayed request's path, to be filled by [`Wire::set_forwarded`]: its room is reused
    /// from one record to the next.
    pub fn forwarded() -> Wire {
        let unspecified = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        Wire {
            client: unspecified,
            peer: unspecified,
            xff: Vec::new(),
            real_ip: None,
            cf: None,
            rotation: Rotation::None,
        }
    }

    /// Makes this what the origin saw of a logged request: from `peer` (the record's `ip`,
    /// which stands for the client too), with `header` as its `X-Forwarded-For`. Allocates
    /// only to grow. False when the header has no address: then the request was direct.
    pub fn set_forwarded(&mut self, peer: IpAddr, header: &str) -> bool {
        self.client = peer;
        self.peer = peer;
        parse_forwarded_for(header, &mut self.xff);
        !self.xff.is_empty()
    }

    /// What the origin sees; `user` is the signed-in user, if any.
    pub fn seen<'a>(&'a self, user: Option<&'a str>) -> Seen<'a> {
        Seen {
            client: self.client,
            peer: self.peer,
            xff: &self.xff,
            real_ip: self.real_ip,
            cf_connecting_ip: self.cf,
            user,
        }
    }

    /// Whether one forged address changes on every request.
    pub fn rotates(&self) -> bool {
        self.rotation != Rotation::None
    }

    /// The rotated forged address of the request about to be sent (`None`: nothing rotates).
    pub fn rotated(&self) -> Option<IpAddr> {
        match self.rotation {
            Rotation::Xff => self.xff.first().copied(),
            Rotation::Cf => self.cf,
            Rotation::None => None,
        }
    }

    /// Writes what the origin sees of every request of this client, the rotated address
    /// left out, so two clients with the same identity fields but different paths differ.
    pub fn write_path(&self, out: &mut String) {
        use std::fmt::Write;
        let skip = usize::from(self.rotation == Rotation::Xff);
        let w = &mut *out;
        let _ = write!(w, "@{}", self.peer);
        for a in &self.xff[skip..] {
            let _ = write!(w, ",{a}");
        }
        if let Some(a) = self.real_ip {
            let _ = write!(w, ",r={a}");
        }
        if let (Some(a), false) = (self.cf, self.rotation == Rotation::Cf) {
            let _ = write!(w, ",c={a}");
        }
    }

    /// Replaces the rotated forged address.
    pub fn rotate(&mut self, forged: IpAddr) {
        match self.rotation {
            Rotation::Xff => self.xff[0] = forged,
            Rotation::Cf => self.cf = Some(forged),
            Rotation::None => {}
        }
    }
}

/// The addresses of an `X-Forwarded-For` header, leftmost first, into `out` (cleared first).
/// Entries are comma-separated, blanks around them and empty ones ignored; an entry may carry a
/// port (`203.0.113.7:41234`, `[2001:db8::1]:443`). An entry that is not an address (`unknown`,
/// a hostname) ends what can be read: only the entries to its right are kept, as nginx's realip
/// module stops its walk from the right at the first one it cannot parse.
pub fn parse_forwarded_for(header: &str, out: &mut Vec<IpAddr>) {
    out.clear();
    for entry in header.split(',') {
        let entry = entry.trim_matches([' ', '\t']);
        if entry.is_empty() {
            continue;
        }
        match forwarded_address(entry) {
            Some(addr) => out.push(addr),
            None => out.clear(),
        }
    }
}

/// One `X-Forwarded-For` entry's address: bare, bracketed, or with a port.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    if let Ok(addr) = entry.parse::<IpAddr>() {
        return Some(addr);
    }
    if let Ok(sock) = entry.parse::<std::net::SocketAddr>() {
        return Some(sock.ip());
    }
    let inner = entry.strip_prefix('[')?.strip_suffix(']')?;
    inner.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6)
}

/// A random forged IPv4 address.
pub fn forged_address(rng: &mut ChaCha8Rng) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(rng.random::<u32>()))
}

/// Re-keys every request of an inner source after changing its client's forged address.
/// Clients are told apart by their [`ClientId`] (a forger's clients have distinct users).
pub struct Forger {
    inner: Box<dyn Source>,
    key_spec: KeySpec,
    index: FxHashMap<ClientId, u32>,
    identities: Vec<Identity>,
    rng: ChaCha8Rng,
}

impl Forger {
    /// `identities[j]` is client `j`'s, with its id `ids[j]`.
    pub fn new(
        inner: Box<dyn Source>,
        key_spec: KeySpec,
        ids: &[ClientId],
        identities: Vec<Identity>,
        rng: ChaCha8Rng,
    ) -> Forger {
        let mut index = FxHashMap::default();
        for (j, id) in ids.iter().enumerate() {
            index.entry(*id).or_insert(j as u32);
        }
        Forger {
            inner,
            key_spec,
            index,
            identities,
            rng,
        }
    }
}

impl Source for Forger {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        let Some(mut a) = self.inner.next_arrival(keys)? else {
            return Ok(None);
        };
        let identity = &mut self.identities[self.index[&a.client] as usize];
        a.key = keys.intern_identity(&self.key_spec, identity);
        let forged = forged_address(&mut self.rng);
        if let Some(wire) = &mut identity.wire {
            // Rotated addresses are drawn by `forged_address`: always IPv4.
            if let Some(IpAddr::V4(sent)) = wire.rotated() {
                a.forged = u32::from(sent);
            }
            wire.rotate(forged);
        }
        Ok(Some(a))
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn net(hops: &[Hop]) -> Network {
        Network {
            hops: hops.to_vec(),
            forge_xff: vec![ip("6.6.6.6")],
            forge_real_ip: Some(ip("7.7.7.7")),
            forge_cf: Some(ip("8.8.8.8")),
            ..Network::default()
        }
    }

    const CLIENT: &str = "198.51.100.7";
    const UNUSED: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

    #[test]
    fn direct_keeps_every_forged_header() {
        let w = Wire::new(ip(CLIENT), 0, &net(&[]), UNUSED);
        let s = w.seen(None);
        assert_eq!(s.peer, ip(CLIENT));
        assert_eq!(s.xff, &[ip("6.6.6.6")]);
        assert_eq!(s.real_ip, Some(ip("7.7.7.7")));
        assert_eq!(s.cf_connecting_ip, Some(ip("8.8.8.8")));
    }

    #[test]
    fn cdn_then_proxy_append_and_overwrite_as_they_would() {
        // Client 3 goes through edge host 3 of 173.245.48.0/20 and proxy host 3 of 192.0.2.0/24.
        let w = Wire::new(ip(CLIENT), 3, &net(&[Hop::Cdn, Hop::Proxy]), UNUSED);
        let s = w.seen(Some("alice"));
        assert_eq!(s.peer, ip("192.0.2.4"));
        assert_eq!(s.xff, &[ip("6.6.6.6"), ip(CLIENT), ip("173.245.48.4")]);
        assert_eq!(
            s.cf_connecting_ip,
            Some(ip(CLIENT)),
            "the CDN overwrites it"
        );
        assert_eq!(
            s.real_ip,
            Some(ip("173.245.48.4")),
            "the proxy's peer: the edge"
        );
        assert_eq!(s.user, Some("alice"));
        // Clients wrap around the first 64 hosts.
        let w = Wire::new(ip(CLIENT), 67, &net(&[Hop::Cdn]), UNUSED);
        assert_eq!(w.seen(None).peer, ip("173.245.48.4"));
    }

    #[test]
    fn a_logged_forwarded_for_is_read_from_the_right() {
        let mut out = vec![ip("9.9.9.9")];
        let read = |h: &str, out: &mut Vec<IpAddr>| {
            parse_forwarded_for(h, out);
            out.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(read("", &mut out), "");
        assert_eq!(
            read("203.0.113.9, 10.0.0.2 ,,\t10.0.0.1", &mut out),
            "203.0.113.9 10.0.0.2 10.0.0.1"
        );
        assert_eq!(
            read(
                "203.0.113.9:41234, [2001:db8::1]:443, [2001:db8::2], 2001:db8::3",
                &mut out
            ),
            "203.0.113.9 2001:db8::1 2001:db8::2 2001:db8::3"
        );
        // An entry that is not an address: what lies left of it cannot be trusted to parse.
        assert_eq!(read("1.1.1.1, unknown, 10.0.0.1", &mut out), "10.0.0.1");
        assert_eq!(read("10.0.0.1, garbage", &mut out), "");
        let mut w = Wire::forwarded();
        assert!(w.set_forwarded(ip("10.0.0.1"), "198.51.100.7"));
        let s = w.seen(None);
        assert_eq!((s.client, s.peer), (ip("10.0.0.1"), ip("10.0.0.1")));
        assert_eq!(s.xff, &[ip("198.51.100.7")]);
        assert!(!w.rotates());
        assert!(!w.set_forwarded(ip("10.0.0.1"), "-"));
    }

    #[test]
    fn rotation_replaces_one_forged_address_in_place() {
        let rotating = Network {
            rotation: Rotation::Xff,
            ..net(&[Hop::Cdn])
        };
        let mut w = Wire::new(ip(CLIENT), 0, &rotating, ip("1.1.1.1"));
        assert_eq!(
            w.seen(None).xff,
            &[ip("1.1.1.1"), ip("6.6.6.6"), ip(CLIENT)]
        );
        w.rotate(ip("2.2.2.2"));
        assert_eq!(
            w.seen(None).xff,
            &[ip("2.2.2.2"), ip("6.6.6.6"), ip(CLIENT)]
        );
        // Behind a CDN a rotated CF-Connecting-IP is overwritten: nothing rotates.
        let cf = Network {
            rotation: Rotation::Cf,
            ..net(&[Hop::Cdn])
        };
        let mut w = Wire::new(ip(CLIENT), 0, &cf, ip("1.1.1.1"));
        w.rotate(ip("2.2.2.2"));
        assert_eq!(w.seen(None).cf_connecting_ip, Some(ip(CLIENT)));
        let direct = Network {
            rotation: Rotation::Cf,
            ..net(&[])
        };
        let mut w = Wire::new(ip(CLIENT), 0, &direct, ip("1.1.1.1"));
        assert_eq!(w.seen(None).cf_connecting_ip, Some(ip("1.1.1.1")));
        w.rotate(ip("2.2.2.2"));
        assert_eq!(w.seen(None).cf_connecting_ip, Some(ip("2.2.2.2")));
    }
}
