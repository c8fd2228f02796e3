//! The allocator the binary, the example and the benches install: mimalloc, with transparent
//! huge pages requested for its arenas.
//!
//! Large runs intern millions of names and grow per-key tables by doubling, which glibc's
//! malloc serves several times slower (docs/performance.md has the figures). The library
//! itself installs nothing: a program embedding it keeps its own allocator.

/// The global allocator type (`#[global_allocator] static A: rlsim::allocator::Allocator = ...`).
pub type Allocator = mimalloc::MiMalloc;

/// The allocator value to install.
pub const ALLOCATOR: Allocator = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_e`, the same in mimalloc 2 and 3;
/// `libmimalloc-sys` names it under its old name only).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Asks mimalloc to back its arenas with 2 MiB pages where the system allows it (Linux
/// transparent huge pages, set to `always` or `madvise`; elsewhere it keeps 4 KiB pages), and
/// to keep freed memory for reuse instead of returning it to the system: tables that grow by
/// doubling would otherwise fault their pages in again (docs/performance.md). Call it first
/// thing in `main`: arenas reserved before keep their pages.
pub fn prefer_huge_pages() {
    // SAFETY: sets two of mimalloc's global options, atomic stores; any value is valid.
    unsafe {
        libmimalloc_sys::mi_option_set_enabled(libmimalloc_sys::mi_option_large_os_pages, true);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, -1);
    }
}
