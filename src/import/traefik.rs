//! Traefik's `rateLimit` middleware in a dynamic configuration (YAML), imported as one
//! contender with one `go-x-time-rate` rule per router that uses a rate-limit middleware.
//!
//! Followed: `pkg/middlewares/ratelimiter/rate_limiter.go` (`New`: burst `max(burst, 1)`, period
//! default 1 s, `rate = float64(average·1e9) / float64(period)`, average 0 = `rate.Inf`;
//! `maxDelay` 500 ms when the rate is under 1/s, else `time.Second / (time.Duration(rate)·2)`;
//! `ServeHTTP`: a delay over `maxDelay` answers 429, a shorter one is waited out), and
//! `in_memory_limiter.go` (`Allow`: one `rate.Limiter` per source, `Reserve`, and `Cancel` of a
//! reservation over `maxDelay`), `pkg/ip/strategy.go` (`DepthStrategy`, `PoolStrategy`,
//! `RemoteAddrStrategy`). Traefik builds a router's middlewares for that router, so each router
//! using a middleware has its own buckets: one rule per (router, middleware).

use super::yaml::{self, Node};
use super::{
    Commit, ContenderField, ContenderTable, Contents, Identity, ImportedContender, ImportedRule,
    Key, Profile, RuleField, RuleTable, Selection, Text, Who,
};
use crate::error::Result;
use crate::time::{NANOS_PER_SEC, Nanos, duration_text, parse_positive_duration};
use std::path::Path;

/// One `rateLimit` middleware.
struct Limit {
    name: String,
    average: u64,
    period: Nanos,
    burst: u64,
    key: Identity,
    key_comment: String,
    at: String,
}

/// One router: its priority and the path pattern of its rule (`None`: every path).
struct Router {
    name: String,
    priority: i64,
    route: Option<String>,
    middlewares: Vec<String>,
    at: String,
}

pub(super) const NAME: &str = "traefik";

/// A YAML `rateLimit` under `http` (its files hold none of nginx's or HAProxy's words).
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    (!t.json && t.text.contains("rateLimit:") && t.text.contains("http:")).then_some(5)
}

/// Imports `path`'s `http.middlewares.*.rateLimit` over the routers that use them.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let doc = yaml::load(path)?;
    let http = doc.root().req("http")?;
    let mut notes = Vec::new();
    let mut limits = Vec::new();
    if let Some(mws) = http.get("middlewares")? {
        for (name, mw) in mws.entries()? {
            if let Some(rl) = mw.get("rateLimit")? {
                limits.push(limit(&name, &rl, &mut notes)?);
            }
        }
    }
    if limits.is_empty() {
        return Err(http.error("no middleware has `rateLimit`: nothing to import"));
    }
    let routers = match http.get("routers")? {
        Some(r) => routers(&r, &mut notes)?,
        None => Vec::new(),
    };
    let mut rules = Vec::new();
    for l in &limits {
        if l.average == 0 {
            notes.push(format!(
                "middleware `{}` ({}): average 0 means no limit (rate.Inf): not a rule",
                l.name, l.at
            ));
            continue;
        }
        let users: Vec<&Router> = routers
            .iter()
            .filter(|r| {
                r.middlewares
                    .iter()
                    .any(|m| m == &l.name || m.strip_suffix("@file") == Some(&l.name))
            })
            .collect();
        if users.is_empty() {
            notes.push(format!("middleware `{}` ({}) is used by no router of this file: imported as one rule over every route", l.name, l.at));
            rules.push(rule(l, None, &routers));
        }
        for r in users {
            rules.push(rule(l, Some(r), &routers));
        }
    }
    if rules.is_empty() {
        return Err(http.error("every rateLimit has average 0 (no limit): nothing to import"));
    }
    let several = routers.iter().any(|r| {
        limits
            .iter()
            .filter(|l| l.average > 0 && r.middlewares.iter().any(|m| m == &l.name))
            .count()
            > 1
    });
    if several {
        notes.push("a router chains several rateLimit middlewares: each decides in turn (commit in_order), and the next one decides only after the previous one's delay has been waited out, which rlsim takes as the same instant".into());
    }
    notes.push("each Traefik instance keeps its own buckets in memory (and each router its own): N replicas admit up to N times the rate".into());
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "traefik".into());
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: super::plain_name(&format!("traefik-{stem}"), NAME),
            comments: vec![format!("Traefik dynamic configuration {}", path.display())],
            table: ContenderTable {
                description: format!("Traefik rateLimit middlewares ({})", path.display()),
                commit: Some(Commit::InOrder),
            },
            fields: vec![ContenderField::RefuseStatus(429)],
            rules,
            notes: Vec::new(),
        }],
        notes,
    })
}

/// Traefik's `ptypes.Duration`: a Go duration string, or a bare number of seconds.
fn period(n: &Node<'_>) -> Result<Nanos> {
    let text = n.str()?;
    if let Ok(secs) = text.trim().parse::<u64>() {
        // 0 is Traefik's default, a second.
        return Ok(secs.max(1).saturating_mul(NANOS_PER_SEC));
    }
    parse_positive_duration(&text).map_err(|e| n.error(format!("not a duration: {e}")))
}

fn limit(name: &str, rl: &Node<'_>, notes: &mut Vec<String>) -> Result<Limit> {
    rl.only(&["average", "period", "burst", "sourceCriterion", "redis"])?;
    if let Some(r) = rl.get("redis")? {
        return Err(r.error("the Redis-backed limiter (Traefik v3.4+) cannot be imported: its Lua script (lua.go) keeps one bucket per source shared by every instance, with integer-microsecond arithmetic and no Reserve/Cancel, which the go-x-time-rate profile does not reproduce; remove `redis` to import the in-memory limiter each instance runs"));
    }
    // int64 in Traefik; rlsim's limits and buckets count to u32::MAX (0: no limit, burst 0: 1).
    let count = |key: &str| match rl.get(key)? {
        Some(n) => n
            .whole("a whole number of requests", 0, u32::MAX.into())
            .map(Some),
        None => Ok(None),
    };
    let average = count("average")?.unwrap_or(0);
    let period = match rl.get("period")? {
        Some(p) => period(&p)?,
        None => NANOS_PER_SEC,
    };
    let burst = count("burst")?.unwrap_or(1).max(1);
    if count("burst")? == Some(0) {
        notes.push(format!(
            "middleware `{name}`: burst 0 is taken as 1 (max(burst, 1))"
        ));
    }
    let (key, key_comment) = source(rl, notes)?;
    Ok(Limit {
        name: name.to_string(),
        average,
        period,
        burst,
        key,
        key_comment,
        at: rl.at(),
    })
}

/// `sourceCriterion`: the key.
fn source(rl: &Node<'_>, notes: &mut Vec<String>) -> Result<(Identity, String)> {
    let peer = |prefix: u32| Identity {
        ipv6_prefix: Some(prefix),
        ..Identity::new(Who::Peer)
    };
    let Some(sc) = rl.get("sourceCriterion")? else {
        return Ok((peer(128), "no sourceCriterion: ipStrategy on the request's remote address (the socket peer): behind a load balancer every client shares its address".into()));
    };
    sc.only(&["ipStrategy", "requestHeaderName", "requestHost"])?;
    if let Some(h) = sc.get("requestHeaderName")? {
        return Err(h.error("a key on a request header cannot be imported (rlsim's request fields are ip, user, api_key, endpoint); a request without the header would share the empty key"));
    }
    if let Some(h) = sc.get("requestHost")? {
        return Err(
            h.error("a key on the Host header cannot be imported: rlsim's requests carry no host")
        );
    }
    let Some(ips) = sc.get("ipStrategy")? else {
        return Ok((
            peer(128),
            "ipStrategy on the remote address (the socket peer)".into(),
        ));
    };
    ips.only(&["depth", "excludedIPs", "ipv6Subnet"])?;
    let prefix = match ips.opt_u64("ipv6Subnet")? {
        Some(p @ 1..=128) => p as u32,
        Some(_) => return Err(ips.req("ipv6Subnet")?.error("must be 1 to 128")),
        None => 128,
    };
    if let Some(x) = ips.get("excludedIPs")? {
        return Err(x.error("excludedIPs cannot be imported: Traefik walks X-Forwarded-For from the right skipping these addresses without looking at the socket peer, while rlsim's xff identity starts from the peer"));
    }
    let depth = ips.opt_u64("depth")?.unwrap_or(0);
    if depth == 0 {
        return Ok((
            peer(prefix),
            "ipStrategy depth 0: the remote address (the socket peer)".into(),
        ));
    }
    let xff = Identity {
        ipv6_prefix: Some(prefix),
        trusted_hops: Some(depth),
        ..Identity::new(Who::Xff)
    };
    notes.push(format!("ipStrategy depth {depth} takes the {depth}th X-Forwarded-For entry counted from the right (depth 1: the address the last proxy saw), not from the left; a request with fewer entries gets the empty key, and all such requests share one bucket (rlsim takes the leftmost entry there); and Traefik's entryPoint deletes X-Forwarded-For from a peer outside forwardedHeaders.trustedIPs, so without that every client shares the empty key"));
    Ok((
        xff,
        format!("ipStrategy depth {depth}: the X-Forwarded-For entry {depth} from the right"),
    ))
}

fn routers(rs: &Node<'_>, notes: &mut Vec<String>) -> Result<Vec<Router>> {
    let mut out = Vec::new();
    for (name, r) in rs.entries()? {
        let middlewares = match r.get("middlewares")? {
            Some(m) => m
                .items()?
                .iter()
                .map(|i| i.str())
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let rule = r.opt_str("rule")?.unwrap_or_default();
        let route = route(&rule);
        if route.is_none() && !rule.is_empty() && !middlewares.is_empty() {
            notes.push(format!("router `{name}` ({}): rule `{rule}` has no single Path or PathPrefix rlsim can read: its rules apply to every route", r.at()));
        }
        if rule.contains("Host(") && route.is_some() {
            notes.push(format!("router `{name}`: rlsim's requests carry no host, so the Host matcher of `{rule}` is taken as always true"));
        }
        let priority = match r.opt_i64("priority")? {
            Some(p) if p != 0 => p,
            // Traefik's default priority is the rule's length.
            _ => rule.len() as i64,
        };
        out.push(Router {
            name,
            priority,
            route,
            middlewares,
            at: r.at(),
        });
    }
    Ok(out)
}

/// The path pattern of a rule made of one `PathPrefix` or `Path`, with any `Host` beside it
/// (joined by `&&`): `/api*` or `/login`.
fn route(rule: &str) -> Option<String> {
    if rule.contains("||") || rule.contains('!') {
        return None;
    }
    let mut found = None;
    for part in rule.split("&&") {
        let p = part.trim();
        let arg = |f: &str| {
            p.strip_prefix(f)
                .and_then(|r| r.strip_suffix(')'))
                .map(|a| a.trim().trim_matches(|c| c == '`' || c == '"').to_string())
        };
        if let Some(a) = arg("PathPrefix(") {
            found = Some(format!("{a}*"));
        } else if let Some(a) = arg("Path(") {
            found = Some(a);
        } else if !p.starts_with("Host(") {
            return None;
        }
        if found.as_deref().is_some_and(|f| f.contains(['{', ','])) {
            return None;
        }
    }
    found
}

fn rule(l: &Limit, router: Option<&Router>, all: &[Router]) -> ImportedRule {
    let every_rate = (l.average * NANOS_PER_SEC) as f64 / l.period as f64;
    let max_delay = if every_rate < 1.0 {
        500 * crate::time::NANOS_PER_MILLI
    } else {
        NANOS_PER_SEC / ((every_rate as u64).saturating_mul(2)).max(1)
    };
    let name = match router {
        Some(r) => super::plain_name(&format!("{}.{}", r.name, l.name), NAME),
        None => super::plain_name(&l.name, NAME),
    };
    let mut comments = vec![
        format!(
            "rateLimit middleware `{}` at {}{}",
            l.name,
            l.at,
            router
                .map(|r| format!(", on router `{}` ({})", r.name, r.at))
                .unwrap_or_default()
        ),
        format!(
            "average {} per {} is a token bucket refilled continuously ({every_rate} tokens/s), not {} requests per fixed {}; burst {} is the bucket's size, and it starts full",
            l.average,
            duration_text(l.period),
            l.average,
            duration_text(l.period),
            l.burst
        ),
        format!(
            "a request that would wait up to maxDelay {} is delayed that long and served; a longer wait is cancelled and answered 429",
            duration_text(max_delay)
        ),
        format!("key: {}", l.key_comment),
    ];
    let table = RuleTable {
        name,
        algorithm: "go-x-time-rate",
        limit: l.average,
        window: duration_text(l.period),
        burst: None,
        key: Key::Identity(l.key.clone()),
    };
    let mut fields = Vec::new();
    if let Some(r) = router
        && let Some(route) = &r.route
    {
        fields.push(RuleField::Routes(vec![route.clone()]));
        // Requests a higher-priority router takes never reach this one.
        let base = route.trim_end_matches('*');
        let skip: Vec<String> = all
            .iter()
            .filter(|o| o.priority > r.priority)
            .filter_map(|o| o.route.as_ref())
            .filter(|o| o.trim_end_matches('*').starts_with(base) && *o != route)
            .cloned()
            .collect();
        if !skip.is_empty() {
            comments.push("skip: routes a router of higher priority takes first".into());
            fields.push(RuleField::Skip(skip));
        }
    }
    fields.push(RuleField::Profile(Profile::GoXTimeRate {
        average: l.average,
        burst: l.burst,
        max_delay: duration_text(max_delay),
        period: duration_text(l.period),
    }));
    ImportedRule {
        comments,
        table,
        fields,
    }
}
