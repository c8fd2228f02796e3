//! rlsim: a rate-limiting policy simulator.
pub mod algorithms;
pub mod time;
