//! `rlsim import` of AWS API Gateway usage plans (`get-usage-plan` JSON, CloudFormation) and
//! `[[contender]] import`, end to end: the refusals of scenarios/aws_import.toml counted by
//! hand, a method's own throttle on a small trace, WEEK and MONTH quotas across their UTC
//! calendar boundaries, and bad input named by file, line and field.

use crate::util::{import_refused, imported, rejected, repo, row, summary, write};

/// The plan's throttle is a token bucket of burstLimit refilled at rateLimit a second, its
/// quota a calendar day in UTC, both per API key; CloudFormation's method throttle is a rule on
/// that path and method.
#[test]
fn usage_plans_import_a_token_bucket_and_a_daily_quota_per_api_key() {
    let toml = imported(&repo().join("scenarios/configs/aws/usage_plan.json"));
    assert!(toml.contains("(aws-usage-plan)"), "{toml}");
    assert!(toml.contains("name = \"aws-partners-basic\"\n"), "{toml}");
    assert!(
        toml.contains("commit = \"all_or_nothing\"\nrefuse_status = 429\n"),
        "{toml}"
    );
    assert_eq!(toml.matches("[[contender.rule]]").count(), 2, "{toml}");
    for block in [
        "name = \"throttle\"\nalgorithm = \"token_bucket\"\nlimit = 2\nwindow = \"1s\"\nburst = 5\nkey = [\"api_key\"]\nhas_api_key = true\n",
        "name = \"quota\"\nalgorithm = \"calendar_window\"\nlimit = 12\nwindow = \"day\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nhas_api_key = true\n",
    ] {
        assert!(toml.contains(block), "{block} missing in:\n{toml}");
    }
    let cfn = imported(&repo().join("scenarios/configs/aws/template.yaml"));
    assert!(cfn.contains("name = \"aws-login-plan\"\n"), "{cfn}");
    assert!(
        cfn.contains("name = \"throttle_login.POST\"\nalgorithm = \"token_bucket\"\nlimit = 1\nwindow = \"1s\"\nburst = 2\nkey = [\"api_key\"]\nhas_api_key = true\nroutes = [\"/login\"]\nmethods = [\"POST\"]\n"),
        "{cfn}"
    );
}

/// scenarios/aws_import.toml, counted by hand in its comment; the printed TOML, pasted,
/// decides the same.
#[test]
fn aws_import_scenario_refuses_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/aws_import.toml"));
    let a = row(&s, "aws");
    assert_eq!(
        (a["offered"].clone(), a["rejected"].clone()),
        (140.into(), 96.into())
    );
    assert_eq!(a["refuse_status"], 429);
    assert_eq!(rejected(a, "app"), 28);
    assert_eq!(rejected(a, "steady"), 68);
    assert_eq!(rejected(a, "anonymous"), 0);
    let toml = imported(&repo().join("scenarios/configs/aws/usage_plan.json"));
    let scenario =
        std::fs::read_to_string(repo().join("scenarios/aws_import.toml")).expect("scenario");
    let head = &scenario[..scenario.find("[[contender]]").expect("contender")];
    let traffic = &scenario[scenario.find("[[traffic]]").expect("traffic")..];
    let pasted = format!(
        "{head}{}\n{traffic}",
        toml.replace("name = \"aws-partners-basic\"", "name = \"aws\"")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let s = summary(&write(dir.path(), "pasted.toml", &pasted));
    assert_eq!(row(&s, "aws")["rejected"], 96);
}

/// template.yaml: POST /login 1 a second, bursts of 2, per key. `post` sends 5 POSTs at once at
/// 0 and 2 s: 2 pass at 0 s, and at 2 s the bucket is full again (2 tokens): 2 pass. 6 refused.
/// `get` sends 5 GETs at once at 0 and 2 s: only the quota (1000 a day) applies: none refused.
#[test]
fn a_method_throttle_limits_only_its_path_and_method() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = repo().join("scenarios/configs/aws/template.yaml");
    let scenario = format!(
        "name = \"m\"\nduration = \"4s\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"api_key\"\n\
         [[contender]]\nname = \"aws\"\nimport = {:?}\n\
         [[traffic]]\nname = \"post\"\nkind = \"bursts\"\ncount = 5\nevery = \"2s\"\napi_key = \"k\"\nendpoint = \"/login\"\nmethod = \"POST\"\n\
         [[traffic]]\nname = \"get\"\nkind = \"bursts\"\ncount = 5\nevery = \"2s\"\napi_key = \"k\"\nendpoint = \"/login\"\n",
        conf.display().to_string()
    );
    let s = summary(&write(dir.path(), "m.toml", &scenario));
    let a = row(&s, "aws");
    assert_eq!(
        (a["offered"].clone(), a["rejected"].clone()),
        (20.into(), 6.into())
    );
    assert_eq!(rejected(a, "post"), 6);
    assert_eq!(rejected(a, "get"), 0);
}

/// A plan of one quota (`limit` per `period`, with `offset` when given) as get-usage-plan JSON.
fn quota_plan(name: &str, limit: u64, period: &str, offset: Option<u64>) -> String {
    let offset = offset.map_or(String::new(), |o| format!(", \"offset\": {o}"));
    format!(
        "{{\"name\": \"{name}\", \"apiStages\": [{{\"apiId\": \"a\", \"stage\": \"prod\"}}],\n \"quota\": {{\"limit\": {limit}, \"period\": \"{period}\"{offset}}}}}\n"
    )
}

/// Each plan of `plans` (contender name, plan JSON) imported by a scenario starting at `start`
/// whose one API key sends a request a second for 10 s (at 0 s to 9 s): each contender's
/// offered and rejected counts.
fn quotas_over_ten_seconds(start: &str, plans: &[(&str, String)]) -> Vec<(u64, u64)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut scenario = format!(
        "name = \"q\"\nduration = \"10s\"\nstart = \"{start}\"\n[policy]\nlimit = 1\nwindow = \"1s\"\nkey = \"api_key\"\n"
    );
    for (name, plan) in plans {
        write(dir.path(), &format!("{name}.json"), plan);
        scenario.push_str(&format!(
            "[[contender]]\nname = \"{name}\"\nimport = \"{name}.json\"\n"
        ));
    }
    scenario.push_str(
        "[[traffic]]\nname = \"app\"\nkind = \"constant\"\nrate = \"1/s\"\napi_key = \"k\"\n",
    );
    let s = summary(&write(dir.path(), "q.toml", &scenario));
    plans
        .iter()
        .map(|(name, _)| {
            let r = row(&s, name);
            let n = |f: &str| r[f].as_u64().expect("a count");
            (n("offered"), n("rejected"))
        })
        .collect()
}

/// Quotas of 3 per API key. 2026-05-31 is a Sunday, the last day of May; the scenario starts
/// at 23:59:55 UTC, so the requests at 0 s to 4 s fall on Sunday 31 May and the ones at 5 s to
/// 9 s on Monday 1 June.
/// - WEEK, offset 1: weeks start on Monday 00:00 UTC, the 6th request's instant: 3 pass and 2
///   are refused on Sunday, 3 pass and 2 are refused on Monday. 4 refused.
/// - WEEK, no offset (0, Sunday): the week started on Sunday 31 May 00:00 UTC and holds all
///   ten: 3 pass, 7 refused.
/// - MONTH, no offset: June starts on the 1st 00:00 UTC: 4 refused, as the Monday week.
#[test]
fn week_and_month_quotas_reset_on_their_utc_calendar_boundaries() {
    let monday = quota_plan("monday", 3, "WEEK", Some(1));
    let dir = tempfile::tempdir().expect("tempdir");
    let toml = imported(&write(dir.path(), "monday.json", &monday));
    assert!(
        toml.contains("name = \"quota\"\nalgorithm = \"calendar_window\"\nlimit = 3\nwindow = \"week\"\nkey = [\"api_key\"]\ntime_zone = \"UTC\"\nweek_starts = \"monday\"\nhas_api_key = true\n"),
        "{toml}"
    );
    assert!(toml.contains("quota offset 1"), "{toml}");
    let counts = quotas_over_ten_seconds(
        "2026-05-31T23:59:55Z",
        &[
            ("monday", monday),
            ("sunday", quota_plan("sunday", 3, "WEEK", None)),
            ("month", quota_plan("month", 3, "MONTH", None)),
        ],
    );
    assert_eq!(counts, [(10, 4), (10, 7), (10, 4)]);
}

/// MONTH quotas of 3 with offset 14 start on the 15th: from 2026-02-14T23:59:55Z the requests
/// at 5 s to 9 s are on 15 February, a new month: 4 refused. Offset 0's month (from the 1st)
/// holds all ten: 7 refused. Offset 30 (the 31st) starts February's month on its last day,
/// the 28th: from 2026-02-27T23:59:55Z, 4 refused.
#[test]
fn a_month_quota_with_an_offset_starts_on_day_offset_plus_1() {
    let counts = quotas_over_ten_seconds(
        "2026-02-14T23:59:55Z",
        &[
            ("fifteenth", quota_plan("fifteenth", 3, "MONTH", Some(14))),
            ("first", quota_plan("first", 3, "MONTH", Some(0))),
        ],
    );
    assert_eq!(counts, [(10, 4), (10, 7)]);
    let counts = quotas_over_ten_seconds(
        "2026-02-27T23:59:55Z",
        &[("last", quota_plan("last", 3, "MONTH", Some(30)))],
    );
    assert_eq!(counts, [(10, 4)]);
}

fn refused(name: &str, text: &str, expect: &[&str]) {
    import_refused("aws-usage-plan", name, text, expect);
}

#[test]
fn bad_usage_plans_exit_2_naming_file_line_and_field() {
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"quota\": {\"limit\": 100,\n    \"period\": \"MONTH\",\n    \"offset\": 31}\n}\n",
        &[
            "plan.json:5:",
            "`quota.offset`",
            "0 (the 1st) to 30 (the 31st)",
        ],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"quota\": {\"limit\": 100,\n    \"period\": \"WEEK\",\n    \"offset\": 7}\n}\n",
        &[
            "plan.json:5:",
            "`quota.offset`",
            "0 (Sunday) to 6 (Saturday)",
        ],
    );
    refused(
        "template.yaml",
        "Resources:\n  P:\n    Type: AWS::ApiGateway::UsagePlan\n    Properties:\n      Quota:\n        Limit: 100\n        Period: DAY\n        Offset: 1\n",
        &[
            "template.yaml:8:",
            "`Resources.P.Properties.Quota.Offset`",
            "a DAY quota's offset must be 0",
        ],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"quota\": {\"limit\": 100,\n    \"period\": \"YEAR\"}\n}\n",
        &["plan.json:4:", "`quota.period`", "DAY, WEEK or MONTH"],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"throttle\": {\"burstLimit\": 0,\n    \"rateLimit\": 10}\n}\n",
        &[
            "plan.json:3: directive `throttle.burstLimit`: 0 is too small: must be a whole number of requests from 1 to 4294967295",
        ],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"throttle\": {\"burstLimit\": 5, \"rateLimit\": 10},\n  \"apiStages\": [{\"apiId\": \"a\", \"stage\": \"prod\",\n    \"throttle\": {\"/pets/GET\": {\"burstLimit\": 1, \"rateLimit\": 1}}}]\n}\n",
        &[
            "plan.json:5:",
            "`apiStages[0].throttle`",
            "instead of the plan's",
        ],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"apiStages\": [{\"apiId\": \"a\", \"stage\": \"prod\",\n    \"throttle\": {\n      \"/pets/{petId}/GET\": {\"burstLimit\": 1, \"rateLimit\": 1}}}]\n}\n",
        &[
            "plan.json:5:",
            "`apiStages[0].throttle./pets/{petId}/GET`",
            "path parameters",
        ],
    );
    refused(
        "template.yaml",
        "Resources:\n  P:\n    Type: AWS::ApiGateway::UsagePlan\n    Properties:\n      Throttle:\n        RateLimit: none\n        BurstLimit: 5\n",
        &[
            "template.yaml:6:",
            "`Resources.P.Properties.Throttle.RateLimit`",
            "expected a number",
        ],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"apiStages\": []\n}\n",
        &["plan.json:1:", "nothing to import"],
    );
}
