//! Running a `[[contender]]`: its rules stacked in front of the same traffic.
//!
//! Sources render every request's whole identity (all key fields) into a keyspace of their
//! own; a thin wrapper maps each identity to the policy's key, so the metrics see exactly the
//! keys of the short form, and keeps the identity on the arrival for the rules, each of which
//! keys it its own way. What a rule needs to know of a request (route, user, tier, bypass) is
//! worked out once per identity and source, not per request.

use super::engine::{Capture, Detail, Gate, Observers, simulate};
use super::{Clients, DecisionSink, Progress};
use crate::algorithms::{
    Decision, KeyId, KeyedLimiter, Limiter, LimiterVisitor, MemoryUsage, Outcome,
};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, Recorder, RuleTally, Throughput};
use crate::policy::{KeyField, KeySpec};
use crate::scenario::contender::{Commit, Facts, Stack, source_signed_in};
use crate::scenario::{AlgorithmSpec, Scenario};
use crate::time::Nanos;
use crate::traffic::{self, Arrival, ClientId, Identity, KeySpace, Source};
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One rule's keyed limiter, whatever its algorithm.
trait RuleLimiter: Send {
    fn decide(&mut self, key: KeyId, now: Nanos) -> Decision;
    fn peek(&self, key: KeyId, now: Nanos) -> Decision;
    fn evict_idle(&mut self, now: Nanos);
    fn memory(&self) -> (MemoryUsage, MemoryUsage);
}

impl<L: Limiter> RuleLimiter for KeyedLimiter<L> {
    fn decide(&mut self, key: KeyId, now: Nanos) -> Decision {
        KeyedLimiter::decide(self, key, now)
    }
    fn peek(&self, key: KeyId, now: Nanos) -> Decision {
        KeyedLimiter::peek(self, key, now)
    }
    fn evict_idle(&mut self, now: Nanos) {
        KeyedLimiter::evict_idle(self, now)
    }
    fn memory(&self) -> (MemoryUsage, MemoryUsage) {
        (self.peak_memory(), KeyedLimiter::memory(self))
    }
}

struct Build;
impl LimiterVisitor for Build {
    type Output = Box<dyn RuleLimiter>;
    fn visit<L: Limiter + 'static>(self, limiter: L) -> Box<dyn RuleLimiter> {
        Box::new(KeyedLimiter::new(limiter))
    }
}

/// Every identity seen, and the policy key and client each maps to.
struct Identities {
    space: KeySpace,
    policy: KeySpec,
    to_key: Vec<KeyId>,
    to_client: Vec<ClientId>,
}

impl Identities {
    fn map(&mut self, id: KeyId, client: ClientId, keys: &mut KeySpace) -> (KeyId, ClientId) {
        while self.to_key.len() <= id as usize {
            let fields = self
                .space
                .fields(self.to_key.len() as KeyId)
                .expect("a recording keyspace");
            let k = keys.intern(&self.policy, |f| &fields[field_index(f)]);
            self.to_key.push(k);
        }
        while self.to_client.len() <= client as usize {
            let name = self.space.client_name(self.to_client.len() as ClientId);
            self.to_client.push(keys.intern_client(name));
        }
        (self.to_key[id as usize], self.to_client[client as usize])
    }
}

fn field_index(f: KeyField) -> usize {
    KeyField::ALL
        .iter()
        .position(|&x| x == f)
        .expect("every field")
}

/// A source whose arrivals carry the policy key in `key` and the whole identity in `identity`.
struct Identified {
    inner: Box<dyn Source>,
    ids: Arc<Mutex<Identities>>,
}

impl Source for Identified {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        let mut ids = self.ids.lock().expect("not poisoned");
        let Some(mut a) = self.inner.next_arrival(&mut ids.space)? else {
            return Ok(None);
        };
        let (key, client) = ids.map(a.key, a.client, keys);
        a.identity = a.key;
        a.key = key;
        a.client = client;
        Ok(Some(a))
    }
}

/// What the stack knows of one (identity, source): bypassed, and which rules apply (bit i).
#[derive(Clone, Copy)]
struct Known {
    bypass: bool,
    applies: u64,
}

struct RuleRun {
    limiter: Box<dyn RuleLimiter>,
    keys: KeySpace,
    /// Rule key of each identity (`KeyId::MAX`: not yet seen).
    of_identity: Vec<KeyId>,
    tally: RuleTally,
}

/// A contender's rules as the engine's [`Gate`].
struct StackGate<'a> {
    stack: &'a Stack,
    rules: Vec<RuleRun>,
    ids: Arc<Mutex<Identities>>,
    known: FxHashMap<(KeyId, u16), Known>,
    /// Per source: user → tier, for sources with tiers.
    tiers: Vec<FxHashMap<String, String>>,
    /// Per source: its `signed_in` (`None` for a replayed trace).
    signed_in: Vec<Option<bool>>,
    decisions: Vec<(usize, KeyId, Decision)>,
    bypassed: u64,
    unlimited: u64,
    warned: u64,
}

impl StackGate<'_> {
    fn known(&mut self, a: &Arrival) -> Known {
        if let Some(k) = self.known.get(&(a.identity, a.source)) {
            return *k;
        }
        let ids = self.ids.lock().expect("not poisoned");
        let fields = ids.space.fields(a.identity).expect("a recording keyspace");
        let user = &fields[field_index(KeyField::User)];
        let facts = Facts {
            ip: &fields[field_index(KeyField::Ip)],
            user,
            api_key: &fields[field_index(KeyField::ApiKey)],
            endpoint: &fields[field_index(KeyField::Endpoint)],
            tier: self.tiers[a.source as usize]
                .get(&**user)
                .map(String::as_str),
            source_signed_in: self.signed_in[a.source as usize],
        };
        let mut applies = 0u64;
        for (i, rule) in self.stack.rules.iter().enumerate() {
            if rule.matcher.applies(&facts) {
                applies |= 1 << i;
            }
            let run = &mut self.rules[i];
            let slot = a.identity as usize;
            if run.of_identity.len() <= slot {
                run.of_identity.resize(slot + 1, KeyId::MAX);
            }
            if run.of_identity[slot] == KeyId::MAX {
                run.of_identity[slot] = run.keys.intern(&rule.key, |f| &fields[field_index(f)]);
            }
        }
        let known = Known {
            bypass: self.stack.bypass.lets_through(&facts),
            applies,
        };
        drop(ids);
        self.known.insert((a.identity, a.source), known);
        known
    }
}

impl Gate for StackGate<'_> {
    fn estimate(&self, _: &Arrival) -> Option<f64> {
        None
    }

    fn decide(&mut self, a: &Arrival) -> (Decision, Detail<'_>) {
        let now = a.time;
        let known = self.known(a);
        let unlimited = (
            Decision::allow(0, now),
            Detail {
                unlimited: true,
                ..Detail::default()
            },
        );
        if known.bypass {
            self.bypassed += 1;
            return unlimited;
        }
        if known.applies == 0 {
            self.unlimited += 1;
            return unlimited;
        }
        let applying = (0..self.rules.len()).filter(|i| known.applies & (1 << i) != 0);
        self.decisions.clear();
        let mut refused = None;
        match self.stack.commit {
            Commit::AllOrNothing => {
                for i in applying.clone() {
                    let key = self.rules[i].of_identity[a.identity as usize];
                    if !self.rules[i].limiter.peek(key, now).outcome.is_admitted() {
                        // The refusing rule records its refusal as its algorithm does (a
                        // profile may count the hit or start a block); the others nothing.
                        let d = self.rules[i].limiter.decide(key, now);
                        refused = Some((i, d));
                        break;
                    }
                }
                if refused.is_none() {
                    for i in applying.clone() {
                        let key = self.rules[i].of_identity[a.identity as usize];
                        let d = self.rules[i].limiter.decide(key, now);
                        self.decisions.push((i, key, d));
                    }
                }
            }
            Commit::InOrder => {
                for i in applying.clone() {
                    let key = self.rules[i].of_identity[a.identity as usize];
                    let d = self.rules[i].limiter.decide(key, now);
                    if !d.outcome.is_admitted() {
                        refused = Some((i, d));
                        break;
                    }
                    self.decisions.push((i, key, d));
                }
            }
        }
        if let Some((r, d)) = refused {
            for i in applying {
                let key = self.rules[i].of_identity[a.identity as usize];
                self.rules[i].tally.reject(key, now, i == r);
            }
            let detail = Detail {
                rule: &self.stack.rules[r].name,
                warned: false,
                unlimited: false,
            };
            return (
                Decision {
                    outcome: d.outcome,
                    remaining: 0,
                    reset_at: d.reset_at,
                },
                detail,
            );
        }
        let mut delay = 0;
        let mut warned = false;
        let mut binding = self.decisions[0];
        for &(i, key, d) in &self.decisions {
            if let Outcome::Delay(x) = d.outcome {
                delay = delay.max(x);
            }
            let rule = &self.stack.rules[i];
            let used = rule.params.limit - d.remaining.min(rule.params.limit);
            let warns = rule.warn_from.is_some_and(|w| used >= w);
            warned |= warns;
            self.rules[i].tally.admit(key, now, warns);
            if d.remaining < binding.2.remaining {
                binding = (i, key, d);
            }
        }
        self.warned += warned as u64;
        let outcome = if delay > 0 {
            Outcome::Delay(delay)
        } else {
            Outcome::Allow
        };
        let detail = Detail {
            rule: &self.stack.rules[binding.0].name,
            warned,
            unlimited: false,
        };
        (
            Decision {
                outcome,
                remaining: binding.2.remaining,
                reset_at: binding.2.reset_at,
            },
            detail,
        )
    }

    fn evict_idle(&mut self, now: Nanos) {
        for r in &mut self.rules {
            r.limiter.evict_idle(now);
            r.tally.sweep(now);
        }
    }
}

/// Simulates one contender with a stack of rules (see the module docs).
pub fn run_stack<S: DecisionSink>(
    scenario: &Scenario,
    spec: &AlgorithmSpec,
    stack: &Stack,
    mut sink: Option<S>,
    progress: Option<&Progress>,
) -> Result<(AlgorithmReport, Throughput, Option<S>)> {
    let started = Instant::now();
    let all = KeySpec::new(KeyField::ALL.to_vec()).expect("non-empty");
    let mut space = KeySpace::recording();
    let inner = traffic::build_sources(&scenario.traffic, &all, scenario.seed, &mut space)?;
    let mut keys = KeySpace::new();
    let mut ids = Identities {
        space,
        policy: scenario.policy.key.clone(),
        to_key: Vec::new(),
        to_client: Vec::new(),
    };
    // Every synthetic client's key up front, in the order the short form registers them.
    if !ids.space.is_empty() {
        let (last, clients) = (ids.space.len() - 1, ids.space.clients());
        ids.map(
            last as KeyId,
            clients.saturating_sub(1) as ClientId,
            &mut keys,
        );
    }
    let ids = Arc::new(Mutex::new(ids));
    let sources: Vec<Box<dyn Source>> = inner
        .into_iter()
        .map(|inner| {
            Box::new(Identified {
                inner,
                ids: Arc::clone(&ids),
            }) as Box<dyn Source>
        })
        .collect();
    let tiers = scenario
        .traffic
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let mut map = FxHashMap::default();
            if !s.population.tiers.is_empty() {
                for j in 0..s.population.clients {
                    let unspecified = std::net::IpAddr::from([0, 0, 0, 0]);
                    let user = Identity::of_client(s, index, j, unspecified).user;
                    if let Some(t) = s.population.tier(j) {
                        map.entry(user).or_insert_with(|| t.to_string());
                    }
                }
            }
            map
        })
        .collect();
    let rules = stack
        .rules
        .iter()
        .map(|r| RuleRun {
            limiter: match r.profile {
                Some(profile) => profile.visit(Build),
                None => r
                    .kind
                    .visit(r.params, Build)
                    .expect("rule parameters were validated"),
            },
            keys: KeySpace::new(),
            of_identity: Vec::new(),
            tally: RuleTally::new(r.params.limit, r.params.window),
        })
        .collect();
    let mut gate = StackGate {
        stack,
        rules,
        ids,
        known: FxHashMap::default(),
        tiers,
        signed_in: scenario.traffic.iter().map(source_signed_in).collect(),
        decisions: Vec::with_capacity(stack.rules.len()),
        bypassed: 0,
        unlimited: 0,
        warned: 0,
    };
    let mut recorder = Recorder::new(
        &scenario.policy,
        &scenario.traffic,
        scenario.duration,
        scenario.bucket,
    );
    let mut capture = Capture::new(0);
    let unobserved = Progress::new();
    let observers = Observers {
        recorder: &mut recorder,
        sink: sink.as_mut().map(|s| s as &mut dyn DecisionSink),
        capture: &mut capture,
        progress: progress.unwrap_or(&unobserved),
    };
    let mut clients = Clients::new(&scenario.reactions, scenario.seed);
    simulate(
        &mut gate,
        sources,
        &mut keys,
        &mut clients,
        scenario.policy.window,
        observers,
    )?;
    let elapsed = started.elapsed();
    let (mut peak, mut end) = (MemoryUsage::default(), MemoryUsage::default());
    for r in &gate.rules {
        let (p, e) = r.limiter.memory();
        for (sum, m) in [(&mut peak, p), (&mut end, e)] {
            sum.live_keys += m.live_keys;
            sum.state_bytes += m.state_bytes;
            sum.redis_bytes += m.redis_bytes;
        }
    }
    let mut report = recorder.finish(&scenario.traffic, &spec.name, spec.params, &keys, peak, end);
    report.bypassed = Some(gate.bypassed);
    report.unlimited = Some(gate.unlimited);
    report.warned = Some(gate.warned);
    if crate::scenario::deployment::uses_deployments(scenario) {
        report.deployment = Some(crate::metrics::DeploymentReport::single_node());
    }
    report.rules = gate
        .rules
        .into_iter()
        .zip(&stack.rules)
        .map(|(run, rule)| {
            run.tally.finish(
                rule.name.clone(),
                rule.kind.name(),
                rule.params,
                rule.key.clone(),
            )
        })
        .collect();
    let throughput = Throughput {
        algorithm: spec.name.clone(),
        decisions_timed: 0,
        decision_elapsed_ns: 0,
        decisions_per_sec: 0.0,
        simulation_elapsed_ns: elapsed.as_nanos() as u64,
        simulated_requests_per_sec: report.offered as f64 / elapsed.as_secs_f64().max(1e-9),
    };
    Ok((report, throughput, sink))
}
