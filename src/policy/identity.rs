//! Client identity behind proxies: what the origin server sees of a request, and the functions
//! a policy can derive a client's identity from (`[policy] key = { identity = "..." }`).
//!
//! A server never sees "the client's address". It sees the socket peer (the CDN or proxy when
//! there is one) and headers: `X-Forwarded-For` (each proxy appends the address it received the
//! request from), `X-Real-IP`, `CF-Connecting-IP`, any of which the client can also forge. Each
//! identity function here is one way real code reads those, right or wrong, so a scenario can
//! show what a forger gets out of each.
//!
//! Everything is `Copy` addresses and borrowed slices: evaluating an identity allocates nothing.

use crate::suggest;
use ipnet::IpNet;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use strum::VariantArray;

/// What the origin sees of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// The client's true address (what `key = "ip"` keys on: an oracle no server has).
    pub client: IpAddr,
    /// The socket peer: the last proxy or CDN edge, or the client itself when direct.
    pub peer: IpAddr,
    /// `X-Forwarded-For`, leftmost (claimed original client) first.
    pub xff: &'a [IpAddr],
    /// `X-Real-IP`, `None` when the request has none.
    pub real_ip: Option<IpAddr>,
    /// `CF-Connecting-IP`, `None` when the request has none.
    pub cf_connecting_ip: Option<IpAddr>,
    /// The signed-in user, `None` for an anonymous request.
    pub user: Option<&'a str>,
}

impl<'a> Seen<'a> {
    /// A request straight from `client`, no headers (what a replayed record tells).
    pub fn direct(client: IpAddr, user: Option<&'a str>) -> Seen<'a> {
        Seen {
            client,
            peer: client,
            xff: &[],
            real_ip: None,
            cf_connecting_ip: None,
            user,
        }
    }

    /// The hop addresses from the server outwards: the peer, then `X-Forwarded-For` right to
    /// left (the order in which each entry was appended, newest first).
    fn hops(&self) -> impl Iterator<Item = IpAddr> + '_ {
        std::iter::once(self.peer).chain(self.xff.iter().rev().copied())
    }
}

/// A header an identity can take the client address from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum Header {
    /// `CF-Connecting-IP`, set by Cloudflare's edge (`cdn_header`'s default).
    CfConnectingIp,
    /// `X-Real-IP`, set by a proxy such as nginx.
    XRealIp,
}

impl Header {
    /// The header's name in lowercase, as `header = "..."` writes it (`cf-connecting-ip`).
    pub fn name(self) -> &'static str {
        match self {
            Header::CfConnectingIp => "cf-connecting-ip",
            Header::XRealIp => "x-real-ip",
        }
    }

    /// The header named `s`, in any case; an error message naming the known headers (or the
    /// closest) when `s` is none of them.
    pub fn parse(s: &str) -> Result<Header, String> {
        let lower = s.to_ascii_lowercase();
        Header::VARIANTS
            .iter()
            .copied()
            .find(|h| h.name() == lower)
            .ok_or_else(|| suggest::unknown("header", s, Header::VARIANTS.iter().map(|v| v.name())))
    }

    fn get(self, seen: &Seen) -> Option<IpAddr> {
        match self {
            Header::CfConnectingIp => seen.cf_connecting_ip,
            Header::XRealIp => seen.real_ip,
        }
    }
}

/// Cloudflare's published IPv4 ranges (<https://www.cloudflare.com/ips-v4>): the default
/// `trusted` list of `cdn_header` and the default edge range of `via = "cdn"`.
pub const CLOUDFLARE_V4: [&str; 15] = [
    "173.245.48.0/20",
    "103.21.244.0/22",
    "103.22.200.0/22",
    "103.31.4.0/22",
    "141.101.64.0/18",
    "108.162.192.0/18",
    "190.93.240.0/20",
    "188.114.96.0/20",
    "197.234.240.0/22",
    "198.41.128.0/17",
    "162.158.0.0/15",
    "104.16.0.0/13",
    "104.24.0.0/14",
    "172.64.0.0/13",
    "131.0.72.0/22",
];

/// The registry of identity functions: names, fields and docs in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum IdentityKind {
    /// The true client address (the short form `key = "ip"`, which no real server can compute).
    Ip,
    /// The socket peer: the CDN or proxy when there is one.
    Peer,
    /// The first `X-Forwarded-For` entry, else the peer: trusts whatever the client wrote.
    FirstXff,
    /// The NestJS article's `getTracker`: `CF-Connecting-IP`, else `X-Real-IP`, else the first
    /// `X-Forwarded-For` entry, else the peer, all trusted from anyone.
    Headers,
    /// `X-Forwarded-For` read from the right past `trusted_hops` proxies, or past the proxies in
    /// the `trusted` CIDRs.
    Xff,
    /// A CDN header (`header`), believed only when the peer is in the CDN's `trusted` ranges.
    CdnHeader,
    /// `user:<id>` for a signed-in request, else the `fallback` identity.
    UserElse,
}

impl IdentityKind {
    /// The name `identity = "..."` gives (`first_xff`).
    pub fn name(self) -> &'static str {
        match self {
            IdentityKind::Ip => "ip",
            IdentityKind::Peer => "peer",
            IdentityKind::FirstXff => "first_xff",
            IdentityKind::Headers => "headers",
            IdentityKind::Xff => "xff",
            IdentityKind::CdnHeader => "cdn_header",
            IdentityKind::UserElse => "user_else",
        }
    }

    /// The fields `key = { identity = "...", ... }` accepts besides `identity`.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            IdentityKind::Ip
            | IdentityKind::Peer
            | IdentityKind::FirstXff
            | IdentityKind::Headers => &["ipv6_prefix"],
            IdentityKind::Xff => &["trusted_hops", "trusted", "recursive", "ipv6_prefix"],
            IdentityKind::CdnHeader => &["header", "trusted", "ipv6_prefix"],
            IdentityKind::UserElse => &["fallback"],
        }
    }

    /// The kind named `s` (exact, lowercase); an error message naming the known kinds (or the
    /// closest) when `s` is none of them.
    pub fn parse(s: &str) -> Result<IdentityKind, String> {
        IdentityKind::VARIANTS
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                suggest::unknown(
                    "identity",
                    s,
                    IdentityKind::VARIANTS.iter().map(|k| k.name()),
                )
            })
    }
}

/// How an identity function picks an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The true client address ([`IdentityKind::Ip`]).
    Ip,
    /// The socket peer ([`IdentityKind::Peer`]).
    Peer,
    /// The first `X-Forwarded-For` entry, else the peer ([`IdentityKind::FirstXff`]).
    FirstXff,
    /// `CF-Connecting-IP`, else `X-Real-IP`, else the first `X-Forwarded-For` entry, else the
    /// peer ([`IdentityKind::Headers`]).
    Headers,
    /// Skip this many proxies from the right (1: the address the last proxy saw).
    XffHops(u32),
    /// Skip every hop inside these networks.
    XffTrusted(Vec<IpNet>),
    /// The rightmost `X-Forwarded-For` entry when the peer is in these networks, else the peer:
    /// one hop only (nginx `real_ip_recursive off`, its default).
    XffLast(Vec<IpNet>),
    /// `header` when the peer is in `trusted` and the request has it, else the peer.
    CdnHeader {
        /// The header the address is read from.
        header: Header,
        /// The CDN's ranges: only a peer in them is believed.
        trusted: Vec<IpNet>,
    },
    /// `user:<id>` for a signed-in request, else what the boxed fallback function gives.
    UserElse(Box<IdentityFn>),
}

/// One identity function with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdentityFn {
    /// How the address (or user) is picked.
    pub rule: Rule,
    /// IPv6 addresses are cut to this prefix length (128: kept whole). IPv4 is never cut.
    pub ipv6_prefix: u8,
}

/// Default prefix IPv6 addresses are aggregated to: one /64 is one subscriber's LAN.
pub const DEFAULT_IPV6_PREFIX: u8 = 64;

/// The identity a request maps to; its `Display` is the key text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who<'a> {
    /// An address cut to a prefix length (the length is only written for a cut IPv6 address).
    Addr(IpAddr, u8),
    /// A signed-in user's id, written `user:<id>`.
    User(&'a str),
}

impl fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Who::Addr(IpAddr::V6(a), prefix) if prefix < 128 => {
                let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
                write!(f, "{}/{prefix}", Ipv6Addr::from(u128::from(a) & mask))
            }
            Who::Addr(a, _) => write!(f, "{a}"),
            Who::User(u) => write!(f, "user:{u}"),
        }
    }
}

impl IdentityFn {
    /// `rule` with IPv6 addresses cut to [`DEFAULT_IPV6_PREFIX`].
    pub fn new(rule: Rule) -> IdentityFn {
        IdentityFn {
            rule,
            ipv6_prefix: DEFAULT_IPV6_PREFIX,
        }
    }

    /// The identity of a request seen as `seen`.
    pub fn apply<'a>(&self, seen: &Seen<'a>) -> Who<'a> {
        let addr = match &self.rule {
            Rule::Ip => seen.client,
            Rule::Peer => seen.peer,
            Rule::FirstXff => seen.xff.first().copied().unwrap_or(seen.peer),
            Rule::Headers => seen
                .cf_connecting_ip
                .or(seen.real_ip)
                .or(seen.xff.first().copied())
                .unwrap_or(seen.peer),
            Rule::XffHops(n) => {
                // Like Express's `trust proxy = n`: past n trusted hops, or the farthest hop.
                let mut last = seen.peer;
                for (i, hop) in seen.hops().enumerate() {
                    last = hop;
                    if i == *n as usize {
                        break;
                    }
                }
                last
            }
            Rule::XffTrusted(nets) => {
                let mut last = seen.peer;
                for hop in seen.hops() {
                    last = hop;
                    if !nets.iter().any(|n| n.contains(&hop)) {
                        break;
                    }
                }
                last
            }
            Rule::XffLast(nets) => match seen.xff.last() {
                Some(&last) if nets.iter().any(|n| n.contains(&seen.peer)) => last,
                _ => seen.peer,
            },
            Rule::CdnHeader { header, trusted } => {
                if trusted.iter().any(|n| n.contains(&seen.peer)) {
                    header.get(seen).unwrap_or(seen.peer)
                } else {
                    seen.peer
                }
            }
            Rule::UserElse(fallback) => {
                return match seen.user {
                    Some(user) => Who::User(user),
                    None => fallback.apply(seen),
                };
            }
        };
        Who::Addr(addr, self.ipv6_prefix)
    }

    /// The kind of this function.
    pub fn kind(&self) -> IdentityKind {
        match self.rule {
            Rule::Ip => IdentityKind::Ip,
            Rule::Peer => IdentityKind::Peer,
            Rule::FirstXff => IdentityKind::FirstXff,
            Rule::Headers => IdentityKind::Headers,
            Rule::XffHops(_) | Rule::XffTrusted(_) | Rule::XffLast(_) => IdentityKind::Xff,
            Rule::CdnHeader { .. } => IdentityKind::CdnHeader,
            Rule::UserElse(_) => IdentityKind::UserElse,
        }
    }
}

/// The function in the scenario's own terms, as reports name it
/// (`xff(trusted_hops=1)`, `user_else(cdn_header(cf-connecting-ip))`).
impl fmt::Display for IdentityFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.kind().name();
        match &self.rule {
            Rule::XffHops(n) => write!(f, "{name}(trusted_hops={n}")?,
            Rule::XffTrusted(nets) => write!(f, "{name}(trusted={}", Nets(nets))?,
            Rule::XffLast(nets) => write!(f, "{name}(trusted={}, recursive=false", Nets(nets))?,
            Rule::CdnHeader { header, trusted } => {
                write!(f, "{name}({}, trusted={}", header.name(), Nets(trusted))?
            }
            Rule::UserElse(fallback) => return write!(f, "{name}({fallback})"),
            Rule::Ip | Rule::Peer | Rule::FirstXff | Rule::Headers => {
                f.write_str(name)?;
                if self.ipv6_prefix != DEFAULT_IPV6_PREFIX {
                    write!(f, "(ipv6_prefix={})", self.ipv6_prefix)?;
                }
                return Ok(());
            }
        }
        if self.ipv6_prefix != DEFAULT_IPV6_PREFIX {
            write!(f, ", ipv6_prefix={}", self.ipv6_prefix)?;
        }
        f.write_str(")")
    }
}

/// A trusted list in words: the networks themselves when few, else how many.
struct Nets<'a>(&'a [IpNet]);

impl fmt::Display for Nets<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() > 2 {
            return write!(f, "{} networks", self.0.len());
        }
        for (i, n) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{n}")?;
        }
        Ok(())
    }
}

/// In `summary.json`: the function's name and parameters, as the scenario writes them.
impl serde::Serialize for IdentityFn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let nets = |n: &[IpNet]| n.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("identity", self.kind().name())?;
        match &self.rule {
            Rule::XffHops(n) => m.serialize_entry("trusted_hops", n)?,
            Rule::XffTrusted(t) => m.serialize_entry("trusted", &nets(t))?,
            Rule::XffLast(t) => {
                m.serialize_entry("trusted", &nets(t))?;
                m.serialize_entry("recursive", &false)?;
            }
            Rule::CdnHeader { header, trusted } => {
                m.serialize_entry("header", header.name())?;
                m.serialize_entry("trusted", &nets(trusted))?;
            }
            Rule::UserElse(fallback) => m.serialize_entry("fallback", fallback)?,
            Rule::Ip | Rule::Peer | Rule::FirstXff | Rule::Headers => {}
        }
        if !matches!(self.rule, Rule::UserElse(_)) {
            m.serialize_entry("ipv6_prefix", &self.ipv6_prefix)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests;
