//! The stated intent, judged per real client (docs/metrics.md "Harm per real client"): hand
//! counts, tiers, validation.

use crate::util::{by_name, rlsim, run_scenario, run_toml, write};
use rlsim::Scenario;

/// Ten users behind one address, each sending 2 requests in the minute: user i at 2i s and
/// 2i + 1 s.
fn ten_users_one_address() -> String {
    let mut trace = String::from("time,ip,user\n");
    for i in 0..10u64 {
        for k in 0..2 {
            let t = (2 * i + k) * 1_000_000_000;
            trace.push_str(&format!("{t},203.0.113.9,u{i}\n"));
        }
    }
    trace
}

/// The scenario of the NAT hand count: policy key `policy_key`, the intent `intent`, a per-IP
/// and a per-user contender (sliding logs of 5/min).
/// The directory holds the trace, read when the scenario runs.
fn nat_scenario(policy_key: &str, intent: &str) -> (tempfile::TempDir, Scenario) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", &ten_users_one_address());
    let toml = format!(
        r#"
        name = "ten behind one"
        duration = "2m"
        [policy]
        limit = 5
        window = "1m"
        key = "{policy_key}"
        {intent}
        [[traffic]]
        name = "phones"
        role = "legit"
        kind = "replay"
        path = "trace.csv"
        [[contender]]
        name = "per_ip"
        [[contender.rule]]
        name = "ip"
        algorithm = "sliding_window_log"
        limit = 5
        window = "1m"
        key = "ip"
        [[contender]]
        name = "per_user"
        [[contender.rule]]
        name = "user"
        algorithm = "sliding_window_log"
        limit = 5
        window = "1m"
        key = "user"
        "#
    );
    let path = write(dir.path(), "s.toml", &toml);
    let scenario = Scenario::load(&path).unwrap();
    (dir, scenario)
}

#[test]
fn ten_users_behind_one_address_hand_count() {
    // Per IP, 5 per minute: the address's first 5 requests (u0, u0, u1, u1, u2 at 0..4 s) are
    // admitted, the other 15 (u2 at 5 s, u3..u9 twice) refused. Each user is entitled to 5 and
    // sends 2: admitting any one refused request keeps its user at 2 or fewer in every
    // window, so all 15 are needless; the address was shared from 2 s on (u1), so all 15 are
    // collateral, of 8 users (u2..u9), who are the clients hurt. The exact per-user limiter
    // admits all 20: 15 wrongly rejected. Whatever the policy's key says (the bug: with
    // key = "user" collateral read 0).
    for policy_key in ["ip", "user"] {
        let (_dir, s) = nat_scenario(policy_key, "[intent]\nlimit = 5\nwindow = \"1m\"");
        let r = run_scenario(&s);
        let ip = by_name(&r, "per_ip");
        assert_eq!((ip.admitted, ip.rejected), (5, 15), "{policy_key}");
        assert_eq!(ip.needless_rejections, 15, "{policy_key}");
        assert_eq!(ip.collateral_rejections, 15, "{policy_key}");
        assert_eq!(ip.collateral_clients, 8, "{policy_key}");
        assert_eq!(ip.clients_hurt, 8, "{policy_key}");
        assert_eq!(
            (ip.wrongly_allowed, ip.wrongly_rejected),
            (0, 15),
            "{policy_key}"
        );
        assert_eq!(ip.policy_violations, 0, "{policy_key}");
        let phones = &ip.sources[0];
        assert_eq!(
            (
                phones.needless_rejections,
                phones.collateral_rejections,
                phones.clients_hurt
            ),
            (15, 15, 8)
        );
        // Per user: all 20 admitted, 2 per user per minute: nothing over, nothing refused.
        let user = by_name(&r, "per_user");
        assert_eq!(
            (user.admitted, user.policy_violations),
            (20, 0),
            "{policy_key}"
        );
        assert_eq!(
            (user.needless_rejections, user.collateral_rejections),
            (0, 0)
        );
        assert_eq!((user.burst_factor, user.max_window_admitted), (0.4, 2));
    }
}

#[test]
fn an_intent_per_key_judges_the_policy_keys_as_before() {
    // per = "ip": the address is the unit. Per IP, each refusal finds its window full (5):
    // none needless. The per-user contender lets 20 through one address: admissions 6 to 20
    // each see more than 5 in their minute, 15 violations, 20/5 = 4 the burst factor.
    let (_dir, s) = nat_scenario("ip", "[intent]\nper = \"ip\"");
    let r = run_scenario(&s);
    let ip = by_name(&r, "per_ip");
    assert_eq!((ip.needless_rejections, ip.collateral_rejections), (0, 0));
    let user = by_name(&r, "per_user");
    assert_eq!((user.policy_violations, user.max_window_admitted), (15, 20));
    assert_eq!(user.burst_factor, 4.0);
}

#[test]
fn a_paid_user_at_its_own_tiers_rate_is_no_violation() {
    // Both users send 100/min (every 600 ms) for 3 minutes and a sliding log of 100/min per
    // user admits all 300 of each (at 60 s the log holds 0.6..59.4 s: 99). The pro user is
    // entitled to 100/min: every window holds at most 100, no violation, burst factor 1. The
    // free user is entitled to 10: its first 10 admissions are within, the other 290 each see
    // more than 10 in their minute, so 290 violations, all its own, and 100/10 = 10.
    let r = run_toml(
        r#"
        name = "tiers by hand"
        duration = "3m"
        [policy]
        limit = 10
        window = "1m"
        key = "user"
        [intent]
        limit = 10
        window = "1m"
        per_tier = [{ tiers = ["pro"], limit = 100 }]
        [[traffic]]
        name = "pro"
        role = "legit"
        kind = "constant"
        user = "paying"
        tier = "pro"
        rate = "100/min"
        [[traffic]]
        name = "free"
        role = "legit"
        kind = "constant"
        user = "freeloader"
        tier = "free"
        rate = "100/min"
        [[contender]]
        name = "generous"
        [[contender.rule]]
        name = "all"
        algorithm = "sliding_window_log"
        limit = 100
        window = "1m"
        key = "user"
        "#,
    );
    let g = by_name(&r, "generous");
    assert_eq!((g.offered, g.admitted), (600, 600));
    let (pro, free) = (&g.sources[0], &g.sources[1]);
    assert_eq!(pro.policy_violations, 0);
    assert_eq!(free.policy_violations, 290);
    assert_eq!(g.policy_violations, 290);
    assert_eq!((g.burst_factor, g.max_window_admitted), (10.0, 100));
    assert_eq!(g.worst_window_key, "freeloader");
}

#[test]
fn summary_names_the_intent() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        "name = \"x\"\nduration = \"1m\"\nalgorithms = [\"gcra\"]\n\
         [policy]\nlimit = 10\nwindow = \"1m\"\nkey = \"user\"\n\
         [intent]\nlimit = 10\nwindow = \"1m\"\nper_tier = [{ tiers = [\"pro\", \"team\"], limit = 1000 }]\n\
         [[traffic]]\nname = \"a\"\nkind = \"poisson\"\nusers = 2\nrate = \"1/s\"\n",
    );
    let out = rlsim()
        .args(["run", "--format", "json", "--quiet"])
        .arg(&path)
        .args(["--set", "intent.limit=20"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let intent = &v["intent"];
    assert_eq!(intent["limit"], 20, "--set intent.limit applies");
    assert_eq!(intent["window_ns"], 60_000_000_000u64);
    assert_eq!(intent["per"], "client");
    assert_eq!(intent["per_tier"][0]["tiers"][1], "team");
    assert_eq!(intent["text"], "20 per 1m per client; pro+team 1000 per 1m");
}

#[test]
fn a_bad_intent_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    for (intent, line, field, message) in [
        (
            "per = \"api_key\"",
            7,
            "intent.per",
            "must be \"client\" or the policy's key",
        ),
        (
            "limit = 0",
            7,
            "intent.limit",
            "0 is too small: must be a whole number of requests from 1 to 4294967295",
        ),
        (
            "per_tier = [{ tiers = [\"pro\"], limit = 5 }, { tiers = [\"pro\"], limit = 6 }]",
            7,
            "intent.per_tier[1].tiers[0]",
            "already in an earlier per_tier entry",
        ),
        (
            "per = \"ip\"\nper_tier = [{ tiers = [\"pro\"], limit = 5 }]",
            8,
            "intent.per_tier",
            "needs `per = \"client\"`",
        ),
        (
            "per_route = [{ routes = [\"/a*b\"], limit = 2 }]",
            7,
            "intent.per_route[0].routes[0]",
            "is not a route pattern",
        ),
        (
            "per_route = [{ routes = [], limit = 2 }]",
            7,
            "intent.per_route[0].routes",
            "names no route",
        ),
        (
            "per_route = [{ routes = [\"/login\"], limit = 0 }]",
            7,
            "intent.per_route[0].limit",
            "0 is too small: must be a whole number of requests from 1 to 4294967295",
        ),
        (
            "per = \"ip\"\nper_route = [{ routes = [\"/login\"], limit = 5 }]",
            8,
            "intent.per_route",
            "needs `per = \"client\"`",
        ),
        (
            "per_route = [{ routes = [\"/login\"], limit = 5 }]\n[[traffic]]\nname = \"m\"\n\
             kind = \"poisson\"\nrate = \"1/s\"\n\
             endpoints = [{ path = \"/login\", weight = 1 }, { path = \"/items\", weight = 1 }]",
            7,
            "intent.per_route",
            "source `m` mixes endpoints of different entries (`/login` and `/items`)",
        ),
    ] {
        let path = write(
            dir.path(),
            "bad.toml",
            &format!(
                "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1m\"\n\
                 [intent]\n{intent}\n[[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"1/s\"\n"
            ),
        );
        let out = rlsim().arg("check").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{intent}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("bad.toml:{line}:")),
            "{intent}: {err}"
        );
        assert!(
            err.contains(field) && err.contains(message),
            "{intent}: {err}"
        );
    }
}

#[test]
fn the_decision_log_names_the_client_and_the_source() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", &ten_users_one_address());
    let path = write(
        dir.path(),
        "s.toml",
        "name = \"x\"\nduration = \"1m\"\nalgorithms = [\"sliding_window_log\"]\n\
         [policy]\nlimit = 5\nwindow = \"1m\"\nkey = \"ip\"\n\
         [[traffic]]\nname = \"phones\"\nkind = \"replay\"\npath = \"trace.csv\"\n",
    );
    let log = dir.path().join("d.csv");
    rlsim()
        .arg("run")
        .arg(&path)
        .arg("--quiet")
        .arg("--decisions")
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().ends_with(",warning,client,source"));
    assert!(lines.next().unwrap().ends_with(",u0,phones"));
    assert_eq!(lines.nth(4).unwrap().split(',').nth(10), Some("u2"));
}

/// A budget of its own per (client, route): one user sends 3 requests to `/login` and 10 to
/// `/items` in one minute, and a limiter of 1000/min admits all 13. `/login`'s budget of 2 holds
/// 3 in its minute: exactly 1 violation, of the login source; the 10 others are within the
/// base's 10. Without `per_route`, 13 in one minute against 10: 3 violations.
#[test]
fn a_route_of_its_own_budget_hand_count() {
    let scenario = |intent: &str| {
        format!(
            r#"
            name = "per route by hand"
            duration = "1m"
            algorithms = ["sliding_window_log"]
            [policy]
            limit = 1000
            window = "1m"
            key = "user"
            [intent]
            limit = 10
            window = "1m"
            {intent}
            [[traffic]]
            name = "login"
            role = "legit"
            kind = "constant"
            user = "alice"
            endpoint = "/login"
            rate = "3/min"
            [[traffic]]
            name = "browse"
            role = "legit"
            kind = "constant"
            user = "alice"
            endpoint = "/items"
            rate = "10/min"
            "#
        )
    };
    let r = run_toml(&scenario(
        "per_route = [{ routes = [\"/login\"], limit = 2 }]",
    ));
    let a = by_name(&r, "sliding_window_log");
    assert_eq!((a.offered, a.admitted), (13, 13));
    assert_eq!(a.policy_violations, 1);
    assert_eq!(
        (
            a.sources[0].policy_violations,
            a.sources[1].policy_violations
        ),
        (1, 0)
    );
    assert_eq!((a.max_window_admitted, a.burst_factor), (3, 1.5));
    assert_eq!(a.worst_window_key, "alice on /login");
    let plain = run_toml(&scenario(""));
    let p = by_name(&plain, "sliding_window_log");
    assert_eq!((p.admitted, p.policy_violations), (13, 3));
}
