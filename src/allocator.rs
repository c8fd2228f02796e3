//! The allocator the binary, the example and the benches install: mimalloc, with transparent
//! huge pages requested for its arenas.
//!
//! A million-key run keeps a few hundred MiB of per-key tables and an interning table that
//! grows by doubling. Under glibc's malloc on the development VM, interning 10^6 generated
//! names alone took 4.5 to 12 s (page faults, `mremap` on every doubling, trimming); under
//! mimalloc 1.3 s, and 0.85 s with huge pages, which spare a TLB miss per random access into
//! those tables (docs/performance.md has the end-to-end figures). The library itself installs
//! nothing: a program embedding it keeps its own allocator.

/// The global allocator type (`#[global_allocator] static A: rlsim::allocator::Allocator = ...`).
pub type Allocator = mimalloc::MiMalloc;

/// The allocator value to install.
pub const ALLOCATOR: Allocator = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_e`, the same in mimalloc 2 and 3;
/// `libmimalloc-sys` names it under its old name only).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Asks mimalloc to back its arenas with 2 MiB pages where the system allows it (Linux
/// transparent huge pages, set to `always` or `madvise`; elsewhere it keeps 4 KiB pages), and
/// to keep freed memory for reuse instead of returning it to the system. A run's memory is
/// its live keys' (flat in the run's length), and the per-key tables grow by doubling: giving
/// each old buffer back only to fault the pages in again cost a million-key run a fifth of its
/// time in the kernel zeroing pages. Call it first thing in `main`: arenas reserved before keep
/// their pages.
pub fn prefer_huge_pages() {
    // SAFETY: sets two of mimalloc's global options, atomic stores; any value is valid.
    unsafe {
        libmimalloc_sys::mi_option_set_enabled(libmimalloc_sys::mi_option_large_os_pages, true);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, -1);
    }
}
