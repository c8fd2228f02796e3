//! `rlsim store-memory`: the bytes each algorithm's state takes in a real Redis.

use super::{Format, Status, print_either};
use crate::error::Result;
use crate::store::memory;
use std::io::Write;

/// What `rlsim store-memory` was asked.
#[derive(Debug, Clone, Default)]
pub struct StoreMemoryOptions {
    /// The Redis URL to measure in.
    pub store: String,
    /// Keys per case.
    pub keys: usize,
    pub format: Format,
}

/// Runs `rlsim store-memory`.
pub fn store_memory(o: &StoreMemoryOptions, stdout: &mut dyn Write) -> Result<Status> {
    let rows = memory::measure(&o.store, o.keys)?;
    print_either(o.format, &rows, |rows| memory::markdown(rows), stdout)
}
