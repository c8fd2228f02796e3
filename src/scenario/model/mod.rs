//! The validated scenario and its feature types: what the engine, the reports and the checks
//! read. Validation (`validate/`) builds them from the raw file (`raw.rs`).

pub mod alerts;
pub(crate) mod deployment;
pub mod replicates;
pub(crate) mod scenario;
pub(crate) mod stack;
