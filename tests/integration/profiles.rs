//! Profiles end to end: the `algorithms` listing, scenarios naming profiles with native
//! parameters, and the errors for bad ones.

use crate::util::{boundary_attack, by_name, rlsim, run_toml, write};

#[test]
fn algorithms_lists_every_algorithm_and_profile_with_parameters() {
    let out = rlsim().arg("algorithms").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fixed_window",
            "sliding_window_log",
            "sliding_window_counter",
            "token_bucket",
            "leaky_bucket",
            "gcra",
            "governor",
            "nginx-limit-req",
            "express-rate-limit",
            "nestjs-throttler",
            "rate-limiter-flexible",
            "python-limits-moving-window",
            "python-limits-fixed-window",
            "python-limits-sliding-window-counter",
            "go-x-time-rate",
            "envoy-local",
            "guava-bursty",
            "guava-warmup",
            "haproxy-http-req-rate",
            "article-float-token-bucket",
            "article-redis-zset-log",
            "article-redis-lua-fixed-window",
            "article-sliding-counter",
            "envoy-ratelimit",
            "calendar_window",
        ]
    );
    assert!(
        text.contains("    nodelay = bool (default: false"),
        "{text}"
    );
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    kind: String,
    description: String,
    table: String,
    parameters: Vec<Param>,
    cost: String,
    refunds: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Param {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    default: String,
    doc: String,
}

#[test]
fn algorithms_json_has_the_documented_shape() {
    let out = rlsim()
        .args(["algorithms", "--format", "json"])
        .assert()
        .success();
    let entries: Vec<Entry> = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(entries.len(), 25);
    let calendar = entries.last().unwrap();
    assert_eq!(
        calendar.table,
        "[[contender.rule]] algorithm = \"calendar_window\""
    );
    let names: Vec<&str> = calendar
        .parameters
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "limit",
            "window",
            "time_zone",
            "week_starts",
            "month_starts"
        ]
    );
    let gcra = &entries[5];
    assert_eq!(
        (gcra.name.as_str(), gcra.kind.as_str()),
        ("gcra", "algorithm")
    );
    assert_eq!(gcra.table, "[algorithm.gcra]");
    let express = entries
        .iter()
        .find(|e| e.name == "express-rate-limit")
        .unwrap();
    assert_eq!(express.kind, "profile");
    assert_eq!(express.table, "[profile.express-rate-limit]");
    assert!(
        express.cost.starts_with("counts requests: "),
        "{}",
        express.cost
    );
    assert!(gcra.cost.starts_with("weighs: "), "{}", gcra.cost);
    // Every exact algorithm gives refunds back; of the profiles, rate-limiter-flexible.
    assert!(
        entries
            .iter()
            .all(|e| e.refunds == (e.kind == "algorithm" || e.name == "rate-limiter-flexible"))
    );
    let params: Vec<(&str, &str, &str)> = express
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.ty.as_str(), p.default.as_str()))
        .collect();
    assert_eq!(
        params,
        [
            ("windowMs", "duration", "policy window"),
            ("limit", "count", "policy limit")
        ]
    );
    assert!(
        entries
            .iter()
            .all(|e| !e.description.is_empty() && e.parameters.iter().all(|p| !p.doc.is_empty()))
    );
}

#[test]
fn boundary_attack_through_every_profile() {
    // 100 requests at 59.9 s and 100 at 60.0 s, 100 per minute, burst 100 (the policy's).
    let reports = run_toml(&boundary_attack(&[
        "governor",
        "nginx-limit-req",
        "express-rate-limit",
        "nestjs-throttler",
        "rate-limiter-flexible",
    ]));
    let counts = |name: &str| {
        let r = by_name(&reports, name);
        (r.allowed, r.delayed, r.rejected)
    };
    // governor: τ = 99 × 600 ms; the second batch comes 59.5 s too early.
    assert_eq!(counts("governor"), (100, 0, 100));
    // express / rate-limiter-flexible: the window starts at the first hit (59.9 s), so the
    // second batch falls in the same window; nestjs: the 101st hit blocks the key.
    assert_eq!(counts("express-rate-limit"), (100, 0, 100));
    assert_eq!(counts("rate-limiter-flexible"), (100, 0, 100));
    assert_eq!(counts("nestjs-throttler"), (100, 0, 100));
    // nginx 100r/m burst=99 (no nodelay): the first passes, 99 wait 600 ms apart; at 60.0 s
    // the excess is 99000 − 166 + 1000 > 99000, so all 100 are refused.
    assert_eq!(counts("nginx-limit-req"), (1, 99, 100));
}

#[test]
fn native_parameters_change_the_profile() {
    let toml = boundary_attack(&["nginx-limit-req", "express-rate-limit"])
        + "[profile.nginx-limit-req]\nrate = \"100r/m\"\nburst = 9\nnodelay = true\n\
           [profile.express-rate-limit]\nwindowMs = 100\nlimit = 100\n";
    let reports = run_toml(&toml);
    let r = by_name(&reports, "nginx-limit-req");
    // burst 9 + 1 at once; 100 ms later 166 milli-requests have drained: still over.
    assert_eq!((r.allowed, r.delayed, r.rejected), (10, 0, 190));
    // windowMs 100: the 60.0 s batch lands exactly on the reset time and starts a new window.
    let r = by_name(&reports, "express-rate-limit");
    assert_eq!((r.allowed, r.rejected), (200, 0));
}

/// Runs `rlsim run` on `toml` and returns stderr, requiring exit code 2.
fn fails(toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", toml);
    let out = rlsim().arg("run").arg(&path).assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

const BASE: &str = "name = \"x\"\nduration = \"1m\"\n\
                    algorithms = [\"gcra\", \"nginx-limit-req\"]\n\
                    [policy]\nlimit = 10\nwindow = \"1s\"\n\
                    [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n";

#[test]
fn bad_profile_parameters_name_file_line_and_field() {
    let e = fails(&format!(
        "{BASE}[profile.nginx-limit-req]\nburst = 5\nrate = \"0r/s\"\n"
    ));
    assert!(
        e.contains("bad.toml:13:8: field `profile.nginx-limit-req.rate`: rate `0r/s`: must be a whole number of requests per second or minute (`10r/s`, `600r/m`) from 1 to 4294967295"),
        "{e}"
    );
    let e = fails(&format!("{BASE}[profile.nginx-limit-req]\nbrust = 5\n"));
    assert!(
        e.contains(
            "bad.toml:12:9: field `profile.nginx-limit-req.brust`: `nginx-limit-req` has no \
             parameter `brust`: did you mean `burst`?"
        ),
        "{e}"
    );
    let e = fails(&format!(
        "{BASE}[profile.nginx-limit-req]\nnodelay = \"yes\"\n"
    ));
    assert!(
        e.contains("field `profile.nginx-limit-req.nodelay`: must be true or false"),
        "{e}"
    );
    let e = fails(&BASE.replace("\"nginx-limit-req\"", "\"ngnix-limit-req\""));
    assert!(
        e.contains(
            "bad.toml:3:23: field `algorithms[1]`: unknown algorithm or profile \
             `ngnix-limit-req`: did you mean `nginx-limit-req`?"
        ),
        "{e}"
    );
    let e = fails(&format!("{BASE}[profile.express-rate-limit]\nlimit = 5\n"));
    assert!(
        e.contains(
            "field `profile.express-rate-limit`: `express-rate-limit` is not in `algorithms`"
        ),
        "{e}"
    );
    let e = fails(&format!("{BASE}[algorithm.nginx-limit-req]\nlimit = 5\n"));
    assert!(
        e.contains("give its own parameters in `[profile.nginx-limit-req]`"),
        "{e}"
    );
    // A policy window nginx can express but express-rate-limit cannot (sub-millisecond).
    let e = fails(
        &BASE
            .replace("\"nginx-limit-req\"", "\"express-rate-limit\"")
            .replace("window = \"1s\"", "window = \"1500us\""),
    );
    assert!(
        e.contains("field `policy`: profile `express-rate-limit`: the policy window 1.5ms is not a whole number of milliseconds; set `windowMs`"),
        "{e}"
    );
}

/// The four article profiles under their former names (`seed-...`) and under their names: the
/// same reports (named by the new names), and an `expect` line may use either.
#[test]
fn former_profile_names_are_aliases_with_identical_results() {
    let pairs = [
        ("seed-000-token-bucket", "article-float-token-bucket"),
        ("seed-000-redis-log", "article-redis-zset-log"),
        ("seed-003-fixed-window", "article-redis-lua-fixed-window"),
        ("seed-003-sliding-counter", "article-sliding-counter"),
    ];
    let scenario = |names: [&str; 4]| {
        boundary_attack(&names)
            + &format!("[profile.{}]\nwindowMs = 30000\n", names[1])
            + &format!("[profile.{}]\nlimit = 50\n", names[2])
    };
    let old = scenario(pairs.map(|p| p.0));
    let new = scenario(pairs.map(|p| p.1));
    let (old_reports, new_reports) = (run_toml(&old), run_toml(&new));
    assert_eq!(
        serde_json::to_value(&old_reports).unwrap(),
        serde_json::to_value(&new_reports).unwrap()
    );
    let names: Vec<&str> = old_reports.iter().map(|r| r.algorithm.as_str()).collect();
    assert_eq!(names, pairs.map(|p| p.1));
    // A profile's own table reached it under its former name: 50 per window, not the policy's 100.
    let lua = by_name(&old_reports, "article-redis-lua-fixed-window");
    assert_eq!(lua.admitted, 50);

    // End to end, with expectations naming the profiles the old way and the new way.
    let admitted = by_name(&new_reports, "article-float-token-bucket").admitted;
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "old.toml",
        &old.replacen(
            "duration = \"3m\"\n",
            &format!(
                "duration = \"3m\"\nexpect = [\"seed-000-token-bucket admitted == {admitted}\", \
                 \"article-float-token-bucket admitted == {admitted}\"]\n"
            ),
            1,
        ),
    );
    let out = rlsim()
        .args(["run", "--strict"])
        .arg(&path)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(stdout.contains("article-float-token-bucket"), "{stdout}");
    assert!(!stdout.contains("seed-000"), "{stdout}");
}
