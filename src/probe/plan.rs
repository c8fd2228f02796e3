//! The probe's plan: every request the scenario's traffic generates, as an HTTP request with
//! the client's identity in the headers a server behind a proxy reads, and who sent it.
//!
//! The probe's connections all come from loopback, so the client's address travels where a
//! trusted proxy in front of the service would put it: `X-Forwarded-For` ends with the address
//! the proxy saw (the client, or the last hop of its `via` path), after any forwarded or forged
//! entries; `X-Real-IP` and `CF-Connecting-IP` as the path sets them. The API key and the
//! signed-in user go in the headers [`Identity`] names.

use crate::drive::Request;
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::Role;
use crate::traffic::export::{self, Request as Generated};
use crate::traffic::method::Method;
use strum::VariantArray;

/// The headers a request's identity fields are sent in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub api_key_header: String,
    pub user_header: String,
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            api_key_header: "X-Api-Key".into(),
            user_header: "X-User".into(),
        }
    }
}

/// One planned request and who sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub request: Request,
    /// The source's index in the scenario, and its role.
    pub source: u16,
    pub role: Role,
    /// `ip`, `user`, `api_key`, `endpoint`, as generated.
    pub fields: [String; 4],
    /// The `X-Forwarded-For` sent (the trace records it).
    pub forwarded_for: String,
}

/// The scenario's requests in time order; more than `max` is refused (the probe sends no part
/// of a plan it cannot send whole).
pub fn plan(scenario: &Scenario, identity: &Identity, max: u64) -> Result<Vec<Planned>> {
    let mut out = Vec::new();
    export::for_each_request(&scenario.traffic, scenario.seed, |r| {
        if out.len() as u64 >= max {
            return Err(Error::Usage(format!(
                "{}: the scenario sends more than {max} requests (--max-requests); \
                 shorten it or raise the bound",
                scenario.path.display()
            )));
        }
        let mut p = planned(&r, identity);
        p.request.tag = out.len() as u64;
        out.push(p);
        Ok(())
    })?;
    Ok(out)
}

fn planned(r: &Generated<'_>, identity: &Identity) -> Planned {
    let [ip, user, api_key, endpoint] = r.fields;
    let mut headers = Vec::new();
    let forwarded_for = forwarded_for(r, ip);
    if !forwarded_for.is_empty() {
        headers.push(("X-Forwarded-For".to_string(), forwarded_for.clone()));
    }
    if let Some(wire) = r.wire {
        let seen = wire.seen(None);
        if let Some(a) = seen.real_ip {
            headers.push(("X-Real-IP".to_string(), a.to_string()));
        }
        if let Some(a) = seen.cf_connecting_ip {
            headers.push(("CF-Connecting-IP".to_string(), a.to_string()));
        }
    }
    if !api_key.is_empty() {
        headers.push((identity.api_key_header.clone(), api_key.to_string()));
    }
    if !user.is_empty() {
        headers.push((identity.user_header.clone(), user.to_string()));
    }
    let method = Method::VARIANTS
        .get(r.method as usize)
        .map_or("GET", |m| m.name());
    Planned {
        request: Request {
            at: r.time,
            method: method.to_string(),
            path: path(endpoint),
            headers,
            tag: 0,
        },
        source: r.source_index,
        role: r.role,
        fields: [ip, user, api_key, endpoint].map(|f| f.to_string()),
        forwarded_for,
    }
}

/// What a trusted proxy in front of the service would forward: the path's entries and the
/// address it saw, else a replayed record's header and its address, else the client's address.
fn forwarded_for(r: &Generated<'_>, ip: &str) -> String {
    if let Some(wire) = r.wire {
        let seen = wire.seen(None);
        let mut hops: Vec<String> = seen.xff.iter().map(|a| a.to_string()).collect();
        hops.push(seen.peer.to_string());
        return hops.join(", ");
    }
    let logged = r.record.map_or("", |x| x.forwarded_for.as_str());
    match (logged.is_empty(), ip.is_empty()) {
        (false, true) => logged.to_string(),
        (false, false) => format!("{logged}, {ip}"),
        (true, _) => ip.to_string(),
    }
}

/// An endpoint as a request path: `/` when it has none.
fn path(endpoint: &str) -> String {
    match endpoint {
        "" => "/".to_string(),
        e if e.starts_with('/') => e.to_string(),
        e => format!("/{e}"),
    }
}

/// The last planned instant (0 for an empty plan).
pub fn span(plan: &[Planned]) -> Nanos {
    plan.last().map_or(0, |p| p.request.at)
}
