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

/// Asks mimalloc to back its arenas with 2 MiB pages where the system allows it (Linux
/// transparent huge pages, set to `always` or `madvise`); elsewhere it keeps 4 KiB pages.
/// Call it first thing in `main`: arenas reserved before keep their pages.
pub fn prefer_huge_pages() {
    // SAFETY: sets one of mimalloc's global options, an atomic store; any value is valid.
    unsafe {
        libmimalloc_sys::mi_option_set_enabled(libmimalloc_sys::mi_option_large_os_pages, true)
    }
}
