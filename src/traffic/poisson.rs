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
use std::collections::VecDeque;

/// Poisson arrivals at a flat rate: exponential gaps for the whole source, each request's
/// client drawn by a [`Picker`].
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

/// How many arrivals a Poisson source draws ahead of the one it returns.
pub(super) const LOOKAHEAD: usize = 8;

/// A Poisson source's draws ahead of its current arrival, so that memory is asked for early
/// in a keyspace too large for the caches. The engine fetches the state of the client
/// [`Source::hint`] names, several requests before deciding on it: fetched one or two requests
/// ahead, the lines of a million-key run were still on their way when needed. The draws are
/// the same, in the same order: only their timing moves.
struct Ahead {
    /// Arrivals drawn and not returned yet, oldest first: each time with its client's index in
    /// the population. At most [`LOOKAHEAD`], so it never reallocates.
    drawn: VecDeque<(Nanos, usize)>,
    /// The draws have begun (the first call draws a full ring).
    started: bool,
    /// A draw fell past the source's end: nothing more is drawn.
    ended: bool,
}

impl Ahead {
    fn new() -> Ahead {
        Ahead {
            drawn: VecDeque::with_capacity(LOOKAHEAD),
            started: false,
            ended: false,
        }
    }
}

impl Poisson {
    /// Source number `source` of `spec` (its `start` and `stop`): `clients` at a mean of
    /// `per_client` each, chosen by `picker`, every draw from `rng`.
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
            ahead: Ahead::new(),
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

    /// Draws one more arrival into the ring, unless the source has ended (the first draw past
    /// its end ends it: no draw after it); asks for its client's line in the population.
    #[inline]
    fn draw_ahead(&mut self) {
        if self.ahead.ended {
            return;
        }
        match self.draw() {
            Some(draw) => {
                self.clients.prefetch(draw.1);
                self.ahead.drawn.push_back(draw);
            }
            None => self.ahead.ended = true,
        }
    }
}

impl Source for Poisson {
    // Always inlined into `next_into` (and so into the engine's loop): called, its arrival
    // came back through memory and stalled the loop on store forwarding.
    #[inline(always)]
    fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
        if !self.ahead.started {
            self.ahead.started = true;
            for _ in 0..LOOKAHEAD {
                self.draw_ahead();
            }
        }
        let Some((time, j)) = self.ahead.drawn.pop_front() else {
            return Ok(None);
        };
        self.draw_ahead();
        let client = self.clients.get(j);
        Ok(Some(Arrival::new(time, client.key, client.id, self.source)))
    }

    #[inline]
    fn hint(&self) -> Option<Client> {
        // The furthest draw but one: the newest's client line (in a listed population) was
        // only just asked for.
        let drawn = &self.ahead.drawn;
        let &(_, j) = drawn.get(drawn.len().checked_sub(2)?)?;
        Some(self.clients.get(j))
    }
}
