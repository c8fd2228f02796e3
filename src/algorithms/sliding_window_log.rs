//! Sliding window log: the admission time of every request still inside the window `(now−W, now]`.
//!
//! The Redis equivalent is a sorted set per key: `ZREMRANGEBYSCORE key -inf now-W`, `ZCARD`, and
//! `ZADD key now now` when admitted. Exact, at the cost of up to `L` timestamps per key. A request
//! of cost `c` adds `c` entries at its time (as `c` unit members would), so it is admitted while
//! the window holds at most `L − c` entries.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common,
};
use crate::time::Nanos;
use std::collections::VecDeque;

/// At most `limit` admissions in any window `(t−W, t]`. Ignores `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindowLog {
    limit: u64,
    window: Nanos,
}

/// Per-key state: admitted timestamps, oldest first.
pub type SlidingWindowLogState = VecDeque<Nanos>;

impl SlidingWindowLog {
    /// Builds the limiter from `params`; `burst` is not used. Fails if `limit` or `window` is 0.
    pub fn new(params: Params) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        Ok(SlidingWindowLog {
            limit: params.limit,
            window: params.window,
        })
    }

    /// When an entry admitted at `t` leaves the window.
    fn expiry(&self, t: Nanos) -> Nanos {
        t.saturating_add(self.window)
    }

    /// The decision on `cost` units at `now` over the log's live entries, those from index
    /// `expired` on (older ones have left the window), without changing the log.
    #[inline]
    fn decide_live(
        &self,
        log: &SlidingWindowLogState,
        expired: usize,
        now: Nanos,
        cost: Cost,
    ) -> Decision {
        let live = (log.len() - expired) as u64;
        let cost = u64::from(cost);
        let newest = log.back().map_or(now, |&t| self.expiry(t));
        if cost > self.limit {
            let fresh_at = if live == 0 { now } else { newest };
            return beyond_capacity(now, fresh_at, self.limit.saturating_sub(live));
        }
        if live + cost <= self.limit {
            Decision::allow(self.limit - live - cost, self.expiry(now))
        } else {
            // Room for `cost` once the oldest `live + cost − limit` live entries have left
            // (limit ≥ 1 and cost ≤ limit, so that entry exists).
            let leaving = log[expired + (live + cost - self.limit) as usize - 1];
            Decision {
                outcome: Outcome::Reject {
                    retry_after: self.expiry(leaving) - now,
                },
                remaining: self.limit.saturating_sub(live),
                reset_at: newest,
            }
        }
    }
}

impl Limiter for SlidingWindowLog {
    type State = SlidingWindowLogState;
    const KIND: AlgorithmKind = AlgorithmKind::SlidingWindowLog;

    fn new_state(&self, _now: Nanos) -> SlidingWindowLogState {
        // Does not allocate: most keys of a run make few requests.
        VecDeque::new()
    }

    fn decide_n(&self, log: &mut SlidingWindowLogState, now: Nanos, cost: Cost) -> Decision {
        while log.front().is_some_and(|&t| self.expiry(t) <= now) {
            log.pop_front();
        }
        let decision = self.decide_live(log, 0, now, cost);
        if decision.outcome.is_admitted() {
            match cost {
                1 => log.push_back(now),
                _ => log.extend(std::iter::repeat_n(now, cost as usize)),
            }
        }
        decision
    }

    fn peek_n(&self, log: &SlidingWindowLogState, now: Nanos, cost: Cost) -> Decision {
        // `decide` without its pruning: the live entries are the ones past the expired prefix.
        let expired = log.partition_point(|&t| self.expiry(t) <= now);
        self.decide_live(log, expired, now, cost)
    }

    /// Up to `units` of the entries logged at `charged_at` leave the log (`ZREM`); entries
    /// already pruned are gone.
    fn refund(&self, log: &mut SlidingWindowLogState, _: Nanos, charged_at: Nanos, units: Cost) {
        let end = log.partition_point(|&t| t <= charged_at);
        let start = log.partition_point(|&t| t < charged_at);
        let from = end - (end - start).min(units as usize);
        log.drain(from..end);
    }

    /// `units` entries at `now`, past the limit if need be (`ZADD` of `units` members).
    fn charge(&self, log: &mut SlidingWindowLogState, now: Nanos, units: Cost) {
        while log.front().is_some_and(|&t| self.expiry(t) <= now) {
            log.pop_front();
        }
        log.extend(std::iter::repeat_n(now, units as usize));
    }

    fn redis_bytes(log: &SlidingWindowLogState) -> usize {
        super::redis::sorted_set(log.len())
    }

    fn is_idle(&self, log: &SlidingWindowLogState, now: Nanos) -> bool {
        log.back().is_none_or(|&t| self.expiry(t) <= now)
    }

    fn heap_bytes(log: &SlidingWindowLogState) -> usize {
        log.capacity() * size_of::<Nanos>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swl(limit: u64, window: Nanos) -> SlidingWindowLog {
        SlidingWindowLog::new(Params {
            limit,
            window,
            burst: 0,
        })
        .unwrap()
    }

    #[test]
    fn window_is_half_open() {
        // L = 2 per 100 ns.
        let l = swl(2, 100);
        let mut s = l.new_state(10);
        assert_eq!(SlidingWindowLog::heap_bytes(&s), 0);
        assert_eq!(l.decide(&mut s, 10), Decision::allow(1, 110));
        assert_eq!(l.decide(&mut s, 60), Decision::allow(0, 160));
        // At 109, entry 10 is still in (9, 109]: retry when it leaves, at 10 + 100 = 110.
        let d = l.decide(&mut s, 109);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!((d.remaining, d.reset_at), (0, 160));
        // At 110 the window is (10, 110]: entry 10 is out, 60 is in.
        assert_eq!(l.decide(&mut s, 110), Decision::allow(0, 210));
        assert_eq!(s, [60, 110]);
        // At 200 only 110 is left: one more fits, then retry at 110 + 100 = 210.
        assert_eq!(l.decide(&mut s, 200), Decision::allow(0, 300));
        let d = l.decide(&mut s, 200);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 10 });
        assert!(SlidingWindowLog::heap_bytes(&s) >= 2 * 8);
    }

    #[test]
    fn idle_when_newest_expires() {
        let l = swl(3, 50);
        let mut s = l.new_state(0);
        l.decide(&mut s, 0);
        l.decide(&mut s, 20);
        // Newest entry 20 leaves at 70.
        assert!(!l.is_idle(&s, 69));
        assert!(l.is_idle(&s, 70));
        assert_eq!(l.decide(&mut s, 70), Decision::allow(2, 120));
        assert!(l.is_idle(&l.new_state(5), 5));
    }

    #[test]
    fn same_instant_requests() {
        // L = 3: three at t = 7, the fourth waits for all three to expire together at 17.
        let l = swl(3, 10);
        let mut s = l.new_state(7);
        for left in [2, 1, 0] {
            assert_eq!(l.decide(&mut s, 7), Decision::allow(left, 17));
        }
        assert_eq!(
            l.decide(&mut s, 7).outcome,
            Outcome::Reject { retry_after: 10 }
        );
        assert_eq!(l.decide(&mut s, 17), Decision::allow(2, 27));
    }

    #[test]
    fn state_size() {
        // Per-key state, as listed in docs/algorithms.md.
        assert_eq!(size_of::<SlidingWindowLogState>(), 32);
    }
}
