//! A synthetic client's identity: its user, API key, address and endpoint, generated from
//! its source and number, and what the origin sees of its network path.

use super::via::Wire;
use super::{IdGen, SourceSpec};
use crate::policy::KeyField;
use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The identity fields of one client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The client's address (generated `10.<source>.x.y` or IPv6, or the source's fixed value);
    /// left empty when neither the key spec nor a network path needs it.
    pub ip: String,
    /// The client's user (generated `<source name>-<n>`, or fixed); always made, as it names
    /// the client.
    pub user: String,
    /// The client's API key (generated `key-<source name>-<n>`, or fixed); left empty when the
    /// key spec does not need it.
    pub api_key: String,
    /// The endpoint of the client's requests (its source's `endpoint`).
    pub endpoint: String,
    /// The server knows the user (`signed_in = true`).
    pub signed_in: bool,
    /// What the origin sees of the client's requests; `None` for a plain direct connection
    /// (nothing forged) or when `ip` is not an address.
    pub wire: Option<Wire>,
}

impl Identity {
    /// The value of `field` (empty if it was not made: see the fields).
    pub fn get(&self, field: KeyField) -> &str {
        match field {
            KeyField::Ip => &self.ip,
            KeyField::User => &self.user,
            KeyField::ApiKey => &self.api_key,
            KeyField::Endpoint => &self.endpoint,
        }
    }

    /// The real client's name: its user, else its device (API key), else its address (the
    /// client's own, not one it forges); what the intent judges (`metrics::intent`).
    pub fn client(&self) -> &str {
        [&self.user, &self.api_key, &self.ip]
            .into_iter()
            .find(|n| !n.is_empty())
            .map_or("", |n| n.as_str())
    }

    /// The user, if the server knows it.
    pub fn signed_in_user(&self) -> Option<&str> {
        self.signed_in.then_some(self.user.as_str())
    }

    /// The identity of client `client` of source number `source`; a forged address that
    /// changes per request starts at `first_forged`. Fields for which `wanted` is false are
    /// left empty: a million clients keyed by user need not format a million addresses.
    /// The user is always made (it names the client), and so is the address when the client
    /// goes through a network path.
    ///
    /// Generated users are `<source name>-<n>`, API keys `key-<user>`, and IPv4 addresses come
    /// from `10.<source>.0.0/16`, so sources never share a generated identity by accident.
    pub fn of_client(
        spec: &SourceSpec,
        source: usize,
        client: u32,
        first_forged: IpAddr,
        wanted: impl Fn(KeyField) -> bool,
    ) -> Identity {
        let mut identity = Identity::default();
        identity.set_client(spec, source, client, first_forged, wanted);
        identity
    }

    /// Makes this the identity [`Identity::of_client`] gives, reusing its strings: a source's
    /// setup builds a million identities in one.
    pub fn set_client(
        &mut self,
        spec: &SourceSpec,
        source: usize,
        client: u32,
        first_forged: IpAddr,
        wanted: impl Fn(KeyField) -> bool,
    ) {
        let pop = &spec.population;
        let pick =
            |field: KeyField, gen_: &IdGen, out: &mut String, make: &dyn Fn(u32, &mut String)| {
                out.clear();
                let needed = field == KeyField::User
                    || wanted(field)
                    || (field == KeyField::Ip && !pop.network.is_plain());
                if needed {
                    match gen_ {
                        IdGen::Fixed(v) => out.push_str(v),
                        IdGen::Pool(n) => make(client % n, out),
                        IdGen::PerClient => make(client, out),
                    }
                }
            };
        pick(KeyField::User, &pop.user, &mut self.user, &|n, out| {
            out.push_str(&spec.name);
            out.push('-');
            push_decimal(out, n);
        });
        pick(
            KeyField::ApiKey,
            &pop.api_key,
            &mut self.api_key,
            &|n, out| {
                out.push_str("key-");
                out.push_str(&spec.name);
                out.push('-');
                push_decimal(out, n);
            },
        );
        pick(KeyField::Ip, &pop.ip, &mut self.ip, &|n, out| {
            if pop.ipv6 {
                push_generated_ipv6(out, source, n);
            } else {
                let _ = write!(out, "{}", generated_ip(source, n));
            }
        });
        // A plain connection needs no wire: the address says it all.
        self.wire = if pop.network.is_plain() {
            None
        } else {
            self.ip
                .parse()
                .ok()
                .map(|addr| Wire::new(addr, client, &pop.network, first_forged))
        };
        self.endpoint.clone_from(&pop.endpoint);
        self.signed_in = pop.network.signed_in;
    }
}

/// Appends `n` in decimal, as `{n}` writes it, a byte at a time: the digits of a million
/// generated names, copied from a formatting buffer, cost more than making them here.
fn push_decimal(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// Address `n` of source `source` in the documentation prefix `2001:db8::/32`: one /48 per
/// source, so sources never share an address and a million clients fit easily.
fn generated_ipv6(source: usize, n: u32) -> Ipv6Addr {
    let host = n + 1;
    Ipv6Addr::new(
        0x2001,
        0xdb8,
        (source % 65_536) as u16,
        0,
        0,
        0,
        (host >> 16) as u16,
        (host & 0xffff) as u16,
    )
}

/// Appends [`generated_ipv6`]`(source, n)` as its `Display` writes it (zeros of the longest
/// run cut to `::`), without the general formatter, which a million addresses feel.
fn push_generated_ipv6(out: &mut String, source: usize, n: u32) {
    let [_, _, s, _, _, _, hi, lo] = generated_ipv6(source, n).segments();
    out.push_str("2001:db8:");
    if s != 0 {
        push_hex(out, s);
        out.push(':');
    }
    // The run of zero groups is 3 to 5 long and always the longest.
    out.push(':');
    if hi != 0 {
        push_hex(out, hi);
        out.push(':');
    }
    push_hex(out, lo);
}

/// Appends `v` in lowercase hex without leading zeros (`{v:x}`).
fn push_hex(out: &mut String, v: u16) {
    let digits = (16 - v.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        let d = (v >> (4 * i)) & 0xf;
        out.push(char::from_digit(u32::from(d), 16).expect("a hex digit"));
    }
}

/// Most distinct IPv4 addresses a source can generate (one /16).
pub const MAX_GENERATED_IPS: u32 = 65_534;

/// Sources that can generate IPv4 addresses: one /16 each in 10.0.0.0/8. Validation refuses
/// generated IPv4 addresses for later sources, which would collide.
pub const GENERATED_IPV4_SOURCES: usize = 256;

fn generated_ip(source: usize, n: u32) -> Ipv4Addr {
    let host = n + 1; // skip the network address
    Ipv4Addr::new(
        10,
        u8::try_from(source).expect("validated: generated IPv4 only for the first 256 sources"),
        (host >> 8) as u8,
        (host & 0xff) as u8,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn push_decimal_writes_what_display_writes(n in any::<u32>(), prefix in "[a-z]{0,3}") {
            let mut out = prefix.clone();
            push_decimal(&mut out, n);
            prop_assert_eq!(out, format!("{prefix}{n}"));
        }
    }

    proptest! {
        #[test]
        fn generated_ipv6_is_written_as_display_writes_it(
            source in prop_oneof![Just(0usize), Just(65_536), 0usize..200_000],
            n in prop_oneof![0u32..70_000, any::<u32>().prop_map(|n| n / 2)],
        ) {
            let mut out = "x".to_string();
            push_generated_ipv6(&mut out, source, n);
            prop_assert_eq!(out, format!("x{}", generated_ipv6(source, n)));
        }
    }

    #[test]
    fn generated_ipv6_edges() {
        let write = |source, n| {
            let mut out = String::new();
            push_generated_ipv6(&mut out, source, n);
            out
        };
        assert_eq!(write(0, 0), "2001:db8::1");
        assert_eq!(write(1, 65_535), "2001:db8:1::1:0");
        assert_eq!(write(0xabcd, 0x0012_fffe), "2001:db8:abcd::12:ffff");
    }

    #[test]
    fn push_decimal_edges() {
        for n in [0, 9, 10, 99, 100, u32::MAX] {
            let mut out = String::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }
}
