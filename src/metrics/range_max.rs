//! Per time bucket of a run, the most of any value held during it: the charts of budgets and
//! quotas used over time.

use crate::time::Nanos;

/// Per time bucket, the most of any value held during it: each value holds over a span,
/// noted as a range update of a segment tree over the buckets (its tags, read at the end as
/// the maximum on each leaf's path to the root), so a span costs O(log buckets) however long.
pub(super) struct RangeMax {
    bucket: Nanos,
    /// Buckets, the last also holding everything later.
    n: usize,
    tags: Vec<u64>,
}

impl RangeMax {
    pub fn new(duration: Nanos, bucket: Nanos) -> Self {
        let n = super::timeline::final_bucket(duration, bucket) + 1;
        RangeMax {
            bucket,
            n,
            tags: vec![0; 2 * n],
        }
    }

    /// `value` held over `[from, to)`.
    pub fn hold(&mut self, from: Nanos, to: Nanos, value: u64) {
        if from >= to || value == 0 {
            return;
        }
        let index = |t: Nanos| ((t / self.bucket) as usize).min(self.n - 1);
        let (mut l, mut r) = (index(from) + self.n, index(to - 1) + self.n + 1);
        while l < r {
            if l & 1 == 1 {
                self.tags[l] = self.tags[l].max(value);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.tags[r] = self.tags[r].max(value);
            }
            l >>= 1;
            r >>= 1;
        }
    }

    /// Buckets, the last also holding everything later.
    #[cfg(test)]
    pub fn buckets(&self) -> usize {
        self.n
    }

    /// Each bucket's most, up to the last bucket that held anything.
    pub fn finish(&self) -> Vec<u64> {
        let mut out: Vec<u64> = (0..self.n)
            .map(|i| {
                let mut node = i + self.n;
                let mut most = 0;
                while node > 0 {
                    most = most.max(self.tags[node]);
                    node >>= 1;
                }
                most
            })
            .collect();
        while out.last() == Some(&0) {
            out.pop();
        }
        out
    }
}
