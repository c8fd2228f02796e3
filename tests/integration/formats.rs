//! Replaying each trace format, its options, malformed and out-of-order records, and the
//! `rlsim traffic` round trip.

use crate::util::{rlsim, write};
use rlsim::Scenario;
use rlsim::traffic::export::for_each_request;
use std::path::Path;

/// A replay scenario for `file` with extra `[[traffic]]` lines, keyed on `key`.
fn scenario(dir: &Path, file: &str, extra: &str, key: &str) -> Result<Scenario, String> {
    let path = write(
        dir,
        "s.toml",
        &format!(
            "name = \"r\"\nduration = \"1d\"\n[policy]\nlimit = 5\nwindow = \"1m\"\nkey = \"{key}\"\n[[traffic]]\nname = \"log\"\nkind = \"replay\"\npath = \"{file}\"\n{extra}\n"
        ),
    );
    Scenario::load(&path).map_err(|e| e.to_string())
}

/// Every replayed request as (virtual time, ip, user, api_key, endpoint).
fn requests(s: &Scenario) -> Result<Vec<(u64, [String; 4])>, String> {
    let mut out = Vec::new();
    for_each_request(&s.traffic, s.seed, |r| {
        out.push((r.time, r.fields.clone().map(|f| f.to_string())));
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

fn times(s: &Scenario) -> Vec<u64> {
    requests(s).unwrap().into_iter().map(|r| r.0).collect()
}

const SEC: u64 = 1_000_000_000;

#[test]
fn combined_log_spreads_or_keeps_each_second() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "access.log",
        "203.0.113.1 - - [29/Nov/2026:00:00:01 +0000] \"GET /a?x=1 HTTP/1.1\" 200 5 \"-\" \"ua\"\n\
         203.0.113.2 - bob [29/Nov/2026:00:00:01 +0000] \"POST /b HTTP/1.1\" 201 5 \"-\" \"ua\"\n\
         203.0.113.1 - - [29/Nov/2026:01:00:01 +0100] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\n\
         203.0.113.3 - - [29/Nov/2026:00:00:02 +0000] \"GET / HTTP/1.0\" 304 0\n",
    );
    let s = scenario(dir.path(), "access.log", "", "ip").unwrap();
    let r = requests(&s).unwrap();
    // Three requests in second 1 (the third written in +01:00): at 0, 1/3 and 2/3 of it.
    assert_eq!(
        r.iter().map(|x| x.0).collect::<Vec<_>>(),
        [SEC, SEC + SEC / 3, SEC + 2 * SEC / 3, 2 * SEC]
    );
    assert_eq!(r[1].1, ["203.0.113.2", "bob", "", "/b"].map(String::from));
    assert_eq!(
        r[0].1[3], "/a",
        "the query string is not part of the endpoint"
    );
    let s = scenario(dir.path(), "access.log", "same_second = \"together\"", "ip").unwrap();
    assert_eq!(times(&s), [SEC, SEC, SEC, 2 * SEC]);
    // The format records no API key.
    let e = scenario(dir.path(), "access.log", "", "api_key").unwrap_err();
    assert!(
        e.contains("access.log:1: the policy keys on `api_key`"),
        "{e}"
    );
}

#[test]
fn malformed_lines_name_file_line_and_field_or_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.jsonl",
        "{\"time\": 1000, \"ip\": \"a\", \"method\": \"GET\", \"status\": 200}\n\
         \n\
         {\"time\": \"1970-01-01T00:00:00.000002Z\", \"ip\": \"b\"}\n\
         {\"time\": \"yesterday\", \"ip\": \"c\"}\n\
         not json\n\
         {\"time\": 3000, \"ip\": \"d\"}\n",
    );
    // Validation reads only the header (none here), so the error comes with the replay.
    let s = scenario(dir.path(), "t.jsonl", "", "ip").unwrap();
    let e = requests(&s).unwrap_err();
    assert!(e.contains("t.jsonl:4: field `time`: `yesterday`"), "{e}");
    let s = s.with_skip_bad_lines();
    let r = requests(&s).unwrap();
    assert_eq!(r.len(), 3);
    let Some(rlsim::traffic::Arrivals::Replay { .. }) = s.traffic.first().map(|t| &t.arrivals)
    else {
        panic!("a replay source");
    };
    // The source reports what it skipped when it finishes.
    let pass = for_each_request(&s.traffic, s.seed, |_| Ok(())).unwrap();
    assert_eq!(pass.skipped_lines, [2]);
    // The binary reports the count on stderr.
    let path = dir.path().join("s.toml");
    rlsim()
        .args(["run", "--skip-bad-lines"])
        .arg(&path)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "source `log`: skipped 2 malformed lines of",
        ));
    rlsim()
        .arg("run")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("t.jsonl:4: field `time`"));
}

#[test]
fn out_of_order_records_fail_or_are_sorted_within_the_window() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.csv",
        "time,ip\n100,a\n300,b\n200,c\n400,d\n150,e\n",
    );
    let s = scenario(dir.path(), "t.csv", "", "ip").unwrap();
    let e = requests(&s).unwrap_err();
    assert!(
        e.contains("t.csv:4: field `time`: earlier than the record at line 3"),
        "{e}"
    );
    // 200 is 100 ns late: a 100 ns window sorts it; 150 is 250 ns late and still fails.
    let s = scenario(dir.path(), "t.csv", "sort_window = \"100ns\"", "ip").unwrap();
    let e = requests(&s).unwrap_err();
    assert!(e.contains("t.csv:6: field `time`"), "{e}");
    let s = scenario(dir.path(), "t.csv", "sort_window = \"1us\"", "ip").unwrap();
    assert_eq!(times(&s), [100, 150, 200, 300, 400]);
}

#[test]
fn speed_offset_loop_gap_and_sample() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,ip\n");
    for (t, ip) in [(0, "a"), (10, "b"), (20, "a"), (1000, "b")] {
        csv.push_str(&format!("{},{ip}\n", t * SEC));
    }
    write(dir.path(), "t.csv", &csv);
    let s = scenario(dir.path(), "t.csv", "speed = 2\noffset = \"1s\"", "ip").unwrap();
    assert_eq!(times(&s), [SEC, 6 * SEC, 11 * SEC, 501 * SEC]);
    let s = scenario(dir.path(), "t.csv", "max_gap = \"30s\"", "ip").unwrap();
    assert_eq!(times(&s), [0, 10 * SEC, 20 * SEC, 50 * SEC]);
    // Each loop starts at the previous one's last record.
    let s = scenario(dir.path(), "t.csv", "loop = 2\nmax_gap = \"30s\"", "ip").unwrap();
    assert_eq!(times(&s), [0, 10, 20, 50, 50, 60, 70, 100].map(|t| t * SEC));
    // Sampling keeps or drops whole keys, the same ones every time.
    let kept: Vec<Vec<u64>> = (0..2)
        .map(|_| {
            let s = scenario(dir.path(), "t.csv", "sample = 0.5", "ip").unwrap();
            times(&s)
        })
        .collect();
    assert_eq!(kept[0], kept[1]);
    assert!(
        [
            vec![],
            vec![0, 20 * SEC],
            vec![10 * SEC, 1000 * SEC],
            times(&scenario(dir.path(), "t.csv", "", "ip").unwrap())
        ]
        .contains(&kept[0])
    );
}

#[test]
fn har_entries_are_streamed_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let entry = |t: &str, url: &str| {
        format!(
            "    {{\n      \"startedDateTime\": \"{t}\",\n      \"time\": 12.5,\n      \"request\": {{\"method\": \"GET\", \"url\": \"{url}\", \"headers\": [{{\"name\": \"X-API-Key\", \"value\": \"k1\"}}]}},\n      \"response\": {{\"status\": 200}}\n    }}"
        )
    };
    let doc = format!(
        "{{\n  \"log\": {{\n    \"version\": \"1.2\",\n    \"creator\": {{\"name\": \"test\", \"version\": \"1\"}},\n    \"entries\": [\n{},\n{},\n{}\n    ]\n  }}\n}}\n",
        entry(
            "2026-11-29T10:00:00.000+00:00",
            "https://api.example.com/v1/items?id=3"
        ),
        entry(
            "2026-11-29T10:00:00.250+00:00",
            "https://api.example.com/v1/cart"
        ),
        entry("not a date", "https://api.example.com/"),
    );
    write(dir.path(), "t.har", &doc);
    let s = scenario(dir.path(), "t.har", "", "api_key").unwrap();
    let e = requests(&s).unwrap_err();
    // The third entry spans lines 18 to 23.
    assert!(e.contains("t.har:23: field `startedDateTime`"), "{e}");
    let r = requests(&s.with_skip_bad_lines()).unwrap();
    // Virtual time 0 is the first record (10:00:00) rounded down to the policy window.
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].0, r[1].0), (0, SEC / 4));
    assert_eq!(r[0].1, ["", "", "k1", "/v1/items"].map(String::from));
    write(
        dir.path(),
        "bad.har",
        "{\"log\": {\"entries\": [\n{\"startedDateTime\": 3}]}}",
    );
    let s = scenario(dir.path(), "bad.har", "", "endpoint").unwrap();
    let e = requests(&s).unwrap_err();
    assert!(
        e.ends_with(
            "bad.har:2: field `log.entries[0].startedDateTime`: not a HAR 1.2 document: found the \
             number 3, expected a string (column 22)"
        ),
        "{e}"
    );
}

#[test]
fn generated_traffic_round_trips_through_the_csv_trace() {
    let dir = tempfile::tempdir().unwrap();
    let gen_path = write(
        dir.path(),
        "gen.toml",
        r#"
        name = "mix"
        seed = 4
        duration = "5m"
        [policy]
        limit = 10
        window = "1m"
        [[traffic]]
        name = "users"
        kind = "poisson"
        users = 30
        ips = 5
        rate = "6/min"
        arrival = "sine"
        amplitude = "5/min"
        period = "2m"
        endpoints = [{ path = "/a", weight = 2 }, { path = "/b" }]
        [[traffic]]
        name = "stuffing"
        kind = "credential_stuffing"
        ips = 200
        rate = "400/min"
        [[traffic]]
        name = "edge"
        kind = "boundary"
        count = 20
        ip = "198.51.100.1"
        "#,
    );
    let trace = dir.path().join("trace.csv");
    rlsim()
        .arg("traffic")
        .arg(&gen_path)
        .arg("--out")
        .arg(&trace)
        .assert()
        .success()
        .stderr(predicates::str::contains("requests written to"));
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("time,ip,user,api_key,endpoint,source,role,method\n"));
    assert!(text.contains(",stuffing,abusive,GET\n"));
    let generated = Scenario::load(&gen_path).unwrap();
    let original = requests(&generated).unwrap();
    let replay = scenario(dir.path(), "trace.csv", "", "ip").unwrap();
    let replayed = requests(&replay).unwrap();
    assert!(original.len() > 2000);
    assert_eq!(original, replayed);
}

/// `rlsim run --format json` of `path`: each row's name, admitted requests and `field`.
fn figures(
    path: &std::path::Path,
    field: &str,
) -> Vec<(serde_json::Value, serde_json::Value, serde_json::Value)> {
    crate::util::summary(path)["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["algorithm"].clone(),
                a["admitted"].clone(),
                a[field].clone(),
            )
        })
        .collect()
}

/// Costs survive `rlsim traffic`: the trace carries a `cost` column, a scenario replaying it
/// decides exactly as the generating one, and exporting the replay gives the same file. A
/// limiter that cannot weigh is refused at the first costly record, by line and field.
#[test]
fn request_costs_round_trip_through_the_csv_trace() {
    let dir = tempfile::tempdir().unwrap();
    let gen_path = write(
        dir.path(),
        "gen.toml",
        r#"
        name = "graphql"
        seed = 9
        duration = "2m"
        algorithms = ["fixed_window", "token_bucket", "gcra"]
        [policy]
        limit = 100
        window = "1m"
        key = "user"
        [[traffic]]
        name = "queries"
        kind = "poisson"
        users = 5
        rate = "60/min"
        cost_dist = "lognormal"
        cost = 8
        cost_max = 60
        methods = [{ method = "GET", weight = 3 }, { method = "POST", cost = 25 }]
        "#,
    );
    let trace = dir.path().join("trace.csv");
    rlsim()
        .args(["traffic", "--quiet", "--out"])
        .arg(&trace)
        .arg(&gen_path)
        .assert()
        .success();
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("time,ip,user,api_key,endpoint,source,role,method,cost\n"));
    assert!(text.lines().skip(1).all(|l| {
        let (method, cost) = l
            .rsplit_once(',')
            .map(|(a, c)| (a.rsplit(',').next().unwrap(), c))
            .unwrap();
        let cost: u32 = cost.parse().unwrap();
        (1..=60).contains(&cost) && (method != "POST" || cost == 25)
    }));
    let replay_path = write(
        dir.path(),
        "replay.toml",
        &std::fs::read_to_string(&gen_path).unwrap().replace(
            r#"kind = "poisson"
        users = 5
        rate = "60/min"
        cost_dist = "lognormal"
        cost = 8
        cost_max = 60
        methods = [{ method = "GET", weight = 3 }, { method = "POST", cost = 25 }]"#,
            r#"kind = "replay"
        path = "trace.csv""#,
        ),
    );
    let again = dir.path().join("again.csv");
    rlsim()
        .args(["traffic", "--quiet", "--out"])
        .arg(&again)
        .arg(&replay_path)
        .assert()
        .success();
    // The replay's export adds what the trace recorded of production (nothing, here).
    let again = std::fs::read_to_string(&again).unwrap();
    let again = again
        .replace(",status,decision,x_forwarded_for", "")
        .replace(",,,,", ",");
    assert_eq!(again, text);
    let summary = |path: &std::path::Path| figures(path, "rejected");
    let generated = summary(&gen_path);
    assert_eq!(generated, summary(&replay_path));
    // Costs bite: the fixed window refuses some of 600 requests averaging about 10 points.
    assert!(generated[0].2.as_u64().unwrap() > 0, "{generated:?}");
    let unweighed = write(
        dir.path(),
        "nginx.toml",
        &std::fs::read_to_string(&replay_path).unwrap().replace(
            r#"["fixed_window", "token_bucket", "gcra"]"#,
            r#"["nginx-limit-req"]"#,
        ),
    );
    let out = rlsim()
        .args(["run", "--quiet"])
        .arg(&unweighed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("trace.csv:") && err.contains("field `cost`"),
        "{err}"
    );
    assert!(
        err.contains("`nginx-limit-req` cannot weigh a request"),
        "{err}"
    );
}

/// Actual costs survive `rlsim traffic`: the trace carries `actual_cost` beside `cost`, and a
/// refunding contender replaying it decides exactly as on the generating scenario. A record
/// that settled more than it asked for is refused by line and field.
#[test]
fn actual_costs_round_trip_through_the_csv_trace() {
    let dir = tempfile::tempdir().unwrap();
    let contender = r#"
        [[contender]]
        name = "shopify"
        [[contender.rule]]
        name = "points"
        algorithm = "token_bucket"
        limit = 60
        window = "1m"
        burst = 100
        refunds = true
        "#;
    // The same scenario, its one source generated or replayed from the trace.
    let with_source = |source: &str| {
        format!(
            r#"
        name = "refunds"
        seed = 4
        duration = "2m"
        algorithms = ["token_bucket"]
        [policy]
        limit = 60
        window = "1m"
        burst = 100
        key = "user"
        [[traffic]]
        name = "queries"
        response_time = "400ms"
        {source}
        {contender}"#
        )
    };
    let gen_path = write(
        dir.path(),
        "gen.toml",
        &with_source(
            r#"kind = "poisson"
        users = 3
        rate = "30/min"
        cost_dist = "uniform"
        cost_max = 40
        actual_share = 0.9
        actual_share_min = 0.1"#,
        ),
    );
    let trace = dir.path().join("trace.csv");
    rlsim()
        .args(["traffic", "--quiet", "--out"])
        .arg(&trace)
        .arg(&gen_path)
        .assert()
        .success();
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.starts_with("time,ip,user,api_key,endpoint,source,role,method,cost,actual_cost\n")
    );
    let mut refunded = 0;
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let (cost, actual): (u32, u32) = (cols[8].parse().unwrap(), cols[9].parse().unwrap());
        // round(cost · share), share in [0.1, 0.9].
        let (lo, hi) = ((cost as f64 * 0.1).round(), (cost as f64 * 0.9).round());
        assert!((lo..=hi).contains(&(actual as f64)), "{line}");
        refunded += cost - actual;
    }
    let replay_path = write(
        dir.path(),
        "replay.toml",
        &with_source("kind = \"replay\"\n        path = \"trace.csv\""),
    );
    let summary = |path: &std::path::Path| figures(path, "cost");
    let generated = summary(&gen_path);
    assert_eq!(generated, summary(&replay_path));
    // The refunding bucket admits more than the one that keeps what it charged.
    let admitted = |i: usize| generated[i].1.as_u64().unwrap();
    assert!(admitted(1) > admitted(0), "{generated:?}");
    let settled = generated[0].2["settled"].as_u64().unwrap();
    assert!(settled < generated[0].2["admitted"].as_u64().unwrap() && refunded > 0);
    // A record that settled more than its cost.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let cols: Vec<&str> = lines[3].split(',').collect();
    let cost: u32 = cols[8].parse().unwrap();
    lines[3] = format!("{},{}", cols[..9].join(","), cost + 1);
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let out = rlsim()
        .args(["run", "--quiet"])
        .arg(&replay_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("trace.csv:4") && err.contains("field `actual_cost`"),
        "{err}"
    );
}

/// A JSONL trace whose first record has no `cost` (the written trace's columns follow it) but
/// a later one weighs more: `rlsim traffic` refuses that record by line and field instead of
/// dropping its cost; a later `cost` of 1 loses nothing and passes.
#[test]
fn a_later_records_cost_the_written_trace_has_no_column_for_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = |records: &str| {
        write(dir.path(), "trace.jsonl", records);
        write(
            dir.path(),
            "replay.toml",
            r#"
            name = "late cost"
            duration = "1m"
            algorithms = ["token_bucket"]
            [policy]
            limit = 10
            window = "1m"
            [[traffic]]
            name = "trace"
            kind = "replay"
            path = "trace.jsonl"
            "#,
        )
    };
    let first = r#"{"time": 1000000000, "ip": "198.51.100.1"}"#;
    let path = scenario(&format!(
        "{first}\n{}\n",
        r#"{"time": 2000000000, "ip": "198.51.100.1", "cost": 1}"#
    ));
    let out = dir.path().join("out.csv");
    let run = |path: &std::path::Path| {
        rlsim()
            .args(["traffic", "--quiet", "--out"])
            .arg(&out)
            .arg(path)
            .output()
            .unwrap()
    };
    assert!(run(&path).status.success());
    let path = scenario(&format!(
        "{first}\n{}\n",
        r#"{"time": 2000000000, "ip": "198.51.100.1", "cost": 7}"#
    ));
    let refused = run(&path);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("trace.jsonl:2") && err.contains("field `cost`"),
        "{err}"
    );
    assert!(err.contains("first record has no `cost`"), "{err}");
}
