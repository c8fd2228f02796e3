//! `rlsim import` of Envoy's HTTP local_ratelimit filter and `[[contender]] import`, end to
//! end: the refusals local_ratelimit_impl.cc gives, counted by hand in
//! scenarios/envoy_import.toml, and bad input named by file, line and field path.

use crate::util::{repo, rlsim, row, source, summary, write};

/// local_ratelimit.yaml: the filter's bucket (8, 4/s) refuses 4 + 8 + 8 of three bursts of 12;
/// /login's descriptor bucket (6, 1/s) is consumed before its default bucket (4, 16/s), so of
/// three bursts of 5 the fifth at 0 s spends a descriptor token and is refused by the default
/// bucket: 1 + 3 + 4 refused.
#[test]
fn envoy_local_buckets_refuse_the_hand_counted_requests() {
    let s = summary(&repo().join("scenarios/envoy_import.toml"));
    let e = row(&s, "envoy");
    assert_eq!(e["offered"], 51);
    assert_eq!(e["rejected"], 28);
    assert_eq!(e["refuse_status"], 429);
    assert_eq!(source(e, "browser")["rejected"], 20);
    assert_eq!(source(e, "login")["rejected"], 8);
}

#[test]
fn the_printed_envoy_local_contender_orders_descriptor_then_default() {
    let conf = repo().join("scenarios/configs/envoy/local_ratelimit.yaml");
    let out = rlsim().arg("import").arg(&conf).output().expect("runs");
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout).expect("utf-8");
    let order = [
        "commit = \"in_order\"",
        "name = \"filter\"",
        "routes = [\"/*\"]\nskip = [\"/login*\"]",
        "profile = { fill_interval = \"1s\", max_tokens = 8, tokens_per_fill = 4 }",
        "name = \"route1.generic_key.login\"",
        "routes = [\"/login*\"]",
        "profile = { fill_interval = \"1s\", max_tokens = 6, tokens_per_fill = 1 }",
        "name = \"route1\"",
        "profile = { fill_interval = \"1s\", max_tokens = 4, tokens_per_fill = 16 }",
    ];
    let mut from = 0;
    for line in order {
        let at = toml[from..]
            .find(line)
            .unwrap_or_else(|| panic!("{line} missing (in order) in:\n{toml}"));
        from += at + line.len();
    }
    assert!(!toml.contains("dry_run"), "{toml}");
}

const HEAD: &str = "http_filters:\n- name: envoy.filters.http.local_ratelimit\n  typed_config:\n    token_bucket: {max_tokens: 5, fill_interval: 1s}\n";
const ENABLED: &str = "    filter_enabled: {default_value: {numerator: 100}}\n";
const ENFORCED: &str = "    filter_enforced: {default_value: {numerator: 100}}\n";
const ROUTES: &str = "route_config:\n  virtual_hosts:\n  - name: a\n    routes:\n    - match: {prefix: \"/\"}\n      route: {cluster: app}\n";

fn envoy(extra: &str, routes: &str) -> String {
    format!("{HEAD}{ENABLED}{ENFORCED}{extra}{routes}")
}

fn imported(yaml: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "bad.yaml", yaml);
    let out = rlsim().arg("import").arg(&p).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(yaml: &str, expect: &[&str]) {
    let (code, _, err) = imported(yaml);
    assert_eq!(code, Some(2), "{yaml}");
    for e in expect {
        assert!(err.contains(e), "{e} missing in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// filter_enforced absent is 0%: a dry run; filter_enabled absent is 0%: nothing limited.
#[test]
fn envoy_local_fractions_default_to_zero_percent() {
    let (code, toml, _) = imported(&format!("{HEAD}{ENABLED}{ROUTES}"));
    assert_eq!(code, Some(0));
    assert!(toml.contains("dry_run = true"), "{toml}");
    assert!(
        toml.contains(
            "key = []\nprofile = { fill_interval = \"1s\", max_tokens = 5, tokens_per_fill = 1 }"
        ),
        "{toml}"
    );
    refused(
        &format!("{HEAD}{ENFORCED}{ROUTES}"),
        &[
            "bad.yaml:3:",
            "`http_filters[0].typed_config`",
            "nothing to import",
        ],
    );
}

#[test]
fn bad_envoy_local_configs_name_file_line_and_field() {
    refused(
        &format!("{HEAD}    filter_enabled: {{default_value: {{numerator: 50}}}}\n{ROUTES}"),
        &[
            "bad.yaml:5:",
            "`http_filters[0].typed_config.filter_enabled.default_value`",
            "50/100 of requests",
        ],
    );
    refused(
        &envoy(
            "    local_rate_limit_per_downstream_connection: true\n",
            ROUTES,
        ),
        &[
            "bad.yaml:7:",
            "`http_filters[0].typed_config.local_rate_limit_per_downstream_connection`",
            "per-connection",
        ],
    );
    refused(
        &envoy(
            "",
            &ROUTES.replace(
                "{cluster: app}",
                "{cluster: app, rate_limits: [{actions: [{remote_address: {}}]}]}",
            ),
        ),
        &["bad.yaml:12:", "remote_address", "cannot be imported"],
    );
    refused(
        &envoy("", "").replace("fill_interval: 1s", "fill_interval: 0.02s"),
        &[
            "bad.yaml:4:",
            "`http_filters[0].typed_config.token_bucket.fill_interval`",
            ">= 50ms",
        ],
    );
    refused(
        &envoy(
            "",
            &ROUTES.replace("prefix: \"/\"", "safe_regex: {regex: \"/a.*\"}"),
        ),
        &[
            "bad.yaml:11:",
            "`route_config.virtual_hosts[0].routes[0].match.safe_regex`",
            "not supported",
        ],
    );
}
