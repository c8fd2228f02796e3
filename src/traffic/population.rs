//! Client populations: how a source's rate is shared among its clients, which tier each client
//! belongs to, and which endpoint each request goes to.
//!
//! Independent Poisson clients of rates `r_j` are, exactly in distribution, one Poisson process
//! of rate `Σ r_j` whose events go to client `j` with probability `r_j / Σ r_j`. So a population
//! with a heavy-tailed rate distribution costs one weighted draw (a binary search in a
//! cumulative table built once) per request, not a heap of per-client timers.

use super::{Arrival, Client, KeySpace, Source};
use crate::algorithms::KeyId;
use crate::error::Result;
use rand::Rng;
use rand::distr::uniform::SampleRange;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rustc_hash::FxHashMap;

/// How per-client rates are spread around the source's `rate` (the mean per client).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateDist {
    /// Every client at `rate`.
    Same,
    /// Log-normal with mean `rate`: `rate · exp(σZ − σ²/2)`, Z standard normal.
    Lognormal {
        /// The standard deviation σ of the rate's logarithm.
        sigma: f64,
    },
    /// Zipf / power law: client `j` (0-based) at `rate · c / (j+1)^s`, `c` making the mean `rate`.
    /// A few heavy hitters send most of the traffic.
    Zipf {
        /// The power `s` the client's rank is raised to.
        exponent: f64,
    },
}

impl RateDist {
    /// Each client's rate as a multiple of the mean rate (the multiples average to 1 for `Same`
    /// and `Zipf`; for `Lognormal` their expectation is 1).
    pub fn weights(self, clients: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
        match self {
            RateDist::Same => vec![1.0; clients],
            RateDist::Lognormal { sigma } => (0..clients)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(rng);
                    (sigma * z - sigma * sigma / 2.0).exp()
                })
                .collect(),
            RateDist::Zipf { exponent } => {
                let raw: Vec<f64> = (0..clients)
                    .map(|j| ((j + 1) as f64).powf(-exponent))
                    .collect();
                let mean = raw.iter().sum::<f64>() / clients as f64;
                raw.into_iter().map(|w| w / mean).collect()
            }
        }
    }
}

/// A source's clients by number: the key and client id of each.
///
/// A population whose names are all new to the keyspace (every user its own key, numbered in
/// turn) has client `j` at key `first.key + j` and id `first.id + j`: then nothing is stored,
/// and a request's client is two additions rather than a read from a table that, for a million
/// clients, misses the caches on every request.
#[derive(Debug, Clone, PartialEq)]
pub enum Clients {
    /// Client `j` (of `n`) is `first`'s key and id plus `j`.
    Numbered {
        /// Client 0's key and id.
        first: Client,
        /// The number of clients.
        n: usize,
    },
    /// Each client's key and id, client `j` at index `j`.
    Listed(Vec<Client>),
}

impl Clients {
    /// Client `j` (under [`Clients::len`]).
    #[inline]
    pub fn get(&self, j: usize) -> Client {
        match self {
            Clients::Numbered { first, n } => {
                debug_assert!(j < *n, "client {j} of {n}");
                // In range by construction: the last client's numbers were pushed as such.
                Client {
                    key: first.key + j as KeyId,
                    id: first.id + j as u32,
                }
            }
            Clients::Listed(list) => list[j],
        }
    }

    /// Starts loading what [`Clients::get`] will read for `j` (nothing when numbered).
    #[inline]
    pub fn prefetch(&self, j: usize) {
        if let Clients::Listed(list) = self {
            crate::prefetch::prefetch(list, j);
        }
    }

    /// The number of clients.
    pub fn len(&self) -> usize {
        match self {
            Clients::Numbered { n, .. } => *n,
            Clients::Listed(list) => list.len(),
        }
    }

    /// Whether there is no client.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every client, in order.
    pub fn iter(&self) -> impl Iterator<Item = Client> + '_ {
        (0..self.len()).map(|j| self.get(j))
    }

    /// Appends `c`, listing the clients from the first one out of step.
    pub fn push(&mut self, c: Client) {
        match self {
            Clients::Numbered { n: 0, .. } => *self = Clients::Numbered { first: c, n: 1 },
            Clients::Numbered { first, n } => {
                let step = |base: u32| base.checked_add(u32::try_from(*n).ok()?);
                if step(first.key) == Some(c.key) && step(first.id) == Some(c.id) {
                    *n += 1;
                } else {
                    let mut list = Vec::with_capacity(*n + 1);
                    list.extend(self.iter());
                    list.push(c);
                    *self = Clients::Listed(list);
                }
            }
            Clients::Listed(list) => list.push(c),
        }
    }
}

impl Default for Clients {
    /// No client yet.
    fn default() -> Self {
        Clients::Numbered {
            first: Client { key: 0, id: 0 },
            n: 0,
        }
    }
}

impl FromIterator<Client> for Clients {
    fn from_iter<I: IntoIterator<Item = Client>>(iter: I) -> Self {
        let mut clients = Clients::default();
        for c in iter {
            clients.push(c);
        }
        clients
    }
}

/// Chooses which client sends the next request.
#[derive(Debug, Clone)]
pub enum Picker {
    /// Uniformly among `n` clients (draws nothing when `n` is 1).
    Uniform(usize),
    /// Proportionally to weights, by binary search in their running sums.
    Weighted(Vec<f64>),
}

impl Picker {
    /// A picker over one client per weight: [`Picker::Uniform`] when every weight is 1.
    pub fn new(weights: &[f64]) -> Picker {
        if weights.iter().all(|&w| w == 1.0) {
            return Picker::Uniform(weights.len());
        }
        let mut sum = 0.0;
        Picker::Weighted(
            weights
                .iter()
                .map(|w| {
                    sum += w;
                    sum
                })
                .collect(),
        )
    }

    /// The sum of the weights: the source's rate in units of the mean per-client rate.
    pub fn total(&self) -> f64 {
        match self {
            Picker::Uniform(n) => *n as f64,
            Picker::Weighted(c) => *c.last().expect("at least one client"),
        }
    }

    /// The index of the client sending the next request, drawn from `rng` (no draw for one
    /// uniform client). Panics with no client.
    pub fn pick(&self, rng: &mut ChaCha8Rng) -> usize {
        match self {
            Picker::Uniform(1) => 0,
            // `random_range(0..n)`'s own body: the sampler is `#[inline]`, `random_range` is
            // not, and once other modules shared its copy it stayed a call per request.
            Picker::Uniform(n) => (0..*n).sample_single(rng).expect("a client"),
            Picker::Weighted(c) => {
                let u = rng.random::<f64>() * c[c.len() - 1];
                c.partition_point(|&x| x <= u).min(c.len() - 1)
            }
        }
    }
}

/// The tier of client `j` of `clients`: tiers take consecutive shares of the clients in
/// proportion to their weights (with tiers free:3, pro:1, the first 3/4 are `free`).
pub fn tier_of(tiers: &[(String, u32)], j: u32, clients: u32) -> Option<&str> {
    let total: u64 = tiers.iter().map(|t| t.1 as u64).sum();
    let position = (j as u64 * total) / clients.max(1) as u64;
    let mut acc = 0;
    tiers.iter().find_map(|(name, w)| {
        acc += *w as u64;
        (position < acc).then_some(name.as_str())
    })
}

/// Sends each request of an inner source to one endpoint of a weighted mix, changing its key
/// when the key includes the endpoint.
pub struct EndpointMix {
    inner: Box<dyn Source>,
    picker: Picker,
    /// Key with the first endpoint → row in `table`.
    rows: FxHashMap<KeyId, u32>,
    /// `table[row · endpoints + e]`: the key with endpoint `e`.
    table: Vec<KeyId>,
    rng: ChaCha8Rng,
}

impl EndpointMix {
    /// `variants[j][e]` is client `j`'s key with endpoint `e` (the inner source uses `e = 0`).
    pub fn new(
        inner: Box<dyn Source>,
        weights: &[f64],
        variants: &[Vec<KeyId>],
        rng: ChaCha8Rng,
    ) -> Self {
        let mut rows = FxHashMap::default();
        let mut table = Vec::new();
        for v in variants {
            rows.entry(v[0]).or_insert_with(|| {
                table.extend_from_slice(v);
                (table.len() / v.len() - 1) as u32
            });
        }
        EndpointMix {
            inner,
            picker: Picker::new(weights),
            rows,
            table,
            rng,
        }
    }
}

impl Source for EndpointMix {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        let Some(mut a) = self.inner.next_arrival(keys)? else {
            return Ok(None);
        };
        let e = self.picker.pick(&mut self.rng);
        let per_row = match &self.picker {
            Picker::Uniform(n) => *n,
            Picker::Weighted(c) => c.len(),
        };
        let row = self.rows[&a.key] as usize;
        a.key = self.table[row * per_row + e];
        Ok(Some(a))
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }
}

#[cfg(test)]
mod clients_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the numbers, the clients are the ones pushed, in order; they are stored
        /// only when out of step.
        #[test]
        fn clients_are_the_ones_pushed(
            start in (0u32..5, 0u32..5),
            steps in proptest::collection::vec((0u32..3, 0u32..3), 0..40),
            near_max in any::<bool>(),
        ) {
            let base = if near_max { u32::MAX - 20 } else { 0 };
            let (mut key, mut id) = (base + start.0, base + start.1);
            let mut pushed = Vec::new();
            for (dk, di) in steps {
                pushed.push(Client { key, id });
                // Mostly one step each: long numbered runs, sometimes broken.
                key = key.saturating_add(if dk == 2 { 2 } else { 1 });
                id = id.saturating_add(if di == 2 { 0 } else { 1 });
            }
            let clients: Clients = pushed.iter().copied().collect();
            prop_assert_eq!(clients.len(), pushed.len());
            let got: Vec<Client> = clients.iter().collect();
            prop_assert_eq!(&got, &pushed);
            let in_step = pushed.iter().enumerate().all(|(j, c)| {
                c.key as u64 == pushed[0].key as u64 + j as u64
                    && c.id as u64 == pushed[0].id as u64 + j as u64
            });
            prop_assert_eq!(matches!(clients, Clients::Numbered { .. }), in_step);
        }
    }
}
