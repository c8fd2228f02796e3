//! One harness around the engine: every kind of contender (the short form, a profile, a
//! stack, a deployment, a run through an external store) only builds its gate; the harness
//! builds the sources, the recorder, the client reactions and the observers, runs
//! [`simulate`], times the decisions and assembles the row.

use super::engine::{Capture, DecisionSink, Detail, Gate, Observers, simulate};
use super::remote::{RemoteFactory, Tally};
use super::{Clients, Progress};
use crate::algorithms::{Decision, MemoryUsage, Params};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, GateFigures, Recorder, RowParts, Throughput, Timing};
use crate::scenario::{Contender, Scenario};
use crate::time::Nanos;
use crate::traffic::{self, Arrival, Direct, Keeps, KeyLayout, KeySpace};
use std::time::{Duration, Instant};

/// Arrivals kept per contender to time its decisions afterwards (16 MiB at most).
pub(super) const CAPTURE_LIMIT: usize = 1 << 20;
/// Whole arrivals kept by a gate that times itself on them (32 bytes each: 16 MiB at most).
pub(super) const ARRIVAL_CAPTURE_LIMIT: usize = 1 << 19;
/// Timing stops after this many decisions or this much time, whichever comes first.
const TIMING_DECISIONS: u64 = 2_000_000;
const TIMING_BUDGET: Duration = Duration::from_millis(40);

/// One contender's part of a run.
pub(super) struct Setup<'a> {
    pub scenario: &'a Scenario,
    pub contender: &'a Contender,
    /// Its index in the scenario.
    pub index: usize,
    pub timed: bool,
    pub progress: Option<&'a Progress>,
    pub remote: Option<&'a dyn RemoteFactory>,
}

/// One contender's row of a run.
pub(super) struct Row<S> {
    pub report: AlgorithmReport,
    pub throughput: Throughput,
    pub stored: Option<Tally>,
    pub sink: Option<S>,
}

/// A kind of contender: its keys, sources and gate, and what it adds to its row. The
/// [`harness`] does the rest.
pub(super) trait Contest {
    type Gate: Gate;
    /// Whether the engine keeps the first `(key, time)` pairs for [`Contest::time`]; a gate
    /// that needs whole arrivals keeps its own ([`Captured`]).
    const ENGINE_CAPTURE: bool = false;

    /// The run's keyspace: one recording identity fields when a sink reads them.
    fn keyspace(&self, scenario: &Scenario, identities: bool) -> KeySpace {
        let keeps = if identities {
            Keeps::Fields
        } else {
            Keeps::Names
        };
        KeySpace::with_layout(KeyLayout::for_sources(&scenario.traffic, keeps))
    }
    /// The run's sources, interning the policy's keys into `keys`.
    fn sources(&mut self, scenario: &Scenario, keys: &mut KeySpace) -> Result<Vec<Direct>> {
        traffic::build_sources(&scenario.traffic, &scenario.policy.key, scenario.seed, keys)
    }
    /// The gate, once the sources registered their keys.
    fn gate(&mut self, setup: &Setup, keys: &KeySpace) -> Result<Self::Gate>;
    /// The parameters the row reports.
    fn params(&self) -> Params;
    /// A stack's rules' parameters, in order (empty: one limiter decides).
    fn rule_params(&self) -> Vec<Params> {
        Vec::new()
    }
    /// The virtual time between two evictions of idle keys.
    fn evict_every(&self) -> Nanos;
    /// After the run, before its result is looked at (a remote's failure makes the figures
    /// moot): what a remote compared.
    fn close(&mut self, _gate: &mut Self::Gate) -> Result<Option<Tally>> {
        Ok(None)
    }
    /// The most memory the gate held, and what it holds at the end.
    fn memory(&self, gate: &mut Self::Gate) -> (MemoryUsage, MemoryUsage);
    /// The gate's own figures for its row.
    fn figures(&self, _gate: &mut Self::Gate) -> GateFigures {
        GateFigures::default()
    }
    /// A fresh gate deciding the run's first arrivals again, timed with [`time`].
    fn time(self, gate: Self::Gate, capture: &Capture) -> Timing;
}

/// Runs one contender through `contest` (see the module docs).
pub(super) fn harness<C: Contest, S: DecisionSink>(
    setup: &Setup,
    mut contest: C,
    mut sink: Option<S>,
) -> Result<Row<S>> {
    let started = Instant::now();
    let scenario = setup.scenario;
    let identities = sink.as_ref().is_some_and(|s| s.wants_identities());
    let mut keys = contest.keyspace(scenario, identities);
    let sources = contest.sources(scenario, &mut keys)?;
    let mut recorder = Recorder::new(
        &scenario.policy,
        &scenario.intent,
        &scenario.traffic,
        (scenario.duration, scenario.bucket),
        scenario.start,
    );
    recorder.reserve_for(&keys);
    let mut capture = if C::ENGINE_CAPTURE && setup.timed {
        Capture::sized(CAPTURE_LIMIT, expected_requests(scenario))
    } else {
        Capture::new(0)
    };
    let mut gate = contest.gate(setup, &keys)?;
    recorder.set_params(contest.params());
    recorder.set_rule_params(&contest.rule_params());
    if setup.contender.is_written() {
        recorder.set_refuse_status(setup.contender.refuse_status);
    }
    let unobserved = Progress::new();
    let observers = Observers {
        recorder: &mut recorder,
        sink: sink.as_mut().map(|s| s as &mut dyn DecisionSink),
        capture: &mut capture,
        progress: setup.progress.unwrap_or(&unobserved),
    };
    let mut clients = Clients::new(&scenario.reactions, scenario.seed);
    let every = contest.evict_every();
    let run = simulate(
        &mut gate,
        sources,
        &mut keys,
        &mut clients,
        every,
        observers,
    );
    let stored = contest.close(&mut gate)?;
    let replay_ends = run?;
    let memory = contest.memory(&mut gate);
    let elapsed = started.elapsed();
    let contender = setup.contender;
    let parts = RowParts {
        name: contender.name.clone(),
        params: contest.params(),
        memory,
        gate: contest.figures(&mut gate),
        replay_ends,
        // `[[contender]]` entries only: the short form's rows keep their shape.
        refuse_status: contender.is_written().then_some(contender.refuse_status),
        alerts: sink.as_mut().and_then(|s| s.row_figures(scenario)),
        features: scenario.features(),
    };
    let report = recorder.finish(&scenario.traffic, &keys, parts);
    let timing = if setup.timed {
        contest.time(gate, &capture)
    } else {
        Timing::default()
    };
    Ok(Row {
        throughput: Throughput::new(&contender.name, timing, elapsed, report.offered),
        report,
        stored,
        sink,
    })
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

/// Wall-clock decisions of `decide` replaying `arrivals` (each handed with its time shifted
/// so the first is at 0), looped (shifted later in time each pass by their span plus
/// `window`; at least once, so every captured arrival is timed whatever the machine's load)
/// until enough decisions were timed.
pub(super) fn time<A>(
    arrivals: &[A],
    time_of: impl Fn(&A) -> Nanos,
    window: Nanos,
    mut decide: impl FnMut(&A, Nanos),
) -> Timing {
    let mut decisions = 0u64;
    let started = Instant::now();
    if let (Some(first), Some(last)) = (arrivals.first(), arrivals.last()) {
        let (start, span) = (time_of(first), time_of(last) - time_of(first));
        let span = span.saturating_add(window);
        let mut offset = 0u64;
        loop {
            for a in arrivals {
                decide(a, (time_of(a) - start).saturating_add(offset));
            }
            decisions += arrivals.len() as u64;
            offset = offset.saturating_add(span);
            if decisions >= TIMING_DECISIONS || started.elapsed() >= TIMING_BUDGET {
                break;
            }
        }
    }
    Timing {
        decisions,
        elapsed: started.elapsed(),
    }
}

/// A gate that keeps the first arrivals it decides (up to `limit`), to be timed on them.
pub(super) struct Captured<G> {
    pub gate: G,
    pub arrivals: Vec<Arrival>,
    limit: usize,
}

impl<G> Captured<G> {
    /// Keeps up to `limit` arrivals (0: none).
    pub fn new(gate: G, limit: usize) -> Self {
        Captured {
            gate,
            arrivals: Vec::with_capacity(limit.min(1 << 14)),
            limit,
        }
    }
}

impl<G: Gate> Gate for Captured<G> {
    fn estimate(&self, arrival: &Arrival) -> Option<f64> {
        self.gate.estimate(arrival)
    }
    fn decide(&mut self, arrival: &Arrival) -> (Decision, Detail<'_>) {
        if self.arrivals.len() < self.limit {
            self.arrivals.push(*arrival);
        }
        self.gate.decide(arrival)
    }
    fn evict_idle(&mut self, now: Nanos) {
        self.gate.evict_idle(now)
    }
    fn prefetch(&self, arrival: &Arrival) {
        self.gate.prefetch(arrival)
    }
    fn identities(&mut self) -> Option<&mut KeySpace> {
        self.gate.identities()
    }
    fn resolve(&mut self, arrival: &mut Arrival, keys: &mut KeySpace) {
        self.gate.resolve(arrival, keys)
    }
}

/// `gate` timed deciding whole `arrivals` again (see [`time`]).
pub(super) fn time_gate<G: Gate>(gate: &mut G, arrivals: &[Arrival], window: Nanos) -> Timing {
    time(
        arrivals,
        |a| a.time,
        window,
        |a, time| {
            std::hint::black_box(gate.decide(&Arrival { time, ..*a }).0);
        },
    )
}
