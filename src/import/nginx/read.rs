//! nginx's directives read into the levels of [`Http`]: zones, maps and geos of `http`, and
//! per `server` and `location` what `ngx_http_limit_req_merge_conf` and the realip module's
//! merge inherit (each field taken from the parent only when the level does not set it; the
//! `limit_req` list as a whole, so one `limit_req` in a location drops every inherited one).

use super::conf::Directive;
use super::{Delay, Geo, Http, Level, Limit, Location, MapDef, Pattern, Server, Zone};
use crate::error::{Result, must_be, whole};

/// Directives read and deliberately not modelled, with why.
const IGNORED: &[(&str, &str)] = &[
    (
        "limit_req_log_level",
        "only sets the level nginx logs refusals at",
    ),
    (
        "limit_conn",
        "limits concurrent connections, which rlsim does not model",
    ),
    (
        "limit_conn_zone",
        "limits concurrent connections, which rlsim does not model",
    ),
    (
        "limit_rate",
        "limits the response bandwidth, which rlsim does not model",
    ),
    (
        "if",
        "a condition rlsim cannot evaluate: its limit_req (none are allowed inside) and return are not modelled",
    ),
    (
        "rewrite",
        "may send a request to another location: rlsim keeps each request in the location its path selects",
    ),
    (
        "limit_except",
        "limits methods by access rules, not by rate",
    ),
];

/// Reads the `http` block of the top level.
pub fn http(path: &std::path::Path, top: &[Directive], notes: &mut Vec<String>) -> Result<Http> {
    let mut blocks = top.iter().filter(|d| d.name == "http");
    let Some(block) = blocks.next() else {
        return Err(crate::import::config_error(
            path,
            1,
            "http",
            "no `http { ... }` block: nothing to import",
        ));
    };
    if let Some(dup) = blocks.next() {
        return Err(dup.error("\"http\" directive is duplicate (nginx refuses a second one)"));
    }
    let mut http = Http::default();
    http.level.name = "http".into();
    let children = block.block.as_deref().unwrap_or_default();
    for d in children {
        match d.name.as_str() {
            "limit_req_zone" => {
                let zone = zone(d)?;
                if http.zones.contains_key(&zone.name) {
                    return Err(d.error(format!("zone \"{}\" is already defined", zone.name)));
                }
                http.zones.insert(zone.name.clone(), zone);
            }
            "map" => {
                let m = map(d)?;
                http.maps.insert(m.0, m.1);
            }
            "geo" => {
                let g = geo(d)?;
                http.geos.insert(g.0, g.1);
            }
            "server" => {}
            _ => level_directive(&mut http.level, d, notes)?,
        }
    }
    if http.level.limits.is_some() {
        http.level.limits_from = Some("http".into());
    }
    for d in children.iter().filter(|d| d.name == "server") {
        let s = server(d, &http.level, notes)?;
        http.servers.push(s);
    }
    Ok(http)
}

fn args<const N: usize>(d: &Directive) -> Result<&[String; N]> {
    d.args
        .as_slice()
        .try_into()
        .map_err(|_| d.error(format!("takes {N} argument(s), got {}", d.args.len())))
}

/// `limit_req_zone key zone=name:size rate=Nr/s|Nr/m`.
fn zone(d: &Directive) -> Result<Zone> {
    let mut key = None;
    let (mut name, mut size, mut rate) = (None, None, None);
    for a in &d.args {
        if let Some(z) = a.strip_prefix("zone=") {
            let Some((n, s)) = z.split_once(':') else {
                return Err(d.error(format!(
                    "invalid zone size \"{z}\" (expected zone=name:size)"
                )));
            };
            name = Some(n.to_string());
            size = Some(s.to_string());
        } else if let Some(r) = a.strip_prefix("rate=") {
            // nginx reads the count with ngx_atoi (decimal digits) and refuses 0; rlsim's
            // policies count to u32::MAX.
            let bad = || {
                let range = must_be(
                    "a whole number of requests per second or minute (`10r/s`, `30r/m`)",
                    1,
                    u32::MAX,
                );
                d.error(format!("rate `{r}`: {range}"))
            };
            let (digits, per_minute) = match (r.strip_suffix("r/s"), r.strip_suffix("r/m")) {
                (Some(n), _) => (n, false),
                (_, Some(n)) => (n, true),
                _ => return Err(bad()),
            };
            let n = whole(digits, 1, u32::MAX.into()).map_err(|_| bad())?;
            rate = Some((n, per_minute));
        } else if a == "sync" {
            return Err(d.error(
                "`sync` (NGINX Plus zone synchronisation across a cluster) is not modelled",
            ));
        } else if key.is_none() {
            key = Some(a.clone());
        } else {
            return Err(d.error(format!("invalid parameter \"{a}\"")));
        }
    }
    match (key, name, size, rate) {
        (Some(key), Some(name), Some(size), Some(rate)) => Ok(Zone {
            name,
            key,
            size,
            rate,
            at: d.at(),
        }),
        _ => Err(d.error("needs a key, zone=name:size and rate=")),
    }
}

/// `map $source $variable { ... }` → (variable name without `$`, the map).
fn map(d: &Directive) -> Result<(String, MapDef)> {
    let [source, var] = args::<2>(d)?;
    let Some(var) = var.strip_prefix('$') else {
        return Err(d.error(format!("invalid variable name \"{var}\"")));
    };
    let mut m = MapDef {
        source: source.clone(),
        default: None,
        entries: Vec::new(),
        at: d.at(),
    };
    for e in d.block.as_deref().unwrap_or_default() {
        match (e.name.as_str(), e.args.as_slice()) {
            ("hostnames" | "volatile", []) => {}
            ("default", [v]) => m.default = Some(v.clone()),
            (k, _) if k.starts_with('~') => {
                return Err(e.error(
                    "a regular expression in a map is not modelled: list the values it exempts",
                ));
            }
            (k, [v]) => m
                .entries
                .push((k.trim_start_matches('\\').to_string(), v.clone())),
            _ => return Err(e.error("a map entry is `value result;`")),
        }
    }
    Ok((var.to_string(), m))
}

/// `geo [$address] $variable { ... }`.
fn geo(d: &Directive) -> Result<(String, Geo)> {
    let (source, var) = match d.args.as_slice() {
        [v] => (None, v),
        [s, v] => (Some(s.clone()), v),
        _ => return Err(d.error("takes `[$address] $variable`")),
    };
    let Some(var) = var.strip_prefix('$') else {
        return Err(d.error(format!("invalid variable name \"{var}\"")));
    };
    let mut g = Geo {
        source,
        default: String::new(),
        entries: Vec::new(),
        at: d.at(),
    };
    for e in d.block.as_deref().unwrap_or_default() {
        match (e.name.as_str(), e.args.as_slice()) {
            ("default", [v]) => g.default = v.clone(),
            ("ranges" | "proxy" | "proxy_recursive" | "delete", _) => {
                return Err(e.error(format!("geo `{}` is not modelled", e.name)));
            }
            (net, [v]) => {
                let parsed = net
                    .parse::<ipnet::IpNet>()
                    .or_else(|_| net.parse::<std::net::IpAddr>().map(ipnet::IpNet::from));
                match parsed {
                    Ok(n) => g.entries.push((n.to_string(), v.clone())),
                    Err(_) => return Err(e.error(format!("invalid network \"{net}\""))),
                }
            }
            _ => return Err(e.error("a geo entry is `network value;`")),
        }
    }
    Ok((var.to_string(), g))
}

/// One directive of a level (http, server or location) into `level`; others noted or passed.
fn level_directive(level: &mut Level, d: &Directive, notes: &mut Vec<String>) -> Result<()> {
    match d.name.as_str() {
        "limit_req" => level.limits.get_or_insert_with(Vec::new).push(limit(d)?),
        "limit_req_status" => {
            let [code] = args::<1>(d)?;
            let c = whole(code, 400, 599).map_err(|_| {
                d.error(format!(
                    "status `{code}`: {}",
                    must_be("an HTTP status", 400, 599)
                ))
            })?;
            level.status = Some(c as u16);
        }
        "limit_req_dry_run" => {
            level.dry_run = Some(match args::<1>(d)?[0].as_str() {
                "on" => true,
                "off" => false,
                v => {
                    return Err(d.error(format!(
                        "invalid value \"{v}\", it must be \"on\" or \"off\""
                    )));
                }
            })
        }
        "real_ip_recursive" => {
            level.real_recursive = Some(match args::<1>(d)?[0].as_str() {
                "on" => true,
                "off" => false,
                v => {
                    return Err(d.error(format!(
                        "invalid value \"{v}\", it must be \"on\" or \"off\""
                    )));
                }
            })
        }
        "real_ip_header" => level.real_header = Some(args::<1>(d)?[0].clone()),
        "set_real_ip_from" => {
            let [from] = args::<1>(d)?;
            let net = from
                .parse::<ipnet::IpNet>()
                .or_else(|_| from.parse::<std::net::IpAddr>().map(ipnet::IpNet::from));
            match net {
                Ok(n) => level.real_from.get_or_insert_with(Vec::new).push(n.to_string()),
                Err(_) if from == "unix:" => notes.push(format!(
                    "{}: set_real_ip_from unix: (requests over a UNIX socket) has no address rlsim's traffic sends from",
                    d.at()
                )),
                Err(_) => return Err(d.error(format!("\"{from}\" is not an address or a CIDR block (host names are not modelled)"))),
            }
        }
        "return" => level.returns = Some(d.at()),
        name => {
            if let Some((_, why)) = IGNORED.iter().find(|(n, _)| *n == name) {
                notes.push(format!("{}: `{name}` is not modelled: it {why}", d.at()));
            }
        }
    }
    Ok(())
}

/// `limit_req zone=name [burst=N] [nodelay | delay=N]`.
fn limit(d: &Directive) -> Result<Limit> {
    let mut l = Limit {
        zone: String::new(),
        burst: 0,
        delay: Delay::All,
        at: d.at(),
    };
    for a in &d.args {
        // ngx_atoi, and nginx refuses 0; rlsim's bursts count to u32::MAX.
        let num = |v: &str, what: &str| {
            whole(v, 1, u32::MAX.into()).map_err(|_| {
                let range = must_be("a whole number of requests", 1, u32::MAX);
                d.error(format!("{what} `{v}`: {range}"))
            })
        };
        if let Some(z) = a.strip_prefix("zone=") {
            l.zone = z.to_string();
        } else if let Some(b) = a.strip_prefix("burst=") {
            l.burst = num(b, "burst")?;
        } else if let Some(v) = a.strip_prefix("delay=") {
            l.delay = Delay::First(num(v, "delay")?);
        } else if a == "nodelay" {
            l.delay = Delay::Never;
        } else {
            return Err(d.error(format!("invalid parameter \"{a}\"")));
        }
    }
    if l.zone.is_empty() {
        return Err(d.error("needs zone=name"));
    }
    Ok(l)
}

/// The level's own directives over `parent`'s: each field inherited only when unset here.
fn merged(own: Level, parent: &Level) -> Level {
    Level {
        limits_from: match own.limits {
            Some(_) => Some(own.name.clone()),
            None => parent.limits_from.clone(),
        },
        limits: own.limits.or_else(|| parent.limits.clone()),
        status: own.status.or(parent.status),
        dry_run: own.dry_run.or(parent.dry_run),
        real_from: own.real_from.or_else(|| parent.real_from.clone()),
        real_header: own.real_header.or_else(|| parent.real_header.clone()),
        real_recursive: own.real_recursive.or(parent.real_recursive),
        // `return` is not inherited: a location's own rewrite phase runs its own directives.
        returns: own.returns,
        name: own.name,
    }
}

/// The level a block's own directives make over `parent`; `locations` gathers nested ones.
fn block_level(
    d: &Directive,
    name: String,
    parent: &Level,
    notes: &mut Vec<String>,
) -> Result<Level> {
    let mut own = Level {
        name,
        ..Level::default()
    };
    for c in d.block.as_deref().unwrap_or_default() {
        if c.name != "location" {
            level_directive(&mut own, c, notes)?;
        }
    }
    Ok(merged(own, parent))
}

fn server(d: &Directive, http: &Level, notes: &mut Vec<String>) -> Result<Server> {
    let children = d.block.as_deref().unwrap_or_default();
    let names: Vec<String> = children
        .iter()
        .filter(|c| c.name == "server_name")
        .flat_map(|c| c.args.iter().cloned())
        .collect();
    let label = names.first().map_or_else(
        || format!("server at {}", d.at()),
        |n| format!("server `{n}`"),
    );
    let level = block_level(d, label, http, notes)?;
    let mut locations = Vec::new();
    for c in children.iter().filter(|c| c.name == "location") {
        location(c, &level, notes, &mut locations)?;
    }
    Ok(Server {
        names,
        at: d.at(),
        level,
        locations,
    })
}

/// One `location` (and its nested ones) into `out`, over the enclosing level.
fn location(
    d: &Directive,
    parent: &Level,
    notes: &mut Vec<String>,
    out: &mut Vec<Location>,
) -> Result<()> {
    let (pattern, uri) = match d.args.as_slice() {
        [m, uri] if m == "=" => (Some(Pattern::Exact(uri.clone())), format!("= {uri}")),
        [m, uri] if m == "^~" => (Some(Pattern::Prefix(uri.clone())), format!("^~ {uri}")),
        [m, uri] if m == "~" || m == "~*" => (None, format!("{m} {uri}")),
        [uri] if uri.starts_with('@') => (None, uri.clone()),
        [uri] => (Some(Pattern::Prefix(uri.clone())), uri.clone()),
        _ => return Err(d.error("takes `[=|~|~*|^~] uri` or `@name`")),
    };
    let level = block_level(d, format!("location `{uri}`"), parent, notes)?;
    let Some(pattern) = pattern else {
        let own_limits = d
            .block
            .as_deref()
            .unwrap_or_default()
            .iter()
            .any(|c| c.name == "limit_req" || c.name == "return");
        if own_limits && !uri.starts_with('@') {
            return Err(d.error(format!(
                "regex location `{uri}` has its own limit_req or return: rlsim routes are exact paths or prefixes, so it cannot be modelled"
            )));
        }
        notes.push(format!(
            "{}: location `{uri}` is not modelled ({}): requests it would take are decided as the prefix locations decide them",
            d.at(),
            if uri.starts_with('@') { "a named location, reached only by internal redirects" } else { "a regular expression" }
        ));
        return Ok(());
    };
    if pattern.path().contains('*') {
        return Err(d.error(format!(
            "location `{uri}` contains `*`, which rlsim's route patterns cannot hold"
        )));
    }
    out.push(Location {
        pattern,
        uri,
        at: d.at(),
        level: level.clone(),
    });
    for c in d
        .block
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|c| c.name == "location")
    {
        location(c, &level, notes, out)?;
    }
    Ok(())
}
