//! Delays tally: how long shapers held admitted requests back, for everyone and for legit traffic.

use super::DelayStats;
use crate::time::Nanos;
use hdrhistogram::Histogram;

/// A distribution of delays: HdrHistogram for percentiles, exact sum and maximum.
pub(super) struct Distribution {
    histogram: Histogram<u64>,
    sum: u128,
    max: Nanos,
}

impl Distribution {
    fn new() -> Self {
        Distribution {
            histogram: Histogram::new(3).expect("3 significant figures is valid"),
            sum: 0,
            max: 0,
        }
    }

    #[inline]
    fn record(&mut self, d: Nanos) {
        // `record` grows the auto-resizing histogram; `saturating_record` would clamp every
        // value to its current (initially tiny) range.
        if self.histogram.record(d).is_err() {
            self.histogram.saturating_record(d);
        }
        self.sum += d as u128;
        self.max = self.max.max(d);
    }

    fn stats(&self) -> DelayStats {
        let h = &self.histogram;
        if h.is_empty() {
            return DelayStats::default();
        }
        // HdrHistogram reports the top of a value's bucket; never above the exact maximum.
        let q = |q: f64| h.value_at_quantile(q).min(self.max);
        DelayStats {
            count: h.len(),
            mean_ns: self.sum as f64 / h.len() as f64,
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: self.max,
        }
    }
}

pub(super) struct Delays {
    all: Distribution,
    legit: Distribution,
    abusive: Distribution,
}

impl Delays {
    pub fn new() -> Self {
        Delays {
            all: Distribution::new(),
            legit: Distribution::new(),
            abusive: Distribution::new(),
        }
    }

    #[inline]
    pub fn on_delay(&mut self, d: Nanos, legit: bool) {
        self.all.record(d);
        if legit {
            self.legit.record(d);
        } else {
            self.abusive.record(d);
        }
    }

    /// Every delay, the legit ones and the abusive ones.
    pub fn finish(&self) -> (DelayStats, DelayStats, DelayStats) {
        (self.all.stats(), self.legit.stats(), self.abusive.stats())
    }
}
