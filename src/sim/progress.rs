//! Progress of a running simulation, readable from another thread (for a progress bar).
//!
//! Engines report in batches, so the hot loop pays one relaxed atomic add every
//! [`REPORT_EVERY`] requests.

use crate::time::Nanos;
use std::sync::atomic::{AtomicU64, Ordering};

/// Requests an engine processes between two reports.
pub const REPORT_EVERY: u64 = 1 << 14;

/// Requests decided and virtual time simulated so far, summed over a run's engines; shared
/// with a progress bar's thread (relaxed atomics).
#[derive(Debug, Default)]
pub struct Progress {
    requests: AtomicU64,
    simulated_ns: AtomicU64,
}

impl Progress {
    /// A counter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// An engine processed `requests` more and advanced its clock by `simulated` ns.
    pub fn add(&self, requests: u64, simulated: Nanos) {
        self.requests.fetch_add(requests, Ordering::Relaxed);
        self.simulated_ns.fetch_add(simulated, Ordering::Relaxed);
    }

    /// Requests decided so far, summed over algorithms.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Virtual time simulated so far, summed over algorithms: divide by
    /// `algorithms × duration` for the fraction done.
    pub fn simulated_ns(&self) -> Nanos {
        self.simulated_ns.load(Ordering::Relaxed)
    }
}
