//! `[deployment]` / `[contender.deployment]` validated into a [`Deployment`]; every refusal
//! names the field and its line.

use super::ctx::Ctx;
use crate::algorithms::AlgorithmKind;
use crate::error::Result;
use crate::scenario::model::deployment::{
    Balancer, Deployment, FailMode, MAX_REPLICAS, Ops, Outage, Rtt, Store,
};
use crate::scenario::model::scenario::Contender;
use crate::scenario::model::stack::{Matcher, RuleUnit};
use crate::scenario::raw::{RawDeployment, S};
use crate::time::Nanos;
use strum::VariantArray;

/// A registry's names, quoted, for an error message.
fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter()
        .map(|&x| format!("`{}`", name(x)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entry of a registry named `s`.
fn pick<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, s: &str) -> Option<T> {
    all.iter().copied().find(|&x| name(x) == s)
}

impl Ctx<'_> {
    /// Validates a deployment table for an algorithm `kind` (with a profile when `profile`).
    /// `field` is where it was written (`deployment`, `contender[2].deployment`).
    pub(super) fn deployment(
        &self,
        raw: &S<RawDeployment>,
        field: &str,
        kind: AlgorithmKind,
        profile: bool,
        duration: Nanos,
    ) -> Result<Deployment> {
        let d = raw.get_ref();
        let f = |name: &str| format!("{field}.{name}");
        let replicas = self.count(&d.replicas, &f("replicas"), MAX_REPLICAS)? as u32;
        let balancer = match &d.balancer {
            None => Balancer::RoundRobin,
            Some(b) => pick(Balancer::VARIANTS, Balancer::name, b.get_ref()).ok_or_else(|| {
                self.err(
                    b.span(),
                    &f("balancer"),
                    format!(
                        "unknown balancer `{}`; expected one of {}",
                        b.get_ref(),
                        names(Balancer::VARIANTS, Balancer::name)
                    ),
                )
            })?,
        };
        let store = match d.store.get_ref().as_str() {
            "local" => self.local_store(d, &f, kind, profile)?,
            "shared" => self.shared_store(d, &f, kind, profile)?,
            "cached" => self.cached_store(d, &f)?,
            other => {
                return Err(self.err(
                    d.store.span(),
                    &f("store"),
                    format!("unknown store `{other}`; expected one of `local`, `shared`, `cached`"),
                ));
            }
        };
        if matches!(store, Store::Local { .. } | Store::Cached { .. })
            && let Some(c) = &d.die_chance
        {
            return Err(self.err(
                c.span(),
                &f("die_chance"),
                "applies to `ops = \"incr_then_expire\"` only",
            ));
        }
        let rtt = match &d.rtt {
            None => Rtt::Constant(0),
            Some(r) => self.rtt(r, &f("rtt"))?,
        };
        let clock_offset = match &d.clock_offset {
            None => 0,
            Some(c) => self.duration(c, &f("clock_offset"), false)?,
        };
        Ok(Deployment {
            replicas,
            balancer,
            store,
            rtt,
            clock_offset,
            outages: self.outages(d, field, duration)?,
        })
    }

    /// Refuses `s`, a field of another store than this one.
    fn only(
        &self,
        f: &dyn Fn(&str) -> String,
        s: &Option<S<String>>,
        name: &str,
        store: &str,
    ) -> Result<()> {
        match s {
            Some(v) => Err(self.err(
                v.span(),
                &f(name),
                format!("applies to `store = \"{store}\"` only"),
            )),
            None => Ok(()),
        }
    }

    fn local_store(
        &self,
        d: &RawDeployment,
        f: &dyn Fn(&str) -> String,
        kind: AlgorithmKind,
        profile: bool,
    ) -> Result<Store> {
        self.only(f, &d.ops, "ops", "shared")?;
        self.only(f, &d.sync_every, "sync_every", "cached")?;
        if let Some(r) = &d.rtt {
            return Err(self.err(r.span(), &f("rtt"), "a local store has no round trip"));
        }
        if let Some(o) = d.outages.first() {
            return Err(self.err(o.span(), &f("outages"), "a local store has no outage"));
        }
        let divided = match &d.limit {
            None => false,
            Some(l) => match l.get_ref().as_str() {
                "as_configured" => false,
                "divided" => true,
                other => {
                    return Err(self.err(
                        l.span(),
                        &f("limit"),
                        format!("unknown `{other}`; expected `as_configured` or `divided`"),
                    ));
                }
            },
        };
        if divided && profile {
            let l = d.limit.as_ref().expect("divided");
            return Err(self.err(
                l.span(),
                &f("limit"),
                format!(
                    "`divided` needs one of the six algorithms (`{kind}` is a profile with its own parameters)"
                ),
            ));
        }
        Ok(Store::Local { divided })
    }

    fn shared_store(
        &self,
        d: &RawDeployment,
        f: &dyn Fn(&str) -> String,
        kind: AlgorithmKind,
        profile: bool,
    ) -> Result<Store> {
        self.only(f, &d.sync_every, "sync_every", "cached")?;
        self.only(f, &d.limit, "limit", "local")?;
        let ops = match &d.ops {
            None => Ops::Atomic,
            Some(o) => pick(Ops::VARIANTS, Ops::name, o.get_ref()).ok_or_else(|| {
                self.err(
                    o.span(),
                    &f("ops"),
                    format!(
                        "unknown ops `{}`; expected one of {}",
                        o.get_ref(),
                        names(Ops::VARIANTS, Ops::name)
                    ),
                )
            })?,
        };
        if ops == Ops::IncrThenExpire && (kind != AlgorithmKind::FixedWindow || profile) {
            let o = d.ops.as_ref().expect("named");
            return Err(self.err(
                o.span(),
                &f("ops"),
                format!(
                    "`incr_then_expire` is a fixed-window counter: the algorithm must be `fixed_window`, not `{kind}`"
                ),
            ));
        }
        let die_chance = match &d.die_chance {
            None => 0.0,
            Some(c) => {
                if ops != Ops::IncrThenExpire {
                    return Err(self.err(
                        c.span(),
                        &f("die_chance"),
                        "applies to `ops = \"incr_then_expire\"` only",
                    ));
                }
                let v = c.get_ref().0;
                if !(0.0..=1.0).contains(&v) {
                    return Err(self.err(
                        c.span(),
                        &f("die_chance"),
                        format!("must be in [0, 1], got {v}"),
                    ));
                }
                v
            }
        };
        Ok(Store::shared(ops, die_chance))
    }

    fn cached_store(&self, d: &RawDeployment, f: &dyn Fn(&str) -> String) -> Result<Store> {
        self.only(f, &d.ops, "ops", "shared")?;
        self.only(f, &d.limit, "limit", "local")?;
        let sync_every = match &d.sync_every {
            Some(s) => self.duration(s, &f("sync_every"), true)?,
            None => {
                return Err(self.err(
                    d.store.span(),
                    &f("sync_every"),
                    "a cached store needs `sync_every` (how often replicas sync)",
                ));
            }
        };
        Ok(Store::Cached { sync_every })
    }

    /// `outages`: in time order, not overlapping, starting within the scenario.
    fn outages(&self, d: &RawDeployment, field: &str, duration: Nanos) -> Result<Vec<Outage>> {
        let mut outages = Vec::with_capacity(d.outages.len());
        for (i, o) in d.outages.iter().enumerate() {
            let at = |name: &str| format!("{field}.outages[{i}].{name}");
            let raw = o.get_ref();
            let from = self.duration(&raw.from, &at("from"), false)?;
            let to = self.duration(&raw.to, &at("to"), true)?;
            if to <= from {
                return Err(self.err(raw.to.span(), &at("to"), "must be after `from`"));
            }
            if from >= duration {
                return Err(self.err(
                    raw.from.span(),
                    &at("from"),
                    "starts after the scenario's duration",
                ));
            }
            let mode = match raw.mode.get_ref().as_str() {
                "fail_open" => FailMode::Open,
                "fail_closed" => FailMode::Closed,
                other => {
                    return Err(self.err(
                        raw.mode.span(),
                        &at("mode"),
                        format!("unknown mode `{other}`; expected `fail_open` or `fail_closed`"),
                    ));
                }
            };
            if let Some(prev) = outages.last().map(|p: &Outage| p.to)
                && from < prev
            {
                return Err(self.err(
                    raw.from.span(),
                    &at("from"),
                    "outages must be in time order and not overlap",
                ));
            }
            outages.push(Outage { from, to, mode });
        }
        Ok(outages)
    }

    fn rtt(&self, r: &S<toml::Value>, field: &str) -> Result<Rtt> {
        let span = r.span();
        let bad = |m: String| self.err(span.clone(), field, m);
        let dur = |v: Option<&toml::Value>, name: &str| -> Result<Nanos> {
            let Some(toml::Value::String(s)) = v else {
                return Err(bad(format!("needs `{name}`, a duration such as \"1ms\"")));
            };
            crate::time::parse_duration(s).map_err(|e| bad(format!("{name}: {e}")))
        };
        match r.get_ref() {
            toml::Value::String(s) => crate::time::parse_duration(s)
                .map(Rtt::Constant)
                .map_err(|e| bad(e.to_string())),
            toml::Value::Table(t) => {
                let kind = t.get("kind").and_then(|k| k.as_str()).unwrap_or("");
                let allowed: &[&str] = match kind {
                    "uniform" => &["kind", "min", "max"],
                    "lognormal" => &["kind", "median", "sigma"],
                    _ => {
                        return Err(bad(format!(
                            "unknown rtt kind `{kind}`; expected `uniform` or `lognormal`"
                        )));
                    }
                };
                if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
                    return Err(bad(format!("unknown field `{k}` for a {kind} rtt")));
                }
                if kind == "uniform" {
                    let (min, max) = (dur(t.get("min"), "min")?, dur(t.get("max"), "max")?);
                    if max < min {
                        return Err(bad("max must not be below min".into()));
                    }
                    Ok(Rtt::Uniform { min, max })
                } else {
                    let median = dur(t.get("median"), "median")?;
                    let sigma = match t.get("sigma") {
                        Some(toml::Value::Float(f)) => *f,
                        Some(toml::Value::Integer(i)) => *i as f64,
                        _ => return Err(bad("needs `sigma`, a number".into())),
                    };
                    if !(0.0..=4.0).contains(&sigma) {
                        return Err(bad(format!("sigma must be in [0, 4], got {sigma}")));
                    }
                    Ok(Rtt::LogNormal { median, sigma })
                }
            }
            _ => Err(bad(
                "expected a duration (\"1ms\") or a table { kind = \"uniform\" | \"lognormal\", ... }"
                    .into(),
            )),
        }
    }
}

impl Ctx<'_> {
    /// Puts a contender with `[contender.deployment]` on the deployment path: it must be one
    /// rule keyed like the policy that applies to every request (the deployment gate runs one
    /// limiter under the policy's key; stacked rules behind replicas are not modelled).
    pub(super) fn deployed_contender(
        &self,
        spec: &mut Contender,
        raw: &S<RawDeployment>,
        i: usize,
        policy: &crate::policy::Policy,
        duration: Nanos,
    ) -> Result<()> {
        let field = format!("contender[{i}].deployment");
        // A recorded contender takes no deployment (refused where it is declared).
        let plain = spec.stack().is_none_or(|stack| {
            stack.rules.len() == 1
                && stack.bypass.is_empty()
                && stack.rules[0].key == policy.key
                && stack.rules[0].matcher == Matcher::default()
                && stack.rules[0].warn_from.is_none()
        });
        if !plain {
            return Err(self.err(
                raw.span(),
                &field,
                "a deployed contender must have exactly one rule, keyed like the policy, applying \
                 to every request (no routes, tiers, signed_in, warn_at or bypass): stacked rules \
                 behind replicas are not modelled",
            ));
        }
        // Its replicas weigh each request by its cost, and keep what they charged.
        if let Some(rule) = spec.stack().and_then(|s| s.rules.first())
            && (rule.unit != RuleUnit::Cost || rule.refunds)
        {
            return Err(self.err(
                raw.span(),
                &field,
                "a deployed contender's rule counts each request's cost and gives nothing back: \
                 `unit = \"requests\"`, tokens and `refunds` behind replicas are not modelled",
            ));
        }
        self.deploy(spec, raw, &field, duration)
    }

    /// Puts `spec` on the deployment `raw` (declared at `field`).
    pub(super) fn deploy(
        &self,
        spec: &mut Contender,
        raw: &S<RawDeployment>,
        field: &str,
        duration: Nanos,
    ) -> Result<()> {
        // A recorded contender takes no deployment (refused where it is declared).
        let Some(limiter) = spec.limiter() else {
            return Ok(());
        };
        let profile = limiter.as_profile().is_some();
        let dep = self.deployment(raw, field, limiter.kind(), profile, duration)?;
        spec.deploy(dep)
            .map_err(|e| self.err(raw.span(), field, e.to_string()))
    }
}
