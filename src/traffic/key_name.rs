//! A key's (or client's) text as the keyspace stores it: inline when short, on the heap when not.
//!
//! Replaying a log interns every line's key, and with a few hundred thousand addresses the
//! lookup's cost was cache misses: the table, then the entry, then the entry's string on the
//! heap. Short names (every IPv4 address, most others) are kept in the entry itself, so the
//! comparison reads memory the lookup has already loaded; long ones keep one heap allocation.
//!
//! [`NameTable`] holds the names with their ids in the hash table's own slots: a lookup reads
//! the table's control bytes and one slot, where an `IndexSet` read its control bytes, then an
//! index slot, then the entry (three dependent cache misses, each a third of the lookup's time
//! in a replay's profile). The names are also kept by id, for [`NameTable::get`].

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use indexmap::Equivalent;
use std::hash::{BuildHasher, Hash, Hasher};

/// Bytes kept inline: the whole name fits in 32 bytes.
const INLINE: usize = 30;

#[derive(Debug, Clone)]
pub(super) enum Name {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Name {
    pub(super) fn new(text: &str) -> Name {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Name::Inline {
                len: text.len() as u8,
                bytes,
            }
        } else {
            Name::Heap(text.into())
        }
    }

    /// The text's bytes, unchecked: what a lookup compares.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Name::Inline { len, bytes } => &bytes[..*len as usize],
            Name::Heap(s) => s.as_bytes(),
        }
    }

    #[inline]
    pub(super) fn as_str(&self) -> &str {
        match self {
            Name::Inline { len, bytes } => {
                // Always a copy of a whole `&str` (see `new`), so valid UTF-8.
                std::str::from_utf8(&bytes[..*len as usize]).expect("copied from a str")
            }
            Name::Heap(s) => s,
        }
    }
}

// Hashes and compares as its text, so a `&str` finds it (`Equivalent`) without building one.
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Name {}

impl Equivalent<Name> for str {
    #[inline]
    fn equivalent(&self, key: &Name) -> bool {
        self.as_bytes() == key.bytes()
    }
}

/// A name and its id, as the table stores them.
#[derive(Debug, Clone)]
struct Slot {
    name: Name,
    id: u32,
    /// The caller's number for this name (the keyspace: the client named like the key), kept
    /// here to save a lookup elsewhere; it fits in the slot's padding.
    extra: u32,
}

/// Distinct names, numbered densely in order of first insertion.
#[derive(Debug, Default)]
pub(super) struct NameTable {
    table: HashTable<Slot>,
    by_id: Vec<Name>,
}

/// The keyspace's hash, as before: fixed, so runs do not depend on a random seed.
const HASHER: rustc_hash::FxBuildHasher = rustc_hash::FxBuildHasher;

impl NameTable {
    /// The id of `text`, adding it (with the next id) if new; whether it was new; and the
    /// number kept with it (`u32::MAX` until the caller sets it). `make` builds the stored
    /// name from `text`.
    #[inline]
    pub(super) fn intern_with(
        &mut self,
        text: &str,
        make: impl FnOnce() -> Name,
    ) -> (usize, bool, &mut u32) {
        let hash = HASHER.hash_one(text);
        let entry = self.table.entry(
            hash,
            |slot| text.equivalent(&slot.name),
            |slot| HASHER.hash_one(&slot.name),
        );
        match entry {
            Entry::Occupied(o) => {
                let slot = o.into_mut();
                (slot.id as usize, false, &mut slot.extra)
            }
            Entry::Vacant(v) => {
                let id = self.by_id.len();
                let name = make();
                self.by_id.push(name.clone());
                let slot = v
                    .insert(Slot {
                        name,
                        id: u32::try_from(id).expect("more than 4 billion distinct names"),
                        extra: u32::MAX,
                    })
                    .into_mut();
                (id, true, &mut slot.extra)
            }
        }
    }

    /// Makes room for `more` names without growing the table on the way.
    pub(super) fn reserve(&mut self, more: usize) {
        self.table.reserve(more, |slot| HASHER.hash_one(&slot.name));
        self.by_id.reserve(more);
    }

    /// The name with id `id`.
    pub(super) fn get(&self, id: usize) -> &Name {
        &self.by_id[id]
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Ids are dense, in order of first appearance, like an `IndexSet`'s indices.
        #[test]
        fn numbers_names_like_an_index_set_and_keeps_their_numbers(
            texts in proptest::collection::vec("[a-c]{0,3}|\\PC{28,34}", 0..200),
        ) {
            let mut table = NameTable::default();
            let mut reference = indexmap::IndexSet::<String>::new();
            for t in &texts {
                let (id, new, extra) = table.intern_with(t, || Name::new(t));
                // The number kept with a name is the one last set for it.
                prop_assert_eq!(*extra == u32::MAX, new || t.len() % 2 == 1);
                if t.len() % 2 == 0 {
                    *extra = id as u32;
                } else {
                    prop_assert!(*extra == u32::MAX);
                }
                let (want, was_new) = reference.insert_full(t.clone());
                prop_assert_eq!((id, new), (want, was_new));
                prop_assert_eq!(table.get(id).as_str(), t.as_str());
            }
            prop_assert_eq!(table.len(), reference.len());
        }
    }

    #[test]
    fn fits_in_32_bytes() {
        assert_eq!(std::mem::size_of::<Name>(), 32);
    }

    proptest! {
        /// Any text round-trips, short or long, and hashes as the `str` it holds.
        #[test]
        fn holds_its_text(text in "\\PC{0,40}") {
            let name = Name::new(&text);
            prop_assert_eq!(name.as_str(), text.as_str());
            prop_assert_eq!(matches!(name, Name::Inline { .. }), text.len() <= INLINE);
            let hash = |h: &dyn Fn(&mut std::hash::DefaultHasher)| {
                let mut s = std::hash::DefaultHasher::new();
                h(&mut s);
                s.finish()
            };
            prop_assert_eq!(hash(&|s| name.hash(s)), hash(&|s| text.as_str().hash(s)));
            prop_assert!(text.as_str().equivalent(&name));
        }
    }
}
