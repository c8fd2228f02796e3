//! @nestjs/throttler 6 `ThrottlerModule.forRoot(...)` options, as JSON (the array of throttlers,
//! or `{ "throttlers": [...] }`), imported as one contender, one `nestjs-throttler` rule per
//! throttler, `commit = "in_order"`.
//!
//! Followed: @nestjs/throttler 6.5 `src/throttler.guard.ts`: `onModuleInit` sorts the
//! throttlers by `ttl` (ascending, stable) and names an unnamed one `default`; `canActivate`
//! loops over them in that order and `handleRequest` calls `storageService.increment(...)`
//! before it throws `ThrottlerException` when the key is blocked, so the throttlers before a
//! refusing one have counted the request and those after it never see it (`in_order`); the
//! block lasts `blockDuration || ttl` (0 is ttl); `generateKey` hashes class, handler, throttler
//! name and tracker, one budget per route; the default `getTracker` is `req.ip`.
//! `src/throttler.service.ts` `increment` is the `nestjs-throttler` profile.

use super::json::{self, Source, TrustProxy};
use super::{
    Commit, ContenderField, ContenderTable, Contents, Identity, ImportedContender, ImportedRule,
    Key, Profile, RuleField, RuleTable, Selection, Text,
};
use crate::error::Result;
use crate::time::{NANOS_PER_MILLI, duration_text};
use serde::Deserialize;
use std::path::Path;

/// One `ThrottlerOptions`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Throttler {
    name: Option<String>,
    ttl: f64,
    limit: f64,
    block_duration: Option<f64>,
    ignore_user_agents: Option<Vec<String>>,
    skip_if: Option<serde_json::Value>,
    get_tracker: Option<serde_json::Value>,
    generate_key: Option<serde_json::Value>,
    set_headers: Option<bool>,
}

/// The object form, with Express's `trust proxy` (`trustProxy`), which decides `req.ip`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Module {
    throttlers: Vec<Throttler>,
    skip_if: Option<serde_json::Value>,
    ignore_user_agents: Option<Vec<String>>,
    get_tracker: Option<serde_json::Value>,
    generate_key: Option<serde_json::Value>,
    error_message: Option<serde_json::Value>,
    storage: Option<serde_json::Value>,
    set_headers: Option<bool>,
    trust_proxy: Option<TrustProxy>,
}

pub(super) const NAME: &str = "nestjs-throttler";

/// JSON with throttlers or a `ttl`.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    (t.json && (t.has_key("throttlers") || t.has_key("ttl"))).then_some(5)
}

/// Reads `path`: the throttlers of one `ThrottlerModule.forRoot`.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let text = std::fs::read_to_string(path).map_err(|e| crate::error::Error::io(path, e))?;
    let (module, src, base) = if text.trim_start().starts_with('[') {
        let (throttlers, src) = json::parse::<Vec<Throttler>>(path, &text)?;
        let m = Module {
            throttlers,
            skip_if: None,
            ignore_user_agents: None,
            get_tracker: None,
            generate_key: None,
            error_message: None,
            storage: None,
            set_headers: None,
            trust_proxy: None,
        };
        (m, src, String::new())
    } else {
        let (m, src) = json::parse::<Module>(path, &text)?;
        (m, src, "throttlers".to_string())
    };
    if module.throttlers.is_empty() {
        return Err(src.error(&base, "no throttler: nothing is limited"));
    }
    let mut notes = Vec::new();
    module_notes(&module, &src, &mut notes)?;
    let (ip, says) = json::request_ip(module.trust_proxy.as_ref(), 128, &src, "trustProxy")?;
    let key = Identity {
        fields: Some(vec!["endpoint"]),
        ..ip
    };
    // `onModuleInit`'s sort: by ttl, stable (Array.prototype.sort is stable since ES2019).
    let mut order: Vec<usize> = (0..module.throttlers.len()).collect();
    order.sort_by(|&a, &b| {
        module.throttlers[a]
            .ttl
            .total_cmp(&module.throttlers[b].ttl)
    });
    let mut rules = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for i in order {
        let field = format!("{base}[{i}]");
        let r = rule(&module.throttlers[i], &src, &field, &key, &mut notes)?;
        let name = module.throttlers[i]
            .name
            .clone()
            .unwrap_or("default".into());
        if names.contains(&name) {
            return Err(src.error(&format!("{field}.name"), format!("two throttlers named `{name}`: their storage keys coincide (generateKey hashes class, handler, name and tracker), so they share one record, which rlsim does not model; name them apart")));
        }
        names.push(name);
        rules.push(r);
    }
    if order_changed(&module.throttlers) {
        notes.push(format!("the guard checks the throttlers by ttl, shortest first (onModuleInit sorts them), not in the order written: {}", names.join(", ")));
    }
    notes.push(format!("the key is req.ip (the default getTracker), per route (generateKey hashes the class and handler): {says}"));
    notes.push("the guard increments each throttler before checking it and stops at the first that refuses: the throttlers before it have counted the refused request (commit = \"in_order\"), and a blocked key stays refused for blockDuration even after its hits expire".into());
    notes.push("the default storage is in memory, per Node.js process: N processes or replicas each keep their own counts and admit up to N times the limits".into());
    let at = src.at(&base);
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: "nestjs-throttler".into(),
            comments: vec![format!("ThrottlerModule.forRoot options at {at}")],
            table: ContenderTable {
                description: format!("@nestjs/throttler ThrottlerModule.forRoot ({at})"),
                commit: Some(Commit::InOrder),
            },
            fields: vec![ContenderField::RefuseStatus(429)],
            rules,
            notes,
        }],
        notes: Vec::new(),
    })
}

fn order_changed(t: &[Throttler]) -> bool {
    t.windows(2).any(|w| w[1].ttl < w[0].ttl)
}

/// A whole number of milliseconds (or hits) from 1 to u32::MAX.
fn positive(src: &Source, field: &str, v: f64) -> Result<u64> {
    if v < 0.0 {
        return Err(src.error(field, format!("{v} is negative")));
    }
    if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
        return Err(src.error(
            field,
            format!("{v}: rlsim imports a whole number from 1 to {}", u32::MAX),
        ));
    }
    Ok(v as u64)
}

fn rule(
    t: &Throttler,
    src: &Source,
    field: &str,
    key: &Identity,
    notes: &mut Vec<String>,
) -> Result<ImportedRule> {
    let ttl = positive(src, &format!("{field}.ttl"), t.ttl)?;
    let limit = positive(src, &format!("{field}.limit"), t.limit)?;
    let block = match t.block_duration {
        None => ttl,
        Some(0.0) => {
            notes.push(format!(
                "{}: blockDuration 0 is the ttl: the guard passes `blockDuration || ttl`",
                src.at(&format!("{field}.blockDuration"))
            ));
            ttl
        }
        Some(b) => positive(src, &format!("{field}.blockDuration"), b)?,
    };
    let name = t.name.clone().unwrap_or("default".into());
    for (f, given, what) in [
        (
            "skipIf",
            t.skip_if.is_some(),
            "a function of the request: rlsim counts every request",
        ),
        (
            "getTracker",
            t.get_tracker.is_some(),
            "a function: rlsim keys by the default req.ip",
        ),
        (
            "generateKey",
            t.generate_key.is_some(),
            "a function: rlsim keys per route as the default does",
        ),
        (
            "ignoreUserAgents",
            t.ignore_user_agents.is_some(),
            "rlsim's traffic carries no User-Agent: no request is ignored",
        ),
        (
            "setHeaders",
            t.set_headers.is_some(),
            "only the response headers",
        ),
    ] {
        if given {
            notes.push(format!(
                "{}: throttler `{name}`'s `{f}` is not modelled ({what})",
                src.at(&format!("{field}.{f}"))
            ));
        }
    }
    let table = RuleTable {
        name: super::plain_name(&name, "default"),
        algorithm: "nestjs-throttler",
        limit,
        window: duration_text(ttl * NANOS_PER_MILLI),
        burst: None,
        key: Key::Identity(key.clone()),
    };
    let profile = Profile::NestjsThrottler {
        block_duration: block,
    };
    Ok(ImportedRule {
        comments: vec![
            format!(
                "throttler `{name}` {{ ttl: {ttl}, limit: {limit}, blockDuration: {block} }} at {}",
                src.at(field)
            ),
            format!(
                "a hit counts for {ttl} ms after it (a sliding log); the hit that makes more than {limit} live hits blocks the key for {block} ms, refused and logged, and every hit while blocked is refused"
            ),
        ],
        table,
        fields: vec![RuleField::Profile(profile)],
    })
}

/// Notes for the module-wide options rlsim does not model.
fn module_notes(m: &Module, src: &Source, notes: &mut Vec<String>) -> Result<()> {
    if m.storage.is_some() {
        return Err(src.error("storage", "only the default in-memory ThrottlerStorageService is modelled (the `nestjs-throttler` profile); another storage's arithmetic may differ: leave `storage` out to import the default"));
    }
    for (f, given, what) in [
        (
            "skipIf",
            m.skip_if.is_some(),
            "a function of the request: rlsim counts every request",
        ),
        (
            "getTracker",
            m.get_tracker.is_some(),
            "a function: rlsim keys by the default req.ip",
        ),
        (
            "generateKey",
            m.generate_key.is_some(),
            "a function: rlsim keys per route as the default does",
        ),
        (
            "ignoreUserAgents",
            m.ignore_user_agents.is_some(),
            "rlsim's traffic carries no User-Agent: no request is ignored",
        ),
        (
            "errorMessage",
            m.error_message.is_some(),
            "only the refusal's body",
        ),
        (
            "setHeaders",
            m.set_headers.is_some(),
            "only the response headers",
        ),
    ] {
        if given {
            notes.push(format!("{}: `{f}` is not modelled ({what})", src.at(f)));
        }
    }
    notes.push("@SkipThrottle, @Throttle overrides and guards bound to some controllers only are code, not options: add `skip`/`routes` to the rules by hand".into());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imported(text: &str) -> Result<Contents> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("throttler.json");
        std::fs::write(&p, text).expect("write");
        import(&p, &Selection::default())
    }

    #[test]
    fn throttlers_are_checked_by_ttl_in_order_with_blocks_defaulting_to_ttl() {
        let i = imported("[{\"name\": \"long\", \"ttl\": 60000, \"limit\": 100},\n {\"name\": \"short\", \"ttl\": 1000, \"limit\": 3, \"blockDuration\": 0}]")
            .expect("imports");
        let c = &i.contenders[0];
        let t = c.to_toml(None).expect("writes");
        assert!(t.contains("commit = \"in_order\""), "{t}");
        let short = t.find("name = \"short\"").expect("short");
        let long = t.find("name = \"long\"").expect("long");
        assert!(short < long, "sorted by ttl: {t}");
        assert!(t.contains("profile = { blockDuration = 1000 }"), "{t}");
        assert!(t.contains("fields = [\"endpoint\"]"), "{t}");
        assert!(t.contains("blockDuration 0 is the ttl"), "{t}");
    }

    #[test]
    fn bad_throttlers_name_file_line_and_field() {
        let e = imported(
            "{\"throttlers\": [\n {\"ttl\": 1000, \"limit\": 3},\n {\"ttl\": -5, \"limit\": 3}]}",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("throttler.json:3: field `throttlers[1].ttl`: -5 is negative"),
            "{e}"
        );
        let e = imported("[{\"ttl\": 1000}]").unwrap_err().to_string();
        assert!(
            e.contains("throttler.json:1:") && e.contains("missing field `limit`"),
            "{e}"
        );
        let e = imported("[{\"ttl\": 1000, \"limit\": 1}, {\"ttl\": 5, \"limit\": 1}]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("two throttlers named `default`"), "{e}");
    }
}
