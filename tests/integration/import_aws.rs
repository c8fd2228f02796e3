//! `rlsim import` of AWS API Gateway usage plans (`get-usage-plan` JSON, CloudFormation) and
//! `[[contender]] import`, end to end: the refusals of scenarios/aws_import.toml counted by
//! hand, a method's own throttle on a small trace, and bad input named by file, line and field.

use crate::util::{import_refused, imported, rejected, repo, row, summary, write};

/// The plan's throttle is a token bucket of burstLimit refilled at rateLimit a second, its
/// quota a day's fixed window, both per API key; CloudFormation's method throttle is a rule on
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
        "name = \"quota\"\nalgorithm = \"fixed_window\"\nlimit = 12\nwindow = \"1d\"\nkey = [\"api_key\"]\nhas_api_key = true\n",
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

fn refused(name: &str, text: &str, expect: &[&str]) {
    import_refused("aws-usage-plan", name, text, expect);
}

#[test]
fn bad_usage_plans_exit_2_naming_file_line_and_field() {
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"quota\": {\"limit\": 100,\n    \"period\": \"MONTH\"}\n}\n",
        &["plan.json:4:", "`quota.period`", "calendar month"],
    );
    refused(
        "plan.json",
        "{\n  \"name\": \"p\",\n  \"quota\": {\"limit\": 100,\n    \"period\": \"WEEK\"}\n}\n",
        &["plan.json:4:", "`quota.period`", "Thursdays"],
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
