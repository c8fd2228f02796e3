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

/// Asks the CPU to start loading the entry of `i`, if there is one: a run over a million keys
/// touches each tally's entry of a random key per request, and issuing those loads together,
/// a request ahead, overlaps their cache misses instead of paying them one after another.
#[inline]
pub(super) fn prefetch<T>(v: &[T], i: u32) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = v.get(i as usize) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is only a hint; it never faults and the pointer is valid anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((entry as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}
