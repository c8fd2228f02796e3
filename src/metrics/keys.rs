//! Keys tally: what each key and each client asked for and got, judged against the ground truth
//! of [`Demand`] (did its offered traffic ever exceed the policy?): false positives and
//! negatives, NAT collateral damage, fairness, clients that gave up.

use super::demand::Demand;
use super::dense::{prefetch, slot};
use crate::algorithms::KeyId;
use crate::time::Nanos;
use crate::traffic::ClientId;

/// What the tally knows of one key.
#[derive(Debug, Clone, Copy)]
struct KeyStats {
    offered: u64,
    admitted: u64,
    /// Rejected or delayed: the limiter acted on the key.
    limited: u64,
    legit: bool,
    first_client: ClientId,
    /// A second client used the key (e.g. users behind one NAT address).
    shared: bool,
}

impl Default for KeyStats {
    fn default() -> Self {
        KeyStats {
            offered: 0,
            admitted: 0,
            limited: 0,
            legit: false,
            first_client: ClientId::MAX,
            shared: false,
        }
    }
}

/// What the tally knows of one client (user identity).
#[derive(Debug, Clone, Copy, Default)]
struct ClientStats {
    legit: bool,
    /// Gave up on at least one request.
    gave_up: bool,
    /// Legit requests rejected on a key another client had used.
    rejected_on_shared_key: u64,
}

pub(super) struct Keys {
    keys: Vec<KeyStats>,
    clients: Vec<ClientStats>,
    key_demand: Demand,
    client_demand: Demand,
}

pub(super) struct KeysPart {
    pub clients_gave_up: u64,
    pub keys_seen: u64,
    pub keys_within_policy: u64,
    pub keys_over_policy: u64,
    pub false_positive_keys: u64,
    pub false_negative_keys: u64,
    pub collateral_rejections: u64,
    pub collateral_clients: u64,
    pub fairness_jain: f64,
}

/// One decision, as the keys tally sees it.
pub(super) struct Seen {
    pub key: KeyId,
    pub client: ClientId,
    pub t: Nanos,
    pub legit: bool,
    pub admitted: bool,
    /// Rejected or delayed.
    pub limited: bool,
    pub rejected: bool,
}

impl Keys {
    pub fn new(limit: u64, window: Nanos) -> Self {
        Keys {
            keys: Vec::new(),
            clients: Vec::new(),
            key_demand: Demand::new(limit, window),
            client_demand: Demand::new(limit, window),
        }
    }

    #[inline]
    pub fn prefetch(&self, key: KeyId, client: ClientId) {
        prefetch(&self.keys, key);
        prefetch(&self.clients, client);
        self.key_demand.prefetch(key);
        self.client_demand.prefetch(client);
    }

    #[inline]
    pub fn on_decision(&mut self, s: Seen) {
        self.key_demand.offer(s.key, s.t);
        self.client_demand.offer(s.client, s.t);
        let key = slot(&mut self.keys, s.key);
        key.offered += 1;
        key.admitted += s.admitted as u64;
        key.limited += s.limited as u64;
        key.legit |= s.legit;
        if key.first_client == ClientId::MAX {
            key.first_client = s.client;
        } else if key.first_client != s.client {
            key.shared = true;
        }
        let shared = key.shared;
        let client = slot(&mut self.clients, s.client);
        client.legit |= s.legit;
        if s.rejected && s.legit && shared {
            client.rejected_on_shared_key += 1;
        }
    }

    /// A rejected request's client gave up on it.
    pub fn on_abandon(&mut self, client: ClientId) {
        slot(&mut self.clients, client).gave_up = true;
    }

    pub fn sweep(&mut self, now: Nanos) {
        self.key_demand.sweep(now);
        self.client_demand.sweep(now);
    }

    pub fn finish(&self) -> KeysPart {
        let (mut within, mut over, mut false_pos, mut false_neg) = (0, 0, 0, 0);
        for (id, k) in self.keys.iter().enumerate() {
            if k.offered == 0 {
                continue;
            }
            if self.key_demand.exceeded(id as u32) {
                over += 1;
                false_neg += (k.limited == 0) as u64;
            } else {
                within += 1;
                false_pos += (k.limited > 0) as u64;
            }
        }
        let (mut collateral, mut collateral_clients) = (0, 0);
        for (id, c) in self.clients.iter().enumerate() {
            if c.legit && c.rejected_on_shared_key > 0 && !self.client_demand.exceeded(id as u32) {
                collateral += c.rejected_on_shared_key;
                collateral_clients += 1;
            }
        }
        KeysPart {
            clients_gave_up: self.clients.iter().filter(|c| c.gave_up).count() as u64,
            keys_seen: self.keys.iter().filter(|k| k.offered > 0).count() as u64,
            keys_within_policy: within,
            keys_over_policy: over,
            false_positive_keys: false_pos,
            false_negative_keys: false_neg,
            collateral_rejections: collateral,
            collateral_clients,
            fairness_jain: jain(
                self.keys
                    .iter()
                    .filter(|k| k.legit && k.offered > 0)
                    .map(|k| k.admitted as f64 / k.offered as f64),
            ),
        }
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`: 1 when all `x` are equal, `1/n` when one takes all.
/// 1 for an empty set or all zeros (nothing was shared unequally).
pub fn jain(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut n, mut sum, mut squares) = (0.0, 0.0, 0.0);
    for x in xs {
        n += 1.0;
        sum += x;
        squares += x * x;
    }
    if squares == 0.0 {
        1.0
    } else {
        sum * sum / (n * squares)
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_index() {
        assert_eq!(jain([0.5, 0.5, 0.5].into_iter()), 1.0);
        // One of four gets everything: 1/n.
        assert_eq!(jain([1.0, 0.0, 0.0, 0.0].into_iter()), 0.25);
        // (1 + 0.5)² / (2 · (1 + 0.25)) = 2.25 / 2.5 = 0.9
        assert_eq!(jain([1.0, 0.5].into_iter()), 0.9);
        assert_eq!(jain(std::iter::empty()), 1.0);
    }
}
