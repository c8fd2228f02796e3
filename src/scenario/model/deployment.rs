//! `[deployment]` / `[contender.deployment]`: several replicas of the limiter behind a balancer,
//! and where their state lives (docs/distributed.md).
//!
//! The table (`raw.rs`) is validated into a [`Deployment`] the engine's deployment gate runs
//! (`sim::deployment`); `validate/deployment.rs` names
//! the field and line of every refusal.

use crate::algorithms::Params;
use crate::time::Nanos;

/// Most replicas a deployment may have (each holds its own copy of the keyspace in `local`).
pub const MAX_REPLICAS: u64 = 1024;
/// Picks the replica that serves a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Balancer {
    /// Replicas in turn, request after request.
    RoundRobin,
    /// Uniformly at random (seeded).
    Random,
    /// A hash of the client (its address in the synthetic population): sticky clients.
    ClientHash,
    /// A hash of the policy key: every request of a key reaches the same replica.
    KeyHash,
}

impl Balancer {
    /// The name `balancer = "..."` gives (`round_robin`).
    pub fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round_robin",
            Balancer::Random => "random",
            Balancer::ClientHash => "client_hash",
            Balancer::KeyHash => "key_hash",
        }
    }
}

/// How a replica talks to the shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Ops {
    /// One script per request, run atomically in the store (a Lua `EVALSHA`).
    Atomic,
    /// Read the state, decide in the replica, write the new state back.
    Racy,
    /// `INCR`, then (for a new key) a separate `EXPIRE`: a fixed-window counter whose expiry
    /// may never be set.
    IncrThenExpire,
}

impl Ops {
    /// The name `ops = "..."` gives (`incr_then_expire`).
    pub fn name(self) -> &'static str {
        match self {
            Ops::Atomic => "atomic",
            Ops::Racy => "racy",
            Ops::IncrThenExpire => "incr_then_expire",
        }
    }
}

/// Where the limiter's state lives, and how replicas use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Store {
    /// Each replica limits alone; `divided`: each with `max(1, limit / replicas)`.
    Local {
        /// `limit = "divided"`: each replica runs `max(1, limit / replicas)` (burst likewise).
        divided: bool,
    },
    /// One store every replica reaches with a round trip, running one script per request
    /// atomically (a Lua `EVALSHA`).
    Atomic,
    /// One shared store: each replica reads the state, decides, and writes the new state back.
    Racy,
    /// One shared store: `INCR`, then (for a new key) a separate `EXPIRE`, a fixed-window
    /// counter whose expiry is never set when the replica dies in between (`die_chance`).
    IncrThenExpire {
        /// The chance, in [0, 1], that a replica dies between a new key's `INCR` and `EXPIRE`.
        die_chance: f64,
    },
    /// Each replica decides on a local copy and syncs with the store every `sync_every`.
    Cached {
        /// The sync period (ns): replicas push and pull at every multiple of it.
        sync_every: Nanos,
    },
}

impl Store {
    /// A shared store used with `ops`.
    pub fn shared(ops: Ops, die_chance: f64) -> Store {
        match ops {
            Ops::Atomic => Store::Atomic,
            Ops::Racy => Store::Racy,
            Ops::IncrThenExpire => Store::IncrThenExpire { die_chance },
        }
    }

    /// The name `store = "..."` gives: `local`, `shared` or `cached`.
    pub fn name(self) -> &'static str {
        match self {
            Store::Local { .. } => "local",
            Store::Atomic | Store::Racy | Store::IncrThenExpire { .. } => "shared",
            Store::Cached { .. } => "cached",
        }
    }

    /// The operations' name: `atomic`, `racy` or `incr_then_expire` for a shared store; the
    /// store's name otherwise.
    pub fn ops_name(self) -> &'static str {
        match self {
            Store::Atomic => Ops::Atomic.name(),
            Store::Racy => Ops::Racy.name(),
            Store::IncrThenExpire { .. } => Ops::IncrThenExpire.name(),
            Store::Local { divided: true } => "divided",
            other => other.name(),
        }
    }
}

/// The round-trip time between a replica and the store, drawn per round trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rtt {
    /// Every round trip takes this long (ns).
    Constant(Nanos),
    /// Uniform in `[min, max]` (integer nanoseconds).
    Uniform {
        /// The shortest round trip (ns).
        min: Nanos,
        /// The longest round trip (ns), at least `min`.
        max: Nanos,
    },
    /// Log-normal with this median and shape `sigma` (floating point, rounded to whole
    /// nanoseconds).
    LogNormal {
        /// The median round trip (ns).
        median: Nanos,
        /// The standard deviation of the round trip's natural logarithm.
        sigma: f64,
    },
}

/// What replicas do with requests while the store cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// `fail_open`: admit every request that needs the store.
    Open,
    /// `fail_closed`: refuse every request that needs the store, with a `Retry-After` of the
    /// time left in the outage.
    Closed,
}

impl FailMode {
    /// The name `mode = "..."` gives: `fail_open` or `fail_closed`.
    pub fn name(self) -> &'static str {
        match self {
            FailMode::Open => "fail_open",
            FailMode::Closed => "fail_closed",
        }
    }
}

/// The store is unreachable in `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    /// When the store becomes unreachable (virtual ns).
    pub from: Nanos,
    /// When it is reachable again (virtual ns), after `from`.
    pub to: Nanos,
    /// What the replicas do meanwhile.
    pub mode: FailMode,
}

/// A validated deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    /// The number of replicas, 1 to [`MAX_REPLICAS`].
    pub replicas: u32,
    /// How requests are spread over the replicas.
    pub balancer: Balancer,
    /// Where the state lives and how the replicas use it.
    pub store: Store,
    /// The replica–store round trip (unused by a local store).
    pub rtt: Rtt,
    /// Replica `r`'s clock runs `r × clock_offset` ahead of replica 0's.
    pub clock_offset: Nanos,
    /// Sorted, not overlapping.
    pub outages: Vec<Outage>,
}

impl Deployment {
    /// The parameters each replica's limiter runs with: `params`, or the limit divided.
    pub fn replica_params(&self, params: Params) -> Params {
        match self.store {
            Store::Local { divided: true } => {
                let limit = (params.limit / self.replicas as u64).max(1);
                let burst = (params.burst / self.replicas as u64).max(1);
                Params {
                    limit,
                    window: params.window,
                    burst,
                }
            }
            _ => params,
        }
    }

    /// The typical round trip (the constant, a uniform's mean, a log-normal's median; 0 for a
    /// local store) and the sync period (0 unless cached), as the report gives them.
    pub fn periods(&self) -> [Nanos; 2] {
        let rtt = match (self.store, self.rtt) {
            (Store::Local { .. }, _) => 0,
            (_, Rtt::Constant(x)) => x,
            (_, Rtt::Uniform { min, max }) => min + (max - min) / 2,
            (_, Rtt::LogNormal { median, .. }) => median,
        };
        let sync = match self.store {
            Store::Cached { sync_every } => sync_every,
            _ => 0,
        };
        [rtt, sync]
    }

    /// The outage covering `t`, if any.
    pub fn outage_at(&self, t: Nanos) -> Option<&Outage> {
        self.outages.iter().find(|o| o.from <= t && t < o.to)
    }
}
