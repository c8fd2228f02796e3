//! Wall-clock figures of a run: not deterministic, so kept apart from every deterministic
//! output (throughput.json, `--timing`).

use serde::Serialize;
use std::time::Duration;

/// Wall-clock speed of one algorithm. Not deterministic: kept out of every deterministic output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// The row's name: the algorithm's, a profile's or a contender's.
    pub algorithm: String,
    /// Decisions timed, replaying the run's first arrivals through a fresh limiter.
    pub decisions_timed: u64,
    /// Wall-clock nanoseconds those decisions took.
    pub decision_elapsed_ns: u64,
    /// `decisions_timed` per wall-clock second: the decision alone, without traffic or metrics.
    pub decisions_per_sec: f64,
    /// Wall time of the whole simulation of this algorithm (traffic, decisions, metrics).
    pub simulation_elapsed_ns: u64,
    /// `offered / simulation time`: end-to-end simulated requests per second.
    pub simulated_requests_per_sec: f64,
}

/// Decisions replayed through a fresh gate, and the wall time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// Decisions made.
    pub decisions: u64,
    /// Wall-clock time they took.
    pub elapsed: Duration,
}

impl Throughput {
    /// The row of `algorithm`: its decisions `timed`, and a simulation of `offered` requests
    /// that took `simulation`.
    pub fn new(algorithm: &str, timed: Timing, simulation: Duration, offered: u64) -> Throughput {
        Throughput {
            algorithm: algorithm.to_string(),
            decisions_timed: timed.decisions,
            decision_elapsed_ns: timed.elapsed.as_nanos() as u64,
            decisions_per_sec: timed.decisions as f64 / timed.elapsed.as_secs_f64().max(1e-9),
            simulation_elapsed_ns: simulation.as_nanos() as u64,
            simulated_requests_per_sec: offered as f64 / simulation.as_secs_f64().max(1e-9),
        }
    }
}
