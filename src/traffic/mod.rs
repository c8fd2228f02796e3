//! Traffic: lazily generated (or replayed) request streams, one per `[[traffic]]` source.
//!
//! Every source yields its requests in time order and never holds more than its next request;
//! the engine merges the sources by time. Randomness comes from one ChaCha stream per source,
//! derived from the scenario seed and the source's index, so adding a source never changes the
//! requests of the others and a seed means the same traffic in every rlsim version.

mod keys;
mod periodic;
mod poisson;
mod replay;

pub use keys::{Identity, KeySpace, MAX_GENERATED_IPS};
pub use replay::{ReplaySource, check_trace_header};

use crate::algorithms::KeyId;
use crate::error::Result;
use crate::policy::KeySpec;
use crate::time::{Nanos, Rate};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// Whether a source's requests are wanted traffic or an attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Legit,
    Abusive,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Legit => "legit",
            Role::Abusive => "abusive",
        }
    }
}

/// How one source's requests are spaced in time.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// Each client sends at exactly `rate`; clients are phased evenly so the source as a whole
    /// is periodic at `clients × rate`.
    Constant(Rate),
    /// Each client is a Poisson process of `rate` (the source: Poisson at `clients × rate`).
    Poisson(Rate),
    /// Every `every`, each client sends `count` requests spread evenly over `spread`.
    Bursts {
        count: u64,
        every: Nanos,
        spread: Nanos,
    },
    /// Each client sends `count` requests at `at - lead` and `count` at `at`, `at` being a window
    /// boundary, each batch spread evenly over `spread`.
    Boundary {
        count: u64,
        at: Nanos,
        lead: Nanos,
        spread: Nanos,
    },
    /// Records read from a CSV trace.
    Replay { path: PathBuf },
}

/// How the clients of a synthetic source get their identity fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdGen {
    /// Every client has this value.
    Fixed(String),
    /// `n` distinct generated values; client `j` gets value `j mod n` (many users behind few
    /// NAT addresses).
    Pool(u32),
    /// A distinct generated value per client.
    PerClient,
}

/// The clients of a synthetic source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Population {
    pub clients: u32,
    pub ip: IdGen,
    pub user: IdGen,
    pub api_key: IdGen,
    pub endpoint: String,
}

/// One validated `[[traffic]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    pub name: String,
    pub role: Role,
    pub arrivals: Arrivals,
    /// No request before this time.
    pub start: Nanos,
    /// No request at or after this time.
    pub stop: Nanos,
    pub population: Population,
}

/// One request, as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub time: Nanos,
    pub key: KeyId,
    /// Index of the source in the scenario.
    pub source: u16,
}

/// A stream of requests in nondecreasing time order.
pub trait Source: Send {
    /// The next request, or `None` when the source is exhausted. Only replayed traffic can fail.
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>>;
}

/// Builds the sources of a scenario, registering every synthetic client's key up front.
pub fn build_sources(
    specs: &[SourceSpec],
    key_spec: &KeySpec,
    seed: u64,
    keys: &mut KeySpace,
) -> Result<Vec<Box<dyn Source>>> {
    specs
        .iter()
        .enumerate()
        .map(|(index, spec)| build_source(index, spec, key_spec, seed, keys))
        .collect()
}

fn build_source(
    index: usize,
    spec: &SourceSpec,
    key_spec: &KeySpec,
    seed: u64,
    keys: &mut KeySpace,
) -> Result<Box<dyn Source>> {
    let source = u16::try_from(index).expect("validated: at most 65535 sources");
    if let Arrivals::Replay { path } = &spec.arrivals {
        return Ok(Box::new(ReplaySource::open(
            path, source, spec.start, spec.stop, key_spec,
        )?));
    }
    let client_keys: Vec<KeyId> = (0..spec.population.clients)
        .map(|j| keys.intern_identity(key_spec, &Identity::of_client(spec, index, j)))
        .collect();
    let rng = source_rng(seed, index);
    Ok(match &spec.arrivals {
        Arrivals::Constant(rate) => {
            Box::new(periodic::Constant::new(spec, source, *rate, client_keys))
        }
        Arrivals::Poisson(rate) => {
            Box::new(poisson::Poisson::new(spec, source, *rate, client_keys, rng))
        }
        Arrivals::Bursts {
            count,
            every,
            spread,
        } => Box::new(periodic::Batches::bursts(
            spec,
            source,
            *count,
            *every,
            *spread,
            client_keys,
        )),
        Arrivals::Boundary {
            count,
            at,
            lead,
            spread,
        } => Box::new(periodic::Batches::boundary(
            spec,
            source,
            *count,
            *at,
            *lead,
            *spread,
            client_keys,
        )),
        Arrivals::Replay { .. } => unreachable!("handled above"),
    })
}

/// The random stream of source `index`: the scenario seed selects the key, the source index the
/// ChaCha stream, so sources are independent and stable under reordering of later sources.
fn source_rng(seed: u64, index: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index as u64);
    rng
}
