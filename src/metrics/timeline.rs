//! Timeline tally: counts per time bucket (`timeseries.csv`, the rate charts) and the last event.
//!
//! Its memory is bounded by the scenario, not by the latest event: releases and retries may come
//! long after the end (a one-day `Retry-After`), so buckets are kept one by one up to twice the
//! scenario's duration ([`TAIL_FACTOR`]) and everything later is counted in one final bucket.

use super::TimeBucket;
use crate::time::Nanos;

/// Buckets are kept one by one up to this many times the scenario's duration.
pub const TAIL_FACTOR: u64 = 2;

pub(super) struct Timeline {
    bucket: Nanos,
    /// Index of the final bucket, which also counts everything after it.
    last: usize,
    buckets: Vec<TimeBucket>,
    last_event: Nanos,
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
            last_event: 0,
        }
    }

    #[inline]
    fn at(&mut self, time: Nanos) -> &mut TimeBucket {
        self.last_event = self.last_event.max(time);
        let i = ((time / self.bucket) as usize).min(self.last);
        if i >= self.buckets.len() {
            self.buckets.resize_with(i + 1, TimeBucket::default);
        }
        &mut self.buckets[i]
    }

    /// A request arrives at `t`; `delayed`/`rejected` say what the limiter did with it.
    #[inline]
    pub fn on_arrival(&mut self, t: Nanos, retry: bool, delayed: bool, rejected: bool) {
        let b = self.at(t);
        b.offered += 1;
        b.retries += retry as u64;
        b.delayed += delayed as u64;
        b.rejected += rejected as u64;
    }

    /// A request reaches the backend at `t`.
    #[inline]
    pub fn on_admit(&mut self, t: Nanos) {
        self.at(t).admitted += 1;
    }

    /// The buckets, and the time of the last arrival or release.
    pub fn finish(self) -> (Vec<TimeBucket>, Nanos) {
        (self.buckets, self.last_event)
    }
}
