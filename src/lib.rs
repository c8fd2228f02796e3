//! rlsim: a rate-limiting policy simulator.
//!
//! A [`Scenario`] describes a policy ("at most L requests per key per window W"), the algorithms
//! to compare and the traffic to replay. [`run_all`] drives that traffic through every algorithm
//! under a virtual clock (time is a `u64` of nanoseconds; nothing reads the wall clock) and
//! measures each one against the policy's intent. The [`report`] module turns the results into
//! tables, JSON, CSV, charts and reports.
//!
//! The API, from a scenario to its results:
//!
//! - [`Scenario::parse`], [`Scenario::load`] and [`Scenario::parse_with`] (with `--set`-style
//!   [`Override`]s) read and validate a scenario file ([`scenario`] has its model); errors are
//!   [`Error`]s naming file, line and field.
//! - [`run_all`] runs every contender under [`RunOptions`] and returns a [`RunReport`]: one
//!   [`AlgorithmReport`] per contender ([`metrics`] has every figure's type) and the wall-clock
//!   [`Throughput`]. A [`sim::DecisionSink`] given through the options sees every decision.
//! - [`Limiter`] is what an algorithm implements; [`AlgorithmKind`] is the registry of the
//!   algorithms and library profiles, [`Params`] their parameters, [`Decision`] and [`Outcome`]
//!   what one request gets ([`algorithms`] has each algorithm's type), and [`LimiterSpec`] a
//!   limiter chosen by name at run time.
//! - [`report`] renders results ([`report::write_outputs`], the tables, the charts, the decision
//!   log); [`time`] is the virtual clock's units (`Nanos`), [`policy`] the policy and key
//!   fields, [`traffic`] the sources of requests ([`traffic::export`] the requests a scenario
//!   generates), [`observe`] watches a run as its operators would (OpenMetrics, alerts),
//!   [`drive`] sends a plan of requests to a live HTTP service in real time, and [`store`]
//!   decides through a real Redis.
//!
//! The command line's features (`rlsim check`, `sweep`, `probe`, `import`, the replicates) are
//! not part of the API; `rlsim schema` prints the JSON Schema of each output a
//! program reads. The few modules the binary, the benches and the example need (the CLI, the
//! allocator, the benchmark command, output paths) are reachable but hidden from the
//! documentation.
//!
//! ```
//! use rlsim::{RunOptions, Scenario, run_all};
//! let toml = r#"
//!     name = "boundary"
//!     duration = "2m"
//!     algorithms = ["fixed_window", "sliding_window_log"]
//!     [policy]
//!     limit = 100
//!     window = "1m"
//!     [[traffic]]
//!     name = "attacker"
//!     kind = "boundary"
//!     count = 100
//!     ip = "203.0.113.7"
//! "#;
//! let scenario = Scenario::parse(toml, "inline.toml".as_ref()).unwrap();
//! let (report, _) = run_all(&scenario, RunOptions::new()).unwrap();
//! // 100 requests at 59.9 s and 100 at 60 s: the fixed window admits both batches.
//! assert_eq!(report.algorithms[0].admitted, 200);
//! assert_eq!(report.algorithms[0].burst_factor, 2.0);
//! assert_eq!(report.algorithms[1].admitted, 100);
//! ```
//!
//! One limiter decides on its own too, at the virtual time it is handed (here a token bucket
//! of 10 per second with a burst of 5, so a token every 100 ms):
//!
//! ```
//! use rlsim::algorithms::TokenBucket;
//! use rlsim::{Limiter, Outcome, Params};
//! const MS: u64 = 1_000_000;
//! let bucket = TokenBucket::new(Params { limit: 10, window: 1_000 * MS, burst: 5 }).unwrap();
//! let mut state = bucket.new_state(0);
//! for _ in 0..5 {
//!     assert!(bucket.decide(&mut state, 0).outcome.is_admitted());
//! }
//! // The sixth at the same instant waits for the next token.
//! let refused = bucket.decide(&mut state, 0);
//! assert_eq!(refused.outcome, Outcome::Reject { retry_after: 100 * MS });
//! assert!(bucket.decide(&mut state, 100 * MS).outcome.is_admitted());
//! ```
//!
//! [`LimiterSpec`] is a limiter chosen at run time (any algorithm or library profile by name),
//! checked once and then run through a [`algorithms::LimiterVisitor`] without a virtual call
//! per decision.

#![warn(missing_docs, unnameable_types)]

pub mod algorithms;
pub mod calendar;
pub(crate) mod check;
pub mod drive;
pub mod error;
pub(crate) mod import;
pub mod metrics;
pub mod observe;
pub mod policy;
pub(crate) mod probe;
pub(crate) mod replicate;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod store;
pub(crate) mod sweep;
pub mod time;
pub mod traffic;

// For the binary (`src/main.rs`), the benches and the example only; not part of the API.
#[doc(hidden)]
pub mod allocator;
#[doc(hidden)]
pub mod bench;
// Its doc comments are clap's help texts (`[goals]` is a word there, not a link).
#[doc(hidden)]
#[allow(rustdoc::broken_intra_doc_links)]
pub mod cli;
#[doc(hidden)]
pub mod output;

mod commands;
mod manpage;
mod prefetch;
mod rng;
mod suggest;
mod terminal;

pub use algorithms::{AlgorithmKind, Decision, Limiter, LimiterSpec, Outcome, Params};
pub use error::{Error, Result};
pub use metrics::{AlgorithmReport, Throughput};
pub use scenario::{Override, Scenario};
pub use sim::{RunOptions, RunReport, run_all};
