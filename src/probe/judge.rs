//! What only a live service shows, from a probe's exchanges: how late the requests went out
//! (the scheduling error), how long the answers took, which statuses refusals came with, and
//! whether the rate-limit headers told the truth. The verdict against the intent is the run of
//! the probe's scenario (the service as a recorded contender); these figures stand beside it.
//!
//! Header honesty is judged per policy key (the yardstick the report names), each response
//! against the same key's next request:
//! - a response promising `remaining > 0` is kept when that next request, sent before the
//!   promised reset (when one is given), is admitted;
//! - a response saying `remaining = 0` is strict when the next one before the reset is refused
//!   (a sliding limiter may admit it early: counted, not a fault);
//! - a refusal's `Retry-After` is honoured when the next request, sent at or after the wait, is
//!   admitted.
//!
//! Times are real nanoseconds (the scenario's divided by the speed): the scheduling error and the
//! latency are the machine's and the network's, not the scenario's.

use super::{Probe, ProbeOptions, Probed};
use crate::policy::{KeyField, KeySpec};
use crate::time::Nanos;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// A distribution's nearest-rank percentiles, in real nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Spread {
    pub count: u64,
    pub p50: Nanos,
    pub p99: Nanos,
    pub max: Nanos,
}

impl Spread {
    fn of(mut values: Vec<Nanos>) -> Spread {
        values.sort_unstable();
        let rank = |q: u64| {
            let n = values.len() as u64;
            // Nearest rank: the smallest value with at least q% of the values at or below it.
            values[((q * n).div_ceil(100).max(1) - 1) as usize]
        };
        match values.last() {
            None => Spread::default(),
            Some(&max) => Spread {
                count: values.len() as u64,
                p50: rank(50),
                p99: rank(99),
                max,
            },
        }
    }
}

/// Which statuses the service refused with.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Statuses {
    /// Every status answered, with its count.
    pub answered: BTreeMap<String, u64>,
    /// Responses that are refusals (429, or `--refuse-status`).
    pub refusals: u64,
    /// Of them, answered 429 (the status RFC 6585 gives a rate limit).
    pub refusals_429: u64,
    /// `refusals_429 / refusals` (1 when nothing was refused).
    pub conformance: f64,
    /// Refusals that carried `Retry-After`.
    pub refusals_with_retry_after: u64,
}

/// Whether the headers told the truth (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Honesty {
    /// The key a response and the next request are matched on (the policy's).
    pub key: String,
    /// Responses with a `remaining` claim.
    pub with_remaining: u64,
    pub promises_checked: u64,
    pub promises_kept: u64,
    pub zero_checked: u64,
    pub zero_then_refused: u64,
    pub retry_after_checked: u64,
    pub retry_after_honoured: u64,
}

/// The probe's own figures (`probe.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProbeReport {
    pub target: String,
    /// Scenario seconds per real second.
    pub speed: f64,
    pub requests: u64,
    pub retries: u64,
    pub retries_not_sent: u64,
    /// Sent minus planned, real ns (a retry's plan is its client's wait after the response).
    pub scheduling_error_ns: Spread,
    /// Response time of admitted and refused requests, real ns.
    pub latency_admitted_ns: Spread,
    pub latency_refused_ns: Spread,
    pub statuses: Statuses,
    pub headers: Honesty,
}

/// Judges `probe` (module docs); `key` is the policy's.
pub fn judge(probe: &Probe, options: &ProbeOptions, key: &KeySpec) -> ProbeReport {
    let real = |t: Nanos| (t as f64 / probe.speed) as Nanos;
    let e = &probe.exchanges;
    let refused = |p: &Probed| options.refuses(p.status);
    let latency = |want: bool| {
        let of = e.iter().filter(|p| refused(p) == want);
        Spread::of(of.map(|p| real(p.done.saturating_sub(p.sent))).collect())
    };
    ProbeReport {
        target: probe.target.clone(),
        speed: probe.speed,
        requests: e.len() as u64,
        retries: e.iter().filter(|p| p.attempt > 0).count() as u64,
        retries_not_sent: probe.retries_not_sent,
        scheduling_error_ns: Spread::of(
            e.iter()
                .map(|p| real(p.sent).saturating_sub(real(p.intended)))
                .collect(),
        ),
        latency_admitted_ns: latency(false),
        latency_refused_ns: latency(true),
        statuses: statuses(e, options),
        headers: honesty(e, options, key),
    }
}

fn statuses(e: &[Probed], options: &ProbeOptions) -> Statuses {
    let mut s = Statuses::default();
    for p in e {
        *s.answered.entry(p.status.to_string()).or_default() += 1;
        if options.refuses(p.status) {
            s.refusals += 1;
            s.refusals_429 += u64::from(p.status == 429);
            s.refusals_with_retry_after += u64::from(p.claims.retry_after.is_some());
        }
    }
    s.conformance = match s.refusals {
        0 => 1.0,
        n => s.refusals_429 as f64 / n as f64,
    };
    s
}

/// A probed request's policy key: its fields the key reads (the true address for an identity
/// function: what the service is meant to key on).
fn key_of(p: &Probed, key: &KeySpec) -> String {
    let mut fields: Vec<KeyField> = key.fields().to_vec();
    if key.identity_fn().is_some() && !fields.contains(&KeyField::Ip) {
        fields.insert(0, KeyField::Ip);
    }
    let parts: Vec<&str> = fields
        .iter()
        .map(|f| p.fields[KeyField::ALL.iter().position(|a| a == f).unwrap_or(0)].as_str())
        .collect();
    parts.join("\u{1f}")
}

fn honesty(e: &[Probed], options: &ProbeOptions, key: &KeySpec) -> Honesty {
    let mut h = Honesty {
        key: key.describe("+"),
        ..Honesty::default()
    };
    // Each key's exchanges in send order; a response is judged by the key's next request.
    let mut by_key: HashMap<String, Vec<&Probed>> = HashMap::new();
    for p in e {
        by_key.entry(key_of(p, key)).or_default().push(p);
    }
    let retries: HashMap<(u64, u32), &Probed> = e
        .iter()
        .filter(|p| p.attempt > 0)
        .map(|p| ((p.first_try, p.attempt), p))
        .collect();
    let real_gap = |from: &Probed, to: &Probed| {
        (to.sent.saturating_sub(from.done) as f64 / options.speed) as Nanos
    };
    for exchanges in by_key.values() {
        for pair in exchanges.windows(2) {
            let (this, next) = (pair[0], pair[1]);
            if options.refuses(this.status) {
                // The client that waited is the one retrying this very request.
                let then = retries
                    .get(&(this.first_try, this.attempt + 1))
                    .copied()
                    .unwrap_or(next);
                if let Some(wait) = this.claims.retry_after
                    && then.sent >= this.done
                    && real_gap(this, then) >= wait
                {
                    h.retry_after_checked += 1;
                    h.retry_after_honoured += u64::from(!options.refuses(then.status));
                }
                continue;
            }
            // A request sent before the answer arrived is not one the answer spoke to.
            if next.sent < this.done {
                continue;
            }
            let admitted = !options.refuses(next.status);
            let before_reset = this.claims.reset.is_none_or(|r| real_gap(this, next) < r);
            match this.claims.remaining {
                Some(r) if r > 0 && before_reset => {
                    h.promises_checked += 1;
                    h.promises_kept += u64::from(admitted);
                }
                Some(0) if before_reset => {
                    h.zero_checked += 1;
                    h.zero_then_refused += u64::from(!admitted);
                }
                _ => {}
            }
        }
    }
    h.with_remaining = e.iter().filter(|p| p.claims.remaining.is_some()).count() as u64;
    h
}

#[cfg(test)]
mod tests {
    use super::super::headers::Claims;
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;
    use crate::traffic::Role;

    /// An exchange of `ip` planned at `at` ms, sent `late` ms after, answered in 1 ms.
    fn ex(ip: &str, at: u64, late: u64, status: u16, claims: Claims) -> Probed {
        Probed {
            source: 0,
            role: Role::Legit,
            fields: [ip.into(), String::new(), String::new(), "/".into()],
            method: "GET".into(),
            forwarded_for: ip.into(),
            first_try: at,
            attempt: 0,
            intended: at * MS,
            sent: (at + late) * MS,
            done: (at + late + 1) * MS,
            status,
            claims,
        }
    }

    fn probe_of(exchanges: Vec<Probed>) -> Probe {
        Probe {
            target: "http://127.0.0.1:1".into(),
            speed: 1.0,
            exchanges,
            retries_not_sent: 0,
            wall_start: 0,
        }
    }

    fn remaining(r: u64, reset_s: u64) -> Claims {
        Claims {
            remaining: Some(r),
            reset: Some(reset_s * 1_000 * MS),
            retry_after: None,
        }
    }

    fn refused(wait_s: u64) -> Claims {
        Claims {
            retry_after: Some(wait_s * 1_000 * MS),
            ..remaining(0, wait_s)
        }
    }

    /// A recorded response log judged by hand. Address a: promised 1 left and then refused
    /// (a broken promise), `0 left` followed by a refusal, a refusal whose wait (1 s) was kept
    /// and then admitted. Address b: promised 2 and admitted; a 503 refusal without
    /// `Retry-After` (it promises nothing: the request after it is not judged).
    #[test]
    fn a_recorded_log_gives_the_hand_counted_figures() {
        let exchanges = vec![
            ex("a", 0, 2, 200, remaining(1, 10)),
            ex("b", 10, 0, 200, remaining(2, 10)),
            ex("a", 100, 1, 429, refused(1)),
            ex("b", 200, 0, 200, remaining(0, 1)),
            ex("a", 300, 0, 429, refused(1)),
            ex("b", 300, 0, 503, Claims::default()),
            ex("a", 1400, 0, 200, remaining(0, 10)),
            ex("a", 1500, 4, 429, refused(9)),
            ex("b", 4000, 0, 200, remaining(4, 10)),
        ];
        let probe = probe_of(exchanges);
        let options = ProbeOptions {
            refuse_status: 503,
            ..ProbeOptions::new("http://127.0.0.1:1")
        };
        let key = KeySpec::new(vec![KeyField::Ip]).unwrap();
        let r = judge(&probe, &options, &key);
        assert_eq!(r.requests, 9);
        let s = &r.statuses;
        assert_eq!(
            (s.refusals, s.refusals_429, s.refusals_with_retry_after),
            (4, 3, 3)
        );
        assert_eq!(s.conformance, 0.75);
        assert_eq!(s.answered["200"], 5);
        let h = &r.headers;
        assert_eq!(h.key, "ip");
        // a: 1 left → refused (broken); b: 2 left → admitted (kept).
        assert_eq!((h.promises_checked, h.promises_kept), (2, 1));
        // b: 0 left (reset 1 s) → the 503 at 300 ms (refused); a: 0 left → refused.
        assert_eq!((h.zero_checked, h.zero_then_refused), (2, 2));
        // a at 100 ms waits 1 s: the next a (300 ms) is too early; 300 ms → 1400 ms waited
        // and admitted.
        assert_eq!((h.retry_after_checked, h.retry_after_honoured), (1, 1));
        assert_eq!(h.with_remaining, 8);
        // Sent late by 2, 0, 1, 0, 0, 0, 0, 4, 0 ms: nearest rank p50 = 0, p99 = max = 4 ms.
        let e = r.scheduling_error_ns;
        assert_eq!((e.count, e.p50, e.p99, e.max), (9, 0, 4 * MS, 4 * MS));
        assert_eq!(r.latency_admitted_ns.count, 5);
        assert_eq!(r.latency_refused_ns.p50, MS);
    }

    /// A refusal asking for 1 s is judged by its own retry (sent 1.1 s later, admitted), not by
    /// the key's next first try (100 ms later, refused); a retry sent too early is not judged.
    #[test]
    fn retry_after_is_judged_by_the_request_s_own_retry() {
        let retry = |of: u64, attempt: u32, at: u64, status: u16| Probed {
            first_try: of,
            attempt,
            ..ex("a", at, 0, status, Claims::default())
        };
        let exchanges = vec![
            ex("a", 0, 0, 429, refused(1)),
            ex("a", 100, 0, 429, refused(1)),
            retry(100, 1, 200, 429),
            retry(0, 1, 1100, 200),
        ];
        let probe = probe_of(exchanges);
        let options = ProbeOptions::new("http://127.0.0.1:1");
        let key = KeySpec::new(vec![KeyField::Ip]).unwrap();
        let h = judge(&probe, &options, &key).headers;
        assert_eq!((h.retry_after_checked, h.retry_after_honoured), (1, 1));
    }
}
