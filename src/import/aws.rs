//! AWS API Gateway usage plans (REST APIs), imported from the JSON of `aws apigateway
//! get-usage-plan` / `get-usage-plans` or a CloudFormation template's
//! `AWS::ApiGateway::UsagePlan` resources (YAML or JSON), one contender per plan,
//! `commit = "all_or_nothing"`, keyed by the API key (`x-api-key`).
//!
//! Followed: the API reference's `ThrottleSettings` (`rateLimit`: the steady-state rate in
//! requests per second, `burstLimit`: the bucket's capacity), `QuotaSettings` (`limit` per
//! `period` DAY, WEEK or MONTH: a `calendar_window` rule in UTC, AWS's quotas following UTC
//! days), `ApiStage.throttle` (per-method settings keyed `/{resource path}/{method}`), and the
//! developer guide's "Throttle requests to your REST APIs": a token bucket, best effort, under
//! the account's and stage's limits. AWS does not document the bucket's arithmetic, nor whether
//! a throttled request counts against the quota.
//!
//! A quota's `offset` (`Offset` in CloudFormation) is read as the AWS SDK models and
//! CloudFormation describe it, the day the period starts: a WEEK from Sunday (0) to Saturday
//! (6), Sunday when absent; a MONTH from day `offset + 1`; a DAY's must be 0. The current API
//! reference reads it instead as the requests subtracted from the limit in the initial period,
//! which is not modelled (an import note says so).

use super::yaml::{self, Node};
use super::{
    Commit, ContenderField, ContenderTable, Contents, ImportedContender, ImportedRule, Key,
    RuleField, RuleTable, Selection, Text,
};
use crate::error::Result;
use crate::time::{NANOS_PER_SEC, duration_text};
use std::path::Path;

/// The CloudFormation resource type of a usage plan.
const RESOURCE: &str = "AWS::ApiGateway::UsagePlan";

pub(super) const NAME: &str = "aws-usage-plan";

/// A CloudFormation usage plan, or JSON with a plan's `apiStages` or its throttle.
pub(super) fn detect(t: &Text<'_>) -> Option<u8> {
    let cfn = t.text.contains("AWS::ApiGateway::UsagePlan");
    let plan = t.has_key("apiStages") || (t.has_key("throttle") && t.has_key("burstLimit"));
    (cfn || (t.json && plan)).then_some(2)
}

/// Imports every usage plan of `path`.
pub fn import(path: &Path, select: &Selection) -> Result<Contents> {
    select.whole(path, NAME)?;
    let doc = yaml::load(path)?;
    let root = doc.root();
    let plans = plans(&root)?;
    if plans.is_empty() {
        return Err(root.error("no usage plan (a `get-usage-plan` object, `items` of `get-usage-plans`, or `AWS::ApiGateway::UsagePlan` resources): nothing to import"));
    }
    let mut contenders = Vec::new();
    for (name, plan) in plans {
        contenders.push(contender(&name, &plan)?);
    }
    let notes = vec![
        "AWS documents a token bucket (rateLimit tokens a second, burstLimit its size) but not its arithmetic, and calls throttling and quotas best effort (\"in some cases clients can exceed the targets\"): rlsim's bucket is the exact one".into(),
        "the account's limit per Region (10,000 requests a second, burst 5,000, by default) and the stage's and methods' own throttling also apply to every request and are not in this file".into(),
        "a request without an API key, or with a key the plan does not hold, is answered 403 by a method that requires one: no rule here applies to it (has_api_key = true)".into(),
        "rlsim's requests carry no stage: every request is taken as one of the plan's stages".into(),
    ];
    Ok(Contents { contenders, notes })
}

/// The plans of the file with their names: one plan, `items`, or a template's resources.
fn plans<'a>(root: &Node<'a>) -> Result<Vec<(String, Node<'a>)>> {
    if let Some(resources) = root.get("Resources")? {
        let mut out = Vec::new();
        for (name, r) in resources.entries()? {
            if r.opt_str("Type")?.as_deref() == Some(RESOURCE) {
                let props = r.req("Properties")?;
                let name = get(&props, "usagePlanName")?
                    .map(|n| n.str())
                    .transpose()?
                    .unwrap_or(name);
                out.push((name, props));
            }
        }
        return Ok(out);
    }
    if let Some(items) = root.get("items")? {
        return items
            .items()?
            .into_iter()
            .map(|p| Ok((plan_name(&p)?, p)))
            .collect();
    }
    Ok(vec![(plan_name(root)?, root.clone())])
}

fn plan_name(p: &Node<'_>) -> Result<String> {
    Ok(p.opt_str("name")?
        .or(p.opt_str("id")?)
        .unwrap_or_else(|| "usage-plan".into()))
}

/// A field as the API writes it (`burstLimit`) or as CloudFormation does (`BurstLimit`).
fn get<'a>(n: &Node<'a>, camel: &str) -> Result<Option<Node<'a>>> {
    if let Some(v) = n.get(camel)? {
        return Ok(Some(v));
    }
    let mut pascal = camel[..1].to_ascii_uppercase();
    pascal.push_str(&camel[1..]);
    n.get(&pascal)
}

fn contender(name: &str, plan: &Node<'_>) -> Result<ImportedContender> {
    let mut notes = Vec::new();
    let mut rules = Vec::new();
    let throttle = get(plan, "throttle")?;
    if let Some(t) = &throttle {
        rules.push(bucket(t, "throttle", None, &format!("plan `{name}`"))?);
    }
    for stage in match get(plan, "apiStages")? {
        Some(s) => s.items()?,
        None => Vec::new(),
    } {
        let Some(methods) = get(&stage, "throttle")? else {
            continue;
        };
        if throttle.is_some() {
            return Err(methods.error("per-method throttling beside the plan's own `throttle` cannot be imported: AWS applies the method's limits instead of the plan's, and an rlsim rule cannot leave one method of one path out of the plan's bucket; import a copy with one of them"));
        }
        for (key, t) in methods.entries()? {
            let (path, method) = method_key(&key, &t)?;
            let label = format!("{path} {}", method.as_deref().unwrap_or("*"));
            let rule_name = super::plain_name(
                &format!("throttle{path}.{}", method.as_deref().unwrap_or("any")),
                "throttle",
            );
            rules.push(bucket(&t, &rule_name, Some((path, method)), &label)?);
        }
    }
    if let Some(q) = get(plan, "quota")? {
        rules.push(quota(&q, &mut notes)?);
    }
    if rules.is_empty() {
        return Err(plan.error("the plan has no throttle and no quota: nothing to import"));
    }
    if rules.len() > 1 {
        notes.push("the rules are all_or_nothing: AWS does not document whether a throttled request counts against the quota (or a request over the quota takes a token); rlsim counts an admitted request in every rule and a refused one in none".into());
    }
    Ok(ImportedContender {
        name: super::plain_name(&format!("aws-{name}"), "aws"),
        comments: vec![format!(
            "AWS API Gateway usage plan `{name}` at {}",
            plan.at()
        )],
        table: ContenderTable {
            description: format!("AWS API Gateway usage plan `{name}` ({})", plan.at()),
            commit: Some(Commit::AllOrNothing),
        },
        fields: vec![ContenderField::RefuseStatus(429)],
        rules,
        notes,
    })
}

/// `/pets/GET` → (`/pets`, `GET`); `//GET` is the root resource; method `*` any method.
fn method_key(key: &str, n: &Node<'_>) -> Result<(String, Option<String>)> {
    let bad = |why: &str| n.error(format!("`{key}`: {why}"));
    let (path, method) = key
        .rsplit_once('/')
        .ok_or_else(|| bad("a method is written /{resource path}/{HTTP method}"))?;
    let path = if path.is_empty() { "/" } else { path };
    if !path.starts_with('/') || path.contains(['{', '}', '*']) {
        return Err(bad(
            "only a literal resource path can be imported: rlsim's routes are exact paths, with no path parameters",
        ));
    }
    let method = match method {
        "*" => None,
        m if ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
            .contains(&m.to_ascii_uppercase().as_str()) =>
        {
            Some(m.to_ascii_uppercase())
        }
        _ => {
            return Err(bad(
                "the HTTP method is one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS or *",
            ));
        }
    };
    Ok((path.to_string(), method))
}

/// A rate in requests per second as `limit` per `window` seconds, exactly (0.5 is 1 per 2 s).
fn rate(n: &Node<'_>) -> Result<(u64, u64)> {
    let r = n.f64()?;
    if !(r > 0.0 && r <= u32::MAX as f64) {
        return Err(n.error(format!("{r}: the rate must be a number of requests a second above 0 (a rate of 0 throttles every request) and at most {}", u32::MAX)));
    }
    (1..=1000)
        .find_map(|d| {
            let l = r * d as f64;
            ((l - l.round()).abs() < 1e-9 && l.round() >= 1.0).then(|| (l.round() as u64, d))
        })
        .ok_or_else(|| {
            n.error(format!(
                "{r}: a rate rlsim can write as whole requests per at most 1000 s"
            ))
        })
}

fn bucket(
    t: &Node<'_>,
    name: &str,
    route: Option<(String, Option<String>)>,
    label: &str,
) -> Result<ImportedRule> {
    let (limit, secs) =
        rate(&get(t, "rateLimit")?.ok_or_else(|| t.error("`rateLimit` is required"))?)?;
    let b = get(t, "burstLimit")?.ok_or_else(|| t.error("`burstLimit` is required"))?;
    // A burst of 0 throttles every request; rlsim's bucket holds at most u32::MAX tokens.
    let burst = b.whole("a whole number of requests", 1, u32::MAX.into())?;
    let table = RuleTable {
        name: name.into(),
        algorithm: "token_bucket",
        limit,
        window: duration_text(secs * NANOS_PER_SEC),
        burst: Some(burst),
        key: Key::Fields(vec!["api_key"]),
    };
    let mut fields = vec![RuleField::HasApiKey(true)];
    if let Some((path, method)) = route {
        fields.push(RuleField::Routes(vec![path]));
        if let Some(m) = method {
            fields.push(RuleField::Methods(vec![m]));
        }
    }
    Ok(ImportedRule {
        comments: vec![
            format!("throttle of {label} at {}: {limit} per {secs} s, burst {burst}, per API key", t.at()),
            "a token bucket: it starts full and refills continuously; a request with no token left is answered 429".into(),
        ],
        table,
        fields,
    })
}

/// The weekdays a WEEK quota's `offset` names, from 0.
const WEEKDAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];

/// A quota: `limit` per calendar DAY, WEEK or MONTH in UTC, from the day `offset` names.
fn quota(q: &Node<'_>, notes: &mut Vec<String>) -> Result<ImportedRule> {
    let l = get(q, "limit")?.ok_or_else(|| q.error("`limit` is required"))?;
    let limit = l.whole("a whole number of requests", 1, u32::MAX.into())?;
    let p = get(q, "period")?.ok_or_else(|| q.error("`period` is required"))?;
    let period = p.str()?;
    let o = get(q, "offset")?;
    let offset = o.as_ref().map(Node::i64).transpose()?.unwrap_or(0);
    let bad_offset = |why: &str| {
        let n = o.as_ref().expect("only a written offset is out of range");
        n.error(format!("{offset}: {why}"))
    };
    let (window, start, field) = match period.as_str() {
        "DAY" => {
            if offset != 0 {
                return Err(bad_offset(
                    "a DAY quota's offset must be 0: the offset is the day a WEEK or MONTH starts (as the SDK models and CloudFormation describe it), and a day starts at UTC midnight; the API reference's other reading, requests subtracted from the first period's limit, is not modelled; remove it in a copy",
                ));
            }
            (
                "day",
                "a calendar day, midnight to midnight UTC (AWS's quotas follow UTC days)"
                    .to_string(),
                None,
            )
        }
        "WEEK" => {
            let day = usize::try_from(offset)
                .ok()
                .and_then(|i| WEEKDAYS.get(i))
                .ok_or_else(|| {
                    bad_offset(
                        "a WEEK quota's offset is the day the week starts, 0 (Sunday) to 6 (Saturday)",
                    )
                })?;
            let mut name = day.to_string();
            name[..1].make_ascii_uppercase();
            (
                "week",
                format!("a calendar week from {name} 00:00 UTC (offset {offset})"),
                Some(RuleField::WeekStarts(day)),
            )
        }
        "MONTH" => {
            if !(0..=30).contains(&offset) {
                return Err(bad_offset(
                    "a MONTH quota's offset is the day the month starts less 1, 0 (the 1st) to 30 (the 31st)",
                ));
            }
            let day = offset as u8 + 1;
            (
                "month",
                format!(
                    "a calendar month from day {day} 00:00 UTC (offset {offset}; a month shorter than that starts on its last day)"
                ),
                Some(RuleField::MonthStarts(day)),
            )
        }
        _ => return Err(p.error(format!("`{period}`: the period is DAY, WEEK or MONTH"))),
    };
    if field.is_some() {
        let at = match &o {
            Some(n) => n.at(),
            None => format!("{}, absent: 0", q.at()),
        };
        notes.push(format!("quota offset {offset} ({at}): rlsim follows the AWS SDK models and CloudFormation, where it is the day the period starts (a WEEK: 0 Sunday to 6 Saturday; a MONTH: 0 the 1st to 30 the 31st); the current API reference's reading, the requests subtracted from the limit in the plan's first period, is not modelled"));
    }
    let mut fields = vec![RuleField::TimeZone("UTC".into())];
    fields.extend(field);
    fields.push(RuleField::HasApiKey(true));
    Ok(ImportedRule {
        comments: vec![
            format!("quota at {}: {limit} per {period} per API key", q.at()),
            format!("{start}; a request over it is answered 429"),
        ],
        table: RuleTable {
            name: "quota".into(),
            algorithm: "calendar_window",
            limit,
            window: window.into(),
            burst: None,
            key: Key::Fields(vec!["api_key"]),
        },
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Kind;

    fn imported(name: &str, text: &str) -> Result<Contents> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        import(&p, &Selection::default())
    }

    #[test]
    fn usage_plans_are_detected_from_their_content() {
        let api = "{\"name\": \"p\", \"throttle\": {\"burstLimit\": 5, \"rateLimit\": 1}}";
        assert_eq!(Kind::detect(api), Some(Kind::AwsUsagePlan));
        let cfn = "Resources:\n  P:\n    Type: AWS::ApiGateway::UsagePlan\n";
        assert_eq!(Kind::detect(cfn), Some(Kind::AwsUsagePlan));
        let cfn_json = "{\"Resources\": {\"P\": {\"Type\": \"AWS::ApiGateway::UsagePlan\"}}}";
        assert_eq!(Kind::detect(cfn_json), Some(Kind::AwsUsagePlan));
        assert_eq!(Kind::parse("aws-usage-plan"), Ok(Kind::AwsUsagePlan));
    }

    /// A fractional rate is written exactly as whole requests per whole seconds; `items` gives
    /// one contender per plan; a quota is a calendar window in UTC, its offset noted.
    #[test]
    fn rates_are_exact_and_every_plan_is_a_contender() {
        let i = imported(
            "plans.json",
            "{\"items\": [\n {\"name\": \"half\", \"throttle\": {\"burstLimit\": 3, \"rateLimit\": 0.5}},\n {\"name\": \"q\", \"quota\": {\"limit\": 7, \"offset\": 2, \"period\": \"WEEK\"}}\n]}",
        )
        .expect("imports");
        assert_eq!(i.contenders.len(), 2);
        let half = i.contenders[0].to_toml(None).expect("writes");
        assert!(half.contains("name = \"aws-half\""), "{half}");
        assert!(
            half.contains("limit = 1\nwindow = \"2s\"\nburst = 3\n"),
            "{half}"
        );
        let q = &i.contenders[1];
        let t = q.to_toml(None).expect("writes");
        assert!(
            t.contains("algorithm = \"calendar_window\"\nlimit = 7\nwindow = \"week\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nweek_starts = \"tuesday\"\nhas_api_key = true\n"),
            "{t}"
        );
        assert!(t.contains("a calendar week from Tuesday 00:00 UTC"), "{t}");
        assert!(
            q.notes.iter().any(|n| n.contains("quota offset 2")
                && n.contains("the day the period starts")
                && n.contains("not modelled")),
            "{:?}",
            q.notes
        );
        let e = imported(
            "p.json",
            "{\"throttle\": {\"burstLimit\": 3, \"rateLimit\": 0.0001}}",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("p.json:1:") && e.contains("at most 1000 s"),
            "{e}"
        );
    }

    /// The rule a plan of `quota` (JSON) imports, as TOML, and the plan's notes.
    fn quota_rule(quota: &str) -> (String, Vec<String>) {
        let i = imported(
            "plan.json",
            &format!("{{\"name\": \"p\", \"quota\": {quota}}}"),
        )
        .expect("imports");
        let c = &i.contenders[0];
        (c.to_toml(None).expect("writes"), c.notes.clone())
    }

    /// A DAY quota runs midnight to midnight UTC, with no note.
    #[test]
    fn a_day_quota_is_a_calendar_day_in_utc() {
        let (t, notes) = quota_rule("{\"limit\": 12, \"offset\": 0, \"period\": \"DAY\"}");
        assert!(
            t.contains("name = \"quota\"\nalgorithm = \"calendar_window\"\nlimit = 12\nwindow = \"day\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nhas_api_key = true\n"),
            "{t}"
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// Offset 1 starts a WEEK on Monday; no offset is 0, Sunday, written out.
    #[test]
    fn a_week_quota_with_offset_1_starts_on_monday() {
        let (t, notes) = quota_rule("{\"limit\": 3, \"offset\": 1, \"period\": \"WEEK\"}");
        assert!(
            t.contains("window = \"week\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nweek_starts = \"monday\"\n"),
            "{t}"
        );
        assert!(
            t.contains("a calendar week from Monday 00:00 UTC (offset 1)"),
            "{t}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("quota offset 1 (") && n.contains("plan.json:1)")),
            "{notes:?}"
        );
        let (t, notes) = quota_rule("{\"limit\": 3, \"period\": \"WEEK\"}");
        assert!(t.contains("week_starts = \"sunday\"\n"), "{t}");
        assert!(
            t.contains("a calendar week from Sunday 00:00 UTC (offset 0)"),
            "{t}"
        );
        assert!(notes.iter().any(|n| n.contains("absent: 0")), "{notes:?}");
    }

    /// Offset 14 starts a MONTH on the 15th; offset 0 on the 1st.
    #[test]
    fn a_month_quota_with_offset_14_starts_on_the_15th() {
        let (t, _) = quota_rule("{\"limit\": 100000, \"offset\": 14, \"period\": \"MONTH\"}");
        assert!(
            t.contains("limit = 100000\nwindow = \"month\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nmonth_starts = 15\nhas_api_key = true\n"),
            "{t}"
        );
        assert!(t.contains("a calendar month from day 15 00:00 UTC"), "{t}");
        let (t, _) = quota_rule("{\"limit\": 5, \"period\": \"MONTH\"}");
        assert!(t.contains("month_starts = 1\n"), "{t}");
        let (t, _) = quota_rule("{\"limit\": 5, \"offset\": 30, \"period\": \"MONTH\"}");
        assert!(t.contains("month_starts = 31\n"), "{t}");
    }

    /// An offset out of its period's range is refused naming its line; so is a DAY offset.
    #[test]
    fn bad_offsets_are_refused_naming_the_line() {
        for (quota, expect) in [
            (
                "\"offset\": 7, \"period\": \"WEEK\"",
                "7: a WEEK quota's offset is the day the week starts, 0 (Sunday) to 6 (Saturday)",
            ),
            (
                "\"offset\": -1, \"period\": \"WEEK\"",
                "-1: a WEEK quota's offset",
            ),
            (
                "\"offset\": 31, \"period\": \"MONTH\"",
                "31: a MONTH quota's offset is the day the month starts less 1, 0 (the 1st) to 30 (the 31st)",
            ),
            (
                "\"offset\": 2, \"period\": \"DAY\"",
                "2: a DAY quota's offset must be 0",
            ),
            (
                "\"offset\": \"x\", \"period\": \"MONTH\"",
                "expected an integer",
            ),
        ] {
            let e = imported(
                "plan.json",
                &format!("{{\"name\": \"p\",\n \"quota\": {{\"limit\": 5,\n  {quota}}}}}"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("plan.json:3:") && e.contains("`quota.offset`") && e.contains(expect),
                "{e}"
            );
        }
        let e = imported(
            "plan.json",
            "{\"name\": \"p\", \"quota\": {\"limit\": 5, \"period\": \"YEAR\"}}",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`YEAR`: the period is DAY, WEEK or MONTH"),
            "{e}"
        );
    }
}
