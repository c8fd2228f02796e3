//! Counts tally: what each source offered and what became of it.

use super::{CostCounts, Counts, SourceReport};
use crate::algorithms::{Cost, Outcome};
use crate::traffic::Role;

pub(super) struct SourceCounts {
    counts: Vec<Counts>,
    costs: Vec<CostCounts>,
    /// Whether a request weighed more than 1: only then are costs reported.
    costly: bool,
}

impl SourceCounts {
    pub fn new(sources: usize) -> Self {
        SourceCounts {
            counts: vec![Counts::default(); sources],
            costs: vec![CostCounts::default(); sources],
            costly: false,
        }
    }

    #[inline]
    pub fn on_decision(&mut self, source: u16, retry: bool, outcome: &Outcome, cost: Cost) {
        let c = &mut self.counts[source as usize];
        c.offered += 1;
        c.retries += retry as u64;
        match outcome {
            Outcome::Allow => c.allowed += 1,
            Outcome::Delay(_) => c.delayed += 1,
            Outcome::Reject { .. } => c.rejected += 1,
        }
        let cost = u64::from(cost);
        self.costly |= cost > 1;
        let w = &mut self.costs[source as usize];
        w.offered += cost;
        match outcome {
            Outcome::Reject { .. } => w.rejected += cost,
            _ => w.admitted += cost,
        }
    }

    /// The units of cost of every source and their total, when a request weighed more than 1
    /// or the scenario says its requests may (`costed`).
    pub fn costs(&self, costed: bool) -> Option<(&[CostCounts], CostCounts)> {
        (self.costly || costed).then(|| {
            let total = self
                .costs
                .iter()
                .fold(CostCounts::default(), |t, c| t.plus(c));
            (self.costs.as_slice(), total)
        })
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
