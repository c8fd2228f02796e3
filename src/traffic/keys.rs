//! Interning of rate-limiting keys: each distinct key string becomes a dense [`KeyId`].

use super::identity::Identity;
use super::key_name::{self, ClientTable, NameTable};
use super::population::Clients;
use super::via::Wire;
use super::{Client, ClientId};
use crate::algorithms::KeyId;
use crate::policy::identity::{Seen, Who};
use crate::policy::{KeyField, KeySpec};
use std::net::IpAddr;

/// How a keyspace lays out what it keeps: one choice per keyspace, made when it is created
/// ([`KeyLayout::for_sources`] for a run's), never changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyLayout {
    /// What the keyspace keeps of each key beside its name.
    pub keeps: Keeps,
    /// How the table of names is laid out for the lookups expected.
    pub lookups: Lookups,
}

/// What a keyspace keeps of each key beside its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keeps {
    /// Names only: all a run's metrics need.
    #[default]
    Names,
    /// Every key's identity fields too ([`KeySpace::fields`]): for `rlsim traffic` and a
    /// decision log that writes them; with a key spec of all four fields, a key is one identity.
    Fields,
    /// The fields, and an identity told apart by its network path (the rotated forged address
    /// left out), which is kept too ([`KeySpace::wire`]): what a contender's rules need to key
    /// on what the origin sees.
    FieldsAndPaths,
}

impl Keeps {
    /// Whether every key's identity fields are kept.
    pub fn fields(self) -> bool {
        self != Keeps::Names
    }
}

/// When names are looked up, which decides how the table of names is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lookups {
    /// During the run too (a replay interns every line): short names inline in their slots, so
    /// a hit reads one slot and not the texts.
    #[default]
    DuringRun,
    /// Only while the sources are set up (every key interned before the run, seldom looked up
    /// after): slots of ids only, much smaller, a name's text found by id.
    AtSetup,
}

impl KeyLayout {
    /// The layout of a run's keyspace over `sources`, keeping `keeps`: names looked up during
    /// the run only where a source replays a trace.
    pub fn for_sources(sources: &[super::SourceSpec], keeps: Keeps) -> KeyLayout {
        let replays = sources
            .iter()
            .any(|s| matches!(s.arrivals, super::Arrivals::Replay { .. }));
        KeyLayout {
            keeps,
            lookups: if replays {
                Lookups::DuringRun
            } else {
                Lookups::AtSetup
            },
        }
    }
}

/// Every key seen in a run, in order of first appearance.
///
/// Interning happens when a synthetic client is created or a trace record is read, never per
/// decision; the engine and the limiters only handle the integer ids.
#[derive(Debug, Default)]
pub struct KeySpace {
    layout: KeyLayout,
    names: NameTable,
    clients: ClientTable,
    scratch: String,
    /// With [`Keeps::Fields`] and [`Keeps::FieldsAndPaths`]: the identity fields of each key,
    /// by key id.
    fields: Option<Vec<[Box<str>; 4]>>,
    /// With [`Keeps::FieldsAndPaths`]: each key's network path ([`Wire`]), by key id.
    wires: Option<Vec<Option<Wire>>>,
    /// The routes of replayed requests with production's decisions, numbered from 1 in the
    /// order they first appear (at most [`super::ROUTES`] − 1; the rest are number 0).
    routes: Vec<Box<str>>,
    /// A replayed record's path (its `X-Forwarded-For`), refilled per record: no allocation
    /// once it has grown to the longest header.
    forwarded: Option<Wire>,
}

/// Whether a keyspace reads a replayed record's `X-Forwarded-For`: under an identity function
/// (which may read it), or when it tells identities apart by their path (`paths`: a
/// contender's, whose rules may key by one). Otherwise the header costs nothing.
pub(crate) fn reads_forwarded(spec: &KeySpec, paths: bool) -> bool {
    paths || spec.identity_fn().is_some()
}

impl KeySpace {
    /// A keyspace of names only, looked up during the run ([`KeyLayout::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A keyspace laid out as `layout` says.
    pub fn with_layout(layout: KeyLayout) -> Self {
        KeySpace {
            layout,
            names: match layout.lookups {
                Lookups::DuringRun => NameTable::default(),
                Lookups::AtSetup => NameTable::ids_only(),
            },
            fields: layout.keeps.fields().then(Vec::new),
            wires: (layout.keeps == Keeps::FieldsAndPaths).then(Vec::new),
            ..Self::default()
        }
    }

    /// How the keyspace is laid out.
    pub fn layout(&self) -> KeyLayout {
        self.layout
    }

    /// Makes room for `keys` more keys and `clients` more clients: a synthetic source interns
    /// its whole population before the run, and tables grown by doubling would copy (and,
    /// under an allocator that keeps freed memory, hold) every smaller size on the way.
    ///
    /// `own_names`: how many of the clients are not named like a key (a client named like one
    /// is found through the key's slot and needs no room in the clients' table).
    pub fn reserve(&mut self, keys: usize, clients: usize, own_names: usize) {
        // Generated names (`p-123456`, addresses) are short; a longer one costs a doubling.
        self.names.reserve(keys, 16);
        self.clients.reserve(clients, own_names);
    }

    /// The network path of key `id`, when the keyspace keeps paths and the key has one.
    pub fn wire(&self, id: KeyId) -> Option<&Wire> {
        self.wires.as_ref()?.get(id as usize)?.as_ref()
    }

    /// The identity fields (indexed like `KeyField::ALL`) of key `id`, when the keyspace keeps
    /// them.
    pub fn fields(&self, id: KeyId) -> Option<&[Box<str>; 4]> {
        self.fields.as_ref()?.get(id as usize)
    }

    /// The id of the key that `value_of` describes under `spec`, adding it if new.
    /// Allocates only for a key not seen before.
    ///
    /// Under an identity function, the record is taken as a direct connection from its `ip`
    /// (no proxy headers), signed in when it has a user; an `ip` that is not an address is
    /// keyed on as written.
    pub fn intern<'a>(&mut self, spec: &KeySpec, value_of: impl Fn(KeyField) -> &'a str) -> KeyId {
        let who = spec.identity_fn().and_then(|f| {
            let ip: IpAddr = value_of(KeyField::Ip).parse().ok()?;
            let user = Some(value_of(KeyField::User)).filter(|u| !u.is_empty());
            Some(f.apply(&Seen::direct(ip, user)))
        });
        self.intern_who(spec, who, value_of)
    }

    /// Like [`KeySpace::intern`], with the identity already worked out (`who` takes the place
    /// of the `ip` field under an identity function).
    pub fn intern_who<'a>(
        &mut self,
        spec: &KeySpec,
        who: Option<Who>,
        value_of: impl Fn(KeyField) -> &'a str,
    ) -> KeyId {
        self.intern_path(spec, who, value_of, None)
    }

    fn intern_path<'a>(
        &mut self,
        spec: &KeySpec,
        who: Option<Who>,
        value_of: impl Fn(KeyField) -> &'a str,
        wire: Option<&Wire>,
    ) -> KeyId {
        self.intern_key_client(spec, who, value_of, wire, ClientOf::None)
            .0
    }

    /// Interns the key, and the client `client` says (see [`ClientOf`]). The id of the client
    /// named like the key is kept in the key's slot of the table: a replayed line without a
    /// user costs one lookup, not two; and that client's name is the key's text, not a copy.
    fn intern_key_client<'a>(
        &mut self,
        spec: &KeySpec,
        who: Option<Who>,
        value_of: impl Fn(KeyField) -> &'a str,
        wire: Option<&Wire>,
        client: ClientOf,
    ) -> (KeyId, ClientId) {
        let mut buf = std::mem::take(&mut self.scratch);
        let wire = wire.filter(|_| self.wires.is_some());
        render(spec, who, &value_of, wire, &mut buf);
        let (id, new, client) = self.intern_text(key_name::hash(&buf), &buf, client);
        if new {
            if let Some(fields) = &mut self.fields {
                fields.push(KeyField::ALL.map(|f| value_of(f).into()));
            }
            if let Some(wires) = &mut self.wires {
                wires.push(wire.cloned());
            }
        }
        self.scratch = buf;
        (id, client)
    }

    /// The key named `text` (whose hash is `hash`), whether it is new, and the client `client`
    /// says.
    #[inline]
    fn intern_text(&mut self, hash: u64, text: &str, client: ClientOf) -> (KeyId, bool, ClientId) {
        let (id, new, own, _) = self.names.intern(hash, text);
        let client = match client {
            ClientOf::None => ClientId::MAX,
            ClientOf::User(user) if user != text => self.intern_client(user),
            ClientOf::Key | ClientOf::User(_) => {
                if *own == ClientId::MAX {
                    *own = self.clients.intern(hash, text, Some(id));
                }
                *own
            }
        };
        (id, new, client)
    }

    /// Whether synthetic clients can be interned in batches ([`KeySpace::stage`]): unless the
    /// keyspace keeps each new key's fields or path, which only the client's identity gives.
    pub(super) fn stages(&self) -> bool {
        self.layout.keeps == Keeps::Names
    }

    /// Renders a synthetic client's key and user into `staged`, to be interned with the rest
    /// of the batch by [`KeySpace::intern_staged`] exactly as
    /// [`KeySpace::intern_identity_client`] would have, in the same order. Only where
    /// [`KeySpace::stages`].
    pub(super) fn stage(&self, spec: &KeySpec, identity: &Identity, staged: &mut Staged) {
        debug_assert!(
            self.stages(),
            "a keyspace that records keys interns one at a time"
        );
        let value_of = |f| identity.get(f);
        let who = identity_who(spec, identity);
        let start = staged.text.len();
        spec.render_onto(&mut staged.text, |field, out| {
            KeySpec::write_field(field, who, value_of(field), out)
        });
        let key_end = staged.text.len();
        let user = identity.client();
        let same_user = user == &staged.text[start..];
        if !same_user {
            staged.text.push_str(user);
        }
        staged.entries.push(StagedKey {
            hash: key_name::hash(&staged.text[start..key_end]),
            start,
            key_end,
            same_user,
        });
    }

    /// Interns the clients of `staged` in order, appends them to `out`, and empties `staged`.
    pub(super) fn intern_staged(&mut self, staged: &mut Staged, out: &mut Clients) {
        for (i, e) in staged.entries.iter().enumerate() {
            let end = staged
                .entries
                .get(i + 1)
                .map_or(staged.text.len(), |n| n.start);
            let client = if e.same_user {
                ClientOf::Key
            } else {
                ClientOf::User(&staged.text[e.key_end..end])
            };
            let (key, _, id) = self.intern_text(e.hash, &staged.text[e.start..e.key_end], client);
            out.push(Client { key, id });
        }
        staged.text.clear();
        staged.entries.clear();
    }

    /// The id of the client (user identity) `user`, adding it if new.
    pub fn intern_client(&mut self, user: &str) -> ClientId {
        let hash = key_name::hash(user);
        // A client named like a key is kept in the key's slot.
        match self.names.find(hash, user) {
            Some((_, &mut client)) if client != ClientId::MAX => client,
            Some((key, client)) => {
                *client = self.clients.intern(hash, user, Some(key));
                *client
            }
            None => self.clients.intern(hash, user, None),
        }
    }

    /// Whether this keyspace reads a replayed record's `X-Forwarded-For` under `spec`: under an
    /// identity function, or when it tells identities apart by their path.
    pub fn reads_forwarded(&self, spec: &KeySpec) -> bool {
        reads_forwarded(spec, self.wires.is_some())
    }

    /// The key of a trace record (as [`KeySpace::intern`]) and its client: the record's user,
    /// or without one the client named like the key (traffic that carries no user identity).
    ///
    /// `forwarded_for` is the record's `X-Forwarded-For` as logged (empty: none). Where the
    /// keyspace reads it ([`KeySpace::reads_forwarded`]) and the record's `ip` is an address,
    /// the request is seen as a synthetic one behind proxies is: from its `ip` as the socket
    /// peer, with the header's addresses (`Wire::set_forwarded`). An identity function reads
    /// them, and a keyspace that tells paths apart keeps them as the key's path
    /// ([`KeySpace::wire`]).
    pub fn intern_with_client<'a>(
        &mut self,
        spec: &KeySpec,
        value_of: impl Fn(KeyField) -> &'a str,
        forwarded_for: &str,
    ) -> (KeyId, ClientId) {
        let user = value_of(KeyField::User);
        let mut path = self.forwarded.take();
        let reads = !forwarded_for.is_empty() && self.reads_forwarded(spec);
        let ip = (spec.identity_fn().is_some() || reads)
            .then(|| value_of(KeyField::Ip).parse::<IpAddr>().ok())
            .flatten();
        let forwarded = match ip {
            Some(ip) if reads => {
                let wire = path.get_or_insert_with(Wire::forwarded);
                wire.set_forwarded(ip, forwarded_for).then_some(&*wire)
            }
            _ => None,
        };
        let who = spec.identity_fn().zip(ip).map(|(f, ip)| {
            let user = Some(user).filter(|u| !u.is_empty());
            match forwarded {
                Some(wire) => f.apply(&wire.seen(user)),
                None => f.apply(&Seen::direct(ip, user)),
            }
        });
        let client = if user.is_empty() {
            ClientOf::Key
        } else {
            ClientOf::User(user)
        };
        let ids = self.intern_key_client(spec, who, &value_of, forwarded, client);
        self.forwarded = path;
        ids
    }

    /// The name of client `id` (its user identity, or its key's text when it has none).
    /// The number of route `path` (see [`super::Logged`]): a scan of at most 31 short names,
    /// only for records that carry production's decision.
    pub fn intern_route(&mut self, path: &str) -> u8 {
        if let Some(i) = self.routes.iter().position(|r| **r == *path) {
            return i as u8 + 1;
        }
        if self.routes.len() + 1 >= super::ROUTES {
            return 0;
        }
        self.routes.push(path.into());
        self.routes.len() as u8
    }

    /// The name of route number `n` (0: every route past the 31st).
    pub fn route_name(&self, n: usize) -> &str {
        match n {
            0 => "(other routes)",
            n => self.routes.get(n - 1).map_or("", |r| r),
        }
    }

    /// The key client `id` is named like: a replayed record's without a user
    /// ([`KeySpace::intern_with_client`]), whose client is the key itself.
    pub fn client_key(&self, id: ClientId) -> Option<KeyId> {
        self.clients.key_of(id)
    }

    /// The number of routes numbered so far ([`KeySpace::intern_route`]).
    pub fn routes(&self) -> usize {
        self.routes.len()
    }

    /// The name client `id` was interned under (a synthetic client's user, else its API key,
    /// else its address).
    pub fn client_name(&self, id: ClientId) -> &str {
        self.clients.get(self.names.texts(), id)
    }

    /// Distinct clients seen.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// The id of a synthetic client's key.
    pub fn intern_identity(&mut self, spec: &KeySpec, identity: &Identity) -> KeyId {
        self.intern_identity_as(spec, identity, ClientOf::None).0
    }

    /// A synthetic client's key and client (its user): what [`KeySpace::intern_identity`] and
    /// [`KeySpace::intern_client`] give, in one lookup of the text when they are the same.
    /// The client is the real one: its user, else its device (API key), else its address.
    pub fn intern_identity_client(&mut self, spec: &KeySpec, identity: &Identity) -> Client {
        let name = identity.client();
        let (key, id) = self.intern_identity_as(spec, identity, ClientOf::User(name));
        Client { key, id }
    }

    fn intern_identity_as(
        &mut self,
        spec: &KeySpec,
        identity: &Identity,
        client: ClientOf,
    ) -> (KeyId, ClientId) {
        let who = identity_who(spec, identity);
        let value_of = |f| identity.get(f);
        self.intern_key_client(spec, who, value_of, identity.wire.as_ref(), client)
    }

    /// The key's text, as the policy keyed on it.
    pub fn name(&self, id: KeyId) -> &str {
        self.names.get(id)
    }

    /// The number of distinct keys interned so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no key has been interned yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The identity a synthetic client's key is made of under the policy's identity function (in
/// place of its `ip`); `None` without one.
fn identity_who<'a>(spec: &KeySpec, identity: &'a Identity) -> Option<Who<'a>> {
    let f = spec.identity_fn()?;
    let user = identity.signed_in_user();
    match identity.wire.as_ref() {
        Some(wire) => Some(f.apply(&wire.seen(user))),
        None => identity
            .ip
            .parse()
            .ok()
            .map(|ip| f.apply(&Seen::direct(ip, user))),
    }
}

/// Writes the key's text into `out` (cleared first): its fields under `spec`, then its network
/// path when the keyspace tells paths apart (`wire`).
fn render<'a>(
    spec: &KeySpec,
    who: Option<Who>,
    value_of: impl Fn(KeyField) -> &'a str,
    wire: Option<&Wire>,
    out: &mut String,
) {
    spec.render_with(out, |field, out| {
        KeySpec::write_field(field, who, value_of(field), out)
    });
    if let Some(w) = wire {
        out.push('|');
        w.write_path(out);
    }
}

/// Synthetic clients' keys rendered ahead of interning ([`KeySpace::stage`]). A population's
/// setup renders a batch, then interns it, so the table inserts' cache misses overlap instead
/// of each client waiting for the one before (docs/performance.md).
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// Each client's key, then its user when that differs from the key.
    text: String,
    entries: Vec<StagedKey>,
}

impl Staged {
    /// Clients staged so far.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[derive(Debug)]
struct StagedKey {
    hash: u64,
    /// Where the key's text starts in [`Staged::text`] and ends (the user, if it differs,
    /// follows up to the next client's start).
    start: usize,
    key_end: usize,
    /// The client is the one named like the key.
    same_user: bool,
}

/// Which client [`KeySpace::intern_key_client`] interns along with the key.
#[derive(Clone, Copy)]
enum ClientOf<'a> {
    None,
    /// The client named like the key.
    Key,
    /// The client named `user`.
    User(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One interning call of a run, on fields drawn from few values so names repeat across
    /// calls and a user can be named like another call's key.
    #[derive(Debug, Clone)]
    enum Op {
        /// A synthetic client ([`KeySpace::intern_identity_client`]).
        Synthetic { ip: String, user: String },
        /// A trace record ([`KeySpace::intern_with_client`]); an empty user: none.
        Record { ip: String, user: String },
        /// A record's key alone ([`KeySpace::intern`]).
        Key { ip: String, user: String },
        /// A client alone ([`KeySpace::intern_client`]).
        Client(String),
        /// Synthetic clients staged, then interned as a batch ([`KeySpace::intern_staged`]).
        Batch(Vec<(String, String)>),
    }

    fn field() -> impl Strategy<Value = String> {
        // Short (inline in a slot) or long (not), sharing values.
        prop_oneof![
            "[ab]{0,2}",
            "[ab]{0,2}".prop_map(|s| format!("{s}-a-long-long-name"))
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        let batch = prop::collection::vec((field(), field()), 0..6);
        (0..5u8, field(), field(), batch).prop_map(|(kind, ip, user, batch)| match kind {
            0 => Op::Synthetic { ip, user },
            1 => Op::Record { ip, user },
            2 => Op::Key { ip, user },
            3 => Op::Client(user),
            _ => Op::Batch(batch),
        })
    }

    /// A contender's keyspace (all four fields, paths told apart) keeps a replayed record's
    /// header as its identity's path: the same fields behind another header are another
    /// identity, the same header the same one; a key of fields alone never reads it.
    #[test]
    fn a_replayed_header_is_the_path_of_a_contenders_identity() {
        let all = KeySpec::new(KeyField::ALL.to_vec()).unwrap();
        let mut keys = KeySpace::with_layout(KeyLayout {
            keeps: Keeps::FieldsAndPaths,
            lookups: Lookups::DuringRun,
        });
        let value_of = |f| if f == KeyField::Ip { "10.0.0.1" } else { "" };
        let (a, _) = keys.intern_with_client(&all, value_of, "203.0.113.1");
        let (b, _) = keys.intern_with_client(&all, value_of, "203.0.113.2, 10.0.0.9");
        let (c, _) = keys.intern_with_client(&all, value_of, "");
        assert_eq!(keys.intern_with_client(&all, value_of, "203.0.113.1").0, a);
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(keys.name(b), "10.0.0.1||||@10.0.0.1,203.0.113.2,10.0.0.9");
        let xff = |id| keys.wire(id).map(|w| w.seen(None).xff.to_vec());
        assert_eq!(xff(a), Some(vec!["203.0.113.1".parse::<IpAddr>().unwrap()]));
        assert_eq!(xff(c), None);
        let mut plain = KeySpace::new();
        let ip = KeySpec::new(vec![KeyField::Ip]).unwrap();
        assert_eq!(plain.intern_with_client(&ip, value_of, "203.0.113.1").0, 0);
        assert_eq!(plain.intern_with_client(&ip, value_of, "203.0.113.2").0, 0);
    }

    /// First-appearance numbering of texts: the reference the keyspace must agree with.
    #[derive(Default)]
    struct Numbering(std::collections::HashMap<String, u32>, Vec<String>);

    impl Numbering {
        fn id(&mut self, text: &str) -> u32 {
            if let Some(&id) = self.0.get(text) {
                return id;
            }
            self.1.push(text.to_string());
            *self
                .0
                .entry(text.to_string())
                .or_insert(self.1.len() as u32 - 1)
        }
    }

    proptest! {
        /// Keys and clients are numbered in order of first appearance whichever call made
        /// them, and named by their text: what a plain map from text to id gives.
        #[test]
        fn numbers_keys_and_clients_like_a_map_of_texts(
            fields in prop::sample::select(vec![
                vec![KeyField::User],
                vec![KeyField::Ip],
                vec![KeyField::Ip, KeyField::User],
            ]),
            ops in prop::collection::vec(op(), 0..120),
            reserve in 0usize..40,
        ) {
            let spec = KeySpec::new(fields.clone()).expect("fields");
            let text = |ip: &str, user: &str| {
                let values: Vec<&str> = fields
                    .iter()
                    .map(|f| if *f == KeyField::Ip { ip } else { user })
                    .collect();
                values.join("|")
            };
            let mut keys = KeySpace::new();
            keys.reserve(reserve, reserve, reserve / 2);
            let (mut want_keys, mut want_clients) = (Numbering::default(), Numbering::default());
            for op in &ops {
                match op {
                    Op::Synthetic { ip, user } => {
                        let identity = Identity {
                            ip: ip.clone(),
                            user: user.clone(),
                            ..Identity::default()
                        };
                        let got = keys.intern_identity_client(&spec, &identity);
                        let key = want_keys.id(&text(ip, user));
                        let client = identity.client();
                        prop_assert_eq!((got.key, got.id), (key, want_clients.id(client)));
                    }
                    Op::Record { ip, user } => {
                        let value_of = |f| match f {
                            KeyField::Ip => ip.as_str(),
                            KeyField::User => user.as_str(),
                            _ => "",
                        };
                        let got = keys.intern_with_client(&spec, value_of, "");
                        let key_text = text(ip, user);
                        let client = if user.is_empty() { &key_text } else { user };
                        let want = (want_keys.id(&key_text), want_clients.id(client));
                        prop_assert_eq!(got, want);
                    }
                    Op::Key { ip, user } => {
                        let value_of = |f| match f {
                            KeyField::Ip => ip.as_str(),
                            KeyField::User => user.as_str(),
                            _ => "",
                        };
                        let got = keys.intern(&spec, value_of);
                        prop_assert_eq!(got, want_keys.id(&text(ip, user)));
                    }
                    Op::Client(user) => {
                        prop_assert_eq!(keys.intern_client(user), want_clients.id(user));
                    }
                    Op::Batch(batch) => {
                        let mut staged = Staged::default();
                        for (ip, user) in batch {
                            let identity = Identity {
                                ip: ip.clone(),
                                user: user.clone(),
                                ..Identity::default()
                            };
                            keys.stage(&spec, &identity, &mut staged);
                        }
                        let mut got = Clients::default();
                        keys.intern_staged(&mut staged, &mut got);
                        prop_assert_eq!(staged.len(), 0);
                        prop_assert_eq!(got.len(), batch.len());
                        for ((ip, user), got) in batch.iter().zip(got.iter()) {
                            let key = want_keys.id(&text(ip, user));
                            // The real client: the user, else (anonymous) the address.
                            let client = if user.is_empty() { ip } else { user };
                            prop_assert_eq!((got.key, got.id), (key, want_clients.id(client)));
                        }
                    }
                }
            }
            prop_assert_eq!((keys.len(), keys.clients()), (want_keys.1.len(), want_clients.1.len()));
            for (id, name) in want_keys.1.iter().enumerate() {
                prop_assert_eq!(keys.name(id as KeyId), name.as_str());
            }
            for (id, name) in want_clients.1.iter().enumerate() {
                prop_assert_eq!(keys.client_name(id as ClientId), name.as_str());
            }
        }
    }
}
