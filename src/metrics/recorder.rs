//! The observer that turns one algorithm's decisions into figures.
//!
//! Accuracy is measured against the policy's intent, "at most L requests per key in any rolling
//! window (t−W, t]", from the algorithm's own admitted history ([`KeyWindows`]), and against
//! what each key and client asked for ([`Demand`]). Delayed requests are admitted when they are
//! released, since that is when they reach the backend. A shadow sliding-window log, the exact
//! limiter, decides on the same arrivals so every decision can be compared with the exact one.

use super::demand::Demand;
use super::windows::KeyWindows;
use super::{Counts, TimeBucket};
use crate::algorithms::{Decision, KeyId, KeyedLimiter, Outcome, Params, SlidingWindowLog};
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId, Role};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// What the recorder knows of one key.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyStats {
    pub offered: u64,
    pub admitted: u64,
    /// Rejected or delayed: the limiter acted on the key.
    pub limited: u64,
    pub legit: bool,
    first_client: ClientId,
    /// A second client used the key (e.g. users behind one NAT address).
    pub shared: bool,
    /// `remaining` advertised with the key's last decision.
    last_remaining: Option<u64>,
    /// When the key's last rejection said a retry would succeed.
    retry_at: Option<Nanos>,
}

impl Default for KeyStats {
    fn default() -> Self {
        KeyStats {
            offered: 0,
            admitted: 0,
            limited: 0,
            legit: false,
            first_client: ClientId::MAX,
            shared: false,
            last_remaining: None,
            retry_at: None,
        }
    }
}

/// What the recorder knows of one client (user identity).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClientStats {
    pub legit: bool,
    /// Gave up on at least one request.
    pub gave_up: bool,
    /// Legit requests rejected on a key another client had used.
    pub rejected_on_shared_key: u64,
}

/// A distribution of delays: HdrHistogram for percentiles, exact sum and maximum.
pub(super) struct Delays {
    pub histogram: Histogram<u64>,
    pub sum: u128,
    pub max: Nanos,
}

impl Delays {
    fn new() -> Self {
        Delays {
            histogram: Histogram::new(3).expect("3 significant figures is valid"),
            sum: 0,
            max: 0,
        }
    }

    #[inline]
    fn record(&mut self, d: Nanos) {
        // `record` grows the auto-resizing histogram; `saturating_record` would clamp every
        // value to its current (initially tiny) range.
        if self.histogram.record(d).is_err() {
            self.histogram.saturating_record(d);
        }
        self.sum += d as u128;
        self.max = self.max.max(d);
    }
}

pub struct Recorder {
    pub(super) limit: u64,
    bucket: Nanos,
    roles: Vec<Role>,
    pub(super) sources: Vec<Counts>,
    pub(super) windows: KeyWindows,
    pub(super) key_demand: Demand,
    pub(super) client_demand: Demand,
    pub(super) keys: Vec<KeyStats>,
    pub(super) clients: Vec<ClientStats>,
    exact: KeyedLimiter<SlidingWindowLog>,
    pub(super) wrongly_allowed: u64,
    pub(super) wrongly_rejected: u64,
    pub(super) estimate_error_sum: f64,
    pub(super) estimates: u64,
    pub(super) remaining_lies: u64,
    pub(super) retries_at_retry_after: u64,
    pub(super) retries_at_retry_after_admitted: u64,
    pub(super) violations: u64,
    pub(super) worst: Option<Worst>,
    pub(super) worst_trace: WorstTrace,
    pub(super) delays: Delays,
    pub(super) keys_per_client: super::keys_per_client::KeysPerClient,
    pub(super) legit_delays: Delays,
    pub(super) buckets: Vec<TimeBucket>,
    pub(super) last_event: Nanos,
    pub(super) peak_pending_retries: u64,
    pub(super) last_first_try: Nanos,
    pub(super) last_retry: Option<Nanos>,
}

/// The rolling window holding the most admissions of one key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Worst {
    pub admitted: u64,
    pub key: KeyId,
    /// The admission that completed this window: the window is (end − W, end].
    pub end: Nanos,
}

/// Admission times of the worst window's key around it, in `(end − 2W, end + W]`: what the
/// worst-moment chart plots as a rolling count. Kept as the run goes because the history that
/// [`KeyWindows`] holds is trimmed to `2W`; recording the worst key's admissions costs O(1), and
/// the history is copied only when the worst window moves to another key or after a gap.
#[derive(Debug, Default)]
pub(super) struct WorstTrace {
    key: KeyId,
    /// Admissions are recorded up to this time.
    until: Nanos,
    pub times: VecDeque<Nanos>,
}

#[inline]
fn slot<T: Default>(v: &mut Vec<T>, i: u32) -> &mut T {
    let i = i as usize;
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

impl Recorder {
    pub fn new(scenario: &Scenario) -> Self {
        let (limit, window) = (scenario.policy.limit, scenario.policy.window);
        let exact = SlidingWindowLog::new(Params {
            limit,
            window,
            burst: scenario.policy.burst,
        })
        .expect("the policy was validated");
        Recorder {
            limit,
            bucket: scenario.bucket,
            roles: scenario.traffic.iter().map(|s| s.role).collect(),
            sources: vec![Counts::default(); scenario.traffic.len()],
            windows: KeyWindows::new(limit, window),
            key_demand: Demand::new(limit, window),
            client_demand: Demand::new(limit, window),
            keys: Vec::new(),
            clients: Vec::new(),
            exact: KeyedLimiter::new(exact),
            wrongly_allowed: 0,
            wrongly_rejected: 0,
            estimate_error_sum: 0.0,
            estimates: 0,
            remaining_lies: 0,
            retries_at_retry_after: 0,
            retries_at_retry_after_admitted: 0,
            violations: 0,
            worst: None,
            worst_trace: WorstTrace::default(),
            delays: Delays::new(),
            legit_delays: Delays::new(),
            keys_per_client: super::keys_per_client::KeysPerClient::new(
                &scenario.policy.key,
                &scenario.traffic,
            ),
            buckets: Vec::new(),
            last_event: 0,
            peak_pending_retries: 0,
            last_first_try: 0,
            last_retry: None,
        }
    }

    #[inline]
    fn bucket_mut(&mut self, time: Nanos) -> &mut TimeBucket {
        let i = (time / self.bucket) as u32;
        slot(&mut self.buckets, i)
    }

    /// One decision on an arriving request. `estimate` is the algorithm's own estimate of the
    /// key's rolling count just before it ([`KeyedLimiter::estimate`]).
    #[inline]
    pub fn on_decision(&mut self, a: &Arrival, decision: &Decision, estimate: Option<f64>) {
        let t = a.time;
        let legit = self.roles[a.source as usize] == Role::Legit;
        let admitted = decision.outcome.is_admitted();
        self.last_event = self.last_event.max(t);
        self.key_demand.offer(a.key, t);
        self.client_demand.offer(a.client, t);
        self.keys_per_client.record(a);
        if let Some(estimate) = estimate {
            let truth = self.windows.count_now(a.key, t);
            if truth > 0 {
                self.estimate_error_sum += (estimate - truth as f64).abs() / truth as f64;
                self.estimates += 1;
            }
        }
        if self.exact.decide(a.key, t).outcome.is_admitted() != admitted {
            if admitted {
                self.wrongly_allowed += 1;
            } else {
                self.wrongly_rejected += 1;
            }
        }

        let key = slot(&mut self.keys, a.key);
        key.offered += 1;
        key.admitted += admitted as u64;
        key.limited += !matches!(decision.outcome, Outcome::Allow) as u64;
        key.legit |= legit;
        if key.first_client == ClientId::MAX {
            key.first_client = a.client;
        } else if key.first_client != a.client {
            key.shared = true;
        }
        let shared = key.shared;
        // Header honesty: the previous decision said `remaining > 0` and this one rejects.
        if key.last_remaining.is_some_and(|r| r > 0) && !admitted {
            self.remaining_lies += 1;
        }
        key.last_remaining = Some(decision.remaining);
        if key.retry_at == Some(t) {
            // Only the first request at the advertised time is the retry it was promised to.
            key.retry_at = None;
            self.retries_at_retry_after += 1;
            self.retries_at_retry_after_admitted += admitted as u64;
        }
        if let Outcome::Reject { retry_after } = decision.outcome {
            key.retry_at = Some(t.saturating_add(retry_after));
        }
        let client = slot(&mut self.clients, a.client);
        client.legit |= legit;

        let source = &mut self.sources[a.source as usize];
        source.offered += 1;
        let retry = a.attempt > 0;
        source.retries += retry as u64;
        if retry {
            self.last_retry = Some(t);
        } else {
            self.last_first_try = t;
        }
        match decision.outcome {
            Outcome::Allow => source.allowed += 1,
            Outcome::Delay(_) => source.delayed += 1,
            Outcome::Reject { .. } => source.rejected += 1,
        }
        let bucket = self.bucket_mut(t);
        bucket.offered += 1;
        bucket.retries += retry as u64;
        match decision.outcome {
            Outcome::Allow => self.on_admit(a.key, t),
            Outcome::Delay(d) => {
                bucket.delayed += 1;
                self.delays.record(d);
                if legit {
                    self.legit_delays.record(d);
                }
            }
            Outcome::Reject { .. } => {
                bucket.rejected += 1;
                self.windows.reject(a.key, t);
                if legit && shared {
                    slot(&mut self.clients, a.client).rejected_on_shared_key += 1;
                }
            }
        }
    }

    /// A rejected request's client gave up on it.
    pub fn on_abandon(&mut self, a: &Arrival) {
        self.sources[a.source as usize].abandoned += 1;
        slot(&mut self.clients, a.client).gave_up = true;
    }

    /// A retry was scheduled; `pending` retries are now waiting.
    pub fn on_retry_scheduled(&mut self, pending: u64) {
        self.peak_pending_retries = self.peak_pending_retries.max(pending);
    }

    /// A request reaches the backend: admitted now, or a delayed one released now.
    /// Times passed here never decrease.
    #[inline]
    pub fn on_admit(&mut self, key: KeyId, time: Nanos) {
        self.bucket_mut(time).admitted += 1;
        self.last_event = self.last_event.max(time);
        let in_window = self.windows.admit(key, time);
        if in_window > self.limit {
            self.violations += 1;
        }
        let trace = &mut self.worst_trace;
        let traced = self.worst.is_some() && trace.key == key && time <= trace.until;
        if traced {
            trace.times.push_back(time);
        }
        if self.worst.is_none_or(|w| in_window > w.admitted) {
            self.worst = Some(Worst {
                admitted: in_window,
                key,
                end: time,
            });
            let window = self.windows.window();
            if !traced {
                // A new key, or admissions of this one went unrecorded: start from the history,
                // which holds (time − 2W, time], this admission included.
                trace.times.clear();
                trace.times.extend(self.windows.recent(key));
                trace.key = key;
            }
            trace.until = time.saturating_add(window);
            // Keep the trace to (end − 2W, end + W]: drop what the new end leaves behind.
            let from = time.saturating_sub(2 * window);
            while trace.times.front().is_some_and(|&t| t <= from && from > 0) {
                trace.times.pop_front();
            }
        }
    }

    /// Frees what no longer matters at `now`; called once per window of virtual time.
    pub fn evict_idle(&mut self, now: Nanos) {
        self.windows.sweep(now);
        self.key_demand.sweep(now);
        self.client_demand.sweep(now);
        self.exact.evict_idle(now);
    }
}
