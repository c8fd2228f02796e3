//! `rlsim bench`: decisions/s per algorithm and end-to-end requests/s (`crate::bench`).

use super::{Format, Status, print_either};
use crate::algorithms::AlgorithmKind;
use crate::error::Result;
use std::io::Write;

/// What `rlsim bench` was asked.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Decisions (and simulated requests) per measurement.
    pub requests: u64,
    /// The algorithms measured (empty: all).
    pub algorithms: Vec<AlgorithmKind>,
    pub format: Format,
}

/// Runs `rlsim bench`.
pub fn bench(o: &BenchOptions, stdout: &mut dyn Write) -> Result<Status> {
    let kinds = if o.algorithms.is_empty() {
        AlgorithmKind::ALL.to_vec()
    } else {
        o.algorithms.clone()
    };
    let report = crate::bench::measure(o.requests, &kinds)?;
    print_either(o.format, &report, crate::bench::text, stdout)
}
