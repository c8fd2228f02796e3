//! The validated scenario and its feature types: what the engine, the reports and the checks
//! read. Validation (`validate/`) builds them from the raw file (`raw.rs`).

pub mod alerts;
pub mod deployment;
pub mod replicates;
pub mod scenario;
pub mod stack;
