//! A replayed record's `X-Forwarded-For` and identity functions, end to end: three clients
//! behind one trusted proxy, each naming itself in the header, against the short form, a
//! contender's rule and an imported nginx.conf, each keyed by the address read past the proxy.

use crate::util::{row, summary, write};

/// Three clients (203.0.113.1, 203.0.113.2, 198.51.100.3) behind the proxy 10.0.0.1, ten
/// requests each, taking turns one every 10 ms from 1 s on (so each client's are 30 ms apart);
/// with `header`, each names itself in `X-Forwarded-For` (the third behind a second proxy,
/// 10.0.0.9, as the first one appends it).
fn trace(header: bool) -> String {
    trace_of(30, header)
}

/// `requests` requests in turn from the three clients, as [`trace`].
fn trace_of(requests: u64, header: bool) -> String {
    let mut csv = String::from(if header {
        "time,ip,x_forwarded_for\n"
    } else {
        "time,ip\n"
    });
    let clients = ["203.0.113.1", "203.0.113.2", "198.51.100.3, 10.0.0.9"];
    for k in 0..requests {
        let t = 1_000_000_000 + k * 10_000_000;
        match header {
            true => csv.push_str(&format!("{t},10.0.0.1,\"{}\"\n", clients[k as usize % 3])),
            false => csv.push_str(&format!("{t},10.0.0.1\n")),
        }
    }
    csv
}

/// nginx behind the proxies: the client is read from X-Forwarded-For past 10.0.0.0/8
/// (`real_ip_recursive` off: the rightmost entry), 1 r/s with a burst of 3 served at once.
const NGINX: &str = "events {}
http {
    set_real_ip_from 10.0.0.0/8;
    real_ip_header X-Forwarded-For;
    limit_req_zone $binary_remote_addr zone=perip:1m rate=1r/s;
    server {
        listen 8080;
        location / {
            limit_req zone=perip burst=3 nodelay;
        }
    }
}
";

/// 4 a minute per client read past the trusted proxies, in the short form: the policy's key.
const SHORT_FORM: &str = r#"
name = "xff"
duration = "1m"
algorithms = ["sliding_window_log"]
[policy]
limit = 4
window = "1m"
key = { identity = "xff", trusted = ["10.0.0.0/8"] }
[[traffic]]
name = "log"
kind = "replay"
path = "trace.csv"
"#;

/// The same as a contender's rule, and the imported nginx.conf (a contender's `[policy]` keys
/// on fields: the address as logged, the proxy's).
const CONTENDERS: &str = r#"
name = "xff"
duration = "1m"
[policy]
limit = 4
window = "1m"
key = "ip"
[[contender]]
name = "rules"
[[contender.rule]]
name = "per_client"
algorithm = "sliding_window_log"
limit = 4
window = "1m"
key = { identity = "xff", trusted = ["10.0.0.0/8"] }
[[contender]]
name = "nginx"
import = "nginx.conf"
[[traffic]]
name = "log"
kind = "replay"
path = "trace.csv"
"#;

/// (offered, admitted, rejected) of each row: the short form's (and its keys), the rule's,
/// nginx's.
fn run(header: bool) -> (u64, Vec<(u64, u64, u64)>) {
    run_trace(&trace(header), "1m")
}

fn run_trace(trace: &str, duration: &str) -> (u64, Vec<(u64, u64, u64)>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", trace);
    write(dir.path(), "nginx.conf", NGINX);
    let counts = |s: &serde_json::Value, name: &str| {
        let r = row(s, name);
        let n = |f: &str| r[f].as_u64().unwrap_or_else(|| panic!("{name} {f}: {r}"));
        (n("offered"), n("admitted"), n("rejected"))
    };
    let duration = format!("duration = \"{duration}\"");
    let scenario = |text: &str| text.replace("duration = \"1m\"", &duration);
    let short = summary(&write(dir.path(), "short.toml", &scenario(SHORT_FORM)));
    let keys = row(&short, "sliding_window_log")["keys_seen"]
        .as_u64()
        .unwrap();
    let stacks = summary(&write(dir.path(), "stacks.toml", &scenario(CONTENDERS)));
    let rows = vec![
        counts(&short, "sliding_window_log"),
        counts(&stacks, "rules"),
        counts(&stacks, "nginx"),
    ];
    (keys, rows)
}

/// By hand. With the header, each client is its own key: 4 of its 10 admitted under 4 a
/// minute; under nginx's bucket (excess in thousandths, +1000 a request, -30 for the 30 ms
/// between a client's requests) its 1st to 4th pass at 0, 970, 1940 and 2910, and the 5th
/// would reach 3880 over the burst's 3000, as would every later one (the excess stays at 2910
/// from the 4th, drained by at most 180 by the 10th): 4 admitted, 6 refused. 3 keys: 12
/// admitted, 18 refused. Without it, all 30 share the proxy's key: 4 admitted (nginx: 0, 990,
/// 1980, 2970, the 5th at 3960), 26 refused.
#[test]
fn each_client_behind_a_trusted_proxy_gets_its_own_counter() {
    let each = (30, 12, 18);
    assert_eq!(run(true), (3, vec![each, each, each]));
    let shared = (30, 4, 26);
    assert_eq!(run(false), (1, vec![shared, shared, shared]));
}

/// A trace over 512 KiB is parsed on a second thread, which numbers each record's key there:
/// the header must be part of what it numbers, in the short form's keyspace and a contender's.
/// 24 000 requests over 240 s, each client's 30 ms apart: a sliding log of 4 a minute admits a
/// client's first 4, then 4 more as each minute since them ends (the one at exactly +60 s sees
/// only 3 in its window `(t − 1m, t]`): 16 in 4 minutes, 48 for the three (16 with one key).
#[test]
fn the_parsing_thread_numbers_keys_with_the_header() {
    let big = trace_of(24_000, true);
    assert!(big.len() > 1 << 19, "{}", big.len());
    let (keys, rows) = run_trace(&big, "5m");
    assert_eq!(keys, 3);
    assert_eq!(rows[..2], [(24_000, 48, 23_952), (24_000, 48, 23_952)]);
    let (keys, rows) = run_trace(&trace_of(24_000, false), "5m");
    assert_eq!(keys, 1);
    assert_eq!(rows[..2], [(24_000, 16, 23_984), (24_000, 16, 23_984)]);
}
