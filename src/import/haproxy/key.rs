//! The tracked key as rlsim keys a rule (`src`, `req.hdr(...)` onto the identity functions and
//! key fields), and the deny's and tracker's other terms onto `routes`, `methods` and `bypass`.

use super::cond::{Term, Tracker};
use super::{Deny, Fields, Proxy, Table, Track};

/// The track rule whose counter `deny` reads.
pub(super) fn tracker_of(p: &Proxy, deny: &Deny) -> Result<Track, String> {
    match &deny.rate.0 {
        Tracker::Sc(n, table) => {
            let t = p
                .tracks
                .iter()
                .find(|t| t.n == *n)
                .ok_or_else(|| format!("sc{n} is never tracked in this section (no `http-request track-sc{n} ...`)"))?;
            if let Some(table) = table.as_ref().filter(|x| **x != t.table) {
                return Err(format!("sc{n} tracks table `{}`, but the fetch reads it in table `{table}` (a lookup of the tracked key there, not modelled)", t.table));
            }
            Ok(t.clone())
        }
        Tracker::Src(table) => p
            .tracks
            .iter()
            .find(|t| t.fetch == "src" && table.as_ref().is_none_or(|x| *x == t.table))
            .cloned()
            .ok_or_else(|| "src_http_req_rate reads an entry keyed by src, but no track-sc rule of this section tracks src into that table (nothing would count it)".into()),
    }
}

/// A rule key, with the comments that explain it.
pub(super) struct Key {
    pub key: toml::Value,
    pub comments: Vec<String>,
    pub has_api_key: bool,
}

/// `req.hdr(name[,occ])` / `hdr(...)` / `req.hdr_ip(...)` / `req.fhdr(...)`: the header name
/// (lower case) and the occurrence written, if any.
fn header(fetch: &str) -> Option<(String, Option<i64>, bool)> {
    let (name, inner) = fetch.split_once('(')?;
    let full = match name {
        "req.hdr" | "hdr" | "req.hdr_ip" | "hdr_ip" => false,
        "req.fhdr" => true,
        _ => return None,
    };
    let inner = inner.strip_suffix(')')?;
    let mut args = inner.split(',').map(str::trim);
    let h = args.next()?.to_ascii_lowercase();
    let occ = match args.next() {
        Some(o) => Some(o.parse().ok()?),
        None => None,
    };
    Some((h, occ, full))
}

pub(super) fn key(track: &Track, table: &Table, notes: &mut Vec<String>) -> Result<Key, String> {
    let mut t = toml::Table::new();
    let mut comments = Vec::new();
    let mut has_api_key = false;
    let fetch = track.fetch.as_str();
    if fetch == "src" {
        t.insert("identity".into(), "peer".into());
        t.insert("ipv6_prefix".into(), 128.into());
        comments.push("key: src is the socket peer: behind a proxy or CDN every client shares the proxy's address".into());
        if table.ty == "ip" {
            comments.push("type ip: an IPv6 client is not tracked at all (its address does not convert to an IPv4 key)".into());
        }
        return Ok(Key {
            key: toml::Value::Table(t),
            comments,
            has_api_key,
        });
    }
    let Some((h, occ, full)) = header(fetch) else {
        return Err(format!(
            "track-sc fetch `{fetch}` is not modelled (src, req.hdr(X-Forwarded-For), req.hdr(X-Real-IP), req.hdr(CF-Connecting-IP) and req.hdr(X-API-Key) are)"
        ));
    };
    if full && h == "x-forwarded-for" {
        return Err("req.fhdr(X-Forwarded-For) keys by the whole header line, a new key for every different chain; not modelled".into());
    }
    let untracked = format!("a request without {h} is not tracked, so never denied");
    match (h.as_str(), occ) {
        ("x-forwarded-for", None | Some(-1)) => {
            t.insert("identity".into(), "xff".into());
            t.insert("trusted_hops".into(), 1.into());
            comments.push("key: req.hdr(X-Forwarded-For) is the last (rightmost) entry, HAProxy splitting the header on commas: the address the nearest proxy saw, believed from any peer".into());
            notes.push(format!("track-sc{} {fetch}: {untracked}, and a client reaching HAProxy directly can write any X-Forwarded-For it likes (rlsim keys such a request by the peer)", track.n));
        }
        ("x-forwarded-for", Some(1)) => {
            t.insert("identity".into(), "first_xff".into());
            comments.push("key: req.hdr(X-Forwarded-For,1) is the first (leftmost) entry, which the client writes: believed from anyone".into());
            notes.push(format!("track-sc{} {fetch}: a client rotating its X-Forwarded-For gets a new key per request; {untracked}", track.n));
        }
        (hdr @ ("x-real-ip" | "cf-connecting-ip"), None | Some(-1) | Some(1)) => {
            t.insert("identity".into(), "cdn_header".into());
            t.insert("header".into(), hdr.into());
            t.insert(
                "trusted".into(),
                toml::Value::Array(vec!["0.0.0.0/0".into(), "::/0".into()]),
            );
            comments.push(format!("key: {hdr}, believed from any peer (HAProxy checks no source): trusted = everything"));
            notes.push(format!(
                "track-sc{} {fetch}: {untracked} (rlsim keys such a request by the peer)",
                track.n
            ));
        }
        ("x-api-key", None | Some(-1) | Some(1)) => {
            has_api_key = true;
            comments.push("key: the X-API-Key header; requests without it are not tracked (has_api_key = true)".into());
            return Ok(Key {
                key: toml::Value::Array(vec!["api_key".into()]),
                comments,
                has_api_key,
            });
        }
        _ => {
            return Err(format!(
                "track-sc fetch `{fetch}` is not modelled (src, req.hdr(X-Forwarded-For), req.hdr(X-Real-IP), req.hdr(CF-Connecting-IP) and req.hdr(X-API-Key) are)"
            ));
        }
    }
    t.insert("ipv6_prefix".into(), 128.into());
    Ok(Key {
        key: toml::Value::Table(t),
        comments,
        has_api_key,
    })
}

/// Addresses exempted by a negated `src` term (`unless ok`, `!ok`).
pub(super) fn bypass(deny: &[Term], track: &[Term]) -> Vec<String> {
    deny.iter()
        .chain(track)
        .filter_map(|t| match t {
            Term::Src {
                cidrs,
                negated: true,
            } => Some(cidrs.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// `routes`, `skip` and `methods` from the path and method terms. A term on the deny alone is
/// refused: HAProxy counts every tracked request but denies only some, which one rlsim rule
/// (counting what it decides) cannot do.
pub(super) fn applies(deny: &[Term], track: &[Term], fields: &mut Fields) -> Result<(), String> {
    let narrow = |t: &&Term| matches!(t, Term::Path { .. } | Term::Method { .. });
    let d: Vec<&Term> = deny.iter().filter(narrow).collect();
    let k: Vec<&Term> = track.iter().filter(narrow).collect();
    if !d.is_empty() && d != k {
        return Err("the deny is narrower than the tracking (path or method terms on the deny alone): HAProxy counts every tracked request and denies only some, not modelled; put the path/method condition on the track-sc rule too".into());
    }
    for t in &k {
        match t {
            Term::Path { patterns, negated } => {
                let name = if *negated { "skip" } else { "routes" };
                let v = patterns
                    .iter()
                    .map(|p| toml::Value::from(p.as_str()))
                    .collect::<Vec<_>>();
                fields.push((name.into(), v.into()));
            }
            Term::Method {
                methods,
                negated: false,
            } => {
                let v = methods
                    .iter()
                    .map(|p| toml::Value::from(p.as_str()))
                    .collect::<Vec<_>>();
                fields.push(("methods".into(), v.into()));
            }
            Term::Method { negated: true, .. } => {
                return Err("a negated method term is not modelled".into());
            }
            _ => {}
        }
    }
    for t in deny.iter().chain(track) {
        if let Term::Src { negated: false, .. } = t {
            return Err("a positive src term (limiting only some addresses) is not modelled; exemptions (`unless ok`) are".into());
        }
    }
    Ok(())
}
