//! Poisson arrivals.
//!
//! The only floating point in traffic generation: exponential gaps are sampled as `f64` and
//! accumulated in an `f64` offset from the source's start (exact to well under a nanosecond for
//! runs of up to about 100 days), then floored to whole nanoseconds. N independent Poisson
//! clients of rate r are, exactly in distribution, one Poisson process of rate N·r whose events
//! go to a uniformly chosen client, which is how they are generated (with per-client rates, the
//! client is chosen in proportion to its rate: see [`super::population`]).

use super::population::Picker;
use super::{Arrival, Client, KeySpace, Source, SourceSpec};
use crate::error::Result;
use crate::time::{Nanos, Rate};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp1};

pub struct Poisson {
    source: u16,
    start: Nanos,
    stop: Nanos,
    /// Mean gap of the whole source, in nanoseconds.
    mean_gap: f64,
    clients: Vec<Client>,
    picker: Picker,
    offset: f64,
    rng: ChaCha8Rng,
    /// The next arrival's time and client index, drawn one call early so that its client's
    /// entry is prefetched (a million clients miss the cache); `None` before the first call.
    /// The draws are the same, in the same order: only their timing moves.
    ahead: Option<Option<(Nanos, usize)>>,
}

impl Poisson {
    pub fn new(
        spec: &SourceSpec,
        source: u16,
        per_client: Rate,
        clients: Vec<Client>,
        picker: Picker,
        rng: ChaCha8Rng,
    ) -> Self {
        // With per-client rates, the picker's total is the sum of the rates in units of `rate`.
        let mean_gap = per_client.mean_interval_ns() / picker.total();
        Poisson {
            source,
            start: spec.start,
            stop: spec.stop,
            mean_gap,
            clients,
            picker,
            offset: 0.0,
            rng,
            ahead: None,
        }
    }

    /// Draws the next arrival: its gap, then (unless past the end) its client.
    #[inline]
    fn draw(&mut self) -> Option<(Nanos, usize)> {
        let gap: f64 = Exp1.sample(&mut self.rng);
        self.offset += gap * self.mean_gap;
        // The offset is non-negative, so truncation is the floor; the start is added in integers
        // so a late start keeps nanosecond precision.
        let time = self.start.saturating_add(self.offset as u64);
        if time >= self.stop {
            return None;
        }
        Some((time, self.picker.pick(&mut self.rng)))
    }
}

impl Source for Poisson {
    #[inline]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let current = match self.ahead.take() {
            Some(drawn) => drawn,
            None => self.draw(),
        };
        let Some((time, i)) = current else {
            self.ahead = Some(None);
            return Ok(None);
        };
        let next = self.draw();
        if let Some((_, j)) = next {
            crate::prefetch::prefetch(&self.clients, j);
        }
        self.ahead = Some(next);
        let client = self.clients[i];
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }
}
