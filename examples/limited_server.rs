//! A tiny rate-limited HTTP service to point `rlsim probe` at (docs/probe.md): at most LIMIT
//! requests per client in any WINDOW seconds (a sliding log of the admitted ones, the client being
//! the last `X-Forwarded-For` entry, else the peer), 429 with `Retry-After` past it, and the
//! draft-6 `RateLimit-*` headers on every answer. Written from the definition, independently of
//! rlsim's limiters, so a probe of it tests rlsim against something it did not write.
//!
//! ```text
//! cargo run --release --example limited_server -- --port 8080 --limit 5 --window 10
//! rlsim probe scenarios/probe_login.toml --target http://127.0.0.1:8080 --out probe-out
//! ```
//!
//! It prints `listening on http://ADDRESS` once it accepts connections (`--port 0`: any free
//! port) and serves until killed.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Log = Arc<Mutex<HashMap<String, VecDeque<Instant>>>>;

struct Config {
    port: u16,
    limit: usize,
    window: Duration,
}

fn config() -> Result<Config, String> {
    let mut c = Config {
        port: 8080,
        limit: 5,
        window: Duration::from_secs(10),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--port" => c.port = number(&value)?.try_into().map_err(|_| "port > 65535")?,
            "--limit" => c.limit = number(&value)? as usize,
            "--window" => c.window = Duration::from_secs(number(&value)?),
            _ => return Err(format!("unknown flag {flag} (--port, --limit, --window)")),
        }
    }
    Ok(c)
}

fn main() {
    let config = match config() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(("127.0.0.1", config.port)).unwrap_or_else(|e| {
        eprintln!("error: 127.0.0.1:{}: {e}", config.port);
        std::process::exit(2);
    });
    let address = listener
        .local_addr()
        .expect("a bound socket has an address");
    println!("listening on http://{address}");
    let log: Log = Arc::default();
    for stream in listener.incoming().flatten() {
        let (log, config) = (log.clone(), config.clone());
        std::thread::spawn(move || serve(stream, &log, &config));
    }
}

/// Answers one keep-alive connection's requests until the client closes it.
fn serve(stream: TcpStream, log: &Log, config: &Config) {
    let peer = stream
        .peer_addr()
        .map_or(String::new(), |a| a.ip().to_string());
    let Ok(read) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read);
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut client = peer.clone();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.trim().eq_ignore_ascii_case("x-forwarded-for")
            {
                let last = value.rsplit(',').next().unwrap_or_default().trim();
                client = last.to_string();
            }
        }
        let answer = decide(log, config, &client);
        if out.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// The sliding log's decision for `client` now, as an HTTP response.
fn decide(log: &Log, config: &Config, client: &str) -> String {
    let now = Instant::now();
    let mut log = log.lock().expect("no thread panics holding the log");
    let admitted = log.entry(client.to_string()).or_default();
    while admitted
        .front()
        .is_some_and(|&t| now.duration_since(t) >= config.window)
    {
        admitted.pop_front();
    }
    let allowed = admitted.len() < config.limit;
    if allowed {
        admitted.push_back(now);
    }
    // Seconds until the oldest admission leaves the window: when one more request fits.
    let reset = admitted.front().map_or(0, |&t| {
        let left = config.window.saturating_sub(now.duration_since(t));
        left.as_millis().div_ceil(1000) as u64
    });
    let remaining = config.limit - admitted.len();
    let (status, extra) = if allowed {
        ("200 OK", String::new())
    } else {
        (
            "429 Too Many Requests",
            format!("Retry-After: {}\r\n", reset.max(1)),
        )
    };
    let body = if allowed { "ok\n" } else { "slow down\n" };
    format!(
        "HTTP/1.1 {status}\r\n{extra}RateLimit-Limit: {}\r\nRateLimit-Remaining: {remaining}\r\n\
         RateLimit-Reset: {reset}\r\nContent-Length: {}\r\n\r\n{body}",
        config.limit,
        body.len()
    )
}
