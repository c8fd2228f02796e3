//! An intent per calendar period (`[intent] window = "month"` in a time zone): every
//! contender judged against the month a customer bought, by hand across a month boundary in
//! São Paulo; tiers on their own periods; and what such an intent cannot take.

use crate::util::{run_out, run_refused, summary, write};
use serde_json::Value;

/// One API key sending one request an hour from 2026-01-31T00:00Z for 72 h (São Paulo's
/// January ends at 2026-02-01T03:00Z: hours 0 to 26 are January's, 27 to 71 February's),
/// judged against 10 a month in São Paulo, beside the contenders `contenders` (TOML).
fn scenario(intent: &str, contenders: &str) -> String {
    format!(
        r#"name = "months"
duration = "72h"
start = "2026-01-31T00:00:00Z"
[policy]
limit = 1000
window = "1h"
key = "api_key"
[intent]
{intent}
[[traffic]]
name = "acme"
kind = "constant"
api_key = "acme"
rate = "1/h"
{contenders}
"#
    )
}

const MONTH: &str = "limit = 10\nwindow = \"month\"\ntime_zone = \"America/Sao_Paulo\"";

/// A contender of one rule.
fn contender(name: &str, rule: &str) -> String {
    format!("[[contender]]\nname = \"{name}\"\n[[contender.rule]]\nname = \"r\"\n{rule}\n")
}

/// The figures a contender is judged by, per row of `summary.json`.
fn judged(row: &Value) -> [u64; 7] {
    [
        "admitted",
        "policy_violations",
        "needless_rejections",
        "max_window_admitted",
        "wrongly_allowed",
        "wrongly_rejected",
        "clients_hurt",
    ]
    .map(|f| row[f].as_u64().unwrap_or_else(|| panic!("{f}: {row}")))
}

#[test]
fn contenders_are_judged_per_month_on_sao_paulos_clocks() {
    let contenders = [
        contender(
            "quota",
            "algorithm = \"calendar_window\"\nlimit = 10\nwindow = \"month\"\n\
             time_zone = \"America/Sao_Paulo\"",
        ),
        contender(
            "rolling",
            "algorithm = \"sliding_window_log\"\nlimit = 10\nwindow = \"24h\"",
        ),
        contender(
            "daily",
            "algorithm = \"calendar_window\"\nlimit = 4\nwindow = \"day\"\n\
             time_zone = \"America/Sao_Paulo\"",
        ),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let s = summary(&write(dir.path(), "m.toml", &scenario(MONTH, &contenders)));
    assert_eq!(s["intent"]["period"], "month in America/Sao_Paulo");
    assert_eq!(
        s["intent"]["text"],
        "10 per month in America/Sao_Paulo per client"
    );
    let rows = s["algorithms"].as_array().unwrap();
    // The exact limiter of the intent: hours 0-9 and 27-36 admitted.
    assert_eq!(judged(&rows[0]), [20, 0, 0, 10, 0, 0, 0]);
    // 10 per rolling 24 h admits hours 0-9, 24-33 and 48-57: January holds 13 (3 over),
    // February 17 (7 over), and neither month ends with room for a refusal. Against the
    // exact limiter: 24-26 and 48-57 wrongly allowed, 34-36 wrongly rejected.
    assert_eq!(judged(&rows[1]), [30, 10, 0, 17, 13, 3, 0]);
    assert_eq!(
        rows[1]["worst_window_end_ns"].as_u64(),
        Some(57 * 3_600_000_000_000),
        "the 17th admission of February, at 57 h"
    );
    // 4 a São Paulo day (days start at 03:00Z: hours 0-2 are 30 January's) admits 0-6, 27-30
    // and 51-54. January ends with 7 and February (cut short) with 8, both under 10: each
    // of the 20 + 20 + 17 refusals was needless. Against the exact limiter: 7-9 and 31-36
    // wrongly rejected, 51-54 wrongly allowed.
    assert_eq!(judged(&rows[2]), [15, 0, 57, 8, 4, 9, 1]);
    assert!(
        rows.iter().all(|r| r["mean_rate_error"].is_null()),
        "no rolling estimate is judged per period"
    );
}

/// The same hours judged per key instead of per client, and in units of cost: each request
/// weighs 2, the month allows 10 units.
#[test]
fn an_intent_per_period_judges_keys_or_units_too() {
    let rolling = contender(
        "rolling",
        "algorithm = \"sliding_window_log\"\nlimit = 10\nwindow = \"24h\"",
    );
    let dir = tempfile::tempdir().unwrap();
    let per_key = format!("{MONTH}\nper = \"api_key\"");
    let s = summary(&write(dir.path(), "k.toml", &scenario(&per_key, &rolling)));
    assert_eq!(s["intent"]["per"], "api_key");
    assert_eq!(judged(&s["algorithms"][0]), [30, 10, 0, 17, 13, 3, 0]);

    let costed = scenario(&format!("{MONTH}\nunit = \"cost\""), &rolling)
        .replace("rate = \"1/h\"", "rate = \"1/h\"\ncost = 2");
    let s = summary(&write(dir.path(), "c.toml", &costed));
    let row = &s["algorithms"][0];
    // The log counts cost too: 10 units per 24 h admits hours 0-4, 24-28 and 48-52. 10
    // units a month is 5 requests: January holds 8 (3 over, 6 units), February 7 (2 over, 4
    // units); no refusal fits.
    assert_eq!(row["admitted"].as_u64(), Some(15));
    assert_eq!(row["policy_violations"].as_u64(), Some(5));
    assert_eq!(row["cost"]["over_intent"].as_u64(), Some(10));
    assert_eq!(row["needless_rejections"].as_u64(), Some(0));
    assert_eq!(row["max_window_admitted"].as_u64(), Some(16));
}

/// A tier's own period on the base's clocks: free clients per São Paulo day, pro per month.
#[test]
fn a_tier_counts_on_its_own_period() {
    let intent =
        format!("{MONTH}\nper_tier = [{{ tiers = [\"free\"], limit = 2, window = \"day\" }}]");
    let toml = scenario(
        &intent,
        &contender(
            "open",
            "algorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1h\"",
        ),
    )
    .replace("api_key = \"acme\"", "user = \"acme\"\ntier = \"free\"")
    .replace("key = \"api_key\"", "key = \"user\"");
    let dir = tempfile::tempdir().unwrap();
    let s = summary(&write(dir.path(), "t.toml", &toml));
    assert_eq!(
        s["intent"]["per_tier"][0]["period"],
        "day in America/Sao_Paulo"
    );
    // Everything admitted: 3 on 30 January (local), then 24, 24 and 21 a day; each day's
    // admissions past 2 are violations: 1 + 22 + 22 + 19.
    let row = &s["algorithms"][0];
    assert_eq!(row["policy_violations"].as_u64(), Some(64));
    assert_eq!(row["max_window_admitted"].as_u64(), Some(24));
}

#[test]
fn what_an_intent_per_period_cannot_take_is_refused_with_its_line_and_field() {
    let quota = contender(
        "q",
        "algorithm = \"fixed_window\"\nlimit = 5\nwindow = \"1h\"",
    );
    let cases = [
        (
            "window = \"month\"",
            "m.toml:9:10: field `intent.limit`",
            "an allowance per calendar month states its own `limit`",
        ),
        (
            "limit = 5\nwindow = \"month\"\nburst = 10",
            "m.toml:11:9: field `intent.burst`",
            "has no burst",
        ),
        (
            "limit = 5\nwindow = \"1d\"\ntime_zone = \"UTC\"",
            "m.toml:11:13: field `intent.time_zone`",
            "`time_zone` places a calendar period: write `window = \"month\"`",
        ),
        (
            "limit = 5\nwindow = \"month\"\ntime_zone = \"Mars/Olympus\"",
            "field `intent.time_zone`",
            "Mars/Olympus",
        ),
        (
            "limit = 5\nwindow = \"month\"\nweek_starts = \"monday\"",
            "field `intent.week_starts`",
            "only a `week` window starts on a weekday",
        ),
        (
            "limit = 5\nwindow = \"month\"\nper_tier = [{ tiers = [\"free\"], limit = 1, window = \"1h\" }]",
            "field `intent.per_tier[0].window`",
            "counts per calendar period, as its base does",
        ),
        (
            "limit = 5\nwindow = \"1h\"\nper_route = [{ routes = [\"/a\"], limit = 1, window = \"day\" }]",
            "field `intent.per_route[0].window`",
            "the intent's base counts in a rolling window",
        ),
        (
            "limit = 5\nwindow = \"month\"\nper_tier = [{ tiers = [\"free\"], limit = 1, burst = 3 }]",
            "field `intent.per_tier[0].burst`",
            "has no burst",
        ),
    ];
    for (intent, place, why) in cases {
        let dir = tempfile::tempdir().unwrap();
        let stderr = run_refused(&write(dir.path(), "m.toml", &scenario(intent, &quota)));
        assert!(stderr.contains(place), "{intent}: {stderr}");
        assert!(stderr.contains(why), "{intent}: {stderr}");
    }
}

/// The charts of a run judged per month: no worst-moment chart (its window would be a whole
/// month), and the busiest chart drawn per client against the intent.
#[test]
fn the_charts_draw_each_clients_period() {
    let dir = tempfile::tempdir().unwrap();
    let quota = contender(
        "quota",
        "algorithm = \"calendar_window\"\nlimit = 10\nwindow = \"month\"",
    );
    let path = write(dir.path(), "m.toml", &scenario(MONTH, &quota));
    let out = dir.path().join("out");
    run_out(&path, &out);
    assert!(!out.join("charts/worst_moment.svg").exists());
    let busiest = std::fs::read_to_string(out.join("charts/busiest_key.svg")).unwrap();
    assert!(
        busiest.contains("Busiest client against the intent: months"),
        "{busiest}"
    );
    assert!(
        busiest.contains("intent (10 per month in America/Sao_Paulo)"),
        "the limit line names the intent"
    );
}
