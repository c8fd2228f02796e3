//! A cache hint for per-id tables: a run over a million keys touches a random entry of several
//! tables per request, and asking for those lines a request ahead overlaps their cache misses
//! instead of paying them one after another. Only a hint: it changes no result.

/// Asks the CPU to start loading the entry of `i`, if there is one.
#[inline]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = v.get(i) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is only a hint; it never faults and the pointer is valid anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((entry as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}
