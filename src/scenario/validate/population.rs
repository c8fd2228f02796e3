//! Validation of a source's population: how many clients, their identities (users, API keys,
//! IPv4 or IPv6 addresses, NAT pools, botnets), endpoint mix, tiers and per-client rates.

use super::ctx::Ctx;
use crate::algorithms::Cost;
use crate::error::Result;
use crate::scenario::raw::{Int, Num, RawCost, RawTraffic, RawWeighted, S};
use crate::traffic::cost::{Actual, CostDist, CostModel};
use crate::traffic::method::Method;
use crate::traffic::{self, IdGen, Population, RateDist, TrafficKind};
use strum::VariantArray;

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
            costs: self.costs(t, f)?,
            tokens: self.tokens(t, f)?,
            milli_chars_per_token: self.chars_per_token(t, kind, f)?,
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
                if let (Some(c), false) = (&w.cost, field.ends_with("methods")) {
                    return Err(self.err(
                        c.span(),
                        &format!("{field}[{i}].cost"),
                        "a cost of its own is for a `methods` entry: give this one its own \
                         source with `cost`",
                    ));
                }
                let weight = match &w.weight {
                    Some(v) => self.count(v, &format!("{field}[{i}].weight"), 1_000_000)? as u32,
                    None => 1,
                };
                Ok((w.name.get_ref().clone(), weight))
            })
            .collect()
    }

    /// `cost`, `cost_dist` (with its parameters) or `costs`, and the `cost` of `methods`
    /// entries.
    fn costs(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<CostModel> {
        let dist = match &t.costs {
            Some(list) => {
                let single = t.cost.as_ref().map(|c| c.span());
                if let Some(span) = single.or(t.cost_dist.as_ref().map(|d| d.span())) {
                    return Err(self.err(
                        span,
                        &f("costs"),
                        "give `costs` or `cost` / `cost_dist`, not both",
                    ));
                }
                self.cost_mix(list, f)?
            }
            None => self.cost_dist(t, f)?,
        };
        let mut per_method = [None; Method::VARIANTS.len()];
        let methods = t.methods.as_ref().map(|l| l.get_ref().as_slice());
        for (i, e) in methods.unwrap_or_default().iter().enumerate() {
            if let Some(c) = &e.cost {
                let field = f(&format!("methods[{i}].method"));
                let m = Method::parse(e.name.get_ref())
                    .map_err(|err| self.err(e.name.span(), &field, err))?;
                per_method[usize::from(m.code())] =
                    Some(self.cost(c, &f(&format!("methods[{i}].cost")))?);
            }
        }
        let mut model = CostModel {
            dist,
            per_method,
            ..CostModel::default()
        };
        self.settle(t, f, &mut model)?;
        Ok(model)
    }

    /// `actual_cost` or `actual_share` (with `actual_share_min`), and `response_time`.
    fn settle(
        &self,
        t: &RawTraffic,
        f: &dyn Fn(&str) -> String,
        model: &mut CostModel,
    ) -> Result<()> {
        let share = |v: &S<Num>, field: &str| match v.get_ref().0 {
            x if (0.0..=1.0).contains(&x) => Ok(x),
            x => Err(self.err(v.span(), &f(field), format!("must be in [0, 1], got {x}"))),
        };
        model.actual = match (&t.actual_cost, &t.actual_share, &t.actual_share_min) {
            (None, None, None) => Actual::Requested,
            (Some(c), None, None) => {
                let what = "a whole number of cost units";
                let c = self.whole(c, &f("actual_cost"), what, 0, i64::from(Cost::MAX))?;
                Actual::Fixed(c as Cost)
            }
            (Some(_), Some(s), _) => {
                let why = "give `actual_cost` or `actual_share`, not both";
                return Err(self.err(s.span(), &f("actual_share"), why));
            }
            (_, None, Some(m)) => {
                let why = "needs `actual_share`, the largest share";
                return Err(self.err(m.span(), &f("actual_share_min"), why));
            }
            (None, Some(s), min) => {
                let max = share(s, "actual_share")?;
                let min = match min {
                    Some(m) => share(m, "actual_share_min")?,
                    None => max,
                };
                if min > max {
                    let why = format!("{min} is above actual_share {max}");
                    let span = t
                        .actual_share_min
                        .as_ref()
                        .map(|m| m.span())
                        .unwrap_or_default();
                    return Err(self.err(span, &f("actual_share_min"), why));
                }
                Actual::Share { min, max }
            }
        };
        let stated = t.actual_cost.as_ref().map(|v| v.span());
        let stated = stated.or(t.actual_share.as_ref().map(|v| v.span()));
        if let (Some(span), true) = (stated.clone(), model.is_unit()) {
            let field = if t.actual_cost.is_some() {
                "actual_cost"
            } else {
                "actual_share"
            };
            let why = "every request of this source costs 1: give its `cost` (or `costs`, \
                       `cost_dist`) for a response to settle less";
            return Err(self.err(span, &f(field), why));
        }
        if let Some(r) = &t.response_time {
            let (replay, llm) = (t.path.is_some(), t.output_tokens.is_some());
            if stated.is_none() && !replay && !llm {
                let why = "nothing settles: give `actual_cost` or `actual_share` (or an LLM's \
                           `output_tokens`)";
                return Err(self.err(r.span(), &f("response_time"), why));
            }
            model.response_time = self.duration(r, &f("response_time"), false)?;
        }
        Ok(())
    }

    /// One request's cost: a whole number from 1.
    fn cost(&self, v: &S<Int>, field: &str) -> Result<Cost> {
        Ok(self.count(v, field, u64::from(Cost::MAX))? as Cost)
    }

    /// `costs = [{ cost, weight }]`.
    fn cost_mix(&self, list: &S<Vec<RawCost>>, f: &dyn Fn(&str) -> String) -> Result<CostDist> {
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), &f("costs"), "must list at least one entry"));
        }
        let mut mix = Vec::new();
        for (i, e) in list.get_ref().iter().enumerate() {
            let c = self.cost(&e.cost, &f(&format!("costs[{i}].cost")))?;
            let w = match &e.weight {
                Some(v) => self.count(v, &f(&format!("costs[{i}].weight")), 1_000_000)? as u32,
                None => 1,
            };
            mix.push((c, w));
        }
        Ok(CostDist::Mix(mix))
    }

    /// `cost`, or `cost_dist` with the parameters it uses (and none it does not).
    fn cost_dist(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<CostDist> {
        let cost = |v: &Option<S<Int>>, field: &str| {
            v.as_ref().map(|c| self.cost(c, &f(field))).transpose()
        };
        let positive = |v: &Option<S<Num>>, field: &str| match v {
            None => Ok(1.0),
            Some(n) if n.get_ref().0 > 0.0 && n.get_ref().0 <= 10.0 => Ok(n.get_ref().0),
            Some(n) => Err(self.err(
                n.span(),
                &f(field),
                format!("must be in (0, 10], got {}", n.get_ref().0),
            )),
        };
        let dist = t
            .cost_dist
            .as_ref()
            .map(|d| (d.get_ref().as_str(), d.span()));
        let name = dist.as_ref().map_or("", |d| d.0);
        let given = |v: Option<std::ops::Range<usize>>, field: &str, used: bool| match v {
            Some(span) if !used => Err(self.err(
                span,
                &f(field),
                match name {
                    "" => "needs `cost_dist`".to_string(),
                    _ => format!("not used by cost_dist `{name}`"),
                },
            )),
            _ => Ok(()),
        };
        given(
            t.cost_min.as_ref().map(|v| v.span()),
            "cost_min",
            name == "uniform",
        )?;
        given(
            t.cost_max.as_ref().map(|v| v.span()),
            "cost_max",
            !name.is_empty(),
        )?;
        given(
            t.cost_sigma.as_ref().map(|v| v.span()),
            "cost_sigma",
            name == "lognormal",
        )?;
        given(
            t.cost_exponent.as_ref().map(|v| v.span()),
            "cost_exponent",
            name == "zipf",
        )?;
        let no_cost = || given(t.cost.as_ref().map(|v| v.span()), "cost", false);
        let required = |v: &Option<S<Int>>, field: &str| match cost(v, field)? {
            Some(c) => Ok(c),
            None => Err(self.err(
                t.cost_dist.as_ref().map(|d| d.span()).unwrap_or_default(),
                &f(field),
                format!("cost_dist `{name}` needs `{field}`"),
            )),
        };
        Ok(match dist {
            None | Some(("fixed", _)) => CostDist::Fixed(cost(&t.cost, "cost")?.unwrap_or(1)),
            Some(("uniform", span)) => {
                no_cost()?;
                let min = cost(&t.cost_min, "cost_min")?.unwrap_or(1);
                let max = required(&t.cost_max, "cost_max")?;
                if min > max {
                    let why = format!("{min} is above cost_max {max}");
                    return Err(self.err(span, &f("cost_min"), why));
                }
                CostDist::Uniform { min, max }
            }
            Some(("lognormal", _)) => CostDist::Lognormal {
                mean: f64::from(required(&t.cost, "cost")?),
                sigma: positive(&t.cost_sigma, "cost_sigma")?,
                max: cost(&t.cost_max, "cost_max")?.unwrap_or(Cost::MAX),
            },
            Some(("zipf", _)) => {
                no_cost()?;
                CostDist::Zipf {
                    max: required(&t.cost_max, "cost_max")?,
                    exponent: positive(&t.cost_exponent, "cost_exponent")?,
                }
            }
            Some((other, span)) => {
                let why = format!(
                    "unknown cost_dist `{other}` (expected fixed, uniform, lognormal or zipf)"
                );
                return Err(self.err(span, &f("cost_dist"), why));
            }
        })
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
