//! What was *asked for*, per key and per client, independent of any algorithm: whether each one's
//! offered traffic ever exceeded the policy (more than L requests in some rolling window W).
//! This is the ground truth for false positives, false negatives and NAT collateral damage.

use super::timelog::TimeLog;
use crate::time::Nanos;

#[derive(Debug, Default)]
struct Offered {
    /// Offered request times in `(now−W, now]`.
    recent: TimeLog,
    exceeded: bool,
}

/// Offered-traffic windows for a dense id space (keys, or clients).
pub struct Demand {
    limit: u64,
    window: Nanos,
    ids: Vec<Offered>,
    /// Ids whose window moved to the heap: the only ones a sweep has anything to free.
    spilled: Vec<u32>,
}

impl Demand {
    pub fn new(limit: u64, window: Nanos) -> Self {
        Demand {
            limit,
            window,
            ids: Vec::new(),
            spilled: Vec::new(),
        }
    }

    #[inline]
    pub fn prefetch(&self, id: u32) {
        super::dense::prefetch(&self.ids, id);
    }

    /// Records a request of `id` at `t` (times never decrease).
    #[inline]
    pub fn offer(&mut self, id: u32, t: Nanos) {
        let i = id as usize;
        if i >= self.ids.len() {
            self.ids.resize_with(i + 1, Offered::default);
        }
        let o = &mut self.ids[i];
        if o.exceeded {
            return; // settled: nothing later can undo it
        }
        while o
            .recent
            .front()
            .is_some_and(|a| a.saturating_add(self.window) <= t)
        {
            o.recent.pop_front();
        }
        if o.recent.push_back(t) {
            self.spilled.push(id);
        }
        if o.recent.len() as u64 > self.limit {
            o.exceeded = true;
            o.recent.clear();
        }
    }

    /// Whether `id` ever offered more than L requests in one rolling window.
    pub fn exceeded(&self, id: u32) -> bool {
        self.ids.get(id as usize).is_some_and(|o| o.exceeded)
    }

    /// Frees the heap windows that are empty by `now`. Inline windows hold nothing to free, and
    /// expired times are dropped by the next [`Demand::offer`] anyway, so the sweep visits only
    /// the spilled ones: its cost follows the busy keys, not every key ever seen.
    pub fn sweep(&mut self, now: Nanos) {
        let (ids, window) = (&mut self.ids, self.window);
        self.spilled.retain(|&id| {
            let o = &mut ids[id as usize];
            if o.recent
                .back()
                .is_some_and(|t| t.saturating_add(window) <= now)
            {
                o.recent.clear();
            }
            o.recent.is_spilled()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceeding_is_more_than_l_in_one_window() {
        let mut d = Demand::new(2, 10);
        for t in [0, 5, 10, 15] {
            d.offer(0, t); // never 3 in (t−10, t]
        }
        assert!(!d.exceeded(0));
        d.offer(0, 16); // (6, 16] holds 10, 15, 16
        assert!(d.exceeded(0));
        assert!(!d.exceeded(1));
    }
}
