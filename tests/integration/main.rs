//! rlsim's integration tests: one test binary, each test in its own temporary directory.

mod bench;
mod check;
mod cli;
mod closed_loop;
mod determinism;
mod errors;
mod exact;
mod formats;
mod metrics;
mod replay;
mod report;
mod review;
mod svg;
mod util;
