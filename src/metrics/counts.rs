//! Counts tally: what each source offered and what became of it.

use super::{Counts, SourceReport};
use crate::algorithms::Outcome;
use crate::traffic::Role;

pub(super) struct SourceCounts {
    counts: Vec<Counts>,
}

impl SourceCounts {
    pub fn new(sources: usize) -> Self {
        SourceCounts {
            counts: vec![Counts::default(); sources],
        }
    }

    #[inline]
    pub fn on_decision(&mut self, source: u16, retry: bool, outcome: &Outcome) {
        let c = &mut self.counts[source as usize];
        c.offered += 1;
        c.retries += retry as u64;
        match outcome {
            Outcome::Allow => c.allowed += 1,
            Outcome::Delay(_) => c.delayed += 1,
            Outcome::Reject { .. } => c.rejected += 1,
        }
    }

    #[inline]
    pub fn on_abandon(&mut self, source: u16) {
        self.counts[source as usize].abandoned += 1;
    }

    /// Per-source reports (named and in the order of `sources`) and the total.
    pub fn finish<'a>(
        &self,
        sources: impl Iterator<Item = (&'a str, Role)>,
    ) -> (Vec<SourceReport>, Counts) {
        let mut total = Counts::default();
        let reports = sources
            .zip(&self.counts)
            .map(|((name, role), counts)| {
                total.add(counts);
                SourceReport::new(name.to_string(), role, *counts)
            })
            .collect();
        (reports, total)
    }
}
