//! The discrete-event loop for one algorithm.
//!
//! Each source keeps one pending request in the [`EventQueue`]; when it is taken, the source is
//! asked for its next one. A delayed request's release is scheduled in the same queue. After
//! start-up the loop allocates nothing unless a new key or a longer queue appears.

use super::clients::Clients;
use super::progress::{Progress, REPORT_EVERY};
use super::queue::{EventKind, EventQueue, ScheduledInThePast};
use crate::algorithms::{Cost, Decision, KeyId, KeyedLimiter, Limiter, Outcome};
use crate::error::{Error, Result};
use crate::metrics::{Deciders, Recorder};
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::{Arrival, Direct, KeySpace, ReplayEnd, Source};
use std::collections::BTreeMap;

/// Below this many keys and clients the tallies' and the limiter's entries stay in the caches,
/// and looking them up a request ahead is pure overhead (docs/performance.md, "The engine and
/// the harness").
const PREFETCH_FROM: usize = 1 << 12;

/// Receives every decision as it is made (the `--decisions` log).
pub trait DecisionSink {
    /// Writes one decision: the request, the limiter's decision, what the contender adds to it
    /// (`detail`) and the keyspace that names its key. An error stops the run.
    fn record(
        &mut self,
        arrival: &Arrival,
        decision: &Decision,
        detail: &Detail<'_>,
        keys: &KeySpace,
    ) -> Result<()>;

    /// Whether the sink reads each key's identity fields ([`KeySpace::fields`]): the run then
    /// keeps them (memory per key, no work per decision).
    fn wants_identities(&self) -> bool {
        false
    }

    /// Once the run is over: the figures the sink adds to the contender's row (an observer's
    /// alert figures; `None`: none).
    fn row_figures(&mut self, _scenario: &Scenario) -> Option<BTreeMap<String, Option<f64>>> {
        None
    }
}

/// Two sinks fed the same decisions (the decision log and the observer).
impl<A: DecisionSink, B: DecisionSink> DecisionSink for (Option<A>, Option<B>) {
    fn record(
        &mut self,
        arrival: &Arrival,
        decision: &Decision,
        detail: &Detail<'_>,
        keys: &KeySpace,
    ) -> Result<()> {
        if let Some(a) = &mut self.0 {
            a.record(arrival, decision, detail, keys)?;
        }
        if let Some(b) = &mut self.1 {
            b.record(arrival, decision, detail, keys)?;
        }
        Ok(())
    }

    fn wants_identities(&self) -> bool {
        self.0.as_ref().is_some_and(|a| a.wants_identities())
            || self.1.as_ref().is_some_and(|b| b.wants_identities())
    }

    fn row_figures(&mut self, scenario: &Scenario) -> Option<BTreeMap<String, Option<f64>>> {
        let a = self.0.as_mut().and_then(|a| a.row_figures(scenario));
        let b = self.1.as_mut().and_then(|b| b.row_figures(scenario));
        a.or(b)
    }
}

/// What a contender adds to a decision beyond the limiter's [`Decision`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail<'a> {
    /// The rule that refused (or, when admitted, the one closest to its limit, whose
    /// `remaining` and reset the response carries); `""` when no rule applied.
    pub rule: &'a str,
    /// Some applying rule had used its `warn_at` share once this request was counted.
    pub warned: bool,
    /// No rule applied (bypass, skipped route): the response carries no rate-limit headers.
    pub unlimited: bool,
    /// Whether the key that decided (a stack's refusing rule's) had been used by another
    /// client; `None`: the policy's key decided, which the recorder knows itself.
    pub shared_key: Option<bool>,
    /// The keys that decided, for the back-test's causes.
    pub deciders: Deciders<'a>,
}

/// When a limiter next admits, from a peek just after a decision at `now` (0: it has room).
#[inline]
pub fn opening(peek: &Decision, now: Nanos) -> Nanos {
    match peek.outcome {
        Outcome::Reject { retry_after } => now.saturating_add(retry_after),
        _ => 0,
    }
}

/// What decides on each request: one keyed limiter (the short form) or a contender's rules.
pub trait Gate {
    /// The limiter's estimate of the key's rolling count (see [`KeyedLimiter::estimate`]).
    fn estimate(&self, arrival: &Arrival) -> Option<f64>;
    /// Decides on one request, updating state.
    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>);
    /// Drops the state of idle keys.
    fn evict_idle(&mut self, now: Nanos);
    /// Starts looking up the state `decide` will need for `arrival`, requests ahead (a hint:
    /// it changes nothing).
    fn prefetch(&self, _arrival: &Arrival) {}
    /// The keyspace the sources intern each request's whole identity into, when the gate
    /// keys requests itself (a stack's rules each key their own way); `None`: the sources
    /// intern the policy's key into the run's keyspace.
    fn identities(&mut self) -> Option<&mut KeySpace> {
        None
    }
    /// A new arrival interned into [`Gate::identities`]: sets its policy key and client in the
    /// run's `keys`, keeping the identity in `arrival.identity`.
    fn resolve(&mut self, _arrival: &mut Arrival, _keys: &mut KeySpace) {}
}

impl<L: Limiter> Gate for KeyedLimiter<L> {
    #[inline]
    fn estimate(&self, arrival: &Arrival) -> Option<f64> {
        KeyedLimiter::estimate(self, arrival.key, arrival.time)
    }
    #[inline]
    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>) {
        let decision = KeyedLimiter::decide_n(self, arrival.key, arrival.time, arrival.cost);
        let mut detail = Detail::default();
        if arrival.logged.is_some() {
            let peek = KeyedLimiter::peek_n(self, arrival.key, arrival.time, arrival.cost);
            detail.deciders.opens_at = opening(&peek, arrival.time);
        }
        (decision, detail)
    }
    fn evict_idle(&mut self, now: Nanos) {
        KeyedLimiter::evict_idle(self, now)
    }
    #[inline]
    fn prefetch(&self, arrival: &Arrival) {
        KeyedLimiter::prefetch(self, arrival.key)
    }
}

/// The first arrivals of a run, kept to time the limiter on its own afterwards.
pub struct Capture {
    /// The `(key, time, cost)` of the run's first arrivals, in arrival order, up to the
    /// capture's limit (16 bytes each, as the pair alone).
    pub arrivals: Vec<(KeyId, Nanos, Cost)>,
    limit: usize,
}

// The cost rides in the pair's padding: a capture of a million arrivals stays 16 MB.
const _: () = assert!(std::mem::size_of::<(KeyId, Nanos, Cost)>() == 16);

impl Capture {
    /// Keeps up to `limit` arrivals, room for `expected` of them (about how many the run will
    /// offer, if known) reserved up front: a buffer grown by doubling would touch (and the
    /// kernel zero) about twice the pages and copy the arrivals on every growth
    /// (docs/performance.md, "The engine and the harness").
    pub fn sized(limit: usize, expected: Option<usize>) -> Self {
        Capture {
            arrivals: Vec::with_capacity(expected.map_or(limit, |e| e.min(limit))),
            limit,
        }
    }

    /// Keeps up to `limit` arrivals, room for all of them reserved up front.
    pub fn new(limit: usize) -> Self {
        Capture::sized(limit, None)
    }

    #[inline]
    fn push(&mut self, key: KeyId, time: Nanos, cost: Cost) {
        if self.arrivals.len() < self.limit {
            self.arrivals.push((key, time, cost));
        }
    }
}

/// Everything that watches a run: the metrics, the optional decision log, the arrivals kept
/// for timing, and the progress counter.
pub struct Observers<'a> {
    /// The run's metrics, fed every decision.
    pub recorder: &'a mut Recorder,
    /// The decision log, if the run writes one.
    pub sink: Option<&'a mut dyn DecisionSink>,
    /// The first arrivals, kept to time the limiter on its own afterwards.
    pub capture: &'a mut Capture,
    /// Where the run reports how many requests it has processed.
    pub progress: &'a Progress,
}

/// Runs every source through `limiter` to the end, reporting to the observers. Rejected
/// requests are retried as `clients` react. Idle keys are evicted every `evict_every` of
/// virtual time. Returns how each source's replay ended ([`Source::replay_end`]).
pub fn simulate<'a, G: Gate>(
    limiter: &'a mut G,
    mut sources: Vec<Direct>,
    keys: &'a mut KeySpace,
    clients: &'a mut Clients,
    evict_every: Nanos,
    observers: Observers<'a>,
) -> Result<Vec<Option<ReplayEnd>>> {
    // Each source's next request, in place: a source writes it here directly
    // ([`Source::next_into`]); only the queued ones (an `Arrival` event) are meaningful.
    let mut pending: Vec<Arrival> = vec![Arrival::new(0, 0, 0, 0); sources.len()];
    let mut run = Run {
        limiter,
        keys,
        clients,
        queue: EventQueue::with_capacity(sources.len() * 2),
        observers,
        pending_retries: 0,
        reported: (0, 0),
    };
    // A gate that keys requests itself takes the sources' identities; hints name keys of
    // those, not of the run.
    let hints = run.limiter.identities().is_none();
    for (i, source) in sources.iter_mut().enumerate() {
        if run.next(source, &mut pending[i])? {
            let a = &pending[i];
            run.queue.push_arrival(a.time, a.source).map_err(internal)?;
        }
    }
    // The limiter expires idle keys at its own window's pace; the metrics sweep at the
    // policy's, whatever window the algorithm overrides.
    let mut next_evict = evict_every;
    let sweep_every = run.observers.recorder.sweep_every();
    let mut next_sweep = sweep_every;
    let mut last = 0;
    // The event in hand: taken from the queue, or a source's next arrival that is earlier
    // than everything queued, which then never enters the queue.
    let mut current = run.queue.pop();
    while let Some(event) = current {
        let now = event.time;
        last = now;
        // Both sweeps at once: one comparison per event while neither is due.
        if now >= next_evict.min(next_sweep) {
            if now >= next_evict {
                run.limiter.evict_idle(now);
                next_evict = (now / evict_every)
                    .saturating_add(1)
                    .saturating_mul(evict_every);
            }
            if now >= next_sweep {
                run.observers.recorder.evict_idle(now);
                next_sweep = (now / sweep_every)
                    .saturating_add(1)
                    .saturating_mul(sweep_every);
            }
        }
        current = match event.kind {
            EventKind::Release {
                key,
                client,
                source,
                units,
            } => {
                let r = &mut run.observers.recorder;
                r.on_admit(key, client, source, now, units);
                run.queue.pop()
            }
            EventKind::Retry { slot } => {
                let (arrival, previous_sleep) = run.queue.take_retry(slot);
                run.pending_retries -= 1;
                run.request(arrival, previous_sleep)?;
                run.queue.pop()
            }
            EventKind::Arrival { source } => {
                let i = source as usize;
                let arrival = pending[i];
                // The source's next request does not depend on this decision: take it first so
                // its metric state loads while this one is decided.
                let more = run.next(&mut sources[i], &mut pending[i])?;
                if more && run.keys.len().max(run.keys.clients()) >= PREFETCH_FROM {
                    // Several requests ahead when the source knows what comes (a Poisson
                    // source names the client seven arrivals on), else one.
                    let early = match sources[i].hint().filter(|_| hints) {
                        Some(c) => Arrival::new(0, c.key, c.id, source),
                        None => pending[i],
                    };
                    run.observers.recorder.prefetch(&early);
                    run.limiter.prefetch(&early);
                }
                run.request(arrival, 0)?;
                if more {
                    run.queue
                        .push_arrival_pop(pending[i].time, source)
                        .map_err(internal)?
                } else {
                    run.queue.pop()
                }
            }
        };
    }
    let skipped = sources.iter().map(Source::skipped_lines);
    run.observers.recorder.on_sources_finished(skipped);
    // Report what the last partial batch covered, so the progress reaches the end.
    let (requests, since) = run.reported;
    run.observers
        .progress
        .add(requests, last.saturating_sub(since));
    Ok(sources.iter().map(Source::replay_end).collect())
}

fn internal(e: ScheduledInThePast) -> Error {
    Error::Internal(e.to_string())
}

/// The state of one simulation while it runs.
struct Run<'a, G: Gate> {
    limiter: &'a mut G,
    keys: &'a mut KeySpace,
    clients: &'a mut Clients,
    queue: EventQueue,
    observers: Observers<'a>,
    /// Retries scheduled and not yet made.
    pending_retries: u64,
    /// Requests and virtual time not yet reported to the progress counter.
    reported: (u64, Nanos),
}

impl<G: Gate> Run<'_, G> {
    /// The source's next request into `into`, keyed for the run; whether there was one.
    /// Always inlined: left to the compiler, the loop called it (docs/performance.md).
    #[inline(always)]
    fn next(&mut self, source: &mut Direct, into: &mut Arrival) -> Result<bool> {
        let Some(identities) = self.limiter.identities() else {
            return source.next_into(self.keys, into);
        };
        let more = source.next_into(identities, into)?;
        if more {
            self.limiter.resolve(into, self.keys);
        }
        Ok(more)
    }

    /// Decides on one request (a first try or a retry) and schedules what follows from it.
    #[inline]
    fn request(&mut self, arrival: Arrival, previous_sleep: Nanos) -> Result<()> {
        let now = arrival.time;
        let obs = &mut self.observers;
        obs.capture.push(arrival.key, now, arrival.cost);
        let estimate = self.limiter.estimate(&arrival);
        // By reference, not moved out of the pair: a copy read the decision back with wider
        // loads than the stores that wrote it, and stalled on store forwarding.
        let decided = self.limiter.decide(&arrival);
        let (decision, detail) = (&decided.0, &decided.1);
        obs.recorder.on_decision(
            &arrival,
            decision,
            estimate,
            detail.shared_key,
            detail.deciders,
        );
        if let Some(sink) = obs.sink.as_deref_mut() {
            sink.record(&arrival, decision, detail, self.keys)?;
        }
        match decision.outcome {
            Outcome::Allow => {}
            Outcome::Delay(d) => {
                // Times saturate at the end of virtual time, as the algorithms' do.
                let at = now.saturating_add(d);
                self.queue
                    .schedule_release(
                        at,
                        arrival.key,
                        arrival.client,
                        arrival.source,
                        obs.recorder.intent().unit.weigh(&arrival),
                    )
                    .map_err(internal)?;
            }
            Outcome::Reject { retry_after } => {
                match self
                    .clients
                    .on_reject(&arrival, retry_after, previous_sleep)
                {
                    Some((wait, sleep)) => {
                        let retry = Arrival {
                            time: now.saturating_add(wait),
                            attempt: arrival.attempt + 1,
                            ..arrival
                        };
                        self.queue.schedule_retry(retry, sleep).map_err(internal)?;
                        self.pending_retries += 1;
                        obs.recorder.on_retry_scheduled(self.pending_retries);
                    }
                    None => obs.recorder.on_abandon(&arrival),
                }
            }
        }
        let (requests, since) = &mut self.reported;
        *requests += 1;
        if *requests == REPORT_EVERY {
            obs.progress.add(*requests, now.saturating_sub(*since));
            (*requests, *since) = (0, now);
        }
        Ok(())
    }
}
