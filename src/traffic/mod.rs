//! Traffic: lazily generated (or replayed) request streams, one per `[[traffic]]` source.
//!
//! Every source yields its requests in time order and never holds more than its next request;
//! the engine merges the sources by time. Randomness comes from one ChaCha stream per source,
//! derived from the scenario seed and the source's index, so adding a source never changes the
//! requests of the others and a seed means the same traffic in every rlsim version.

pub mod cost;
mod direct;
pub mod export;
mod identity;
pub(crate) mod intensity;
mod key_name;
mod keys;
mod kind;
pub(crate) mod method;
mod modulated;
mod periodic;
mod poisson;
pub(crate) mod population;
mod reaction;
mod replay;
mod stamp;
pub mod tokens;
pub(crate) mod via;

pub use direct::Direct;
pub use identity::{GENERATED_IPV4_SOURCES, Identity, MAX_GENERATED_IPS};
pub use intensity::{Intensity, Periods, Phase, Work};
pub(crate) use keys::reads_forwarded;
pub use keys::{Keeps, KeyLayout, KeySpace, Lookups};
pub use kind::{ArrivalKind, TrafficKind};
pub use method::Method;
pub use periodic::Constant;
pub use poisson::Poisson;
pub use population::RateDist;
pub use population::{Clients, Picker};
pub use reaction::{Jitter, Reaction, Retry};
pub use replay::{
    DEFAULT_LOG_FORMAT, HaproxyLogFormat, Logged, MAX_IN_MEMORY, MAX_LINE, NginxLogFormat, Part,
    Production, ROUTES, Record, ReplayEnd, ReplayOptions, ReplaySource, SameSecond, Stopped,
    TraceData, TraceFormat, Verdict, detect_format, prepare_trace, replay_warnings, split_sources,
    trace_start,
};
pub use tokens::{TokenModel, Tokens};
pub use via::{Hop, Network, Rotation, Wire};

use crate::algorithms::{Cost, KeyId};
use crate::error::Result;
use crate::policy::{KeyField, KeySpec};
use crate::rng::{self, Stream};
use crate::time::{Nanos, Rate};
use std::path::PathBuf;

/// Whether a source's requests are wanted traffic or an attack.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Wanted traffic, which the limiter should admit.
    Legit,
    /// Attack traffic, which the limiter should stop.
    Abusive,
}

impl Role {
    /// The role's name in scenarios and outputs: `legit` or `abusive`.
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
    /// Each client is a Poisson process of the given intensity: a constant rate (the source:
    /// Poisson at `clients × rate`), or one that varies with time or at random.
    Poisson(Intensity),
    /// Every `every`, each client sends `count` requests spread evenly over `spread`.
    Bursts {
        /// Requests per client in each burst.
        count: u64,
        /// The span from one burst's start to the next's, in ns.
        every: Nanos,
        /// The span each burst's requests are spread evenly over, in ns (0: all at once).
        spread: Nanos,
    },
    /// Each client sends `count` requests at `at - lead` and `count` at `at`, `at` being a window
    /// boundary, each batch spread evenly over `spread`.
    Boundary {
        /// Requests per client in each of the two batches.
        count: u64,
        /// The window boundary the second batch is sent at, in ns of virtual time.
        at: Nanos,
        /// How long before `at` the first batch is sent, in ns.
        lead: Nanos,
        /// The span each batch's requests are spread evenly over, in ns (0: all at once).
        spread: Nanos,
        /// Repeat at every boundary `at + i·every` (`None`: once).
        every: Option<Nanos>,
    },
    /// Records read from a trace file.
    Replay {
        /// The trace file.
        path: PathBuf,
        /// How the trace is read and timed.
        options: ReplayOptions,
    },
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
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    /// The number of clients in the source.
    pub clients: u32,
    /// How the clients get their `ip` field.
    pub ip: IdGen,
    /// How the clients get their `user` field.
    pub user: IdGen,
    /// How the clients get their `api_key` field.
    pub api_key: IdGen,
    /// The endpoint of every request, or the first of `endpoints`.
    pub endpoint: String,
    /// A weighted mix of endpoints, drawn per request; empty for `endpoint` alone.
    pub endpoints: Vec<(String, u32)>,
    /// Generated addresses are IPv6 (`2001:db8:<source>::<n>`) instead of `10.<source>.x.y`.
    pub ipv6: bool,
    /// How per-client rates spread around `rate`.
    pub rates: RateDist,
    /// Tiers with their weights (`free`, `pro`, ...): client `j` gets [`Population::tier`].
    pub tiers: Vec<(String, u32)>,
    /// The path to the origin, forged headers and sign-in (`via`, `forge_*`, `signed_in`).
    pub network: via::Network,
    /// HTTP methods with their weights (`method` or `methods`); empty: every request `GET`.
    pub methods: Vec<(method::Method, u32)>,
    /// What each request weighs (`cost`, `cost_dist`, `costs`, a method's `cost`).
    pub costs: cost::CostModel,
    /// An LLM source's tokens (`input_tokens`, `output_tokens`, ...); `None` for any other.
    pub tokens: Option<tokens::TokenModel>,
    /// Characters per prompt token of its requests, in thousandths (`chars_per_token`;
    /// [`tokens::ENGLISH_MILLI_CHARS`] unless stated): what a limiter estimating prompts
    /// from their characters counts.
    pub milli_chars_per_token: u32,
}

impl Population {
    /// The tier of client `j`, if the source has tiers.
    pub fn tier(&self, j: u32) -> Option<&str> {
        population::tier_of(&self.tiers, j, self.clients)
    }
}

/// One validated `[[traffic]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    /// The source's `name`, unique in the scenario, as reports and outputs label it.
    pub name: String,
    /// The `kind` the scenario gave it (`nat`, `scraper`, ...), as reports name it.
    pub kind: TrafficKind,
    /// Whether the source is wanted traffic or an attack.
    pub role: Role,
    /// How its requests are spaced in time.
    pub arrivals: Arrivals,
    /// No request before this time.
    pub start: Nanos,
    /// No request at or after this time.
    pub stop: Nanos,
    /// Its clients and their identities.
    pub population: Population,
    /// A constant source's timing jitter, in millionths of the gap between its requests
    /// (`jitter = "5%"` is 50000); 0: exactly periodic.
    pub jitter_ppm: u32,
}

impl Arrivals {
    /// The name reports give its timing: the arrival process, or the kind that times itself.
    pub fn name(&self) -> &'static str {
        match self {
            Arrivals::Constant(_) => ArrivalKind::Constant.name(),
            Arrivals::Poisson(intensity) => intensity.name(),
            Arrivals::Bursts { .. } => TrafficKind::Bursts.name(),
            Arrivals::Boundary { .. } => TrafficKind::Boundary.name(),
            Arrivals::Replay { .. } => TrafficKind::Replay.name(),
        }
    }
}

impl SourceSpec {
    /// Whether its requests may weigh more than 1 (a generated source's costs; a replayed
    /// trace's are known only as it is read).
    pub fn has_costs(&self) -> bool {
        !self.population.costs.is_unit()
    }

    /// Whether its responses may settle less than their requests were charged (a generated
    /// source's actual costs; a replayed trace's are known only as it is read).
    pub fn settles(&self) -> bool {
        self.population.costs.settles()
    }

    /// About how many first tries the source sends (`None` for a replay, which is as long as
    /// its file). Floating point: an estimate for sanity checks, never for generation.
    pub fn expected_requests(&self) -> Option<f64> {
        let span = self.stop.saturating_sub(self.start);
        let clients = self.population.clients as f64;
        let batches = |every: Nanos| span.div_ceil(every) as f64;
        Some(match &self.arrivals {
            Arrivals::Constant(rate) => clients * span as f64 / rate.mean_interval_ns(),
            Arrivals::Poisson(intensity) => clients * intensity.expected_events(span),
            Arrivals::Bursts { count, every, .. } => clients * *count as f64 * batches(*every),
            Arrivals::Boundary { count, every, .. } => {
                2.0 * clients * *count as f64 * every.map_or(1.0, batches)
            }
            Arrivals::Replay { .. } => return None,
        })
    }
}

impl SourceSpec {
    /// About how many steps generating the source takes: its requests, or for a thinned
    /// Poisson process its candidates and state switches (see [`Intensity::expected_work`]).
    /// `None` for a replay. Floating point: an estimate for the work guard.
    pub fn expected_work(&self) -> Option<f64> {
        match &self.arrivals {
            Arrivals::Poisson(intensity) => Some(intensity.expected_work(
                self.stop.saturating_sub(self.start),
                self.population.clients as f64,
            )),
            _ => self.expected_requests(),
        }
    }
}

/// One request, as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// When the request arrives, in ns of virtual time.
    pub time: Nanos,
    /// The request's rate-limiting key under the policy's key spec.
    pub key: KeyId,
    /// Who sent it: the user identity, interned (see [`KeySpace::intern_client`]). Several
    /// clients can share a key (users behind one NAT address).
    pub client: ClientId,
    /// Index of the source in the scenario.
    pub source: u16,
    /// 0 for a first try; n for a client's n-th retry of the same request.
    pub attempt: u32,
    /// The request's whole identity (every key field) as a key id, for contenders whose rules
    /// key differently from the policy; equal to `key` where nothing needs it.
    pub identity: KeyId,
    /// The forged address a rotating forger (`xff_rotator`, `cdn_bypass`) sent with this
    /// request, as an IPv4 number (what the stack of a contender re-keys on); 0 otherwise.
    pub forged: u32,
    /// The HTTP method's code (`method::Method::code`): 0, `GET`, unless the source says.
    pub method: u8,
    /// What production decided of a replayed request, and its route ([`Logged::NONE`] for
    /// the others).
    pub logged: Logged,
    /// What the request weighs ([`Cost`]): 1 unless its source or trace says.
    pub cost: Cost,
    /// What its response gives back when it ends: the requested `cost` minus the actual cost
    /// (Shopify's refund); 0 unless its source or trace states an actual cost.
    pub refund: Cost,
    /// An LLM request's tokens; all 0 for any other request.
    pub tokens: Tokens,
    /// How long its response streams beyond its source's `response_time` (an LLM's output at
    /// its `output_rate`), in ns; 0 for any other request.
    pub stream: Nanos,
}

impl Arrival {
    /// A first try (what sources produce).
    pub fn new(time: Nanos, key: KeyId, client: ClientId, source: u16) -> Arrival {
        Arrival {
            time,
            key,
            client,
            source,
            attempt: 0,
            identity: key,
            forged: 0,
            method: 0,
            logged: Logged::NONE,
            cost: 1,
            refund: 0,
            tokens: Tokens::default(),
            stream: 0,
        }
    }

    /// What the request settles once its response ends: its actual cost where its source or
    /// trace states one, else its cost.
    #[inline]
    pub fn settled(&self) -> Cost {
        self.cost - self.refund
    }
}

/// An interned user identity.
pub type ClientId = u32;

/// One synthetic client: its rate-limiting key and its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The client's rate-limiting key under the policy's key spec.
    pub key: KeyId,
    /// The client's interned user identity (see [`KeySpace::intern_client`]).
    pub id: ClientId,
}

/// A stream of requests in nondecreasing time order.
pub trait Source: Send {
    /// The next request, or `None` when the source is exhausted. Only replayed traffic can fail.
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>>;

    /// [`Source::next_arrival`] written into `out` (left as it was when the source is
    /// exhausted, the return value then `false`). The engine's hot path: this provided body is
    /// compiled once per source type, with `next_arrival` inlined into it, so the arrival goes
    /// straight into the engine's slot instead of through an `Option` on the stack and back.
    #[inline]
    fn next_into(&mut self, keys: &mut KeySpace, out: &mut Arrival) -> Result<bool> {
        match self.next_arrival(keys)? {
            Some(a) => {
                *out = a;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The client of an arrival still to come (a few after the one last returned), when the
    /// source knows it already: a hint for fetching its state early (it changes nothing).
    fn hint(&self) -> Option<Client> {
        None
    }

    /// The malformed lines the source skipped (a replayed trace under `--skip-bad-lines`; 0 for
    /// the others): what it reports once it has finished.
    fn skipped_lines(&self) -> u64 {
        0
    }

    /// The trace record of the arrival last returned, for a replayed trace (what `rlsim
    /// traffic` exports of it besides the identity: status, decision, headers). Valid until the
    /// next call to [`Source::next_arrival`].
    fn last_record(&self) -> Option<&Record> {
        None
    }

    /// How a replayed trace's reading ended (`None` for a generated source): what it reports
    /// once it has finished, for the run's warnings on a trace cut short or empty.
    fn replay_end(&self) -> Option<ReplayEnd> {
        None
    }
}

/// [`replay_warnings`] of a scenario's replay sources.
pub fn sampling_warnings(specs: &[SourceSpec]) -> Vec<String> {
    replay_warnings(specs.iter().filter_map(|s| match &s.arrivals {
        Arrivals::Replay { options, .. } => Some((s.name.as_str(), options)),
        _ => None,
    }))
}

/// Builds the sources of a scenario, registering every synthetic client's key up front; each
/// as the [`Direct`] kind the engine calls it through.
pub fn build_sources(
    specs: &[SourceSpec],
    key_spec: &KeySpec,
    seed: u64,
    keys: &mut KeySpace,
) -> Result<Vec<Direct>> {
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
) -> Result<Direct> {
    let source = u16::try_from(index).expect("validated: at most 65535 sources");
    let inner = match &spec.arrivals {
        Arrivals::Replay { path, options } => {
            // `same_second = "random"` draws from the scenario's seed, per source.
            let options = ReplayOptions {
                seed: seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                identity_paths: keys.layout().keeps == Keeps::FieldsAndPaths,
                ..options.clone()
            };
            Direct::other(ReplaySource::open(
                path, source, spec.start, spec.stop, key_spec, &options,
            )?)
        }
        _ => build_synthetic(index, spec, key_spec, seed, keys),
    };
    let methods = &spec.population.methods;
    let inner = if methods.is_empty() || methods == &[(method::Method::Get, 1)] {
        inner
    } else {
        let rng = rng::rng(seed, Stream::Methods, index);
        let methods = method::Methods::new(methods, rng);
        Direct::other(stamp::Stamped::new(inner.boxed(), methods))
    };
    let inner = match &spec.population.tokens {
        Some(model) => {
            let rng = rng::rng(seed, Stream::Tokens, index);
            let draws = tokens::TokenDraws::new(model, rng);
            Direct::other(stamp::Stamped::new(inner.boxed(), draws))
        }
        None => inner,
    };
    let costs = &spec.population.costs;
    if costs.is_unit() {
        return Ok(inner);
    }
    let rng = rng::rng(seed, Stream::Costs, index);
    let settles = rng::rng(seed, Stream::Settles, index);
    let costs = cost::Costs::new(costs, rng, settles);
    Ok(Direct::other(stamp::Stamped::new(inner.boxed(), costs)))
}

/// Clients a population's setup renders before interning them ([`keys::Staged`]): enough for
/// the table inserts of a batch to overlap, few enough for the batch to stay in the L1 cache.
const STAGED_BATCH: usize = 256;

/// A synthetic population's clients: their keys and ids, and (for forgers and endpoint mixes,
/// which re-key requests) their identities.
struct Setup {
    clients: population::Clients,
    identities: Vec<Identity>,
    /// Only forgers draw from their stream, at setup one first address per client.
    forgery: rand_chacha::ChaCha8Rng,
}

/// Interns every client of a synthetic source (see [`Setup`]).
fn set_up_clients(
    index: usize,
    spec: &SourceSpec,
    key_spec: &KeySpec,
    seed: u64,
    keys: &mut KeySpace,
) -> Setup {
    let pop = &spec.population;
    let mut identities = Vec::with_capacity(pop.clients as usize);
    let forging = pop.network.rotation != via::Rotation::None;
    let mut forgery = rng::rng(seed, Stream::Forgery, index);
    let unspecified = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
    // The fields anything reads besides the user and a network path's address: the key's, and
    // all of them under an identity function or when the keyspace records them.
    let all = keys.layout().keeps.fields() || key_spec.identity_fn().is_some();
    let wanted = |f: KeyField| all || key_spec.uses(f);
    // Keyed on the user alone, every client is named like its key.
    let n = pop.clients as usize;
    let named_like_keys = key_spec.fields() == [KeyField::User] && key_spec.identity_fn().is_none();
    keys.reserve(n, n, if named_like_keys { 0 } else { n });
    let mut identity = Identity::default();
    let mut clients = population::Clients::default();
    let mut staged = keys.stages().then(keys::Staged::default);
    for j in 0..pop.clients {
        let first = if forging {
            via::forged_address(&mut forgery)
        } else {
            unspecified
        };
        identity.set_client(spec, index, j, first, wanted);
        if pop.endpoints.len() > 1 || forging {
            identities.push(identity.clone());
        }
        match &mut staged {
            Some(staged) => {
                keys.stage(key_spec, &identity, staged);
                if staged.len() == STAGED_BATCH {
                    keys.intern_staged(staged, &mut clients);
                }
            }
            None => clients.push(keys.intern_identity_client(key_spec, &identity)),
        }
    }
    if let Some(staged) = &mut staged {
        keys.intern_staged(staged, &mut clients);
    }
    Setup {
        clients,
        identities,
        forgery,
    }
}

/// A synthetic source: its arrival process over its clients, re-keyed by forged addresses or
/// an endpoint mix when it has them.
fn build_synthetic(
    index: usize,
    spec: &SourceSpec,
    key_spec: &KeySpec,
    seed: u64,
    keys: &mut KeySpace,
) -> Direct {
    let Setup {
        clients,
        mut identities,
        forgery,
    } = set_up_clients(index, spec, key_spec, seed, keys);
    let pop = &spec.population;
    if pop.network.rotation != via::Rotation::None {
        let ids: Vec<ClientId> = clients.iter().map(|c| c.id).collect();
        let inner = arrivals(index, spec, clients, seed).boxed();
        // Validation refuses `endpoints` on the forging kinds.
        let forger = via::Forger::new(inner, key_spec.clone(), &ids, identities, forgery);
        return Direct::other(forger);
    }
    let inner = arrivals(index, spec, clients, seed);
    if pop.endpoints.len() < 2 {
        return inner;
    }
    let variants: Vec<Vec<KeyId>> = identities
        .iter_mut()
        .map(|identity| {
            pop.endpoints
                .iter()
                .map(|(path, _)| {
                    identity.endpoint.clone_from(path);
                    keys.intern_identity(key_spec, identity)
                })
                .collect()
        })
        .collect();
    let weights: Vec<f64> = pop.endpoints.iter().map(|e| e.1 as f64).collect();
    let rng = rng::rng(seed, Stream::Endpoints, index);
    Direct::other(population::EndpointMix::new(
        inner.boxed(),
        &weights,
        &variants,
        rng,
    ))
}

/// The arrival process of a synthetic source over its `clients`.
fn arrivals(index: usize, spec: &SourceSpec, clients: population::Clients, seed: u64) -> Direct {
    let source = index as u16;
    let pop = &spec.population;
    let mut rng = rng::rng(seed, Stream::Arrivals, index);
    // Setup randomness (per-client rates) has its own stream, so a source without it draws
    // exactly the requests it always did.
    // Equal rates need no weights: a million ones would be written only to be found equal.
    let (weights, picker) = match pop.rates {
        RateDist::Same => (Vec::new(), population::Picker::Uniform(clients.len())),
        rates => {
            let weights = rates.weights(clients.len(), &mut rng::rng(seed, Stream::Setup, index));
            let picker = population::Picker::new(&weights);
            (weights, picker)
        }
    };
    match &spec.arrivals {
        Arrivals::Constant(rate) if matches!(pop.rates, RateDist::Same) => {
            let constant = periodic::Constant::new(spec, source, *rate, clients);
            match spec.jitter_ppm {
                0 => Direct::Constant(constant),
                // Its own stream: a jittered source's clients and the others' draws stay put.
                ppm => Direct::other(periodic::Jittered::new(
                    constant,
                    ppm,
                    rng::rng(seed, Stream::Timing, index),
                )),
            }
        }
        Arrivals::Constant(rate) => {
            let rates = weights.iter().map(|w| scaled_rate(*rate, *w)).collect();
            Direct::other(periodic::Staggered::new(spec, source, rates, clients))
        }
        Arrivals::Poisson(Intensity::Flat(rate)) => Direct::Poisson(poisson::Poisson::new(
            spec, source, *rate, clients, picker, rng,
        )),
        Arrivals::Poisson(intensity) => {
            let modulation = intensity::Modulation::new(intensity.clone(), clients.len(), &mut rng);
            Direct::other(modulated::Modulated::new(
                spec, source, modulation, clients, picker, rng,
            ))
        }
        &Arrivals::Bursts {
            count,
            every,
            spread,
        } => Direct::other(periodic::Batches::bursts(
            spec, source, count, every, spread, clients,
        )),
        &Arrivals::Boundary {
            count,
            at,
            lead,
            spread,
            every,
        } => Direct::other(periodic::Batches::boundary(
            spec, source, count, at, lead, every, spread, clients,
        )),
        Arrivals::Replay { .. } => unreachable!("a replay is not synthetic"),
    }
}

/// `rate × factor`, kept exact to a thousandth of a request per second.
fn scaled_rate(rate: Rate, factor: f64) -> Rate {
    const PER: Nanos = 1000 * crate::time::NANOS_PER_SEC;
    let count = (rate.per_second() * factor * 1000.0).round().max(1.0) as u64;
    Rate::new(count, PER).expect("count and per are positive")
}

#[cfg(test)]
mod stats_tests;

#[cfg(test)]
pub(crate) mod tests;
