//! Keys tally: what each key and each client asked for and got, judged against the ground truth
//! (did its offered traffic ever exceed the intent's base entitlement?): false positives and
//! negatives, fairness, clients that gave up; and whether a key is shared by clients, which
//! makes a needless rejection on it collateral (`metrics::harm`).
//!
//! A key's offered traffic exceeds the policy (more than L requests in some window `(t−W, t]`)
//! exactly when the exact limiter (the accuracy tally's sliding window log, same L and W)
//! rejects one of its requests: until then that limiter has admitted every request, so its log
//! is the key's offered traffic in the window, and the first request that finds it full is the
//! (L+1)-th in a window. So a key's ground truth is the exact limiter's first rejection, and
//! needs no window of its own. A client's requests may span several keys: its offered traffic
//! has its own window ([`Demand`]).

use super::demand::{Demand, Offered};
use super::dense::Parts;
use crate::algorithms::KeyId;
use crate::time::Nanos;
use crate::traffic::ClientId;

/// What the tally knows of one key (kept with the key's other state).
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyStats {
    offered: u64,
    admitted: u64,
    /// Rejected or delayed: the limiter acted on the key.
    limited: u64,
    legit: bool,
    first_client: ClientId,
    /// A second client used the key (e.g. users behind one NAT address).
    shared: bool,
    /// The key's offered traffic exceeded the policy at some point (see [`Demand`]).
    exceeded: bool,
    /// While clients mirror keys ([`super::per_key`]): the key's own client gave up on at
    /// least one request.
    client_gave_up: bool,
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
            exceeded: false,
            client_gave_up: false,
        }
    }
}

/// What the tally knows of one client (user identity).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClientStats {
    legit: bool,
    /// Gave up on at least one request.
    gave_up: bool,
    /// The client's offered traffic exceeded the policy at some point (see [`Demand`]).
    exceeded: bool,
}

impl KeyStats {
    /// The key's offered traffic exceeded the policy at some point.
    pub fn over_policy(&self) -> bool {
        self.exceeded
    }
}

impl ClientStats {
    /// The stats of a client that has sent exactly the requests of the key with `stats`, and
    /// only on it: the key was never shared.
    pub fn mirror(stats: &KeyStats) -> ClientStats {
        ClientStats {
            legit: stats.legit,
            gave_up: stats.client_gave_up,
            exceeded: stats.exceeded,
        }
    }
}

/// The keys tally's own state: the ground-truth judge of clients. What it knows of each key
/// and client ([`KeyStats`], [`ClientStats`] and the clients' [`Offered`] windows) is kept in
/// their entries and passed in.
pub(super) struct Keys {
    limit: u64,
    window: Nanos,
    /// `None` while clients mirror keys ([`super::per_key`]): a client's ground truth is then
    /// its key's.
    client_demand: Option<Demand>,
}

/// One client's part of the tally, as its entry holds it.
pub(super) struct ClientPart<'a> {
    pub stats: &'a mut ClientStats,
    pub demand: &'a mut Offered,
}

pub(super) struct KeysPart {
    pub clients_gave_up: u64,
    pub keys_seen: u64,
    pub keys_within_policy: u64,
    pub keys_over_policy: u64,
    pub false_positive_keys: u64,
    pub false_negative_keys: u64,
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
    /// The exact limiter rejected the request: the key's offered traffic exceeds the policy.
    pub over_policy: bool,
}

impl Keys {
    pub fn new(limit: u64, window: Nanos) -> Self {
        Keys {
            limit,
            window,
            client_demand: None,
        }
    }

    /// Returns whether the key is shared by now (another client used it).
    #[inline]
    pub fn on_decision(&mut self, s: Seen, key: &mut KeyStats, client: Option<ClientPart>) -> bool {
        let Some(client) = client else {
            // The client mirrors the key: its figures will be read off the key's.
            debug_assert_eq!(s.key, s.client, "only a key's own client mirrors it");
            return Self::on_key(&s, key);
        };
        // Made by `keep_clients` when clients start being kept; a judge made here would know
        // no spilled window, which only delays freeing them.
        let (limit, window) = (self.limit, self.window);
        let judge = self
            .client_demand
            .get_or_insert_with(|| Demand::new(limit, window, Vec::new()));
        judge.offer(s.client, client.demand, &mut client.stats.exceeded, s.t);
        let shared = Self::on_key(&s, key);
        client.stats.legit |= s.legit;
        shared
    }

    /// The key's part of [`Keys::on_decision`]; whether the key is shared by now.
    #[inline]
    fn on_key(s: &Seen, key: &mut KeyStats) -> bool {
        key.offered += 1;
        key.admitted += s.admitted as u64;
        key.limited += s.limited as u64;
        key.legit |= s.legit;
        key.exceeded |= s.over_policy;
        if key.first_client == ClientId::MAX {
            key.first_client = s.client;
        } else if key.first_client != s.client {
            key.shared = true;
        }
        key.shared
    }

    /// Clients are kept from now on, each starting as the mirror of its key; `spilled`: the
    /// clients whose mirrored window is on the heap.
    pub fn keep_clients(&mut self, spilled: Vec<ClientId>) {
        if self.client_demand.is_none() {
            self.client_demand = Some(Demand::new(self.limit, self.window, spilled));
        }
    }

    /// A rejected request's client (stats `client`) gave up on it.
    pub fn on_abandon(client: &mut ClientStats) {
        client.gave_up = true;
    }

    /// A rejected request's client, which mirrors the request's key (stats `key`), gave up on
    /// it.
    pub fn on_mirrored_abandon(key: &mut KeyStats) {
        key.client_gave_up = true;
    }

    /// Frees what `now` allows in the clients' `offered` windows (`None` while clients mirror
    /// keys).
    pub fn sweep<P: Parts<Offered> + ?Sized>(&mut self, offered: Option<&mut P>, now: Nanos) {
        if let (Some(judge), Some(offered)) = (&mut self.client_demand, offered) {
            judge.sweep(offered, now);
        }
    }

    /// The tally's figures, from every key's and client's part (by id order). One pass over
    /// each: a million keys' entries are read once, not once per figure. `clients`: the kept
    /// clients' parts; `None` while clients mirror keys, whose parts are then read off the
    /// keys' in the same pass.
    pub fn finish<'a>(
        keys: impl Iterator<Item = &'a KeyStats>,
        clients: Option<impl Iterator<Item = ClientStats>>,
    ) -> KeysPart {
        let (mut seen, mut within, mut over, mut false_pos, mut false_neg) = (0, 0, 0, 0, 0);
        let mut fairness = Jain::default();
        let mut gave_up = 0;
        let mirrored = clients.is_none();
        for k in keys {
            if mirrored {
                gave_up += k.client_gave_up as u64;
            }
            if k.offered == 0 {
                continue;
            }
            seen += 1;
            if k.exceeded {
                over += 1;
                false_neg += (k.limited == 0) as u64;
            } else {
                within += 1;
                false_pos += (k.limited > 0) as u64;
            }
            if k.legit {
                fairness.add(k.admitted as f64 / k.offered as f64);
            }
        }
        for c in clients.into_iter().flatten() {
            gave_up += c.gave_up as u64;
        }
        KeysPart {
            clients_gave_up: gave_up,
            keys_seen: seen,
            keys_within_policy: within,
            keys_over_policy: over,
            false_positive_keys: false_pos,
            false_negative_keys: false_neg,
            fairness_jain: fairness.index(),
        }
    }
}

/// Jain's fairness index of values added one at a time (see [`jain`]).
#[derive(Default)]
struct Jain {
    n: f64,
    sum: f64,
    squares: f64,
}

impl Jain {
    fn add(&mut self, x: f64) {
        self.n += 1.0;
        self.sum += x;
        self.squares += x * x;
    }

    fn index(&self) -> f64 {
        if self.squares == 0.0 {
            1.0
        } else {
            self.sum * self.sum / (self.n * self.squares)
        }
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`: 1 when all `x` are equal, `1/n` when one takes all.
/// 1 for an empty set or all zeros (nothing was shared unequally).
pub fn jain(xs: impl Iterator<Item = f64>) -> f64 {
    let mut j = Jain::default();
    xs.for_each(|x| j.add(x));
    j.index()
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
