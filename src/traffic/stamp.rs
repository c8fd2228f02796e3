//! Requests completed as they pass: a source's inner stream, with one more field set on each
//! request (its method, its cost) by a [`Stamp`].

use super::{Arrival, KeySpace, ReplayEnd, Source};
use crate::error::Result;

/// What a [`Stamped`] source sets on each of its requests.
pub trait Stamp: Send {
    /// Completes `arrival`.
    fn stamp(&mut self, arrival: &mut Arrival);
}

/// The requests of `inner`, each completed by a [`Stamp`]; everything else is `inner`'s.
pub struct Stamped<S> {
    inner: Box<dyn Source>,
    stamp: S,
}

impl<S: Stamp> Stamped<S> {
    /// `inner`'s requests, stamped by `stamp`.
    pub fn new(inner: Box<dyn Source>, stamp: S) -> Self {
        Stamped { inner, stamp }
    }
}

impl<S: Stamp> Source for Stamped<S> {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        let Some(mut a) = self.inner.next_arrival(keys)? else {
            return Ok(None);
        };
        self.stamp.stamp(&mut a);
        Ok(Some(a))
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }

    fn replay_end(&self) -> Option<ReplayEnd> {
        self.inner.replay_end()
    }
}
