//! Rolling windows over one algorithm's admitted history, per key: policy violations, the worst
//! burst and needless rejections, all exact.
//!
//! A rejection at `t` is *needless* when admitting that one request, and nothing else, would
//! have left every rolling window `(s−W, s]` that contains `t` (that is, every `s` in
//! `[t, t+W)`) within the limit, given everything the algorithm actually admitted before and
//! after `t`. Each rejection is judged alone. Windows after `t` matter: a request refused at
//! 0:30 because the limiter "knows" a burst is coming is not needless if admitting it would
//! have pushed the window ending at 1:10 over the limit. Judging a rejection therefore waits
//! until `t + W` has passed, unless the window ending at `t` is already full (the usual case),
//! which settles it at once.
//!
//! The rejections waiting for their windows wait in one queue for all keys, in time order (a
//! run's events come in time order), not in each key's state: most keys of a large run never
//! have one, and a key's state then fits in fewer cache lines. Each is judged at the first event
//! at or after `t + W` ([`Judge::judge_due`]), before anything at that time is recorded: the
//! key's history then holds every admission in `(t − W, t + W)`, and nothing later matters.

use super::dense::Parts;
use super::harm::Harm;
use super::intent::{Bound, Bounds};
use super::timelog::TimeLog;
use crate::algorithms::KeyId;
use crate::time::Nanos;
use std::collections::VecDeque;

/// One key's admitted history.
#[derive(Debug, Default, Clone)]
pub(super) struct History {
    /// Admission times after `now − 2W`, oldest first. Four inline, not three: a key keeps
    /// two windows of history, three spilled to the heap often (docs/performance.md), and the
    /// fourth time fills the key's entry to its two cache lines exactly.
    admitted: TimeLog<4>,
    /// Index in `admitted` of the first admission inside `(now−W, now]`. Time only moves
    /// forward, so it only advances: counting the current window is amortised O(1).
    window_start: usize,
}

impl History {
    /// Admissions in `(now−W, now]`; `now` is at least the latest admission.
    #[inline(always)]
    fn count_now(&mut self, now: Nanos, window: Nanos) -> u64 {
        while self.window_start < self.admitted.len()
            && self.admitted.get(self.window_start).saturating_add(window) <= now
        {
            self.window_start += 1;
        }
        (self.admitted.len() - self.window_start) as u64
    }

    /// Drops admissions at or before `now − keep`, `keep` being the key's window plus the
    /// longest window (`2W` when all are equal): no judgment still to come can need them (the
    /// rejections still waiting at `now` are after `now − longest`, and look back one window).
    #[inline]
    fn trim(&mut self, now: Nanos, keep: Nanos) {
        while self
            .admitted
            .front()
            .is_some_and(|a| a.saturating_add(keep) <= now)
        {
            self.admitted.pop_front();
            self.window_start = self.window_start.saturating_sub(1);
        }
    }

    /// Admissions kept: those after `now − 2W` for the latest `now` the key was seen at,
    /// oldest first.
    pub fn recent(&self) -> impl Iterator<Item = Nanos> + '_ {
        self.admitted.iter()
    }
}

/// The judge of every key's [`History`], wherever the histories are kept (one per key in the
/// recorder's per-key entries, or a rule's own [`KeyWindows`]): the policy's limit and window,
/// the rejections still to judge, the needless ones found so far, and the keys whose history
/// moved to the heap.
#[derive(Clone)]
pub(super) struct Judge {
    bounds: Bounds,
    /// Keys with a history on the heap: the only ones a periodic sweep must visit (inline
    /// histories hold nothing to free).
    spilled: Vec<KeyId>,
    /// Rejections whose later windows are not complete yet, oldest first, with their keys,
    /// sources and [`super::harm`] flags (16 bytes, as the pair alone).
    pending: VecDeque<(Nanos, KeyId, u16, u8)>,
    pub harm: Harm,
}

impl Judge {
    pub fn new(limit: u64, window: Nanos) -> Self {
        Self::with_bounds(Bounds::uniform(limit, window))
    }

    pub fn with_bounds(bounds: Bounds) -> Self {
        let stride = bounds.stride();
        Judge {
            bounds,
            spilled: Vec::new(),
            pending: VecDeque::new(),
            harm: Harm::per_client(stride),
        }
    }

    /// The bound of `key`.
    #[inline(always)]
    pub fn bound(&self, key: KeyId) -> Bound {
        self.bounds.of(key)
    }

    /// What a history of a key with `window` must keep (see [`History::trim`]).
    #[inline]
    fn keep(&self, window: Nanos) -> Nanos {
        window.saturating_add(self.bounds.longest())
    }

    /// Judges the rejections whose windows have all ended by `now`, against the keys'
    /// `histories`. Called before anything at `now` is recorded, with times that never
    /// decrease.
    // Inlined into every decision: the check alone, since a rejection is rarely due.
    #[inline(always)]
    pub fn judge_due(&mut self, histories: &mut (impl Parts<History> + ?Sized), now: Nanos) {
        let longest = self.bounds.longest();
        if self
            .pending
            .front()
            .is_some_and(|&(t, ..)| t.saturating_add(longest) <= now)
        {
            self.judge_pending(histories, now);
        }
    }

    /// [`Judge::judge_due`]'s work, once something is due.
    #[inline(never)]
    fn judge_pending(&mut self, histories: &mut (impl Parts<History> + ?Sized), now: Nanos) {
        let longest = self.bounds.longest();
        while let Some(&(t, key, source, flags)) = self.pending.front() {
            if t.saturating_add(longest) > now {
                break;
            }
            self.pending.pop_front();
            let b = self.bounds.of(key);
            if is_needless(&histories.part(key).admitted, t, b.window, b.ceiling) {
                self.harm.on_needless(key, source, flags);
            }
        }
    }

    /// The base window (every key's, unless tiers have their own).
    pub fn window(&self) -> Nanos {
        self.bounds.base().window
    }

    /// Admissions of `key` (history `h`) in `(now−W, now]` so far (`now` never decreases).
    #[inline(always)]
    pub fn count_now(&self, key: KeyId, h: &mut History, now: Nanos) -> u64 {
        h.count_now(now, self.bounds.of(key).window)
    }

    /// Records an admission of `key` (history `h`) at `t` (times never decrease; what was due
    /// by `t` judged: [`Judge::judge_due`]) and returns the key's admissions in `(t−W, t]`,
    /// this one included.
    #[inline]
    pub fn admit(&mut self, key: KeyId, h: &mut History, t: Nanos) -> u64 {
        let window = self.bounds.of(key).window;
        h.trim(t, self.keep(window));
        let spilled = h.admitted.push_back(t);
        let count = h.count_now(t, window);
        if spilled {
            self.spilled.push(key);
        }
        count
    }

    /// Records a rejection of `key` (history `h`) at `t` (what was due by `t` judged), of a
    /// request of `source` with [`super::harm`] `flags`.
    #[inline(always)]
    pub fn reject(&mut self, key: KeyId, h: &mut History, t: Nanos, source: u16, flags: u8) {
        // A full window ending at t settles it: admitting one more would exceed the limit.
        let b = self.bounds.of(key);
        if h.count_now(t, b.window) < b.ceiling {
            self.pending.push_back((t, key, source, flags));
        }
    }

    /// Frees the history `h` if nothing in it matters at `now` any more (what was due by
    /// `now` judged). Returns whether it still holds a heap buffer.
    fn sweep_one(&mut self, h: &mut History, now: Nanos) -> bool {
        // The longest window's keep: a sweep does not know the key (keeping more is harmless).
        h.trim(now, self.keep(self.bounds.longest()));
        if h.admitted.is_empty() {
            *h = History::default();
        }
        h.admitted.fit_inline()
    }

    /// Judges what is due by `now`, then frees what `now` allows for the keys with heap
    /// histories (of `histories`, by key id).
    pub fn sweep(&mut self, histories: &mut (impl Parts<History> + ?Sized), now: Nanos) {
        self.judge_due(histories, now);
        let mut spilled = std::mem::take(&mut self.spilled);
        super::dense::retain_entries(&mut spilled, histories, |h| self.sweep_one(h, now));
        self.spilled = spilled;
    }

    /// Needless rejections, once the run is over (every rejection still waiting is judged
    /// against the whole history after it).
    pub fn finish(&mut self, histories: &mut (impl Parts<History> + ?Sized)) -> u64 {
        self.judge_due(histories, Nanos::MAX);
        self.harm.needless
    }
}

/// A [`Judge`] with its own histories, one per key id: a contender rule's windows.
pub struct KeyWindows {
    judge: Judge,
    keys: Vec<History>,
}

impl KeyWindows {
    pub fn new(limit: u64, window: Nanos) -> Self {
        KeyWindows {
            judge: Judge::new(limit, window),
            keys: Vec::new(),
        }
    }

    /// Records an admission at `t` (times never decrease) and returns the key's admissions in
    /// `(t−W, t]`, this one included.
    #[inline]
    pub fn admit(&mut self, key: KeyId, t: Nanos) -> u64 {
        self.judge.judge_due(self.keys.as_mut_slice(), t);
        let h = super::dense::slot(&mut self.keys, key);
        self.judge.admit(key, h, t)
    }

    /// Records a rejection at `t`.
    #[inline(always)]
    pub fn reject(&mut self, key: KeyId, t: Nanos) {
        self.judge.judge_due(self.keys.as_mut_slice(), t);
        let h = super::dense::slot(&mut self.keys, key);
        self.judge.reject(key, h, t, 0, 0)
    }

    /// Settles and frees what `now` allows for the keys with heap histories.
    pub fn sweep(&mut self, now: Nanos) {
        self.judge.sweep(self.keys.as_mut_slice(), now);
    }

    /// Needless rejections, once the run is over.
    pub fn finish(&mut self) -> u64 {
        self.judge.finish(self.keys.as_mut_slice())
    }
}

/// Entries of `sorted` in `(t−W, t]`.
fn count_in<const N: usize>(sorted: &TimeLog<N>, t: Nanos, window: Nanos) -> u64 {
    let lo = sorted.partition_point(|&a| a.saturating_add(window) <= t);
    let hi = sorted.partition_point(|&a| a <= t);
    (hi - lo) as u64
}

/// Whether one more admission at `t` keeps every window `(s−W, s]` with `s ∈ [t, t+W)` at or
/// under `limit`, given the admissions in `sorted`.
fn is_needless<const N: usize>(sorted: &TimeLog<N>, t: Nanos, window: Nanos, limit: u64) -> bool {
    if count_in(sorted, t, window) >= limit {
        return false;
    }
    // The count over s is piecewise constant and only rises at an admission, so its maximum on
    // [t, t+W) is at s = t (checked above) or at some admission a in (t, t+W).
    let start = sorted.partition_point(|&a| a <= t);
    let mut left = sorted.partition_point(|&a| a.saturating_add(window) <= t);
    let end = sorted.partition_point(|&a| a < t.saturating_add(window));
    for i in start..end {
        let s = sorted.get(i);
        if i + 1 < end && sorted.get(i + 1) == s {
            continue; // count every admission at the same instant
        }
        while sorted.get(left).saturating_add(window) <= s {
            left += 1;
        }
        if (i + 1 - left) as u64 >= limit {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const W: Nanos = 10;

    /// Admissions of `admitted` in `(s − W, s]`.
    fn in_window(admitted: &[Nanos], s: Nanos) -> usize {
        admitted.iter().filter(|&&a| a + W > s && a <= s).count()
    }

    proptest! {
        /// Against brute force over whole histories, for interleaved keys, rejections still
        /// waiting at sweeps and at the end: each admission's window count, and the needless
        /// rejections (one more admission at `t` keeps every window `(s − W, s]` with `s` in
        /// `[t, t + W)` within the limit).
        #[test]
        fn windows_agree_with_brute_force(
            limit in 1u64..4,
            events in proptest::collection::vec((0u32..4, 0u64..6, any::<bool>(), 0u8..8), 0..150),
        ) {
            let mut w = KeyWindows::new(limit, W);
            let mut admitted: Vec<Vec<Nanos>> = vec![Vec::new(); 4];
            let mut rejected = Vec::new();
            let mut t = 0;
            for (key, gap, admit, sweep) in events {
                t += gap;
                if sweep == 0 {
                    w.sweep(t);
                }
                if admit {
                    admitted[key as usize].push(t);
                    let want = in_window(&admitted[key as usize], t) as u64;
                    prop_assert_eq!(w.admit(key, t), want);
                } else {
                    w.reject(key, t);
                    rejected.push((key, t));
                }
            }
            let needless = rejected
                .iter()
                .filter(|&&(key, t)| {
                    let a = &admitted[key as usize];
                    std::iter::once(t)
                        .chain(a.iter().copied().filter(|&s| s > t && s < t + W))
                        .all(|s| (in_window(a, s) as u64) < limit)
                })
                .count() as u64;
            prop_assert_eq!(w.finish(), needless);
        }
    }

    #[test]
    fn counts_violations_in_the_rolling_window() {
        let mut w = KeyWindows::new(2, W);
        // Admissions at 0, 5, 9 (3 in (−1, 9]), 10 (the one at 0 has left: 3 in (0, 10]), 16
        // ((6, 16] holds 9, 10, 16).
        let counts: Vec<u64> = [0, 5, 9, 10, 16].iter().map(|&t| w.admit(0, t)).collect();
        assert_eq!(counts, [1, 2, 3, 3, 3]);
    }

    #[test]
    fn a_rejection_with_a_full_window_is_not_needless() {
        let mut w = KeyWindows::new(2, W);
        w.admit(0, 0);
        w.admit(0, 1);
        w.reject(0, 5); // (−5, 5] holds 2 = L
        assert_eq!(w.finish(), 0);
    }

    #[test]
    fn a_rejection_with_room_before_and_after_is_needless() {
        let mut w = KeyWindows::new(2, W);
        w.admit(0, 0);
        w.reject(0, 5); // (−5, 5] holds 1; windows ending in [5, 15) hold at most 1 + 1
        w.admit(0, 12); // (2, 12] would hold 5 and 12: 2, fine
        assert_eq!(w.finish(), 1);
    }

    #[test]
    fn a_later_window_can_make_a_rejection_justified() {
        let mut w = KeyWindows::new(2, W);
        w.admit(0, 0);
        w.reject(0, 5);
        w.admit(0, 11);
        w.admit(0, 12); // (2, 12] would hold 5, 11 and 12: 3 > 2
        assert_eq!(w.finish(), 0);
    }

    #[test]
    fn admissions_at_the_window_edge_do_not_count() {
        let mut w = KeyWindows::new(1, W);
        w.reject(0, 5);
        w.admit(0, 15); // s ranges over [5, 15): the admission at 15 is never in a window with 5
        assert_eq!(w.finish(), 1);
    }

    #[test]
    fn simultaneous_admissions_count_together() {
        let mut w = KeyWindows::new(2, W);
        w.reject(0, 0);
        w.admit(0, 3);
        w.admit(0, 3); // (−7, 3] would hold 0, 3, 3
        assert_eq!(w.finish(), 0);
    }
}
