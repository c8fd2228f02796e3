//! `rlsim import` of the envoyproxy/ratelimit service's descriptor configuration and
//! `[[contender]] import`, end to end: the refusals `DoLimit` gives, counted by hand in
//! scenarios/envoy_ratelimit_import.toml, and bad input named by file, line and field path.

use crate::util::{import_refused, imported, repo, row, source, summary, write};

/// ratelimit.yaml: per address 10 a minute, per path 6 a second, /login 3 a second replacing
/// the per-address limit, the monitor's address unlimited. browser (8 at once each second to
/// /api/items): 2 + 6 + 8 refused; login (5 each second): 2 a second; monitor: none, bypassed.
/// The shadow /api/* limit (4 a second, every path together) admits as would-refuse only the
/// 5th and 6th at 0 s: its other overages are refused by the enforcing limits.
#[test]
fn envoy_ratelimit_descriptors_refuse_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/envoy_ratelimit_import.toml"));
    let e = row(&s, "edge");
    assert_eq!(e["offered"], 54);
    assert_eq!(e["rejected"], 22);
    assert_eq!(e["bypassed"], 15);
    assert_eq!(e["would_refuse"], 2);
    assert_eq!(e["refuse_status"], 429);
    assert_eq!(source(e, "browser")["rejected"], 16);
    assert_eq!(source(e, "login")["rejected"], 6);
    assert_eq!(source(e, "monitor")["rejected"], 0);
}

/// The printed contender, pasted into the scenario in place of `import = ...`, decides alike;
/// without its `skip` (the `replaces`) the per-address limit refuses all 5 logins at 2 s: 9.
#[test]
fn the_printed_envoy_ratelimit_contender_decides_as_the_direct_import() {
    let conf = repo().join("scenarios/configs/envoy/ratelimit.yaml");
    let toml = imported(&conf);
    let order = [
        "commit = \"every_rule\"",
        "refuse_status = 429",
        "bypass = { cidrs = [\"203.0.113.50\"] }",
        "name = \"remote_address\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 10\nwindow = \"1m\"\nkey = [\"ip\"]\nskip = [\"/login\"]",
        "name = \"generic_key_paths.path\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 6\nwindow = \"1s\"\nkey = [\"endpoint\"]\nskip = [\"/login\"]",
        "limit = 3\nwindow = \"1s\"\nkey = []\nroutes = [\"/login\"]",
        "name = \"generic_key_api.path__api__\"\nalgorithm = \"envoy-ratelimit\"\nlimit = 4\nwindow = \"1s\"\nkey = []\nroutes = [\"/api/*\"]\ndry_run = true",
    ];
    let mut from = 0;
    for line in order {
        let at = toml[from..]
            .find(line)
            .unwrap_or_else(|| panic!("{line} missing (in order) in:\n{toml}"));
        from += at + line.len();
    }
    let scenario = std::fs::read_to_string(repo().join("scenarios/envoy_ratelimit_import.toml"))
        .expect("scenario");
    let direct = "[[contender]]\nname = \"edge\"\nimport = \"configs/envoy/ratelimit.yaml\"\n";
    assert!(scenario.contains(direct));
    let dir = tempfile::tempdir().expect("tempdir");
    let pasted = scenario.replace(direct, &toml);
    let s = summary(&write(dir.path(), "pasted.toml", &pasted));
    assert_eq!(row(&s, "edge")["rejected"], 22);
    assert_eq!(row(&s, "edge")["would_refuse"], 2);
    // The shadow rule enforcing: it refuses the 5th and 6th at 0 s too.
    let enforced = pasted
        .replace("dry_run = true\n", "")
        .replace("    \"edge would_refuse == 2\",\n", "");
    let s = summary(&write(dir.path(), "enforced.toml", &enforced));
    assert_eq!(row(&s, "edge")["rejected"], 24);
    let no_replaces = pasted.replacen("skip = [\"/login\"]\n", "", 1);
    let s = summary(&write(dir.path(), "no_replaces.toml", &no_replaces));
    assert_eq!(source(row(&s, "edge"), "login")["rejected"], 9);
}

#[test]
fn bad_envoy_ratelimit_configs_exit_2_naming_file_line_and_key() {
    let head = "domain: edge\ndescriptors:\n  - key: remote_address\n";
    import_refused(
        "envoy-ratelimit",
        "rl.yaml",
        &format!("{head}    rate_limit:\n      unit: fortnight\n      requests_per_unit: 5\n"),
        &[
            "rl.yaml:5: directive `descriptors[0].rate_limit.unit`: \"fortnight\" is not a unit (second, minute, hour, day, week, month, year)",
        ],
    );
    import_refused(
        "envoy-ratelimit",
        "rl.yaml",
        "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second\n",
        &["rl.yaml:", "directive `yaml`"],
    );
    import_refused(
        "envoy-ratelimit",
        "rl.yaml",
        &format!("{head}  - key: database\n    value: users\n"),
        &[
            "rl.yaml:4: directive `descriptors[1].key`: descriptor key `database`",
            "remote_address, client_ip",
        ],
    );
    import_refused(
        "envoy-ratelimit",
        "rl.yaml",
        &format!(
            "{head}    rate_limit: {{unit: second, requests_per_unit: 1}}\n  - key: remote_address\n"
        ),
        &[
            "rl.yaml:5: directive `descriptors[1]`: duplicate descriptor composite key 'remote_address'",
        ],
    );
}

/// Detected from its content (`domain:` and `descriptors:` at the top level), no --kind.
#[test]
fn the_service_file_is_detected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(
        dir.path(),
        "config.yaml",
        "domain: d\ndescriptors:\n  - key: generic_key\n    value: all\n    rate_limit: {unit: day, requests_per_unit: 1000}\n",
    );
    let toml = imported(&p);
    assert!(toml.contains("(envoy-ratelimit)"), "{toml}");
    assert!(toml.contains("window = \"1d\"\nkey = []"), "{toml}");
}

/// Runs `scenario` (its contender `import = "rl.yaml"`) beside `config`: its summary row.
fn run_with(config: &str, scenario: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "rl.yaml", config);
    let s = summary(&write(dir.path(), "s.toml", scenario));
    row(&s, "rl").clone()
}

const POLICY: &str = "[policy]\nlimit = 5\nwindow = \"1m\"\nkey = \"ip\"\n\n[[contender]]\nname = \"rl\"\nimport = \"rl.yaml\"\n\n";

/// Windows are `now/60 s` from the Unix epoch (the default start, 2026-01-01, is a whole
/// minute and a whole week of it): 5 at 59 s and 5 at 60 s are all admitted (twice the limit
/// within a second, across the boundary), the 5 at 61 s refused. A week is 7 days: one request
/// a day for 10 days, 3 a week, admits days 0-2 and 7-9 and refuses days 3-6.
#[test]
fn windows_are_aligned_on_multiples_of_the_unit() {
    let minute = run_with(
        "domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 5}\n",
        &format!(
            "name = \"m\"\nduration = \"62s\"\n{POLICY}[[traffic]]\nname = \"c\"\nkind = \"bursts\"\ncount = 5\nevery = \"1s\"\nstart = \"59s\"\nip = \"198.51.100.7\"\nendpoint = \"/\"\n"
        ),
    );
    assert_eq!(
        (minute["offered"].clone(), minute["rejected"].clone()),
        (15.into(), 5.into())
    );
    let week = run_with(
        "domain: d\ndescriptors:\n  - key: generic_key\n    value: all\n    rate_limit: {unit: week, requests_per_unit: 3}\n",
        &format!(
            "name = \"w\"\nduration = \"10d\"\n{POLICY}[[traffic]]\nname = \"c\"\nkind = \"bursts\"\ncount = 1\nevery = \"1d\"\nip = \"198.51.100.7\"\nendpoint = \"/\"\n"
        ),
    );
    assert_eq!(
        (week["offered"].clone(), week["rejected"].clone()),
        (10.into(), 4.into())
    );
}

/// A replay starting at :30 of a minute (2026-01-01T00:00:30Z; the policy window 1 s keeps
/// virtual 0 there): 5 a minute per address, 4 requests at :30-:33, then 4 at 00:01:01-:04. The
/// service's windows turn at 00:01:00: 4 and 4, none refused. The same rule as rlsim's plain
/// `fixed_window`, whose minute starts at the first record, counts all 8 in [:30, 01:30):
/// the 6th to 8th refused, 3.
#[test]
fn a_replay_keeps_the_services_epoch_aligned_windows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = write(
        dir.path(),
        "rl.yaml",
        "domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 5}\n",
    );
    let times = [30, 31, 32, 33, 61, 62, 63, 64];
    let trace: String = times
        .iter()
        .map(|s| format!("{}000000000,198.51.100.7\n", 1_767_225_600 + s))
        .collect();
    write(dir.path(), "trace.csv", &format!("time,ip\n{trace}"));
    let head =
        "name = \"r\"\nduration = \"40s\"\n[policy]\nlimit = 5\nwindow = \"1s\"\nkey = \"ip\"\n\n";
    let traffic = "[[traffic]]\nname = \"c\"\nkind = \"replay\"\npath = \"trace.csv\"\n";
    let direct = format!("{head}[[contender]]\nname = \"rl\"\nimport = \"rl.yaml\"\n\n{traffic}");
    let s = summary(&write(dir.path(), "s.toml", &direct));
    let r = row(&s, "rl");
    assert_eq!(
        (r["offered"].clone(), r["rejected"].clone()),
        (8.into(), 0.into())
    );
    // The printed contender with the rule as a plain fixed window instead.
    let printed = imported(&conf);
    let profile = "profile = { requests_per_unit = 5, unit = \"minute\" }\n";
    assert!(printed.contains(profile), "{printed}");
    let plain = printed.replace(profile, "").replace(
        "algorithm = \"envoy-ratelimit\"",
        "algorithm = \"fixed_window\"",
    );
    let s = summary(&write(
        dir.path(),
        "plain.toml",
        &format!("{head}{plain}\n{traffic}"),
    ));
    let r = s["algorithms"][0].clone();
    assert_eq!(
        (r["offered"].clone(), r["rejected"].clone()),
        (8.into(), 3.into())
    );
}
