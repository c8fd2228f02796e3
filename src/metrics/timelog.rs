//! A queue of times, oldest first, stored inline while short: the per-key histories of the
//! tallies. Most keys of a large run hold one or two times in a window; keeping those inline
//! means a million keys cost no allocation each, and no allocator churn as windows empty and
//! fill again. A key that holds more spills to one heap ring, until a sweep finds it short.
//!
//! The ring is this module's own rather than a boxed `VecDeque`: a `VecDeque` is 32 bytes, so
//! it had to be boxed to keep a log in 32, and every look at a spilled log then chased two
//! pointers (the box, then the buffer), two dependent cache misses per request in a large
//! keyspace. The ring keeps its head and length in the log itself: one pointer to follow.

use crate::time::Nanos;

/// Times a log holds inline unless its owner says otherwise: a log of 32 bytes.
const INLINE: usize = 3;

/// Slots of a ring when a log first spills; a ring grows by doubling. Not a power of two on
/// purpose: rings of 2^k slots sit at 2^k-byte boundaries, and the rings of keys whose
/// histories advance in step then put their current slots in the same cache sets.
const FIRST_RING: usize = 12;

/// `N` times inline (most logs hold a few), the rest on the heap. A time is a [`Nanos`], or an
/// entry of its own (`T`) ordered by time, as a log of `(time, units)` is.
#[derive(Debug, Clone)]
pub(super) enum TimeLog<const N: usize = INLINE, T: Copy + Default = Nanos> {
    Inline { len: u8, times: [T; N] },
    Spilled(Ring<T>),
}

/// A ring of times on the heap: `len` times from slot `head`, wrapping.
#[derive(Debug, Clone)]
pub(super) struct Ring<T> {
    head: u32,
    len: u32,
    slots: Box<[T]>,
}

impl<T: Copy + Default> Ring<T> {
    /// The slot of the `i`-th oldest time (`i` under the ring's size).
    #[inline]
    fn slot(&self, i: usize) -> usize {
        let j = self.head as usize + i;
        if j >= self.slots.len() {
            j - self.slots.len()
        } else {
            j
        }
    }

    /// Room for twice as many, the times moved to the front.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_RING);
        let mut slots = vec![T::default(); size].into_boxed_slice();
        for (i, t) in slots.iter_mut().take(self.len as usize).enumerate() {
            *t = self.slots[self.slot(i)];
        }
        self.slots = slots;
        self.head = 0;
    }
}

impl<const N: usize, T: Copy + Default> Default for TimeLog<N, T> {
    fn default() -> Self {
        TimeLog::Inline {
            len: 0,
            times: [T::default(); N],
        }
    }
}

impl<const N: usize, T: Copy + Default> TimeLog<N, T> {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            TimeLog::Inline { len, .. } => *len as usize,
            TimeLog::Spilled(r) => r.len as usize,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th oldest time; `i` is under `len` (checked in debug builds: past the length,
    /// an inline log would return a stale time and a ring another slot's).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len(), "index out of range");
        match self {
            TimeLog::Inline { times, .. } => times[i],
            TimeLog::Spilled(r) => r.slots[r.slot(i)],
        }
    }

    // The oldest time is read on every request (expiry checks): straight from the head slot.
    #[inline]
    pub fn front(&self) -> Option<T> {
        match self {
            TimeLog::Inline { len, times } => (*len > 0).then_some(times[0]),
            TimeLog::Spilled(r) => (r.len > 0).then(|| r.slots[r.head as usize]),
        }
    }

    #[cfg(test)]
    pub fn back(&self) -> Option<T> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }

    /// Appends `t`; returns whether the log just moved to the heap (so its owner can list it
    /// for sweeping: inline logs hold nothing to free).
    #[inline]
    pub fn push_back(&mut self, t: T) -> bool {
        match self {
            TimeLog::Inline { len, times } if (*len as usize) < N => {
                times[*len as usize] = t;
                *len += 1;
                false
            }
            TimeLog::Inline { times, .. } => {
                // Built from the times, not zeroed and then written: a zeroed allocation takes
                // mimalloc's slower path.
                const {
                    assert!(
                        N < FIRST_RING,
                        "a first ring holds the inline times and more"
                    )
                };
                let mut slots = Vec::with_capacity(FIRST_RING);
                slots.extend_from_slice(times);
                slots.push(t);
                slots.resize(FIRST_RING, T::default());
                let slots = slots.into_boxed_slice();
                *self = TimeLog::Spilled(Ring {
                    head: 0,
                    len: N as u32 + 1,
                    slots,
                });
                true
            }
            TimeLog::Spilled(r) => {
                if r.len as usize == r.slots.len() {
                    r.grow();
                }
                let i = r.slot(r.len as usize);
                r.slots[i] = t;
                // A window of 2^32 times would need 32 GiB for this log alone.
                r.len = r
                    .len
                    .checked_add(1)
                    .expect("under 2^32 times in one window");
                false
            }
        }
    }

    /// Moves a spilled log that is short again back inline, giving back its heap buffer: a key
    /// whose burst has passed then costs no pointer chase per request. Returns whether the log
    /// still holds a heap buffer.
    pub fn fit_inline(&mut self) -> bool {
        if let TimeLog::Spilled(r) = self {
            if r.len as usize > N {
                return true;
            }
            let mut times = [T::default(); N];
            for (i, slot) in times.iter_mut().take(r.len as usize).enumerate() {
                *slot = r.slots[r.slot(i)];
            }
            *self = TimeLog::Inline {
                len: r.len as u8,
                times,
            };
        }
        false
    }

    /// Whether the log holds a heap buffer.
    pub fn is_spilled(&self) -> bool {
        matches!(self, TimeLog::Spilled(_))
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        match self {
            TimeLog::Inline { len, times } => {
                if *len == 0 {
                    return None;
                }
                let t = times[0];
                times.copy_within(1.., 0);
                *len -= 1;
                Some(t)
            }
            TimeLog::Spilled(r) => {
                if r.len == 0 {
                    return None;
                }
                let t = r.slots[r.head as usize];
                r.head = r.slot(1) as u32;
                r.len -= 1;
                Some(t)
            }
        }
    }

    /// Empties the log and gives back any heap buffer.
    #[inline]
    pub fn clear(&mut self) {
        *self = TimeLog::default();
    }

    /// The times in order, as two runs of memory (the second empty unless a ring wraps).
    #[inline]
    fn as_slices(&self) -> (&[T], &[T]) {
        match self {
            TimeLog::Inline { len, times } => (&times[..*len as usize], &[]),
            TimeLog::Spilled(r) => {
                let (head, len) = (r.head as usize, r.len as usize);
                match (head + len).checked_sub(r.slots.len()) {
                    Some(wrapped) if wrapped > 0 => (&r.slots[head..], &r.slots[..wrapped]),
                    _ => (&r.slots[head..head + len], &[]),
                }
            }
        }
    }

    /// The index of the first time for which `pred` is false (`pred` holds for a prefix): a
    /// binary search in each run of memory, as `VecDeque` does (judging a rejection takes five
    /// of them, and a search through `get` paid a branch on the log's kind per probe).
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        let (first, second) = self.as_slices();
        let i = first.partition_point(&pred);
        if i < first.len() {
            i
        } else {
            first.len() + second.partition_point(pred)
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The point of the ring: a log stays 32 bytes (40 with four times inline), inline or
    /// spilled.
    #[test]
    fn a_log_is_32_bytes() {
        assert_eq!(std::mem::size_of::<TimeLog>(), 32);
        assert_eq!(std::mem::size_of::<TimeLog<4>>(), 40);
    }

    proptest! {
        /// Any sequence of pushes and pops behaves like a `VecDeque`, across the spill.
        #[test]
        fn behaves_like_a_deque(
            ops in proptest::collection::vec((any::<Option<u16>>(), proptest::bool::weighted(0.2)), 0..200),
        ) {
            behaves_like_a_deque_with::<INLINE>(&ops)?;
            behaves_like_a_deque_with::<4>(&ops)?;
        }
    }

    fn behaves_like_a_deque_with<const N: usize>(
        ops: &[(Option<u16>, bool)],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let (mut log, mut model) = (TimeLog::<N>::default(), VecDeque::new());
        let (mut was_long, mut last) = (false, 0);
        for &(op, fit) in ops {
            match op {
                Some(gap) => {
                    // Times never decrease, as in every log.
                    let t = last + gap as Nanos;
                    last = t;
                    model.push_back(t);
                    let spilled_now = log.push_back(t);
                    prop_assert_eq!(spilled_now, !was_long && model.len() > N);
                    was_long |= model.len() > N;
                    // A log moves to the heap once it outgrows the inline room, and stays
                    // until `fit_inline` finds it short.
                    prop_assert_eq!(log.is_spilled(), was_long);
                }
                None => prop_assert_eq!(log.pop_front(), model.pop_front()),
            }
            if fit && log.fit_inline() != (model.len() > N) {
                prop_assert!(false, "fit_inline keeps the heap only for a long log");
            }
            if fit {
                was_long = model.len() > N;
            }
            prop_assert_eq!(log.len(), model.len());
            prop_assert_eq!(log.front(), model.front().copied());
            prop_assert_eq!(log.back(), model.back().copied());
            prop_assert_eq!(
                log.iter().collect::<Vec<_>>(),
                model.iter().copied().collect::<Vec<_>>()
            );
            let cut = last / 2;
            let sorted_prefix = model.iter().take_while(|&&t| t < cut).count();
            prop_assert_eq!(log.partition_point(|&t| t < cut), sorted_prefix);
        }
        Ok(())
    }
}
