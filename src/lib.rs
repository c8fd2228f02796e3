//! rlsim: a rate-limiting policy simulator.
//!
//! A [`Scenario`] describes a policy ("at most L requests per key per window W"), the algorithms
//! to compare and the traffic to replay. [`sim::run_all`] drives that traffic through every algorithm
//! under a virtual clock (time is a `u64` of nanoseconds; nothing reads the wall clock) and
//! measures each one against the policy's intent. The [`report`] module turns the results into
//! tables, JSON and CSV; the [`check`] module holds them to the scenario's expectations and to an
//! earlier run (`rlsim check`, the CI gate).
//!
//! The API, from a scenario to its results:
//!
//! - [`Scenario::parse`] and [`Scenario::load`] read and validate a scenario file
//!   ([`scenario`]); errors are [`Error`]s naming file, line and field.
//! - [`sim::run_all`] runs every contender and returns a [`RunReport`]: one [`AlgorithmReport`] per
//!   contender ([`metrics`] has every figure's type) and the wall-clock [`Throughput`].
//! - [`Limiter`] is what an algorithm implements; [`AlgorithmKind`] is the registry of the
//!   algorithms and library profiles, [`Params`] their parameters, [`Decision`] and [`Outcome`]
//!   what one request gets ([`algorithms`] has each algorithm's type).
//! - [`report`] renders results ([`report::write_outputs`], the tables, the decision log),
//!   [`check`] holds them to expectations and baselines, [`sweep`] runs a grid of scenarios,
//!   [`observe`] watches a run as its operators would, [`store`] decides through a real Redis.
//! - [`time`] is the virtual clock's units (`Nanos`), [`policy`] the policy and key fields,
//!   [`traffic`] the sources of requests.
//!
//! The command-line tool's own modules (the CLI, the terminal, the benchmark command, the
//! allocator, signal handling) are internal: the few the binary, the benches and the example
//! need are reachable but hidden from the documentation, and are not part of the API.
//!
//! ```
//! use rlsim::{Scenario, sim};
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
//! let (report, _) = sim::run_all(&scenario, sim::RunOptions::new()).unwrap();
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

pub mod algorithms;
pub mod check;
pub mod drive;
pub mod error;
pub mod import;
pub mod metrics;
pub mod observe;
pub mod policy;
pub mod probe;
pub mod replicate;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod store;
pub mod sweep;
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
pub use scenario::Scenario;
pub use sim::RunReport;
