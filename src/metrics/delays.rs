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
        self.record_n(d, 1);
    }

    /// Records `d` as `n` values (`n` of at least 1).
    #[inline]
    fn record_n(&mut self, d: Nanos, n: u64) {
        // `record_n` grows the auto-resizing histogram; `saturating_record_n` would clamp
        // every value to its current (initially tiny) range.
        if self.histogram.record_n(d, n).is_err() {
            self.histogram.saturating_record_n(d, n);
        }
        self.sum += d as u128 * n as u128;
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
    /// Where requests may weigh more than one: each delay counted once per unit of cost.
    weighed: Option<Distribution>,
}

/// The delays of a run: every delay, the legit ones, the abusive ones and, where requests
/// weigh, every delay per unit of cost.
pub(super) struct DelaysPart {
    pub all: DelayStats,
    pub legit: DelayStats,
    pub abusive: DelayStats,
    pub per_unit: Option<DelayStats>,
}

impl Delays {
    /// `costed`: requests may weigh more than one.
    pub fn new(costed: bool) -> Self {
        Delays {
            all: Distribution::new(),
            legit: Distribution::new(),
            abusive: Distribution::new(),
            weighed: costed.then(Distribution::new),
        }
    }

    /// A delay `d` of a request of `cost` units.
    #[inline]
    pub fn on_delay(&mut self, d: Nanos, legit: bool, cost: u32) {
        self.all.record(d);
        if legit {
            self.legit.record(d);
        } else {
            self.abusive.record(d);
        }
        if let Some(w) = &mut self.weighed {
            w.record_n(d, u64::from(cost.max(1)));
        }
    }

    pub fn finish(&self) -> DelaysPart {
        DelaysPart {
            all: self.all.stats(),
            legit: self.legit.stats(),
            abusive: self.abusive.stats(),
            per_unit: self.weighed.as_ref().map(Distribution::stats),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delay of a request of 9 units weighs 9 times one of 1 unit: with one of each, the
    /// median unit waited the costly request's delay.
    #[test]
    fn a_costly_request_weighs_its_units() {
        let mut d = Delays::new(true);
        d.on_delay(1_000, true, 1);
        d.on_delay(50_000, false, 9);
        let part = d.finish();
        assert_eq!(part.all.p50_ns, 1_000);
        let unit = part.per_unit.expect("costed");
        assert_eq!(unit.count, 10);
        assert_eq!(unit.p50_ns, 50_000);
        assert_eq!(unit.mean_ns, (1_000.0 + 9.0 * 50_000.0) / 10.0);
        assert!(Delays::new(false).finish().per_unit.is_none());
    }
}
