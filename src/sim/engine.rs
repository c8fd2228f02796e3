//! The discrete-event loop for one algorithm.
//!
//! Two queues feed it: the sources' next arrivals (one pending request per source) and events
//! scheduled for later (a delayed request's release). The next event is the earliest of both;
//! at equal times a scheduled event goes first (it was admitted earlier), then arrivals in source
//! order, and each source's own requests in the order it produced them. Results therefore never
//! depend on heap internals. After start-up the loop allocates nothing unless a new key or a
//! longer queue appears.

use crate::algorithms::{Decision, KeyId, KeyedLimiter, Limiter, Outcome};
use crate::error::Result;
use crate::metrics::Recorder;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace, Source};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Receives every decision as it is made (the `--decisions` log).
pub trait DecisionSink {
    fn record(&mut self, arrival: &Arrival, decision: &Decision, keys: &KeySpace) -> Result<()>;
}

/// A request admitted with a delay, waiting for its release time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Release {
    time: Nanos,
    /// Scheduling order, so equal-time releases keep their admission order.
    seq: u64,
    key: KeyId,
    source: u16,
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

/// Runs every source through `limiter` to the end, reporting to `recorder` and `sink`.
/// Idle keys are evicted every `evict_every` of virtual time.
pub fn simulate<L: Limiter>(
    limiter: &mut KeyedLimiter<L>,
    mut sources: Vec<Box<dyn Source>>,
    keys: &mut KeySpace,
    recorder: &mut Recorder,
    mut sink: Option<&mut dyn DecisionSink>,
    evict_every: Nanos,
    capture: &mut Capture,
) -> Result<()> {
    let mut pending: Vec<Option<Arrival>> = vec![None; sources.len()];
    let mut arrivals: BinaryHeap<Reverse<(Nanos, u16)>> = BinaryHeap::with_capacity(sources.len());
    for (i, source) in sources.iter_mut().enumerate() {
        if let Some(a) = source.next_arrival(keys)? {
            arrivals.push(Reverse((a.time, i as u16)));
            pending[i] = Some(a);
        }
    }
    let mut releases: BinaryHeap<Reverse<Release>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut next_evict = evict_every;

    loop {
        let next_arrival = arrivals.peek().map(|Reverse((t, _))| *t);
        let next_release = releases.peek().map(|Reverse(r)| r.time);
        let now = match (next_arrival, next_release) {
            (None, None) => break,
            (Some(a), Some(r)) => a.min(r),
            (Some(t), None) | (None, Some(t)) => t,
        };
        if now >= next_evict {
            limiter.evict_idle(now);
            recorder.evict_idle(now);
            next_evict = (now / evict_every + 1).saturating_mul(evict_every);
        }
        if next_release == Some(now) {
            let Reverse(r) = releases.pop().expect("peeked");
            recorder.on_admit(r.key, r.source, r.time);
            continue;
        }
        let Reverse((_, i)) = arrivals.pop().expect("peeked");
        let arrival = pending[i as usize]
            .take()
            .expect("a queued source has a pending arrival");
        capture.push(arrival.key, arrival.time);
        let decision = limiter.decide(arrival.key, arrival.time);
        recorder.on_decision(&arrival, &decision);
        if let Some(sink) = sink.as_deref_mut() {
            sink.record(&arrival, &decision, keys)?;
        }
        if let Outcome::Delay(d) = decision.outcome {
            releases.push(Reverse(Release {
                time: arrival.time + d,
                seq,
                key: arrival.key,
                source: arrival.source,
            }));
            seq += 1;
        }
        if let Some(next) = sources[i as usize].next_arrival(keys)? {
            debug_assert!(next.time >= arrival.time, "sources yield in time order");
            arrivals.push(Reverse((next.time, i)));
            pending[i as usize] = Some(next);
        }
    }
    Ok(())
}
