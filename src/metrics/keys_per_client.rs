//! How many distinct keys each real client produced, per source: one for an honest client,
//! one per request for a forger whose forged header the policy's key believes.
//!
//! Kept only for scenarios about client identity (an identity-function key, or a source behind
//! a CDN or proxy or forging headers), so other scenarios' outputs are unchanged.

use crate::algorithms::KeyId;
use crate::policy::KeySpec;
use crate::traffic::{Arrival, ClientId, SourceSpec};
use rustc_hash::FxHashSet;

/// The distinct `(client, key)` pairs of each source.
#[derive(Debug, Default)]
pub struct KeysPerClient {
    /// `None` when the scenario is not about identity.
    pairs: Option<Vec<FxHashSet<(ClientId, KeyId)>>>,
}

impl KeysPerClient {
    pub fn new(key: &KeySpec, sources: &[SourceSpec]) -> Self {
        KeysPerClient {
            pairs: Self::kept(key, sources).then(|| vec![FxHashSet::default(); sources.len()]),
        }
    }

    /// Kept for `sources` sources whatever the key (a contender rule keyed by an identity
    /// function), recorded with [`KeysPerClient::record_key`].
    pub fn kept_for(sources: usize) -> Self {
        KeysPerClient {
            pairs: Some(vec![FxHashSet::default(); sources]),
        }
    }

    /// Whether the scenario is about client identity, so the figures are kept and reported.
    pub(super) fn kept(key: &KeySpec, sources: &[SourceSpec]) -> bool {
        key.identity_fn().is_some()
            || sources
                .iter()
                .any(|s| !s.population.network.is_plain() || s.population.network.signed_in)
    }

    /// Counts a request (a new pair grows the set; a known one costs a lookup).
    pub fn record(&mut self, a: &Arrival) {
        if let Some(pairs) = &mut self.pairs {
            pairs[a.source as usize].insert((a.client, a.key));
        }
    }

    /// Counts a request of `client` from source `source` under `key` (another key space
    /// than the arrival's, such as a rule's).
    pub fn record_key(&mut self, source: u16, client: ClientId, key: KeyId) {
        if let Some(pairs) = &mut self.pairs {
            pairs[source as usize].insert((client, key));
        }
    }

    /// `(max, mean)` distinct keys per client of source `source`, `None` when not kept.
    /// Both are 0 for a source that sent nothing.
    pub fn of(&self, source: usize) -> Option<(f64, f64)> {
        let pairs = &self.pairs.as_ref()?[source];
        let mut per_client: Vec<ClientId> = pairs.iter().map(|p| p.0).collect();
        per_client.sort_unstable();
        let (mut max, mut clients, mut run) = (0u64, 0u64, 0u64);
        for (i, c) in per_client.iter().enumerate() {
            run = if i > 0 && per_client[i - 1] == *c {
                run + 1
            } else {
                1
            };
            if run == 1 {
                clients += 1;
            }
            max = max.max(run);
        }
        let mean = super::ratio(pairs.len() as u64, clients);
        Some((max as f64, mean))
    }
}
