//! Envoy's HTTP `local_ratelimit` filter (`envoy.filters.http.local_ratelimit`) in an Envoy
//! configuration (YAML), imported as one contender over the `envoy-local` profile.
//!
//! Followed: `source/extensions/filters/common/local_ratelimit/local_ratelimit_impl.cc`
//! (`requestAllowed`: the matched descriptors' buckets are consumed in order of tokens per
//! second, the strictest first, the first empty one refusing without touching the others; the
//! default bucket is consumed after them, when no descriptor matched or when
//! `always_consume_default_token_bucket`, true by default), and the `LocalRateLimit` proto
//! (`filter_enabled`, `filter_enforced`: 0% unless given). A route's `typed_per_filter_config`
//! replaces the filter's own configuration for that route, with buckets of its own; every bucket
//! is one per Envoy process, every client sharing it.

use super::yaml::{self, Loc, Node};
use super::{
    Commit, ContenderField, ContenderTable, Contents, ImportedContender, ImportedRule, Key,
    Profile, RuleField, RuleTable, Selection, Text,
};
use crate::error::Result;
use std::path::Path;

const FILTER: &str = "envoy.filters.http.local_ratelimit";

/// `token_bucket { max_tokens, tokens_per_fill, fill_interval }`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    max_tokens: u64,
    tokens_per_fill: u64,
    fill_ms: u64,
}

/// A descriptor's entries, `(key, value)` in order.
type Entries = Vec<(String, String)>;

/// One `LocalRateLimit` configuration: the filter's, or a route's.
struct Config {
    loc: Loc,
    bucket: Option<Bucket>,
    descriptors: Vec<(Entries, Bucket, Loc)>,
    enforced: bool,
    status: u16,
    always_default: bool,
    /// Its own `rate_limits` (Envoy 1.33+), used instead of the route's.
    rate_limits: Option<Vec<Entries>>,
}

/// One route of the virtual host, in order (Envoy takes the first that matches).
struct Route {
    pattern: String,
    /// The route's own configuration, else the filter's is used.
    config: Option<usize>,
    /// The descriptors its `rate_limits` actions produce.
    produces: Vec<Entries>,
}

pub(super) const NAME: &str = "envoy-local";

/// The filter's name in a text that is not JSON.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    (!t.json && t.text.contains("envoy.filters.http.local_ratelimit")).then_some(1)
}

/// Imports `path`'s local rate limit filter and its routes' configurations.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let doc = yaml::load(path)?;
    let mut hcms = Vec::new();
    find_hcms(doc.root(), &mut hcms);
    let mut found = Vec::new();
    for h in hcms {
        if let Some(f) = filter(&h)? {
            found.push((h, f));
        }
    }
    let (hcm, filter_node) = match found.len() {
        0 => {
            return Err(doc.root().error(format!(
                "no http_filters entry named {FILTER}: nothing to import"
            )));
        }
        1 => found.remove(0),
        _ => {
            return Err(found[1].1.error("a second HTTP connection manager with a local_ratelimit filter: import one listener per file (each has its own buckets)"));
        }
    };
    let mut notes = Vec::new();
    let mut configs = vec![config(&filter_node, &mut notes)?];
    let routes = routes(&hcm, &mut configs, &mut notes)?;
    let rules = rules(&configs, &routes, &mut notes)?;
    if rules.is_empty() {
        return Err(filter_node.error("no enabled token bucket: nothing to import"));
    }
    let outcome = outcome(&configs, &routes)?;
    notes.push("each Envoy process keeps its own buckets (shared by its workers): N replicas admit up to N times the rate".into());
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "envoy".into());
    let mut fields = vec![ContenderField::RefuseStatus(outcome.1)];
    if outcome.0 {
        fields.push(ContenderField::DryRun(true));
        notes.push("filter_enforced is 0% (its default when absent): every request is admitted, the refusals only counted (would_refuse)".into());
    }
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: super::plain_name(&format!("envoy-{stem}"), "envoy"),
            comments: vec![format!("Envoy local_ratelimit, {}", filter_node.at())],
            table: ContenderTable {
                description: format!("Envoy local_ratelimit ({})", path.display()),
                commit: Some(Commit::InOrder),
            },
            fields,
            rules,
            notes: Vec::new(),
        }],
        notes,
    })
}

/// Every mapping with `http_filters` (an HTTP connection manager), in file order.
fn find_hcms<'a>(n: Node<'a>, out: &mut Vec<Node<'a>>) {
    if n.is_mapping() {
        let entries = n.entries().unwrap_or_default();
        if entries.iter().any(|(k, _)| k == "http_filters") {
            out.push(n);
            return;
        }
        for (_, v) in entries {
            find_hcms(v, out);
        }
    } else if let Ok(items) = n.items() {
        for i in items {
            find_hcms(i, out);
        }
    }
}

/// The local rate limit filter's `typed_config` in an HCM, if it has one.
fn filter<'a>(hcm: &Node<'a>) -> Result<Option<Node<'a>>> {
    for f in hcm.req("http_filters")?.items()? {
        if f.opt_str("name")?.as_deref() == Some(FILTER) {
            return Ok(Some(f.req("typed_config")?));
        }
    }
    Ok(None)
}

/// A protobuf `Duration` as YAML writes it (`1s`, `0.5s`), in whole milliseconds.
fn millis(n: &Node<'_>) -> Result<u64> {
    let t = n.str()?;
    let bad = || {
        n.error(format!(
            "`{t}` is not a duration in whole milliseconds (`1s`, `0.25s`)"
        ))
    };
    let secs = t.trim().strip_suffix('s').ok_or_else(bad)?;
    let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole: u64 = whole.parse().map_err(|_| bad())?;
    let frac: u64 = format!("{frac:0<3}").parse().map_err(|_| bad())?;
    Ok(whole * 1000 + frac)
}

fn bucket(n: &Node<'_>, default_fill: Option<u64>) -> Result<Bucket> {
    n.only(&["max_tokens", "tokens_per_fill", "fill_interval"])?;
    // uint32 fields in Envoy's TokenBucket; 0 tokens would refuse everything.
    let tokens = "a whole number of tokens";
    let max_tokens = n.req("max_tokens")?.whole(tokens, 1, u32::MAX.into())?;
    let fill_ms = match (n.get("fill_interval")?, default_fill) {
        (Some(f), _) => millis(&f)?,
        (None, Some(d)) => d,
        (None, None) => millis(&n.req("fill_interval")?)?,
    };
    if fill_ms < 50 {
        return Err(n
            .req("fill_interval")?
            .error("local rate limit token bucket fill timer must be >= 50ms (Envoy refuses it)"));
    }
    Ok(Bucket {
        max_tokens,
        tokens_per_fill: match n.get("tokens_per_fill")? {
            Some(t) => t.whole(tokens, 1, u32::MAX.into())?,
            None => 1,
        },
        fill_ms,
    })
}

/// A `RuntimeFractionalPercent`'s default value as a percentage: only 0 and 100 are imported.
fn fraction(c: &Node<'_>, key: &str) -> Result<bool> {
    let Some(f) = c.get(key)? else {
        return Ok(false);
    };
    f.only(&["runtime_key", "default_value"])?;
    let Some(d) = f.get("default_value")? else {
        return Ok(false);
    };
    d.only(&["numerator", "denominator"])?;
    let num = d.opt_u64("numerator")?.unwrap_or(0);
    let den = match d.opt_str("denominator")?.as_deref() {
        None | Some("HUNDRED") => 100,
        Some("TEN_THOUSAND") => 10_000,
        Some("MILLION") => 1_000_000,
        Some(o) => {
            return Err(d
                .req("denominator")?
                .error(format!("unknown denominator `{o}`")));
        }
    };
    match num {
        0 => Ok(false),
        n if n >= den => Ok(true),
        _ => Err(d.error(format!(
            "{num}/{den} of requests cannot be imported: rlsim's contenders limit every request or none (0% or 100%)"
        ))),
    }
}

/// `status.code`: a number or an `envoy.type.v3.StatusCode` name.
fn status(c: &Node<'_>) -> Result<u16> {
    let Some(s) = c.get("status")? else {
        return Ok(429);
    };
    let code = s.req("code")?;
    let text = code.str()?;
    let named = [
        ("TooManyRequests", 429),
        ("ServiceUnavailable", 503),
        ("Forbidden", 403),
        ("BadRequest", 400),
        ("Unauthorized", 401),
        ("InternalServerError", 500),
    ];
    if let Some((_, n)) = named.iter().find(|(t, _)| *t == text) {
        return Ok(*n);
    }
    match text.parse::<u16>() {
        Ok(n @ 400..=599) => Ok(n),
        _ => Err(code.error(format!("`{text}` is not a status code rlsim refuses with (400 to 599, or TooManyRequests, ServiceUnavailable, Forbidden...)"))),
    }
}

const KNOWN: &[&str] = &[
    "@type",
    "stat_prefix",
    "token_bucket",
    "filter_enabled",
    "filter_enforced",
    "status",
    "descriptors",
    "stage",
    "local_rate_limit_per_downstream_connection",
    "always_consume_default_token_bucket",
    "rate_limits",
    "response_headers_to_add",
    "request_headers_to_add_when_not_enforced",
    "enable_x_ratelimit_headers",
    "rate_limited_as_resource_exhausted",
];

/// One `LocalRateLimit`; `None` fields of a disabled one.
fn config(c: &Node<'_>, notes: &mut Vec<String>) -> Result<Config> {
    c.only(KNOWN)?;
    if c.opt_bool("local_rate_limit_per_downstream_connection")? == Some(true) {
        return Err(c.req("local_rate_limit_per_downstream_connection")?.error(
            "per-connection buckets cannot be imported: rlsim's requests carry no connection",
        ));
    }
    if let Some(s) = c.get("stage")?
        && s.u64()? != 0
    {
        return Err(s.error("only stage 0 (the default) is imported"));
    }
    let enabled = fraction(c, "filter_enabled")?;
    let mut descriptors = Vec::new();
    let tb = c.get("token_bucket")?;
    let fill = tb.as_ref().map(|t| bucket(t, None)).transpose()?;
    if let Some(ds) = c.get("descriptors")? {
        for d in ds.items()? {
            d.only(&["entries", "token_bucket"])?;
            let entries = entries(&d.req("entries")?)?;
            let b = bucket(&d.req("token_bucket")?, fill.map(|f| f.fill_ms))?;
            if let Some(f) = fill
                && b.fill_ms % f.fill_ms != 0
            {
                return Err(d.req("token_bucket")?.error("local rate descriptor limit is not a multiple of token bucket fill timer (Envoy refuses it)"));
            }
            descriptors.push((entries, b, Loc::of(&d)));
        }
    }
    if !enabled {
        notes.push(format!("{}: filter_enabled is 0% (its default when absent): Envoy neither counts nor limits these requests", c.at()));
    }
    let rate_limits = match c.get("rate_limits")? {
        Some(r) => Some(rate_limits(&r, "")?),
        None => None,
    };
    Ok(Config {
        loc: Loc::of(c),
        bucket: if enabled { fill } else { None },
        descriptors: if enabled { descriptors } else { Vec::new() },
        enforced: fraction(c, "filter_enforced")?,
        status: status(c)?,
        always_default: c
            .opt_bool("always_consume_default_token_bucket")?
            .unwrap_or(true),
        rate_limits,
    })
}

/// A descriptor's `entries: [{key, value}]`.
fn entries(n: &Node<'_>) -> Result<Entries> {
    n.items()?
        .iter()
        .map(|e| {
            e.only(&["key", "value"])?;
            Ok((e.req_str("key")?, e.opt_str("value")?.unwrap_or_default()))
        })
        .collect()
}

/// `rate_limits: [{actions: [...]}]`: the descriptor each produces for every request of a
/// route (only actions whose value is the same for every request are importable).
fn rate_limits(n: &Node<'_>, cluster: &str) -> Result<Vec<Entries>> {
    let mut out = Vec::new();
    for r in n.items()? {
        r.only(&["actions", "stage"])?;
        if r.opt_u64("stage")?.unwrap_or(0) != 0 {
            continue;
        }
        let mut d = Vec::new();
        for a in r.req("actions")?.items()? {
            let (kind, v) = a
                .entries()?
                .into_iter()
                .next()
                .ok_or_else(|| a.error("an empty action"))?;
            match kind.as_str() {
                "generic_key" => {
                    v.only(&["descriptor_value", "descriptor_key"])?;
                    let key = v.opt_str("descriptor_key")?.unwrap_or_else(|| "generic_key".into());
                    d.push((key, v.req_str("descriptor_value")?));
                }
                "destination_cluster" => d.push(("destination_cluster".into(), cluster.into())),
                _ => return Err(v.error(format!("action `{kind}` cannot be imported for local_ratelimit: its value differs between requests, and a local descriptor's bucket matches one exact value (use generic_key or destination_cluster)"))),
            }
        }
        out.push(d);
    }
    Ok(out)
}

/// The virtual host's routes in order; each route's own configuration goes into `configs`.
fn routes(
    hcm: &Node<'_>,
    configs: &mut Vec<Config>,
    notes: &mut Vec<String>,
) -> Result<Vec<Route>> {
    if let Some(r) = hcm.get("rds")? {
        return Err(r.error("routes from RDS cannot be imported: put the route_config in the file"));
    }
    let rc = hcm.req("route_config")?;
    let vhs = rc.req("virtual_hosts")?.items()?;
    if vhs.len() > 1 {
        return Err(vhs[1].error(
            "several virtual hosts cannot be imported: rlsim's requests carry no host (import one)",
        ));
    }
    let Some(vh) = vhs.first() else {
        return Ok(Vec::new());
    };
    for k in ["rate_limits", "typed_per_filter_config"] {
        if let Some(x) = vh.get(k)? {
            return Err(x.error(format!(
                "a virtual host's `{k}` is not imported: write it on its routes"
            )));
        }
    }
    let mut out = Vec::new();
    for r in vh.req("routes")?.items()? {
        let m = r.req("match")?;
        m.only(&["prefix", "path"])?;
        let pattern = match (m.opt_str("prefix")?, m.opt_str("path")?) {
            (Some(p), None) => format!("{p}*"),
            (None, Some(p)) => p,
            _ => return Err(m.error("a route matching one `prefix` or `path` is imported (not safe_regex, headers or query parameters)")),
        };
        let action = r.get("route")?;
        let cluster = match &action {
            Some(a) => a.opt_str("cluster")?.unwrap_or_default(),
            None => String::new(),
        };
        let own = match r.get("typed_per_filter_config")? {
            Some(t) => t.get(FILTER)?,
            None => None,
        };
        let config = match own {
            Some(c) => {
                configs.push(config(&c, notes)?);
                Some(configs.len() - 1)
            }
            None => None,
        };
        let used = configs[config.unwrap_or(0)].rate_limits.clone();
        let produces = match (
            used,
            action.and_then(|a| a.get("rate_limits").ok().flatten()),
        ) {
            (Some(own), _) => own,
            (None, Some(rl)) => rate_limits(&rl, &cluster)?,
            (None, None) => Vec::new(),
        };
        out.push(Route {
            pattern,
            config,
            produces,
        });
    }
    Ok(out)
}

/// Whether route pattern `p` takes every request `q` takes.
fn covers(p: &str, q: &str) -> bool {
    match p.strip_suffix('*') {
        Some(base) => q.trim_end_matches('*').starts_with(base),
        None => p == q,
    }
}

/// The `routes` and `skip` of a rule applying to `taken` (indices into `routes`): the earlier
/// routes under them that another configuration takes first are skipped.
fn matcher(
    routes: &[Route],
    taken: &[usize],
) -> std::result::Result<(Vec<String>, Vec<String>), String> {
    let mut skip: Vec<String> = Vec::new();
    for &t in taken {
        for (e, earlier) in routes.iter().enumerate().take(t) {
            if taken.contains(&e) || !covers(&routes[t].pattern, &earlier.pattern) {
                continue;
            }
            // A rule route before `earlier` that also covers it would lose its requests.
            if taken
                .iter()
                .any(|&o| o < e && covers(&routes[o].pattern, &earlier.pattern))
            {
                return Err(format!(
                    "route `{}` sits between routes of one bucket",
                    earlier.pattern
                ));
            }
            if !skip.contains(&earlier.pattern) {
                skip.push(earlier.pattern.clone());
            }
        }
    }
    Ok((
        taken.iter().map(|&t| routes[t].pattern.clone()).collect(),
        skip,
    ))
}

/// `tokensFillPerSecond`: integer tokens per whole second (a sub-second interval counts as 1 s).
fn per_second(b: &Bucket) -> u64 {
    b.tokens_per_fill / (b.fill_ms / 1000).max(1)
}

fn rules(
    configs: &[Config],
    routes: &[Route],
    notes: &mut Vec<String>,
) -> Result<Vec<ImportedRule>> {
    let mut out = Vec::new();
    for (ci, c) in configs.iter().enumerate() {
        let taken: Vec<usize> = (0..routes.len())
            .filter(|&r| routes[r].config.unwrap_or(0) == ci)
            .collect();
        if taken.is_empty() && !routes.is_empty() {
            if ci == 0 && c.bucket.is_some() {
                notes.push(format!("{}: every route has its own local_ratelimit configuration: the filter's bucket limits nothing", c.loc.at()));
            }
            continue;
        }
        let scope = if ci == 0 {
            "filter".to_string()
        } else {
            format!("route{ci}")
        };
        let mut desc: Vec<_> = c.descriptors.iter().collect();
        // std::sort by tokens per second, strictest first (file order between equals).
        desc.sort_by_key(|d| per_second(&d.1));
        let mut matched = Vec::new();
        for (entries, b, at) in desc {
            let users: Vec<usize> = taken
                .iter()
                .copied()
                .filter(|&r| routes[r].produces.contains(entries))
                .collect();
            let text: Vec<String> = entries.iter().map(|(k, v)| format!("{k}={v}")).collect();
            if users.is_empty() {
                notes.push(format!(
                    "{}: descriptor {} is produced by no route's rate_limits: it limits nothing",
                    at.at(),
                    text.join(",")
                ));
                continue;
            }
            let (r, s) = matcher(routes, &users).map_err(|m| at.error(m))?;
            matched.extend(r.iter().cloned());
            let parts: Vec<String> = entries.iter().map(|(k, v)| format!("{k}.{v}")).collect();
            let name = super::plain_name(&format!("{scope}.{}", parts.join(".")), "descriptor");
            out.push(rule(
                &name,
                b,
                &format!("descriptor {} at {}", text.join(", "), at.at()),
                r,
                s,
            ));
        }
        let Some(b) = &c.bucket else { continue };
        let (r, mut s) = matcher(routes, &taken).map_err(|m| c.loc.error(m))?;
        let mut comment = format!("default token_bucket at {}", c.loc.at());
        if !c.always_default && !matched.is_empty() {
            comment.push_str(": always_consume_default_token_bucket false, so requests a descriptor matched skip it");
            s.extend(matched);
        } else if !matched.is_empty() {
            comment.push_str(": consumed after the matched descriptors' buckets (always_consume_default_token_bucket)");
        }
        let r = if routes.is_empty() { Vec::new() } else { r };
        out.push(rule(&scope, b, &comment, r, s));
    }
    Ok(out)
}

fn rule(
    name: &str,
    b: &Bucket,
    comment: &str,
    routes: Vec<String>,
    skip: Vec<String>,
) -> ImportedRule {
    let interval = crate::time::duration_text(b.fill_ms * crate::time::NANOS_PER_MILLI);
    let comments = vec![
        comment.to_string(),
        format!(
            "max_tokens {} tokens_per_fill {} per {interval}: a token bucket that starts full, one per Envoy process shared by every client",
            b.max_tokens, b.tokens_per_fill
        ),
    ];
    let table = RuleTable {
        name: name.into(),
        algorithm: "envoy-local",
        limit: b.tokens_per_fill,
        window: interval.clone(),
        burst: None,
        key: Key::Fields(Vec::new()),
    };
    let mut fields = Vec::new();
    let every_route = routes.iter().any(|r| r == "/*") && skip.is_empty();
    if !routes.is_empty() && !every_route {
        fields.push(RuleField::Routes(routes));
    }
    if !skip.is_empty() {
        fields.push(RuleField::Skip(skip));
    }
    fields.push(RuleField::Profile(Profile::EnvoyLocal {
        fill_interval: interval,
        max_tokens: b.max_tokens,
        tokens_per_fill: b.tokens_per_fill,
    }));
    ImportedRule {
        comments,
        table,
        fields,
    }
}

/// The contender's dry run and refusal status, one for every configuration that limits.
fn outcome(configs: &[Config], routes: &[Route]) -> Result<(bool, u16)> {
    let limiting: Vec<&Config> = configs
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            (c.bucket.is_some() || !c.descriptors.is_empty())
                && (routes.is_empty() || routes.iter().any(|r| r.config.unwrap_or(0) == *i))
        })
        .map(|(_, c)| c)
        .collect();
    let first = limiting[0];
    if let Some(o) = limiting
        .iter()
        .find(|c| c.enforced != first.enforced || c.status != first.status)
    {
        return Err(o.loc.error(format!("filter_enforced or status differs from {}: rlsim's contender has one dry run and one refusal status", first.loc.at())));
    }
    Ok((!first.enforced, first.status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_the_sort_key_are_envoys() {
        let d = yaml::parse(
            Path::new("e.yaml"),
            "a: 1s\nb: 0.25s\nc: 1.0005s\nd: 250ms\n",
        )
        .unwrap();
        let r = d.root();
        assert_eq!(millis(&r.req("a").unwrap()).unwrap(), 1000);
        assert_eq!(millis(&r.req("b").unwrap()).unwrap(), 250);
        let e = millis(&r.req("c").unwrap()).unwrap_err().to_string();
        assert!(e.starts_with("e.yaml:3: directive `c`:"), "{e}");
        assert!(millis(&r.req("d").unwrap()).is_err());
        // tokensFillPerSecond: integer division by whole seconds, a sub-second interval as 1 s.
        let b = |tokens_per_fill, fill_ms| Bucket {
            max_tokens: 1,
            tokens_per_fill,
            fill_ms,
        };
        assert_eq!(per_second(&b(1, 10_000)), 0);
        assert_eq!(per_second(&b(7, 2000)), 3);
        assert_eq!(per_second(&b(4, 250)), 4);
    }
}
