//! The tracked key as rlsim keys a rule (`src`, `req.hdr(...)` onto the identity functions and
//! key fields), and the deny's and tracker's other terms onto `routes`, `methods` and `bypass`.

use super::cond::{Term, Tracker};
use super::{Deny, Proxy, Table, Track, Trusted};
use crate::error::Result;
use crate::import::{Identity, Key, RuleField, Who, config_error};
use std::path::Path;

/// The track rule whose counter `deny` reads. HAProxy runs the `track-scN` rules in order and
/// skips one once scN is tracked (`http_action_track_sc`: `if (stkctr_entry(...)) goto end`),
/// so the first rule whose condition holds and whose fetch finds a value tracks the request.
/// Modelled: one rule; a first unconditional `src` (the later rules never track); and the
/// trusted-proxy pair (see [`pair`]). Any other chain is refused at its second rule's line.
pub(super) fn tracker_of(
    path: &Path,
    p: &Proxy,
    deny: &Deny,
    notes: &mut Vec<String>,
) -> Result<Track> {
    let err = |m: String| config_error(path, deny.line, "http-request deny", m);
    let n = match &deny.rate.0 {
        Tracker::Sc(n, _) => *n,
        Tracker::Src(table) => return src_tracker(p, table.as_deref()).map_err(err),
    };
    let chain: Vec<&Track> = p.tracks.iter().filter(|t| t.n == n).collect();
    let Some(&first) = chain.first() else {
        return Err(err(format!(
            "sc{n} is never tracked in this section (no `http-request track-sc{n} ...`)"
        )));
    };
    let mut track = first.clone();
    // How many rules of the chain track, and whether they track every request.
    let (mut used, mut every) = (1, first.fetch == "src" && first.terms.is_empty());
    if let Some(trusted) = chain.get(1).and_then(|second| pair(first, second)) {
        let xff = if first.fetch == "src" {
            chain[1]
        } else {
            first
        };
        (used, every) = (2, trusted.src_always);
        track = Track {
            terms: Vec::new(),
            trusted: Some(trusted),
            ..xff.clone()
        };
    }
    for t in &chain[used..] {
        if !every {
            return Err(config_error(
                path,
                t.line,
                &t.directive,
                format!(
                    "sc{n} is already tracked by line {} (`{} {}`), which does not track every request: HAProxy tracks by the first track-sc{n} whose condition holds and whose fetch finds a value, which rlsim models for one rule, a first unconditional `track-sc{n} src`, or the trusted-proxy pair `track-sc{n} req.hdr_ip(X-Forwarded-For,-1) if {{ src NETS }}` with `track-sc{n} src`",
                    first.line, first.directive, first.fetch
                ),
            ));
        }
        notes.push(format!(
            "{}:{}: sc{n} is already tracked by an earlier rule for every request; HAProxy ignores this one",
            path.display(),
            t.line
        ));
    }
    if let Some(table) = deny_table(&deny.rate.0).filter(|x| **x != track.table) {
        return Err(err(format!(
            "sc{n} tracks table `{}`, but the fetch reads it in table `{table}` (a lookup of the tracked key there, not modelled)",
            track.table
        )));
    }
    Ok(track)
}

fn deny_table(t: &Tracker) -> Option<&String> {
    match t {
        Tracker::Sc(_, table) | Tracker::Src(table) => table.as_ref(),
    }
}

/// `src_http_req_rate([table])`: the rule tracking src into that table.
fn src_tracker(p: &Proxy, table: Option<&str>) -> std::result::Result<Track, String> {
    p.tracks
        .iter()
        .find(|t| t.fetch == "src" && table.is_none_or(|x| x == t.table))
        .cloned()
        .ok_or_else(|| "src_http_req_rate reads an entry keyed by src, but no track-sc rule of this section tracks src into that table (nothing would count it)".into())
}

/// The trusted-proxy pair, in either order: `track-scN req.hdr_ip(X-Forwarded-For,-1) if
/// { src NETS }` (or `req.hdr(...)`, a named acl) and `track-scN src`, unconditional or `unless
/// { src NETS }` (when it comes first it must be `unless`, else it tracks everything). Both on
/// one table, with no other term.
fn pair(a: &Track, b: &Track) -> Option<Trusted> {
    let (xff, src) = if a.fetch == "src" { (b, a) } else { (a, b) };
    let last_xff =
        matches!(header(&xff.fetch), Some((h, None | Some(-1), false)) if h == "x-forwarded-for");
    if !last_xff || src.fetch != "src" || a.table != b.table || a.tcp || b.tcp {
        return None;
    }
    let cidrs = match xff.terms.as_slice() {
        [
            Term::Src {
                cidrs,
                negated: false,
            },
        ] => cidrs,
        // `track-scN req.hdr_ip(X-Forwarded-For,-1)` then `track-scN src`: every peer trusted.
        [] if src.terms.is_empty() && std::ptr::eq(xff, a) => {
            return Some(Trusted {
                nets: Vec::new(),
                src_line: src.line,
                src_always: true,
            });
        }
        _ => return None,
    };
    let src_always = match src.terms.as_slice() {
        [] => true,
        [
            Term::Src {
                cidrs: c,
                negated: true,
            },
        ] if c == cidrs => false,
        _ => return None,
    };
    if src_always && std::ptr::eq(src, a) {
        return None;
    }
    Some(Trusted {
        nets: cidrs.clone(),
        src_line: src.line,
        src_always,
    })
}

/// A rule key, with the comments that explain it.
pub(super) struct Keyed {
    pub key: Key,
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

pub(super) fn key(track: &Track, table: &Table, notes: &mut Vec<String>) -> Result<Keyed, String> {
    let mut comments = Vec::new();
    let mut has_api_key = false;
    let fetch = track.fetch.as_str();
    if fetch == "src" {
        comments.push("key: src is the socket peer: behind a proxy or CDN every client shares the proxy's address".into());
        if table.ty == "ip" {
            comments.push("type ip: an IPv6 client is not tracked at all (its address does not convert to an IPv4 key)".into());
        }
        return Ok(Keyed {
            key: Key::Identity(Identity {
                ipv6_prefix: Some(128),
                ..Identity::new(Who::Peer)
            }),
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
    // Messages name the header as the file writes it; `h` (lower case) is for matching.
    let written = fetch
        .split_once('(')
        .and_then(|(_, r)| r.split([',', ')']).next())
        .map_or(h.as_str(), str::trim);
    let untracked = format!("a request without {written} is not tracked, so never denied");
    let mut id = match (h.as_str(), occ) {
        ("x-forwarded-for", None | Some(-1)) if track.trusted.is_some() => {
            trusted_xff(track, &mut comments, notes)
        }
        ("x-forwarded-for", None | Some(-1)) => {
            comments.push("key: req.hdr(X-Forwarded-For) is the last (rightmost) entry, HAProxy splitting the header on commas: the address the nearest proxy saw, believed from any peer".into());
            notes.push(format!("track-sc{} {fetch}: {untracked}, and a client reaching HAProxy directly can write any X-Forwarded-For it likes (rlsim keys such a request by the peer)", track.n));
            Identity {
                trusted_hops: Some(1),
                ..Identity::new(Who::Xff)
            }
        }
        ("x-forwarded-for", Some(1)) => {
            comments.push("key: req.hdr(X-Forwarded-For,1) is the first (leftmost) entry, which the client writes: believed from anyone".into());
            notes.push(format!("track-sc{} {fetch}: a client rotating its X-Forwarded-For gets a new key per request; {untracked}", track.n));
            Identity::new(Who::FirstXff)
        }
        (hdr @ ("x-real-ip" | "cf-connecting-ip"), None | Some(-1) | Some(1)) => {
            comments.push(format!("key: {written} ({hdr}), believed from any peer (HAProxy checks no source): trusted = everything"));
            notes.push(format!(
                "track-sc{} {fetch}: {untracked} (rlsim keys such a request by the peer)",
                track.n
            ));
            Identity {
                header: Some(hdr.into()),
                trusted: Some(vec!["0.0.0.0/0".into(), "::/0".into()]),
                ..Identity::new(Who::CdnHeader)
            }
        }
        ("x-api-key", None | Some(-1) | Some(1)) => {
            has_api_key = true;
            comments.push("key: the X-API-Key header; requests without it are not tracked (has_api_key = true)".into());
            return Ok(Keyed {
                key: Key::Fields(vec!["api_key"]),
                comments,
                has_api_key,
            });
        }
        _ => {
            return Err(format!(
                "track-sc fetch `{fetch}` is not modelled (src, req.hdr(X-Forwarded-For), req.hdr(X-Real-IP), req.hdr(CF-Connecting-IP) and req.hdr(X-API-Key) are)"
            ));
        }
    };
    id.ipv6_prefix = Some(128);
    Ok(Keyed {
        key: Key::Identity(id),
        comments,
        has_api_key,
    })
}

/// A positive `src` term limits only some addresses, which rlsim's rules cannot say.
pub(super) fn no_positive_src(terms: &[Term]) -> std::result::Result<(), String> {
    match terms
        .iter()
        .find(|t| matches!(t, Term::Src { negated: false, .. }))
    {
        Some(Term::Src { cidrs, .. }) => Err(format!(
            "a positive src term (`src {}`: limiting only some addresses) is not modelled; exemptions (`unless ok`) are, and so is the trusted-proxy pair (`track-sc0 req.hdr_ip(X-Forwarded-For,-1) if {{ src NETS }}` with `track-sc0 src`)",
            cidrs.join(" ")
        )),
        _ => Ok(()),
    }
}

/// The trusted-proxy pair's key: nginx's `real_ip_recursive off` identity, the rightmost
/// X-Forwarded-For entry from a trusted peer, else the peer.
fn trusted_xff(track: &Track, comments: &mut Vec<String>, notes: &mut Vec<String>) -> Identity {
    let xff = Identity::new(Who::Xff);
    let Some(tr) = &track.trusted else { return xff };
    let (n, fetch) = (track.n, &track.fetch);
    if tr.nets.is_empty() {
        // The last entry when there is one, else the peer: one hop from the peer.
        comments.push(format!("key: track-sc{n} {fetch} (line {}), track-sc{n} src for a request without X-Forwarded-For (line {}): the last entry (HAProxy splits the header on commas), the address the nearest proxy saw, believed from any peer, else the socket peer", track.line, tr.src_line));
        notes.push(format!("track-sc{n} {fetch}: a client reaching HAProxy directly can write any X-Forwarded-For it likes"));
        return Identity {
            trusted_hops: Some(1),
            ..xff
        };
    }
    let nets = tr.nets.join(" ");
    comments.push(format!("key: track-sc{n} {fetch} for a peer in {nets} (line {}), track-sc{n} src for the others (line {}): the last X-Forwarded-For entry (HAProxy splits the header on commas), the one the trusted proxy appended, else the socket peer; a later track-sc{n} is skipped once sc{n} is tracked", track.line, tr.src_line));
    if !tr.src_always {
        notes.push(format!("track-sc{n} {fetch} if src {nets}: a request from {nets} without X-Forwarded-For is not tracked, so never denied (rlsim keys it by the peer)"));
    }
    Identity {
        trusted: Some(tr.nets.clone()),
        recursive: Some(false),
        ..xff
    }
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
pub(super) fn applies(
    path: &Path,
    deny: &Deny,
    track: &Track,
    fields: &mut Vec<RuleField>,
) -> Result<()> {
    let narrow = |t: &&Term| matches!(t, Term::Path { .. } | Term::Method { .. });
    let d: Vec<&Term> = deny.terms.iter().filter(narrow).collect();
    let k: Vec<&Term> = track.terms.iter().filter(narrow).collect();
    if !d.is_empty() && d != k {
        return Err(config_error(
            path,
            deny.line,
            "http-request deny",
            "the deny is narrower than the tracking (path or method terms on the deny alone): HAProxy counts every tracked request and denies only some, not modelled; put the path/method condition on the track-sc rule too",
        ));
    }
    for t in &k {
        match t {
            Term::Path {
                patterns,
                negated: true,
            } => fields.push(RuleField::Skip(patterns.clone())),
            Term::Path {
                patterns,
                negated: false,
            } => fields.push(RuleField::Routes(patterns.clone())),
            Term::Method {
                methods,
                negated: false,
            } => fields.push(RuleField::Methods(methods.clone())),
            Term::Method { negated: true, .. } => {
                let m = "a negated method term is not modelled";
                return Err(config_error(path, track.line, &track.directive, m));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(fetch: &str, terms: Vec<Term>, line: usize) -> Track {
        Track {
            n: 0,
            fetch: fetch.into(),
            table: "web".into(),
            terms,
            line,
            tcp: false,
            directive: "http-request track-sc0".into(),
            trusted: None,
        }
    }

    fn src(net: &str, negated: bool) -> Vec<Term> {
        vec![Term::Src {
            cidrs: vec![net.into()],
            negated,
        }]
    }

    #[test]
    fn the_trusted_proxy_pair_is_read_in_either_order() {
        let xff = track(
            "req.hdr_ip(x-forwarded-for,-1)",
            src("10.0.0.0/8", false),
            4,
        );
        let unless = track("src", src("10.0.0.0/8", true), 5);
        let always = track("src", vec![], 5);
        let want = |src_always| {
            Some(Trusted {
                nets: vec!["10.0.0.0/8".into()],
                src_line: 5,
                src_always,
            })
        };
        assert_eq!(pair(&xff, &unless), want(false));
        assert_eq!(pair(&unless, &xff), want(false));
        assert_eq!(pair(&xff, &always), want(true));
        // An unconditional src first tracks everything: the xff rule never runs.
        assert_eq!(pair(&always, &xff), None);
        // Other networks on the src rule, another occurrence, another table: not the pair.
        assert_eq!(
            pair(&xff, &track("src", src("192.168.0.0/16", true), 5)),
            None
        );
        let first = track("req.hdr(X-Forwarded-For,1)", src("10.0.0.0/8", false), 4);
        assert_eq!(pair(&first, &unless), None);
        let other = Track {
            table: "st".into(),
            ..unless.clone()
        };
        assert_eq!(pair(&xff, &other), None);
        // No condition on either: every peer trusted, one hop.
        let bare = track("req.hdr_ip(x-forwarded-for,-1)", vec![], 4);
        assert_eq!(pair(&bare, &always).map(|t| t.nets.len()), Some(0));
        assert_eq!(pair(&bare, &unless), None);
    }
}
