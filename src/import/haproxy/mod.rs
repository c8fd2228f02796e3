//! HAProxy stick-table rate limits imported as contenders: per `frontend` / `listen`, the
//! `http-request deny` (or `return status ...`) whose condition compares a tracked
//! `http_req_rate(<period>)` becomes one `haproxy-http-req-rate` rule, keyed as the `track-sc`
//! rule's fetch keys the table. docs/import.md lists every directive and how it maps.
//!
//! Followed (haproxy v2.6.0): `src/http_act.c` (`http_action_track_sc`: the tracked entry's
//! `http_req_rate` is counted when the track rule runs, so a later deny reads a rate including
//! this request and a denied request stays counted), `src/http_ana.c`
//! (`http_process_req_common`: the `http-request` rules run in order and the first final
//! action, deny or return, ends them; `stream_inc_http_req_ctr` counts the request at its
//! start for entries tracked by `tcp-request` rules), `src/stick_table.c` (`sc_http_req_rate`,
//! `src_http_req_rate` fetches; `stktable_parse` for `type`, `size`, `expire`, `store`,
//! `peers`), `src/sample.c` (`req.hdr` takes the last occurrence, splitting values on commas).

mod cond;
mod key;
mod read;

use super::config_error;
use super::{
    Bypass, Commit, ContenderField, ContenderTable, Contents, ImportedContender, ImportedRule,
    Profile, RuleField, RuleTable, Selection, Text,
};
use crate::error::{Error, Result};
use crate::time::{NANOS_PER_MILLI, duration_text};
use cond::{Item, Term, Test, Tracker};
use read::{Line, Section};
use std::collections::BTreeMap;
use std::path::Path;

/// `stick-table type T size N expire E store http_req_rate(P),...`.
#[derive(Debug, Clone, PartialEq)]
struct Table {
    ty: String,
    size: String,
    expire_ms: u64,
    period_ms: Option<u64>,
    peers: Option<String>,
    line: usize,
}

/// `http-request track-scN <fetch> [table t]` (or `tcp-request connection|content`).
#[derive(Debug, Clone, PartialEq)]
struct Track {
    n: u8,
    fetch: String,
    table: String,
    terms: Vec<Term>,
    line: usize,
    tcp: bool,
    /// As errors name it: `http-request track-sc0`, `tcp-request content track-sc1`.
    directive: String,
    /// Set when this rule and a `track-scN src` form the trusted-proxy pair (key::tracker_of).
    trusted: Option<Trusted>,
}

/// `track-scN req.hdr_ip(X-Forwarded-For,-1) if { src NETS }` beside `track-scN src` (with no
/// condition, or `unless { src NETS }`): the last X-Forwarded-For entry from a peer in NETS,
/// the peer otherwise.
#[derive(Debug, Clone, PartialEq)]
struct Trusted {
    nets: Vec<String>,
    /// The `track-scN src` rule's line.
    src_line: usize,
    /// That rule has no condition: a trusted peer's request without the header is tracked by
    /// src (with `unless { src NETS }` it is not tracked at all).
    src_always: bool,
}

/// A deny (or `return status`) rule whose condition reads a rate.
#[derive(Debug, Clone, PartialEq)]
struct Deny {
    status: u16,
    rate: (Tracker, bool, u64),
    terms: Vec<Term>,
    line: usize,
    words: String,
}

/// What one frontend or listen section says.
#[derive(Debug, Default)]
struct Proxy {
    acls: BTreeMap<String, Vec<Test>>,
    /// The line each acl is (first) defined at, for errors in its terms.
    acl_lines: BTreeMap<String, usize>,
    tracks: Vec<Track>,
    denies: Vec<Deny>,
    /// An unconditional `http-request return` or `deny` met before any rate deny.
    answered: Option<usize>,
}

pub(super) const NAME: &str = "haproxy";

/// A stick table or a frontend or listen section.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    let haproxy =
        t.text.contains("stick-table") || t.has_line("frontend ") || t.has_line("listen ");
    (!t.json && haproxy).then_some(6)
}

/// Imports `path`: every frontend and listen that denies by a tracked rate, or the one
/// `select.server` names.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let sections = read::sections(path, &text)?;
    if let Some(l) = &select.location {
        return Err(Error::Usage(format!(
            "{}: `location` ({l}, --location) selects an nginx location; a haproxy import selects a frontend or listen by its name with `server` (--server NAME)",
            path.display()
        )));
    }
    if let Some(name) = &select.server {
        named(path, &sections, name)?;
    }
    let mut notes = Vec::new();
    let mut tables = BTreeMap::new();
    for s in &sections {
        for l in &s.lines {
            if l.words[0] == "stick-table" {
                tables.insert(s.name.clone(), table(path, l)?);
            }
        }
        if !matches!(s.kind.as_str(), "frontend" | "listen" | "backend") {
            other_section(path, s, &mut notes);
        }
    }
    let mut contenders = Vec::new();
    for s in &sections {
        let wanted = select.server.as_ref().is_none_or(|n| *n == s.name);
        if !matches!(s.kind.as_str(), "frontend" | "listen") || !wanted {
            continue;
        }
        let proxy = proxy(path, s, &mut notes)?;
        if let Some(c) = contender(path, s, &proxy, &tables)? {
            contenders.push(c);
        }
    }
    if contenders.is_empty() {
        let what = match &select.server {
            Some(n) => format!("no frontend or listen `{n}` denies by a tracked http_req_rate"),
            None => "no frontend or listen denies by a tracked http_req_rate (`http-request deny if { sc_http_req_rate(0) gt N }`): nothing to import".into(),
        };
        let line = sections.first().map_or(1, |s| s.line);
        return Err(config_error(path, line, "frontend", what));
    }
    Ok(Contents { contenders, notes })
}

/// Refuses a `server` that names no frontend or listen, listing those the file has.
fn named(path: &Path, sections: &[Section], name: &str) -> Result<()> {
    let imported = |s: &&Section| matches!(s.kind.as_str(), "frontend" | "listen");
    if sections.iter().filter(imported).any(|s| s.name == name) {
        return Ok(());
    }
    let list: Vec<String> = sections
        .iter()
        .filter(imported)
        .map(|s| format!("{} `{}` (line {})", s.kind, s.name, s.line))
        .collect();
    let other = sections
        .iter()
        .find(|s| s.name == name)
        .map(|s| format!(" (`{name}` is a {} at line {}: only a frontend's or listen's http-request rules are imported)", s.kind, s.line))
        .unwrap_or_default();
    let list = if list.is_empty() {
        "none".to_string()
    } else {
        list.join(", ")
    };
    Err(Error::Usage(format!(
        "{}: no frontend or listen is named `{name}` (server, --server){other}; the file's frontends and listens: {list}",
        path.display()
    )))
}

/// Notes on sections that are read but not modelled.
fn other_section(path: &Path, s: &Section, notes: &mut Vec<String>) {
    let at = format!("{}:{}", path.display(), s.line);
    match s.kind.as_str() {
        "peers" => notes.push(format!("{at}: peers `{}` synchronises stick tables between HAProxy instances (pushed asynchronously, each instance still counts its own requests first); rlsim models one instance", s.name)),
        "defaults" => {
            for l in s.lines.iter().filter(|l| l.words[0].starts_with("http-request")) {
                notes.push(format!("{}:{}: `{}` in defaults is not imported", path.display(), l.line, l.words.join(" ")));
            }
        }
        _ => {}
    }
}

/// HAProxy's largest timer (its `parse_time_err` overflow: "maximum value is 2147483647 ms").
const MAX_TIMER: &str = "2147483647ms (~24.8 days, HAProxy's largest timer)";

/// A duration of haproxy.cfg (`10s`, `1m`, `500`, `500ms`, `1h`, `1d`) in ms, at most
/// HAProxy's largest timer ([`MAX_TIMER`]).
fn millis(text: &str) -> Option<u64> {
    millis_any(text).filter(|&ms| ms <= i32::MAX as u64)
}

fn millis_any(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: u64 = n.parse().ok()?;
    let scale = match unit {
        "" | "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "us" => return Some(n / 1000),
        _ => return None,
    };
    n.checked_mul(scale)
}

fn table(path: &Path, l: &Line) -> Result<Table> {
    let err = |m: String| config_error(path, l.line, "stick-table", m);
    let mut t = Table {
        ty: String::new(),
        size: String::new(),
        expire_ms: 0,
        period_ms: None,
        peers: None,
        line: l.line,
    };
    let mut it = l.words[1..].iter();
    while let Some(w) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| err(format!("`{what}` needs a value")))
        };
        match w.as_str() {
            "type" => t.ty = value("type")?,
            "len" => {
                value("len")?;
            }
            "size" => t.size = value("size")?,
            "expire" => {
                let v = value("expire")?;
                t.expire_ms = millis(&v).ok_or_else(|| {
                    err(format!(
                        "expire `{v}`: must be a duration from 0 to {MAX_TIMER}"
                    ))
                })?;
            }
            "peers" => t.peers = Some(value("peers")?),
            "nopurge" | "srvkey" => {}
            "store" => {
                for item in value("store")?.split(',') {
                    if let Some(p) = item
                        .strip_prefix("http_req_rate(")
                        .and_then(|r| r.strip_suffix(')'))
                    {
                        let ms = millis(p).filter(|&m| m > 0).ok_or_else(|| {
                            err(format!(
                                "http_req_rate period `{p}`: must be a duration from 1ms to {MAX_TIMER}"
                            ))
                        })?;
                        t.period_ms = Some(ms);
                    }
                }
            }
            other => return Err(err(format!("unknown stick-table argument `{other}`"))),
        }
    }
    if !matches!(
        t.ty.as_str(),
        "ip" | "ipv6" | "string" | "integer" | "binary"
    ) {
        return Err(err(format!(
            "type `{}` is not a stick-table type (ip, ipv6, integer, string, binary)",
            t.ty
        )));
    }
    Ok(t)
}

/// The terms of `if ...` / `unless ...` at the end of `words` (from `at`), acl names resolved.
fn condition(proxy: &Proxy, words: &[String]) -> std::result::Result<Vec<Term>, String> {
    let Some(pos) = words.iter().position(|w| w == "if" || w == "unless") else {
        return Ok(vec![]);
    };
    let unless = words[pos] == "unless";
    let items = cond::split(&words[pos + 1..])?;
    if unless && items.len() > 1 {
        return Err("`unless` with several terms (a negated AND) is not modelled".into());
    }
    let mut out = Vec::new();
    for (negated, item) in items {
        let negated = negated != unless;
        let (tests, acl) = match item {
            Item::Test(t) => (vec![t], String::new()),
            Item::Acl(name) => (
                proxy
                    .acls
                    .get(&name)
                    .cloned()
                    .ok_or_else(|| format!("acl `{name}` is not defined in this section"))?,
                format!(
                    "acl `{name}` (line {}): ",
                    proxy.acl_lines.get(&name).copied().unwrap_or_default()
                ),
            ),
        };
        if tests.len() > 1 {
            return Err(format!(
                "{acl}an acl defined on several lines (ORed) is not modelled"
            ));
        }
        out.push(cond::term(&tests[0], negated).map_err(|m| format!("{acl}{m}"))?);
    }
    Ok(out)
}

fn proxy(path: &Path, s: &Section, notes: &mut Vec<String>) -> Result<Proxy> {
    let mut p = Proxy::default();
    for l in &s.lines {
        let w = &l.words;
        let err = |m: String| config_error(path, l.line, &w[..w.len().min(2)].join(" "), m);
        let at = format!("{}:{}", path.display(), l.line);
        match (w[0].as_str(), w.get(1).map(String::as_str)) {
            ("acl", Some(name)) => {
                let Some(fetch) = w.get(2) else {
                    return Err(err(format!("acl `{name}` has no fetch")));
                };
                p.acl_lines.entry(name.to_string()).or_insert(l.line);
                p.acls.entry(name.to_string()).or_default().push(Test {
                    fetch: fetch.clone(),
                    values: w[3..].to_vec(),
                });
            }
            ("http-request" | "tcp-request", Some(action)) => {
                rule(path, s, &mut p, l, action, notes).map_err(err)?;
            }
            ("rate-limit", _) | ("http-response", _) | ("stick", _) | ("use_backend", _) => {
                notes.push(format!("{at}: `{}` is not modelled", w.join(" ")));
            }
            _ => {}
        }
        let _ = at;
    }
    Ok(p)
}

/// One `http-request` / `tcp-request` line.
fn rule(
    path: &Path,
    s: &Section,
    p: &mut Proxy,
    l: &Line,
    action: &str,
    notes: &mut Vec<String>,
) -> std::result::Result<(), String> {
    let w = &l.words;
    let at = format!("{}:{}", path.display(), l.line);
    let tcp = w[0] == "tcp-request";
    let (action, rest) = if tcp {
        if !matches!(action, "connection" | "content" | "session") {
            notes.push(format!("{at}: `{}` is not modelled", w.join(" ")));
            return Ok(());
        }
        (w.get(2).map_or("", String::as_str), &w[3.min(w.len())..])
    } else {
        (action, &w[2..])
    };
    let terms = condition(p, rest)?;
    if let Some(n) = action
        .strip_prefix("track-sc")
        .and_then(|n| n.parse::<u8>().ok())
    {
        let fetch = rest.first().ok_or("track-sc needs a fetch")?.clone();
        let table = match rest.iter().position(|x| x == "table") {
            Some(i) => rest.get(i + 1).ok_or("`table` needs a name")?.clone(),
            None => s.name.clone(),
        };
        // Every rule is kept: which one tracks a request is decided per request (key.rs).
        let end = if tcp { 3 } else { 2 };
        p.tracks.push(Track {
            n,
            fetch,
            table,
            terms,
            line: l.line,
            tcp,
            directive: w[..end.min(w.len())].join(" "),
            trusted: None,
        });
        return Ok(());
    }
    if tcp {
        notes.push(format!("{at}: `{}` is not modelled", w.join(" ")));
        return Ok(());
    }
    let Some(status) = status_of(action, rest)? else {
        return Ok(());
    };
    deny_rule(p, l, &at, action, status, terms, notes)
}

/// The status a final action answers (0: none); `None` for an action that answers nothing.
fn status_of(action: &str, rest: &[String]) -> std::result::Result<Option<u16>, String> {
    Ok(Some(match action {
        "deny" | "tarpit" => {
            let i = rest
                .iter()
                .position(|x| x == "deny_status" || x == "status");
            match i.map(|i| rest.get(i + 1)) {
                // rlsim's refusals answer an error status, as a contender's refuse_status.
                Some(Some(v)) => crate::error::whole(v, 400, 599).map_err(|why| {
                    let range = crate::error::must_be("an HTTP status", 400, 599);
                    format!("deny_status `{v}` is {why}: {range}")
                })? as u16,
                Some(None) => return Err("deny_status needs a status code".into()),
                None => 403,
            }
        }
        "return" => {
            let i = rest.iter().position(|x| x == "status");
            i.and_then(|i| rest.get(i + 1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(200)
        }
        "silent-drop" | "reject" => 0,
        _ => return Ok(None),
    }))
}

/// A final action: a rate deny, or a note / the unconditional answer.
fn deny_rule(
    p: &mut Proxy,
    l: &Line,
    at: &str,
    action: &str,
    status: u16,
    terms: Vec<Term>,
    notes: &mut Vec<String>,
) -> std::result::Result<(), String> {
    let w = &l.words;
    let rate: Vec<&Term> = terms
        .iter()
        .filter(|t| matches!(t, Term::Rate { .. }))
        .collect();
    let Some(Term::Rate {
        tracker,
        ge,
        threshold,
    }) = rate.first().copied()
    else {
        if terms.is_empty() && p.answered.is_none() {
            p.answered = Some(l.line);
        } else {
            notes.push(format!(
                "{at}: `{}` answers some requests before rlsim's rule sees them; not modelled",
                w.join(" ")
            ));
        }
        return Ok(());
    };
    if rate.len() > 1 {
        return Err("two rate comparisons in one condition are not modelled".into());
    }
    if action == "tarpit" {
        notes.push(format!("{at}: tarpit holds a refused request for `timeout tarpit` before answering; rlsim refuses it at once"));
    }
    if status == 0 {
        return Err(format!(
            "`{action}` closes the connection without a status; rlsim's refusals answer a status (use deny)"
        ));
    }
    let others = terms
        .iter()
        .filter(|t| !matches!(t, Term::Rate { .. }))
        .cloned()
        .collect();
    p.denies.push(Deny {
        status,
        rate: (tracker.clone(), *ge, *threshold),
        terms: others,
        line: l.line,
        words: w.join(" "),
    });
    Ok(())
}

/// The contender of one section; `None` when it has no rate deny.
fn contender(
    path: &Path,
    s: &Section,
    p: &Proxy,
    tables: &BTreeMap<String, Table>,
) -> Result<Option<ImportedContender>> {
    let Some(deny) = p.denies.first() else {
        return Ok(None);
    };
    let err = |line: usize, d: &str, m: String| config_error(path, line, d, m);
    if let Some(second) = p.denies.get(1) {
        return Err(err(second.line, "http-request deny", "a second deny by a tracked rate in one section is not modelled: HAProxy counts every tracked request once while rlsim's rules count only what they decide (import one frontend per limit)".into()));
    }
    let mut notes = Vec::new();
    let track = key::tracker_of(path, p, deny, &mut notes)?;
    // Each term is refused at the line it is written on.
    key::no_positive_src(&deny.terms).map_err(|m| err(deny.line, "http-request deny", m))?;
    key::no_positive_src(&track.terms).map_err(|m| err(track.line, &track.directive, m))?;
    let table = tables.get(&track.table).ok_or_else(|| {
        err(track.line, "track-sc", format!("table `{}` has no stick-table (a frontend, backend or listen of that name declares it)", track.table))
    })?;
    let period = table.period_ms.ok_or_else(|| {
        err(
            table.line,
            "stick-table",
            format!(
                "table `{}` does not store http_req_rate(<period>)",
                track.table
            ),
        )
    })?;
    // The trusted-proxy pair tracks at two lines: the deny must follow both.
    let tracked_at = track
        .trusted
        .as_ref()
        .map_or(track.line, |t| t.src_line.max(track.line));
    if !track.tcp && tracked_at > deny.line {
        return Err(err(
            deny.line,
            "http-request deny",
            format!(
                "the deny (line {}) runs before track-sc{} (line {}): it reads a rate without this request, and a denied request is never counted; not modelled (track first)",
                deny.line, track.n, tracked_at
            ),
        ));
    }
    if let Some(line) = p.answered.filter(|&a| a < deny.line) {
        notes.push(format!("{}:{line}: an unconditional http-request return/deny answers every request before the rate deny at line {}: nothing is limited", path.display(), deny.line));
    }
    let rule = rule_of(path, deny, &track, table, period, &mut notes)?;
    let table = ContenderTable {
        description: format!(
            "haproxy {} `{}` ({}:{})",
            s.kind,
            s.name,
            path.display(),
            s.line
        ),
        commit: Some(Commit::InOrder),
    };
    let mut fields = Vec::new();
    let bypass = key::bypass(&deny.terms, &track.terms);
    if !bypass.is_empty() {
        fields.push(ContenderField::Bypass(Bypass {
            cidrs: bypass,
            ..Bypass::default()
        }));
        notes.push("`unless` a src acl exempts these addresses; rlsim's bypass compares the client's own address, HAProxy's `src` the socket peer".into());
    }
    fields.push(ContenderField::RefuseStatus(deny.status));
    if deny.status == 403 {
        notes.push("`http-request deny` answers 403 unless `deny_status 429` is given: logs read the refusals as 403".into());
    }
    notes.push("each HAProxy process (and each instance behind a balancer) has its own stick table unless `peers` synchronise them: N instances admit up to N times the rate".into());
    Ok(Some(ImportedContender {
        name: super::plain_name(&s.name, NAME),
        comments: vec![format!(
            "haproxy {} `{}` at {}:{}",
            s.kind,
            s.name,
            path.display(),
            s.line
        )],
        table,
        fields,
        rules: vec![rule],
        notes,
    }))
}

fn rule_of(
    path: &Path,
    deny: &Deny,
    track: &Track,
    table: &Table,
    period: u64,
    notes: &mut Vec<String>,
) -> Result<ImportedRule> {
    let (period_ns, expire_ns) = (period * NANOS_PER_MILLI, table.expire_ms * NANOS_PER_MILLI);
    let (_, ge, threshold) = deny.rate;
    let admitted = if ge {
        threshold.checked_sub(1)
    } else {
        Some(threshold)
    };
    let limit = admitted.filter(|&a| a > 0).ok_or_else(|| {
        config_error(
            path,
            deny.line,
            "http-request deny",
            "the condition denies every tracked request (threshold 0)",
        )
    })?;
    let file = path.display();
    let op = if ge { "ge" } else { "gt" };
    let mut comments = vec![
        format!("{} at {file}:{}", deny.words, deny.line),
        format!("tracked by track-sc{} {} at {file}:{} into stick-table `{}` (type {}, size {}) at {file}:{}", track.n, track.fetch, track.line, track.table, table.ty, table.size, table.line),
        format!("http_req_rate({}) is a sliding estimate, not a fixed window: the previous period's count weighted by the part of it still inside the last {}, plus the current period's; `{op} {threshold}` admits about {limit} per period", duration_text(period_ns), duration_text(period_ns)),
        "track-sc counts the request before the deny reads the rate, and a denied request stays counted: a client that keeps sending above the limit is refused for as long as it keeps sending".into(),
    ];
    let k = key::key(track, table, notes)
        .map_err(|m| config_error(path, track.line, &track.directive, m))?;
    comments.extend(k.comments);
    let rule = RuleTable {
        name: format!("sc{}_http_req_rate", track.n),
        algorithm: "haproxy-http-req-rate",
        limit,
        window: duration_text(period_ns),
        burst: None,
        key: k.key,
    };
    let mut fields = Vec::new();
    if k.has_api_key {
        fields.push(RuleField::HasApiKey(true));
    }
    key::applies(path, deny, track, &mut fields)?;
    if table.expire_ms == 0 {
        notes.push(format!("{file}:{}: stick-table without `expire`: entries stay until the table's size {} is full and the oldest are evicted (not modelled)", table.line, table.size));
    } else if table.expire_ms < period {
        comments.push(format!("expire {} is shorter than the period {}: an entry idle that long is dropped and its counter starts over", duration_text(expire_ns), duration_text(period_ns)));
        notes.push(format!(
            "{file}:{}: expire {} < http_req_rate period {}: a client pausing {} starts from zero",
            table.line,
            duration_text(expire_ns),
            duration_text(period_ns),
            duration_text(expire_ns)
        ));
    }
    comments.push(format!("stick-table size {}: when full HAProxy evicts the oldest entries; rlsim's store is unbounded", table.size));
    if let Some(peers) = &table.peers {
        notes.push(format!("{file}:{}: table `{}` is shared through peers `{peers}`: remote increments arrive asynchronously; rlsim models one instance", table.line, track.table));
    }
    fields.push(RuleField::Profile(Profile::HaproxyHttpReqRate {
        expire: duration_text(expire_ns),
        operator: op,
        period: duration_text(period_ns),
        threshold,
    }));
    Ok(ImportedRule {
        comments,
        table: rule,
        fields,
    })
}
