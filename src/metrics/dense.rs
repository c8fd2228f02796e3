//! Per-id state in a dense vector: keys and clients are interned to small integers.

/// The entry of `i`, growing `v` with defaults if `i` was never seen.
#[inline]
pub(super) fn slot<T: Default>(v: &mut Vec<T>, i: u32) -> &mut T {
    let i = i as usize;
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// One tally's state `T` of every id, reached by id: the tally's own table as far as it can
/// tell, wherever its owner keeps it (the recorder keeps every tally's state of a key in one
/// entry, [`super::per_key`]).
pub(super) trait Parts<T> {
    /// The state of `id` (which must have one).
    fn part(&mut self, id: u32) -> &mut T;
    /// Starts loading the state of `id` (a hint: it changes nothing).
    fn prefetch(&self, id: u32);
}

/// A tally's states in a table of their own.
impl<T> Parts<T> for [T] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut T {
        &mut self[id as usize]
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

/// How many ids ahead [`retain_entries`] asks for an entry.
const AHEAD: usize = 8;

/// Keeps, in order, the ids of `ids` for which `keep` (given the id's state in `parts`)
/// returns true. A sweep visits states scattered over a large keyspace: each is asked for a
/// few ids ahead, so their cache misses overlap instead of following one another.
#[inline]
pub(super) fn retain_entries<T, P: Parts<T> + ?Sized>(
    ids: &mut Vec<u32>,
    parts: &mut P,
    mut keep: impl FnMut(&mut T) -> bool,
) {
    let mut kept = 0;
    for i in 0..ids.len() {
        if let Some(&ahead) = ids.get(i + AHEAD) {
            parts.prefetch(ahead);
        }
        let id = ids[i];
        if keep(parts.part(id)) {
            ids[kept] = id;
            kept += 1;
        }
    }
    ids.truncate(kept);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// `retain_entries` keeps what `Vec::retain` keeps, and hands `keep` the same entries
        /// in the same order (repeated ids included).
        #[test]
        fn retains_like_vec_retain(
            ids in proptest::collection::vec(0u32..30, 0..60),
            keep in proptest::collection::vec(any::<bool>(), 30),
        ) {
            let mut entries: Vec<(u32, u32)> = (0..30).map(|i| (i, 0)).collect();
            let (mut got, mut seen) = (ids.clone(), Vec::new());
            super::retain_entries(&mut got, entries.as_mut_slice(), |(id, visits): &mut (u32, u32)| {
                *visits += 1;
                seen.push(*id);
                keep[*id as usize]
            });
            let mut want = ids.clone();
            want.retain(|&id| keep[id as usize]);
            prop_assert_eq!(got, want);
            prop_assert_eq!(&seen, &ids);
            for (id, visits) in entries {
                prop_assert_eq!(visits as usize, ids.iter().filter(|&&i| i == id).count());
            }
        }
    }
}
