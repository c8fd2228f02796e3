//! nginx `limit_req` configurations (`ngx_http_limit_req_module`, with the realip module, `map`
//! and `geo`) imported as contenders: one per `server`, one `nginx-limit-req` rule per zone over
//! the locations that use it, `commit = "all_or_nothing"` as nginx looks every zone of a
//! location up before accounting any. docs/import.md lists every directive and how it maps.

mod key;
mod read;
mod routes;

use super::conf;
use super::{Fields, Imported, ImportedContender, ImportedRule, Kind, Selection};
use crate::error::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// `limit_req_zone`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Zone {
    name: String,
    key: String,
    size: String,
    /// Requests per second or, when `true`, per minute.
    rate: (u64, bool),
    at: String,
}

/// `limit_req`'s delay: every excess request delayed (the default), none, or past the first N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delay {
    All,
    /// `nodelay`.
    Never,
    First(u64),
}

/// `limit_req zone=... burst=... nodelay|delay=`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limit {
    zone: String,
    burst: u64,
    delay: Delay,
    at: String,
}

/// What a level (http, server, location) configures, merged with its parents'.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Level {
    /// How the level is named in notes: `http`, "server `api`", "location `/x`".
    name: String,
    limits: Option<Vec<Limit>>,
    /// The level whose `limit_req` list this is (itself, or the one inherited from).
    limits_from: Option<String>,
    status: Option<u16>,
    dry_run: Option<bool>,
    real_from: Option<Vec<String>>,
    real_header: Option<String>,
    real_recursive: Option<bool>,
    /// Where a `return` of this very level is.
    returns: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MapDef {
    source: String,
    default: Option<String>,
    entries: Vec<(String, String)>,
    at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Geo {
    source: Option<String>,
    default: String,
    entries: Vec<(String, String)>,
    at: String,
}

/// A location's URI pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pattern {
    Prefix(String),
    Exact(String),
}

impl Pattern {
    fn path(&self) -> &str {
        match self {
            Pattern::Prefix(p) | Pattern::Exact(p) => p,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Location {
    pattern: Pattern,
    uri: String,
    at: String,
    level: Level,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Server {
    names: Vec<String>,
    at: String,
    level: Level,
    locations: Vec<Location>,
}

#[derive(Debug, Default)]
pub(crate) struct Http {
    zones: BTreeMap<String, Zone>,
    maps: BTreeMap<String, MapDef>,
    geos: BTreeMap<String, Geo>,
    level: Level,
    servers: Vec<Server>,
}

/// Imports `path`: every server, or the one (and the location) `select` names.
pub fn import(path: &Path, select: &Selection) -> Result<Imported> {
    let top = conf::read(path)?;
    let mut notes = Vec::new();
    let http = read::http(path, &top, &mut notes)?;
    let servers: Vec<&Server> = match &select.server {
        None => http.servers.iter().collect(),
        Some(name) => http
            .servers
            .iter()
            .filter(|s| s.names.contains(name))
            .collect(),
    };
    if servers.is_empty() {
        let names: Vec<String> = http.servers.iter().flat_map(|s| s.names.clone()).collect();
        let first = top
            .iter()
            .find(|d| d.name == "http")
            .expect("read::http found it");
        return Err(first.error(match &select.server {
            Some(n) => format!(
                "no server has server_name `{n}` (these do: {})",
                names.join(", ")
            ),
            None => "no `server` block: nothing to import".into(),
        }));
    }
    let mut contenders = Vec::new();
    let mut names = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        match contender(&http, s, i, select)? {
            Some(mut c) => {
                while names.contains(&c.name) {
                    c.name.push_str("-2");
                }
                names.push(c.name.clone());
                contenders.push(c);
            }
            None => notes.push(format!("{}: {} limits no request (no limit_req applies, or every request is answered by return)", s.at, s.level.name)),
        }
    }
    Ok(Imported {
        kind: Kind::Nginx,
        contenders,
        notes,
    })
}

/// A rule's name from a zone's or a section's.
fn plain(name: &str) -> String {
    super::plain_name(name, "nginx")
}

/// The locations a server decides requests by, with the server's own level as `/` when no
/// location `/` catches the requests no location takes (nginx then uses the server's).
fn locations(server: &Server, select: &Selection) -> Result<Vec<Location>> {
    let mut out: Vec<Location> = server.locations.clone();
    if let Some(uri) = &select.location {
        out.retain(|l| &l.uri == uri || l.pattern.path() == uri);
        if out.is_empty() {
            let uris: Vec<&str> = server.locations.iter().map(|l| l.uri.as_str()).collect();
            return Err(conf_error_at(
                &server.at,
                "location",
                format!(
                    "{} has no location `{uri}` (it has: {})",
                    server.level.name,
                    uris.join(", ")
                ),
            ));
        }
        out.truncate(1);
        return Ok(out);
    }
    if !out.iter().any(|l| l.pattern == Pattern::Prefix("/".into())) {
        out.push(Location {
            pattern: Pattern::Prefix("/".into()),
            uri: "/ (no location takes it: the server's own)".into(),
            at: server.at.clone(),
            level: Level {
                name: format!("{} (requests no location takes)", server.level.name),
                ..server.level.clone()
            },
        });
    }
    Ok(out)
}

fn conf_error_at(at: &str, directive: &str, message: String) -> crate::error::Error {
    let (file, line) = at.rsplit_once(':').unwrap_or((at, "1"));
    conf::config_error(
        Path::new(file),
        line.parse().unwrap_or(1),
        directive,
        message,
    )
}

/// The limits a location applies: none when it (or its server) answers with `return`.
fn applied(l: &Location, server: &Server) -> Vec<Limit> {
    if l.level.returns.is_some() || server.level.returns.is_some() {
        return Vec::new();
    }
    l.level.limits.clone().unwrap_or_default()
}

/// One setting every limiting location must agree on (`limit_req_status`, `limit_req_dry_run`).
fn agreed<T: PartialEq + Copy + std::fmt::Debug>(
    locs: &[(&Location, Vec<Limit>)],
    what: &str,
    get: impl Fn(&Level) -> Option<T>,
) -> Result<Option<T>> {
    let mut seen: Option<(Option<T>, &Location)> = None;
    for (l, limits) in locs.iter().filter(|(_, lim)| !lim.is_empty()) {
        let _ = limits;
        let v = get(&l.level);
        match seen {
            None => seen = Some((v, l)),
            Some((w, first)) if w != v => {
                return Err(conf_error_at(
                    &l.at,
                    what,
                    format!(
                        "{what} differs between location `{}` ({first_v:?}) and location `{}` ({v:?}): one rlsim contender has one {what}; import one location with `location = ...` (--location)",
                        first.uri,
                        l.uri,
                        first_v = w
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(seen.and_then(|(v, _)| v))
}

/// The contender of one server; `None` when nothing in it is limited.
fn contender(
    http: &Http,
    server: &Server,
    index: usize,
    select: &Selection,
) -> Result<Option<ImportedContender>> {
    let locs = locations(server, select)?;
    let with: Vec<(&Location, Vec<Limit>)> = locs.iter().map(|l| (l, applied(l, server))).collect();
    let mut notes = Vec::new();
    for (l, limits) in &with {
        if let Some(at) = l.level.returns.as_ref().or(server.level.returns.as_ref()) {
            notes.push(format!("location `{}` is answered by `return` ({at}), which runs in the rewrite phase, before limit_req's preaccess phase: it is never limited", l.uri));
        } else if !limits.is_empty()
            && l.level.limits_from.as_deref() != Some(l.level.name.as_str())
        {
            let zones: Vec<String> = limits.iter().map(|x| format!("zone={}", x.zone)).collect();
            notes.push(format!(
                "location `{}` has no limit_req of its own and inherits {} from {} (nginx inherits limit_req only into a level that has none: one limit_req there would drop them all)",
                l.uri, zones.join(", "), l.level.limits_from.as_deref().unwrap_or("a parent")
            ));
        }
    }
    let rules = routes::rules(http, &with, &mut notes)?;
    if rules.is_empty() {
        return Ok(None);
    }
    let dry_run = agreed(&with, "limit_req_dry_run", |l| l.dry_run)?.unwrap_or(false);
    let status = agreed(&with, "limit_req_status", |l| l.status)?.unwrap_or(503);
    let mut fields: Fields = Vec::new();
    let label = server
        .names
        .first()
        .cloned()
        .unwrap_or_else(|| format!("nginx-{}", index + 1));
    let mut name = plain(&label);
    if let Some(l) = &select.location {
        name = format!("{name}-{}", plain(l.trim_matches('/')));
    }
    fields.push((
        "description".into(),
        format!("nginx {} ({})", server.level.name, server.at).into(),
    ));
    fields.push(("commit".into(), "all_or_nothing".into()));
    let exempt = routes::common_exempt(&rules, server)?;
    if !exempt.cidrs.is_empty() || !exempt.api_keys.is_empty() {
        let mut b = toml::Table::new();
        if !exempt.cidrs.is_empty() {
            b.insert(
                "cidrs".into(),
                exempt
                    .cidrs
                    .iter()
                    .map(|c| toml::Value::from(c.as_str()))
                    .collect::<Vec<_>>()
                    .into(),
            );
        }
        if !exempt.api_keys.is_empty() {
            b.insert(
                "api_keys".into(),
                exempt
                    .api_keys
                    .iter()
                    .map(|c| toml::Value::from(c.as_str()))
                    .collect::<Vec<_>>()
                    .into(),
            );
        }
        fields.push(("bypass".into(), toml::Value::Table(b)));
        notes.push("the map's empty key exempts these requests (nginx skips a request whose key is empty); rlsim's bypass compares the client's own address where nginx's geo compares $remote_addr after real_ip".into());
    }
    if dry_run {
        fields.push(("dry_run".into(), true.into()));
        notes.push("limit_req_dry_run on: nginx refuses and delays nothing, it only logs (and sets $limit_req_status to REJECTED_DRY_RUN / DELAYED_DRY_RUN); rlsim admits everything and reports would_refuse".into());
    }
    fields.push(("refuse_status".into(), i64::from(status).into()));
    if status != 503 {
        notes.push(format!("limit_req_status {status}: refusals answer {status} (nginx's default is 503, which logs read as a server error)"));
    }
    notes.push("limit_req zones live in shared memory: every worker of one nginx shares them, but each nginx instance has its own, so N replicas behind a balancer admit up to N times the rate".into());
    Ok(Some(ImportedContender {
        name,
        comments: vec![format!("nginx {} at {}", server.level.name, server.at)],
        fields,
        rules: rules.into_iter().map(|r| r.rule).collect(),
        notes,
    }))
}

/// A rule with its exemption, before the contender merges the exemptions into its bypass.
pub(crate) struct Built {
    rule: ImportedRule,
    exempt: key::Exempt,
    zone: String,
}
