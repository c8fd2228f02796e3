//! JSON Lines traces: `{"time": ..., "ip": ..., "user": ..., "api_key": ..., "endpoint": ...}`,
//! plus `source` and `role` as `rlsim traffic` would write them, and production's `status` (a
//! number) and `decision` (as in CSV), `method` and `x_forwarded_for`; any other key is ignored. `time` is like
//! CSV's (a number of nanoseconds or a timestamp string).

use super::common::{json_error, json_field};
use super::format::{Detect, Format};
use super::input::{LineFormat, Lines};
use super::{
    Outcome, Production, Record, RecordReader, TOKEN_FIELDS, field_index, parse_actual_cost,
    parse_cost, parse_method, parse_role, parse_status, parse_time,
};
use crate::error::Result;
use crate::policy::KeyField;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "jsonl",
    aliases: &["ndjson"],
    title: "this JSON Lines trace",
    fields: &KeyField::ALL,
    seconds_only: false,
    extensions: &["jsonl", "ndjson"],
    // The last JSON format tried: any object with a `time` no native log claims.
    detect: Detect {
        rank: 80,
        shows: |head| head.has_any(&["time"]),
    },
    open: |path, input, _, _| Ok(Box::new(reader(path, input))),
};

pub struct Jsonl;

/// The keys a record is read from, to name the one a line gets wrong.
const FIELDS: [&str; 18] = [
    "time",
    "ip",
    "user",
    "api_key",
    "endpoint",
    "source",
    "role",
    "status",
    "decision",
    "method",
    "x_forwarded_for",
    "cost",
    "actual_cost",
    "input_tokens",
    "cached_tokens",
    "max_tokens",
    "output_tokens",
    "stream",
];

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Jsonl> {
    Lines::new(path, input, Jsonl)
}

impl LineFormat for Jsonl {
    fn parse(
        &mut self,
        line: &str,
        rec: &mut Record,
    ) -> std::result::Result<(), (Option<&'static str>, String)> {
        // Borrowed, typed fields: no per-line tree of values (most of the cost of a large file).
        let r: JsonRecord<'_> = serde_json::from_str(line).map_err(|e| {
            let field = json_field::<JsonRecord<'_>>(line, &FIELDS);
            (field, format!("not a trace record: {}", json_error(&e)))
        })?;
        rec.epoch_ns = match r.time {
            Some(JsonTime::Nanos(n)) => n,
            Some(JsonTime::Text(s)) => parse_time(&s).map_err(|m| (Some("time"), m))?,
            None => return Err((Some("time"), "the record has no `time`".into())),
        };
        if let Some(role) = r.role {
            rec.role = parse_role(&role).map_err(|m| (Some("role"), m))?;
        }
        rec.status = match r.status {
            None => Ok(None),
            Some(JsonStatus::Code(code)) => parse_status(&code.to_string()),
            Some(JsonStatus::Text(text)) => parse_status(&text),
        }
        .map_err(|m| (Some("status"), m))?;
        if let Some(decision) = r.decision {
            rec.production = Production::parse(&decision).map_err(|m| (Some("decision"), m))?;
        }
        if let Some(source) = r.source {
            rec.source.push_str(&source);
        }
        rec.method = r.method.as_deref().and_then(parse_method);
        if let Some(cost) = r.cost {
            rec.cost = parse_cost(&cost.to_string()).map_err(|m| (Some("cost"), m))?;
        }
        if let Some(actual) = r.actual_cost {
            rec.actual_cost =
                parse_actual_cost(&actual.to_string()).map_err(|m| (Some("actual_cost"), m))?;
        }
        if let Some(xff) = r.x_forwarded_for {
            rec.forwarded_for.push_str(&xff);
        }
        let counts = [
            r.input_tokens,
            r.cached_tokens,
            r.max_tokens,
            r.output_tokens,
        ];
        for (name, n) in TOKEN_FIELDS.iter().zip(counts) {
            if let Some(n) = n {
                rec.set_llm(name, &n.to_string())
                    .map_err(|m| (Some(*name), m))?;
            }
        }
        if let Some(stream) = r.stream {
            rec.set_llm("stream", &stream)
                .map_err(|m| (Some("stream"), m))?;
        }
        for (field, value) in [
            (KeyField::Ip, r.ip),
            (KeyField::User, r.user),
            (KeyField::ApiKey, r.api_key),
            (KeyField::Endpoint, r.endpoint),
        ] {
            if let Some(v) = value {
                rec.fields[field_index(field)].push_str(&v);
            }
        }
        Ok(())
    }
}

impl RecordReader for Lines<Jsonl> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }

    fn has_parts(&self) -> bool {
        true
    }
}

#[derive(serde::Deserialize)]
struct JsonRecord<'a> {
    #[serde(borrow)]
    time: Option<JsonTime<'a>>,
    #[serde(borrow)]
    ip: Option<Cow<'a, str>>,
    #[serde(borrow)]
    user: Option<Cow<'a, str>>,
    #[serde(borrow)]
    api_key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    endpoint: Option<Cow<'a, str>>,
    #[serde(borrow)]
    source: Option<Cow<'a, str>>,
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<JsonStatus<'a>>,
    #[serde(borrow)]
    decision: Option<Cow<'a, str>>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    x_forwarded_for: Option<Cow<'a, str>>,
    cost: Option<serde_json::Number>,
    actual_cost: Option<serde_json::Number>,
    input_tokens: Option<serde_json::Number>,
    cached_tokens: Option<serde_json::Number>,
    max_tokens: Option<serde_json::Number>,
    output_tokens: Option<serde_json::Number>,
    #[serde(borrow)]
    stream: Option<Cow<'a, str>>,
}

/// `status`: a number, or a string (as some loggers quote every field).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum JsonStatus<'a> {
    Code(u64),
    #[serde(borrow)]
    Text(Cow<'a, str>),
}

/// `time`: integer nanoseconds or a timestamp string.
enum JsonTime<'a> {
    Nanos(u64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for JsonTime<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = JsonTime<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("integer nanoseconds or an RFC 3339 timestamp")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Nanos(v))
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(
                self,
                v: &str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(JsonTime::Text(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}
