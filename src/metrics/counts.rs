//! Counts tally: what each source offered and what became of it.

use super::{CostCounts, Counts, SourceReport};
use crate::algorithms::{Cost, Outcome};
use crate::traffic::Role;

pub(super) struct SourceCounts {
    counts: Vec<Counts>,
    /// Per source, the units of cost beyond one per request: the counts in units of cost are
    /// the request counts plus these (kept apart so a request of cost 1 adds nothing here).
    extra: Vec<CostCounts>,
    /// Per source, the units the admitted requests' responses gave back.
    refunds: Vec<u64>,
}

impl SourceCounts {
    pub fn new(sources: usize) -> Self {
        SourceCounts {
            counts: vec![Counts::default(); sources],
            extra: vec![CostCounts::default(); sources],
            refunds: vec![0; sources],
        }
    }

    #[inline]
    pub fn on_decision(&mut self, source: u16, retry: bool, outcome: &Outcome, cost: (Cost, Cost)) {
        let (cost, refund) = cost;
        let c = &mut self.counts[source as usize];
        c.offered += 1;
        c.retries += retry as u64;
        match outcome {
            Outcome::Allow => c.allowed += 1,
            Outcome::Delay(_) => c.delayed += 1,
            Outcome::Reject { .. } => c.rejected += 1,
        }
        if cost > 1 {
            let extra = u64::from(cost - 1);
            let w = &mut self.extra[source as usize];
            w.offered += extra;
            match outcome {
                Outcome::Reject { .. } => w.rejected += extra,
                _ => w.admitted += extra,
            }
        }
        if refund > 0 && outcome.is_admitted() {
            self.refunds[source as usize] += u64::from(refund);
        }
    }

    /// The units of cost of every source and their total, when a request weighed more than 1
    /// or the scenario says its requests may (`costed`); what they settled, when a response
    /// gave back or the scenario says its responses may (`settles`).
    pub fn costs(&self, costed: bool, settles: bool) -> Option<(Vec<CostCounts>, CostCounts)> {
        let settles = settles || self.refunds.iter().any(|&r| r > 0);
        let costly = self.extra.iter().any(|e| e.offered > 0);
        (costly || costed).then(|| {
            let each: Vec<CostCounts> = self
                .counts
                .iter()
                .zip(&self.extra)
                .zip(&self.refunds)
                .map(|((c, e), refunds)| CostCounts {
                    offered: c.offered + e.offered,
                    admitted: c.admitted() + e.admitted,
                    rejected: c.rejected + e.rejected,
                    settled: settles.then(|| c.admitted() + e.admitted - refunds),
                    ..CostCounts::default()
                })
                .collect();
            let total = each.iter().fold(CostCounts::default(), |t, c| t.plus(c));
            (each, total)
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
