//! Validation of client identity: a key's identity function (`key = { identity = "..." }`) and a
//! source's path to the origin and forged headers (`via`, `forge_*`, `signed_in`).

use super::ctx::Ctx;
use crate::error::Result;
use crate::policy::identity::{CLOUDFLARE_V4, Header, IdentityFn, IdentityKind, Rule};
use crate::policy::{KeyField, KeySpec};
use crate::scenario::raw::{RawKey, RawTraffic, S};
use crate::suggest;
use crate::traffic::TrafficKind;
use crate::traffic::via::{Hop, Network, Rotation};
use ipnet::IpNet;
use std::net::IpAddr;
use std::ops::Range;
use strum::VariantArray;

/// Every field an identity table can have, for did-you-mean hints.
const IDENTITY_FIELDS: [&str; 8] = [
    "identity",
    "fields",
    "ipv6_prefix",
    "trusted_hops",
    "trusted",
    "recursive",
    "header",
    "fallback",
];

impl Ctx<'_> {
    /// A key as `[policy] key` (and a contender rule's `key`) spells it: a field name, a list
    /// of them, or an identity table. `field` names it in errors (`policy.key`).
    pub(super) fn key_spec(&self, k: &S<RawKey>, field: &str) -> Result<KeySpec> {
        let names = match k.get_ref() {
            RawKey::One(name) => std::slice::from_ref(name),
            RawKey::Many(names) => names.as_slice(),
            RawKey::Table(table) => {
                let identity = self.identity_fn(table, k.span(), field)?;
                let extra = self.extra_fields(table, k.span(), field)?;
                return Ok(KeySpec::identity_with(identity, extra));
            }
        };
        let mut fields = Vec::new();
        for name in names {
            fields.push(KeyField::parse(name).ok_or_else(|| {
                self.err(
                    k.span(),
                    field,
                    format!(
                        "unknown key field `{name}` (expected ip, user, api_key or endpoint, or a table `{{ identity = \"...\" }}`)"
                    ),
                )
            })?);
        }
        match KeySpec::new(fields) {
            Some(spec) => Ok(spec),
            // A rule may limit every request together; the policy and the intent judge clients.
            None if field.starts_with("contender") => Ok(KeySpec::global()),
            None => Err(self.err(
                k.span(),
                field,
                "must name at least one field (only a contender rule may be `key = []`, one key for every request)",
            )),
        }
    }

    /// An identity table's `fields`: key fields besides the identity (`["endpoint"]`: a
    /// budget per client and route, as NestJS keys its throttlers per handler).
    fn extra_fields(
        &self,
        table: &toml::Table,
        span: Range<usize>,
        field: &str,
    ) -> Result<Vec<KeyField>> {
        let Some(v) = table.get("fields") else {
            return Ok(Vec::new());
        };
        let err = |m: String| self.err(span.clone(), &format!("{field}.fields"), m);
        let toml::Value::Array(list) = v else {
            return Err(err(
                "must be a list of key fields (user, api_key, endpoint)".into(),
            ));
        };
        let mut out = Vec::new();
        for item in list {
            let name = item.as_str().unwrap_or_default();
            match KeyField::parse(name) {
                Some(KeyField::Ip) => {
                    return Err(err(
                        "`ip` is what the identity function gives: list user, api_key or endpoint"
                            .into(),
                    ));
                }
                Some(f) => out.push(f),
                None => {
                    return Err(err(format!(
                        "unknown key field `{name}` (expected user, api_key or endpoint)"
                    )));
                }
            }
        }
        Ok(out)
    }

    fn identity_fn(
        &self,
        table: &toml::Table,
        span: Range<usize>,
        field: &str,
    ) -> Result<IdentityFn> {
        let err = |sub: &str, msg: String| self.err(span.clone(), &format!("{field}.{sub}"), msg);
        let known = IdentityKind::VARIANTS
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ");
        let name = match table.get("identity") {
            Some(toml::Value::String(s)) => s.as_str(),
            Some(_) => return Err(err("identity", format!("must be a string, one of {known}"))),
            None => return Err(err("identity", format!("required (one of {known})"))),
        };
        let kind = IdentityKind::parse(name).map_err(|m| err("identity", m))?;
        for key in table.keys() {
            if key == "identity" || key == "fields" || kind.fields().contains(&key.as_str()) {
                continue;
            }
            let msg = if IDENTITY_FIELDS.contains(&key.as_str()) {
                let hint = if key == "trusted_hops" {
                    " (only `xff` counts X-Forwarded-For hops)"
                } else {
                    ""
                };
                format!("not used by identity `{name}`{hint}")
            } else {
                suggest::unknown("identity field", key, IDENTITY_FIELDS)
            };
            return Err(err(key, msg));
        }
        let ipv6_prefix = match table.get("ipv6_prefix") {
            None => crate::policy::identity::DEFAULT_IPV6_PREFIX,
            Some(toml::Value::Integer(n)) if (1..=128).contains(n) => *n as u8,
            Some(v) => {
                return Err(err(
                    "ipv6_prefix",
                    format!("must be a prefix length from 1 to 128, got {v}"),
                ));
            }
        };
        let rule = self.identity_rule(table, kind, span.clone(), field)?;
        Ok(IdentityFn { rule, ipv6_prefix })
    }

    /// The rule of an identity table of kind `kind`, with its own parameters.
    fn identity_rule(
        &self,
        table: &toml::Table,
        kind: IdentityKind,
        span: Range<usize>,
        field: &str,
    ) -> Result<Rule> {
        let err = |sub: &str, msg: String| self.err(span.clone(), &format!("{field}.{sub}"), msg);
        Ok(match kind {
            IdentityKind::Ip => Rule::Ip,
            IdentityKind::Peer => Rule::Peer,
            IdentityKind::FirstXff => Rule::FirstXff,
            IdentityKind::Headers => Rule::Headers,
            IdentityKind::Xff
                if table.contains_key("recursive") && !table.contains_key("trusted") =>
            {
                return Err(err(
                    "recursive",
                    "`recursive` goes with `trusted` (nginx real_ip_recursive over set_real_ip_from)".into(),
                ));
            }
            IdentityKind::Xff => match (
                table.get("trusted_hops"),
                self.trusted(table, "trusted", span.clone(), field)?,
            ) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        "trusted",
                        "give `trusted_hops` or `trusted`, not both".into(),
                    ));
                }
                (Some(toml::Value::Integer(n)), None) if (0..=64).contains(n) => {
                    Rule::XffHops(*n as u32)
                }
                (Some(v), None) => {
                    return Err(err(
                        "trusted_hops",
                        format!("must be a number of proxies from 0 to 64, got {v}"),
                    ));
                }
                (None, Some(nets)) => match table.get("recursive") {
                    None | Some(toml::Value::Boolean(true)) => Rule::XffTrusted(nets),
                    Some(toml::Value::Boolean(false)) => Rule::XffLast(nets),
                    Some(_) => return Err(err("recursive", "must be true or false".into())),
                },
                (None, None) => {
                    return Err(err(
                        "trusted_hops",
                        "identity `xff` needs `trusted_hops` (how many proxies to skip) or `trusted` (their CIDRs)".into(),
                    ));
                }
            },
            IdentityKind::CdnHeader => {
                let header = match table.get("header") {
                    None => Header::CfConnectingIp,
                    Some(toml::Value::String(s)) => {
                        Header::parse(s).map_err(|m| err("header", m))?
                    }
                    Some(_) => return Err(err("header", "must be a header name".into())),
                };
                let trusted = match self.trusted(table, "trusted", span.clone(), field)? {
                    Some(nets) => nets,
                    None => CLOUDFLARE_V4
                        .iter()
                        .map(|c| c.parse().expect("valid"))
                        .collect(),
                };
                Rule::CdnHeader { header, trusted }
            }
            IdentityKind::UserElse => {
                let sub = format!("{field}.fallback");
                let fallback = match table.get("fallback") {
                    None => IdentityFn::new(Rule::Ip),
                    Some(toml::Value::Table(t)) if t.contains_key("fields") => {
                        return Err(err(
                            "fallback.fields",
                            "give `fields` on the outer key, not on its fallback".into(),
                        ));
                    }
                    Some(toml::Value::Table(t)) => self.identity_fn(t, span.clone(), &sub)?,
                    Some(_) => {
                        return Err(err(
                            "fallback",
                            "must be a table `{ identity = \"...\" }`".into(),
                        ));
                    }
                };
                if fallback.kind() == IdentityKind::UserElse {
                    return Err(err(
                        "fallback",
                        "must be an address identity, not `user_else`".into(),
                    ));
                }
                Rule::UserElse(Box::new(fallback))
            }
        })
    }

    /// An identity table's list of trusted networks `sub`, if given.
    fn trusted(
        &self,
        table: &toml::Table,
        sub: &str,
        span: Range<usize>,
        field: &str,
    ) -> Result<Option<Vec<IpNet>>> {
        let err = |sub: &str, msg: String| self.err(span.clone(), &format!("{field}.{sub}"), msg);
        let Some(v) = table.get(sub) else {
            return Ok(None);
        };
        let list = match v {
            toml::Value::Array(a) => a.as_slice(),
            toml::Value::String(_) => std::slice::from_ref(v),
            _ => return Err(err(sub, "must be a list of CIDRs".into())),
        };
        let mut nets = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let text = item.as_str().unwrap_or_default();
            nets.push(cidr(text).map_err(|m| err(&format!("{sub}[{i}]"), m))?);
        }
        Ok(Some(nets))
    }

    /// A source's path to the origin, forged headers and sign-in.
    pub(super) fn network(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Network> {
        let mut net = Network::default();
        if let Some(via) = &t.via {
            let names = &via.get_ref().0;
            for name in names {
                match name.as_str() {
                    "direct" if names.len() == 1 => {}
                    "direct" => {
                        return Err(self.err(
                            via.span(),
                            &f("via"),
                            "`direct` means no hop: it cannot be part of a chain",
                        ));
                    }
                    _ => net.hops.push(
                        Hop::VARIANTS
                            .iter()
                            .copied()
                            .find(|h| h.name() == name)
                            .ok_or_else(|| {
                                let known = ["direct", "cdn", "proxy"];
                                self.err(
                                    via.span(),
                                    &f("via"),
                                    suggest::unknown("hop", name, known),
                                )
                            })?,
                    ),
                }
            }
        }
        let range = |v: &Option<S<String>>, field: &str, into: &mut IpNet| -> Result<()> {
            if let Some(s) = v {
                *into = cidr(s.get_ref()).map_err(|m| self.err(s.span(), &f(field), m))?;
            }
            Ok(())
        };
        range(&t.cdn_range, "cdn_range", &mut net.cdn_range)?;
        range(&t.proxy_range, "proxy_range", &mut net.proxy_range)?;
        let addr = |s: &S<String>, field: &str| -> Result<IpAddr> {
            s.get_ref().parse().map_err(|_| {
                self.err(
                    s.span(),
                    &f(field),
                    format!("`{}` is not an IP address", s.get_ref()),
                )
            })
        };
        if let Some(list) = &t.forge_xff {
            for (i, s) in list.get_ref().iter().enumerate() {
                net.forge_xff.push(addr(s, &format!("forge_xff[{i}]"))?);
            }
        }
        net.forge_real_ip = t
            .forge_real_ip
            .as_ref()
            .map(|s| addr(s, "forge_real_ip"))
            .transpose()?;
        net.forge_cf = t
            .forge_cf
            .as_ref()
            .map(|s| addr(s, "forge_cf"))
            .transpose()?;
        net.rotation = match kind {
            TrafficKind::XffRotator => Rotation::Xff,
            TrafficKind::CdnBypass => Rotation::Cf,
            _ => Rotation::None,
        };
        net.signed_in = t.signed_in.as_ref().is_some_and(|s| *s.get_ref());
        Ok(net)
    }
}

/// A network in CIDR notation; a bare address is a network of one.
fn cidr(text: &str) -> std::result::Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("malformed CIDR `{text}`: expected a network like `173.245.48.0/20`"))
}
