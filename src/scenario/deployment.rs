//! `[deployment]` / `[contender.deployment]`: several replicas of the limiter behind a balancer,
//! and where their state lives (docs/distributed.md).
//!
//! The table is validated into a [`Deployment`] the engine's deployment gate runs
//! (`sim::deployment`); every refusal names the field and its line.

use super::raw::S;
use super::validate::Ctx;
use crate::algorithms::{AlgorithmKind, Params};
use crate::error::Result;
use crate::time::Nanos;
use serde::Deserialize;

/// Most replicas a deployment may have (each holds its own copy of the keyspace in `local`).
pub const MAX_REPLICAS: u64 = 1024;

/// The table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeployment {
    pub replicas: S<i64>,
    #[serde(default)]
    pub balancer: Option<S<String>>,
    pub store: S<String>,
    #[serde(default)]
    pub ops: Option<S<String>>,
    /// `"1ms"`, or `{ kind = "uniform", min = "0.5ms", max = "2ms" }`, or
    /// `{ kind = "lognormal", median = "1ms", sigma = 0.5 }`.
    #[serde(default)]
    pub rtt: Option<S<toml::Value>>,
    /// `local` only: `"as_configured"` (default) or `"divided"`.
    #[serde(default)]
    pub limit: Option<S<String>>,
    #[serde(default)]
    pub sync_every: Option<S<String>>,
    #[serde(default)]
    pub die_chance: Option<S<f64>>,
    #[serde(default)]
    pub clock_offset: Option<S<String>>,
    #[serde(default)]
    pub outages: Vec<S<RawOutage>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    pub from: S<String>,
    pub to: S<String>,
    pub mode: S<String>,
}

/// Picks the replica that serves a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balancer {
    RoundRobin,
    /// Uniformly at random (seeded).
    Random,
    /// A hash of the client (its address in the synthetic population): sticky clients.
    ClientHash,
    /// A hash of the policy key: every request of a key reaches the same replica.
    KeyHash,
}

impl Balancer {
    pub const ALL: [Balancer; 4] = [
        Balancer::RoundRobin,
        Balancer::Random,
        Balancer::ClientHash,
        Balancer::KeyHash,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round_robin",
            Balancer::Random => "random",
            Balancer::ClientHash => "client_hash",
            Balancer::KeyHash => "key_hash",
        }
    }
}

/// How a replica talks to the shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ops {
    /// One script per request, run atomically in the store (a Lua `EVALSHA`).
    Atomic,
    /// Read the state, decide in the replica, write the new state back.
    Racy,
    /// `INCR`, then (for a new key) a separate `EXPIRE`: a fixed-window counter whose expiry
    /// may never be set.
    IncrThenExpire,
}

impl Ops {
    pub const ALL: [Ops; 3] = [Ops::Atomic, Ops::Racy, Ops::IncrThenExpire];
    pub fn name(self) -> &'static str {
        match self {
            Ops::Atomic => "atomic",
            Ops::Racy => "racy",
            Ops::IncrThenExpire => "incr_then_expire",
        }
    }
}

/// Where the limiter's state lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Store {
    /// Each replica limits alone; `divided`: each with `max(1, limit / replicas)`.
    Local { divided: bool },
    /// One store every replica reaches with a round trip.
    Shared { ops: Ops, die_chance: f64 },
    /// Each replica decides on a local copy and syncs with the store every `sync_every`.
    Cached { sync_every: Nanos },
}

impl Store {
    pub fn name(self) -> &'static str {
        match self {
            Store::Local { .. } => "local",
            Store::Shared { .. } => "shared",
            Store::Cached { .. } => "cached",
        }
    }

    /// The operations' name: `atomic`, `racy` or `incr_then_expire` for a shared store; the
    /// store's name otherwise.
    pub fn ops_name(self) -> &'static str {
        match self {
            Store::Shared { ops, .. } => ops.name(),
            Store::Local { divided: true } => "divided",
            other => other.name(),
        }
    }
}

/// The round-trip time between a replica and the store, drawn per round trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rtt {
    Constant(Nanos),
    /// Uniform in `[min, max]` (integer nanoseconds).
    Uniform {
        min: Nanos,
        max: Nanos,
    },
    /// Log-normal with this median and shape `sigma` (floating point, rounded to whole
    /// nanoseconds).
    LogNormal {
        median: Nanos,
        sigma: f64,
    },
}

/// What replicas do with requests while the store cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    Open,
    Closed,
}

impl FailMode {
    pub fn name(self) -> &'static str {
        match self {
            FailMode::Open => "fail_open",
            FailMode::Closed => "fail_closed",
        }
    }
}

/// The store is unreachable in `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    pub from: Nanos,
    pub to: Nanos,
    pub mode: FailMode,
}

/// A validated deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub replicas: u32,
    pub balancer: Balancer,
    pub store: Store,
    pub rtt: Rtt,
    /// Replica `r`'s clock runs `r × clock_offset` ahead of replica 0's.
    pub clock_offset: Nanos,
    /// Sorted, not overlapping.
    pub outages: Vec<Outage>,
}

impl Deployment {
    /// The parameters each replica's limiter runs with: `params`, or the limit divided.
    pub fn replica_params(&self, params: Params) -> Params {
        match self.store {
            Store::Local { divided: true } => {
                let limit = (params.limit / self.replicas as u64).max(1);
                let burst = (params.burst / self.replicas as u64).max(1);
                Params {
                    limit,
                    window: params.window,
                    burst,
                }
            }
            _ => params,
        }
    }

    /// The typical round trip (the constant, a uniform's mean, a log-normal's median; 0 for a
    /// local store) and the sync period (0 unless cached), as the report gives them.
    pub fn periods(&self) -> [Nanos; 2] {
        let rtt = match (self.store, self.rtt) {
            (Store::Local { .. }, _) => 0,
            (_, Rtt::Constant(x)) => x,
            (_, Rtt::Uniform { min, max }) => min + (max - min) / 2,
            (_, Rtt::LogNormal { median, .. }) => median,
        };
        let sync = match self.store {
            Store::Cached { sync_every } => sync_every,
            _ => 0,
        };
        [rtt, sync]
    }

    /// The outage covering `t`, if any.
    pub fn outage_at(&self, t: Nanos) -> Option<&Outage> {
        self.outages.iter().find(|o| o.from <= t && t < o.to)
    }
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
        let names = |all: &[&str]| {
            all.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let balancer = match &d.balancer {
            None => Balancer::RoundRobin,
            Some(b) => pick(&Balancer::ALL, Balancer::name, b.get_ref()).ok_or_else(|| {
                self.err(
                    b.span(),
                    &f("balancer"),
                    format!(
                        "unknown balancer `{}`; expected one of {}",
                        b.get_ref(),
                        names(&Balancer::ALL.map(Balancer::name))
                    ),
                )
            })?,
        };
        let only = |s: &Option<S<String>>, name: &str, store: &str| -> Result<()> {
            match s {
                Some(v) => Err(self.err(
                    v.span(),
                    &f(name),
                    format!("applies to `store = \"{store}\"` only"),
                )),
                None => Ok(()),
            }
        };
        let store_name = d.store.get_ref().as_str();
        let store = match store_name {
            "local" => {
                only(&d.ops, "ops", "shared")?;
                only(&d.sync_every, "sync_every", "cached")?;
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
                Store::Local { divided }
            }
            "shared" => {
                only(&d.sync_every, "sync_every", "cached")?;
                only(&d.limit, "limit", "local")?;
                let ops = match &d.ops {
                    None => Ops::Atomic,
                    Some(o) => pick(&Ops::ALL, Ops::name, o.get_ref()).ok_or_else(|| {
                        self.err(
                            o.span(),
                            &f("ops"),
                            format!(
                                "unknown ops `{}`; expected one of {}",
                                o.get_ref(),
                                names(&Ops::ALL.map(Ops::name))
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
                        let v = *c.get_ref();
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
                Store::Shared { ops, die_chance }
            }
            "cached" => {
                only(&d.ops, "ops", "shared")?;
                only(&d.limit, "limit", "local")?;
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
                Store::Cached { sync_every }
            }
            other => {
                return Err(self.err(
                    d.store.span(),
                    &f("store"),
                    format!("unknown store `{other}`; expected one of `local`, `shared`, `cached`"),
                ));
            }
        };
        if !matches!(store, Store::Shared { .. })
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
        Ok(Deployment {
            replicas,
            balancer,
            store,
            rtt,
            clock_offset,
            outages,
        })
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

/// Whether some contender of `scenario` runs with a deployment.
pub fn uses_deployments(scenario: &super::Scenario) -> bool {
    scenario.algorithms.iter().any(|a| a.deployment().is_some())
}

impl Ctx<'_> {
    /// Puts a contender with `[contender.deployment]` on the deployment path: it must be one
    /// rule keyed like the policy that applies to every request (the deployment gate runs one
    /// limiter under the policy's key; stacked rules behind replicas are not modelled).
    pub(super) fn deployed_contender(
        &self,
        spec: &mut super::Contender,
        raw: &S<RawDeployment>,
        i: usize,
        policy: &crate::policy::Policy,
        duration: Nanos,
    ) -> Result<()> {
        let field = format!("contender[{i}].deployment");
        let stack = spec.stack().expect("a contender has a stack");
        let plain = stack.rules.len() == 1
            && stack.bypass.is_empty()
            && stack.rules[0].key == policy.key
            && stack.rules[0].matcher == super::contender::Matcher::default()
            && stack.rules[0].warn_from.is_none();
        if !plain {
            return Err(self.err(
                raw.span(),
                &field,
                "a deployed contender must have exactly one rule, keyed like the policy, applying \
                 to every request (no routes, tiers, signed_in, warn_at or bypass): stacked rules \
                 behind replicas are not modelled",
            ));
        }
        let dep = self.deployment(raw, &field, spec.kind, spec.profile().is_some(), duration)?;
        spec.deploy(dep, &field);
        Ok(())
    }
}
