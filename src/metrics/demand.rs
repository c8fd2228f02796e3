//! What was *asked for*, per key and per client, independent of any algorithm: whether each one's
//! offered traffic ever exceeded the policy (more than L requests in some rolling window W).
//! This is the ground truth for false positives, false negatives and NAT collateral damage.

use super::dense::Parts;
use super::timelog::TimeLog;
use crate::time::Nanos;

/// One id's offered requests still in its window, `(now−W, now]`. Whether the id ever
/// exceeded the policy is a flag its owner keeps beside it (in spare bytes of its counts: the
/// entries stay a whole number of cache lines).
#[derive(Debug, Default, Clone)]
pub(super) struct Offered {
    recent: TimeLog,
}

impl Offered {
    /// The window of a client that sent exactly the requests of a key whose exact limiter's
    /// log is `exact` and whose traffic `exceeded` the policy or not (see [`super::keys`]:
    /// until it exceeds, that log is the key's offered traffic in the window; after, a
    /// window is never read again).
    pub fn mirror(exact: &TimeLog, exceeded: bool) -> Offered {
        Offered {
            recent: if exceeded {
                TimeLog::default()
            } else {
                exact.clone()
            },
        }
    }

    /// Whether the window is on the heap.
    pub fn is_spilled(&self) -> bool {
        self.recent.is_spilled()
    }
}

/// The judge of offered-traffic windows for a dense id space (keys, or clients), each id's
/// [`Offered`] kept with the id's other state.
pub(super) struct Demand {
    limit: u64,
    window: Nanos,
    /// Ids whose window moved to the heap: the only ones a sweep has anything to free.
    spilled: Vec<u32>,
}

impl Demand {
    /// A judge whose ids in `spilled` (and only those) have their window on the heap.
    pub fn new(limit: u64, window: Nanos, spilled: Vec<u32>) -> Self {
        Demand {
            limit,
            window,
            spilled,
        }
    }

    /// Records a request of `id` (its window `o`, and `exceeded`, whether it ever offered more
    /// than L requests in one rolling window) at `t` (times never decrease).
    #[inline]
    pub fn offer(&mut self, id: u32, o: &mut Offered, exceeded: &mut bool, t: Nanos) {
        if *exceeded {
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
            *exceeded = true;
            o.recent.clear();
        }
    }

    /// Frees the heap windows of `offered` (by id) that are short by `now` (back inline).
    /// Inline windows hold nothing to free, and expired times are dropped by the next
    /// [`Demand::offer`] anyway, so the sweep visits only the spilled ones: its cost follows
    /// the busy ids, not every id ever seen.
    pub fn sweep(&mut self, offered: &mut (impl Parts<Offered> + ?Sized), now: Nanos) {
        let window = self.window;
        super::dense::retain_entries(&mut self.spilled, offered, |o: &mut Offered| {
            let recent = &mut o.recent;
            // What the id's next offer would drop; what is left moves back inline if short.
            while recent
                .front()
                .is_some_and(|a| a.saturating_add(window) <= now)
            {
                recent.pop_front();
            }
            recent.fit_inline()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceeding_is_more_than_l_in_one_window() {
        let mut d = Demand::new(2, 10, Vec::new());
        let (mut o, mut exceeded) = (Offered::default(), false);
        for t in [0, 5, 10, 15] {
            d.offer(0, &mut o, &mut exceeded, t); // never 3 in (t−10, t]
        }
        assert!(!exceeded);
        d.offer(0, &mut o, &mut exceeded, 16); // (6, 16] holds 10, 15, 16
        assert!(exceeded);
    }
}
