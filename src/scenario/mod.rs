//! Scenario files (TOML): parsing, then validation into a [`Scenario`] the engine can trust.
//!
//! Parsing keeps every value's position; validation refuses anything inconsistent with an error
//! naming the file, line and field. See `docs/scenario-format.md` for the format.
//!
//! Three stages, each in its own place, importing only the ones before it: `raw.rs` holds every
//! serde struct of the file as written; the model is [`Scenario`] and the feature
//! types (`model/`, `expect.rs`, `goals.rs`); `validate/`
//! turns the first into the second, one file per feature. `load.rs` reads a file through them.
//! This file only declares the modules and re-exports the public names.

pub(crate) mod expect;
pub(crate) mod goals;
pub(crate) mod limits;
mod load;
mod metric_names;
mod model;
#[cfg(test)]
mod order_tests;
pub(crate) mod outcome;
pub(crate) mod overrides;
#[cfg(test)]
mod population_tests;
mod raw;
mod validate;

pub use alerts::{AlertSpec, GroupBy, Measure};
pub use expect::{Expectation, Op, Scope};
pub use goals::Goal;
pub use metric_names::metric_names;
pub use model::alerts;
pub use model::replicates::{self, ReplicateSpec, Uncertain, UncertainValue};
pub use model::scenario::{Contender, Origin, Scenario, Shape, SweepSpec};
pub use overrides::Override;

/// `[[contender]]`: whole limiter configurations (the model; validation is in `validate/`).
pub mod contender {
    pub use super::model::stack::*;
}

/// `[deployment]` / `[contender.deployment]`: replicas and a store (the model).
pub mod deployment {
    pub use super::model::deployment::*;
}
