//! Deterministic arrival processes: constant rate, periodic bursts and the boundary attack.
//!
//! Event times are computed from their index (`start + k·per/count`), never accumulated, so a
//! rate that is not a whole number of nanoseconds does not drift over a long run.

use super::population::Clients;
use super::{Arrival, KeySpace, Source, SourceSpec};
use crate::error::Result;
use crate::time::{Nanos, Rate};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Clients at the same constant rate, phased evenly: client `k mod n` sends the `k`-th request.
pub struct Constant {
    source: u16,
    start: Nanos,
    stop: Nanos,
    /// The offsets of the whole source's requests (rate: per-client rate × clients).
    steps: Steps,
    clients: Clients,
    /// `k mod n` for the next request `k`.
    next_client: usize,
}

impl Constant {
    /// Source number `source` of `spec` (its `start` and `stop`): each of `clients` at
    /// `per_client`. Panics if the total rate overflows (validation rules it out).
    pub fn new(spec: &SourceSpec, source: u16, per_client: Rate, clients: Clients) -> Self {
        let rate = per_client
            .times(clients.len() as u64)
            .expect("validated: clients × rate fits");
        Constant {
            source,
            start: spec.start,
            stop: spec.stop,
            steps: Steps::new(rate),
            clients,
            next_client: 0,
        }
    }
}

impl Source for Constant {
    #[inline]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let Some(offset) = self.steps.offset() else {
            return Ok(None);
        };
        let time = self.start.saturating_add(offset);
        if time >= self.stop {
            return Ok(None);
        }
        let client = self.clients.get(self.next_client);
        self.next_client += 1;
        if self.next_client == self.clients.len() {
            self.next_client = 0;
        }
        self.steps.advance();
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }
}

/// A [`Constant`] source whose every request is late by a uniform random share of the gap
/// between its requests (`jitter = "5%"`: up to 5% of the gap), drawn from the source's own
/// timing stream. A perfectly periodic client then no longer reclaims its own expiring slots
/// at the same instant every window (docs/replicates.md). The share is at most half a gap, so
/// the requests keep their order.
pub struct Jittered {
    inner: Constant,
    /// The largest delay, in ns: `⌊gap⌋ × ppm / 10^6`.
    max: Nanos,
    rng: rand_chacha::ChaCha8Rng,
}

impl Jittered {
    /// `inner` jittered by `ppm` millionths of its (shortest) gap.
    pub fn new(inner: Constant, ppm: u32, rng: rand_chacha::ChaCha8Rng) -> Self {
        let gap = inner.steps.step.0;
        let max = (u128::from(gap) * u128::from(ppm) / 1_000_000) as Nanos;
        Jittered { inner, max, rng }
    }
}

impl Source for Jittered {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        use rand::Rng;
        let Some(mut arrival) = self.inner.next_arrival(keys)? else {
            return Ok(None);
        };
        // Drawn for every request, so the k-th delay depends on k alone.
        let delay = self.rng.random_range(0..=self.max);
        arrival.time = arrival.time.saturating_add(delay);
        // Later requests are later still: the source ends here.
        if arrival.time >= self.inner.stop {
            return Ok(None);
        }
        Ok(Some(arrival))
    }
}

/// [`Rate::nth_event`] for `k = 0, 1, 2, ...` in turn, without a division per step: the
/// quotient and remainder of `k·per / count` are carried from one `k` to the next, so each
/// offset is still the exact quotient (nothing accumulates but integers).
#[derive(Debug, Clone, Copy)]
struct Steps {
    /// `⌊k·per / count⌋`, or `None` once it no longer fits in 64 bits.
    quotient: Option<Nanos>,
    /// `k·per mod count`.
    remainder: u64,
    /// `⌊per / count⌋` and `per mod count`: what one step adds.
    step: (Nanos, u64),
    count: u64,
}

impl Steps {
    fn new(rate: Rate) -> Self {
        Steps {
            quotient: Some(0),
            remainder: 0,
            step: (rate.per / rate.count, rate.per % rate.count),
            count: rate.count,
        }
    }

    /// The current `k`'s offset, `None` past the end of time.
    #[inline]
    fn offset(&self) -> Option<Nanos> {
        self.quotient
    }

    /// On to `k + 1`.
    #[inline]
    fn advance(&mut self) {
        let (whole, part) = self.step;
        // `remainder + part >= count`, written so that nothing overflows.
        let carry = self.remainder >= self.count - part;
        self.remainder = if carry {
            self.remainder - (self.count - part)
        } else {
            self.remainder + part
        };
        self.quotient = self
            .quotient
            .and_then(|q| q.checked_add(whole))
            .and_then(|q| q.checked_add(carry as u64));
    }
}

/// Clients each at their own constant rate: a heap of each client's next request time.
///
/// Client `j`'s `k`-th request is at `start + phase_j + k / rate_j`, computed from `k` like
/// [`Constant`]; `phase_j = j/n` of its own gap spreads the clients out. The heap is allocated
/// once; popping and pushing reuse it.
pub struct Staggered {
    source: u16,
    start: Nanos,
    stop: Nanos,
    rates: Vec<Rate>,
    phases: Vec<Nanos>,
    clients: Clients,
    /// `(time, client, k)` of each client's next request.
    heap: BinaryHeap<Reverse<(Nanos, u32, u64)>>,
}

impl Staggered {
    pub fn new(spec: &SourceSpec, source: u16, rates: Vec<Rate>, clients: Clients) -> Self {
        let n = clients.len() as u64;
        let phases: Vec<Nanos> = rates
            .iter()
            .enumerate()
            .map(|(j, r)| (r.per as u128 * j as u128 / (r.count as u128 * n as u128)) as Nanos)
            .collect();
        let mut heap = BinaryHeap::with_capacity(clients.len());
        for (j, &phase) in phases.iter().enumerate() {
            heap.push(Reverse((spec.start.saturating_add(phase), j as u32, 0)));
        }
        Staggered {
            source,
            start: spec.start,
            stop: spec.stop,
            rates,
            phases,
            clients,
            heap,
        }
    }
}

impl Source for Staggered {
    #[inline]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let Some(Reverse((time, j, k))) = self.heap.pop() else {
            return Ok(None);
        };
        if time >= self.stop {
            return Ok(None);
        }
        let next = self.rates[j as usize]
            .nth_event(k + 1)
            .and_then(|o| o.checked_add(self.phases[j as usize]))
            .and_then(|o| o.checked_add(self.start));
        if let Some(next) = next {
            self.heap.push(Reverse((next, j, k + 1)));
        }
        let client = self.clients.get(j as usize);
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }
}

/// When batches happen.
enum Schedule {
    /// At `first`, `first + every`, ...
    Every { first: Nanos, every: Nanos },
    /// At each of these times, in order.
    At([Nanos; 2]),
    /// At `first - lead` and `first`, then `every` later, and so on: every window boundary.
    Pairs {
        first: Nanos,
        lead: Nanos,
        every: Nanos,
    },
}

/// Batches of `count` requests per client, each batch spread evenly over `spread`.
pub struct Batches {
    source: u16,
    start: Nanos,
    stop: Nanos,
    schedule: Schedule,
    count: u64,
    spread: Nanos,
    clients: Clients,
    batch: u64,
    /// Position within the batch: request `i` of client `j` is `i·clients + j`.
    pos: u64,
}

impl Batches {
    /// Every `every` from the source's start, each client sends `count` requests.
    pub fn bursts(
        spec: &SourceSpec,
        source: u16,
        count: u64,
        every: Nanos,
        spread: Nanos,
        clients: Clients,
    ) -> Self {
        let schedule = Schedule::Every {
            first: spec.start,
            every,
        };
        Self::new(spec, source, schedule, count, spread, clients)
    }

    /// `count` requests per client at `at - lead`, and `count` more at the boundary `at`; with
    /// `repeat_every`, again at every later boundary `at + i·repeat_every`.
    #[allow(clippy::too_many_arguments)]
    pub fn boundary(
        spec: &SourceSpec,
        source: u16,
        count: u64,
        at: Nanos,
        lead: Nanos,
        repeat_every: Option<Nanos>,
        spread: Nanos,
        clients: Clients,
    ) -> Self {
        let schedule = match repeat_every {
            Some(every) => Schedule::Pairs {
                first: at,
                lead,
                every,
            },
            None => Schedule::At([at - lead, at]),
        };
        Self::new(spec, source, schedule, count, spread, clients)
    }

    fn new(
        spec: &SourceSpec,
        source: u16,
        schedule: Schedule,
        count: u64,
        spread: Nanos,
        clients: Clients,
    ) -> Self {
        Batches {
            source,
            start: spec.start,
            stop: spec.stop,
            schedule,
            count,
            spread,
            clients,
            batch: 0,
            pos: 0,
        }
    }

    fn batch_time(&self, b: u64) -> Option<Nanos> {
        match self.schedule {
            Schedule::Every { first, every } => every.checked_mul(b)?.checked_add(first),
            Schedule::At(times) => times.get(b as usize).copied(),
            Schedule::Pairs { first, lead, every } => {
                let boundary = every.checked_mul(b / 2)?.checked_add(first)?;
                Some(if b.is_multiple_of(2) {
                    boundary - lead
                } else {
                    boundary
                })
            }
        }
    }
}

impl Source for Batches {
    #[inline]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let n = self.clients.len() as u64;
        loop {
            if self.pos == self.count * n {
                self.batch += 1;
                self.pos = 0;
            }
            let Some(batch_at) = self.batch_time(self.batch) else {
                return Ok(None);
            };
            if batch_at >= self.stop {
                return Ok(None);
            }
            let (i, j) = (self.pos / n, self.pos % n);
            self.pos += 1;
            let offset = (i as u128 * self.spread as u128 / self.count as u128) as Nanos;
            let time = batch_at + offset;
            if time < self.start {
                continue;
            }
            if time >= self.stop {
                return Ok(None);
            }
            let client = self.clients.get(j as usize);
            return Ok(Some(Arrival::new(time, client.key, client.id, self.source)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Steps `0..n` against [`Rate::nth_event`] computed from each `k`.
    fn check(count: u64, per: u64, n: u64) -> std::result::Result<(), TestCaseError> {
        let rate = Rate { count, per };
        let mut steps = Steps::new(rate);
        for k in 0..n {
            prop_assert_eq!(steps.offset(), rate.nth_event(k), "k = {}", k);
            steps.advance();
        }
        Ok(())
    }

    proptest! {
        /// Carried from step to step, the offsets are the exact quotients, up to and past the
        /// end of time (huge `per`: the quotient stops fitting within a few steps).
        #[test]
        fn steps_are_the_exact_quotients(count in 1u64.., per in 1u64.., small in 1u64..1000) {
            check(count, per, 200)?;
            check(small, per, 200)?;
            check(count, small, 200)?;
            check(small, small * 7 + 3, 2000)?;
        }
    }

    /// Jitter delays each request by at most its share of the gap, keeps their order, and is
    /// the same for the same stream.
    #[test]
    fn jitter_stays_within_its_share_and_keeps_order() {
        use crate::traffic::Arrivals;
        use crate::traffic::tests::{arrivals, spec};
        let rate = Rate::new(1, 1_000_000_000).unwrap();
        let times = |ppm: u32, seed: u64| {
            let mut spec = spec(Arrivals::Constant(rate), 1, 60_000_000_000);
            spec.jitter_ppm = ppm;
            let (a, _) = arrivals(&spec, seed);
            a.iter().map(|a| a.time).collect::<Vec<_>>()
        };
        let plain = times(0, 3);
        let jittered = times(50_000, 3);
        assert_eq!(jittered, times(50_000, 3));
        assert_ne!(jittered, times(50_000, 4));
        assert_eq!(
            plain,
            (0..60).map(|k| k * 1_000_000_000).collect::<Vec<_>>()
        );
        assert!(jittered.len() >= 59, "{}", jittered.len());
        for (k, t) in jittered.iter().enumerate() {
            let delay = t - k as u64 * 1_000_000_000;
            assert!(delay <= 50_000_000, "request {k} late by {delay} ns");
        }
        assert!(jittered.windows(2).all(|w| w[0] < w[1]));
        assert_ne!(jittered[..59], plain[..59]);
    }

    #[test]
    fn steps_at_the_edges() {
        // One nanosecond apart, thirds of a nanosecond, the last representable step, and a
        // count so large that `remainder + part` would overflow a u64.
        for (count, per) in [
            (1, 1),
            (3, 1),
            (1, u64::MAX),
            (2, u64::MAX),
            (u64::MAX, u64::MAX - 1),
            (u64::MAX - 1, u64::MAX),
        ] {
            check(count, per, 5000).unwrap();
        }
    }
}
