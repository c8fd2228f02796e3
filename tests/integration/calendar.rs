//! Calendar quotas (`algorithm = "calendar_window"`): periods on a time zone's clocks, counted
//! by hand across a month boundary in São Paulo and both DST transitions of New York; the
//! quota figures (who ran out, on which day, for how much of the period); and the refusals of
//! what a calendar window cannot take.

use crate::util::{rlsim, run_refused, summary, write};
use serde_json::Value;

/// A scenario of one API key sending `rate` at a constant pace from `start` for `duration`,
/// against one contender whose only rule is `rule` (the `[[contender.rule]]` body).
fn quota_scenario(start: &str, duration: &str, rate: &str, rule: &str) -> String {
    format!(
        r#"name = "quota"
duration = "{duration}"
start = "{start}"
[policy]
limit = 1000
window = "1h"
key = "api_key"
[[traffic]]
name = "acme"
kind = "constant"
api_key = "acme"
rate = "{rate}"
[[contender]]
name = "plan"
[[contender.rule]]
name = "quota"
{rule}
"#
    )
}

/// `rlsim run` of `toml`: the summary's row of contender `plan`.
fn plan(toml: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    summary(&write(dir.path(), "quota.toml", toml))["algorithms"][0].clone()
}

/// Each run-out's (period, day, refused, admitted).
fn run_outs(plan: &Value) -> Vec<(String, u64, u64, u64)> {
    plan["rules"][0]["quota"]["run_outs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["period"].as_str().unwrap().to_string(),
                o["day"].as_u64().unwrap(),
                o["refused"].as_u64().unwrap(),
                o["admitted"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_monthly_quota_in_sao_paulo_resets_at_03_00_utc_on_the_first() {
    // One request an hour from 2026-01-31T00:00Z, 10 a month in São Paulo (-03:00). January
    // there ends at 2026-02-01T03:00Z, 27 h in: requests at 0 h ... 26 h are January's (27:
    // 10 admitted, 17 refused from 10 h, 31 January 07:00 local), those at 27 h ... 71 h
    // February's (45: 10 admitted, 35 refused from 37 h, 1 February 10:00 local).
    let rule = "algorithm = \"calendar_window\"\nlimit = 10\nwindow = \"month\"\n\
                time_zone = \"America/Sao_Paulo\"";
    let p = plan(&quota_scenario("2026-01-31T00:00:00Z", "72h", "1/h", rule));
    assert_eq!(
        (p["admitted"].as_u64(), p["rejected"].as_u64()),
        (Some(20), Some(52))
    );
    let quota = &p["rules"][0]["quota"];
    assert_eq!(quota["calendar"], "month in America/Sao_Paulo");
    assert_eq!(
        (quota["key_periods"].as_u64(), quota["ran_out"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        run_outs(&p),
        [
            ("2026-01".into(), 31, 17, 10),
            ("2026-02".into(), 1, 35, 10)
        ]
    );
    let h = 3_600_000_000_000u64;
    let outs = quota["run_outs"].as_array().unwrap();
    assert_eq!(outs[0]["at_ns"].as_u64(), Some(10 * h));
    assert_eq!(outs[0]["key"], "acme");
    // Refused from 10 h to the end of January at 27 h, of its 744 hours; then 662 of
    // February's 672.
    assert_eq!(outs[0]["refused_share"].as_f64(), Some(17.0 / 744.0));
    assert_eq!(outs[1]["refused_share"].as_f64(), Some(662.0 / 672.0));
    // The rule never admitted past its quota, nor refused while under it.
    let r = &p["rules"][0];
    assert_eq!(r["violations"].as_u64(), Some(0));
    assert_eq!(r["max_window_admitted"].as_u64(), Some(10));
    assert_eq!(r["needless_rejections"].as_u64(), Some(0));
}

#[test]
fn a_daily_quota_follows_new_yorks_23_and_25_hour_days() {
    // One request every 30 minutes, 40 a day in New York. From local midnight on 7 March
    // 2026 (05:00Z): a day of 24 h (48 requests, 8 refused), then 8 March, 23 h long (46
    // requests, 6 refused), then the first hour of 9 March (2, admitted).
    let rule = "algorithm = \"calendar_window\"\nlimit = 40\nwindow = \"day\"\n\
                time_zone = \"America/New_York\"";
    let spring = plan(&quota_scenario("2026-03-07T05:00:00Z", "48h", "2/h", rule));
    assert_eq!(
        run_outs(&spring),
        [
            ("2026-03-07".into(), 1, 8, 40),
            ("2026-03-08".into(), 1, 6, 40)
        ]
    );
    assert_eq!(spring["admitted"].as_u64(), Some(82));
    // From local midnight on 31 October (04:00Z): 24 h, then 1 November, 25 h long (50
    // requests, 10 refused).
    let autumn = plan(&quota_scenario("2026-10-31T04:00:00Z", "49h", "2/h", rule));
    assert_eq!(
        run_outs(&autumn),
        [
            ("2026-10-31".into(), 1, 8, 40),
            ("2026-11-01".into(), 1, 10, 40)
        ]
    );
    assert_eq!(autumn["admitted"].as_u64(), Some(80));
}

#[test]
fn a_week_from_sunday_and_a_month_from_the_15th() {
    // 2026-01-01 is a Thursday: the week from Sunday 28 December ends on Sunday 4 January,
    // 3 days in. One request every 6 hours, 5 a week: 12 requests in the first 3 days (5
    // admitted, refused from 2 January 06:00, the week's 6th day), then 5 of the next 8.
    let rule = "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"week\"\n\
                week_starts = \"sunday\"";
    let p = plan(&quota_scenario("2026-01-01T00:00:00Z", "5d", "4/d", rule));
    assert_eq!(
        run_outs(&p),
        [
            ("2025-12-28".into(), 6, 7, 5),
            ("2026-01-04".into(), 2, 3, 5)
        ]
    );
    // A month from the 15th at -03:00: 15 January starts at 03:00Z, 14 days and 3 hours in.
    // One request a day at 00:00Z (21:00 local the day before), 1 a month: the second, on 1
    // January local (day 18 from 15 December), is the first refused; then 16 January (day 2).
    let rule = "algorithm = \"calendar_window\"\nlimit = 1\nwindow = \"month\"\n\
                month_starts = 15\ntime_zone = \"-03:00\"";
    let p = plan(&quota_scenario("2026-01-01T00:00:00Z", "17d", "1/d", rule));
    assert_eq!(
        run_outs(&p),
        [
            ("2025-12-15".into(), 18, 14, 1),
            ("2026-01-15".into(), 2, 1, 1)
        ]
    );
}

/// `rlsim run` of a scenario whose rule is `rule`: refused with exit code 2; its stderr.
fn refused(rule: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let toml = quota_scenario("2026-01-01T00:00:00Z", "1h", "1/min", rule);
    run_refused(&write(dir.path(), "quota.toml", &toml))
}

#[test]
fn what_a_calendar_window_cannot_take_is_refused_with_its_line_and_field() {
    let cases = [
        (
            "algorithm = \"fixed_window\"\nlimit = 5\nwindow = \"month\"",
            "quota.toml:19:10: field `contender[0].rule[0].window`",
            "`month` is a calendar period, which `algorithm = \"calendar_window\"` counts",
        ),
        (
            "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"30d\"",
            "quota.toml:19:10: field `contender[0].rule[0].window`",
            "a window of one length is `fixed_window`'s",
        ),
        (
            "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"month\"\ntime_zone = \"America/Sao_Paolo\"",
            "quota.toml:20:13: field `contender[0].rule[0].time_zone`",
            "did you mean `America/Sao_Paulo`?",
        ),
        (
            "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"month\"\nweek_starts = \"sunday\"",
            "field `contender[0].rule[0].week_starts`",
            "only a `week` window starts on a weekday",
        ),
        (
            "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"month\"\nmonth_starts = 32",
            "field `contender[0].rule[0].month_starts`",
            "32 is too large",
        ),
        (
            "algorithm = \"token_bucket\"\nlimit = 5\nwindow = \"1m\"\ntime_zone = \"UTC\"",
            "field `contender[0].rule[0].time_zone`",
            "belongs to a calendar window",
        ),
        (
            "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"week\"\nweek_starts = \"sundy\"",
            "field `contender[0].rule[0].week_starts`",
            "`sundy` is not a weekday",
        ),
    ];
    for (rule, place, why) in cases {
        let stderr = refused(rule);
        assert!(stderr.contains(place), "{rule}: {stderr}");
        assert!(stderr.contains(why), "{rule}: {stderr}");
    }
}

#[test]
fn a_calendar_period_where_a_length_is_due_says_where_periods_go() {
    let dir = tempfile::tempdir().unwrap();
    let rule = "algorithm = \"calendar_window\"\nlimit = 5\nwindow = \"day\"";
    let toml = quota_scenario("2026-01-01T00:00:00Z", "1h", "1/min", rule)
        .replace("window = \"1h\"", "window = \"month\"");
    let stderr = run_refused(&write(dir.path(), "quota.toml", &toml));
    assert!(
        stderr.contains(
            "quota.toml:6:10: field `policy.window`: `month` is a calendar period, not a length"
        ),
        "{stderr}"
    ); // In the short form's list it is refused where it is written.
    let short = quota_scenario("2026-01-01T00:00:00Z", "1h", "1/min", rule)
        .replace("start = ", "algorithms = [\"calendar_window\"]\nstart = ");
    let stderr = run_refused(&write(dir.path(), "short.toml", &short));
    assert!(
        stderr.contains(
            "short.toml:3:15: field `algorithms[0]`: `calendar_window` counts per calendar period"
        ),
        "{stderr}"
    );
}

#[test]
fn a_quota_divided_between_replicas_keeps_its_calendar() {
    // 100 a UTC day divided between 2 replicas behind a round robin: 50 each. One request
    // every 6 minutes for 2 days: 240 a day, 120 to each replica, 50 of them admitted.
    let toml = quota_scenario(
        "2026-01-01T00:00:00Z",
        "48h",
        "10/h",
        "algorithm = \"calendar_window\"\nlimit = 100\nwindow = \"day\"",
    )
    .replace(
        "[[contender.rule]]",
        "[contender.deployment]\nreplicas = 2\nstore = \"local\"\nlimit = \"divided\"\n[[contender.rule]]",
    );
    let p = plan(&toml);
    assert_eq!(
        (p["admitted"].as_u64(), p["rejected"].as_u64()),
        (Some(200), Some(280))
    );
}

#[test]
fn expect_reads_a_quota_and_refuses_it_on_a_rule_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let rule = "algorithm = \"calendar_window\"\nlimit = 10\nwindow = \"day\"";
    let toml = quota_scenario("2026-01-01T00:00:00Z", "48h", "1/h", rule);
    let with = |line: &str| format!("expect = [\"{line}\"]\n{toml}");
    let path = write(
        dir.path(),
        "ok.toml",
        &with("plan rule=quota quota_ran_out == 2"),
    );
    let out = rlsim().arg("check").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let fixed = toml.replace(
        rule,
        "algorithm = \"fixed_window\"\nlimit = 10\nwindow = \"1d\"",
    );
    let line = "plan rule=quota quota_ran_out == 2";
    let path = write(
        dir.path(),
        "bad.toml",
        &format!("expect = [\"{line}\"]\n{fixed}"),
    );
    let out = rlsim().arg("check").arg(&path).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains("rule `quota` of contender `plan` is `fixed_window`, not a calendar window"),
        "{stderr}"
    );
}

/// Kong's month counter lives 30 days from its first count: one request a day from 1 January
/// 2026 (UTC), 29 a month. January's counter, started on day 0, expires on day 30, the
/// month's last day, which Kong admits again; without the lifetime day 30 stays refused.
#[test]
fn a_counter_that_lives_30_days_admits_again_on_the_31st() {
    let rule = "algorithm = \"calendar_window\"\nlimit = 29\nwindow = \"month\"";
    let counts = |rule: &str| {
        let p = plan(&quota_scenario("2026-01-01T00:00:00Z", "35d", "1/d", rule));
        (
            p["admitted"].as_u64().unwrap(),
            p["rejected"].as_u64().unwrap(),
        )
    };
    // Days 0-28 admitted, 29 and 30 refused; February's days 31-34 admitted.
    assert_eq!(counts(rule), (33, 2));
    // Day 29 refused, day 30 counted afresh.
    assert_eq!(counts(&format!("{rule}\ncounter_ttl = \"30d\"")), (34, 1));
    let stderr =
        refused("algorithm = \"fixed_window\"\nlimit = 5\nwindow = \"1h\"\ncounter_ttl = \"30d\"");
    assert!(
        stderr.contains(
            "field `contender[0].rule[0].counter_ttl`: `counter_ttl` belongs to a calendar window"
        ),
        "{stderr}"
    );
}
