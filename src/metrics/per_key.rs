//! Everything the tallies keep per key, and per client, in one entry each.
//!
//! A run over a million keys touches a random key on every request. When each tally kept its
//! own table (the exact log, the rolling windows, the key's counts, its offered-traffic window,
//! what its last response advertised), a request cost one cache miss per table, in as many
//! places in memory. One entry per key puts them side by side: the lines of one entry, loaded
//! together (and asked for requests ahead, [`PerKey::prefetch`]). The tallies keep their logic
//! and their run-wide figures, and take their part of an entry as an argument: one entry's
//! part per decision, and every entry's part, by id, as [`Parts`] of the entries (which is all
//! a tally knows of them).
//!
//! Clients are often the keys themselves (`key = "user"`: client `i` is key `i`). While every
//! decision's client has its key's id, client `i`'s entry is a function of key `i`'s (the same
//! requests at the same times: [`ClientEntry::mirror`]; the key notes whether its client gave
//! up), so none is kept: no second entry per request to load, and none in memory. The first
//! decision that breaks the pattern writes every client's entry out, and from then on they are
//! kept like the keys'.

use super::demand::Offered;
use super::dense::Parts;
use super::headers::Advertised;
use super::keys::{ClientStats, KeyStats};
use super::timelog::TimeLog;
use super::windows::History;
use crate::algorithms::KeyId;
use crate::traffic::ClientId;

/// One key's state in every tally: two whole cache lines (aligned, so none straddles a
/// third).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(super) struct KeyEntry {
    /// Accuracy: the exact limiter's log of the key.
    pub exact: TimeLog,
    /// Windows: the key's admitted history.
    pub history: History,
    /// Keys: what the key asked for and got, and whether its offered traffic exceeded the
    /// policy (the ground truth).
    pub stats: KeyStats,
    /// Headers: what the key's last response advertised.
    pub advertised: Advertised,
}

/// One client's state in every tally: one cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(super) struct ClientEntry {
    pub stats: ClientStats,
    pub demand: Offered,
}

impl ClientEntry {
    /// The entry of a client that has sent exactly the requests of `key`, and only on it.
    fn mirror(key: &KeyEntry) -> ClientEntry {
        ClientEntry {
            stats: ClientStats::mirror(&key.stats),
            demand: Offered::mirror(&key.exact, key.stats.over_policy()),
        }
    }
}

/// The entries of every key and client seen, by id.
#[derive(Debug)]
pub(super) struct PerKey {
    keys: Vec<KeyEntry>,
    /// `None` while clients mirror keys (see the module's documentation).
    clients: Option<Vec<ClientEntry>>,
    /// Clients to make room for once they are kept.
    expected_clients: usize,
}

impl Default for PerKey {
    fn default() -> Self {
        PerKey {
            keys: Vec::new(),
            clients: if mirror_allowed() {
                None
            } else {
                Some(Vec::new())
            },
            expected_clients: 0,
        }
    }
}

/// A key's entry, and its client's when clients are kept (`None`: the key's id is the
/// client's, and the client mirrors the key).
pub(super) type Entries<'a> = (&'a mut KeyEntry, Option<&'a mut ClientEntry>);

impl PerKey {
    /// Makes room for `keys` keys and `clients` clients, so entries never move while a run
    /// fills them.
    pub fn reserve(&mut self, keys: usize, clients: usize) {
        self.keys.reserve_exact(keys);
        self.expected_clients = clients;
        if let Some(c) = &mut self.clients {
            c.reserve_exact(clients);
        }
    }

    /// The entries of `key` and `client`, created (empty) if new. A pair whose ids differ
    /// needs the clients kept first ([`PerKey::keep_clients`]).
    #[inline]
    pub fn both(&mut self, key: KeyId, client: ClientId) -> Entries<'_> {
        debug_assert!(
            self.clients.is_some() || key == client,
            "clients kept (PerKey::keep_clients) before a pair of different ids"
        );
        let key = super::dense::slot(&mut self.keys, key);
        let client = self.clients.as_mut().map(|c| super::dense::slot(c, client));
        (key, client)
    }

    /// Every key's entry, by id.
    #[inline]
    pub fn keys(&mut self) -> &mut [KeyEntry] {
        &mut self.keys
    }

    /// Every key's stats, by id.
    pub fn key_stats(&self) -> impl Iterator<Item = &KeyStats> {
        self.keys.iter().map(|e| &e.stats)
    }

    /// The entry of `key`, created (empty) if new.
    #[inline]
    pub fn key(&mut self, key: KeyId) -> &mut KeyEntry {
        super::dense::slot(&mut self.keys, key)
    }

    /// The entry of `client`, created (empty) if new, once clients are kept
    /// ([`PerKey::keep_clients`]).
    pub fn client(&mut self, client: ClientId) -> &mut ClientEntry {
        let clients = self.clients.as_mut().expect("clients are kept");
        super::dense::slot(clients, client)
    }

    /// The keys' entries and the kept clients' (`None` while they mirror keys).
    pub fn split(&mut self) -> (&mut [KeyEntry], Option<&mut [ClientEntry]>) {
        (&mut self.keys, self.clients.as_deref_mut())
    }

    /// Every kept client's stats, by id; `None` while clients mirror keys (each client's are
    /// then [`ClientStats::mirror`] of its key's).
    pub fn kept_client_stats(&self) -> Option<impl Iterator<Item = ClientStats> + '_> {
        Some(self.clients.as_ref()?.iter().map(|c| c.stats))
    }

    /// Writes out the entry of every client (each the mirror of its key) if they were not
    /// kept yet; the clients whose offered-traffic window is then on the heap.
    #[cold]
    #[inline(never)]
    pub fn keep_clients(&mut self) -> Vec<ClientId> {
        if self.clients.is_some() {
            return Vec::new();
        }
        let mut clients = Vec::with_capacity(self.expected_clients.max(self.keys.len()));
        clients.extend(self.keys.iter().map(ClientEntry::mirror));
        let spilled = (0..clients.len() as ClientId)
            .filter(|&c| clients[c as usize].demand.is_spilled())
            .collect();
        self.clients = Some(clients);
        spilled
    }

    /// The stats of `key`, when its client mirrors it (`None` once clients are kept).
    #[inline]
    pub fn mirrored_client(&mut self, key: KeyId) -> Option<&mut KeyStats> {
        match self.clients {
            Some(_) => None,
            None => Some(&mut self.key(key).stats),
        }
    }

    /// Whether clients are kept (they no longer mirror keys).
    pub fn clients_kept(&self) -> bool {
        self.clients.is_some()
    }

    /// Starts loading the entries of `key` and `client`, every line of them.
    #[inline]
    pub fn prefetch(&self, key: KeyId, client: ClientId) {
        crate::prefetch::prefetch(&self.keys, key as usize);
        if let Some(c) = &self.clients {
            crate::prefetch::prefetch(c, client as usize);
        }
    }
}

/// The keys' entries as the windows tally's histories.
impl Parts<History> for [KeyEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut History {
        &mut self[id as usize].history
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

/// The keys' entries as the accuracy tally's exact logs.
impl Parts<TimeLog> for [KeyEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut TimeLog {
        &mut self[id as usize].exact
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

/// The clients' entries as the keys tally's offered-traffic windows.
impl Parts<Offered> for [ClientEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut Offered {
        &mut self[id as usize].demand
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

#[cfg(test)]
thread_local! {
    /// Tests turn mirroring off to compare a run's figures with and without it.
    pub(crate) static NO_MIRROR: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Recorders that finished with clients still mirrored, for tests to check it happened.
    pub(crate) static MIRRORED_AT_FINISH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn mirror_allowed() -> bool {
    #[cfg(test)]
    if NO_MIRROR.get() {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of the entries is their size: a few cache lines, not one table each.
    #[test]
    fn entries_are_two_cache_lines_and_one() {
        assert_eq!(std::mem::size_of::<KeyEntry>(), 2 * 64);
        assert_eq!(std::mem::size_of::<ClientEntry>(), 64);
    }

    #[test]
    fn kept_clients_start_as_their_keys_mirrors() {
        let mut entries = PerKey::default();
        assert!(entries.both(0, 0).1.is_none());
        assert!(entries.both(3, 3).1.is_none());
        assert!(!entries.clients_kept());
        assert!(entries.keep_clients().is_empty(), "no window on the heap");
        assert!(entries.clients_kept());
        // Every client the keys mirrored so far has its entry.
        assert_eq!(entries.split().1.map(|c| c.len()), Some(4));
        assert!(entries.both(1, 2).1.is_some());
        assert!(entries.both(0, 0).1.is_some());
    }
}
