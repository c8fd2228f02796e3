//! The policy under test: at most `limit` requests per `window`, per key.

pub mod identity;

use crate::time::Nanos;
use identity::{IdentityFn, Rule, Who};
use std::fmt;

/// A request attribute a policy can key on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KeyField {
    /// The client's address (`ip`); under an identity function, what it makes of the request.
    Ip,
    /// The client's user identity (`user`).
    User,
    /// The client's API key (`api_key`).
    ApiKey,
    /// The request's endpoint, its path (`endpoint`).
    Endpoint,
}

impl KeyField {
    /// Every field, in key order (the order key texts join them in).
    pub const ALL: [KeyField; 4] = [
        KeyField::Ip,
        KeyField::User,
        KeyField::ApiKey,
        KeyField::Endpoint,
    ];

    /// The field's name in scenarios and outputs: `ip`, `user`, `api_key` or `endpoint`.
    pub fn name(self) -> &'static str {
        match self {
            KeyField::Ip => "ip",
            KeyField::User => "user",
            KeyField::ApiKey => "api_key",
            KeyField::Endpoint => "endpoint",
        }
    }

    /// The field named `name` ([`KeyField::name`]); `None` for any other text.
    pub fn parse(name: &str) -> Option<KeyField> {
        KeyField::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for KeyField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name of the one key of a [`KeySpec::global`] rule.
pub const GLOBAL_KEY: &str = "(every request)";

/// The fields a policy keys on, in canonical order (ip, user, api_key, endpoint), no repeats;
/// or an identity function (`key = { identity = "xff", trusted_hops = 1 }`), which takes the
/// place of the `ip` field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeySpec {
    fields: Vec<KeyField>,
    identity: Option<IdentityFn>,
}

impl KeySpec {
    /// Builds a key spec; `None` if `fields` is empty. Duplicates are ignored.
    pub fn new(mut fields: Vec<KeyField>) -> Option<KeySpec> {
        fields.sort();
        fields.dedup();
        (!fields.is_empty()).then_some(KeySpec {
            fields,
            identity: None,
        })
    }

    /// One key for every request (a contender rule's `key = []`: a global limit, nginx's
    /// `limit_req_zone $server_name`, Envoy's `generic_key`), named [`GLOBAL_KEY`].
    pub fn global() -> KeySpec {
        KeySpec {
            fields: Vec::new(),
            identity: None,
        }
    }

    /// Whether every request has the one key ([`KeySpec::global`]).
    pub fn is_global(&self) -> bool {
        self.fields.is_empty() && self.identity.is_none()
    }

    /// Keys on what `identity` makes of each request.
    pub fn identity(identity: IdentityFn) -> KeySpec {
        KeySpec {
            fields: vec![KeyField::Ip],
            identity: Some(identity),
        }
    }

    /// Keys on what `identity` makes of each request and on `extra` fields besides (an
    /// identity table's `fields = ["endpoint"]`); `extra` never holds `ip`.
    pub fn identity_with(identity: IdentityFn, extra: Vec<KeyField>) -> KeySpec {
        let mut spec = KeySpec::new([vec![KeyField::Ip], extra].concat()).expect("has ip");
        spec.identity = Some(identity);
        spec
    }

    /// The key in words, fields joined by `sep` (`ip+endpoint`), or the identity function
    /// (`xff(trusted_hops=1)`), followed by any other fields (`headers+endpoint`).
    pub fn describe(&self, sep: &str) -> String {
        match &self.identity {
            Some(identity) => {
                let mut text = identity.to_string();
                for f in self.fields.iter().filter(|&&f| f != KeyField::Ip) {
                    text.push_str(sep);
                    text.push_str(f.name());
                }
                text
            }
            None if self.is_global() => "global".into(),
            None => {
                let names: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
                names.join(sep)
            }
        }
    }

    /// The identity function, if the key is one.
    pub fn identity_fn(&self) -> Option<&IdentityFn> {
        self.identity.as_ref()
    }

    /// The fields keyed on, sorted and without duplicates: `ip` stands for the identity function
    /// when there is one; empty for the global key.
    pub fn fields(&self) -> &[KeyField] {
        &self.fields
    }

    /// Whether the key reads `field` (`user_else` reads the user besides the address).
    pub fn uses(&self, field: KeyField) -> bool {
        self.fields.contains(&field)
            || (field == KeyField::User
                && matches!(
                    self.identity,
                    Some(IdentityFn {
                        rule: Rule::UserElse(_),
                        ..
                    })
                ))
    }

    /// Writes one field's value: the identity `who` in place of the `ip` field when the key is
    /// an identity function, else the field's own value.
    pub fn write_field(field: KeyField, who: Option<Who>, value: &str, out: &mut String) {
        use std::fmt::Write;
        match (field, who) {
            (KeyField::Ip, Some(who)) => {
                write!(out, "{who}").expect("writing to a String cannot fail")
            }
            _ => out.push_str(value),
        }
    }

    /// Writes the key a request maps to into `out`: the value itself for a one-field key, the
    /// values joined by `|` otherwise (`203.0.113.7|/login`). `write` appends one field's value.
    pub fn render_with(&self, out: &mut String, write: impl FnMut(KeyField, &mut String)) {
        out.clear();
        self.render_onto(out, write);
    }

    /// [`KeySpec::render_with`], appending to what `out` holds.
    pub fn render_onto(&self, out: &mut String, mut write: impl FnMut(KeyField, &mut String)) {
        if self.is_global() {
            out.push_str(GLOBAL_KEY);
        }
        for (i, &field) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            write(field, out);
        }
    }
}

/// The schema of [`KeySpec`]'s three serialized shapes (docs/schema/).
impl schemars::JsonSchema for KeySpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KeySpec".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let fields = generator.subschema_for::<Vec<KeyField>>();
        // An identity function: its name and its parameters, as the scenario writes them.
        let identity = schemars::json_schema!({
            "type": "object",
            "required": ["identity"],
            "properties": { "identity": { "type": "string" } },
            "not": { "required": ["fields"] }
        });
        schemars::json_schema!({
            "description": "The key fields; or an identity function in place of `ip`; or both.",
            "oneOf": [
                fields,
                identity,
                {
                    "type": "object",
                    "required": ["identity", "fields"],
                    "properties": { "identity": identity, "fields": fields },
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl serde::Serialize for KeySpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.identity {
            None => self.fields.serialize(s),
            Some(identity) if self.fields.len() == 1 => identity.serialize(s),
            // An identity with other fields: `{ "identity": {...}, "fields": [...] }`.
            Some(identity) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("identity", identity)?;
                let rest: Vec<KeyField> = self.fields[1..].to_vec();
                m.serialize_entry("fields", &rest)?;
                m.end()
            }
        }
    }
}

/// The policy's intent, against which every algorithm is measured.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Policy {
    /// At most this many requests per key ...
    pub limit: u64,
    /// ... in any window of this many nanoseconds.
    #[serde(rename = "window_ns")]
    pub window: Nanos,
    /// Requests allowed back to back by the algorithms that have a burst allowance.
    pub burst: u64,
    /// What requests are keyed on: fields, an identity function, or one global key.
    pub key: KeySpec,
}

/// Whether `endpoint` matches the route pattern `pattern`: an exact path, or a prefix ending
/// in `*` (`/auth/*`). A contender rule's `routes` and the intent's `per_route` match alike.
pub fn route_matches(pattern: &str, endpoint: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => endpoint.starts_with(prefix),
        None => pattern == endpoint,
    }
}
