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
