//! nginx `limit_req` configurations (`ngx_http_limit_req_module`, with the realip module, `map`
//! and `geo`) imported as contenders: one per `server`, one `nginx-limit-req` rule per zone over
//! the locations that use it, `commit = "all_or_nothing"` as nginx looks every zone of a
//! location up before accounting any. docs/import.md lists every directive and how it maps.

mod conf;
mod key;
mod read;
mod routes;

use super::{
    Bypass, Commit, ContenderField, ContenderTable, Contents, ImportedContender, ImportedRule,
    RuleField, Selection, Text,
};
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

pub(super) const NAME: &str = "nginx";

/// nginx's words, in a text that is not JSON.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    let words = [
        "limit_req_zone",
        "limit_req ",
        "http {",
        "server {",
        "location ",
    ];
    (!t.json && words.iter().any(|w| t.text.contains(w))).then_some(7)
}

/// Imports `path`: every server, or the one (and the location) `select` names.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
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
    Ok(Contents { contenders, notes })
}

/// The locations a server decides requests by, with the server's own level as `/` when no
/// location `/` catches the requests no location takes (nginx then uses the server's), and the
/// index of the one `select` names: its rules keep their route scope among all of them.
fn locations(server: &Server, select: &Selection) -> Result<(Vec<Location>, Option<usize>)> {
    let mut out: Vec<Location> = server.locations.clone();
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
    let Some(uri) = &select.location else {
        return Ok((out, None));
    };
    match server
        .locations
        .iter()
        .position(|l| &l.uri == uri || l.pattern.path() == uri)
    {
        Some(i) => Ok((out, Some(i))),
        None => {
            let uris: Vec<&str> = server.locations.iter().map(|l| l.uri.as_str()).collect();
            Err(conf_error_at(
                &server.at,
                "location",
                format!(
                    "{} has no location `{uri}` (it has: {})",
                    server.level.name,
                    uris.join(", ")
                ),
            ))
        }
    }
}

fn conf_error_at(at: &str, directive: &str, message: String) -> crate::error::Error {
    let (file, line) = at.rsplit_once(':').unwrap_or((at, "1"));
    super::config_error(
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

/// The contender of one server; `None` when nothing in it is limited.
fn contender(
    http: &Http,
    server: &Server,
    index: usize,
    select: &Selection,
) -> Result<Option<ImportedContender>> {
    let (locs, selected) = locations(server, select)?;
    // A selected location's limits alone, routed among all the server's locations.
    let with: Vec<(&Location, Vec<Limit>)> = locs
        .iter()
        .enumerate()
        .map(|(i, l)| match selected {
            Some(s) if s != i => (l, Vec::new()),
            _ => (l, applied(l, server)),
        })
        .collect();
    let mut notes = Vec::new();
    for (l, limits) in with
        .iter()
        .enumerate()
        .filter(|(i, _)| selected.is_none_or(|s| s == *i))
        .map(|(_, w)| w)
    {
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
    let mut rules = routes::rules(http, &with, &mut notes)?;
    if rules.is_empty() {
        return Ok(None);
    }
    let (dry_run, status) = outcome(&mut rules, &mut notes);
    let label = server
        .names
        .first()
        .cloned()
        .unwrap_or_else(|| format!("nginx-{}", index + 1));
    let mut name = super::plain_name(&label, NAME);
    if let Some(l) = &select.location {
        name = format!("{name}-{}", super::plain_name(l.trim_matches('/'), NAME));
    }
    let table = ContenderTable {
        description: format!("nginx {} ({})", server.level.name, server.at),
        commit: Some(Commit::AllOrNothing),
    };
    let mut fields = Vec::new();
    let exempt = routes::common_exempt(&rules, server)?;
    if !exempt.cidrs.is_empty() || !exempt.api_keys.is_empty() {
        fields.push(ContenderField::Bypass(Bypass {
            api_keys: exempt.api_keys,
            cidrs: exempt.cidrs,
        }));
        notes.push("the map's empty key exempts these requests (nginx skips a request whose key is empty); rlsim's bypass compares the client's own address where nginx's geo compares $remote_addr after real_ip".into());
    }
    if dry_run {
        fields.push(ContenderField::DryRun(true));
    }
    fields.push(ContenderField::RefuseStatus(status));
    notes.push("limit_req zones live in shared memory: every worker of one nginx shares them, but each nginx instance has its own, so N replicas behind a balancer admit up to N times the rate".into());
    Ok(Some(ImportedContender {
        name,
        comments: vec![format!("nginx {} at {}", server.level.name, server.at)],
        table,
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
    /// Its locations' `limit_req_status` (503 when unset) and `limit_req_dry_run`.
    status: u16,
    dry_run: bool,
}

/// The contender's `dry_run` (every rule's) and `refuse_status` (its first rule's); a rule
/// that differs says its own, as its locations configure it.
fn outcome(rules: &mut [Built], notes: &mut Vec<String>) -> (bool, u16) {
    let dry_run = rules.iter().all(|r| r.dry_run);
    let status = rules[0].status;
    for r in rules.iter_mut() {
        if r.dry_run && !dry_run {
            r.rule.fields.push(RuleField::DryRun(true));
        }
        if r.status != status {
            r.rule.fields.push(RuleField::RefuseStatus(r.status));
        }
    }
    let dry: Vec<&str> = rules
        .iter()
        .filter(|r| r.dry_run)
        .map(|r| r.zone.as_str())
        .collect();
    if !dry.is_empty() {
        notes.push(format!("limit_req_dry_run on where zone {} applies: nginx refuses and delays nothing there, it only logs (and sets $limit_req_status to REJECTED_DRY_RUN / DELAYED_DRY_RUN); rlsim admits those requests and reports would_refuse", dry.join(", ")));
    }
    let mut statuses: Vec<u16> = rules
        .iter()
        .map(|r| r.status)
        .filter(|&s| s != 503)
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    for s in statuses {
        let zones: Vec<&str> = rules
            .iter()
            .filter(|r| r.status == s)
            .map(|r| r.zone.as_str())
            .collect();
        notes.push(format!("limit_req_status {s} where zone {} applies: refusals answer {s} (nginx's default is 503, which logs read as a server error)", zones.join(", ")));
    }
    (dry_run, status)
}
