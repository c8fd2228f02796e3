//! The envoyproxy/ratelimit service's descriptor configuration (YAML: `domain`, `descriptors`),
//! imported as one contender, `commit = "every_rule"`, one `envoy-ratelimit` profile rule per
//! descriptor with a `rate_limit`: windows aligned to the Unix epoch, as the service's (docs/import.md).
//!
//! Followed: `src/config/config_impl.go` (`loadDescriptors`: the validations and their
//! messages; `GetLimit`: a request descriptor's entries walk the tree one level each, the
//! `key_value` entry first, then a wildcard value, then the key alone, and only the limit at the
//! descriptor's last entry applies), `src/service/ratelimit.go` (`constructLimitsToCheck`:
//! `unlimited` and `replaces`), `src/limiter/base_limiter.go` and `src/redis/fixed_cache_impl.go`
//! (`DoLimit`: every descriptor's counter is incremented, the request is over the limit if any
//! non-shadow one is; a shadow one answers OK) and `src/utils/utilities.go` (`UnitToDivider`:
//! windows of `now/divider`, week 7 days, month 30, year 365).
//!
//! Which request field a descriptor key reads is decided by Envoy's route `rate_limits`
//! actions, which this file does not hold: rlsim reads it from the key's name (docs/import.md).

mod rules;

use super::yaml::{self, Loc, Node};
use super::{Commit, ContenderField, ContenderTable, Contents, ImportedContender, Selection, Text};
// `UnitToDivider`: each unit's window in seconds, as the profile counts them.
use crate::algorithms::profiles::ENVOY_RATELIMIT_UNITS as UNITS;
use crate::error::Result;
use crate::policy::KeyField;
use std::path::Path;

/// What a descriptor key's value is in rlsim's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// One of the request's fields.
    Field(KeyField),
    /// A constant Envoy's action writes (`generic_key`): every request has the same value.
    Shared,
}

/// The descriptor key names rlsim reads, and what each reads.
const NAMES: &[(&str, Reads)] = &[
    ("remote_address", Reads::Field(KeyField::Ip)),
    ("client_ip", Reads::Field(KeyField::Ip)),
    ("user", Reads::Field(KeyField::User)),
    ("user_id", Reads::Field(KeyField::User)),
    ("x-user-id", Reads::Field(KeyField::User)),
    ("api_key", Reads::Field(KeyField::ApiKey)),
    ("x-api-key", Reads::Field(KeyField::ApiKey)),
    ("authorization", Reads::Field(KeyField::ApiKey)),
    ("path", Reads::Field(KeyField::Endpoint)),
    (":path", Reads::Field(KeyField::Endpoint)),
    ("request_path", Reads::Field(KeyField::Endpoint)),
    ("generic_key", Reads::Shared),
];

/// What descriptor key `key` reads, by its name.
fn reads(key: &str) -> Option<Reads> {
    NAMES.iter().find(|(n, _)| *n == key).map(|(_, r)| *r)
}

/// A descriptor's `rate_limit`.
#[derive(Debug, Clone)]
struct Limit {
    requests_per_unit: u64,
    /// The unit's name and seconds; `None` when unlimited.
    unit: Option<(&'static str, u64)>,
    name: Option<String>,
    replaces: Vec<String>,
}

/// One `descriptors[]` entry with its own.
#[derive(Debug, Clone)]
struct Desc {
    key: String,
    /// `None`: any value, each its own counter.
    value: Option<String>,
    reads: Reads,
    limit: Option<Limit>,
    shadow: bool,
    detailed: bool,
    share_threshold: bool,
    children: Vec<Desc>,
    loc: Loc,
}

impl Desc {
    /// `key` or `key_value`, as the service names the entry (`finalKey`).
    fn final_key(&self) -> String {
        match &self.value {
            Some(v) => format!("{}_{v}", self.key),
            None => self.key.clone(),
        }
    }

    fn is_wildcard(&self) -> bool {
        self.value.as_ref().is_some_and(|v| v.contains('*'))
    }
}

const DESCRIPTOR_KEYS: &[&str] = &[
    "key",
    "value",
    "rate_limit",
    "descriptors",
    "shadow_mode",
    "quota_mode",
    "detailed_metric",
    "value_to_metric",
    "share_threshold",
    "metadata",
];

pub(super) const NAME: &str = "envoy-ratelimit";

/// The service's file: `domain` and `descriptors` at its top level.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    (!t.json && t.has_line("domain:") && t.has_line("descriptors:")).then_some(3)
}

/// Imports `path`'s domain as one contender.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    from_doc(path, &yaml::load(path)?)
}

fn from_doc(path: &Path, doc: &yaml::Doc) -> Result<Contents> {
    let root = doc.root();
    root.only(&["domain", "descriptors"])?;
    let domain = root.opt_str("domain")?.unwrap_or_default();
    if domain.is_empty() {
        return Err(root.error("config file cannot have empty domain"));
    }
    let tree = match root.get("descriptors")? {
        Some(d) => descriptors(&d)?,
        None => Vec::new(),
    };
    let mut notes = Vec::new();
    let plan = rules::plan(&tree, &mut notes)?;
    if plan.rules.is_empty() {
        return Err(root.error(
            "no descriptor has a rate_limit that limits (not unlimited): nothing to import",
        ));
    }
    notes.extend(NOTES.iter().map(|n| n.to_string()));
    // Envoy's ratelimit filter answers an OVER_LIMIT with 429 unless told otherwise.
    let mut fields = vec![ContenderField::RefuseStatus(429)];
    if let Some(b) = plan.bypass {
        fields.push(ContenderField::Bypass(b));
    }
    Ok(Contents {
        contenders: vec![ImportedContender {
            name: super::plain_name(&domain, "ratelimit"),
            comments: vec![format!(
                "envoyproxy/ratelimit domain `{domain}`, {}",
                root.req("domain")?.at()
            )],
            table: ContenderTable {
                description: format!("envoyproxy/ratelimit domain {domain} ({})", path.display()),
                commit: Some(Commit::EveryRule),
            },
            fields,
            rules: plan.rules,
            notes: Vec::new(),
        }],
        notes,
    })
}

/// What users misread of the service's configuration; the run's warnings carry them.
const NOTES: &[&str] = &[
    "the counters live in Redis, shared by every Envoy and every ratelimit replica: the limits are global, not per Envoy",
    "windows are fixed and epoch-aligned (`now / unit`): a client can send twice the limit across a boundary; week, month and year are 7, 30 and 365 days counted from the Unix epoch, not calendar ones. the rules are the `envoy-ratelimit` profile, whose windows are the service's: aligned to the Unix epoch from the scenario's `start` (or a replay's first record), whatever instant virtual time 0 stands for",
    "which request field a descriptor key reads comes from Envoy's route `rate_limits` actions, which this file does not show: rlsim reads it from the key's name and assumes every request sends every descriptor the file configures",
    "Envoy's ratelimit filter admits everything when the service or its Redis is unreachable (`failure_mode_deny` false, its default)",
];

/// A `descriptors:` list, each entry checked as `loadDescriptors` checks it.
fn descriptors(n: &Node<'_>) -> Result<Vec<Desc>> {
    let mut out: Vec<Desc> = Vec::new();
    for d in n.items()? {
        let desc = descriptor(&d)?;
        if out.iter().any(|o| o.final_key() == desc.final_key()) {
            return Err(d.error(format!(
                "duplicate descriptor composite key '{}' (the service refuses it)",
                desc.final_key()
            )));
        }
        out.push(desc);
    }
    Ok(out)
}

fn descriptor(d: &Node<'_>) -> Result<Desc> {
    d.only(DESCRIPTOR_KEYS)?;
    let key = d.opt_str("key")?.unwrap_or_default();
    if key.is_empty() {
        return Err(d.error("descriptor has empty key (the service refuses it)"));
    }
    let reads = reads(&key).ok_or_else(|| {
        let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        d.req("key").map_or_else(|e| e, |k| k.error(format!(
            "descriptor key `{key}`: rlsim cannot tell which request field it reads (Envoy's rate_limits actions decide it); the names rlsim reads are {} (docs/import.md)",
            names.join(", ")
        )))
    })?;
    let value = d.opt_str("value")?.filter(|v| !v.is_empty());
    let flag = |k: &str| d.opt_bool(k).map(|b| b.unwrap_or(false));
    if flag("quota_mode")? {
        return Err(d.req("quota_mode")?.error("quota_mode cannot be imported: an over-limit quota descriptor refuses only when every quota descriptor of the request is over, which rlsim's contenders do not model"));
    }
    let share_threshold = flag("share_threshold")?;
    if share_threshold && !value.as_ref().is_some_and(|v| v.contains('*')) {
        return Err(d.req("share_threshold")?.error(
            "share_threshold can only be used with wildcard values (containing '*') (the service refuses it)",
        ));
    }
    let limit = match d.get("rate_limit")? {
        Some(r) => Some(limit(&r)?),
        None => None,
    };
    let children = match d.get("descriptors")? {
        Some(c) => descriptors(&c)?,
        None => Vec::new(),
    };
    Ok(Desc {
        key,
        value,
        reads,
        limit,
        shadow: flag("shadow_mode")?,
        detailed: flag("detailed_metric")?,
        share_threshold,
        children,
        loc: Loc::of(d),
    })
}

/// A `rate_limit`, checked as `loadDescriptors` checks it.
fn limit(r: &Node<'_>) -> Result<Limit> {
    r.only(&["requests_per_unit", "unit", "unlimited", "name", "replaces"])?;
    let unlimited = r.opt_bool("unlimited")?.unwrap_or(false);
    let written = r.opt_str("unit")?.unwrap_or_default();
    // The proto's enum names, upper-cased as `strings.ToUpper` does; UNKNOWN is no unit.
    let unit = UNITS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&written))
        .copied();
    let unit_error = |m: String| match r.get("unit") {
        Ok(Some(u)) => u.error(m),
        Ok(None) => r.error(m),
        Err(e) => e,
    };
    let names: Vec<&str> = UNITS.iter().map(|(n, _)| *n).collect();
    match (unlimited, unit) {
        (true, Some(_)) => {
            return Err(unit_error(
                "should not specify rate limit unit when unlimited (the service refuses it)".into(),
            ));
        }
        (false, None) if written.is_empty() => {
            return Err(unit_error(format!(
                "`unit` is required with a limit ({}): the service refuses an empty one",
                names.join(", ")
            )));
        }
        (false, None) => {
            return Err(unit_error(format!(
                "\"{written}\" is not a unit ({})",
                names.join(", ")
            )));
        }
        _ => {}
    }
    // A uint32 in the service's configuration.
    let requests_per_unit = match r.get("requests_per_unit")? {
        Some(n) => n.whole("a whole number of requests", 0, u32::MAX.into())?,
        None => 0,
    };
    if requests_per_unit == 0 && !unlimited {
        return Err(r.error("requests_per_unit is 0 (or absent): the service refuses every request of this descriptor, and rlsim's limits are at least 1"));
    }
    let name = r.opt_str("name")?.filter(|n| !n.is_empty());
    let mut replaces = Vec::new();
    if let Some(list) = r.get("replaces")? {
        for e in list.items()? {
            e.only(&["name"])?;
            let n = e.opt_str("name")?.unwrap_or_default();
            if n.is_empty() {
                return Err(
                    e.error("should not have an empty replaces entry (the service refuses it)")
                );
            }
            if name.as_deref() == Some(n.as_str()) {
                return Err(e.error(
                    "replaces should not contain name of same descriptor (the service refuses it)",
                ));
            }
            replaces.push(n);
        }
    }
    Ok(Limit {
        requests_per_unit,
        unit: unit.filter(|_| !unlimited),
        name,
        replaces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Kind;

    fn imported(text: &str) -> Result<Contents> {
        let p = Path::new("rl.yaml");
        from_doc(p, &yaml::parse(p, text)?)
    }

    /// Each rule's fields as `k = v` lines, and the contender's bypass.
    fn rules(text: &str) -> (Vec<String>, Option<String>) {
        let i = imported(text).unwrap();
        let c = &i.contenders[0];
        let lines = |r: &crate::import::ImportedRule| {
            let mut t = String::new();
            crate::import::emit::table(&mut t, &r.table, &r.fields).unwrap();
            t.trim_end().to_string()
        };
        let bypass = c.fields.iter().find_map(|f| match f {
            ContenderField::Bypass(b) => Some(toml::Value::try_from(b).unwrap().to_string()),
            _ => None,
        });
        (c.rules.iter().map(lines).collect(), bypass)
    }

    fn error(text: &str) -> String {
        imported(text).unwrap_err().to_string()
    }

    #[test]
    fn the_service_file_is_detected_and_named() {
        let text = "domain: edge\ndescriptors:\n  - key: remote_address\n";
        assert_eq!(Kind::detect(text), Some(Kind::EnvoyRatelimit));
        assert_eq!(Kind::parse("envoy-ratelimit"), Ok(Kind::EnvoyRatelimit));
        assert!(Kind::ALL.contains(&Kind::EnvoyRatelimit));
        // Kong's YAML is not it.
        assert_ne!(
            Kind::detect("_format_version: \"3.0\"\nplugins:\n- name: rate-limiting\n"),
            Some(Kind::EnvoyRatelimit)
        );
    }

    /// `UnitToDivider`: week, month and year are 7, 30 and 365 days; unit names in any case
    /// (`strings.ToUpper`).
    #[test]
    fn units_are_the_services_dividers() {
        let windows: Vec<String> = [
            "second", "minute", "hour", "day", "week", "month", "year", "HOUR",
        ]
        .iter()
        .map(|u| {
            let (r, _) = rules(&format!(
                "domain: d\ndescriptors:\n  - key: generic_key\n    rate_limit: {{unit: {u}, requests_per_unit: 3}}\n"
            ));
            r[0].lines().find(|l| l.starts_with("window")).unwrap().to_string()
        })
        .collect();
        let expect = ["1s", "1m", "1h", "1d", "7d", "30d", "365d", "1h"];
        let expect: Vec<String> = expect.iter().map(|w| format!("window = \"{w}\"")).collect();
        assert_eq!(windows, expect);
    }

    /// README example 2, its keys named as rlsim reads them: a nested key alone (each user its
    /// own counter, only under generic_key=marketing) and the same key at the top level.
    #[test]
    fn nested_descriptors_are_rules_keyed_by_their_unvalued_entries() {
        let (r, bypass) = rules(
            "domain: messaging\ndescriptors:\n  - key: generic_key\n    value: marketing\n    descriptors:\n      - key: user_id\n        rate_limit:\n          unit: day\n          requests_per_unit: 5\n  - key: user_id\n    rate_limit:\n      unit: day\n      requests_per_unit: 100\n",
        );
        assert_eq!(
            r,
            [
                "name = \"generic_key_marketing.user_id\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 5\nwindow = \"1d\"\nkey = [\"user\"]\nprofile = { requests_per_unit = 5, unit = \"day\" }",
                "name = \"user_id\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 100\nwindow = \"1d\"\nkey = [\"user\"]\nprofile = { requests_per_unit = 100, unit = \"day\" }",
            ]
        );
        assert_eq!(bypass, None);
    }

    /// README example 3 with the blocked address unlimited instead: the key_value entry wins.
    #[test]
    fn an_unlimited_address_is_the_bypass() {
        let (r, bypass) = rules(
            "domain: edge_proxy_per_ip\ndescriptors:\n  - key: remote_address\n    rate_limit:\n      unit: second\n      requests_per_unit: 10\n  - key: remote_address\n    value: 50.0.0.5\n    rate_limit:\n      unlimited: true\n",
        );
        assert_eq!(
            r,
            [
                "name = \"remote_address\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 10\nwindow = \"1s\"\nkey = [\"ip\"]\nprofile = { requests_per_unit = 10, unit = \"second\" }"
            ]
        );
        assert_eq!(bypass.as_deref(), Some("{ cidrs = [\"50.0.0.5\"] }"));
        let i = imported("domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: remote_address\n    value: 50.0.0.5\n").unwrap();
        assert!(
            i.notes[0].starts_with("rl.yaml:5: `remote_address: 50.0.0.5`"),
            "{:?}",
            i.notes
        );
        assert!(i.notes[0].ends_with("as in the service)"), "{:?}", i.notes);
        // Another descriptor still applies to that address in the service: the bypass is wider.
        let i = imported("domain: d\ndescriptors:\n  - key: remote_address\n    value: 50.0.0.5\n  - key: generic_key\n    rate_limit: {unit: second, requests_per_unit: 9}\n").unwrap();
        assert!(
            i.notes[0].ends_with("still applies the file's other descriptors to it"),
            "{:?}",
            i.notes
        );
    }

    /// Paths: the key alone skips its siblings' values; a value is the rule's route; a
    /// trailing wildcard is a prefix with a counter per path unless share_threshold; a shadow
    /// descriptor is the rule's dry run; an unlimited path has no rule but is still skipped.
    #[test]
    fn path_values_wildcards_shadow_and_unlimited() {
        let (r, _) = rules(
            "domain: d\ndescriptors:\n  - key: path\n    rate_limit: {unit: minute, requests_per_unit: 100}\n  - key: path\n    value: /api/v1\n    rate_limit: {unit: minute, requests_per_unit: 7}\n    shadow_mode: true\n  - key: path\n    value: /api/*\n    rate_limit: {unit: minute, requests_per_unit: 20}\n  - key: path\n    value: /files/*\n    share_threshold: true\n    rate_limit: {unit: hour, requests_per_unit: 50}\n  - key: path\n    value: /health\n    rate_limit: {unlimited: true}\n",
        );
        assert_eq!(
            r,
            [
                "name = \"path\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 100\nwindow = \"1m\"\nkey = [\"endpoint\"]\nskip = [\"/api/v1\", \"/api/*\", \"/files/*\", \"/health\"]\nprofile = { requests_per_unit = 100, unit = \"minute\" }",
                "name = \"path__api_v1\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 7\nwindow = \"1m\"\nkey = []\nroutes = [\"/api/v1\"]\ndry_run = true\nprofile = { requests_per_unit = 7, unit = \"minute\" }",
                "name = \"path__api__\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 20\nwindow = \"1m\"\nkey = [\"endpoint\"]\nroutes = [\"/api/*\"]\nskip = [\"/api/v1\"]\nprofile = { requests_per_unit = 20, unit = \"minute\" }",
                "name = \"path__files__\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 50\nwindow = \"1h\"\nkey = []\nroutes = [\"/files/*\"]\nprofile = { requests_per_unit = 50, unit = \"hour\" }",
            ]
        );
    }

    /// README example 7 over paths: the replacing limit's requests are not counted by the
    /// replaced one; a limit replaced for every request has no rule.
    #[test]
    fn replaces_takes_the_replacing_routes_out_of_the_replaced_rule() {
        let (r, _) = rules(
            "domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per_ip, unit: second, requests_per_unit: 5}\n  - key: generic_key\n    value: login\n    descriptors:\n      - key: path\n        value: /login\n        rate_limit:\n          unit: second\n          requests_per_unit: 10\n          replaces: [{name: per_ip}]\n",
        );
        assert_eq!(r.len(), 2);
        assert!(
            r[0].ends_with(
                "key = [\"ip\"]\nskip = [\"/login\"]\nprofile = { requests_per_unit = 5, unit = \"second\" }"
            ),
            "{}",
            r[0]
        );
        let i = imported(
            "domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per_ip, unit: second, requests_per_unit: 5}\n  - key: generic_key\n    rate_limit: {unit: second, requests_per_unit: 50, replaces: [{name: per_ip}]}\n",
        )
        .unwrap();
        assert_eq!(i.contenders[0].rules.len(), 1);
        assert!(
            i.notes
                .iter()
                .any(|n| n.starts_with("rl.yaml:3: `per_ip` is replaced for every request")),
            "{:?}",
            i.notes
        );
    }

    #[test]
    fn the_services_validations_name_file_line_and_field() {
        let d = "domain: d\ndescriptors:\n  - key: remote_address\n";
        assert_eq!(
            error(&format!(
                "{d}    rate_limit:\n      unit: fortnight\n      requests_per_unit: 5\n"
            )),
            "rl.yaml:5: directive `descriptors[0].rate_limit.unit`: \"fortnight\" is not a unit (second, minute, hour, day, week, month, year)"
        );
        let e = error(&format!("{d}    rate_limit: {{requests_per_unit: 5}}\n"));
        assert!(
            e.starts_with("rl.yaml:4: directive `descriptors[0].rate_limit`: `unit` is required"),
            "{e}"
        );
        let e = error(&format!(
            "{d}    rate_limit: {{unlimited: true, unit: second}}\n"
        ));
        assert!(
            e.contains("should not specify rate limit unit when unlimited"),
            "{e}"
        );
        let e = error(&format!("{d}  - key: remote_address\n"));
        assert_eq!(
            e,
            "rl.yaml:4: directive `descriptors[1]`: duplicate descriptor composite key 'remote_address' (the service refuses it)"
        );
        let e = error("domain: d\ndescriptors:\n  - value: x\n");
        assert!(
            e.starts_with("rl.yaml:3: directive `descriptors[0]`: descriptor has empty key"),
            "{e}"
        );
        let e = error("descriptors: []\n");
        assert!(e.contains("config file cannot have empty domain"), "{e}");
        let e = error(&format!("{d}    rate_limit: {{unit: second}}\n"));
        assert!(e.contains("requests_per_unit is 0"), "{e}");
        let e = error(&format!(
            "{d}    rate_limit: {{name: a, unit: second, requests_per_unit: 1, replaces: [{{name: a}}]}}\n"
        ));
        assert!(
            e.contains("replaces should not contain name of same descriptor"),
            "{e}"
        );
        let e = error(&format!("{d}    share_threshold: true\n"));
        assert!(
            e.contains("share_threshold can only be used with wildcard values"),
            "{e}"
        );
        let e = error(&format!("{d}    limit: 5\n"));
        assert!(
            e.starts_with("rl.yaml:4: directive `descriptors[0].limit`: `limit` is not supported"),
            "{e}"
        );
    }

    #[test]
    fn what_rlsim_cannot_express_is_refused_by_name() {
        let e = error("domain: d\ndescriptors:\n  - key: database\n    value: users\n");
        assert!(e.starts_with("rl.yaml:3: directive `descriptors[0].key`: descriptor key `database`: rlsim cannot tell"), "{e}");
        assert!(e.contains("remote_address, client_ip, user"), "{e}");
        let e = error(
            "domain: d\ndescriptors:\n  - key: path\n    value: /api/*/x\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
        );
        assert!(
            e.starts_with("rl.yaml:3: directive `descriptors[0]`: value `/api/*/x`"),
            "{e}"
        );
        let e = error(
            "domain: d\ndescriptors:\n  - key: remote_address\n    value: 10.0.0.1\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
        );
        assert!(
            e.contains(
                "`remote_address: 10.0.0.1` with a limit: rlsim's rules cannot apply to one ip only"
            ),
            "{e}"
        );
        let e = error("domain: d\ndescriptors:\n  - key: user\n    value: alice\n");
        assert!(e.contains("cannot apply to one user only"), "{e}");
        let e = error("domain: d\ndescriptors:\n  - key: remote_address\n    quota_mode: true\n");
        assert!(e.contains("quota_mode cannot be imported"), "{e}");
        let e = error(
            "domain: d\ndescriptors:\n  - key: generic_key\n    rate_limit: {unlimited: true}\n",
        );
        assert!(e.contains("nothing to import"), "{e}");
    }
}
