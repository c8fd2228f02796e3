//! rlsim: a rate-limiting policy simulator.
//!
//! A [`Scenario`] describes a policy ("at most L requests per key per window W"), the algorithms
//! to compare and the traffic to replay. [`sim::run_all`] drives that traffic through every algorithm
//! under a virtual clock (time is a `u64` of nanoseconds; nothing reads the wall clock) and
//! measures each one against the policy's intent. The [`report`] module turns the results into
//! tables, JSON and CSV; the [`check`] module holds them to the scenario's expectations and to an
//! earlier run (`rlsim check`, the CI gate).
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

pub mod algorithms;
pub mod allocator;
pub mod bench;
pub mod check;
pub mod cli;
pub mod commands;
pub mod error;
pub mod manpage;
pub mod metrics;
pub mod observe;
pub mod output;
pub mod policy;
pub mod prefetch;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod store;
pub mod suggest;
pub mod sweep;
pub mod terminal;
pub mod time;
pub mod traffic;

pub use algorithms::{AlgorithmKind, Decision, Limiter, Outcome, Params};
pub use error::{Error, Result};
pub use scenario::Scenario;
