//! The discrete-event loop for one algorithm.
//!
//! Each source keeps one pending request in the [`EventQueue`]; when it is taken, the source is
//! asked for its next one. A delayed request's release is scheduled in the same queue. After
//! start-up the loop allocates nothing unless a new key or a longer queue appears.

use super::progress::{Progress, REPORT_EVERY};
use super::queue::{EventKind, EventQueue};
use crate::algorithms::{Decision, KeyId, KeyedLimiter, Limiter, Outcome};
use crate::error::{Error, Result};
use crate::metrics::Recorder;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace, Source};

/// Receives every decision as it is made (the `--decisions` log).
pub trait DecisionSink {
    fn record(&mut self, arrival: &Arrival, decision: &Decision, keys: &KeySpace) -> Result<()>;
}

/// The first arrivals of a run, kept to time the limiter on its own afterwards.
pub struct Capture {
    pub arrivals: Vec<(KeyId, Nanos)>,
    limit: usize,
}

impl Capture {
    pub fn new(limit: usize) -> Self {
        Capture {
            arrivals: Vec::with_capacity(limit.min(1 << 16)),
            limit,
        }
    }

    #[inline]
    fn push(&mut self, key: KeyId, time: Nanos) {
        if self.arrivals.len() < self.limit {
            self.arrivals.push((key, time));
        }
    }
}

/// Everything that watches a run: the metrics, the optional decision log, the arrivals kept
/// for timing, and the progress counter.
pub struct Observers<'a> {
    pub recorder: &'a mut Recorder,
    pub sink: Option<&'a mut dyn DecisionSink>,
    pub capture: &'a mut Capture,
    pub progress: &'a Progress,
}

/// Runs every source through `limiter` to the end, reporting to the observers.
/// Idle keys are evicted every `evict_every` of virtual time.
pub fn simulate<L: Limiter>(
    limiter: &mut KeyedLimiter<L>,
    mut sources: Vec<Box<dyn Source>>,
    keys: &mut KeySpace,
    evict_every: Nanos,
    observers: Observers,
) -> Result<()> {
    let Observers {
        recorder,
        mut sink,
        capture,
        progress,
    } = observers;
    let internal = |e: super::queue::ScheduledInThePast| Error::Internal(e.to_string());
    let mut pending: Vec<Option<Arrival>> = vec![None; sources.len()];
    let mut queue = EventQueue::with_capacity(sources.len() * 2);
    for (i, source) in sources.iter_mut().enumerate() {
        if let Some(a) = source.next_arrival(keys)? {
            queue.push_arrival(a.time, a.source).map_err(internal)?;
            pending[i] = Some(a);
        }
    }
    let mut next_evict = evict_every;
    let (mut reported_requests, mut reported_time) = (0u64, 0);
    while let Some(now) = queue.peek_time() {
        if now >= next_evict {
            limiter.evict_idle(now);
            recorder.evict_idle(now);
            next_evict = (now / evict_every + 1).saturating_mul(evict_every);
        }
        let event = queue.pop().expect("peeked");
        match event.kind {
            EventKind::Release { key, .. } => recorder.on_admit(key, now),
            EventKind::Arrival { source } => {
                let i = source as usize;
                let arrival = pending[i]
                    .take()
                    .expect("a queued source has a pending arrival");
                capture.push(arrival.key, arrival.time);
                let estimate = limiter.estimate(arrival.key, arrival.time);
                let decision = limiter.decide(arrival.key, arrival.time);
                recorder.on_decision(&arrival, &decision, estimate);
                reported_requests += 1;
                if reported_requests == REPORT_EVERY {
                    progress.add(reported_requests, now - reported_time);
                    (reported_requests, reported_time) = (0, now);
                }
                if let Some(sink) = sink.as_deref_mut() {
                    sink.record(&arrival, &decision, keys)?;
                }
                if let Outcome::Delay(d) = decision.outcome {
                    let release = EventKind::Release {
                        key: arrival.key,
                        source,
                    };
                    queue.schedule(now + d, release).map_err(internal)?;
                }
                if let Some(next) = sources[i].next_arrival(keys)? {
                    queue.push_arrival(next.time, source).map_err(internal)?;
                    pending[i] = Some(next);
                }
            }
        }
    }
    progress.add(reported_requests, 0);
    Ok(())
}
