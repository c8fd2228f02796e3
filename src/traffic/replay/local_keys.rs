//! Numbering a replay's keys on the thread that parses the trace ([`super::ahead`]).
//!
//! Interning a line's key in the run's keyspace costs cache misses in a large table on every
//! line (docs/performance.md). The parsing thread numbers
//! each record's key itself, densely in order of first appearance in the file (its *local*
//! number), so the replay turns a local number into the keyspace's ids once per key and then
//! reads them from a small array ([`super::source`]). The local number is a function of what
//! the keyspace reads of a record (the key's fields, the user, and the address under an
//! identity function): records with the same local number get the same key and client.
//!
//! The thread numbers a batch of records at a time in three passes, so that their cache misses
//! overlap instead of following one another: hash each key and ask for its slot; find each
//! candidate slot and ask for its stored text; then compare and insert.

use super::{Record, field_index};
use crate::policy::{KeyField, KeySpec};
use std::hash::BuildHasher;

/// One slot of the open-addressing table (linear probing); `id == u32::MAX`: empty.
#[derive(Clone, Copy)]
struct Slot {
    /// The hash's high half: most slots that are not the text's fail on it.
    tag: u32,
    id: u32,
    /// Where the text starts in `arena`. Its length is not kept: the encoding (each field's
    /// length, then its bytes) says where a text ends, and no text is the beginning of
    /// another, so comparing as many bytes as the text sought has is exact.
    start: u64,
}

const EMPTY: Slot = Slot {
    tag: 0,
    id: u32::MAX,
    start: 0,
};

const HASHER: rustc_hash::FxBuildHasher = rustc_hash::FxBuildHasher;

/// Distinct key texts of one read of a trace, numbered from 0 in order of first appearance.
pub(super) struct LocalKeys {
    /// The record's fields that make its text, indexed like `KeyField::ALL`.
    fields: Vec<usize>,
    /// The record's `X-Forwarded-For` is part of its text (the keyspace reads it).
    forwarded: bool,
    /// A power of two long, at most three quarters full.
    slots: Vec<Slot>,
    len: u32,
    /// Every distinct text, one after another.
    arena: Vec<u8>,
    /// The batch being numbered: its texts, where each ends, and their hashes.
    texts: Vec<u8>,
    ends: Vec<usize>,
    hashes: Vec<u64>,
    ids: Vec<u32>,
}

impl LocalKeys {
    /// Numbers keys as `spec` reads them in [`crate::traffic::KeySpace::intern_with_client`]:
    /// its fields, the user (the client), the address when an identity function reads it, and
    /// the `X-Forwarded-For` header when the keyspace reads that (under an identity function,
    /// or `paths`: a keyspace that tells identities apart by their path).
    pub(super) fn new(spec: &KeySpec, paths: bool) -> LocalKeys {
        let fields = KeyField::ALL
            .iter()
            .filter(|&&f| {
                spec.fields().contains(&f)
                    || f == KeyField::User
                    || (f == KeyField::Ip && spec.identity_fn().is_some())
            })
            .map(|&f| field_index(f))
            .collect();
        LocalKeys {
            fields,
            forwarded: crate::traffic::reads_forwarded(spec, paths),
            slots: vec![EMPTY; 1 << 10],
            len: 0,
            arena: Vec::new(),
            texts: Vec::new(),
            ends: Vec::new(),
            hashes: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// Distinct keys numbered so far.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Numbers the records (each record's number, in order).
    pub(super) fn number<'r>(&mut self, records: impl Iterator<Item = &'r Record>) -> &[u32] {
        self.texts.clear();
        self.ends.clear();
        self.hashes.clear();
        self.ids.clear();
        // Pass 1: each record's text (every field's length, then its bytes: unambiguous) and
        // hash, and a hint for its first slot.
        for rec in records {
            for &f in &self.fields {
                let value = rec.fields[f].as_bytes();
                write_len(&mut self.texts, value.len());
                self.texts.extend_from_slice(value);
            }
            if self.forwarded {
                let value = rec.forwarded_for.as_bytes();
                write_len(&mut self.texts, value.len());
                self.texts.extend_from_slice(value);
            }
            let start = self.ends.last().copied().unwrap_or(0);
            let hash = HASHER.hash_one(&self.texts[start..]);
            self.ends.push(self.texts.len());
            self.hashes.push(hash);
            crate::prefetch::prefetch(&self.slots, self.home(hash));
        }
        // Pass 2: a hint for the text of the slot each one will most likely match.
        for &hash in &self.hashes {
            let mut i = self.home(hash);
            loop {
                let slot = self.slots[i];
                if slot.id == u32::MAX {
                    break;
                }
                if slot.tag == tag(hash) {
                    crate::prefetch::prefetch(&self.arena, slot.start as usize);
                    break;
                }
                i = (i + 1) & (self.slots.len() - 1);
            }
        }
        // Pass 3: the numbers, inserting new texts.
        for k in 0..self.hashes.len() {
            let start = if k == 0 { 0 } else { self.ends[k - 1] };
            let id = self.find_or_insert(self.hashes[k], start, self.ends[k]);
            self.ids.push(id);
        }
        &self.ids
    }

    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// The number of the batch's text `texts[start..end]`, whose hash is `hash`.
    fn find_or_insert(&mut self, hash: u64, start: usize, end: usize) -> u32 {
        let text = &self.texts[start..end];
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot.id == u32::MAX {
                break;
            }
            if slot.tag == tag(hash)
                && self
                    .arena
                    .get(slot.start as usize..slot.start as usize + text.len())
                    == Some(text)
            {
                return slot.id;
            }
            i = (i + 1) & mask;
        }
        let id = self.len;
        assert!(id < u32::MAX, "more than 4 billion distinct keys");
        self.len = id + 1;
        self.slots[i] = Slot {
            tag: tag(hash),
            id,
            start: self.arena.len() as u64,
        };
        self.arena.extend_from_slice(text);
        if self.len as usize * 4 > self.slots.len() * 3 {
            self.grow();
        }
        id
    }

    /// Twice the slots, every text moved to its new place (its hash worked out again).
    fn grow(&mut self) {
        let bigger = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.id != u32::MAX) {
            let start = slot.start as usize;
            let mut end = start;
            for _ in 0..self.fields.len() + usize::from(self.forwarded) {
                let (len, bytes) = read_len(&self.arena[end..]);
                end += bytes + len;
            }
            let mut i = HASHER.hash_one(&self.arena[start..end]) as usize & mask;
            while self.slots[i].id != u32::MAX {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }
}

/// Appends `len` in LEB128 (seven bits a byte, low first, the high bit set on all but the
/// last): one byte for the length of an address.
fn write_len(out: &mut Vec<u8>, mut len: usize) {
    while len >= 0x80 {
        out.push((len & 0x7f) as u8 | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
}

/// The length [`write_len`] wrote at the start of `bytes`, and how many bytes it took.
fn read_len(bytes: &[u8]) -> (usize, usize) {
    let mut len = 0;
    for (i, &b) in bytes.iter().enumerate() {
        len |= ((b & 0x7f) as usize) << (7 * i);
        if b < 0x80 {
            return (len, i + 1);
        }
    }
    unreachable!("a length written by `write_len`")
}

/// The high half of a hash (the table's index uses the low bits).
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(ip: &str, user: &str, endpoint: &str) -> Record {
        let mut rec = Record::default();
        rec.fields[field_index(KeyField::Ip)] = ip.into();
        rec.fields[field_index(KeyField::User)] = user.into();
        rec.fields[field_index(KeyField::Endpoint)] = endpoint.into();
        rec
    }

    const SHORT: &[&str] = &[
        "", "a", "b", "aa", "ab", "ba", "bb", "aaa", "aab", "aba", "abb", "baa", "bab", "bba",
        "bbb",
    ];

    /// Short addresses that collide often, and long ones whose length takes two LEB128 bytes,
    /// the latter built from a number (a regex drawing 300 characters one by one made this the
    /// slowest test of the suite).
    fn address() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(SHORT).prop_map(String::from),
            (0u32..1000, 7usize..40).prop_map(|(n, len)| format!("{n}.").repeat(len)[..len].into()),
            (any::<u64>(), 120usize..300)
                .prop_map(|(n, len)| format!("{n:020}").repeat(15)[..len].into()),
        ]
    }

    proptest! {
        /// Numbers like an `IndexSet` of the (ip, user) pairs under a key on `ip`, whatever
        /// the batches (the endpoint, which the key does not read, is not told apart); fields
        /// whose concatenations agree (`ab`+`c`, `a`+`bc`) stay apart.
        #[test]
        fn numbers_in_order_of_first_appearance(
            recs in proptest::collection::vec((
                address(),
                prop::sample::select(&["", "b", "c", "bb", "bc", "cb", "cc"][..]),
                prop::sample::select(&["/", "/x", "/y"][..]),
            ), 0..3000),
            batch in 1usize..300,
        ) {
            let spec = KeySpec::new(vec![KeyField::Ip]).unwrap();
            let mut keys = LocalKeys::new(&spec, false);
            let mut reference = indexmap::IndexSet::new();
            let records: Vec<Record> =
                recs.iter().map(|(i, u, e)| record(i, u, e)).collect();
            for (chunk, raw) in records.chunks(batch).zip(recs.chunks(batch)) {
                let got = keys.number(chunk.iter()).to_vec();
                let want: Vec<u32> = raw
                    .iter()
                    .map(|(i, u, _)| reference.insert_full((i.clone(), *u)).0 as u32)
                    .collect();
                prop_assert_eq!(got, want);
            }
            prop_assert_eq!(keys.len(), reference.len());
        }
    }

    #[test]
    fn reads_the_forwarded_header_where_the_keyspace_does() {
        let mut recs = [
            record("10.0.0.1", "", "/a"),
            record("10.0.0.1", "", "/a"),
            record("10.0.0.1", "", "/a"),
        ];
        recs[1].forwarded_for = "203.0.113.1".into();
        recs[2].forwarded_for = "203.0.113.2".into();
        let ip = KeySpec::new(vec![KeyField::Ip]).unwrap();
        assert_eq!(LocalKeys::new(&ip, false).number(recs.iter()), &[0, 0, 0]);
        // A contender's keyspace (paths) or an identity function reads it.
        assert_eq!(LocalKeys::new(&ip, true).number(recs.iter()), &[0, 1, 2]);
        let xff = KeySpec::identity(crate::policy::identity::IdentityFn::new(
            crate::policy::identity::Rule::XffHops(1),
        ));
        let mut keys = LocalKeys::new(&xff, false);
        assert_eq!(keys.number(recs.iter()), &[0, 1, 2]);
        // Its texts are found again after the table grows.
        for _ in 0..3 {
            keys.grow();
        }
        assert_eq!(keys.number(recs.iter().rev()), &[2, 1, 0]);
    }

    #[test]
    fn reads_the_fields_the_key_reads() {
        let spec = KeySpec::new(vec![KeyField::Endpoint]).unwrap();
        let mut keys = LocalKeys::new(&spec, false);
        let recs = [
            record("1.1.1.1", "", "/a"),
            record("2.2.2.2", "", "/a"),
            record("1.1.1.1", "u", "/a"),
            record("1.1.1.1", "", "/b"),
        ];
        // The address is not read (no identity function); the user always is (the client).
        assert_eq!(keys.number(recs.iter()), &[0, 0, 1, 2]);
    }
}
