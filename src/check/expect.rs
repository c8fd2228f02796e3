//! Evaluating a scenario's expectations against its reports.
//!
//! The reports show the same results. The report layer sits below `check`, so the
//! evaluation itself lives in [`crate::scenario::outcome`]; this module keeps the name `check`
//! uses.

pub use crate::scenario::outcome::{ExpectationResult, evaluate};
