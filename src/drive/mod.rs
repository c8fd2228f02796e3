//! A real-time driver: sends planned requests to a live HTTP server at their times (optionally
//! time-scaled), each with its method, path and headers (`X-Forwarded-For` carries a simulated
//! client's address), and records when each was sent, when its response came and its status.
//! The back-test against a real nginx is built on it, and so can a probe of a live limiter.
//!
//! Blocking `ureq` on a few worker threads rather than an async runtime: a plan is a few
//! thousand requests a second at most, a worker is one keep-alive connection (an agent with
//! one idle connection, the response body read to the end so the connection is reused), and a
//! request a server holds back (nginx's delay) holds only its own worker. Workers take the
//! earliest request due from one queue and sleep until its instant; a client's reaction to a
//! response (a retry after `Retry-After`) joins the queue, so a closed-loop client meets the
//! real server's answers ([`drive_reacting`]).

use crate::error::{Error, Result};
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// When to send it, from the start of the drive (before time scaling).
    pub at: Nanos,
    /// The HTTP method (`GET`, `POST`, ...).
    pub method: String,
    /// The path and query, from `/`.
    pub path: String,
    /// Request headers to send, in order (`X-Forwarded-For` for a simulated client's address).
    pub headers: Vec<(String, String)>,
    /// The caller's own number for it, handed back with its response (a probe's client
    /// counts its retries of one first try by it).
    pub tag: u64,
}

impl Request {
    /// A `GET` of `path` at `at` from the client at `address` (its `X-Forwarded-For`).
    pub fn get(at: Nanos, path: &str, address: &str) -> Request {
        Request {
            at,
            method: "GET".to_string(),
            path: path.to_string(),
            headers: vec![("X-Forwarded-For".to_string(), address.to_string())],
            tag: 0,
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
    /// Options for driving `target` (a trailing `/` is dropped): planned speed, 16 connections
    /// and a 10 s timeout per request.
    pub fn new(target: &str) -> DriveOptions {
        DriveOptions {
            target: target.trim_end_matches('/').to_string(),
            speed: 1.0,
            connections: 16,
            timeout: Duration::from_secs(10),
        }
    }
}

/// What happened to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// When it was sent and when its response ended, from the start of the drive (wall clock).
    pub sent: Nanos,
    /// When its response ended (or the request failed), in ns from the start of the drive.
    pub done: Nanos,
    /// The response's status; `None` when the request failed (`error` says how).
    pub status: Option<u16>,
    /// How the request failed (connection, timeout, ...); `None` when a response came.
    pub error: Option<String>,
    /// The response's rate-limit headers ([`is_rate_limit_header`]), names in lower case, in
    /// the order the server sent them.
    pub headers: Vec<(String, String)>,
}

/// One request of a drive with what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The request as planned.
    pub request: Request,
    /// When it was sent, and what came back.
    pub sent: Sent,
    /// The exchange this one is a reaction to (a client's retry), by index.
    pub reacting_to: Option<usize>,
}

/// What a client does after a response: the request it sends next (a retry, its `at` on the
/// plan's clock), or nothing. Called on the worker that received the response.
pub type React<'a> = dyn Fn(usize, &Request, &Sent) -> Option<Request> + Sync + 'a;

/// Whether a response header is one a rate limiter speaks through: `Retry-After`, the IETF
/// drafts' `RateLimit`, `RateLimit-Policy` and `RateLimit-*`, and the `X-RateLimit-*` family.
pub fn is_rate_limit_header(lower_case_name: &str) -> bool {
    let n = lower_case_name;
    n == "retry-after"
        || n.starts_with("ratelimit")
        || n.starts_with("x-ratelimit")
        || n.starts_with("x-rate-limit")
}

/// Sends `requests` (in time order) as `options` say; returns one [`Sent`] per request.
pub fn drive(requests: &[Request], options: &DriveOptions) -> Result<Vec<Sent>> {
    let exchanges = drive_reacting(requests.to_vec(), options, &|_, _, _| None)?;
    Ok(exchanges.into_iter().map(|e| e.sent).collect())
}

/// Requests still to send, the exchanges so far, and how many are on the wire: a retry can
/// only come from a request in flight, so the drive ends when both are none.
struct Board {
    requests: Vec<Request>,
    reacting_to: Vec<Option<usize>>,
    results: Vec<Option<Sent>>,
    due: BinaryHeap<Reverse<(Nanos, usize)>>,
    in_flight: usize,
}

/// Sends `requests` (in time order) and every request `react` adds after a response, each at
/// its instant; returns the exchanges, the planned ones first (in plan order) and then the
/// added ones in the order they were added.
pub fn drive_reacting(
    requests: Vec<Request>,
    options: &DriveOptions,
    react: &React<'_>,
) -> Result<Vec<Exchange>> {
    check(options)?;
    let planned = requests.len();
    let board = Board {
        due: (0..planned).map(|i| Reverse((requests[i].at, i))).collect(),
        reacting_to: vec![None; planned],
        results: vec![None; planned],
        requests,
        in_flight: 0,
    };
    let shared = (Mutex::new(board), Condvar::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..options.connections.min(planned.max(1)) {
            scope.spawn(|| worker(&shared, options, react, start));
        }
    });
    let board = shared
        .0
        .into_inner()
        .map_err(|_| Error::Internal("a drive worker panicked".into()))?;
    let Board {
        requests,
        reacting_to,
        results,
        ..
    } = board;
    Ok(requests
        .into_iter()
        .zip(reacting_to)
        .zip(results)
        .map(|((request, reacting_to), sent)| Exchange {
            request,
            sent: sent.expect("every request is taken by a worker"),
            reacting_to,
        })
        .collect())
}

fn check(options: &DriveOptions) -> Result<()> {
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
    Ok(())
}

/// One worker: takes the earliest request due, waits for its instant, sends it on its
/// connection, and queues what the client does next.
fn worker(
    (board, wake): &(Mutex<Board>, Condvar),
    options: &DriveOptions,
    react: &React<'_>,
    start: Instant,
) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(options.timeout))
        .max_idle_connections(1)
        .max_idle_connections_per_host(1)
        .build()
        .into();
    let lock = || board.lock().expect("no worker panics holding the board");
    loop {
        let (i, request) = {
            let mut b = lock();
            loop {
                if let Some(Reverse((_, i))) = b.due.pop() {
                    b.in_flight += 1;
                    break (i, b.requests[i].clone());
                }
                if b.in_flight == 0 {
                    wake.notify_all();
                    return;
                }
                b = wake.wait(b).expect("no worker panics holding the board");
            }
        };
        let due = Duration::from_nanos((request.at as f64 / options.speed) as u64);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let sent = elapsed_ns(start);
        let outcome = send(&agent, &options.target, &request);
        let done = elapsed_ns(start);
        let record = match outcome {
            Ok((status, headers)) => Sent {
                sent,
                done,
                status: Some(status),
                error: None,
                headers,
            },
            Err(e) => Sent {
                sent,
                done,
                status: None,
                error: Some(e),
                headers: Vec::new(),
            },
        };
        let next = react(i, &request, &record);
        let mut b = lock();
        b.results[i] = Some(record);
        if let Some(next) = next {
            let j = b.requests.len();
            b.due.push(Reverse((next.at, j)));
            b.requests.push(next);
            b.reacting_to.push(Some(i));
            b.results.push(None);
        }
        b.in_flight -= 1;
        wake.notify_all();
    }
}

fn elapsed_ns(start: Instant) -> Nanos {
    start.elapsed().as_nanos() as Nanos
}

type Response = (u16, Vec<(String, String)>);

/// Sends one request and reads its response to the end (so the connection is kept).
fn send(
    agent: &ureq::Agent,
    target: &str,
    request: &Request,
) -> std::result::Result<Response, String> {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(format!("{target}{}", request.path));
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let built = builder.body(()).map_err(|e| e.to_string())?;
    let mut response = agent.run(built).map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| is_rate_limit_header(name.as_str()))
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_string(), value)
        })
        .collect();
    response
        .body_mut()
        .read_to_vec()
        .map_err(|e| e.to_string())?;
    Ok((status, headers))
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
                    write!(
                        out,
                        "HTTP/1.1 {status} X\r\nRetry-After: 1\r\nX-Other: y\r\n\
                         Content-Length: 2\r\n\r\nok"
                    )
                    .unwrap();
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
    fn a_reaction_is_sent_after_its_response_and_names_what_it_reacts_to() {
        let (target, server) = server(3);
        let plan = [Request::get(0, "/429", "10.0.0.1")];
        let options = DriveOptions {
            connections: 2,
            ..DriveOptions::new(&target)
        };
        // Retry a 429 at once on `/429` again, then on `/200`; a 200 ends the client.
        let react = |i: usize, _: &Request, sent: &Sent| match (i, sent.status) {
            (0, Some(429)) => Some(Request::get(sent.done, "/429", "10.0.0.1")),
            (1, Some(429)) => Some(Request::get(sent.done + 1_000_000, "/200", "10.0.0.1")),
            _ => None,
        };
        let exchanges = drive_reacting(plan.to_vec(), &options, &react).unwrap();
        let seen: Vec<(Option<u16>, Option<usize>)> = exchanges
            .iter()
            .map(|e| (e.sent.status, e.reacting_to))
            .collect();
        assert_eq!(
            seen,
            [
                (Some(429), None),
                (Some(429), Some(0)),
                (Some(200), Some(1))
            ]
        );
        assert!(exchanges[1].sent.sent >= exchanges[0].sent.done);
        assert!(exchanges[2].sent.sent >= exchanges[1].sent.done + 1_000_000);
        // Only the rate-limit headers are kept, in lower case.
        let headers = &exchanges[0].sent.headers;
        assert_eq!(headers, &[("retry-after".to_string(), "1".to_string())]);
        let (_, paths) = server.join().unwrap();
        assert_eq!(paths, ["/429 10.0.0.1", "/429 10.0.0.1", "/200 10.0.0.1"]);
    }

    #[test]
    fn a_target_that_is_not_http_is_refused() {
        let e = drive(&[], &DriveOptions::new("https://x")).unwrap_err();
        assert!(e.to_string().contains("expected http://HOST:PORT"), "{e}");
    }
}
