//! Everything the tallies keep per key, and per client, in one entry each.
//!
//! A run over a million keys touches a random key on every request. When each tally kept its
//! own table (the exact log, the rolling windows, the key's counts, its offered-traffic window,
//! what its last response advertised), a request cost one cache miss per table, in as many
//! places in memory. One entry per key puts them side by side: the lines of one entry, loaded
//! together (and asked for a request ahead, [`PerKey::prefetch`]). The tallies keep their logic
//! and their run-wide figures, and take their part of the entry as an argument.

use super::demand::Offered;
use super::headers::Advertised;
use super::keys::{ClientStats, KeyStats};
use super::timelog::TimeLog;
use super::windows::History;
use crate::algorithms::KeyId;
use crate::traffic::ClientId;

/// One key's state in every tally: three whole cache lines (aligned, so none straddles a
/// fourth).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(super) struct KeyEntry {
    /// Accuracy: the exact limiter's log of the key.
    pub exact: TimeLog,
    /// Windows: the key's admitted history and the rejections still to judge.
    pub history: History,
    /// Keys: what the key asked for and got.
    pub stats: KeyStats,
    /// Keys: the ground truth, the key's offered traffic against the policy.
    pub demand: Offered,
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

/// The entries of every key and client seen, by id.
#[derive(Debug, Default)]
pub(super) struct PerKey {
    pub keys: Vec<KeyEntry>,
    pub clients: Vec<ClientEntry>,
}

impl PerKey {
    /// The entries of `key` and `client`, created (empty) if new.
    #[inline]
    pub fn both(&mut self, key: KeyId, client: ClientId) -> (&mut KeyEntry, &mut ClientEntry) {
        (
            super::dense::slot(&mut self.keys, key),
            super::dense::slot(&mut self.clients, client),
        )
    }

    /// The entry of `key`, created (empty) if new.
    #[inline]
    pub fn key(&mut self, key: KeyId) -> &mut KeyEntry {
        super::dense::slot(&mut self.keys, key)
    }

    /// The entry of `client`, created (empty) if new.
    #[inline]
    pub fn client(&mut self, client: ClientId) -> &mut ClientEntry {
        super::dense::slot(&mut self.clients, client)
    }

    /// Starts loading the entries of `key` and `client`, every line of them.
    #[inline]
    pub fn prefetch(&self, key: KeyId, client: ClientId) {
        crate::prefetch::prefetch(&self.keys, key as usize);
        crate::prefetch::prefetch(&self.clients, client as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of the entries is their size: a few cache lines, not one table each.
    #[test]
    fn entries_are_three_cache_lines_and_one() {
        assert_eq!(std::mem::size_of::<KeyEntry>(), 3 * 64);
        assert_eq!(std::mem::size_of::<ClientEntry>(), 64);
    }
}
