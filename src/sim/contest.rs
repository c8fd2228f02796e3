//! The gates of one-limiter contenders (the short form, a profile, a run through a remote, a
//! deployment), and the choice of a contender's [`Contest`] by its shape.

use super::deployment::Deployed;
use super::engine::{Capture, DecisionSink};
use super::harness::{
    ARRIVAL_CAPTURE_LIMIT, Captured, Contest, Row, Setup, harness, time, time_gate,
};
use super::remote::{RemoteFactory, Shadowed, Tally};
use crate::algorithms::{KeyedLimiter, Limiter, LimiterSpec, LimiterVisitor, MemoryUsage, Params};
use crate::error::Result;
use crate::metrics::{GateFigures, Timing};
use crate::scenario::Shape;
use crate::scenario::deployment::Deployment;
use crate::time::Nanos;
use crate::traffic::KeySpace;
use std::hint::black_box;

/// Runs the contender of `setup` through the harness, with the gate its shape needs.
pub(super) fn run<S: DecisionSink>(setup: &Setup, sink: Option<S>) -> Result<Row<S>> {
    match &setup.contender.shape {
        Shape::Stack(stack) => {
            let contest = super::contender::StackContest::new(setup.scenario, stack);
            harness(setup, contest, sink)
        }
        Shape::Recorded(params) => {
            let contest = super::recorded::RecordedContest::new(setup, *params);
            harness(setup, contest, sink)
        }
        Shape::Deployed {
            replica,
            deployment,
            ..
        } => visit(setup, sink, *replica, On::Replicas(deployment)),
        Shape::Single(limiter) => {
            let on = setup.remote.map_or(On::Node, On::Remote);
            visit(setup, sink, *limiter, on)
        }
    }
}

/// Runs a one-limiter contender: `spec` deciding `on` a node, a remote or replicas.
fn visit<S: DecisionSink>(
    setup: &Setup,
    sink: Option<S>,
    spec: LimiterSpec,
    on: On,
) -> Result<Row<S>> {
    spec.visit(Visit {
        setup,
        sink,
        on,
        spec,
    })
}

/// Where a one-limiter contender decides.
enum On<'a> {
    /// In memory on one node.
    Node,
    /// In memory with a remote deciding beside it.
    Remote(&'a dyn RemoteFactory),
    /// On a deployment's replicas.
    Replicas(&'a Deployment),
}

/// Builds the contest of a one-limiter contender once its concrete limiter is known.
struct Visit<'a, S> {
    setup: &'a Setup<'a>,
    sink: Option<S>,
    on: On<'a>,
    /// The limiter as specified (its parameters are those its row reports).
    spec: LimiterSpec,
}

impl<S: DecisionSink> LimiterVisitor for Visit<'_, S> {
    type Output = Result<Row<S>>;
    fn visit<L: Limiter + 'static>(self, limiter: L) -> Self::Output {
        let (setup, spec) = (self.setup, self.spec);
        let params = spec.params();
        match self.on {
            On::Replicas(dep) => {
                let contest = DeployedContest {
                    limiter,
                    params,
                    dep,
                    seed: setup.scenario.seed,
                    duration: setup.scenario.duration,
                    capture: if setup.timed {
                        ARRIVAL_CAPTURE_LIMIT
                    } else {
                        0
                    },
                };
                harness(setup, contest, self.sink)
            }
            On::Remote(factory) => {
                let contest = ThroughContest {
                    limiter,
                    spec,
                    factory,
                };
                harness(setup, contest, self.sink)
            }
            On::Node => harness(setup, SingleContest::new(limiter, params), self.sink),
        }
    }
}

/// One keyed limiter under the policy's key: the short form and profiles.
struct SingleContest<L> {
    limiter: L,
    params: Params,
}

impl<L> SingleContest<L> {
    fn new(limiter: L, params: Params) -> Self {
        SingleContest { limiter, params }
    }
}

/// A fresh keyed limiter timed on the engine's capture.
fn time_keyed<L: Limiter>(limiter: L, capture: &Capture, window: Nanos) -> Timing {
    let mut fresh = KeyedLimiter::new(limiter);
    time(
        &capture.arrivals,
        |a| a.1,
        window,
        |&(key, _, cost), t| {
            black_box(fresh.decide_n(key, t, cost));
        },
    )
}

impl<L: Limiter> Contest for SingleContest<L> {
    type Gate = KeyedLimiter<L>;
    const ENGINE_CAPTURE: bool = true;

    fn gate(&mut self, _: &Setup, keys: &KeySpace) -> Result<Self::Gate> {
        let mut keyed = KeyedLimiter::new(self.limiter.clone());
        keyed.reserve(keys.len());
        Ok(keyed)
    }
    fn params(&self) -> Params {
        self.params
    }
    fn evict_every(&self) -> Nanos {
        self.params.window
    }
    fn memory(&self, gate: &mut Self::Gate) -> (MemoryUsage, MemoryUsage) {
        (gate.peak_memory(), gate.memory())
    }
    fn time(self, gate: Self::Gate, capture: &Capture) -> Timing {
        time_keyed(gate.into_limiter(), capture, self.params.window)
    }
}

/// The in-memory limiter with a remote deciding beside it ([`Shadowed`]).
struct ThroughContest<'a, L> {
    limiter: L,
    /// What the remote runs (and the row reports).
    spec: LimiterSpec,
    factory: &'a dyn RemoteFactory,
}

impl<L: Limiter> Contest for ThroughContest<'_, L> {
    type Gate = Shadowed<L>;
    const ENGINE_CAPTURE: bool = true;

    fn gate(&mut self, setup: &Setup, keys: &KeySpace) -> Result<Self::Gate> {
        let remote = self
            .factory
            .open(setup.index, &setup.contender.name, self.spec)?;
        let mut keyed = KeyedLimiter::new(self.limiter.clone());
        keyed.reserve(keys.len());
        Ok(Shadowed { keyed, remote })
    }
    fn params(&self) -> Params {
        self.spec.params()
    }
    fn evict_every(&self) -> Nanos {
        self.spec.params().window
    }
    fn close(&mut self, gate: &mut Self::Gate) -> Result<Option<Tally>> {
        gate.remote.finish().map(Some)
    }
    fn memory(&self, gate: &mut Self::Gate) -> (MemoryUsage, MemoryUsage) {
        (gate.keyed.peak_memory(), gate.keyed.memory())
    }
    fn time(self, gate: Self::Gate, capture: &Capture) -> Timing {
        // The model alone: the store's round trips are not the algorithm's speed.
        time_keyed(
            gate.keyed.into_limiter(),
            capture,
            self.spec.params().window,
        )
    }
}

/// A limiter on several replicas behind a balancer ([`Deployed`]).
struct DeployedContest<'d, L> {
    limiter: L,
    /// The replica's parameters.
    params: Params,
    dep: &'d Deployment,
    seed: u64,
    /// The scenario's.
    duration: Nanos,
    capture: usize,
}

impl<'d, L: Limiter> Contest for DeployedContest<'d, L> {
    type Gate = Captured<Deployed<'d, L>>;

    fn gate(&mut self, _: &Setup, _: &KeySpace) -> Result<Self::Gate> {
        let limiter = self.limiter.clone();
        let (limit, window) = (self.params.limit, self.params.window);
        let gate = Deployed::new(limiter, limit, window, self.dep, self.seed);
        Ok(Captured::new(gate, self.capture))
    }
    fn params(&self) -> Params {
        self.params
    }
    fn evict_every(&self) -> Nanos {
        self.params.window
    }
    fn memory(&self, gate: &mut Self::Gate) -> (MemoryUsage, MemoryUsage) {
        gate.gate.note_memory();
        (gate.gate.peak, gate.gate.end)
    }
    fn figures(&self, gate: &mut Self::Gate) -> GateFigures {
        let dep = self.dep;
        let names = [dep.store.name(), dep.store.ops_name(), dep.balancer.name()];
        let tally = &gate.gate.tally;
        GateFigures {
            deployment: Some(tally.finish(dep.replicas, names, dep.periods(), self.duration)),
            ..GateFigures::default()
        }
    }
    fn time(self, gate: Self::Gate, _: &Capture) -> Timing {
        let (limit, window) = (self.params.limit, self.params.window);
        let limiter = gate.gate.into_limiter();
        let mut fresh = Deployed::new(limiter, limit, window, self.dep, self.seed);
        time_gate(&mut fresh, &gate.arrivals, window)
    }
}
