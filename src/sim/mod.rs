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
pub mod deployment;
mod engine;
#[cfg(test)]
mod mirror_tests;
mod progress;
mod queue;
mod remote;

pub use clients::Clients;
pub use engine::{Capture, DecisionSink, Detail, Gate, Observers, simulate};
pub use progress::Progress;
pub use queue::{Event, EventKind, EventQueue, ScheduledInThePast};
pub use remote::{Remote, RemoteFactory, Shadowed};

use crate::algorithms::{KeyedLimiter, Limiter, LimiterVisitor};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, Recorder, Throughput};
use crate::scenario::{AlgorithmSpec, Scenario};
use crate::traffic::{self, Keeps, KeyLayout, KeySpace};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Arrivals kept per algorithm to time its decisions afterwards (16 MiB at most).
const CAPTURE_LIMIT: usize = 1 << 20;
/// Timing stops after this many decisions or this much time, whichever comes first.
const TIMING_DECISIONS: u64 = 2_000_000;
const TIMING_BUDGET: Duration = Duration::from_millis(40);

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// One entry per algorithm, in the scenario's order.
    pub algorithms: Vec<AlgorithmReport>,
    /// Wall-clock figures, same order. Not deterministic.
    pub throughput: Vec<Throughput>,
}

/// Simulates every algorithm of `scenario`. `make_sink` may give each algorithm a decision sink;
/// the sinks are handed back, in order, for the caller to finish. `progress`, if given, is
/// updated as the engines go (for a progress bar on another thread).
pub fn run<S, F>(
    scenario: &Scenario,
    make_sink: F,
    progress: Option<&Progress>,
) -> Result<(RunReport, Vec<Option<S>>)>
where
    S: DecisionSink + Send,
    F: Fn(usize, &AlgorithmSpec) -> Result<Option<S>> + Sync,
{
    run_through(scenario, None, make_sink, progress)
}

/// [`run`], with every decision made by `remote` (an external store) as well as in memory; the
/// run follows the remote's decisions (see [`Remote`]). `None` is [`run`].
pub fn run_through<S, F>(
    scenario: &Scenario,
    remote: Option<&dyn RemoteFactory>,
    make_sink: F,
    progress: Option<&Progress>,
) -> Result<(RunReport, Vec<Option<S>>)>
where
    S: DecisionSink + Send,
    F: Fn(usize, &AlgorithmSpec) -> Result<Option<S>> + Sync,
{
    let results: Vec<(AlgorithmReport, Throughput, Option<S>)> = scenario
        .algorithms
        .par_iter()
        .enumerate()
        .map(|(i, spec)| {
            let sink = make_sink(i, spec)?;
            match remote {
                None => run_one(scenario, spec, sink, true, progress),
                Some(r) => run_one_through(scenario, spec, sink, true, progress, Some((i, r))),
            }
        })
        .collect::<Result<_>>()?;
    let mut report = RunReport {
        algorithms: Vec::with_capacity(results.len()),
        throughput: Vec::with_capacity(results.len()),
    };
    let mut sinks = Vec::with_capacity(results.len());
    for (a, t, s) in results {
        report.algorithms.push(a);
        report.throughput.push(t);
        sinks.push(s);
    }
    Ok((report, sinks))
}

/// Simulates one algorithm. With `measure_decisions`, the limiter is then timed on its own over the
/// run's first arrivals (about 40 ms of wall time); otherwise the decision figures are zero.
pub fn run_one<S: DecisionSink>(
    scenario: &Scenario,
    spec: &AlgorithmSpec,
    sink: Option<S>,
    measure_decisions: bool,
    progress: Option<&Progress>,
) -> Result<(AlgorithmReport, Throughput, Option<S>)> {
    run_one_through(scenario, spec, sink, measure_decisions, progress, None)
}

/// [`run_one`], deciding through `remote` (the algorithm's index and the factory) if given.
fn run_one_through<S: DecisionSink>(
    scenario: &Scenario,
    spec: &AlgorithmSpec,
    sink: Option<S>,
    measure_decisions: bool,
    progress: Option<&Progress>,
    remote: Option<(usize, &dyn RemoteFactory)>,
) -> Result<(AlgorithmReport, Throughput, Option<S>)> {
    if remote.is_some() && spec.deployment.is_some() {
        return Err(crate::error::Error::Usage(format!(
            "contender `{}`: a simulated deployment decides in memory only; an external store \
             (--store) runs the short-form algorithms",
            spec.name
        )));
    }
    if let Some(stack) = &spec.stack {
        if remote.is_some() {
            return Err(crate::error::Error::Usage(format!(
                "contender `{}`: stacked rules decide in memory only; an external store \
                 (--store) runs the short-form algorithms",
                spec.name
            )));
        }
        return contender::run_stack(scenario, spec, stack, sink, measure_decisions, progress);
    }
    struct Visit<'a, S> {
        scenario: &'a Scenario,
        spec: &'a AlgorithmSpec,
        sink: Option<S>,
        time: bool,
        progress: Option<&'a Progress>,
        remote: Option<(usize, &'a dyn RemoteFactory)>,
    }
    impl<S: DecisionSink> LimiterVisitor for Visit<'_, S> {
        type Output = Result<(AlgorithmReport, Throughput, Option<S>)>;
        fn visit<L: Limiter + 'static>(mut self, limiter: L) -> Self::Output {
            let started = Instant::now();
            let scenario = self.scenario;
            let identities = self.sink.as_ref().is_some_and(|s| s.wants_identities());
            let keeps = if identities {
                Keeps::Fields
            } else {
                Keeps::Names
            };
            let mut keys = KeySpace::with_layout(KeyLayout::for_sources(&scenario.traffic, keeps));
            let sources = traffic::build_sources(
                &scenario.traffic,
                &scenario.policy.key,
                scenario.seed,
                &mut keys,
            )?;
            let mut recorder = Recorder::new(
                &scenario.policy,
                &scenario.traffic,
                scenario.duration,
                scenario.bucket,
            );
            recorder.reserve_for(&keys);
            let mut capture = if self.time {
                Capture::sized(CAPTURE_LIMIT, expected_requests(scenario))
            } else {
                Capture::new(0)
            };
            let remote = match self.remote {
                Some((i, factory)) => Some(factory.open(i, self.spec, &limiter)?),
                None => None,
            };
            let unobserved = Progress::new();
            let observers = Observers {
                recorder: &mut recorder,
                sink: self.sink.as_mut().map(|s| s as &mut dyn DecisionSink),
                capture: &mut capture,
                progress: self.progress.unwrap_or(&unobserved),
            };
            let mut clients = Clients::new(&scenario.reactions, scenario.seed);
            let window = self.spec.params.window;
            if let Some(dep) = self.spec.deployment.as_deref() {
                let params = dep.replica_params(self.spec.params);
                let mut gate =
                    deployment::Deployed::new(limiter, params.limit, window, dep, scenario.seed);
                simulate(
                    &mut gate,
                    sources,
                    &mut keys,
                    &mut clients,
                    window,
                    observers,
                )?;
                gate.note_memory();
                let elapsed = started.elapsed();
                let name = self.spec.name.as_str();
                let mut report =
                    recorder.finish(&scenario.traffic, name, params, &keys, gate.peak, gate.end);
                fill_absent(scenario, &mut report);
                let names = [dep.store.name(), dep.store.ops_name(), dep.balancer.name()];
                report.deployment =
                    Some(
                        gate.tally
                            .finish(dep.replicas, names, dep.periods(), scenario.duration),
                    );
                let throughput = Throughput {
                    algorithm: name.to_string(),
                    decisions_timed: 0,
                    decision_elapsed_ns: 0,
                    decisions_per_sec: 0.0,
                    simulation_elapsed_ns: elapsed.as_nanos() as u64,
                    simulated_requests_per_sec: report.offered as f64
                        / elapsed.as_secs_f64().max(1e-9),
                };
                return Ok((report, throughput, self.sink));
            }
            let mut keyed = KeyedLimiter::new(limiter);
            keyed.reserve(keys.len());
            if let Some(remote) = remote {
                let mut shadowed = Shadowed { keyed, remote };
                let run = simulate(
                    &mut shadowed,
                    sources,
                    &mut keys,
                    &mut clients,
                    window,
                    observers,
                );
                // The store's failure first: a poisoned remote makes the run's figures moot.
                shadowed.remote.finish()?;
                run?;
                keyed = shadowed.keyed;
            } else {
                simulate(
                    &mut keyed,
                    sources,
                    &mut keys,
                    &mut clients,
                    window,
                    observers,
                )?;
            }
            let simulation_elapsed = started.elapsed();
            let name = self.spec.name.as_str();
            let (peak, end) = (keyed.peak_memory(), keyed.memory());
            let mut report =
                recorder.finish(&scenario.traffic, name, self.spec.params, &keys, peak, end);
            fill_absent(scenario, &mut report);
            let fresh = KeyedLimiter::new(keyed.into_limiter());
            let throughput = time_decisions(fresh, &capture, self.spec.params.window);
            let throughput = Throughput {
                algorithm: name.to_string(),
                simulation_elapsed_ns: simulation_elapsed.as_nanos() as u64,
                simulated_requests_per_sec: report.offered as f64
                    / simulation_elapsed.as_secs_f64().max(1e-9),
                ..throughput
            };
            Ok((report, throughput, self.sink))
        }
    }
    let visit = Visit {
        scenario,
        spec,
        sink,
        time: measure_decisions,
        progress,
        remote,
    };
    match spec.deployment.as_deref() {
        // Each replica with its share of the limit (validation refused it for profiles).
        Some(dep) if dep.replica_params(spec.params) != spec.params => {
            spec.kind.visit(dep.replica_params(spec.params), visit)
        }
        _ => spec.visit(visit),
    }
    .expect("parameters were validated with the scenario")
}

/// About how many first tries the scenario's sources send, with an eighth more for retries
/// (sizes the capture; a wrong guess only costs a regrowth); `None` with a replayed source.
fn expected_requests(scenario: &Scenario) -> Option<usize> {
    let mut total = 0.0;
    for spec in &scenario.traffic {
        total += spec.expected_requests()?;
    }
    Some((total * 1.125).ceil().min(usize::MAX as f64) as usize)
}

/// Beside contenders, a short-form row has their figures too (all zero); beside deployments, a
/// single node's deployment figures (one replica, no store): every row of summary.csv has the
/// same columns.
fn fill_absent(scenario: &Scenario, report: &mut AlgorithmReport) {
    if crate::scenario::contender::uses_contenders(scenario) {
        report.bypassed = Some(0);
        report.unlimited = Some(0);
        report.warned = Some(0);
    }
    if crate::scenario::deployment::uses_deployments(scenario) {
        report.deployment = Some(crate::metrics::DeploymentReport::single_node());
    }
}

/// Wall-clock decisions per second of a fresh limiter replaying the captured arrivals, looped
/// (shifted later in time each pass) until enough decisions were timed.
fn time_decisions<L: Limiter>(
    mut limiter: KeyedLimiter<L>,
    capture: &Capture,
    window: u64,
) -> Throughput {
    let arrivals = &capture.arrivals;
    let mut decisions = 0u64;
    let started = Instant::now();
    if let (Some(first), Some(last)) = (arrivals.first(), arrivals.last()) {
        let span = (last.1 - first.1).saturating_add(window);
        let mut offset = 0u64;
        while decisions < TIMING_DECISIONS && started.elapsed() < TIMING_BUDGET {
            for &(key, time) in arrivals {
                black_box(limiter.decide(key, (time - first.1).saturating_add(offset)));
            }
            decisions += arrivals.len() as u64;
            offset = offset.saturating_add(span);
        }
    }
    let elapsed = started.elapsed();
    Throughput {
        algorithm: String::new(),
        decisions_timed: decisions,
        decision_elapsed_ns: elapsed.as_nanos() as u64,
        decisions_per_sec: decisions as f64 / elapsed.as_secs_f64().max(1e-9),
        simulation_elapsed_ns: 0,
        simulated_requests_per_sec: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::Decision;
    use crate::time::Nanos;
    use crate::traffic::{Arrival, Reaction, Retry};

    /// No decision log.
    struct NoSink;
    impl DecisionSink for NoSink {
        fn record(&mut self, _: &Arrival, _: &Decision, _: &Detail, _: &KeySpace) -> Result<()> {
            Ok(())
        }
    }

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
        let (report, _) = run::<NoSink, _>(&scenario, |_, _| Ok(None), None).unwrap();
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
}
