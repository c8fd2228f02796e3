//! Validation: the raw file (`raw.rs`) turned into the model ([`Scenario`] and the feature
//! types), one file per feature, each refusal naming the file, line and field.
//!
//! [`Scenario`]: crate::scenario::Scenario

mod alerts;
mod calendar;
mod client;
mod contender;
pub(crate) mod ctx;
mod deployment;
mod expect;
mod identity;
mod intent;
mod llm_profile;
mod policy;
mod population;
mod process;
mod replicates;
mod scenario;
mod tokens;
mod traffic;
