//! Cloudflare rate limiting rules (the Rulesets API, phase `http_ratelimit`), as JSON: a
//! ruleset (`{"phase": "http_ratelimit", "rules": [...]}`), the API's response around one
//! (`{"result": {...}}`), an array of rules or one rule. The enabled rules become one contender,
//! `commit = "in_order"`, one rule each, keyed by their characteristics and routed by their
//! expression (expression.rs).
//!
//! Followed: Cloudflare's documentation of rate limiting rules ("Rate limiting parameters",
//! "How Cloudflare determines the request rate"): the counters are per data center
//! (`cf.colo.id` is a mandatory characteristic); `period` is one of 10, 60, 120, 300, 600 or
//! 3600 s; the request that makes the count exceed `requests_per_period` within the period
//! triggers the action; `mitigation_timeout > 0` then applies the action for that long whatever
//! the rate, `0` applies it only while the rate is exceeded (the throttle behaviour); rules run
//! in order, each matching rule counting the request, and a blocking (or challenging) action
//! ends the evaluation; `log` only logs. Cloudflare counts approximately; rlsim decides exactly:
//! - `mitigation_timeout > 0`: the `nestjs-throttler` profile, `ttl = period`,
//!   `limit = requests_per_period`, `blockDuration = mitigation_timeout`: a log of the hits of
//!   the last period; the hit that makes more than the limit is refused and blocks the key for
//!   the timeout, every hit while blocked is refused, and the first after it starts afresh.
//! - `mitigation_timeout = 0`: `sliding_window_log`: at most the limit admitted in any period,
//!   a request over it refused and not counted, so the admitted rate is the limit.

mod expression;

use super::json::{self, Source};
use super::{
    Commit, ContenderField, ContenderTable, Contents, ImportedContender, ImportedRule, Key,
    Profile, RuleField, RuleTable, Selection, Text,
};
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// One rule of a ruleset (the API's fields; `id`, `ref`, `version`, `last_updated` and
/// `logging` are read and ignored).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    #[allow(dead_code)]
    id: Option<String>,
    #[serde(rename = "ref")]
    reference: Option<String>,
    #[allow(dead_code)]
    version: Option<serde_json::Value>,
    #[allow(dead_code)]
    last_updated: Option<String>,
    description: Option<String>,
    expression: String,
    action: String,
    action_parameters: Option<ActionParameters>,
    ratelimit: Ratelimit,
    enabled: Option<bool>,
    #[allow(dead_code)]
    logging: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionParameters {
    response: Option<CustomResponse>,
}

/// A block's custom response.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomResponse {
    status_code: Option<i64>,
    content_type: Option<String>,
    content: Option<String>,
}

/// The rule's `ratelimit` object.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ratelimit {
    characteristics: Vec<String>,
    period: u64,
    requests_per_period: Option<u64>,
    score_per_period: Option<serde_json::Value>,
    score_response_header_name: Option<serde_json::Value>,
    mitigation_timeout: Option<u64>,
    counting_expression: Option<String>,
    requests_to_origin: Option<bool>,
}

/// A ruleset (its metadata read and ignored).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Ruleset {
    id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    kind: Option<String>,
    version: Option<serde_json::Value>,
    last_updated: Option<String>,
    phase: Option<String>,
    source: Option<serde_json::Value>,
    rules: Vec<Rule>,
}

/// The API's response around a ruleset (`success`, `errors`, `messages` ignored).
#[derive(Debug, Deserialize)]
struct Envelope {
    result: Ruleset,
}

/// What a file holds: its rules, the field path of the rules (`rules`, `result.rules`, `` for
/// an array) or `None` for one rule, and the ruleset's name and phase.
struct File {
    rules: Vec<Rule>,
    /// The ruleset's own path (`result` in the envelope).
    root: &'static str,
    base: Option<String>,
    name: Option<String>,
    phase: Option<String>,
}

impl File {
    /// The field path of rule `i`.
    fn rule(&self, i: usize) -> String {
        match &self.base {
            Some(b) => format!("{b}[{i}]"),
            None => String::new(),
        }
    }
}

/// `field` under `at`.
fn sub(at: &str, field: &str) -> String {
    if at.is_empty() {
        field.to_string()
    } else {
        format!("{at}.{field}")
    }
}

fn read(path: &Path) -> Result<(File, Source)> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let shape: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let has = |k: &str| shape.as_ref().is_some_and(|v| v.get(k).is_some());
    let ruleset = |r: Ruleset, root: &'static str| File {
        rules: r.rules,
        root,
        base: Some(sub(root, "rules")),
        name: r.name,
        phase: r.phase,
    };
    if has("result") {
        let (e, src) = json::parse::<Envelope>(path, &text)?;
        Ok((ruleset(e.result, "result"), src))
    } else if has("rules") || shape.is_none() {
        let (r, src) = json::parse::<Ruleset>(path, &text)?;
        Ok((ruleset(r, ""), src))
    } else if shape.as_ref().is_some_and(|v| v.is_array()) {
        let (rules, src) = json::parse::<Vec<Rule>>(path, &text)?;
        let file = File {
            rules,
            root: "",
            base: Some(String::new()),
            name: None,
            phase: None,
        };
        Ok((file, src))
    } else {
        let (rule, src) = json::parse::<Rule>(path, &text)?;
        let file = File {
            rules: vec![rule],
            root: "",
            base: None,
            name: None,
            phase: None,
        };
        Ok((file, src))
    }
}

/// What a rule does once its rate is exceeded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// `block`, answering this status.
    Block(u16),
    /// A challenge (`managed_challenge`, `js_challenge`, `challenge`): 403 with a challenge page.
    Challenge(String),
    /// `log`: nothing but a log line.
    Log,
}

/// One mapped rule.
struct Mapped {
    rule: ImportedRule,
    action: Action,
}

pub(super) const NAME: &str = "cloudflare";

/// JSON of the `http_ratelimit` phase, or a rule's `ratelimit` with `requests_per_period`.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    let rule = t.has_key("ratelimit") && t.has_key("requests_per_period");
    (t.json && (t.has_key("http_ratelimit") || rule)).then_some(3)
}

/// Reads `path`: the enabled rate limiting rules of one ruleset (or one rule).
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let (file, src) = read(path)?;
    if let Some(p) = file.phase.as_deref().filter(|p| *p != "http_ratelimit") {
        return Err(src.error(
            &sub(file.root, "phase"),
            format!("`{p}`: only rate limiting rules (phase `http_ratelimit`) are imported"),
        ));
    }
    let mut notes = Vec::new();
    let mut mapped: Vec<Mapped> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, r) in file.rules.iter().enumerate() {
        let at = file.rule(i);
        let name = rule_name(r, i, &names);
        if r.enabled == Some(false) {
            notes.push(format!(
                "{}: rule `{name}` is disabled (`enabled: false`): skipped",
                src.at(&sub(&at, "enabled"))
            ));
            continue;
        }
        mapped.push(rule(r, &name, &src, &at, &mut notes)?);
        names.push(name);
    }
    if mapped.is_empty() {
        let base = file.base.clone().unwrap_or_default();
        return Err(src.error(&base, "no enabled rate limiting rule: nothing is limited"));
    }
    contender(file.name.as_deref(), mapped, &src, notes)
}

/// The contender of the mapped rules: `in_order`, its refusal status from the first rule that
/// refuses, a dry run when every rule only logs.
fn contender(
    name: Option<&str>,
    mapped: Vec<Mapped>,
    src: &Source,
    mut notes: Vec<String>,
) -> Result<Contents> {
    let logs_only = mapped.iter().all(|m| m.action == Action::Log);
    let mut rules = Vec::new();
    let mut status = None;
    for m in mapped {
        let s = match &m.action {
            Action::Log if !logs_only => {
                notes.push(format!("rule `{}` only logs (`action: log`) and never ends the evaluation: it changes no decision of the others and is left out (import it alone to count what it would refuse)", m.rule.table.name));
                continue;
            }
            Action::Log | Action::Block(_) => match &m.action {
                Action::Block(s) => *s,
                _ => 429,
            },
            Action::Challenge(_) => 403,
        };
        match status {
            None => status = Some(s),
            Some(first) if first != s => notes.push(format!("rule `{}` answers {s}, the contender every refusal with {first} (rlsim's refusal status is per contender)", m.rule.table.name)),
            Some(_) => {}
        }
        rules.push(m.rule);
    }
    let at = src.at("");
    let mut fields = vec![ContenderField::RefuseStatus(status.unwrap_or(429))];
    if logs_only {
        fields.push(ContenderField::DryRun(true));
        notes.push("every rule's action is `log`: Cloudflare blocks nothing, it only logs the requests over the rate; rlsim admits everything and reports would_refuse (dry_run)".into());
    }
    if rules.len() > 1 {
        notes.push("Cloudflare runs the rate limiting rules in order: each rule whose expression matches counts the request, and the first whose action blocks or challenges ends the evaluation, so the rules after it never see the request (commit = \"in_order\")".into());
    }
    notes.push("the counters are per Cloudflare data center (`cf.colo.id`, mandatory in every rule's characteristics): the effective limit is per colo, so a client whose requests reach N data centers (anycast routing, roaming, a botnet spread across regions) gets up to N times each limit; rlsim models one data center".into());
    notes.push("Cloudflare counts with an approximate sliding window and its counters take a moment to apply, so a few requests more than the limit can pass; rlsim decides the documented limits exactly (the sliding_window_counter algorithm shows how far an estimate strays)".into());
    let name = name.map_or("cloudflare".to_string(), |n| super::plain_name(n, NAME));
    Ok(Contents {
        contenders: vec![ImportedContender {
            name,
            comments: vec![format!("Cloudflare rate limiting rules at {at}")],
            table: ContenderTable {
                description: format!("Cloudflare rate limiting rules ({at})"),
                commit: Some(Commit::InOrder),
            },
            fields,
            rules,
            notes,
        }],
        notes: Vec::new(),
    })
}

/// The rule's name: its description (or `ref`) as rlsim writes names, `rule-N` without one,
/// `-N` added when an earlier rule has it.
fn rule_name(r: &Rule, i: usize, taken: &[String]) -> String {
    let fallback = format!("rule-{}", i + 1);
    let n = r
        .description
        .as_deref()
        .or(r.reference.as_deref())
        .filter(|d| !d.trim().is_empty())
        .map_or(fallback.clone(), |d| super::plain_name(d.trim(), &fallback));
    if taken.contains(&n) {
        format!("{n}-{}", i + 1)
    } else {
        n
    }
}

/// A whole number of seconds from `min`.
fn seconds(src: &Source, field: &str, v: u64, min: u64) -> Result<u64> {
    if v < min || v > 86_400 {
        return Err(src.error(
            field,
            format!("{v}: rlsim imports a whole number of seconds from {min} to 86400"),
        ));
    }
    Ok(v)
}

/// The algorithm a rule is modelled by, from its `mitigation_timeout`, and why.
fn model(limit: u64, period: u64, timeout: u64) -> (&'static str, String) {
    if timeout > 0 {
        (
            "nestjs-throttler",
            format!(
                "the request that makes more than {limit} in the last {period} s triggers the action and blocks the key for {timeout} s (mitigation_timeout), whatever it sends meanwhile; then it starts afresh. Modelled exactly by the nestjs-throttler profile (ttl = period, blockDuration = mitigation_timeout): its log of the last period's hits is Cloudflare's rate, counted exactly"
            ),
        )
    } else {
        (
            "sliding_window_log",
            format!(
                "mitigation_timeout 0: requests over {limit} in the last {period} s are refused while the rate is exceeded and pass again once it is not (Cloudflare's throttle behaviour); modelled by sliding_window_log: at most {limit} admitted in any {period} s, a refused request not counted"
            ),
        )
    }
}

/// One enabled rule.
fn rule(r: &Rule, name: &str, src: &Source, at: &str, notes: &mut Vec<String>) -> Result<Mapped> {
    let rl = &r.ratelimit;
    let rl_at = sub(at, "ratelimit");
    let f = |field: &str| sub(&rl_at, field);
    for (field, given) in [
        ("score_per_period", rl.score_per_period.is_some()),
        (
            "score_response_header_name",
            rl.score_response_header_name.is_some(),
        ),
    ] {
        if given {
            return Err(src.error(&f(field), "unsupported: complexity-based rate limiting counts a score the origin returns in a response header, and rlsim's limiters never see responses; only request counts (`requests_per_period`) are imported"));
        }
    }
    if ![10, 60, 120, 300, 600, 3600].contains(&rl.period) {
        return Err(src.error(
            &f("period"),
            format!("{}: Cloudflare's rate limiting rules take a period of 10, 60, 120, 300, 600 or 3600 seconds", rl.period),
        ));
    }
    let limit = match rl.requests_per_period {
        None => return Err(src.error(&rl_at, "missing field `requests_per_period`")),
        Some(n) => n,
    };
    if limit == 0 || limit > u64::from(u32::MAX) {
        return Err(src.error(
            &f("requests_per_period"),
            format!(
                "{limit}: rlsim imports a whole number from 1 to {}",
                u32::MAX
            ),
        ));
    }
    let timeout = seconds(
        src,
        &f("mitigation_timeout"),
        rl.mitigation_timeout.unwrap_or(0),
        0,
    )?;
    let action = action(r, src, at, name, notes)?;
    let key = characteristics(&rl.characteristics, src, &f("characteristics"))?;
    let selection = expression::parse(&r.expression).map_err(|e| {
        src.error(
            &sub(at, "expression"),
            format!("{e}; {}", expression::SUPPORTED),
        )
    })?;
    unmodelled(r, name, src, at, notes);
    let period = rl.period;
    let (algorithm, says) = model(limit, period, timeout);
    let table = RuleTable {
        name: name.into(),
        algorithm,
        limit,
        window: crate::time::duration_text(period * crate::time::NANOS_PER_SEC),
        burst: None,
        key: Key::Fields(key),
    };
    let mut fields = Vec::new();
    if !selection.routes.is_empty() {
        fields.push(RuleField::Routes(selection.routes.clone()));
    }
    if !selection.methods.is_empty() {
        fields.push(RuleField::Methods(selection.methods.clone()));
    }
    if timeout > 0 {
        fields.push(RuleField::Profile(Profile::NestjsThrottler {
            block_duration: timeout * 1000,
        }));
    }
    let comments = vec![
        format!(
            "rule `{name}` {{ expression: {}, characteristics: [{}], period: {period}, requests_per_period: {limit}, mitigation_timeout: {timeout}, action: {} }} at {}",
            r.expression,
            rl.characteristics.join(", "),
            r.action,
            src.at(at)
        ),
        says,
    ];
    Ok(Mapped {
        rule: ImportedRule {
            comments,
            table,
            fields,
        },
        action,
    })
}

/// The rule's action and the status its refusals answer.
fn action(r: &Rule, src: &Source, at: &str, name: &str, notes: &mut Vec<String>) -> Result<Action> {
    let response = r
        .action_parameters
        .as_ref()
        .and_then(|p| p.response.as_ref());
    let a = match r.action.as_str() {
        "block" => {
            let written = response.and_then(|c| c.status_code).unwrap_or(429);
            let Some(status) = u16::try_from(written)
                .ok()
                .filter(|s| (400..=599).contains(s))
            else {
                let field = sub(at, "action_parameters.response.status_code");
                return Err(src.error(
                    &field,
                    format!("{written}: rlsim's refusals answer a status from 400 to 599"),
                ));
            };
            if response.is_some_and(|c| c.content.is_some() || c.content_type.is_some()) {
                notes.push(format!(
                    "{}: rule `{name}`'s custom response body is not modelled (only its status)",
                    src.at(&sub(at, "action_parameters.response"))
                ));
            }
            Action::Block(status)
        }
        "managed_challenge" | "js_challenge" | "challenge" => {
            notes.push(format!("{}: rule `{name}` answers with a challenge (`{}`): rlsim's clients never solve one, so a challenged request is refused (403, the challenge page's status); a browser that solves it passes at Cloudflare", src.at(&sub(at, "action")), r.action));
            Action::Challenge(r.action.clone())
        }
        "log" => Action::Log,
        other => {
            return Err(src.error(&sub(at, "action"), format!("`{other}`: a rate limiting rule's action is block, managed_challenge, js_challenge, challenge or log")));
        }
    };
    if r.action_parameters.is_some() && !matches!(a, Action::Block(_)) {
        notes.push(format!(
            "{}: rule `{name}`'s action_parameters are not modelled",
            src.at(&sub(at, "action_parameters"))
        ));
    }
    Ok(a)
}

/// The rule's key fields from its characteristics (`cf.colo.id` mandatory; `ip.src` is the
/// address the client connects to Cloudflare from, rlsim's `ip`; the `x-api-key` header is
/// `api_key`), in rlsim's order.
fn characteristics(list: &[String], src: &Source, field: &str) -> Result<Vec<&'static str>> {
    if !list.iter().any(|c| c == "cf.colo.id") {
        return Err(src.error(field, "Cloudflare requires `cf.colo.id` among the characteristics (its counters are per data center): add it"));
    }
    let (mut ip, mut api_key) = (false, false);
    for (i, c) in list.iter().enumerate() {
        let header = c
            .strip_prefix("http.request.headers[\"")
            .and_then(|h| h.strip_suffix("\"]"))
            .map(str::to_ascii_lowercase);
        match (c.as_str(), header.as_deref()) {
            ("cf.colo.id", _) => {}
            ("ip.src", _) => ip = true,
            (_, Some("x-api-key")) if c.contains("x-api-key") => api_key = true,
            (_, Some(h)) if !c.contains(h) => {
                return Err(src.error(&format!("{field}[{i}]"), format!("`{c}`: Cloudflare matches header names in lower case (it normalises them at the edge): write http.request.headers[\"{h}\"]")));
            }
            (_, Some(h)) => {
                return Err(src.error(&format!("{field}[{i}]"), format!("`{c}`: rlsim's requests carry an API key (`x-api-key`) but no `{h}` header; key on ip.src or http.request.headers[\"x-api-key\"]")));
            }
            ("cf.unique_visitor_id", _) => {
                return Err(src.error(&format!("{field}[{i}]"), "`cf.unique_visitor_id` (IP with NAT support) is Cloudflare's own visitor identification, which rlsim does not model; key on ip.src"));
            }
            _ => {
                return Err(src.error(&format!("{field}[{i}]"), format!("`{c}` is not imported: rlsim keys Cloudflare rules on ip.src (`ip`) and http.request.headers[\"x-api-key\"] (`api_key`), beside cf.colo.id")));
            }
        }
    }
    let mut key = Vec::new();
    if ip {
        key.push("ip");
    }
    if api_key {
        key.push("api_key");
    }
    Ok(key)
}

/// Notes for what a rule says that rlsim does not model.
fn unmodelled(r: &Rule, name: &str, src: &Source, at: &str, notes: &mut Vec<String>) {
    let rl = &r.ratelimit;
    let f = |field: &str| src.at(&sub(&sub(at, "ratelimit"), field));
    if let Some(c) = rl
        .counting_expression
        .as_deref()
        .filter(|c| !c.trim().is_empty())
    {
        notes.push(format!("{}: rule `{name}`'s counting_expression `{c}` is not modelled: rlsim counts every request the rule's expression matches (Cloudflare counts only those the counting expression matches, often by response status, which rlsim's limiters never see)", f("counting_expression")));
    }
    if rl.requests_to_origin == Some(true) {
        notes.push(format!("{}: rule `{name}` counts only requests that go to the origin (`requests_to_origin: true`, cache misses); rlsim has no cache, so every matching request counts", f("requests_to_origin")));
    }
    let header = rl
        .characteristics
        .iter()
        .any(|c| c.starts_with("http.request.headers"));
    if header && !rl.characteristics.iter().any(|c| c == "ip.src") {
        notes.push(format!("{}: rule `{name}` keys on the x-api-key header alone (beside cf.colo.id): a client that sends a fresh value per request gets a fresh counter each time, which is why Cloudflare recommends another characteristic beside a header", f("characteristics")));
    }
    if r.expression.contains("wildcard") {
        notes.push(format!(
            "{}: rule `{name}`'s `wildcard` ignores case; rlsim's routes do not",
            src.at(&sub(at, "expression"))
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imported(text: &str) -> Result<Contents> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("rules.json");
        std::fs::write(&p, text).expect("write");
        import(&p, &Selection::default())
    }

    /// The contender's TOML and notes.
    fn toml(text: &str) -> String {
        let i = imported(text).expect("imports");
        let c = &i.contenders[0];
        let mut t = c.to_toml(None).expect("writes");
        for n in &c.notes {
            t.push_str(n);
            t.push('\n');
        }
        t
    }

    fn err(text: &str) -> String {
        imported(text).unwrap_err().to_string()
    }

    /// One rule: `ratelimit` on line 3, its fields one a line from line 4 (`characteristics`,
    /// `period`, `requests_per_period`, `mitigation_timeout`, then `extra`).
    fn rule(action: &str, characteristics: &str, period: u64, timeout: u64, extra: &str) -> String {
        format!(
            r#"{{"description": "api", "expression": "(http.request.uri.path matches \"^/api/\")",
 "action": "{action}",
 "ratelimit": {{
  "characteristics": {characteristics},
  "period": {period},
  "requests_per_period": 100,
  "mitigation_timeout": {timeout}{extra}
 }}
}}"#
        )
    }

    const IP: &str = r#"["ip.src", "cf.colo.id"]"#;

    #[test]
    fn a_mitigation_timeout_blocks_as_the_nestjs_profile_with_block_duration() {
        let t = toml(&rule("block", IP, 60, 600, ""));
        assert!(
            t.contains("commit = \"in_order\"\nrefuse_status = 429"),
            "{t}"
        );
        assert!(
            t.contains("name = \"api\"\nalgorithm = \"nestjs-throttler\"\nlimit = 100\nwindow = \"1m\"\nkey = [\"ip\"]\nroutes = [\"/api/*\"]\nprofile = { blockDuration = 600000 }"),
            "{t}"
        );
        assert!(t.contains("the effective limit is per colo"), "{t}");
        assert!(t.contains("rules.json:1"), "{t}");
    }

    #[test]
    fn no_mitigation_timeout_throttles_as_the_sliding_log() {
        let t = toml(&rule("block", IP, 10, 0, ""));
        assert!(
            t.contains("algorithm = \"sliding_window_log\"\nlimit = 100\nwindow = \"10s\""),
            "{t}"
        );
        assert!(!t.contains("blockDuration"), "{t}");
        assert!(t.contains("throttle behaviour"), "{t}");
    }

    #[test]
    fn characteristics_map_to_key_fields_in_rlsims_order() {
        let both = r#"["http.request.headers[\"x-api-key\"]", "cf.colo.id", "ip.src"]"#;
        let t = toml(&rule("block", both, 60, 0, ""));
        assert!(t.contains("key = [\"ip\", \"api_key\"]"), "{t}");
        assert!(!t.contains("alone"), "{t}");
        let t = toml(&rule(
            "block",
            r#"["cf.colo.id", "http.request.headers[\"x-api-key\"]"]"#,
            60,
            0,
            "",
        ));
        assert!(
            t.contains("rules.json:4: rule `api` keys on the x-api-key header alone"),
            "{t}"
        );
        let e = err(&rule(
            "block",
            r#"["cf.colo.id", "http.request.headers[\"X-API-Key\"]"]"#,
            60,
            0,
            "",
        ));
        assert!(e.contains("field `ratelimit.characteristics[1]`: `http.request.headers[\"X-API-Key\"]`: Cloudflare matches header names in lower case"), "{e}");
        let t = toml(&rule("block", r#"["cf.colo.id"]"#, 60, 0, ""));
        assert!(t.contains("key = []"), "{t}");
    }

    #[test]
    fn actions_set_the_status_challenges_refuse_and_log_alone_is_a_dry_run() {
        let t = toml(&rule("managed_challenge", IP, 60, 0, ""));
        assert!(t.contains("refuse_status = 403"), "{t}");
        assert!(t.contains("never solve one"), "{t}");
        let t = toml(&rule("log", IP, 60, 0, ""));
        assert!(t.contains("dry_run = true"), "{t}");
        let custom = rule("block", IP, 60, 0, "").replace(
            "\"action\": \"block\",",
            "\"action\": \"block\", \"action_parameters\": {\"response\": {\"status_code\": 503, \"content\": \"slow down\"}},",
        );
        let t = toml(&custom);
        assert!(t.contains("refuse_status = 503"), "{t}");
        assert!(t.contains("custom response body is not modelled"), "{t}");
    }

    #[test]
    fn a_ruleset_is_in_order_skips_disabled_rules_and_leaves_log_rules_out_beside_blocks() {
        let text = format!(
            "{{\"name\": \"zone rl\", \"kind\": \"zone\", \"phase\": \"http_ratelimit\", \"rules\": [\n{},\n{},\n{}]}}",
            rule("block", IP, 60, 600, ""),
            rule("log", IP, 60, 0, "").replace("\"api\"", "\"watch\""),
            rule("block", IP, 10, 0, "")
                .replace("\"api\"", "\"off\"")
                .replace("\"action\"", "\"enabled\": false, \"action\""),
        );
        let i = imported(&text).expect("imports");
        let c = &i.contenders[0];
        assert_eq!(c.name, "zone_rl");
        assert_eq!(c.rules.len(), 1, "{:?}", c.rules);
        let notes = c.notes.join("\n");
        assert!(
            notes.contains("rule `off` is disabled (`enabled: false`): skipped"),
            "{notes}"
        );
        assert!(notes.contains("rule `watch` only logs"), "{notes}");
        // The API's response around the ruleset reads the same.
        let env = format!("{{\"success\": true, \"errors\": [], \"result\": {text}}}");
        assert_eq!(
            imported(&env).expect("imports").contenders[0].rules.len(),
            1
        );
        // Two blocking rules: in order, each named.
        let two = format!(
            "[{}, {}]",
            rule("block", IP, 60, 600, ""),
            rule("block", IP, 10, 0, "")
        );
        let t = toml(&two);
        assert!(
            t.contains("name = \"api\"") && t.contains("name = \"api-2\""),
            "{t}"
        );
        assert!(
            t.contains("the first whose action blocks or challenges ends the evaluation"),
            "{t}"
        );
    }

    #[test]
    fn unmodelled_counting_is_noted() {
        let extra = ",\n  \"counting_expression\": \"http.response.code eq 401\",\n  \"requests_to_origin\": true";
        let t = toml(&rule("block", IP, 60, 0, extra));
        assert!(
            t.contains("rules.json:8: rule `api`'s counting_expression"),
            "{t}"
        );
        assert!(
            t.contains("rules.json:9: rule `api` counts only requests that go to the origin"),
            "{t}"
        );
    }

    #[test]
    fn bad_rules_name_file_line_and_field() {
        let e = err(&rule("block", IP, 30, 0, ""));
        assert!(e.contains("rules.json:5: field `ratelimit.period`: 30: Cloudflare's rate limiting rules take a period of 10, 60, 120, 300, 600 or 3600 seconds"), "{e}");
        let e = err(&rule("block", r#"["ip.src"]"#, 60, 0, ""));
        assert!(
            e.contains(
                "rules.json:4: field `ratelimit.characteristics`: Cloudflare requires `cf.colo.id`"
            ),
            "{e}"
        );
        let e = err(&rule(
            "block",
            r#"["cf.colo.id", "ip.src.asnum"]"#,
            60,
            0,
            "",
        ));
        assert!(
            e.contains(
                "rules.json:4: field `ratelimit.characteristics[1]`: `ip.src.asnum` is not imported"
            ),
            "{e}"
        );
        let e = err(&rule(
            "block",
            r#"["cf.colo.id", "cf.unique_visitor_id"]"#,
            60,
            0,
            "",
        ));
        assert!(
            e.contains("field `ratelimit.characteristics[1]`: `cf.unique_visitor_id`"),
            "{e}"
        );
        let e = err(&rule("redirect", IP, 60, 0, ""));
        assert!(e.contains("rules.json:2: field `action`: `redirect`: a rate limiting rule's action is block, managed_challenge, js_challenge, challenge or log"), "{e}");
        let e = err(&rule("block", IP, 60, 0, ",\n  \"score_per_period\": 400"));
        assert!(
            e.contains(
                "rules.json:8: field `ratelimit.score_per_period`: unsupported: complexity-based"
            ),
            "{e}"
        );
        let e = err(&rule(
            "block",
            IP,
            60,
            0,
            ",\n  \"requests_per_periods\": 4",
        ));
        assert!(
            e.contains("rules.json:8:") && e.contains("unknown field `requests_per_periods`"),
            "{e}"
        );
        let e = err(&rule("block", IP, 60, 0, "")
            .replace("matches \\\"^/api/\\\"", "contains \\\"/api\\\""));
        assert!(e.contains("rules.json:1: field `expression`: `http.request.uri.path contains \"/api\"`: the operator `contains` is not imported; rlsim imports"), "{e}");
        let e = err("{\"phase\": \"http_request_firewall_custom\",\n \"rules\": []}");
        assert!(e.contains("rules.json:1: field `phase`: `http_request_firewall_custom`: only rate limiting rules"), "{e}");
        let e = err("{\"phase\": \"http_ratelimit\",\n \"rules\": []}");
        assert!(
            e.contains("rules.json:2: field `rules`: no enabled rate limiting rule"),
            "{e}"
        );
    }
}
