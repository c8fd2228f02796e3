//! `rlsim import` of Kong `rate-limiting` plugins (declarative kong.yml, Admin API JSON) and
//! `[[contender]] import`, end to end: the refusals Kong's handler gives, counted by hand in
//! scenarios/kong_import.toml, a month limit across a UTC month's end, and bad input named by
//! file, line and field path.

use crate::util::{import_refused, imported, rejected, repo, row, summary, write};

/// kong.yml's three plugins, each on the requests Kong runs it for (the most specific one).
#[test]
fn kong_yml_imports_one_fixed_window_per_period_with_kongs_precedence() {
    let toml = imported(&repo().join("scenarios/configs/kong/kong.yml"));
    assert!(toml.contains("(kong)"), "{toml}");
    assert!(toml.contains("commit = \"all_or_nothing\""), "{toml}");
    assert!(toml.contains("refuse_status = 429"), "{toml}");
    assert_eq!(toml.matches("[[contender.rule]]").count(), 7, "{toml}");
    assert_eq!(
        toml.matches("algorithm = \"fixed_window\"").count(),
        7,
        "{toml}"
    );
    for block in [
        "name = \"service-api.second\"\nalgorithm = \"fixed_window\"\nlimit = 5\nwindow = \"1s\"\nkey = [\"api_key\"]\nroutes = [\"/api*\"]\nhas_api_key = true\nskip = [\"/api/login*\"]\n",
        "name = \"service-api.minute.no_key\"\nalgorithm = \"fixed_window\"\nlimit = 20\nwindow = \"1m\"\nkey = { identity = \"peer\" }\nroutes = [\"/api*\"]\nhas_api_key = false\nskip = [\"/api/login*\"]\n",
        "name = \"route-login.minute\"\nalgorithm = \"fixed_window\"\nlimit = 3\nwindow = \"1m\"\nkey = { identity = \"peer\" }\nroutes = [\"/api/login*\"]\n",
        "name = \"global.hour\"\nalgorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1h\"\nkey = { fallback = { identity = \"peer\" }, identity = \"user_else\" }\nroutes = [\"/*\"]\nskip = [\"/api*\", \"/api/login*\"]\n",
    ] {
        assert!(toml.contains(block), "{block} missing in:\n{toml}");
    }
    assert!(
        toml.contains("policy local counts in each Kong node"),
        "{toml}"
    );
    let json = imported(&repo().join("scenarios/configs/kong/plugin.json"));
    assert_eq!(json.matches("[[contender.rule]]").count(), 2, "{json}");
    assert!(
        json.contains("name = \"service.hour\"\nalgorithm = \"fixed_window\"\nlimit = 10000\nwindow = \"1h\"\nkey = { identity = \"peer\" }\n"),
        "{json}"
    );
}

/// scenarios/kong_import.toml, counted by hand in its comment; the printed TOML, pasted,
/// decides the same.
#[test]
fn kong_import_scenario_refuses_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/kong_import.toml"));
    let k = row(&s, "kong");
    assert_eq!(
        (k["offered"].clone(), k["rejected"].clone()),
        (440.into(), 197.into())
    );
    for (source, n) in [
        ("app", 60),
        ("nokey", 10),
        ("login", 7),
        ("browser", 100),
        ("member", 20),
    ] {
        assert_eq!(rejected(k, source), n, "{source}");
    }
    let toml = imported(&repo().join("scenarios/configs/kong/kong.yml"));
    let scenario =
        std::fs::read_to_string(repo().join("scenarios/kong_import.toml")).expect("scenario");
    let head = &scenario[..scenario.find("[[contender]]").expect("contender")];
    let traffic = &scenario[scenario.find("[[traffic]]").expect("traffic")..];
    let pasted = format!(
        "{head}{}\n{traffic}",
        toml.replace("name = \"kong-kong\"", "name = \"kong\"")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let s = summary(&write(dir.path(), "pasted.toml", &pasted));
    assert_eq!(row(&s, "kong")["rejected"], 197);
}

/// Kong's month starts on the 1st at 00:00 UTC (`get_timestamps`). Two global plugins by IP:
/// `month` (3 a month) and `both` (3 a month and 5 a year). The scenario starts at
/// 2026-01-31T23:59:55Z and one client sends a request a second for 10 s: the requests at 0 s
/// to 4 s are in January, the ones at 5 s to 9 s in February.
/// - `month`: 3 pass and 2 are refused in January, 3 pass and 2 are refused in February: 4.
/// - `both`: January as `month` (the 2 refused count in no period); in February the month is
///   fresh but the year holds 3: 2 pass, then the year's 5 are spent and 3 are refused: 5.
#[test]
fn a_month_limit_resets_on_the_first_at_midnight_utc() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = |config: &str| {
        format!(
            "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config:\n      limit_by: ip\n{config}"
        )
    };
    let month = write(dir.path(), "month.yml", &plugin("      month: 3\n"));
    write(
        dir.path(),
        "both.yml",
        &plugin("      month: 3\n      year: 5\n"),
    );
    let toml = imported(&month);
    assert!(
        toml.contains("name = \"global.month\"\nalgorithm = \"calendar_window\"\nlimit = 3\nwindow = \"month\"\nkey = { identity = \"peer\" }\ntime_zone = \"UTC\"\n"),
        "{toml}"
    );
    let scenario = "name = \"m\"\nduration = \"10s\"\nstart = \"2026-01-31T23:59:55Z\"\n\
         [policy]\nlimit = 1\nwindow = \"1s\"\n\
         [[contender]]\nname = \"month\"\nimport = \"month.yml\"\n\
         [[contender]]\nname = \"both\"\nimport = \"both.yml\"\n\
         [[traffic]]\nname = \"client\"\nkind = \"constant\"\nrate = \"1/s\"\nip = \"198.51.100.7\"\n";
    let s = summary(&write(dir.path(), "m.toml", scenario));
    for (name, rejected) in [("month", 4), ("both", 5)] {
        let r = row(&s, name);
        assert_eq!(
            (r["offered"].clone(), r["rejected"].clone()),
            (10.into(), rejected.into()),
            "{name}"
        );
    }
}

fn refused(yaml: &str, expect: &[&str]) {
    import_refused("kong", "kong.yml", yaml, expect);
}

#[test]
fn bad_kong_configs_name_file_line_and_field() {
    let head = "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config:\n";
    refused(
        &format!("{head}      limit_by: ip\n"),
        &[
            "kong.yml:4:",
            "`plugins[0].config`",
            "at least one of second, minute, hour, day, month, year is required",
        ],
    );
    refused(
        &format!("{head}      month: 0\n"),
        &[
            "kong.yml:5:",
            "`plugins[0].config.month`",
            "a limit must be a number of requests above 0",
        ],
    );
    refused(
        &format!("{head}      minute: many\n"),
        &[
            "kong.yml:5:",
            "`plugins[0].config.minute`",
            "expected a number",
        ],
    );
    refused(
        &format!("{head}      minute: 5\n      limit_by: header\n      header_name: X-Tenant\n"),
        &[
            "kong.yml:7:",
            "`plugins[0].config.header_name`",
            "X-API-Key",
        ],
    );
    refused(
        &format!("{head}      minute: 5\n      limit_by: service\n"),
        &[
            "kong.yml:6:",
            "`plugins[0].config.limit_by`",
            "each service",
        ],
    );
    refused(
        &format!("{head}      minute: 5\n      window_size: [60]\n"),
        &[
            "kong.yml:6:",
            "`plugins[0].config.window_size`",
            "not supported",
        ],
    );
    refused(
        &format!("{head}      minute: 5\n    consumer: alice\n"),
        &["kong.yml:3:", "`plugins[0]`", "consumer"],
    );
    refused(
        "_format_version: \"3.0\"\nroutes:\n  - name: r\n    paths: [\"~/api/v[0-9]+\"]\n    plugins:\n      - name: rate-limiting\n        config: {minute: 5}\n",
        &["kong.yml:4:", "`routes[0].paths[0]`", "regular-expression"],
    );
    refused(
        "_format_version: \"3.0\"\nplugins:\n  - name: key-auth\n",
        &["kong.yml:1:", "nothing to import"],
    );
}
