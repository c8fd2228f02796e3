//! `rlsim probe`: the scenario's traffic sent to a live HTTP service in real time (optionally
//! time-scaled), its clients reacting to the real answers as the scenario says (`Retry-After`,
//! backoff), every exchange recorded; then the service judged exactly as a simulated contender
//! is, from the times the requests were actually sent (docs/probe.md).
//!
//! The probe writes what it saw as a trace (`probe_trace.csv`, the CSV replay format with each
//! response's status) and a scenario replaying it (`probe_scenario.toml`) with the service as a
//! recorded contender beside the scenario's own: a plain `rlsim run` of that scenario is the
//! judgement, and `rlsim check` gates on it. This module adds what only a live service has: the
//! scheduling error, the latency, the statuses it refuses with, and whether its rate-limit
//! headers tell the truth (`probe::judge`).

pub(crate) mod headers;
pub(crate) mod judge;
pub(crate) mod plan;
pub(crate) mod render;
pub(crate) mod trace;

use crate::drive::{self, DriveOptions, Exchange, Request, Sent};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::sim::Clients;
use crate::time::{NANOS_PER_SEC, Nanos};
use crate::traffic::{Arrival, Role};
use headers::Claims;
use plan::{Identity, Planned};
use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How to probe.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// `http://host:port`.
    pub target: String,
    /// 60.0 sends a minute of the scenario in a second.
    pub speed: f64,
    pub connections: usize,
    /// The longest one request may take.
    pub timeout: Duration,
    /// Requests at most, retries included: a plan over it is refused, retries past it are not
    /// sent (and counted).
    pub max_requests: u64,
    /// The longest the probe may send, in real time: a plan over it is refused, retries past
    /// it are not sent (and counted).
    pub max_duration: Duration,
    /// The status that is a refusal besides 429 (the service's configured one).
    pub refuse_status: u16,
    pub identity: Identity,
}

impl ProbeOptions {
    pub fn new(target: &str) -> ProbeOptions {
        ProbeOptions {
            target: target.trim_end_matches('/').to_string(),
            speed: 1.0,
            connections: 16,
            timeout: Duration::from_secs(10),
            max_requests: 100_000,
            max_duration: Duration::from_secs(600),
            refuse_status: 429,
            identity: Identity::default(),
        }
    }

    /// Whether a response with `status` is a refusal: 429, or the service's own status.
    pub fn refuses(&self, status: u16) -> bool {
        status == 429 || status == self.refuse_status
    }
}

/// The wait a refusal without `Retry-After` is taken to ask for, in real time.
pub const DEFAULT_RETRY_AFTER: Nanos = NANOS_PER_SEC;

/// One exchange with the service, on the scenario's clock (real times × speed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    pub source: u16,
    pub role: Role,
    /// `ip`, `user`, `api_key`, `endpoint`.
    pub fields: [String; 4],
    pub method: String,
    pub forwarded_for: String,
    /// The plan's index of the first try this is (a retry's: the one it retries).
    pub first_try: u64,
    /// 0 for a first try, n for a client's n-th retry.
    pub attempt: u32,
    /// When the plan meant to send it, when it was sent and when its response ended.
    pub intended: Nanos,
    pub sent: Nanos,
    pub done: Nanos,
    pub status: u16,
    pub claims: Claims,
}

/// What a probe saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub target: String,
    pub speed: f64,
    /// Every exchange, in the order the requests were sent.
    pub exchanges: Vec<Probed>,
    /// Retries the clients wanted but the bounds did not let through.
    pub retries_not_sent: u64,
    /// The wall clock when the probe began sending, ns since the Unix epoch.
    pub wall_start: Nanos,
}

/// Checks that `target` accepts a connection: an unusable target is refused before any
/// request (exit 2), naming the address.
pub fn preflight(options: &ProbeOptions) -> Result<()> {
    let fail = |message: String| Error::Target {
        target: options.target.clone(),
        message,
        during_run: false,
    };
    let uri: ureq::http::Uri =
        (options.target.parse()).map_err(|e| fail(format!("expected http://HOST:PORT: {e}")))?;
    let (Some("http"), Some(host)) = (uri.scheme_str(), uri.host()) else {
        return Err(fail(
            "expected http://HOST:PORT (https is not supported)".into(),
        ));
    };
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err(fail(
            "a path in --target is not supported: give http://HOST:PORT".into(),
        ));
    }
    // An IPv6 host keeps its brackets (`[::1]:8080`), as `ToSocketAddrs` reads it.
    let authority = format!("{host}:{}", uri.port_u16().unwrap_or(80));
    let addresses: Vec<_> = (authority.as_str())
        .to_socket_addrs()
        .map_err(|e| fail(format!("cannot resolve `{authority}`: {e}")))?
        .collect();
    let mut last = None;
    for address in &addresses {
        match TcpStream::connect_timeout(address, options.timeout.min(Duration::from_secs(5))) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(format!("cannot connect to {address}: {e}")),
        }
    }
    Err(fail(
        last.unwrap_or_else(|| format!("`{authority}` has no address")),
    ))
}

/// Sends `scenario`'s traffic to the service and records every exchange.
pub fn probe(scenario: &Scenario, options: &ProbeOptions) -> Result<Probe> {
    let planned = plan::plan(scenario, &options.identity, options.max_requests)?;
    let real_span = plan::span(&planned) as f64 / options.speed;
    if real_span > options.max_duration.as_nanos() as f64 {
        return Err(Error::Usage(format!(
            "{}: sending the scenario takes {:.0} s at speed {} (over --max-duration {} s); \
             raise --speed or the bound",
            scenario.path.display(),
            real_span / 1e9,
            options.speed,
            options.max_duration.as_secs()
        )));
    }
    preflight(options)?;
    let clients = Reactions {
        clients: Mutex::new((
            Clients::new(&scenario.reactions, scenario.seed),
            HashMap::new(),
        )),
        planned: &planned,
        options,
        budget: Mutex::new((options.max_requests - planned.len() as u64, 0)),
    };
    let drive_options = DriveOptions {
        speed: options.speed,
        connections: options.connections,
        timeout: options.timeout,
        ..DriveOptions::new(&options.target)
    };
    let requests = planned.iter().map(|p| p.request.clone()).collect();
    let wall_start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as Nanos);
    let exchanges =
        drive::drive_reacting(requests, &drive_options, &|i, r, s| clients.react(i, r, s))?;
    let retries_not_sent = clients.budget.into_inner().map_or(0, |(_, n)| n);
    let exchanges = record(&planned, exchanges, options)?;
    Ok(Probe {
        target: options.target.clone(),
        speed: options.speed,
        exchanges,
        retries_not_sent,
        wall_start,
    })
}

/// Per first try (by its tag): its retries so far and its last sleep.
type Chains = HashMap<u64, (u32, Nanos)>;

/// The scenario's client reactions against the live answers.
struct Reactions<'a> {
    /// The jitter streams, and every first try's retries.
    clients: Mutex<(Clients, Chains)>,
    planned: &'a [Planned],
    options: &'a ProbeOptions,
    /// Requests still allowed, and retries refused for the bounds.
    budget: Mutex<(u64, u64)>,
}

impl Reactions<'_> {
    fn react(&self, _: usize, request: &Request, sent: &Sent) -> Option<Request> {
        let status = sent.status?;
        if !self.options.refuses(status) {
            return None;
        }
        let first = &self.planned[request.tag as usize];
        let speed = self.options.speed;
        let wait = Claims::of(&sent.headers)
            .retry_after
            .unwrap_or(DEFAULT_RETRY_AFTER);
        let retry_after = (wait as f64 * speed) as Nanos;
        let sleep = {
            let mut guard = self.clients.lock().ok()?;
            let (clients, chains) = &mut *guard;
            let (attempt, previous) = chains.get(&request.tag).copied().unwrap_or((0, 0));
            let mut arrival = Arrival::new(first.request.at, 0, 0, first.source);
            arrival.attempt = attempt;
            // The real way back already happened: only the client's own sleep is added.
            let (_, sleep) = clients.on_reject(&arrival, retry_after, previous)?;
            chains.insert(request.tag, (attempt + 1, sleep));
            sleep
        };
        let at = (sent.done as f64 * speed) as Nanos + sleep;
        let mut budget = self.budget.lock().ok()?;
        let late = at as f64 / speed > self.options.max_duration.as_nanos() as f64;
        if budget.0 == 0 || late {
            budget.1 += 1;
            return None;
        }
        budget.0 -= 1;
        Some(Request {
            at,
            ..request.clone()
        })
    }
}

/// The exchanges on the scenario's clock, in send order, each with its attempt; a failed
/// request fails the probe (exit 3): its judgement would miss a decision.
fn record(
    planned: &[Planned],
    exchanges: Vec<Exchange>,
    options: &ProbeOptions,
) -> Result<Vec<Probed>> {
    let failed = exchanges.iter().filter(|e| e.sent.status.is_none()).count();
    if let Some(first) = exchanges.iter().find_map(|e| e.sent.error.as_ref()) {
        return Err(Error::Target {
            target: options.target.clone(),
            message: format!(
                "{failed} of {} requests failed during the probe (the first: {first}); \
                 nothing was written",
                exchanges.len()
            ),
            during_run: true,
        });
    }
    let mut attempts = vec![0u32; exchanges.len()];
    let mut out = Vec::with_capacity(exchanges.len());
    let scale = |t: Nanos| (t as f64 * options.speed) as Nanos;
    for (i, e) in exchanges.into_iter().enumerate() {
        if let Some(parent) = e.reacting_to {
            attempts[i] = attempts[parent] + 1;
        }
        let p = &planned[e.request.tag as usize];
        out.push(Probed {
            source: p.source,
            role: p.role,
            fields: p.fields.clone(),
            method: e.request.method,
            forwarded_for: p.forwarded_for.clone(),
            first_try: e.request.tag,
            attempt: attempts[i],
            intended: e.request.at,
            sent: scale(e.sent.sent),
            done: scale(e.sent.done),
            status: e.sent.status.expect("failed requests are refused above"),
            claims: Claims::of(&e.sent.headers),
        });
    }
    out.sort_by_key(|p| p.sent);
    Ok(out)
}
