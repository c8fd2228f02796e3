//! The descriptor tree as rules: which requests each limit applies to (`GetLimit`'s one node per
//! level: `key_value`, then a wildcard, then the key alone), what its counter is keyed by, and
//! what `replaces` and `unlimited` take away from the others (`constructLimitsToCheck`).

use super::{Desc, Reads};
use crate::error::Result;
use crate::import::{Bypass, ImportedRule, Key, Profile, RuleField, RuleTable};
use crate::policy::KeyField;

/// The rules and the contender's bypass.
pub(super) struct Plan {
    pub rules: Vec<ImportedRule>,
    pub bypass: Option<Bypass>,
}

/// Which requests a descriptor path reaches, and what its counter is keyed by.
#[derive(Debug, Clone, Default)]
struct Scope<'a> {
    path: Vec<&'a Desc>,
    /// `None`: every route.
    routes: Option<Vec<String>>,
    skip: Vec<String>,
    key: Vec<KeyField>,
}

/// A descriptor with a `rate_limit` (unlimited ones too: they replace) and its scope.
struct Applied<'a> {
    desc: &'a Desc,
    scope: Scope<'a>,
    dropped: bool,
    /// Comment lines on what `replaces` took out of it.
    why: Vec<String>,
}

/// An address or API key value imported as the bypass, under `parent`.
struct Lifted<'a> {
    parent: Vec<&'a Desc>,
    desc: &'a Desc,
}

impl Lifted<'_> {
    /// Whether `a` is under the lifted entry's key alone (so it never applied to that client).
    fn covers(&self, a: &Applied<'_>) -> bool {
        let (p, depth) = (&a.scope.path, self.parent.len());
        p.len() > depth
            && p.iter()
                .zip(&self.parent)
                .all(|(x, y)| std::ptr::eq(*x, *y))
            && p[depth].key == self.desc.key
            && p[depth].value.is_none()
    }
}

#[derive(Default)]
struct Walk<'a> {
    applied: Vec<Applied<'a>>,
    cidrs: Vec<String>,
    api_keys: Vec<String>,
    lifted: Vec<Lifted<'a>>,
}

/// The rules of `tree`, with notes of what is approximated or limits nothing.
pub(super) fn plan(tree: &[Desc], notes: &mut Vec<String>) -> Result<Plan> {
    let mut w = Walk::default();
    walk(tree, &Scope::default(), &mut w)?;
    replaces(&mut w.applied, notes)?;
    lifted(&w, notes);
    let mut rules = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for a in &w.applied {
        let Some(limit) = &a.desc.limit else { continue };
        if limit.unit.is_none() {
            notes.push(format!(
                "{}: descriptor {} is unlimited: no rule (its requests are not limited by it, nor by a less specific entry of its key)",
                a.desc.loc.at(),
                words(&a.scope.path)
            ));
            continue;
        }
        if a.dropped {
            continue;
        }
        let mut name = crate::import::plain_name(&dotted(&a.scope.path), "descriptor");
        if names.contains(&name) {
            name = format!("{name}-{}", rules.len() + 1);
        }
        names.push(name.clone());
        rules.push(rule(&name, a));
    }
    let bypass = Bypass {
        api_keys: w.api_keys.clone(),
        cidrs: w.cidrs.clone(),
    };
    Ok(Plan {
        rules,
        bypass: (bypass != Bypass::default()).then_some(bypass),
    })
}

/// The path as the service names its stats, without the domain (`generic_key_default.path`).
fn dotted(path: &[&Desc]) -> String {
    let parts: Vec<String> = path.iter().map(|d| d.final_key()).collect();
    parts.join(".")
}

/// The path in words (`generic_key=default, path`).
fn words(path: &[&Desc]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|d| match &d.value {
            Some(v) => format!("{}={v}", d.key),
            None => d.key.clone(),
        })
        .collect();
    parts.join(", ")
}

fn walk<'a>(level: &'a [Desc], scope: &Scope<'a>, w: &mut Walk<'a>) -> Result<()> {
    for d in level {
        let mut s = scope.clone();
        s.path.push(d);
        match (d.reads, &d.value) {
            (Reads::Field(KeyField::Endpoint), _) => endpoint(level, d, &mut s)?,
            (Reads::Field(f), None) => s.key.push(f),
            (Reads::Field(f), Some(v)) => {
                bypass(d, f, v, w)?;
                w.lifted.push(Lifted {
                    parent: scope.path.clone(),
                    desc: d,
                });
                continue;
            }
            (Reads::Shared, None) => {
                if level.iter().any(|o| o.key == d.key && o.value.is_some()) {
                    return Err(d.loc.error(format!(
                        "`{}` without a value beside `{}` with one: which a request matches depends on the descriptor_value its route's action sets, which this file does not show",
                        d.key, d.key
                    )));
                }
            }
            (Reads::Shared, Some(_)) => {}
        }
        if d.limit.is_some() {
            w.applied.push(Applied {
                desc: d,
                scope: s.clone(),
                dropped: false,
                why: Vec::new(),
            });
        }
        walk(&d.children, &s, w)?;
    }
    Ok(())
}

/// A wildcard value as an rlsim route pattern: only a trailing `*` (a prefix) is one.
fn pattern(d: &Desc) -> Result<String> {
    let v = d.value.clone().unwrap_or_default();
    match v.find('*') {
        Some(i) if i + 1 != v.len() => Err(d.loc.error(format!(
            "value `{v}`: a `*` before the end cannot be imported (rlsim's route patterns are an exact path or a prefix ending in `*`)"
        ))),
        _ => Ok(v),
    }
}

/// A path-reading entry: the key alone skips its siblings' values (they match first); a
/// value is the rule's route; a wildcard skips the exact values and the earlier wildcards.
fn endpoint<'a>(level: &'a [Desc], d: &'a Desc, s: &mut Scope<'a>) -> Result<()> {
    let same = |o: &&Desc| o.key == d.key && o.value.is_some() && !std::ptr::eq(*o, d);
    let Some(v) = &d.value else {
        s.key.push(KeyField::Endpoint);
        for o in level.iter().filter(same) {
            s.skip.push(pattern(o)?);
        }
        return Ok(());
    };
    if s.routes.is_some() {
        return Err(d.loc.error("a second path entry restricting the routes of one descriptor cannot be imported (rlsim's rule has one route list)"));
    }
    if !d.is_wildcard() {
        s.routes = Some(vec![v.clone()]);
        return Ok(());
    }
    let p = pattern(d)?;
    let at = level.iter().position(|o| std::ptr::eq(o, d)).unwrap_or(0);
    for (i, o) in level.iter().enumerate().filter(|(_, o)| same(o)) {
        let ov = o.value.as_deref().unwrap_or_default();
        if !o.is_wildcard() && crate::policy::route_matches(&p, ov) {
            s.skip.push(ov.to_string());
        } else if o.is_wildcard() && i < at {
            // An earlier wildcard is tried first: it takes what both prefixes match.
            let q = pattern(o)?;
            let (a, b) = (p.trim_end_matches('*'), q.trim_end_matches('*'));
            if a.starts_with(b) || b.starts_with(a) {
                s.skip.push(q);
            }
        }
    }
    // Without share_threshold each value the wildcard matches has its own counter.
    if !d.share_threshold {
        s.key.push(KeyField::Endpoint);
    }
    s.routes = Some(vec![p]);
    Ok(())
}

/// An address or API key value: what it takes from its key's other entries is rlsim's bypass.
fn bypass(d: &Desc, f: KeyField, v: &str, w: &mut Walk<'_>) -> Result<()> {
    let limits = d.limit.as_ref().is_some_and(|l| l.unit.is_some());
    if f == KeyField::User || limits || d.is_wildcard() {
        return Err(d.loc.error(format!(
            "`{}: {v}`{}: rlsim's rules cannot apply to one {} only (an unlimited address or API key is imported as the contender's bypass)",
            d.key,
            if limits { " with a limit" } else { "" },
            f.name()
        )));
    }
    if d.limit.as_ref().is_some_and(|l| !l.replaces.is_empty()) || limited(&d.children) {
        return Err(d.loc.error(format!(
            "`{}: {v}` with limits or replaces under it cannot be imported: rlsim's rules cannot apply to one {} only",
            d.key,
            f.name()
        )));
    }
    if f == KeyField::Ip {
        if v.parse::<std::net::IpAddr>().is_err() {
            return Err(d.loc.error(format!("`{v}` is not an address")));
        }
        w.cidrs.push(v.to_string());
    } else {
        w.api_keys.push(v.to_string());
    }
    Ok(())
}

/// A note for each bypassed value: exact when every rule is under its key alone.
fn lifted(w: &Walk<'_>, notes: &mut Vec<String>) {
    let limiting =
        |a: &&Applied| !a.dropped && a.desc.limit.as_ref().is_some_and(|l| l.unit.is_some());
    for l in &w.lifted {
        let d = l.desc;
        let v = d.value.as_deref().unwrap_or_default();
        let exact = w.applied.iter().filter(limiting).all(|a| l.covers(a));
        notes.push(if exact {
            format!(
                "{}: `{}: {v}` matches before the key alone and has no limit: imported as the contender's bypass (every rule is that key's, so none applies to it, as in the service)",
                d.loc.at(),
                d.key
            )
        } else {
            format!(
                "{}: `{}: {v}` matches before the key alone and has no limit: imported as the contender's bypass, which lets it past every rule, where the service still applies the file's other descriptors to it",
                d.loc.at(),
                d.key
            )
        });
    }
}

/// Whether any descriptor of `tree` has a limit that limits.
fn limited(tree: &[Desc]) -> bool {
    tree.iter()
        .any(|d| d.limit.as_ref().is_some_and(|l| l.unit.is_some()) || limited(&d.children))
}

/// `replaces`: a request the replacing limit applies to is not counted by the replaced ones
/// (`constructLimitsToCheck` drops every limit a matched one names, unlimited ones too).
fn replaces(applied: &mut [Applied<'_>], notes: &mut Vec<String>) -> Result<()> {
    for q in 0..applied.len() {
        let (by, routes, skip) = {
            let a = &applied[q];
            let names = a.desc.limit.as_ref().map(|l| l.replaces.clone());
            (
                names.unwrap_or_default(),
                a.scope.routes.clone(),
                a.scope.skip.clone(),
            )
        };
        for name in by {
            let targets: Vec<usize> = (0..applied.len())
                .filter(|&r| {
                    applied[r]
                        .desc
                        .limit
                        .as_ref()
                        .and_then(|l| l.name.as_deref())
                        == Some(name.as_str())
                })
                .collect();
            let qd = applied[q].desc;
            if targets.is_empty() {
                notes.push(format!(
                    "{}: replaces `{name}`, which no limit is named: it replaces nothing",
                    qd.loc.at()
                ));
            }
            for r in targets {
                let t = &mut applied[r].scope;
                match (&routes, skip.is_empty()) {
                    (None, true) => applied[r].dropped = true,
                    (Some(rs), true) => t.skip.extend(rs.iter().cloned()),
                    (None, false) if t.routes.is_none() && t.skip.is_empty() => {
                        t.routes = Some(skip.clone());
                    }
                    _ => {
                        return Err(qd.loc.error(format!(
                            "replaces `{name}`: the requests this descriptor takes (routes {routes:?} but not {skip:?}) cannot be taken out of the replaced rule's routes exactly"
                        )));
                    }
                }
                applied[r].why.push(format!(
                    "replaced by the descriptor at {} (replaces `{name}`): not counted for its requests",
                    qd.loc.at()
                ));
                if applied[r].dropped {
                    notes.push(format!(
                        "{}: `{name}` is replaced for every request (by {}): no rule",
                        applied[r].desc.loc.at(),
                        qd.loc.at()
                    ));
                }
            }
        }
    }
    Ok(())
}

fn rule(name: &str, a: &Applied<'_>) -> ImportedRule {
    let d = a.desc;
    let limit = d.limit.as_ref().expect("a limiting descriptor");
    let (unit, secs) = limit.unit.expect("a limiting descriptor");
    let window = crate::time::duration_text(secs * crate::time::NANOS_PER_SEC);
    let mut key = a.scope.key.clone();
    key.sort();
    key.dedup();
    let keyed = if key.is_empty() {
        "one counter shared by every request".to_string()
    } else {
        let k: Vec<&str> = key.iter().map(|f| f.name()).collect();
        format!("one counter per {}", k.join("+"))
    };
    let mut comments = vec![
        format!(
            "descriptor {} at {}: {} per {unit}",
            words(&a.scope.path),
            d.loc.at(),
            limit.requests_per_unit
        ),
        format!("{keyed}, in epoch-aligned windows of {window}"),
    ];
    if d.shadow {
        comments.push("shadow_mode: counted, never refuses (would_refuse)".into());
    }
    if d.detailed {
        comments.push("detailed_metric: per-value stats only, decides nothing".into());
    }
    comments.extend(a.why.iter().cloned());
    let table = RuleTable {
        name: name.into(),
        algorithm: "envoy-ratelimit",
        limit: limit.requests_per_unit,
        window,
        burst: None,
        key: Key::Fields(key.iter().map(|f| f.name()).collect()),
    };
    let mut fields = Vec::new();
    if let Some(r) = &a.scope.routes {
        fields.push(RuleField::Routes(r.clone()));
    }
    if !a.scope.skip.is_empty() {
        fields.push(RuleField::Skip(a.scope.skip.clone()));
    }
    if d.shadow {
        fields.push(RuleField::DryRun(true));
    }
    // The service's own numbers: the profile aligns the windows to the Unix epoch.
    fields.push(RuleField::Profile(Profile::EnvoyRatelimit {
        requests_per_unit: limit.requests_per_unit,
        unit,
    }));
    ImportedRule {
        comments,
        table,
        fields,
    }
}
