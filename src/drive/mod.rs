//! A real-time driver: sends planned requests to a live HTTP server at their times (optionally
//! time-scaled), each with its method, path and headers (`X-Forwarded-For` carries a simulated
//! client's address), and records when each was sent, when its response came and its status.
//! The back-test against a real nginx is built on it, and so can a probe of a live limiter.
//!
//! Blocking `ureq` on a few worker threads rather than an async runtime: a plan is a few
//! thousand requests a second at most, a worker is one keep-alive connection (an agent with
//! one idle connection, the response body read to the end so the connection is reused), and a
//! request a server holds back (nginx's delay) holds only its own worker. Workers take the
//! requests in plan order from one counter and sleep until each one's instant.

use crate::error::{Error, Result};
use crate::time::Nanos;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// When to send it, from the start of the drive (before time scaling).
    pub at: Nanos,
    pub method: String,
    /// The path and query, from `/`.
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// A `GET` of `path` at `at` from the client at `address` (its `X-Forwarded-For`).
    pub fn get(at: Nanos, path: &str, address: &str) -> Request {
        Request {
            at,
            method: "GET".to_string(),
            path: path.to_string(),
            headers: vec![("X-Forwarded-For".to_string(), address.to_string())],
        }
    }
}

/// How to drive.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveOptions {
    /// `http://host:port`, no trailing slash.
    pub target: String,
    /// 2.0 sends twice as fast as planned.
    pub speed: f64,
    /// Worker threads, each one keep-alive connection.
    pub connections: usize,
    /// The longest one request may take.
    pub timeout: Duration,
}

impl DriveOptions {
    pub fn new(target: &str) -> DriveOptions {
        DriveOptions {
            target: target.trim_end_matches('/').to_string(),
            speed: 1.0,
            connections: 16,
            timeout: Duration::from_secs(10),
        }
    }
}

/// What happened to one request, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// When it was sent and when its response ended, from the start of the drive (wall clock).
    pub sent: Nanos,
    pub done: Nanos,
    /// The response's status; `None` when the request failed (`error` says how).
    pub status: Option<u16>,
    pub error: Option<String>,
}

/// Sends `requests` (in time order) as `options` say; returns one [`Sent`] per request.
pub fn drive(requests: &[Request], options: &DriveOptions) -> Result<Vec<Sent>> {
    if !options.target.starts_with("http://") {
        return Err(Error::Usage(format!(
            "drive target `{}`: expected http://HOST:PORT",
            options.target
        )));
    }
    if !(options.speed > 0.0 && options.speed.is_finite()) || options.connections == 0 {
        return Err(Error::Usage(
            "drive: the speed must be positive and there must be at least one connection".into(),
        ));
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Sent>>> = Mutex::new(vec![None; requests.len()]);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..options.connections.min(requests.len().max(1)) {
            scope.spawn(|| worker(requests, options, &next, &results, start));
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| Error::Internal("a drive worker panicked".into()))?;
    Ok(results
        .into_iter()
        .map(|r| r.expect("every request is taken by a worker"))
        .collect())
}

/// One worker: takes the next request, waits for its instant, sends it on its connection.
fn worker(
    requests: &[Request],
    options: &DriveOptions,
    next: &AtomicUsize,
    results: &Mutex<Vec<Option<Sent>>>,
    start: Instant,
) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(options.timeout))
        .max_idle_connections(1)
        .max_idle_connections_per_host(1)
        .build()
        .into();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(request) = requests.get(i) else {
            return;
        };
        let due = Duration::from_nanos((request.at as f64 / options.speed) as u64);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let sent = elapsed_ns(start);
        let outcome = send(&agent, &options.target, request);
        let done = elapsed_ns(start);
        let (status, error) = match outcome {
            Ok(status) => (Some(status), None),
            Err(e) => (None, Some(e)),
        };
        let record = Sent {
            sent,
            done,
            status,
            error,
        };
        results
            .lock()
            .expect("no worker panics holding the results")[i] = Some(record);
    }
}

fn elapsed_ns(start: Instant) -> Nanos {
    start.elapsed().as_nanos() as Nanos
}

/// Sends one request and reads its response to the end (so the connection is kept).
fn send(agent: &ureq::Agent, target: &str, request: &Request) -> std::result::Result<u16, String> {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(format!("{target}{}", request.path));
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let built = builder.body(()).map_err(|e| e.to_string())?;
    let mut response = agent.run(built).map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    response
        .body_mut()
        .read_to_vec()
        .map_err(|e| e.to_string())?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A one-connection HTTP server that answers each request with the status its path names
    /// (`/429` → 429) and counts the connections it accepted.
    fn server(requests: usize) -> (String, std::thread::JoinHandle<(usize, Vec<String>)>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (mut seen, mut connections) = (Vec::new(), 0);
            while seen.len() < requests {
                let (stream, _) = listener.accept().unwrap();
                connections += 1;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                    let mut xff = String::new();
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        if header.trim().is_empty() {
                            break;
                        }
                        if let Some(v) =
                            header.to_ascii_lowercase().strip_prefix("x-forwarded-for:")
                        {
                            xff = v.trim().to_string();
                        }
                    }
                    seen.push(format!("{path} {xff}"));
                    let status = path.trim_start_matches('/');
                    write!(out, "HTTP/1.1 {status} X\r\nContent-Length: 2\r\n\r\nok").unwrap();
                    if seen.len() == requests {
                        break;
                    }
                }
            }
            (connections, seen)
        });
        (target, handle)
    }

    #[test]
    fn requests_go_in_order_with_their_headers_on_one_kept_connection() {
        let (target, server) = server(3);
        let plan = [
            Request::get(0, "/200", "10.0.0.1"),
            Request::get(1_000_000, "/429", "10.0.0.2"),
            Request::get(2_000_000, "/503", "10.0.0.1"),
        ];
        let options = DriveOptions {
            connections: 1,
            ..DriveOptions::new(&target)
        };
        let sent = drive(&plan, &options).unwrap();
        let statuses: Vec<Option<u16>> = sent.iter().map(|s| s.status).collect();
        assert_eq!(statuses, [Some(200), Some(429), Some(503)]);
        assert!(sent.iter().all(|s| s.done >= s.sent && s.error.is_none()));
        let (connections, seen) = server.join().unwrap();
        assert_eq!(connections, 1, "keep-alive: one connection for the three");
        assert_eq!(seen, ["/200 10.0.0.1", "/429 10.0.0.2", "/503 10.0.0.1"]);
    }

    #[test]
    fn a_target_that_is_not_http_is_refused() {
        let e = drive(&[], &DriveOptions::new("https://x")).unwrap_err();
        assert!(e.to_string().contains("expected http://HOST:PORT"), "{e}");
    }
}
