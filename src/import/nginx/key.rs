//! A zone's key as rlsim keys a rule: nginx variables onto key fields and identity functions
//! (`$binary_remote_addr` after the realip module), and `map`/`geo` chains whose empty results
//! exempt requests (nginx skips a request whose key is empty: `ngx_http_limit_req_handler`
//! declines when the key's length is 0).

use super::{Http, Level, Zone};
use crate::error::{Error, Result};
use crate::import::{Identity, Key, Who, config_error};
use std::path::Path;

/// Requests a zone never limits: those whose key is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exempt {
    pub cidrs: Vec<String>,
    pub api_keys: Vec<String>,
}

/// A zone's key in rlsim's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleKey {
    pub key: Key,
    pub exempt: Exempt,
    /// The key is the API key alone: a request without one has an empty key, never limited.
    pub needs_api_key: bool,
    /// How the key maps, for the rule's comment.
    pub notes: Vec<String>,
}

/// An error at the zone's `limit_req_zone` line.
fn zone_error(zone: &Zone, message: String) -> Error {
    let (file, line) = zone.at.rsplit_once(':').unwrap_or((&zone.at, "1"));
    config_error(
        Path::new(file),
        line.parse().unwrap_or(1),
        "limit_req_zone",
        message,
    )
}

/// The variables of a complex value (`$binary_remote_addr$uri`, `${a}b`), literals dropped.
fn variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        let (name, after) = if let Some(r) = rest.strip_prefix('{') {
            let end = r.find('}').unwrap_or(r.len());
            (&r[..end], &r[(end + 1).min(r.len())..])
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        out.push(name.to_string());
        rest = after;
    }
    out
}

/// The identity nginx's `$remote_addr` is under `level`'s realip settings, full addresses
/// (`$binary_remote_addr` keeps IPv6 whole).
fn address(level: &Level, zone: &Zone, notes: &mut Vec<String>) -> Result<Identity> {
    let trusted: Vec<String> = level.real_from.iter().flatten().cloned().collect();
    let mut id = if trusted.is_empty() {
        notes.push("$remote_addr without set_real_ip_from is the socket peer: behind a proxy or CDN every client shares the proxy's address".into());
        Identity::new(Who::Peer)
    } else {
        let header = level.real_header.as_deref().unwrap_or("X-Real-IP");
        let recursive = level.real_recursive.unwrap_or(false);
        match header.to_ascii_lowercase().as_str() {
            "x-forwarded-for" => {
                if !recursive {
                    notes.push("real_ip_recursive off (the default): nginx takes the rightmost X-Forwarded-For entry from a trusted peer, even when that entry is itself a trusted proxy (two proxies in a row key by the inner proxy)".into());
                } else {
                    notes.push("real_ip_recursive on: X-Forwarded-For is walked from the right past every trusted address; the first untrusted one is the client".into());
                }
                Identity {
                    trusted: Some(trusted),
                    recursive: (!recursive).then_some(false),
                    ..Identity::new(Who::Xff)
                }
            }
            h @ ("x-real-ip" | "cf-connecting-ip") => {
                notes.push(format!(
                    "$remote_addr is {header} when the peer is in set_real_ip_from, else the peer"
                ));
                Identity {
                    header: Some(h.into()),
                    trusted: Some(trusted),
                    ..Identity::new(Who::CdnHeader)
                }
            }
            other => {
                return Err(zone_error(
                    zone,
                    format!(
                        "real_ip_header `{other}` is not modelled (X-Forwarded-For, X-Real-IP and CF-Connecting-IP are)"
                    ),
                ));
            }
        }
    };
    id.ipv6_prefix = Some(128);
    Ok(id)
}

/// What one variable of the key contributes.
enum Part {
    Addr,
    ApiKey,
    Endpoint,
    Constant,
}

fn part(name: &str, zone: &Zone, notes: &mut Vec<String>) -> Result<Part> {
    Ok(match name {
        "binary_remote_addr" | "remote_addr" => Part::Addr,
        "http_x_api_key" => Part::ApiKey,
        "uri" | "document_uri" => Part::Endpoint,
        "request_uri" => {
            notes.push(
                "$request_uri includes the query string; rlsim's endpoint is the path only".into(),
            );
            Part::Endpoint
        }
        "server_name" | "host" | "http_host" => Part::Constant,
        other => {
            return Err(zone_error(
                zone,
                format!(
                    "key variable `${other}` is not modelled (rlsim keys by $binary_remote_addr, $remote_addr, $http_x_api_key, $uri, maps and geos of them)"
                ),
            ));
        }
    })
}

/// The rule key of `zone` under `level`.
pub fn rule_key(zone: &Zone, level: &Level, http: &Http) -> Result<RuleKey> {
    let mut notes = Vec::new();
    let mut exempt = Exempt::default();
    let mut text = zone.key.clone();
    // A key that is one map variable: its empty results exempt, its other result keys.
    for _ in 0..8 {
        let vars = variables(&text);
        let [only] = vars.as_slice() else { break };
        let Some(map) = http.maps.get(only) else {
            break;
        };
        let (inner, ex) = resolve_map(only, map, http, zone)?;
        notes.push(format!(
            "key `${only}` is the map at {}: {inner} for every other request",
            map.at
        ));
        exempt.cidrs.extend(ex.cidrs);
        exempt.api_keys.extend(ex.api_keys);
        text = inner;
    }
    let (mut addr, mut api_key, mut endpoint) = (false, false, false);
    let vars = variables(&text);
    for v in &vars {
        match part(v, zone, &mut notes)? {
            Part::Addr => addr = true,
            Part::ApiKey => api_key = true,
            Part::Endpoint => endpoint = true,
            Part::Constant => {}
        }
    }
    if !(addr || api_key || endpoint) {
        notes.push(format!(
            "key `{}` is the same for every request of a server: one state that all its clients share (a global limit; `key = []`)",
            zone.key
        ));
    }
    let mut fields = Vec::new();
    if api_key {
        fields.push("api_key");
    }
    if endpoint {
        fields.push("endpoint");
    }
    let key = if addr {
        let id = address(level, zone, &mut notes)?;
        Key::Identity(Identity {
            fields: (!fields.is_empty()).then_some(fields),
            ..id
        })
    } else {
        Key::Fields(fields)
    };
    let needs_api_key = api_key && !addr && !endpoint;
    if needs_api_key {
        notes.push("a request without X-API-Key has an empty key, which nginx never limits".into());
    }
    Ok(RuleKey {
        key,
        exempt,
        needs_api_key,
        notes,
    })
}

/// A map used as a key: its one non-empty result (the inner key) and what its empty results
/// exempt, by the map's source (`$remote_addr`, `$http_x_api_key`, or a geo of addresses).
fn resolve_map(
    var: &str,
    map: &super::MapDef,
    http: &Http,
    zone: &Zone,
) -> Result<(String, Exempt)> {
    let fail = |m: String| zone_error(zone, format!("key `${var}` (map at {}): {m}", map.at));
    let default = map.default.clone().unwrap_or_default();
    let source = variables(&map.source);
    let [source] = source.as_slice() else {
        return Err(fail(format!(
            "map source `{}` is not one variable",
            map.source
        )));
    };
    let mut exempt = Exempt::default();
    if let Some(geo) = http.geos.get(source) {
        if geo.source.as_deref().is_some_and(|s| s != "$remote_addr") {
            return Err(fail(format!(
                "geo at {} reads {}, not $remote_addr",
                geo.at,
                geo.source.as_deref().unwrap_or("")
            )));
        }
        let result = |geo_value: &str| -> String {
            map.entries
                .iter()
                .find(|(k, _)| k == geo_value)
                .map_or(default.clone(), |(_, v)| v.clone())
        };
        let inner = result(&geo.default);
        if inner.is_empty() {
            return Err(fail(format!(
                "geo's default `{}` maps to an empty key: only the listed networks would be limited, which rlsim's bypass lists cannot say",
                geo.default
            )));
        }
        for (net, value) in &geo.entries {
            match result(value) {
                r if r.is_empty() => exempt.cidrs.push(net.clone()),
                r if r == inner => {}
                r => {
                    return Err(fail(format!(
                        "network {net} maps to `{r}`, another key than the default's `{inner}`"
                    )));
                }
            }
        }
        return Ok((inner, exempt));
    }
    if default.is_empty() {
        return Err(fail("the default result is empty: only the listed values would be limited, which rlsim's bypass lists cannot say".into()));
    }
    for (k, v) in &map.entries {
        if v.is_empty() {
            match source.as_str() {
                "remote_addr" => match k.parse::<std::net::IpAddr>() {
                    Ok(a) => exempt.cidrs.push(ipnet::IpNet::from(a).to_string()),
                    Err(_) => return Err(fail(format!("`{k}` is not an address"))),
                },
                "http_x_api_key" if !k.is_empty() => exempt.api_keys.push(k.clone()),
                other => {
                    return Err(fail(format!(
                        "an empty result for `{k}` of `${other}` is not modelled (exemptions by $remote_addr, $http_x_api_key or a geo are)"
                    )));
                }
            }
        } else if *v != default {
            return Err(fail(format!(
                "`{k}` maps to `{v}`, another key than the default's `{default}`"
            )));
        }
    }
    Ok((default, exempt))
}
