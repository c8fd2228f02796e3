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
        }
    }
}

impl Source for Poisson {
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let gap: f64 = Exp1.sample(&mut self.rng);
        self.offset += gap * self.mean_gap;
        // The offset is non-negative, so truncation is the floor; the start is added in integers
        // so a late start keeps nanosecond precision.
        let time = self.start.saturating_add(self.offset as u64);
        if time >= self.stop {
            return Ok(None);
        }
        let client = self.clients[self.picker.pick(&mut self.rng)];
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }
}
