//! Timeline tally: counts per time bucket (`timeseries.csv`, the rate charts) and the last event.
//!
//! Its memory is bounded by the scenario, not by the latest event: releases and retries may come
//! long after the end (a one-day `Retry-After`), so buckets are kept one by one up to twice the
//! scenario's duration ([`TAIL_FACTOR`]) and everything later is counted in one final bucket.

use super::TimeBucket;
use crate::algorithms::Cost;
use crate::time::Nanos;

/// Buckets are kept one by one up to this many times the scenario's duration.
pub const TAIL_FACTOR: u64 = 2;

pub(super) struct Timeline {
    bucket: Nanos,
    /// Index of the final bucket, which also counts everything after it.
    last: usize,
    buckets: Vec<TimeBucket>,
    /// Per bucket, the most admissions of one key in its rolling window at an admission in
    /// the bucket: the per-key quantity the policy's limit bounds, over time.
    busiest_key: Vec<u64>,
    /// Per source, per bucket: retries (sources that never retry keep an empty list).
    retries_by_source: Vec<Vec<u64>>,
    last_event: Nanos,
    /// The bucket of the latest lookup, `[start, end)` and its index: times come mostly in
    /// order, so most lookups skip the division.
    cached: (Nanos, Nanos, usize),
}

/// What the timeline tally adds to the report: the buckets, the busiest key per bucket,
/// retries per source and bucket, and the time of the last arrival or release.
pub(super) struct TimelinePart {
    pub buckets: Vec<TimeBucket>,
    pub busiest_key: Vec<u64>,
    pub retries_by_source: Vec<Vec<u64>>,
    pub last_event: Nanos,
}

/// The index of the final bucket of a run of `duration` with buckets of `bucket`: the one that
/// starts at `TAIL_FACTOR × duration` (rounded up to buckets) and counts every later event.
pub fn final_bucket(duration: Nanos, bucket: Nanos) -> usize {
    duration.div_ceil(bucket).saturating_mul(TAIL_FACTOR).max(1) as usize
}

impl Timeline {
    pub fn new(duration: Nanos, bucket: Nanos) -> Self {
        Timeline {
            bucket,
            last: final_bucket(duration, bucket),
            buckets: Vec::new(),
            busiest_key: Vec::new(),
            retries_by_source: Vec::new(),
            last_event: 0,
            // Empty: the first lookup divides.
            cached: (0, 0, 0),
        }
    }

    #[inline]
    fn index(&mut self, time: Nanos) -> usize {
        let (start, end, i) = self.cached;
        if start <= time && time < end {
            return i;
        }
        self.index_slow(time)
    }

    #[cold]
    fn index_slow(&mut self, time: Nanos) -> usize {
        let i = ((time / self.bucket) as usize).min(self.last);
        // `i × bucket <= time`: no overflow. The final bucket runs to the end of time.
        let start = i as Nanos * self.bucket;
        let end = if i == self.last {
            Nanos::MAX
        } else {
            start.saturating_add(self.bucket)
        };
        self.cached = (start, end, i);
        i
    }

    /// The index of the bucket of `time`, which then exists.
    #[inline]
    fn at(&mut self, time: Nanos) -> usize {
        self.last_event = self.last_event.max(time);
        let i = self.index(time);
        if i >= self.buckets.len() {
            self.buckets.resize_with(i + 1, TimeBucket::default);
        }
        i
    }

    /// A request of `source` weighing `cost` arrives at `t`; `delayed`/`rejected` say what the
    /// limiter did.
    #[inline]
    pub fn on_arrival(
        &mut self,
        t: Nanos,
        (source, cost): (u32, Cost),
        retry: bool,
        delayed: bool,
        rejected: bool,
    ) {
        let i = self.at(t);
        let b = &mut self.buckets[i];
        b.offered += 1;
        b.retries += retry as u64;
        b.delayed += delayed as u64;
        b.rejected += rejected as u64;
        let cost = u64::from(cost);
        b.cost_offered += if retry { 0 } else { cost };
        b.cost_admitted += if rejected { 0 } else { cost };
        if retry {
            let per_bucket = super::dense::slot(&mut self.retries_by_source, source);
            *super::dense::slot(per_bucket, i as u32) += 1;
        }
    }

    /// A request reaches the backend at `t`, its key then holding `in_window` admissions in
    /// its rolling window.
    #[inline]
    pub fn on_admit(&mut self, t: Nanos, in_window: u64) {
        let i = self.at(t);
        self.buckets[i].admitted += 1;
        let i = i as u32;
        let busiest = super::dense::slot(&mut self.busiest_key, i);
        *busiest = (*busiest).max(in_window);
    }

    pub fn finish(self) -> TimelinePart {
        TimelinePart {
            buckets: self.buckets,
            busiest_key: self.busiest_key,
            retries_by_source: self.retries_by_source,
            last_event: self.last_event,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket's cost: every first try's offered, every request not refused admitted (a
    /// delayed one when decided), a retry's cost offered again only in `offered`'s count.
    #[test]
    fn a_bucket_weighs_its_requests() {
        let mut t = Timeline::new(100, 10);
        t.on_arrival(1, (0, 5), false, false, false);
        t.on_arrival(2, (0, 7), false, true, false);
        t.on_arrival(3, (0, 11), false, false, true);
        t.on_arrival(4, (0, 11), true, false, false);
        t.on_arrival(12, (1, 2), false, false, false);
        let b = t.finish().buckets;
        let costs: Vec<(u64, u64)> = b
            .iter()
            .map(|b| (b.cost_offered, b.cost_admitted))
            .collect();
        assert_eq!(costs, [(5 + 7 + 11, 5 + 7 + 11), (2, 2)]);
        assert_eq!((b[0].offered, b[0].retries, b[0].rejected), (4, 1, 1));
    }

    /// The cached bucket gives the index the division gives, in and out of order, up to the
    /// final bucket and the end of time.
    #[test]
    fn cached_index_matches_the_division() {
        let (duration, bucket) = (100, 10);
        let mut t = Timeline::new(duration, bucket);
        let last = final_bucket(duration, bucket);
        assert_eq!(last, 20);
        for time in [
            0,
            9,
            10,
            5,
            19,
            20,
            199,
            200,
            201,
            10_000,
            150,
            Nanos::MAX,
            0,
            Nanos::MAX - 1,
            Nanos::MAX,
        ] {
            let expected = ((time / bucket) as usize).min(last);
            assert_eq!(t.index(time), expected, "at {time}");
        }
        // A bucket that does not divide the end of time: the last whole one still ends there.
        let mut t = Timeline::new(Nanos::MAX, Nanos::MAX / 3);
        for time in [0, Nanos::MAX / 3, Nanos::MAX - 1, Nanos::MAX, 1] {
            let expected = ((time / (Nanos::MAX / 3)) as usize).min(t.last);
            assert_eq!(t.index(time), expected, "at {time}");
        }
    }
}
