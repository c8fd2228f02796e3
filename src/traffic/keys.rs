//! Interning of rate-limiting keys: each distinct key string becomes a dense [`KeyId`].

use super::key_name::{Name, NameTable};
use super::via::Wire;
use super::{ClientId, IdGen, SourceSpec};
use crate::algorithms::KeyId;
use crate::policy::identity::{Seen, Who};
use crate::policy::{KeyField, KeySpec};
use indexmap::IndexSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every key seen in a run, in order of first appearance.
///
/// Interning happens when a synthetic client is created or a trace record is read, never per
/// decision; the engine and the limiters only handle the integer ids.
#[derive(Debug, Default)]
pub struct KeySpace {
    names: NameTable,
    clients: IndexSet<Name, rustc_hash::FxBuildHasher>,
    scratch: String,
    /// With [`KeySpace::recording`]: the identity fields of each key, by key id.
    fields: Option<Vec<[Box<str>; 4]>>,
    /// With [`KeySpace::recording_paths`]: each key's network path ([`Wire`]), by key id.
    wires: Option<Vec<Option<Wire>>>,
}

impl KeySpace {
    pub fn new() -> Self {
        Self::default()
    }

    /// A keyspace that also keeps every key's identity fields (for `rlsim traffic`, which writes
    /// them out); use it with a key spec of all four fields, so a key is one identity.
    pub fn recording() -> Self {
        KeySpace {
            fields: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Like [`KeySpace::recording`], and an identity is also told apart by its network path
    /// (the rotated forged address left out), which is kept too ([`KeySpace::wire`]): what a
    /// contender's rules need to key on what the origin sees.
    pub fn recording_paths() -> Self {
        KeySpace {
            fields: Some(Vec::new()),
            wires: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Whether every key's identity fields are kept ([`KeySpace::recording`]).
    pub fn records_fields(&self) -> bool {
        self.fields.is_some()
    }

    /// Makes room for `keys` more keys and `clients` more clients: a synthetic source interns
    /// its whole population before the run, and tables grown by doubling would copy (and,
    /// under an allocator that keeps freed memory, hold) every smaller size on the way.
    pub fn reserve(&mut self, keys: usize, clients: usize) {
        self.names.reserve(keys);
        self.clients.reserve(clients);
    }

    /// The network path of key `id`, when recording paths and the key has one.
    pub fn wire(&self, id: KeyId) -> Option<&Wire> {
        self.wires.as_ref()?.get(id as usize)?.as_ref()
    }

    /// The identity fields (indexed like `KeyField::ALL`) of key `id`, when recording.
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
        self.intern_key_client(spec, who, value_of, wire, false).0
    }

    /// Interns the key; with `own_client`, also the client named like it, whose id is kept in
    /// the key's slot of the table: a replayed line without a user costs one lookup, not two.
    fn intern_key_client<'a>(
        &mut self,
        spec: &KeySpec,
        who: Option<Who>,
        value_of: impl Fn(KeyField) -> &'a str,
        wire: Option<&Wire>,
        own_client: bool,
    ) -> (KeyId, ClientId) {
        let mut buf = std::mem::take(&mut self.scratch);
        spec.render_with(&mut buf, |field, out| {
            KeySpec::write_field(field, who, value_of(field), out)
        });
        let wire = wire.filter(|_| self.wires.is_some());
        if let Some(w) = wire {
            buf.push('|');
            w.write_path(&mut buf);
        }
        let (id, new, client) = self.names.intern_with(&buf, || Name::new(&buf));
        if new {
            if let Some(fields) = &mut self.fields {
                fields.push(KeyField::ALL.map(|f| value_of(f).into()));
            }
            if let Some(wires) = &mut self.wires {
                wires.push(wire.cloned());
            }
        }
        if own_client && *client == ClientId::MAX {
            let i = match self.clients.get_index_of(buf.as_str()) {
                Some(i) => i,
                None => self.clients.insert_full(Name::new(&buf)).0,
            };
            *client = ClientId::try_from(i).expect("more than 4 billion distinct clients");
        }
        let client = *client;
        self.scratch = buf;
        let id = KeyId::try_from(id).expect("more than 4 billion distinct keys");
        (id, client)
    }

    /// The id of the client (user identity) `user`, adding it if new.
    pub fn intern_client(&mut self, user: &str) -> ClientId {
        let id = match self.clients.get_index_of(user) {
            Some(i) => i,
            None => self.clients.insert_full(Name::new(user)).0,
        };
        ClientId::try_from(id).expect("more than 4 billion distinct clients")
    }

    /// The key of a trace record (as [`KeySpace::intern`]) and its client: the record's user,
    /// or without one the client named like the key (traffic that carries no user identity).
    pub fn intern_with_client<'a>(
        &mut self,
        spec: &KeySpec,
        value_of: impl Fn(KeyField) -> &'a str,
    ) -> (KeyId, ClientId) {
        let user = value_of(KeyField::User);
        if !user.is_empty() {
            let key = self.intern(spec, &value_of);
            return (key, self.intern_client(user));
        }
        let who = spec.identity_fn().and_then(|f| {
            let ip: IpAddr = value_of(KeyField::Ip).parse().ok()?;
            Some(f.apply(&Seen::direct(ip, None)))
        });
        self.intern_key_client(spec, who, value_of, None, true)
    }

    /// The name of client `id` (its user identity, or its key's text when it has none).
    pub fn client_name(&self, id: ClientId) -> &str {
        self.clients[id as usize].as_str()
    }

    /// Distinct clients seen.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// The id of a synthetic client's key.
    pub fn intern_identity(&mut self, spec: &KeySpec, identity: &Identity) -> KeyId {
        let Some(f) = spec.identity_fn() else {
            return self.intern_path(spec, None, |f| identity.get(f), identity.wire.as_ref());
        };
        let user = identity.signed_in_user();
        let who = match &identity.wire {
            Some(wire) => Some(f.apply(&wire.seen(user))),
            None => identity
                .ip
                .parse()
                .ok()
                .map(|ip| f.apply(&Seen::direct(ip, user))),
        };
        self.intern_path(spec, who, |f| identity.get(f), identity.wire.as_ref())
    }

    /// The key's text, as the policy keyed on it.
    pub fn name(&self, id: KeyId) -> &str {
        self.names.get(id as usize).as_str()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The identity fields of one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub ip: String,
    pub user: String,
    pub api_key: String,
    pub endpoint: String,
    /// The server knows the user (`signed_in = true`).
    pub signed_in: bool,
    /// What the origin sees of the client's requests; `None` for a plain direct connection
    /// (nothing forged) or when `ip` is not an address.
    pub wire: Option<Wire>,
}

impl Identity {
    pub fn get(&self, field: KeyField) -> &str {
        match field {
            KeyField::Ip => &self.ip,
            KeyField::User => &self.user,
            KeyField::ApiKey => &self.api_key,
            KeyField::Endpoint => &self.endpoint,
        }
    }

    /// The user, if the server knows it.
    pub fn signed_in_user(&self) -> Option<&str> {
        self.signed_in.then_some(self.user.as_str())
    }

    /// The identity of client `client` of source number `source`; a forged address that
    /// changes per request starts at `first_forged`. Fields for which `wanted` is false are
    /// left empty: a million clients keyed by user need not format a million addresses.
    /// The user is always made (it names the client), and so is the address when the client
    /// goes through a network path.
    ///
    /// Generated users are `<source name>-<n>`, API keys `key-<user>`, and IPv4 addresses come
    /// from `10.<source>.0.0/16`, so sources never share a generated identity by accident.
    pub fn of_client(
        spec: &SourceSpec,
        source: usize,
        client: u32,
        first_forged: IpAddr,
        wanted: impl Fn(KeyField) -> bool,
    ) -> Identity {
        let pop = &spec.population;
        let pick = |field: KeyField, gen_: &IdGen, make: &dyn Fn(u32) -> String| {
            let needed = field == KeyField::User
                || wanted(field)
                || (field == KeyField::Ip && !pop.network.is_plain());
            if !needed {
                return String::new();
            }
            match gen_ {
                IdGen::Fixed(v) => v.clone(),
                IdGen::Pool(n) => make(client % n),
                IdGen::PerClient => make(client),
            }
        };
        let user = pick(KeyField::User, &pop.user, &|n| format!("{}-{n}", spec.name));
        let api_key = pick(KeyField::ApiKey, &pop.api_key, &|n| {
            format!("key-{}-{n}", spec.name)
        });
        let ip = pick(KeyField::Ip, &pop.ip, &|n| {
            if pop.ipv6 {
                generated_ipv6(source, n).to_string()
            } else {
                generated_ip(source, n).to_string()
            }
        });
        // A plain connection needs no wire: the address says it all.
        let wire = if pop.network.is_plain() {
            None
        } else {
            ip.parse()
                .ok()
                .map(|addr| Wire::new(addr, client, &pop.network, first_forged))
        };
        Identity {
            ip,
            user,
            api_key,
            endpoint: pop.endpoint.clone(),
            signed_in: pop.network.signed_in,
            wire,
        }
    }
}

/// Address `n` of source `source` in the documentation prefix `2001:db8::/32`: one /48 per
/// source, so sources never share an address and a million clients fit easily.
fn generated_ipv6(source: usize, n: u32) -> Ipv6Addr {
    let host = n + 1;
    Ipv6Addr::new(
        0x2001,
        0xdb8,
        (source % 65_536) as u16,
        0,
        0,
        0,
        (host >> 16) as u16,
        (host & 0xffff) as u16,
    )
}

/// Most distinct IPv4 addresses a source can generate (one /16).
pub const MAX_GENERATED_IPS: u32 = 65_534;

/// Sources that can generate IPv4 addresses: one /16 each in 10.0.0.0/8. Validation refuses
/// generated IPv4 addresses for later sources, which would collide.
pub const GENERATED_IPV4_SOURCES: usize = 256;

fn generated_ip(source: usize, n: u32) -> Ipv4Addr {
    let host = n + 1; // skip the network address
    Ipv4Addr::new(
        10,
        u8::try_from(source).expect("validated: generated IPv4 only for the first 256 sources"),
        (host >> 8) as u8,
        (host & 0xff) as u8,
    )
}
