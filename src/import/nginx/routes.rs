//! One rule per zone over the locations that apply it: nginx gives each request to one
//! location (an exact `=` match, else the longest prefix), so a rule applies to the routes of
//! its locations and skips the more specific locations nested under them that do not apply it.

use super::key::{self, Exempt};
use super::{Built, Delay, Http, Limit, Location, Pattern, Server, conf_error_at};
use crate::error::Result;
use crate::import::{ImportedRule, Profile, RuleField, RuleTable};
use crate::time::{NANOS_PER_MIN, NANOS_PER_SEC, duration_text};

/// Whether requests nginx gives to `inner` would otherwise be `outer`'s: `outer` is a prefix
/// of `inner`'s path, and `inner` is the more specific location.
fn covers(outer: &Pattern, inner: &Pattern) -> bool {
    match outer {
        Pattern::Exact(_) => false,
        Pattern::Prefix(p) => inner.path().starts_with(p.as_str()) && inner != outer,
    }
}

fn route(p: &Pattern) -> String {
    match p {
        Pattern::Prefix(path) => format!("{path}*"),
        Pattern::Exact(path) => path.clone(),
    }
}

/// The routes and skips of a rule applied by the locations `mine` out of `all`.
fn matcher(
    mine: &[&Location],
    all: &[(&Location, Vec<Limit>)],
    zone: &str,
) -> Result<Vec<RuleField>> {
    let in_mine = |l: &Location| mine.iter().any(|m| m.pattern == l.pattern);
    if all.iter().all(|(l, _)| in_mine(l)) {
        return Ok(Vec::new());
    }
    let routes: Vec<String> = mine.iter().map(|l| route(&l.pattern)).collect();
    let mut skip = Vec::new();
    for (q, _) in all.iter().filter(|(q, _)| !in_mine(q)) {
        if !mine.iter().any(|s| covers(&s.pattern, &q.pattern)) {
            continue;
        }
        if let Some(inner) = mine.iter().find(|s| covers(&q.pattern, &s.pattern)) {
            return Err(conf_error_at(
                &q.at,
                "location",
                format!(
                    "zone `{zone}` applies in location `{}` nested under location `{}`, which does not apply it, nested under one that does: rlsim's routes and skips cannot say that; import one location (--location)",
                    inner.uri, q.uri
                ),
            ));
        }
        skip.push(route(&q.pattern));
    }
    let mut out = vec![RuleField::Routes(routes)];
    if !skip.is_empty() {
        out.push(RuleField::Skip(skip));
    }
    Ok(out)
}

/// The rules of a server's locations, one per zone in first-use order.
pub(super) fn rules(
    http: &Http,
    all: &[(&Location, Vec<Limit>)],
    notes: &mut Vec<String>,
) -> Result<Vec<Built>> {
    let mut zones: Vec<&str> = Vec::new();
    for (_, limits) in all {
        for l in limits {
            if !zones.contains(&l.zone.as_str()) {
                zones.push(&l.zone);
            }
        }
    }
    let mut out = Vec::new();
    for z in zones {
        let users: Vec<(&Location, &Limit)> = all
            .iter()
            .filter_map(|(loc, limits)| limits.iter().find(|l| l.zone == z).map(|l| (*loc, l)))
            .collect();
        let (first_loc, first) = users[0];
        let Some(zone) = http.zones.get(z) else {
            return Err(conf_error_at(
                &first.at,
                "limit_req",
                format!("unknown limit_req_zone \"{z}\""),
            ));
        };
        same_everywhere(z, &users)?;
        let mine: Vec<&Location> = users.iter().map(|(l, _)| *l).collect();
        let k = key::rule_key(zone, &first_loc.level, http)?;
        let per = if zone.rate.1 {
            NANOS_PER_MIN
        } else {
            NANOS_PER_SEC
        };
        let table = RuleTable {
            name: crate::import::plain_name(z, super::NAME),
            algorithm: "nginx-limit-req",
            limit: zone.rate.0,
            window: duration_text(per),
            burst: None,
            key: k.key.clone(),
        };
        let mut fields = matcher(&mine, all, z)?;
        if k.needs_api_key {
            fields.push(RuleField::HasApiKey(true));
        }
        let rate = format!("{}r/{}", zone.rate.0, if zone.rate.1 { "m" } else { "s" });
        fields.push(RuleField::Profile(profile(first, rate.clone())));
        let used: Vec<String> = users
            .iter()
            .map(|(loc, l)| format!("location `{}` ({})", loc.uri, l.at))
            .collect();
        let mut comments = vec![
            format!(
                "limit_req_zone {} zone={}:{} rate={rate} at {}",
                zone.key, zone.name, zone.size, zone.at
            ),
            format!("applied in {}", used.join(", ")),
            burst_note(first, zone.rate, &rate),
            format!(
                "zone size {}: nginx keeps about 16 000 states per megabyte and, when full, evicts the least recently used (and refuses when it still cannot store one); rlsim's store is unbounded",
                zone.size
            ),
        ];
        comments.extend(k.notes.iter().map(|n| format!("key: {n}")));
        let _ = notes;
        out.push(Built {
            rule: ImportedRule {
                comments,
                table,
                fields,
            },
            exempt: k.exempt,
            zone: z.to_string(),
            status: first_loc.level.status.unwrap_or(503),
            dry_run: first_loc.level.dry_run.unwrap_or(false),
        });
    }
    Ok(out)
}

/// Refuses a zone its locations apply differently: nginx keeps one state per zone, rlsim one per
/// rule, so only one burst, delay and real_ip reading can be modelled.
fn same_everywhere(z: &str, users: &[(&Location, &Limit)]) -> Result<()> {
    let (first_loc, first) = users[0];
    for (loc, l) in &users[1..] {
        if l.burst != first.burst || l.delay != first.delay {
            return Err(conf_error_at(
                &l.at,
                "limit_req",
                format!(
                    "zone `{z}` is applied with another burst or delay in location `{}` than in location `{}`: nginx keeps one state per zone, rlsim one per rule; import one location (--location)",
                    loc.uri, first_loc.uri
                ),
            ));
        }
        let (a, b) = (&first_loc.level, &loc.level);
        let differs = |what: &str, x: String, y: String| {
            conf_error_at(
                &loc.at,
                what,
                format!(
                    "zone `{z}` is applied with {what} {y} in location `{}` and {what} {x} in location `{}`: nginx keeps one state per zone, rlsim one per rule, with one {what}; give each location its own zone, or import one location (--location)",
                    loc.uri, first_loc.uri
                ),
            )
        };
        if a.status.unwrap_or(503) != b.status.unwrap_or(503) {
            return Err(differs(
                "limit_req_status",
                status_text(a.status),
                status_text(b.status),
            ));
        }
        if a.dry_run.unwrap_or(false) != b.dry_run.unwrap_or(false) {
            return Err(differs(
                "limit_req_dry_run",
                switch_text(a.dry_run),
                switch_text(b.dry_run),
            ));
        }
        if loc.level.real_from != first_loc.level.real_from
            || loc.level.real_header != first_loc.level.real_header
            || loc.level.real_recursive != first_loc.level.real_recursive
        {
            return Err(conf_error_at(
                &loc.at,
                "set_real_ip_from",
                format!(
                    "zone `{z}` is keyed under other real_ip settings in location `{}` than in location `{}`; import one location (--location)",
                    loc.uri, first_loc.uri
                ),
            ));
        }
    }
    Ok(())
}

/// A `limit_req_status` as nginx.conf writes it.
fn status_text(status: Option<u16>) -> String {
    match status {
        Some(s) => s.to_string(),
        None => "503 (the default)".into(),
    }
}

/// A `limit_req_dry_run` as nginx.conf writes it.
fn switch_text(on: Option<bool>) -> String {
    match on {
        Some(true) => "on".into(),
        Some(false) => "off".into(),
        None => "off (the default)".into(),
    }
}

/// The `nginx-limit-req` profile's own parameters of one `limit_req`.
fn profile(first: &Limit, rate: String) -> Profile {
    let (delay, nodelay) = match first.delay {
        Delay::All => (None, None),
        Delay::Never => (None, Some(true)),
        Delay::First(n) => (Some(n), None),
    };
    Profile::NginxLimitReq {
        burst: first.burst,
        delay,
        nodelay,
        rate,
    }
}

/// What `burst` and `nodelay`/`delay` mean, in numbers.
fn burst_note(l: &Limit, rate: (u64, bool), text: &str) -> String {
    let spacing_ms = if rate.1 {
        60_000.0 / rate.0 as f64
    } else {
        1000.0 / rate.0 as f64
    };
    let served = format!(
        "rate={text} is one request every {spacing_ms} ms, not {} at once; burst={} admits 1 + {} back to back",
        rate.0, l.burst, l.burst
    );
    match l.delay {
        Delay::All if l.burst > 0 => format!(
            "{served}, and without nodelay each excess request waits, released one per {spacing_ms} ms"
        ),
        Delay::All => {
            format!("{served}: with no burst, a second request inside {spacing_ms} ms is refused")
        }
        Delay::Never => format!(
            "{served} without delay (nodelay), but the slots still free only one per {spacing_ms} ms"
        ),
        Delay::First(n) => {
            format!("{served}: the first {n} excess pass at once (delay={n}), the rest wait")
        }
    }
}

/// The exemption every rule shares, as the contender's bypass; rules that differ cannot be said.
pub(super) fn common_exempt(rules: &[Built], server: &Server) -> Result<Exempt> {
    let first = &rules[0];
    if let Some(other) = rules.iter().find(|r| r.exempt != first.exempt) {
        return Err(conf_error_at(
            &server.at,
            "map",
            format!(
                "zones `{}` and `{}` exempt different requests (their keys' maps differ), and rlsim's bypass list is the contender's: import one location (--location) or give the zones one map",
                first.zone, other.zone
            ),
        ));
    }
    Ok(key::Exempt {
        ..first.exempt.clone()
    })
}
