//! Validation of a source's population: how many clients, their identities (users, API keys,
//! IPv4 or IPv6 addresses, NAT pools, botnets), endpoint mix, tiers and per-client rates.

use super::ctx::Ctx;
use crate::error::Result;
use crate::scenario::raw::{Num, RawTraffic, RawWeighted, S};
use crate::traffic::method::Method;
use crate::traffic::{self, IdGen, Population, RateDist, TrafficKind};

impl Ctx<'_> {
    pub(super) fn population(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Population> {
        let ipv6 = t.ipv6.as_ref().is_some_and(|v| *v.get_ref());
        let max_ips = if ipv6 {
            1_000_000
        } else {
            traffic::MAX_GENERATED_IPS as u64
        };
        let needs = |field: &str, present: bool| {
            if present {
                Ok(())
            } else {
                Err(self.err(
                    t.kind.span(),
                    &f(field),
                    format!("traffic kind `{kind}` requires `{field}`"),
                ))
            }
        };
        let present = t.present_fields();
        for field in kind.required_population() {
            needs(field, present.iter().any(|(n, _)| n == field))?;
        }
        if kind == TrafficKind::CredentialStuffing
            && let Some(u) = &t.users
        {
            return Err(self.err(
                u.span(),
                &f("users"),
                "credential stuffing has one client per address: set `ips`",
            ));
        }
        self.exclusive_fields(t, f)?;
        let fixed = |v: &Option<S<String>>| v.as_ref().map(|s| IdGen::Fixed(s.get_ref().clone()));
        let (clients, user, ip) = self.identities(t, kind, max_ips, f)?;
        let endpoints = self.weighted(t.endpoints.as_ref(), &f("endpoints"))?;
        let default_endpoint = kind.default_endpoint();
        let endpoint = match (&t.endpoint, endpoints.first()) {
            (Some(e), _) => e.get_ref().clone(),
            (None, Some((path, _))) => path.clone(),
            (None, None) => default_endpoint.to_string(),
        };
        let tiers = match &t.tier {
            Some(tier) => vec![(tier.get_ref().clone(), 1)],
            None => self.weighted(t.tiers.as_ref(), &f("tiers"))?,
        };
        Ok(Population {
            clients,
            ip,
            user,
            api_key: fixed(&t.api_key).unwrap_or(IdGen::PerClient),
            endpoint,
            endpoints,
            ipv6,
            rates: self.rate_dist(t, f)?,
            tiers,
            network: self.network(t, kind, f)?,
            methods: self.methods(t, f)?,
        })
    }

    /// Fields that say the same thing two ways: at most one of each pair.
    fn exclusive_fields(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<()> {
        let exclusive =
            |a: (&str, bool), b: (&str, Option<std::ops::Range<usize>>)| match (a.1, b.1) {
                (true, Some(span)) => Err(self.err(
                    span,
                    &f(b.0),
                    format!("give either `{}` or `{}`, not both", a.0, b.0),
                )),
                _ => Ok(()),
            };
        exclusive(
            ("user", t.user.is_some()),
            ("users", t.users.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("ip", t.ip.is_some()),
            ("ips", t.ips.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("botnet", t.botnet.is_some()),
            ("users", t.users.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("botnet", t.botnet.is_some()),
            ("ips", t.ips.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("botnet", t.botnet.is_some()),
            ("ip", t.ip.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("endpoint", t.endpoint.is_some()),
            ("endpoints", t.endpoints.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("method", t.method.is_some()),
            ("methods", t.methods.as_ref().map(|u| u.span())),
        )?;
        exclusive(
            ("tier", t.tier.is_some()),
            ("tiers", t.tiers.as_ref().map(|u| u.span())),
        )?;
        Ok(())
    }

    /// The number of clients and how their users and addresses are generated.
    fn identities(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        max_ips: u64,
        f: &dyn Fn(&str) -> String,
    ) -> Result<(u32, IdGen, IdGen)> {
        let fixed = |v: &Option<S<String>>| v.as_ref().map(|s| IdGen::Fixed(s.get_ref().clone()));
        Ok(if let Some(b) = &t.botnet {
            // One attacker spread over many addresses: one user, one address per client.
            let n = self.count(b, &f("botnet"), max_ips)? as u32;
            let user = fixed(&t.user).unwrap_or_else(|| IdGen::Fixed(t.name.get_ref().clone()));
            (n, user, IdGen::PerClient)
        } else if kind == TrafficKind::CredentialStuffing {
            let n = self.count(t.ips.as_ref().expect("required"), &f("ips"), max_ips)? as u32;
            (
                n,
                fixed(&t.user).unwrap_or(IdGen::PerClient),
                IdGen::PerClient,
            )
        } else {
            let clients = match &t.users {
                Some(u) => self.count(u, &f("users"), 1_000_000)? as u32,
                None => 1,
            };
            let ip = match (&t.ip, &t.ips) {
                (Some(ip), _) => IdGen::Fixed(ip.get_ref().clone()),
                (None, Some(n)) => {
                    let n = self.count(n, &f("ips"), max_ips.min(clients as u64))?;
                    IdGen::Pool(n as u32)
                }
                (None, None) => {
                    if clients as u64 > max_ips {
                        let span = t.users.as_ref().expect("clients > 1").span();
                        return Err(self.err(
                            span,
                            &f("users"),
                            format!("at most {max_ips} clients get generated IPs; set `ips`, `ip` or `ipv6 = true`"),
                        ));
                    }
                    IdGen::PerClient
                }
            };
            (clients, fixed(&t.user).unwrap_or(IdGen::PerClient), ip)
        })
    }

    /// `method` or `methods`, each name checked.
    fn methods(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<Vec<(Method, u32)>> {
        if let Some(m) = &t.method {
            let method =
                Method::parse(m.get_ref()).map_err(|e| self.err(m.span(), &f("method"), e))?;
            return Ok(vec![(method, 1)]);
        }
        let list = self.weighted(t.methods.as_ref(), &f("methods"))?;
        let raw = t
            .methods
            .as_ref()
            .map(|l| l.get_ref().as_slice())
            .unwrap_or_default();
        list.into_iter()
            .zip(raw)
            .enumerate()
            .map(|(i, ((name, weight), r))| {
                Method::parse(&name)
                    .map(|m| (m, weight))
                    .map_err(|e| self.err(r.name.span(), &f(&format!("methods[{i}].method")), e))
            })
            .collect()
    }

    fn weighted(
        &self,
        list: Option<&S<Vec<RawWeighted>>>,
        field: &str,
    ) -> Result<Vec<(String, u32)>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), field, "must list at least one entry"));
        }
        list.get_ref()
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let weight = match &w.weight {
                    Some(v) => self.count(v, &format!("{field}[{i}].weight"), 1_000_000)? as u32,
                    None => 1,
                };
                Ok((w.name.get_ref().clone(), weight))
            })
            .collect()
    }

    fn rate_dist(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<RateDist> {
        let positive = |v: &Option<S<Num>>, field: &str, default: f64| {
            let x = v.as_ref().map_or(default, |n| n.get_ref().0);
            match v {
                Some(n) if !(x > 0.0 && x <= 10.0) => {
                    Err(self.err(n.span(), &f(field), format!("must be in (0, 10], got {x}")))
                }
                _ => Ok(x),
            }
        };
        let unused = |v: Option<std::ops::Range<usize>>, field: &str, dist: &str| match v {
            Some(span) => Err(self.err(span, &f(field), format!("not used by rate_dist `{dist}`"))),
            None => Ok(()),
        };
        let sigma = t.rate_sigma.as_ref().map(|s| s.span());
        let zipf = t.zipf_exponent.as_ref().map(|s| s.span());
        match t
            .rate_dist
            .as_ref()
            .map(|d| (d.get_ref().as_str(), d.span()))
        {
            None | Some(("same", _)) => {
                unused(sigma, "rate_sigma", "same")?;
                unused(zipf, "zipf_exponent", "same")?;
                Ok(RateDist::Same)
            }
            Some(("lognormal", _)) => {
                unused(zipf, "zipf_exponent", "lognormal")?;
                Ok(RateDist::Lognormal {
                    sigma: positive(&t.rate_sigma, "rate_sigma", 1.0)?,
                })
            }
            Some(("zipf", _)) => {
                unused(sigma, "rate_sigma", "zipf")?;
                Ok(RateDist::Zipf {
                    exponent: positive(&t.zipf_exponent, "zipf_exponent", 1.0)?,
                })
            }
            Some((other, span)) => Err(self.err(
                span,
                &f("rate_dist"),
                format!("unknown rate_dist `{other}` (expected same, lognormal or zipf)"),
            )),
        }
    }
}
