//! A queue of times, oldest first, stored inline while short: the per-key histories of the
//! tallies. Most keys of a large run hold one or two times in a window; keeping those inline
//! means a million keys cost no allocation each, and no allocator churn as windows empty and
//! fill again. A key that holds more spills to one heap buffer, kept until the key goes idle.

use crate::time::Nanos;
use std::collections::VecDeque;

const INLINE: usize = 3;

#[derive(Debug, Clone)]
pub(super) enum TimeLog {
    Inline {
        len: u8,
        times: [Nanos; INLINE],
    },
    // Boxed so a million mostly-inline logs stay 32 bytes each, not 40.
    #[allow(clippy::box_collection)]
    Spilled(Box<VecDeque<Nanos>>),
}

impl Default for TimeLog {
    fn default() -> Self {
        TimeLog::Inline {
            len: 0,
            times: [0; INLINE],
        }
    }
}

impl TimeLog {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            TimeLog::Inline { len, .. } => *len as usize,
            TimeLog::Spilled(q) => q.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th oldest time. Panics when `i >= len`, like indexing.
    #[inline]
    pub fn get(&self, i: usize) -> Nanos {
        match self {
            TimeLog::Inline { len, times } => {
                assert!(i < *len as usize, "index out of range");
                times[i]
            }
            TimeLog::Spilled(q) => q[i],
        }
    }

    // `front` and `back` ask the deque directly: through `get`, a spilled log paid an index
    // wrap and a bounds check on every look at its oldest time (a fifth of a one-key run's
    // tally work).
    #[inline]
    pub fn front(&self) -> Option<Nanos> {
        match self {
            TimeLog::Inline { len, times } => (*len > 0).then_some(times[0]),
            TimeLog::Spilled(q) => q.front().copied(),
        }
    }

    #[cfg(test)]
    #[inline]
    pub fn back(&self) -> Option<Nanos> {
        match self {
            TimeLog::Inline { len, times } => {
                (*len > 0).then(|| times[(*len as usize - 1).min(INLINE - 1)])
            }
            TimeLog::Spilled(q) => q.back().copied(),
        }
    }

    /// Appends `t`; returns whether the log just moved to the heap (so its owner can list it
    /// for sweeping: inline logs hold nothing to free).
    #[inline]
    pub fn push_back(&mut self, t: Nanos) -> bool {
        match self {
            TimeLog::Inline { len, times } if (*len as usize) < INLINE => {
                times[*len as usize] = t;
                *len += 1;
                false
            }
            TimeLog::Inline { times, .. } => {
                let mut q = VecDeque::with_capacity(4 * INLINE);
                q.extend(times.iter().copied());
                q.push_back(t);
                *self = TimeLog::Spilled(Box::new(q));
                true
            }
            TimeLog::Spilled(q) => {
                q.push_back(t);
                false
            }
        }
    }

    /// Moves a spilled log that is short again back inline, giving back its heap buffer: a key
    /// whose burst has passed then costs no pointer chase per request (two dependent cache
    /// misses in a large keyspace). Returns whether the log still holds a heap buffer.
    pub fn fit_inline(&mut self) -> bool {
        if let TimeLog::Spilled(q) = self {
            if q.len() > INLINE {
                return true;
            }
            let mut times = [0; INLINE];
            for (slot, &t) in times.iter_mut().zip(q.iter()) {
                *slot = t;
            }
            *self = TimeLog::Inline {
                len: q.len() as u8,
                times,
            };
        }
        false
    }

    /// Whether the log holds a heap buffer.
    #[cfg(test)]
    pub fn is_spilled(&self) -> bool {
        matches!(self, TimeLog::Spilled(_))
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Nanos> {
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
            TimeLog::Spilled(q) => q.pop_front(),
        }
    }

    /// Empties the log and gives back any heap buffer.
    #[inline]
    pub fn clear(&mut self) {
        *self = TimeLog::default();
    }

    /// The index of the first time for which `pred` is false (`pred` holds for a prefix).
    pub fn partition_point(&self, pred: impl Fn(&Nanos) -> bool) -> usize {
        match self {
            TimeLog::Inline { len, times } => times[..*len as usize].partition_point(pred),
            TimeLog::Spilled(q) => q.partition_point(pred),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Nanos> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of pushes and pops behaves like a `VecDeque`, across the spill.
        #[test]
        fn behaves_like_a_deque(
            ops in proptest::collection::vec((any::<Option<u16>>(), proptest::bool::weighted(0.2)), 0..40),
        ) {
            let (mut log, mut model) = (TimeLog::default(), VecDeque::new());
            let mut was_long = false;
            for (op, fit) in ops {
                match op {
                    Some(t) => {
                        model.push_back(t as Nanos);
                        let spilled_now = log.push_back(t as Nanos);
                        prop_assert_eq!(spilled_now, !was_long && model.len() > INLINE);
                        was_long |= model.len() > INLINE;
                        // A log moves to the heap once it outgrows the inline room, and stays
                        // until `fit_inline` finds it short.
                        prop_assert_eq!(log.is_spilled(), was_long);
                    }
                    None => prop_assert_eq!(log.pop_front(), model.pop_front()),
                }
                if fit && log.fit_inline() != (model.len() > INLINE) {
                    prop_assert!(false, "fit_inline keeps the heap only for a long log");
                }
                if fit {
                    was_long = model.len() > INLINE;
                }
                prop_assert_eq!(log.len(), model.len());
                prop_assert_eq!(log.front(), model.front().copied());
                prop_assert_eq!(log.back(), model.back().copied());
                prop_assert_eq!(log.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}
