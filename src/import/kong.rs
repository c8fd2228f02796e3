//! Kong's `rate-limiting` plugin, imported from a declarative configuration (`kong.yml`, deck)
//! or the Admin API's JSON of plugins, as one contender, `commit = "all_or_nothing"`, with one
//! rule per period of each plugin: a `fixed_window` for a second, minute, hour or day, a
//! `calendar_window` in UTC for a month or a year.
//!
//! Followed: `kong/plugins/rate-limiting/handler.lua` (`access`: `get_usage` reads every
//! period's count and a request is refused when any `limit - usage <= 0`, before anything is
//! counted; only an admitted request increments every period; `get_identifier` falls back to
//! the forwarded IP), `policies/init.lua` (one counter per plugin, identifier, period and
//! period start; `local` in the node's shared memory), `schema.lua` (defaults: `limit_by`
//! consumer, `policy` local, `error_code` 429) and `kong/tools/timestamp.lua`
//! (`get_timestamps`: the second, minute, hour and day start on the UTC clock; the month on
//! the 1st at 00:00 UTC and the year on 1 January at 00:00 UTC, calendar periods). Kong runs
//! one instance of a plugin per request, the most specific: a route's own, else its
//! service's, else the global one.

use super::yaml::{self, Node};
use super::{
    Commit, ContenderField, ContenderTable, Contents, Identity, ImportedContender, ImportedRule,
    Key, RuleField, RuleTable, Selection, Text, Who,
};
use crate::error::Result;
use crate::time::{
    NANOS_PER_DAY, NANOS_PER_HOUR, NANOS_PER_MIN, NANOS_PER_SEC, Nanos, duration_text,
};
use std::path::Path;

/// The periods a fixed window follows exactly, with their lengths.
const PERIODS: [(&str, Nanos); 4] = [
    ("second", NANOS_PER_SEC),
    ("minute", NANOS_PER_MIN),
    ("hour", NANOS_PER_HOUR),
    ("day", NANOS_PER_DAY),
];

/// The calendar periods, each a `calendar_window` of that `window` in UTC.
const CALENDAR: [&str; 2] = ["month", "year"];

/// How a period's rule counts.
#[derive(Clone, Copy)]
enum Window {
    /// A fixed window of this length on the clock.
    Fixed(Nanos),
    /// A calendar period in UTC (`month`, `year`).
    Calendar(&'static str),
}

const CONFIG: [&str; 16] = [
    "second",
    "minute",
    "hour",
    "day",
    "month",
    "year",
    "limit_by",
    "header_name",
    "path",
    "policy",
    "fault_tolerant",
    "redis",
    "hide_client_headers",
    "error_code",
    "error_message",
    "sync_rate",
];

/// Where a plugin is attached.
#[derive(Debug, Clone, PartialEq)]
enum Scope {
    Global,
    Service(String),
    Route(String),
}

/// One Kong route: its service and what it matches.
struct Route {
    name: String,
    service: Option<String>,
    /// Prefix patterns (`/api*`); empty: every path.
    paths: Vec<String>,
    methods: Vec<String>,
}

/// One `rate-limiting` plugin as found.
struct Plugin<'a> {
    scope: Scope,
    node: Node<'a>,
}

/// What a file holds: its routes and its rate-limiting plugins.
#[derive(Default)]
struct Found<'a> {
    routes: Vec<Route>,
    plugins: Vec<Plugin<'a>>,
    notes: Vec<String>,
    /// The file declares routes (a declarative configuration), so plugins apply to them only.
    declarative: bool,
}

pub(super) const NAME: &str = "kong";

/// The `rate-limiting` plugin: JSON with its `config`, or a declarative configuration naming it.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    if t.json {
        return (t.has_key("rate-limiting") && t.has_key("config")).then_some(1);
    }
    let plugin = t.text.lines().any(|l| {
        let l = l.trim_start().trim_start_matches("- ");
        l.starts_with("name: rate-limiting") || l.starts_with("name: \"rate-limiting\"")
    });
    let declarative = t.text.contains("_format_version") || t.text.contains("plugins:");
    (plugin && declarative).then_some(4)
}

/// Imports `path`'s enabled `rate-limiting` plugins.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let doc = yaml::load(path)?;
    let root = doc.root();
    let mut found = Found::default();
    read_root(&root, &mut found)?;
    if found.plugins.is_empty() {
        return Err(root.error("no enabled `rate-limiting` plugin: nothing to import"));
    }
    let mut notes = std::mem::take(&mut found.notes);
    let mut rules = Vec::new();
    let mut status: Option<(u16, String)> = None;
    for p in &found.plugins {
        let scope = scope_of(p, &found, &mut notes)?;
        // A plugin every route overrides answers nothing: only deciding ones share the status.
        let Some(scope) = scope else { continue };
        let code = plugin_status(&p.node, &status)?;
        status.get_or_insert((code, p.node.at()));
        rules.extend(plugin_rules(p, &scope, &mut notes)?);
    }
    if rules.is_empty() {
        return Err(root.error("every rate-limiting plugin is overridden by a more specific one on each of its routes: nothing to import"));
    }
    notes.push("each period is a fixed window on the clock, not a rolling one (`minute: 20` lets up to 40 through across a minute's end), and a refused request counts in no period".into());
    notes.push("Kong increments the counters in a timer after a request passes (`ngx.timer.at(0, increment, ...)`): requests arriving together can all read the old count and pass; rlsim counts each request before the next one decides".into());
    notes.push("Kong's windows start on the UTC clock (the second, minute, hour, day); rlsim's fixed windows start at virtual time 0, which is the same when the scenario's `start` is on a UTC day boundary (the default, 2026-01-01T00:00:00Z)".into());
    notes.push("Kong answers with RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset and X-RateLimit-Limit-<Period>, X-RateLimit-Remaining-<Period> headers (none with hide_client_headers) and Retry-After on a refusal; rlsim's clients read only Retry-After".into());
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kong".into());
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: super::plain_name(&format!("kong-{stem}"), NAME),
            comments: vec![format!("Kong configuration {}", path.display())],
            table: ContenderTable {
                description: format!("Kong rate-limiting plugins ({})", path.display()),
                commit: Some(Commit::AllOrNothing),
            },
            fields: vec![ContenderField::RefuseStatus(
                status.map(|s| s.0).unwrap_or(429),
            )],
            rules,
            notes: Vec::new(),
        }],
        notes,
    })
}

/// A foreign key as declarative configurations write it: a name, or `{ name: ... }` / `{ id }`.
fn reference(n: &Node<'_>) -> Result<String> {
    if n.is_mapping() {
        if let Some(name) = n.opt_str("name")? {
            return Ok(name);
        }
        return n.req_str("id");
    }
    n.str()
}

/// The three forms: a declarative configuration, the Admin API's `{ "data": [...] }`, one plugin.
fn read_root<'a>(root: &Node<'a>, found: &mut Found<'a>) -> Result<()> {
    if root.get("name")?.is_some() && root.get("config")?.is_some() {
        return read_plugin(root, None, found);
    }
    if let Some(data) = root.get("data")? {
        for p in data.items()? {
            read_plugin(&p, None, found)?;
        }
        return Ok(());
    }
    found.declarative = true;
    if let Some(c) = root.get("consumers")? {
        for consumer in c.items()? {
            if let Some(ps) = consumer.get("plugins")? {
                for p in ps.items()? {
                    if p.opt_str("name")?.as_deref() == Some("rate-limiting") {
                        return Err(consumer_error(&p));
                    }
                }
            }
        }
    }
    if let Some(services) = root.get("services")? {
        for s in services.items()? {
            let name = s
                .opt_str("name")?
                .or(s.opt_str("id")?)
                .ok_or_else(|| s.error("a service needs a `name` (or `id`)"))?;
            let scope = Scope::Service(name.clone());
            for p in list(&s, "plugins")? {
                read_plugin(&p, Some(scope.clone()), found)?;
            }
            for r in list(&s, "routes")? {
                read_route(&r, Some(name.clone()), found)?;
            }
        }
    }
    for r in list(root, "routes")? {
        let service = r.get("service")?.map(|s| reference(&s)).transpose()?;
        read_route(&r, service, found)?;
    }
    for p in list(root, "plugins")? {
        read_plugin(&p, None, found)?;
    }
    Ok(())
}

fn list<'a>(n: &Node<'a>, key: &str) -> Result<Vec<Node<'a>>> {
    match n.get(key)? {
        Some(l) => l.items(),
        None => Ok(Vec::new()),
    }
}

fn consumer_error(p: &Node<'_>) -> crate::error::Error {
    p.error("a rate-limiting plugin on a consumer (or consumer group) cannot be imported: it applies to one consumer's requests only, which no rlsim rule condition selects; import the plugins of the routes, services and the global one")
}

fn read_route<'a>(r: &Node<'a>, service: Option<String>, found: &mut Found<'a>) -> Result<()> {
    let name = r
        .opt_str("name")?
        .or(r.opt_str("id")?)
        .ok_or_else(|| r.error("a route needs a `name` (or `id`)"))?;
    let mut paths = Vec::new();
    if let Some(ps) = r.get("paths")? {
        for p in ps.items()? {
            let text = p.str()?;
            if text.starts_with('~') {
                return Err(p.error("a regular-expression path cannot be imported: rlsim's routes are exact paths or prefixes"));
            }
            // Kong matches a path as a plain prefix of the request's.
            paths.push(format!("{text}*"));
        }
    }
    let mut methods = Vec::new();
    if let Some(ms) = r.get("methods")? {
        for m in ms.items()? {
            methods.push(m.str()?.to_ascii_uppercase());
        }
    }
    for other in ["hosts", "headers", "snis"] {
        if r.get(other)?.is_some() {
            found.notes.push(format!("route `{name}` ({}): rlsim's requests carry no host or other header, so its `{other}` is taken as always matching", r.at()));
        }
    }
    let scope = Scope::Route(name.clone());
    for p in list(r, "plugins")? {
        read_plugin(&p, Some(scope.clone()), found)?;
    }
    found.routes.push(Route {
        name,
        service,
        paths,
        methods,
    });
    Ok(())
}

/// One plugin entry; `scope` when nested under a service or route.
fn read_plugin<'a>(p: &Node<'a>, scope: Option<Scope>, found: &mut Found<'a>) -> Result<()> {
    let name = p.req_str("name")?;
    if name != "rate-limiting" {
        if name.contains("rate") || name.contains("limit") {
            found.notes.push(format!(
                "plugin `{name}` ({}) is not imported: only the `rate-limiting` plugin is",
                p.at()
            ));
        }
        return Ok(());
    }
    p.only(&[
        "name",
        "config",
        "enabled",
        "protocols",
        "tags",
        "id",
        "instance_name",
        "created_at",
        "updated_at",
        "service",
        "route",
        "consumer",
        "consumer_group",
    ])?;
    if p.get("consumer")?.is_some() || p.get("consumer_group")?.is_some() {
        return Err(consumer_error(p));
    }
    if p.opt_bool("enabled")? == Some(false) {
        found.notes.push(format!(
            "rate-limiting plugin at {} is disabled (`enabled: false`): skipped",
            p.at()
        ));
        return Ok(());
    }
    let scope = match scope {
        Some(s) => s,
        None => match (p.get("route")?, p.get("service")?) {
            (Some(r), _) => Scope::Route(reference(&r)?),
            (None, Some(s)) => Scope::Service(reference(&s)?),
            (None, None) => Scope::Global,
        },
    };
    found.plugins.push(Plugin {
        scope,
        node: p.clone(),
    });
    Ok(())
}

/// `error_code`; every plugin must answer the same (one contender has one refusal status).
fn plugin_status(p: &Node<'_>, first: &Option<(u16, String)>) -> Result<u16> {
    let Some(config) = p.get("config")? else {
        return Ok(429);
    };
    let code = match config.get("error_code")? {
        Some(c) => {
            let v = c.i64()?;
            let Some(code) = u16::try_from(v).ok().filter(|v| (400..=599).contains(v)) else {
                return Err(c.error(format!(
                    "{v}: rlsim's refusals answer a status from 400 to 599"
                )));
            };
            code
        }
        None => 429,
    };
    if let Some((f, at)) = first
        && *f != code
    {
        return Err(p.error(format!("this plugin answers {code} and the one at {at} answers {f}: one contender has one refusal status; import them one file each")));
    }
    Ok(code)
}

/// The requests a plugin decides: patterns, skipped patterns and methods.
struct Applies {
    routes: Vec<String>,
    skip: Vec<String>,
    methods: Vec<String>,
    label: String,
}

/// The routes a plugin decides for, after the more specific plugins took theirs; `None` when
/// none is left (noted).
fn scope_of(p: &Plugin<'_>, found: &Found<'_>, notes: &mut Vec<String>) -> Result<Option<Applies>> {
    let own = |r: &Route| {
        found
            .plugins
            .iter()
            .any(|q| q.scope == Scope::Route(r.name.clone()))
    };
    let service_own = |r: &Route| {
        r.service.as_ref().is_some_and(|s| {
            found
                .plugins
                .iter()
                .any(|q| q.scope == Scope::Service(s.clone()))
        })
    };
    let (label, covered): (String, Vec<&Route>) = match &p.scope {
        Scope::Route(n) => (
            format!("route-{n}"),
            found.routes.iter().filter(|r| &r.name == n).collect(),
        ),
        Scope::Service(s) => (
            format!("service-{s}"),
            found
                .routes
                .iter()
                .filter(|r| r.service.as_ref() == Some(s) && !own(r))
                .collect(),
        ),
        Scope::Global => (
            "global".into(),
            found
                .routes
                .iter()
                .filter(|r| !own(r) && !service_own(r))
                .collect(),
        ),
    };
    if found.declarative && found.routes.is_empty() && p.scope == Scope::Global {
        notes.push(
            "the file declares no routes: the global plugin is imported over every request".into(),
        );
    }
    if !found.declarative || (found.routes.is_empty() && p.scope == Scope::Global) {
        let kind = match p.scope {
            Scope::Global => "global",
            Scope::Service(_) => "service",
            Scope::Route(_) => "route",
        };
        if p.scope != Scope::Global {
            notes.push(format!("plugin at {} is on a {kind}, which this file does not describe: imported over every request", p.node.at()));
        }
        let n = found
            .plugins
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .unwrap_or(0);
        let label = if found.plugins.len() > 1 && !found.declarative {
            format!("{kind}{}", n + 1)
        } else {
            kind.into()
        };
        return Ok(Some(Applies {
            routes: Vec::new(),
            skip: Vec::new(),
            methods: Vec::new(),
            label,
        }));
    }
    let declared = match &p.scope {
        Scope::Route(n) => found.routes.iter().any(|r| &r.name == n),
        Scope::Service(n) => found.routes.iter().any(|r| r.service.as_ref() == Some(n)),
        Scope::Global => true,
    };
    if !declared {
        notes.push(format!("plugin at {} ({label}) names a route or service with no route in this file: no request reaches it", p.node.at()));
        return Ok(None);
    }
    if covered.is_empty() {
        notes.push(format!("plugin at {} ({label}) decides for no route: a route's or service's own rate-limiting plugin replaces it everywhere (Kong runs the most specific one)", p.node.at()));
        return Ok(None);
    }
    applies(p, label, &covered, &found.routes, notes).map(Some)
}

fn applies(
    p: &Plugin<'_>,
    label: String,
    covered: &[&Route],
    all: &[Route],
    notes: &mut Vec<String>,
) -> Result<Applies> {
    let every = covered.iter().any(|r| r.paths.is_empty());
    let mine: Vec<&String> = covered.iter().flat_map(|r| &r.paths).collect();
    let others = all
        .iter()
        .filter(|r| !covered.iter().any(|c| c.name == r.name))
        .flat_map(|r| r.paths.iter().map(move |o| (r, o)));
    let mut skip = Vec::new();
    for (r, o) in others {
        let base = o.trim_end_matches('*');
        // Kong's router takes the longest matching path: a longer path of another route
        // under one of ours takes its requests.
        let under = every
            || mine
                .iter()
                .any(|m| base.starts_with(m.trim_end_matches('*')) && o != *m);
        if under && !r.methods.is_empty() {
            return Err(p.node.error(format!("route `{}` takes only the {} requests of {o}, which this plugin ({label}) decides for the other methods: rlsim's `skip` cannot exclude one method of a path; give that route no `methods` in a copy", r.name, r.methods.join(", "))));
        }
        if under && !skip.contains(o) {
            skip.push(o.clone());
        }
    }
    let routes = if every {
        Vec::new()
    } else {
        let mut r: Vec<String> = Vec::new();
        for m in mine {
            if !r.contains(m) {
                r.push(m.clone());
            }
        }
        r
    };
    let mut methods: Vec<String> = Vec::new();
    if covered.iter().all(|r| !r.methods.is_empty()) {
        for m in covered.iter().flat_map(|r| &r.methods) {
            if !methods.contains(m) {
                methods.push(m.clone());
            }
        }
        if covered.len() > 1 {
            notes.push(format!("{label}: its routes' methods are merged ({}): rlsim applies the rules to any of them on any of the routes' paths", methods.join(", ")));
        }
    }
    Ok(Applies {
        routes,
        skip,
        methods,
        label,
    })
}

/// `limit_by`'s key: one or two (key, condition) variants, each a set of rules.
struct Variant {
    suffix: &'static str,
    key: Key,
    fields: Vec<RuleField>,
    comment: String,
}

fn peer() -> Key {
    Key::Identity(Identity::new(Who::Peer))
}

fn variants(config: &Node<'_>, applies: &Applies, scope: &Scope) -> Result<Vec<Variant>> {
    let limit_by = config
        .opt_str("limit_by")?
        .unwrap_or_else(|| "consumer".into());
    let ip_comment = "the forwarded IP (kong.client.get_forwarded_ip: the socket peer unless kong.conf's trusted_ips and real_ip_header say otherwise)";
    let one = |key, comment: String| {
        vec![Variant {
            suffix: "",
            key,
            fields: Vec::new(),
            comment,
        }]
    };
    Ok(match limit_by.as_str() {
        "consumer" | "credential" => {
            let user = Identity {
                fallback: Some(Box::new(Identity::new(Who::Peer))),
                ..Identity::new(Who::UserElse)
            };
            one(
                Key::Identity(user),
                format!(
                    "limit_by {limit_by}: the authenticated {limit_by}'s id (rlsim's user of a signed-in request), else {ip_comment}"
                ),
            )
        }
        "ip" => one(peer(), format!("limit_by ip: {ip_comment}")),
        "service" => {
            if *scope == Scope::Global {
                let n = config.req("limit_by")?;
                return Err(n.error("limit_by service on a global plugin keeps one counter per service, which rlsim cannot key on: put the plugin on each service instead"));
            }
            one(
                Key::Fields(Vec::new()),
                "limit_by service: one counter the plugin's service shares (`key = []`)".into(),
            )
        }
        "header" => {
            let h = config.req("header_name")?;
            if !h.str()?.eq_ignore_ascii_case("x-api-key") {
                return Err(h.error("only X-API-Key can be imported as a header key: rlsim's requests carry no other header"));
            }
            vec![
                Variant {
                    suffix: "",
                    key: Key::Fields(vec!["api_key"]),
                    fields: vec![RuleField::HasApiKey(true)],
                    comment: "limit_by header X-API-Key: the header's value".into(),
                },
                Variant {
                    suffix: ".no_key",
                    key: peer(),
                    fields: vec![RuleField::HasApiKey(false)],
                    comment: format!("limit_by header, a request without X-API-Key: {ip_comment}"),
                },
            ]
        }
        "path" => path_variants(config, applies, ip_comment)?,
        _ => {
            let n = config.req("limit_by")?;
            return Err(n.error(format!(
                "`{limit_by}`: limit_by is one of consumer, credential, ip, service, header, path"
            )));
        }
    })
}

/// `limit_by path`: the configured path shares one counter, every other path falls back to the IP.
fn path_variants(config: &Node<'_>, applies: &Applies, ip: &str) -> Result<Vec<Variant>> {
    let p = config.req("path")?;
    let path = p.str()?;
    let matches = |pat: &String| match pat.strip_suffix('*') {
        Some(base) => path.starts_with(base),
        None => *pat == path,
    };
    let mine = (applies.routes.is_empty() || applies.routes.iter().any(matches))
        && !applies.skip.iter().any(matches);
    let mut out = Vec::new();
    if mine {
        out.push(Variant {
            suffix: ".path",
            key: Key::Fields(Vec::new()),
            fields: vec![RuleField::Routes(vec![path.clone()])],
            comment: format!("limit_by path: requests to exactly {path} share one counter"),
        });
    }
    out.push(Variant {
        suffix: "",
        key: peer(),
        fields: if mine {
            vec![RuleField::Skip(vec![path.clone()])]
        } else {
            Vec::new()
        },
        comment: format!("limit_by path, any other path: {ip}"),
    });
    Ok(out)
}

/// A plugin's rules: one per period and key variant.
fn plugin_rules(
    p: &Plugin<'_>,
    applies: &Applies,
    notes: &mut Vec<String>,
) -> Result<Vec<ImportedRule>> {
    let config = p.node.req("config")?;
    config.only(&CONFIG).or_else(|e| {
        // The deprecated `redis_host`-style shorthands are the `redis` record.
        match config
            .unknown(&CONFIG)?
            .iter()
            .all(|(k, _)| k.starts_with("redis_"))
        {
            true => Ok(()),
            false => Err(e),
        }
    })?;
    let mut periods = Vec::new();
    let all = PERIODS
        .into_iter()
        .map(|(p, w)| (p, Window::Fixed(w)))
        .chain(CALENDAR.into_iter().map(|p| (p, Window::Calendar(p))));
    for (period, window) in all {
        if let Some(n) = config.get(period)? {
            let v = n.f64()?;
            if v <= 0.0 || !v.is_finite() || v > u32::MAX as f64 {
                return Err(n.error(format!(
                    "{v}: a limit must be a number of requests above 0 and at most {}",
                    u32::MAX
                )));
            }
            let limit = v.ceil() as u64;
            if v.fract() != 0.0 {
                notes.push(format!("{}.{period}: Kong refuses when `limit - usage <= 0`, so a limit of {v} admits {limit}", applies.label));
            }
            periods.push((period, window, limit));
        }
    }
    if periods.is_empty() {
        return Err(
            config.error("at least one of second, minute, hour, day, month, year is required")
        );
    }
    policy_notes(&config, &applies.label, notes)?;
    let mut rules = Vec::new();
    for v in variants(&config, applies, &p.scope)? {
        for &(period, window, limit) in &periods {
            rules.push(rule(p, applies, &v, period, window, limit));
        }
    }
    Ok(rules)
}

fn policy_notes(config: &Node<'_>, label: &str, notes: &mut Vec<String>) -> Result<()> {
    let policy = config.opt_str("policy")?.unwrap_or_else(|| "local".into());
    match policy.as_str() {
        "local" => notes.push(format!("{label}: policy local counts in each Kong node's shared memory: N nodes admit up to N times each limit")),
        "cluster" => notes.push(format!("{label}: policy cluster counts in Kong's database, shared by every node (each node reads and increments it per request)")),
        "redis" => {
            notes.push(format!("{label}: policy redis counts in Redis, shared by every node; fault_tolerant (default true) lets every request through while Redis fails, which rlsim's store never does"));
            if let Some(s) = config.get("sync_rate")?
                && s.f64()? > 0.0
            {
                notes.push(format!("{label}: sync_rate {} batches the increments to Redis every so many seconds: each node admits on its own counts in between", s.f64()?));
            }
        }
        other => {
            let n = config.req("policy")?;
            return Err(n.error(format!("`{other}`: policy is one of local, cluster, redis")));
        }
    }
    Ok(())
}

fn rule(
    p: &Plugin<'_>,
    a: &Applies,
    v: &Variant,
    period: &str,
    window: Window,
    limit: u64,
) -> ImportedRule {
    let counted = "a refused request is not counted (Kong checks every period before counting any: commit all_or_nothing)";
    let (algorithm, window, how, mut fields) = match window {
        Window::Fixed(w) => (
            "fixed_window",
            duration_text(w),
            format!("a fixed window aligned on the clock; {counted}"),
            Vec::new(),
        ),
        Window::Calendar(c) => {
            let (from, ttl) = match c {
                "year" => ("1 January", "365d"),
                _ => ("the 1st", "30d"),
            };
            (
                "calendar_window",
                c.to_string(),
                format!(
                    "a calendar {c} from {from} 00:00 UTC (get_timestamps), its counter living {ttl} from its first count (expiration.lua); {counted}"
                ),
                vec![
                    RuleField::TimeZone("UTC".into()),
                    RuleField::CounterTtl(ttl.into()),
                ],
            )
        }
    };
    let comments = vec![
        format!(
            "rate-limiting plugin at {} ({}): {limit} per {period}",
            p.node.at(),
            a.label
        ),
        how,
        format!("key: {}", v.comment),
    ];
    let table = RuleTable {
        name: super::plain_name(&format!("{}.{period}{}", a.label, v.suffix), NAME),
        algorithm,
        limit,
        window,
        burst: None,
        key: v.key.clone(),
    };
    let has_routes = v.fields.iter().any(|f| matches!(f, RuleField::Routes(_)));
    if !a.routes.is_empty() && !has_routes {
        fields.push(RuleField::Routes(a.routes.clone()));
    }
    let mut skip = a.skip.clone();
    for f in &v.fields {
        match f {
            RuleField::Skip(xs) => skip.extend(xs.iter().cloned()),
            other => fields.push(other.clone()),
        }
    }
    if !skip.is_empty() {
        fields.push(RuleField::Skip(skip));
    }
    if !a.methods.is_empty() {
        fields.push(RuleField::Methods(a.methods.clone()));
    }
    ImportedRule {
        comments,
        table,
        fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Kind;

    fn toml(name: &str, text: &str) -> Result<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        let i = import(&p, &Selection::default())?;
        let mut t = i.contenders[0].to_toml(None).expect("writes");
        t.push_str(&i.notes.join("\n"));
        Ok(t)
    }

    #[test]
    fn kong_files_are_detected_from_their_content() {
        let yml = "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {minute: 5}\n";
        assert_eq!(Kind::detect(yml), Some(Kind::Kong));
        let json = "{\"name\": \"rate-limiting\", \"config\": {\"minute\": 5}}";
        assert_eq!(Kind::detect(json), Some(Kind::Kong));
        assert_eq!(Kind::parse("kong"), Ok(Kind::Kong));
    }

    /// `limit_by path`: the path shares one counter, every other path is counted per IP; a
    /// fractional limit admits its ceiling.
    #[test]
    fn limit_by_path_splits_the_configured_path_from_the_ip_fallback() {
        let t = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config:\n      second: 2.5\n      limit_by: path\n      path: /search\n",
        )
        .expect("imports");
        assert!(t.contains("name = \"global.second.path\"\nalgorithm = \"fixed_window\"\nlimit = 3\nwindow = \"1s\"\nkey = []\nroutes = [\"/search\"]\n"), "{t}");
        assert!(t.contains("name = \"global.second\"\nalgorithm = \"fixed_window\"\nlimit = 3\nwindow = \"1s\"\nkey = { identity = \"peer\" }\nskip = [\"/search\"]\n"), "{t}");
        assert!(t.contains("a limit of 2.5 admits 3"), "{t}");
        assert!(
            t.contains("no routes: the global plugin is imported over every request"),
            "{t}"
        );
    }

    /// A month and a year limit are calendar windows in UTC, keyed and matched as the
    /// plugin's other periods; the counters' expiry is noted.
    #[test]
    fn month_and_year_limits_are_calendar_windows_in_utc() {
        let t = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nroutes:\n  - name: r\n    paths: [/r]\n    plugins:\n      - name: rate-limiting\n        config:\n          minute: 5\n          month: 1000\n          year: 10000\n          limit_by: ip\n",
        )
        .expect("imports");
        assert_eq!(t.matches("[[contender.rule]]").count(), 3, "{t}");
        assert_eq!(
            t.matches("algorithm = \"calendar_window\"").count(),
            2,
            "{t}"
        );
        assert!(t.contains("name = \"route-r.minute\"\nalgorithm = \"fixed_window\"\nlimit = 5\nwindow = \"1m\"\nkey = { identity = \"peer\" }\nroutes = [\"/r*\"]\n"), "{t}");
        assert!(t.contains("name = \"route-r.month\"\nalgorithm = \"calendar_window\"\nlimit = 1000\nwindow = \"month\"\nkey = { identity = \"peer\" }\ntime_zone = \"UTC\"\ncounter_ttl = \"30d\"\nroutes = [\"/r*\"]\n"), "{t}");
        assert!(t.contains("name = \"route-r.year\"\nalgorithm = \"calendar_window\"\nlimit = 10000\nwindow = \"year\"\nkey = { identity = \"peer\" }\ntime_zone = \"UTC\"\ncounter_ttl = \"365d\"\nroutes = [\"/r*\"]\n"), "{t}");
        assert!(
            t.contains("# a calendar month from the 1st 00:00 UTC (get_timestamps)"),
            "{t}"
        );
        assert!(
            t.contains("# a calendar year from 1 January 00:00 UTC (get_timestamps)"),
            "{t}"
        );
        assert!(
            t.contains("its counter living 30d from its first count (expiration.lua)"),
            "{t}"
        );
        // A month alone is enough; no period at all is refused, naming all six.
        let t = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {month: 2.5}\n",
        )
        .expect("imports");
        assert!(t.contains("name = \"global.month\"\nalgorithm = \"calendar_window\"\nlimit = 3\nwindow = \"month\"\n"), "{t}");
        let e = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {limit_by: ip}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("at least one of second, minute, hour, day, month, year is required"),
            "{e}"
        );
    }

    /// A route's own plugin replaces the service's, which then decides for no route (noted); a
    /// disabled plugin is skipped; differing error codes are refused.
    #[test]
    fn the_most_specific_plugin_wins_and_disabled_ones_are_skipped() {
        let t = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nservices:\n  - name: s\n    plugins:\n      - name: rate-limiting\n        config: {minute: 9}\n    routes:\n      - name: r\n        paths: [/r]\n        methods: [get]\n        plugins:\n          - name: rate-limiting\n            config: {minute: 4, error_code: 503}\n          - name: rate-limiting\n            enabled: false\n            config: {minute: 1}\n",
        )
        .expect("imports");
        assert_eq!(t.matches("[[contender.rule]]").count(), 1, "{t}");
        assert!(t.contains("refuse_status = 503"), "{t}");
        assert!(t.contains("name = \"route-r.minute\"\nalgorithm = \"fixed_window\"\nlimit = 4\nwindow = \"1m\"\nkey = { fallback = { identity = \"peer\" }, identity = \"user_else\" }\nroutes = [\"/r*\"]\nmethods = [\"GET\"]\n"), "{t}");
        assert!(t.contains("(service-s) decides for no route"), "{t}");
        assert!(t.contains("is disabled"), "{t}");
        let e = toml(
            "kong.yml",
            "_format_version: \"3.0\"\nroutes:\n  - name: r\n    paths: [/r]\n  - name: q\n    paths: [/q]\nplugins:\n  - name: rate-limiting\n    route: r\n    config: {minute: 4, error_code: 503}\n  - name: rate-limiting\n    config: {minute: 4}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("kong.yml:11:") && e.contains("answers 429 and the one at"),
            "{e}"
        );
    }
}
