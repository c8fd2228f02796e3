//! rlsim's integration tests: one test binary, each test in its own temporary directory.

mod bench;
mod bounds;
mod check;
mod cli;
mod closed_loop;
mod contenders;
mod deployment;
mod determinism;
mod differential;
mod errors;
mod exact;
mod formats;
mod identity;
mod io;
mod layers;
mod metrics;
mod observe;
mod profiles;
mod replay;
mod replay_input;
mod report;
mod review;
mod svg;
mod sweep;
mod util;
