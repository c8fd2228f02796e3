//! Timeline tally: counts per time bucket (`timeseries.csv`, the rate charts) and the last event.

use super::TimeBucket;
use crate::time::Nanos;

pub(super) struct Timeline {
    bucket: Nanos,
    buckets: Vec<TimeBucket>,
    last_event: Nanos,
}

impl Timeline {
    pub fn new(bucket: Nanos) -> Self {
        Timeline {
            bucket,
            buckets: Vec::new(),
            last_event: 0,
        }
    }

    #[inline]
    fn at(&mut self, time: Nanos) -> &mut TimeBucket {
        self.last_event = self.last_event.max(time);
        let i = (time / self.bucket) as usize;
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
