//! The keyspace's tables of names: keys and clients, each numbered densely in order of first
//! appearance, each text stored once.
//!
//! A synthetic source interns its whole population before the run (10^6 clients is a usual
//! size), so memory per name is what counts: every text lives once, end to end in one buffer
//! ([`Texts`]), and the hash tables hold ids. A key's slot (40 bytes) also holds its text
//! when that is short (an IPv4 address, a generated user, most compressed IPv6 addresses): a
//! replay interns every line, and a hit then reads the control bytes and one slot, not the
//! texts too. A client named like a key (every client of `key = "user"`, every client of a
//! replayed line without a user) lives in the key's slot: it costs no lookup of its own and
//! stores no text; only the other clients have a table.

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use std::hash::BuildHasher;

/// The keyspace's hash: fixed, so runs do not depend on a random seed.
const HASHER: rustc_hash::FxBuildHasher = rustc_hash::FxBuildHasher;

/// The hash of `text` in either table (the same for both, so one hash serves a key and the
/// client named like it).
#[inline]
pub(super) fn hash(text: &str) -> u64 {
    hash_bytes(text.as_bytes())
}

/// [`hash`] of a text given by its bytes (as a slot holds it).
#[inline]
fn hash_bytes(text: &[u8]) -> u64 {
    HASHER.hash_one(text)
}

/// Texts numbered densely, stored end to end in one buffer: no allocation and no padding per
/// text.
#[derive(Debug, Default)]
pub(super) struct Texts {
    bytes: String,
    /// Where text `i` ends in `bytes` (it starts where text `i - 1` ends).
    ends: Vec<usize>,
}

impl Texts {
    /// Appends `text`; returns its number.
    fn push(&mut self, text: &str) -> u32 {
        let id = u32::try_from(self.ends.len()).expect("more than 4 billion distinct names");
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len());
        id
    }

    #[inline]
    pub(super) fn get(&self, id: u32) -> &str {
        &self.bytes[self.start(id)..self.ends[id as usize]]
    }

    /// Where text `id` starts in the buffer.
    #[inline]
    fn start(&self, id: u32) -> usize {
        (id as usize).checked_sub(1).map_or(0, |p| self.ends[p])
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Room for `more` texts of about `bytes_each` bytes.
    fn reserve(&mut self, more: usize, bytes_each: usize) {
        self.ends.reserve(more);
        self.bytes.reserve(more.saturating_mul(bytes_each));
    }
}

/// Bytes of a key's text its slot holds: an IPv4 address fits, and most compressed IPv6
/// ones (smaller slots slowed replays: docs/performance.md).
const INLINE: usize = 31;

/// A key's id, the caller's number kept with it (the keyspace: the client named like the key),
/// which saves a lookup elsewhere, and the key's text when it is short: a replay interns every
/// line, and a hit then reads the control bytes and the slot, not the texts by id too.
#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u32,
    extra: u32,
    /// The text's length when it is in `head`; [`FAR`] when it is not.
    len: u8,
    head: [u8; INLINE],
}

/// [`Slot::len`] of a text longer than [`INLINE`].
const FAR: u8 = u8::MAX;

impl Slot {
    /// The slot of the text `texts` has just taken as number `id`.
    fn new(id: u32, texts: &Texts) -> Slot {
        let (start, text) = (texts.start(id), texts.get(id).as_bytes());
        let mut head = [0; INLINE];
        let len = match head.get_mut(..text.len()) {
            Some(h) => {
                h.copy_from_slice(text);
                text.len() as u8
            }
            None => {
                // Where the text is, so a hit reads it in one step (not its end by id first).
                let len = u32::try_from(text.len()).expect("a name under 4 GiB");
                head[..8].copy_from_slice(&(start as u64).to_le_bytes());
                head[8..12].copy_from_slice(&len.to_le_bytes());
                FAR
            }
        };
        Slot {
            id,
            extra: u32::MAX,
            len,
            head,
        }
    }

    /// The slot's text (from `texts` when it is not inline).
    #[inline]
    fn text<'a>(&'a self, texts: &'a Texts) -> &'a [u8] {
        match self.head.get(..usize::from(self.len)) {
            Some(head) => head,
            None => {
                let [a, b, c, d, e, f, g, h, i, j, k, l, ..] = self.head;
                let start = u64::from_le_bytes([a, b, c, d, e, f, g, h]) as usize;
                let len = u32::from_le_bytes([i, j, k, l]) as usize;
                &texts.bytes.as_bytes()[start..start + len]
            }
        }
    }
}

/// What [`NameTable`] needs of a slot: the id it holds, the number kept with it, its text.
trait NameSlot: Copy {
    /// The slot of the text `texts` has just taken as number `id`.
    fn new(id: u32, texts: &Texts) -> Self;
    fn id(&self) -> u32;
    fn extra(&mut self) -> &mut u32;
    fn text<'a>(&'a self, texts: &'a Texts) -> &'a [u8];
}

impl NameSlot for Slot {
    fn new(id: u32, texts: &Texts) -> Self {
        Slot::new(id, texts)
    }

    #[inline]
    fn id(&self) -> u32 {
        self.id
    }

    #[inline]
    fn extra(&mut self) -> &mut u32 {
        &mut self.extra
    }

    #[inline]
    fn text<'a>(&'a self, texts: &'a Texts) -> &'a [u8] {
        Slot::text(self, texts)
    }
}

/// A slot of ids only (8 bytes, not 40): its text is read by id. For a keyspace whose names
/// are all interned before the run (synthetic populations), where a million names cost 16 MB
/// of slots rather than 80 and an insert of a new name writes one slot, not five lines of them.
#[derive(Debug, Clone, Copy)]
struct IdSlot {
    id: u32,
    extra: u32,
}

impl NameSlot for IdSlot {
    fn new(id: u32, _: &Texts) -> Self {
        IdSlot {
            id,
            extra: u32::MAX,
        }
    }

    #[inline]
    fn id(&self) -> u32 {
        self.id
    }

    #[inline]
    fn extra(&mut self) -> &mut u32 {
        &mut self.extra
    }

    #[inline]
    fn text<'a>(&'a self, texts: &'a Texts) -> &'a [u8] {
        texts.get(self.id).as_bytes()
    }
}

/// The hash table of a [`NameTable`]: slots with short texts inline (the default: a replay
/// looks names up on every line), or ids only ([`NameTable::ids_only`]).
#[derive(Debug)]
enum Slots {
    Inline(HashTable<Slot>),
    Ids(HashTable<IdSlot>),
}

impl Default for Slots {
    fn default() -> Self {
        Slots::Inline(HashTable::new())
    }
}

/// Distinct names (keys), numbered densely in order of first insertion.
#[derive(Debug, Default)]
pub(super) struct NameTable {
    table: Slots,
    texts: Texts,
}

/// [`NameTable::intern`] in `table`.
#[inline]
fn intern_in<'a, S: NameSlot>(
    table: &'a mut HashTable<S>,
    texts: &'a mut Texts,
    hash: u64,
    text: &str,
) -> (u32, bool, &'a mut u32, &'a Texts) {
    let known = &*texts;
    let entry = table.entry(
        hash,
        |slot| slot.text(known) == text.as_bytes(),
        |slot| hash_bytes(slot.text(known)),
    );
    match entry {
        Entry::Occupied(o) => {
            let slot = o.into_mut();
            (slot.id(), false, slot.extra(), texts)
        }
        Entry::Vacant(v) => {
            let id = texts.push(text);
            let slot = v.insert(S::new(id, texts));
            (id, true, slot.into_mut().extra(), texts)
        }
    }
}

/// [`NameTable::find`] in `table`.
#[inline]
fn find_in<'a, S: NameSlot>(
    table: &'a mut HashTable<S>,
    texts: &Texts,
    hash: u64,
    text: &str,
) -> Option<(u32, &'a mut u32)> {
    let slot = table.find_mut(hash, |slot| slot.text(texts) == text.as_bytes())?;
    Some((slot.id(), slot.extra()))
}

impl NameTable {
    /// A table with slots of ids only: for a keyspace whose names are interned before the run
    /// and seldom looked up during it.
    pub(super) fn ids_only() -> Self {
        NameTable {
            table: Slots::Ids(HashTable::new()),
            texts: Texts::default(),
        }
    }

    /// The id of `text` (whose [`hash`] is `hash`), adding it (with the next id) if new;
    /// whether it was new; the number kept with it (`u32::MAX` until the caller sets it); and
    /// the texts by id, which the caller may read while it sets that number.
    #[inline]
    pub(super) fn intern(&mut self, hash: u64, text: &str) -> (u32, bool, &mut u32, &Texts) {
        match &mut self.table {
            Slots::Inline(t) => intern_in(t, &mut self.texts, hash, text),
            Slots::Ids(t) => intern_in(t, &mut self.texts, hash, text),
        }
    }

    /// The id of `text` (whose [`hash`] is `hash`) and the number kept with it, if it is in.
    #[inline]
    pub(super) fn find(&mut self, hash: u64, text: &str) -> Option<(u32, &mut u32)> {
        match &mut self.table {
            Slots::Inline(t) => find_in(t, &self.texts, hash, text),
            Slots::Ids(t) => find_in(t, &self.texts, hash, text),
        }
    }

    /// Makes room for `more` names of about `bytes_each` bytes without growing on the way.
    pub(super) fn reserve(&mut self, more: usize, bytes_each: usize) {
        let texts = &self.texts;
        match &mut self.table {
            Slots::Inline(t) => t.reserve(more, |slot| hash_bytes(slot.text(texts))),
            Slots::Ids(t) => t.reserve(more, |slot| hash_bytes(slot.text(texts))),
        }
        self.texts.reserve(more, bytes_each);
    }

    /// The name with id `id`.
    pub(super) fn get(&self, id: u32) -> &str {
        self.texts.get(id)
    }

    pub(super) fn texts(&self) -> &Texts {
        &self.texts
    }

    pub(super) fn len(&self) -> usize {
        self.texts.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.texts.len() == 0
    }
}

/// Where a client's name is stored.
#[derive(Debug, Clone, Copy)]
enum ClientName {
    /// The same text as this key.
    Key(u32),
    /// Its own text, by number in [`ClientTable`]'s texts.
    Own(u32),
}

/// A client with a name of its own, and where that name is in [`ClientTable`]'s texts.
#[derive(Debug, Clone, Copy)]
struct OwnSlot {
    client: u32,
    text: u32,
}

/// Distinct clients, numbered densely in order of first insertion. A client named like a key
/// is found through that key's slot in the [`NameTable`] (the keyspace keeps the client's id
/// there) and stores no text; only the others are in this table, with their own text.
#[derive(Debug, Default)]
pub(super) struct ClientTable {
    table: HashTable<OwnSlot>,
    names: Vec<ClientName>,
    own: Texts,
}

impl ClientTable {
    /// The id of the client named `text` (whose [`hash`] is `hash`), adding it if new. `key`:
    /// the key named `text`, if there is one, whose slot does not hold the client yet; a new
    /// client is then named by it, else with a copy of `text`.
    #[inline]
    pub(super) fn intern(&mut self, hash: u64, text: &str, key: Option<u32>) -> u32 {
        let own = &self.own;
        let entry = self.table.entry(
            hash,
            |slot| own.get(slot.text) == text,
            |slot| self::hash(own.get(slot.text)),
        );
        if let Entry::Occupied(o) = &entry {
            return o.get().client;
        }
        let id = u32::try_from(self.names.len()).expect("more than 4 billion distinct clients");
        match key {
            Some(k) => self.names.push(ClientName::Key(k)),
            None => {
                let text = self.own.push(text);
                self.names.push(ClientName::Own(text));
                if let Entry::Vacant(v) = entry {
                    v.insert(OwnSlot { client: id, text });
                }
            }
        }
        id
    }

    /// Makes room for `more` clients, of which `own` with a name of their own, without
    /// growing on the way.
    pub(super) fn reserve(&mut self, more: usize, own: usize) {
        let texts = &self.own;
        self.table.reserve(own, |slot| hash(texts.get(slot.text)));
        self.names.reserve(more);
    }

    /// The name of client `id`; `keys` the keys' texts.
    /// The key client `id` is named like, if it is.
    pub(super) fn key_of(&self, id: u32) -> Option<u32> {
        match self.names[id as usize] {
            ClientName::Key(k) => Some(k),
            ClientName::Own(_) => None,
        }
    }

    pub(super) fn get<'a>(&'a self, keys: &'a Texts, id: u32) -> &'a str {
        match self.names[id as usize] {
            ClientName::Key(k) => keys.get(k),
            ClientName::Own(i) => self.own.get(i),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.names.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexSet;
    use proptest::prelude::*;

    proptest! {
        /// Ids are dense, in order of first appearance, like an `IndexSet`'s indices; the
        /// number kept with a name is the one last set for it.
        #[test]
        fn numbers_names_like_an_index_set_and_keeps_their_numbers(
            texts in proptest::collection::vec("[a-c]{0,3}|\\PC{28,34}", 0..200),
            ids_only in any::<bool>(),
        ) {
            let mut table = if ids_only {
                NameTable::ids_only()
            } else {
                NameTable::default()
            };
            let mut reference = IndexSet::<String>::new();
            for t in &texts {
                let (id, new, extra, _) = table.intern(hash(t), t);
                prop_assert_eq!(*extra == u32::MAX, new || t.len() % 2 == 1);
                if t.len() % 2 == 0 {
                    *extra = id;
                } else {
                    prop_assert!(*extra == u32::MAX);
                }
                let (want, was_new) = reference.insert_full(t.clone());
                prop_assert_eq!((id as usize, new), (want, was_new));
                prop_assert_eq!(table.get(id), t.as_str());
            }
            prop_assert_eq!(table.len(), reference.len());
            for (i, t) in reference.iter().enumerate() {
                prop_assert_eq!(table.get(i as u32), t.as_str());
                prop_assert_eq!(table.find(hash(t), t).map(|(id, _)| id), Some(i as u32));
            }
            prop_assert!(table.find(hash("d"), "d").is_none());
        }
    }

    proptest! {
        /// A slot holds its text (inline or not) and hashes it as the `str` it is.
        #[test]
        fn a_slot_holds_its_text(text in "\\PC{0,40}") {
            let mut texts = Texts::default();
            texts.push("before");
            let slot = Slot::new(texts.push(&text), &texts);
            texts.push("after");
            prop_assert_eq!(slot.text(&texts), text.as_bytes());
            prop_assert_eq!(slot.len == FAR, text.len() > INLINE);
            prop_assert_eq!(hash_bytes(slot.text(&texts)), hash(&text));
        }
    }

    #[test]
    fn a_slot_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 40);
    }

    #[test]
    fn texts_are_stored_end_to_end() {
        let mut texts = Texts::default();
        assert_eq!(
            [texts.push(""), texts.push("ab"), texts.push("")],
            [0, 1, 2]
        );
        assert_eq!(texts.push("cde"), 3);
        assert_eq!(texts.bytes, "abcde");
        let got: Vec<&str> = (0..4).map(|i| texts.get(i)).collect();
        assert_eq!(got, ["", "ab", "", "cde"]);
    }
}
