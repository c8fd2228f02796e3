//! A cache hint for per-id tables: a run over a million keys touches a random entry of several
//! tables per request, and asking for those lines requests ahead overlaps their cache misses
//! instead of paying them one after another. Only a hint: it changes no result.

/// Asks the CPU to start loading every cache line of the entry of `i`, if there is one (one
/// line for a small entry, all of them for an entry of a few lines used together).
#[inline]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = v.get(i) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (entry as *const T).cast::<i8>();
        let end = first as usize + size_of::<T>();
        let mut line = first as usize & !63;
        while line < end {
            // SAFETY: a prefetch is only a hint and never faults; every line asked for holds
            // part of the entry.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line.saturating_sub(first as usize)))
            };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}
