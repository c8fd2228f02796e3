//! Running a scenario: every algorithm in parallel, each on its own copy of the traffic.
//!
//! Each algorithm regenerates the traffic from the seed rather than sharing one materialised
//! stream: memory stays flat however long the run, and algorithms never wait on each other.

mod clients;
mod contender;
#[cfg(test)]
mod contender_cost_tests;
#[cfg(test)]
mod contender_identity_tests;
#[cfg(test)]
mod contender_tests;
mod contest;
pub(crate) mod deployment;
mod engine;
mod harness;
#[cfg(test)]
mod mirror_tests;
mod parallel;
mod progress;
mod queue;
mod recorded;
mod remote;
#[cfg(test)]
mod weighed_tests;

pub use clients::Clients;
pub use engine::{Capture, DecisionSink, Detail, Gate, Observers, simulate};
pub use parallel::{NoSink, RunOptions, run_all};
pub use progress::Progress;
pub use queue::{Event, EventKind, EventQueue, ScheduledInThePast};
pub use remote::{Disagreement, Remote, RemoteFactory, Shadowed, Tally};

use crate::error::Result;
use crate::metrics::{AlgorithmReport, Throughput};
use crate::scenario::{Contender, Scenario};

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// One entry per contender, in the scenario's order.
    pub algorithms: Vec<AlgorithmReport>,
    /// Wall-clock figures, same order. Not deterministic.
    pub throughput: Vec<Throughput>,
    /// Same order: what a remote compared with the model (`None`: decided in memory only).
    pub stored: Vec<Option<Tally>>,
}

/// Simulates one contender of `scenario` on this thread (see [`run_all`]). With
/// `measure_decisions`, its decisions are then timed on their own; otherwise the decision
/// figures are zero.
pub fn run_one<S: DecisionSink>(
    scenario: &Scenario,
    contender: &Contender,
    sink: Option<S>,
    measure_decisions: bool,
    progress: Option<&Progress>,
) -> Result<(AlgorithmReport, Throughput, Option<S>)> {
    let index = scenario.algorithms.iter().position(|c| c == contender);
    let setup = harness::Setup {
        scenario,
        contender,
        index: index.unwrap_or(0),
        timed: measure_decisions,
        progress,
        remote: None,
    };
    let row = contest::run(&setup, sink)?;
    Ok((row.report, row.throughput, row.sink))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;
    use crate::traffic::{Reaction, Retry};

    /// Retries that would pass the end of virtual time are scheduled at its end instead of
    /// wrapping around to the past (validation refuses such `on_reject` values; this is the
    /// engine's own guard for waits no field bounds, like a huge `Retry-After`).
    #[test]
    fn retry_times_saturate_at_the_end_of_virtual_time() {
        let text = r#"
            name = "end of time"
            duration = "1s"
            algorithms = ["fixed_window", "token_bucket"]
            [policy]
            limit = 1
            window = "1s"
            [output]
            bucket = "100000d"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "2/s"
        "#;
        let mut scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
        scenario.reactions[0] = Reaction {
            retry: Retry::Immediately,
            max_retries: 2,
            rtt: Nanos::MAX,
        };
        let (report, _) = run_all(&scenario, RunOptions::new()).unwrap();
        for a in &report.algorithms {
            // First tries at 0 and 500 ms; the second is rejected, retried at the end of time
            // (saturated, not wrapped into the past) and admitted there.
            assert_eq!(
                (a.offered, a.retries, a.rejected),
                (3, 1, 1),
                "{}",
                a.algorithm
            );
            assert_eq!(a.last_event_ns, Nanos::MAX, "{}", a.algorithm);
        }
    }

    use crate::algorithms::LimiterSpec;

    /// A remote that must never be opened.
    struct Unopened;
    impl RemoteFactory for Unopened {
        fn open(&self, _: usize, name: &str, _: LimiterSpec) -> Result<Box<dyn Remote>> {
            panic!("{name} was opened")
        }
    }

    /// A contender that decides in memory only is refused before anything runs or any remote
    /// is opened, with the file and the field that declared it (exit 2).
    #[test]
    fn a_store_refuses_stacks_and_deployments_before_any_work() {
        let text = r#"
            name = "stacked"
            duration = "1s"
            algorithms = ["gcra"]
            [policy]
            limit = 1
            window = "1s"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "2/s"
            [[contender]]
            name = "stack"
            [[contender.rule]]
            name = "r"
            algorithm = "fixed_window"
            limit = 1
            window = "1s"
        "#;
        let scenario = Scenario::parse(text, "s.toml".as_ref()).unwrap();
        let options = RunOptions::new().through(Some(&Unopened));
        let e = run_all(&scenario, options).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let message = e.to_string();
        assert!(
            message.starts_with("s.toml: field `contender[0]`: "),
            "{message}"
        );
        assert!(
            message.contains("contender `stack`: stacked rules"),
            "{message}"
        );
        let deployed = text.replace(
            "[[contender]]",
            "[deployment]\nreplicas = 2\nstore = \"local\"\n[[contender]]",
        );
        let scenario = Scenario::parse(&deployed, "d.toml".as_ref()).unwrap();
        let options = RunOptions::new().through(Some(&Unopened));
        let message = run_all(&scenario, options).unwrap_err().to_string();
        assert!(
            message.starts_with("d.toml: field `deployment`: "),
            "{message}"
        );
        assert!(
            message.contains("a simulated deployment decides"),
            "{message}"
        );
    }

    /// Deployed contenders are timed like every other row.
    #[test]
    fn deployed_contenders_are_timed() {
        let text = r#"
            name = "deployed"
            duration = "10s"
            algorithms = ["gcra", "fixed_window"]
            [policy]
            limit = 5
            window = "1s"
            [deployment]
            replicas = 2
            store = "shared"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "20/s"
        "#;
        let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
        let (report, _) = run_all(&scenario, RunOptions::new().timed(true)).unwrap();
        for (a, t) in report.algorithms.iter().zip(&report.throughput) {
            assert!(a.deployment.is_some(), "{}", a.algorithm);
            assert!(t.decisions_timed >= a.offered, "{}: {t:?}", a.algorithm);
            assert!(t.decisions_per_sec > 0.0, "{}", a.algorithm);
        }
        let (untimed, _) = run_all(&scenario, RunOptions::new()).unwrap();
        assert_eq!(untimed.algorithms, report.algorithms);
        assert!(untimed.throughput.iter().all(|t| t.decisions_timed == 0));
    }
}
