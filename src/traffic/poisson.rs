//! Poisson arrivals.
//!
//! The only floating point in traffic generation: exponential gaps are sampled as `f64` and
//! accumulated in an `f64` offset from the source's start (exact to well under a nanosecond for
//! runs of up to about 100 days), then floored to whole nanoseconds. N independent Poisson
//! clients of rate r are, exactly in distribution, one Poisson process of rate N·r whose events
//! go to a uniformly chosen client, which is how they are generated (with per-client rates, the
//! client is chosen in proportion to its rate: see [`super::population`]).

use super::population::{Clients, Picker};
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
    clients: Clients,
    picker: Picker,
    offset: f64,
    rng: ChaCha8Rng,
    /// Draws made ahead of the arrival being returned (see [`Ahead`]).
    ahead: Ahead,
}

/// A Poisson source's draws ahead of its current arrival, so that memory is asked for early in
/// a keyspace too large for the caches: the next arrival with its client read (the engine's
/// [`Source::hint`], whose entries it fetches a request earlier than it could otherwise), and
/// the one after, whose client's line is on its way. The draws are the same, in the same
/// order: only their timing moves.
enum Ahead {
    /// Nothing drawn yet.
    Start,
    Drawn {
        next: Option<(Nanos, Client)>,
        after: Option<(Nanos, usize)>,
    },
}

impl Poisson {
    pub fn new(
        spec: &SourceSpec,
        source: u16,
        per_client: Rate,
        clients: Clients,
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
            ahead: Ahead::Start,
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
    // Always inlined into `next_into` (and so into the engine's loop): called, it returned the
    // arrival through memory, read back with wider loads than the stores that wrote it, and the
    // loop stalled there on store forwarding (a twentieth of a 10^6-key run).
    #[inline(always)]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        let (next, after) = match self.ahead {
            Ahead::Drawn { next, after } => (next, after),
            Ahead::Start => {
                let first = self.draw();
                let second = first.and_then(|_| self.draw());
                (first.map(|(t, i)| (t, self.clients.get(i))), second)
            }
        };
        let Some((time, client)) = next else {
            self.ahead = Ahead::Drawn { next, after };
            return Ok(None);
        };
        let next = after.map(|(t, j)| (t, self.clients.get(j)));
        // No draw after the source's end: the first draw past it ends it.
        let after = next.and_then(|_| self.draw());
        if let Some((_, j)) = after {
            self.clients.prefetch(j);
        }
        self.ahead = Ahead::Drawn { next, after };
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }

    #[inline]
    fn hint(&self) -> Option<Client> {
        match self.ahead {
            Ahead::Drawn {
                next: Some((_, client)),
                ..
            } => Some(client),
            _ => None,
        }
    }
}
