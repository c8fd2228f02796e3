//! express-rate-limit 8 options, as JSON (the object given to `rateLimit({...})`), imported as
//! one contender with one `express-rate-limit` rule (the profile of its default MemoryStore).
//!
//! Followed: express-rate-limit 8.6 `source/rate-limit.ts` (`parseOptions`: the defaults,
//! `limit` over the deprecated `max`, `standardHeaders: true` as draft-6; the middleware:
//! `store.increment(key)` then `totalHits > limit` refuses with `statusCode`; `skipFailedRequests`
//! / `skipSuccessfulRequests` decrement once the response status is known), the default
//! `keyGenerator` (`req.ip`, IPv6 cut to `ipv6Subnet`, 56 by default, `ipKeyGenerator`) and
//! `source/validations.ts` (`knownOptions`, `limit: 0` refuses everything since v7).

use super::json::{self, Source, TrustProxy};
use super::{
    ContenderField, ContenderTable, Contents, Identity, ImportedContender, ImportedRule, Key,
    Profile, RuleField, RuleTable, Selection, Text, Who,
};
use crate::error::Result;
use crate::time::{NANOS_PER_MILLI, duration_text};
use serde::Deserialize;
use std::path::Path;

/// `rateLimit`'s options that JSON can carry, plus Express's `trust proxy` (`trustProxy`),
/// which decides `req.ip`, the default key. Functions (`skip`, `handler`, a custom
/// `keyGenerator`) are code: a named `keyGenerator` stands for the usual ones.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Options {
    window_ms: Option<f64>,
    limit: Option<f64>,
    max: Option<f64>,
    status_code: Option<i64>,
    message: Option<serde_json::Value>,
    legacy_headers: Option<bool>,
    headers: Option<bool>,
    standard_headers: Option<serde_json::Value>,
    identifier: Option<String>,
    request_property_name: Option<String>,
    skip_failed_requests: Option<bool>,
    skip_successful_requests: Option<bool>,
    key_generator: Option<String>,
    ipv6_subnet: Option<serde_json::Value>,
    store: Option<serde_json::Value>,
    validate: Option<serde_json::Value>,
    pass_on_store_error: Option<bool>,
    trust_proxy: Option<TrustProxy>,
}

pub(super) const NAME: &str = "express-rate-limit";

/// JSON with a key only express-rate-limit's options have.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    let keys = [
        "windowMs",
        "skipFailedRequests",
        "keyGenerator",
        "legacyHeaders",
        "standardHeaders",
    ];
    (t.json && keys.iter().any(|k| t.has_key(k))).then_some(4)
}

/// Reads `path`, the options of one `rateLimit(...)` middleware.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let (o, src) = json::read::<Options>(path)?;
    let mut notes = Vec::new();
    let window_ms = whole(&src, "windowMs", o.window_ms, 60_000.0)?;
    if window_ms == 0 {
        return Err(src.error("windowMs", "must be greater than zero"));
    }
    let (limit_field, limit_value) = match (o.limit, o.max) {
        (Some(l), max) => {
            if max.is_some() {
                notes.push(format!("{}: `max` is ignored beside `limit` (parseOptions spreads `limit` over the `max` default)", src.at("max")));
            }
            ("limit", Some(l))
        }
        (None, Some(m)) => ("max", Some(m)),
        (None, None) => ("limit", None),
    };
    let limit = whole(&src, limit_field, limit_value, 5.0)?;
    if limit == 0 {
        return Err(src.error(limit_field, "0 refuses every request since express-rate-limit 7 (it disabled limiting in 6): rlsim rules need a limit of at least 1"));
    }
    let status = o.status_code.unwrap_or(429);
    let Some(status) = u16::try_from(status)
        .ok()
        .filter(|s| (400..=599).contains(s))
    else {
        return Err(src.error(
            "statusCode",
            format!("{status}: rlsim's refusals answer a status from 400 to 599"),
        ));
    };
    for (field, on) in [
        ("skipFailedRequests", o.skip_failed_requests),
        ("skipSuccessfulRequests", o.skip_successful_requests),
    ] {
        if on == Some(true) {
            return Err(src.error(field, "true uncounts a hit once its response status is known (>= 400 is failed, `requestWasSuccessful`), including the 429s the limiter sends itself; rlsim's limiters never see response statuses, so it cannot decide as express-rate-limit does"));
        }
    }
    if o.store.is_some() {
        return Err(src.error("store", "only the default MemoryStore is modelled (the `express-rate-limit` profile); a store's own arithmetic (rate-limit-redis, memcached...) may differ: leave `store` out to import the MemoryStore"));
    }
    let key = key(&o, &src, &mut notes)?;
    unmodelled(&o, &src, &mut notes);
    let at = src.at("");
    let table = RuleTable {
        name: "express".into(),
        algorithm: "express-rate-limit",
        limit,
        window: duration_text(window_ms * NANOS_PER_MILLI),
        burst: None,
        key: Key::Identity(key.0),
    };
    let profile = Profile::ExpressRateLimit { limit, window_ms };
    let rule = ImportedRule {
        comments: vec![
            format!("rateLimit({{ windowMs: {window_ms}, limit: {limit} }}) at {at}"),
            format!(
                "a window of {window_ms} ms starts at each key's first hit (not aligned to the clock); the hit that makes the count exceed {limit} is refused, and refused hits count too, so a client that keeps sending stays refused until its window ends"
            ),
            format!("key: {}", key.1),
        ],
        table,
        fields: vec![RuleField::Profile(profile)],
    };
    notes.push("the default MemoryStore lives in one Node.js process: N processes (cluster, pm2, replicas behind a balancer) each keep their own counts and admit up to N times the limit".into());
    notes.push(format!("windowMs {window_ms}: the window starts at each client's first hit and is not aligned to the clock, so two windows' worth can pass across one boundary (up to 2 x {limit} within {window_ms} ms)"));
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: "express-rate-limit".into(),
            comments: vec![format!("express-rate-limit options at {at}")],
            table: ContenderTable {
                description: format!("express-rate-limit options ({at})"),
                commit: None,
            },
            fields: vec![ContenderField::RefuseStatus(status)],
            rules: vec![rule],
            notes,
        }],
        notes: Vec::new(),
    })
}

/// A non-negative whole number option, `default` when unset.
fn whole(src: &Source, field: &str, v: Option<f64>, default: f64) -> Result<u64> {
    let v = v.unwrap_or(default);
    let why = if v < 0.0 {
        "is too small"
    } else if v > u32::MAX as f64 {
        "is too large"
    } else if v.fract() != 0.0 {
        "is not a whole number"
    } else {
        return Ok(v as u64);
    };
    let range = crate::error::must_be("a whole number", 0, u32::MAX);
    Err(src.error(field, format!("{v} {why}: {range}")))
}

/// The rule's key from `keyGenerator`, `ipv6Subnet` and `trustProxy`, and what it means.
fn key(o: &Options, src: &Source, notes: &mut Vec<String>) -> Result<(Identity, String)> {
    let prefix = match &o.ipv6_subnet {
        None => 56,
        Some(serde_json::Value::Bool(false)) => 128,
        Some(serde_json::Value::Number(n))
            if n.as_u64().is_some_and(|n| (1..=128).contains(&n)) =>
        {
            let n = n.as_u64().unwrap_or(56);
            if !(32..=64).contains(&n) {
                notes.push(format!("{}: ipv6Subnet {n} is outside 32..64: express-rate-limit logs ERR_ERL_IPV6_SUBNET but keys on it", src.at("ipv6Subnet")));
            }
            n as u32
        }
        Some(v) => {
            return Err(src.error(
                "ipv6Subnet",
                format!("{v}: expected false or a prefix length from 1 to 128 (usually 48 to 64)"),
            ));
        }
    };
    let (ip, mut says) = json::request_ip(o.trust_proxy.as_ref(), prefix, src, "trustProxy")?;
    says.push_str(&format!(
        "; an IPv6 address is cut to its /{prefix} (`ipv6Subnet`)"
    ));
    notes.push(format!(
        "the key is req.ip, which Express's `trust proxy` decides ({}): {says}",
        match &o.trust_proxy {
            None => "unset here, so false".to_string(),
            Some(_) => format!("trustProxy at {}", src.at("trustProxy")),
        }
    ));
    match o.key_generator.as_deref() {
        None | Some("ip") => Ok((ip, says)),
        Some("user_else_ip") => {
            let id = Identity {
                fallback: Some(Box::new(ip)),
                ..Identity::new(Who::UserElse)
            };
            Ok((id, format!("the signed-in user's id, else req.ip ({says})")))
        }
        Some(other) => Err(src.error(
            "keyGenerator",
            format!("`{other}`: the named choices are \"ip\" (the default: req.ip, IPv6 cut to ipv6Subnet) and \"user_else_ip\" (req.user's id, else req.ip); a custom function is code: write the rule's `key` by hand"),
        )),
    }
}

/// Notes for the options that only shape the response.
fn unmodelled(o: &Options, src: &Source, notes: &mut Vec<String>) {
    let shown = [
        ("message", o.message.is_some(), "the refusal's body"),
        (
            "legacyHeaders",
            o.legacy_headers.is_some(),
            "X-RateLimit-* headers (on by default)",
        ),
        (
            "headers",
            o.headers.is_some(),
            "the old name of legacyHeaders",
        ),
        (
            "standardHeaders",
            o.standard_headers.is_some(),
            "RateLimit-* headers (true is draft-6)",
        ),
        (
            "identifier",
            o.identifier.is_some(),
            "the draft-8 header's policy name",
        ),
        (
            "requestPropertyName",
            o.request_property_name.is_some(),
            "where req.rateLimit is stored",
        ),
        (
            "validate",
            o.validate.is_some(),
            "which misconfigurations are logged",
        ),
        (
            "passOnStoreError",
            o.pass_on_store_error.is_some(),
            "what happens when the store fails (MemoryStore does not)",
        ),
    ];
    for (field, given, what) in shown {
        if given {
            notes.push(format!(
                "{}: `{field}` is not modelled: it sets {what}, not the decisions",
                src.at(field)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imported(text: &str) -> Result<Contents> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("limiter.json");
        std::fs::write(&p, text).expect("write");
        import(&p, &Selection::default())
    }

    #[test]
    fn defaults_are_five_a_minute_per_peer_with_ipv6_slash_56() {
        let i = imported("{}").expect("imports");
        let t = i.contenders[0].to_toml(None).expect("writes");
        assert!(t.contains("limit = 5\nwindow = \"1m\""), "{t}");
        assert!(
            t.contains("key = { identity = \"peer\", ipv6_prefix = 56 }"),
            "{t}"
        );
        assert!(t.contains("refuse_status = 429"), "{t}");
    }

    #[test]
    fn limit_wins_over_max_and_trust_proxy_keys_by_hops() {
        let i = imported("{\"windowMs\": 900000, \"max\": 3, \"limit\": 100, \"trustProxy\": 1, \"ipv6Subnet\": false}")
            .expect("imports");
        let t = i.contenders[0].to_toml(None).expect("writes");
        assert!(t.contains("limit = 100\nwindow = \"15m\""), "{t}");
        assert!(t.contains("identity = \"xff\""), "{t}");
        assert!(t.contains("trusted_hops = 1"), "{t}");
        assert!(t.contains("ipv6_prefix = 128"), "{t}");
        assert!(t.contains("`max` is ignored"), "{t}");
    }

    #[test]
    fn refused_options_name_their_field_and_line() {
        let e = imported("{\n  \"windowMs\": 1000,\n  \"skipFailedRequests\": true\n}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("limiter.json:3: field `skipFailedRequests`"),
            "{e}"
        );
        let e = imported("{\n  \"limit\": -3\n}").unwrap_err().to_string();
        assert!(
            e.contains(
                ":2: field `limit`: -3 is too small: must be a whole number from 0 to 4294967295"
            ),
            "{e}"
        );
        let e = imported("{\n  \"window\": 1000\n}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":2:") && e.contains("unknown field `window`"),
            "{e}"
        );
    }
}
