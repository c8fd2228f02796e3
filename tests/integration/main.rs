//! rlsim's integration tests: one test binary, each test in its own temporary directory.

mod check;
mod cli;
mod determinism;
mod errors;
mod exact;
mod metrics;
mod replay;
mod report;
mod review;
mod svg;
mod util;
