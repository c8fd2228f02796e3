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

/// How many ids ahead [`retain_entries`] asks for an entry.
const AHEAD: usize = 8;

/// Keeps, in order, the ids of `ids` for which `keep` (given the id's entry of `entries`)
/// returns true. A sweep visits entries scattered over a large keyspace: each is asked for a
/// few ids ahead, so their cache misses overlap instead of following one another.
#[inline]
pub(super) fn retain_entries<E>(
    ids: &mut Vec<u32>,
    entries: &mut [E],
    mut keep: impl FnMut(&mut E) -> bool,
) {
    let mut kept = 0;
    for i in 0..ids.len() {
        if let Some(&ahead) = ids.get(i + AHEAD) {
            crate::prefetch::prefetch(entries, ahead as usize);
        }
        let id = ids[i];
        if keep(&mut entries[id as usize]) {
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
            super::retain_entries(&mut got, &mut entries, |(id, visits)| {
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
