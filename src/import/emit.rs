//! What an import emits, typed: a contender's table and its rules' tables as the scenario
//! reads them (docs/scenario-format.md, `scenario::raw`), and the one writer that prints them
//! as TOML, each value written by the `toml` crate's own serializer.
//!
//! A table's fixed fields come first in their struct's order; the fields after them (a rule's
//! `routes`, `skip`, `profile`..., a contender's `refuse_status`, `bypass`...) follow in the
//! order each kind states them, which differs between kinds and is kept so that an import's
//! text does not change. Inline tables (`key`, `profile`, `bypass`) list their fields in
//! alphabetical order, as a `toml::Table` writes them.

use serde::Serialize;
use serde::ser::{self, Impossible};

/// How a contender combines its rules' decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Commit {
    AllOrNothing,
    InOrder,
    EveryRule,
}

/// A `[[contender]]` table after its name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContenderTable {
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<Commit>,
}

/// A contender's field after `commit`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContenderField {
    RefuseStatus(u16),
    DryRun(bool),
    Bypass(Bypass),
}

/// Clients no rule limits (the scenario's bypass also takes `routes`, which no kind imports).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Bypass {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub api_keys: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cidrs: Vec<String>,
}

/// A `[[contender.rule]]` table's fixed fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleTable {
    pub name: String,
    pub algorithm: &'static str,
    pub limit: u64,
    /// Written by [`crate::time::duration_text`].
    pub window: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<u64>,
    pub key: Key,
}

/// A rule's field after `key`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleField {
    Routes(Vec<String>),
    Skip(Vec<String>),
    Methods(Vec<String>),
    HasApiKey(bool),
    DryRun(bool),
    RefuseStatus(u16),
    Profile(Profile),
    /// A `calendar_window` rule's zone (`UTC`, an IANA name, an offset).
    TimeZone(String),
    /// A `calendar_window` week's first day (`monday` ... `sunday`).
    WeekStarts(&'static str),
    /// A `calendar_window` month's first day (1 to 31).
    MonthStarts(u8),
    /// A `calendar_window` counter's lifetime from its first admission (`30d`).
    CounterTtl(String),
}

/// A rule's key: request fields (`["api_key"]`, `[]` for one state shared by all), or a
/// client address with the fields beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Key {
    Fields(Vec<&'static str>),
    Identity(Identity),
}

/// Which address stands for the client, as `[policy] key`'s table takes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identity {
    /// For `user_else`: the identity of a request with no user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Box<Identity>>,
    /// Request fields keyed beside the address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    pub identity: Who,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6_prefix: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recursive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_hops: Option<u64>,
}

impl Identity {
    /// `who`, with every other field unset.
    pub fn new(who: Who) -> Identity {
        Identity {
            fallback: None,
            fields: None,
            header: None,
            identity: who,
            ipv6_prefix: None,
            recursive: None,
            trusted: None,
            trusted_hops: None,
        }
    }
}

/// The identity functions an import keys by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    Peer,
    Xff,
    FirstXff,
    CdnHeader,
    UserElse,
}

/// An algorithm's own parameters (`profile = { ... }`), as its library names them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Profile {
    NginxLimitReq {
        burst: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        nodelay: Option<bool>,
        rate: String,
    },
    ExpressRateLimit {
        limit: u64,
        #[serde(rename = "windowMs")]
        window_ms: u64,
    },
    /// The nestjs-throttler profile (Cloudflare's `mitigation_timeout` too).
    NestjsThrottler {
        #[serde(rename = "blockDuration")]
        block_duration: u64,
    },
    GoXTimeRate {
        average: u64,
        burst: u64,
        max_delay: String,
        period: String,
    },
    HaproxyHttpReqRate {
        expire: String,
        operator: &'static str,
        period: String,
        threshold: u64,
    },
    EnvoyLocal {
        fill_interval: String,
        max_tokens: u64,
        tokens_per_fill: u64,
    },
    EnvoyRatelimit {
        requests_per_unit: u64,
        unit: &'static str,
    },
}

/// Writes `head`'s fields and then `fields`, one `name = value` line each.
pub(super) fn table<F: Serialize>(
    out: &mut String,
    head: &impl Serialize,
    fields: &[F],
) -> Result<(), toml::ser::Error> {
    head.serialize(Lines(out))?;
    for f in fields {
        f.serialize(Lines(out))?;
    }
    Ok(())
}

/// A serializer of table lines: a struct's fields, or one field as an enum's newtype variant
/// (`RuleField::Routes(...)` is `routes = [...]`); each value as `toml` writes it inline.
struct Lines<'a>(&'a mut String);

impl Lines<'_> {
    fn line<T: Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &T,
    ) -> Result<(), toml::ser::Error> {
        self.0.push_str(name);
        self.0.push_str(" = ");
        value.serialize(toml::ser::ValueSerializer::new(self.0))?;
        self.0.push('\n');
        Ok(())
    }
}

impl ser::SerializeStruct for Lines<'_> {
    type Ok = ();
    type Error = toml::ser::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Self::Error> {
        self.line(name, value)
    }

    fn end(self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What [`Lines`] says of a value that is neither a table nor one of its fields: a bug in the
/// types above, never in the user's configuration.
fn not_lines() -> toml::ser::Error {
    ser::Error::custom("only a struct or a field is written as a table's lines")
}

/// The serializer methods a table's lines have no use for.
macro_rules! not_lines {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Self::Error> {
            Err(not_lines())
        })*
    };
}

impl ser::Serializer for Lines<'_> {
    type Ok = ();
    type Error = toml::ser::Error;
    type SerializeSeq = Impossible<(), Self::Error>;
    type SerializeTuple = Impossible<(), Self::Error>;
    type SerializeTupleStruct = Impossible<(), Self::Error>;
    type SerializeTupleVariant = Impossible<(), Self::Error>;
    type SerializeMap = Impossible<(), Self::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Self::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Self::Error> {
        Ok(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Self::Error> {
        self.line(variant, value)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Self::Error> {
        Err(not_lines())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Self::Error> {
        Err(not_lines())
    }

    not_lines! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_order_values_inline() {
        let mut out = String::new();
        let head = RuleTable {
            name: "perip".into(),
            algorithm: "nginx-limit-req",
            limit: 10,
            window: "1s".into(),
            burst: None,
            key: Key::Identity(Identity {
                ipv6_prefix: Some(128),
                ..Identity::new(Who::Peer)
            }),
        };
        let fields = [
            RuleField::Routes(vec!["/api/*".into()]),
            RuleField::Profile(Profile::NginxLimitReq {
                burst: 5,
                delay: None,
                nodelay: Some(true),
                rate: "10r/s".into(),
            }),
        ];
        table(&mut out, &head, &fields).expect("writes");
        assert_eq!(
            out,
            "name = \"perip\"\nalgorithm = \"nginx-limit-req\"\nlimit = 10\nwindow = \"1s\"\nkey = { identity = \"peer\", ipv6_prefix = 128 }\nroutes = [\"/api/*\"]\nprofile = { burst = 5, nodelay = true, rate = \"10r/s\" }\n"
        );
    }

    #[test]
    fn a_table_is_what_a_toml_table_writes() {
        let mut out = String::new();
        let head = ContenderTable {
            description: "a \"quoted\" one".into(),
            commit: Some(Commit::AllOrNothing),
        };
        let bypass = Bypass {
            cidrs: vec!["10.0.0.0/8".into()],
            ..Bypass::default()
        };
        table(&mut out, &head, &[ContenderField::Bypass(bypass)]).expect("writes");
        let parsed: toml::Table = toml::from_str(&out).expect("parses");
        let mut again = String::new();
        for (k, v) in [
            ("description", &parsed["description"]),
            ("commit", &parsed["commit"]),
            ("bypass", &parsed["bypass"]),
        ] {
            again.push_str(&format!("{k} = {v}\n"));
        }
        assert_eq!(out, again);
    }
}
