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
use crate::policy::identity::Seen;
use crate::policy::{KeyField, KeySpec};
use crate::scenario::contender::{Commit, Facts, Stack, longest_window, source_signed_in};
use crate::scenario::{AlgorithmSpec, Scenario};
use crate::time::Nanos;
use crate::traffic::via::Wire;
use crate::traffic::{
    self, Arrival, ClientId, Direct, Identity, Keeps, KeyLayout, KeySpace, Source,
};
use rustc_hash::FxHashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One rule's keyed limiter, whatever its algorithm.
trait RuleLimiter: Send {
    fn decide(&mut self, key: KeyId, now: Nanos) -> Decision;
    fn peek(&self, key: KeyId, now: Nanos) -> Decision;
    fn evict_idle(&mut self, now: Nanos);
    /// Memory held now (O(1) after a decision).
    fn current(&self) -> MemoryUsage;
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
    fn current(&self) -> MemoryUsage {
        KeyedLimiter::memory(self)
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
    inner: Direct,
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

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }
}

/// What the stack knows of one (identity, source): bypassed, which rules apply (bit i), and
/// whether the identity's forged address changes per request (then a rule keyed by an
/// identity function re-keys every request).
#[derive(Clone, Copy)]
struct Known {
    bypass: bool,
    applies: u64,
    rotating: bool,
}

struct RuleRun {
    limiter: Box<dyn RuleLimiter>,
    keys: KeySpace,
    /// Rule key of each identity (`KeyId::MAX`: not yet seen); for a rotating identity under
    /// an identity function, the key of its first request only.
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
    /// The gate's own copy of each rotating identity's path, its forged address set to the
    /// current request's before re-keying.
    wires: FxHashMap<KeyId, Wire>,
    /// This request's key under each applying rule.
    keys_now: Vec<KeyId>,
    /// Per method code: the rules that take requests of that method (bit i).
    by_method: [u64; 8],
    decisions: Vec<(usize, KeyId, Decision)>,
    bypassed: u64,
    unlimited: u64,
    warned: u64,
    /// The most memory the rules held together, noted after every request they decided (each
    /// field on its own, as a single limiter notes its peak).
    peak: MemoryUsage,
    /// Whether the rules' tallies (metrics, not decisions) are kept: not while timing.
    tallies: bool,
    /// The first arrivals decided, to time the stack afterwards (up to `capture_limit`).
    capture: Vec<Arrival>,
    capture_limit: usize,
}

/// The key `spec` gives a request with identity `fields` seen through `wire` (`None`: a direct
/// connection from its `ip`), as the short form keys it (`KeySpace::intern_identity` for a
/// generated client, `KeySpace::intern` for a replayed record). Allocates only for a new key.
fn intern_rule_key(
    keys: &mut KeySpace,
    spec: &KeySpec,
    fields: &[Box<str>; 4],
    wire: Option<&Wire>,
    signed_in: Option<bool>,
) -> KeyId {
    let value_of = |f: KeyField| &*fields[field_index(f)];
    let Some(f) = spec.identity_fn() else {
        return keys.intern_who(spec, None, value_of);
    };
    let user = value_of(KeyField::User);
    let user = match signed_in {
        Some(s) => s.then_some(user),
        None => Some(user).filter(|u| !u.is_empty()),
    };
    let who = match wire {
        Some(w) => Some(f.apply(&w.seen(user))),
        None => value_of(KeyField::Ip)
            .parse::<IpAddr>()
            .ok()
            .map(|ip| f.apply(&Seen::direct(ip, user))),
    };
    keys.intern_who(spec, who, value_of)
}

impl StackGate<'_> {
    fn known(&mut self, a: &Arrival) -> Known {
        if let Some(k) = self.known.get(&(a.identity, a.source)) {
            return *k;
        }
        let ids = self.ids.lock().expect("not poisoned");
        let fields = ids.space.fields(a.identity).expect("a recording keyspace");
        let wire = ids.space.wire(a.identity);
        let user = &fields[field_index(KeyField::User)];
        let signed_in = self.signed_in[a.source as usize];
        let facts = Facts {
            ip: &fields[field_index(KeyField::Ip)],
            user,
            api_key: &fields[field_index(KeyField::ApiKey)],
            endpoint: &fields[field_index(KeyField::Endpoint)],
            tier: self.tiers[a.source as usize]
                .get(&**user)
                .map(String::as_str),
            source_signed_in: signed_in,
        };
        let rotating = wire.is_some_and(Wire::rotates);
        if let (true, Some(w)) = (rotating, wire) {
            self.wires.entry(a.identity).or_insert_with(|| w.clone());
        }
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
                run.of_identity[slot] =
                    intern_rule_key(&mut run.keys, &rule.key, fields, wire, signed_in);
            }
        }
        let known = Known {
            bypass: self.stack.bypass.lets_through(&facts),
            applies,
            rotating,
        };
        drop(ids);
        self.known.insert((a.identity, a.source), known);
        known
    }

    /// This request's key under each rule that applies to it, into `keys_now`; counted per
    /// real client for the rules that report it.
    fn key_request(&mut self, a: &Arrival, known: Known) {
        let rekey = known.rotating
            && self
                .stack
                .rules
                .iter()
                .any(|r| r.key.identity_fn().is_some());
        let ids = rekey.then(|| self.ids.lock().expect("not poisoned"));
        let wire = match (&ids, self.wires.get_mut(&a.identity)) {
            (Some(_), Some(w)) => {
                w.rotate(IpAddr::V4(Ipv4Addr::from(a.forged)));
                Some(&*w)
            }
            _ => None,
        };
        for i in 0..self.rules.len() {
            if known.applies & (1 << i) == 0 {
                continue;
            }
            let rule = &self.stack.rules[i];
            let run = &mut self.rules[i];
            let key = match (&ids, wire) {
                (Some(ids), Some(w)) if rule.key.identity_fn().is_some() => {
                    let fields = ids.space.fields(a.identity).expect("a recording keyspace");
                    let signed_in = self.signed_in[a.source as usize];
                    intern_rule_key(&mut run.keys, &rule.key, fields, Some(w), signed_in)
                }
                _ => run.of_identity[a.identity as usize],
            };
            self.keys_now[i] = key;
            if self.tallies {
                run.tally.client_key(a.source, a.client, key);
            }
        }
    }
}

impl Gate for StackGate<'_> {
    fn estimate(&self, _: &Arrival) -> Option<f64> {
        None
    }

    fn decide(&mut self, a: &Arrival) -> (Decision, Detail<'_>) {
        if self.capture.len() < self.capture_limit {
            self.capture.push(*a);
        }
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
        let known = Known {
            applies: known.applies & self.by_method[usize::from(a.method & 7)],
            ..known
        };
        if known.applies == 0 {
            self.unlimited += 1;
            return unlimited;
        }
        self.key_request(a, known);
        self.decide_rules(a, known)
    }

    fn evict_idle(&mut self, now: Nanos) {
        for r in &mut self.rules {
            r.limiter.evict_idle(now);
            r.tally.sweep(now);
        }
    }
}

impl StackGate<'_> {
    fn note_memory(&mut self) {
        let mut sum = MemoryUsage::default();
        for r in &mut self.rules {
            let m = r.limiter.current();
            sum.live_keys += m.live_keys;
            sum.state_bytes += m.state_bytes;
            sum.redis_bytes += m.redis_bytes;
        }
        let p = &mut self.peak;
        p.live_keys = p.live_keys.max(sum.live_keys);
        p.state_bytes = p.state_bytes.max(sum.state_bytes);
        p.redis_bytes = p.redis_bytes.max(sum.redis_bytes);
    }

    /// The stack's decision on a request some rule applies to (its keys in `keys_now`).
    fn decide_rules(&mut self, a: &Arrival, known: Known) -> (Decision, Detail<'_>) {
        let now = a.time;
        let applying = (0..self.rules.len()).filter(|i| known.applies & (1 << i) != 0);
        self.decisions.clear();
        let mut refused = None;
        match self.stack.commit {
            Commit::AllOrNothing => {
                for i in applying.clone() {
                    let key = self.keys_now[i];
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
                        let key = self.keys_now[i];
                        let d = self.rules[i].limiter.decide(key, now);
                        self.decisions.push((i, key, d));
                    }
                }
            }
            Commit::InOrder => {
                for i in applying.clone() {
                    let key = self.keys_now[i];
                    let d = self.rules[i].limiter.decide(key, now);
                    if !d.outcome.is_admitted() {
                        refused = Some((i, d));
                        break;
                    }
                    self.decisions.push((i, key, d));
                }
            }
        }
        self.note_memory();
        if let Some((r, d)) = refused {
            for i in applying {
                let key = self.keys_now[i];
                if self.tallies {
                    self.rules[i].tally.reject(key, now, i == r);
                }
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
            if self.tallies {
                self.rules[i].tally.admit(key, now, warns);
            }
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
}

impl<'a> StackGate<'a> {
    fn new(
        stack: &'a Stack,
        scenario: &Scenario,
        ids: Arc<Mutex<Identities>>,
        tiers: Vec<FxHashMap<String, String>>,
        signed_in: Vec<Option<bool>>,
        capture_limit: usize,
    ) -> Self {
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
                tally: {
                    let tally = RuleTally::new(r.params.limit, r.params.window);
                    if r.key.identity_fn().is_some() {
                        tally.with_clients(scenario.traffic.len())
                    } else {
                        tally
                    }
                },
            })
            .collect();
        StackGate {
            stack,
            rules,
            ids,
            known: FxHashMap::default(),
            tiers,
            signed_in,
            wires: FxHashMap::default(),
            keys_now: vec![KeyId::MAX; stack.rules.len()],
            by_method: std::array::from_fn(|code| {
                stack
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.matcher.takes_method(code as u8))
                    .fold(0, |m, (i, _)| m | (1 << i))
            }),
            decisions: Vec::with_capacity(stack.rules.len()),
            bypassed: 0,
            unlimited: 0,
            warned: 0,
            peak: MemoryUsage::default(),
            tallies: true,
            capture: Vec::with_capacity(capture_limit.min(1 << 14)),
            capture_limit,
        }
    }
}

/// Arrivals kept per contender to time its stack afterwards (32 bytes each: 16 MiB at most).
const CAPTURE_LIMIT: usize = 1 << 19;

/// `(decisions, wall ns)` of `gate` deciding `arrivals` again, looped (shifted later in time
/// each pass by their span plus the longest window; at least once) until enough were timed, as the short
/// form times one limiter (`time_decisions`): the whole stack's decision (matching, keying,
/// every applying rule) per request, without the metrics.
fn time_stack(gate: &mut StackGate, arrivals: &[Arrival], window: Nanos) -> (u64, u64) {
    let mut decisions = 0u64;
    let started = Instant::now();
    if let (Some(first), Some(last)) = (arrivals.first(), arrivals.last()) {
        let span = (last.time - first.time).saturating_add(window);
        let mut offset = 0u64;
        // At least one pass, so every captured arrival is timed whatever the machine's load.
        loop {
            for a in arrivals {
                let shifted = Arrival {
                    time: (a.time - first.time).saturating_add(offset),
                    ..*a
                };
                std::hint::black_box(gate.decide(&shifted).0);
            }
            decisions += arrivals.len() as u64;
            offset = offset.saturating_add(span);
            if decisions >= super::TIMING_DECISIONS || started.elapsed() >= super::TIMING_BUDGET {
                break;
            }
        }
    }
    (decisions, started.elapsed().as_nanos() as u64)
}

/// Simulates one contender with a stack of rules (see the module docs).
pub fn run_stack<S: DecisionSink>(
    scenario: &Scenario,
    spec: &AlgorithmSpec,
    stack: &Stack,
    mut sink: Option<S>,
    measure_decisions: bool,
    progress: Option<&Progress>,
) -> Result<(AlgorithmReport, Throughput, Option<S>)> {
    let started = Instant::now();
    let all = KeySpec::new(KeyField::ALL.to_vec()).expect("non-empty");
    let layout = KeyLayout::for_sources(&scenario.traffic, Keeps::FieldsAndPaths);
    let mut space = KeySpace::with_layout(layout);
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
    let sources: Vec<Direct> = inner
        .into_iter()
        .map(|inner| {
            Direct::other(Identified {
                inner,
                ids: Arc::clone(&ids),
            })
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
                    let user = Identity::of_client(s, index, j, unspecified, |_| false).user;
                    if let Some(t) = s.population.tier(j) {
                        map.entry(user).or_insert_with(|| t.to_string());
                    }
                }
            }
            map
        })
        .collect();
    let signed_in: Vec<Option<bool>> = scenario.traffic.iter().map(source_signed_in).collect();
    let capture_limit = if measure_decisions { CAPTURE_LIMIT } else { 0 };
    let mut gate = StackGate::new(
        stack,
        scenario,
        Arc::clone(&ids),
        tiers,
        signed_in,
        capture_limit,
    );
    let mut recorder = Recorder::new(
        &scenario.policy,
        &scenario.traffic,
        scenario.duration,
        scenario.bucket,
    );
    recorder.reserve_for(&keys);
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
    let mut end = MemoryUsage::default();
    for r in &mut gate.rules {
        let e = r.limiter.current();
        end.live_keys += e.live_keys;
        end.state_bytes += e.state_bytes;
        end.redis_bytes += e.redis_bytes;
    }
    let peak = gate.peak;
    // A fresh stack (fresh limiters, no tallies) decides the captured arrivals again, timed.
    let arrivals = std::mem::take(&mut gate.capture);
    let mut fresh = StackGate::new(
        stack,
        scenario,
        Arc::clone(&ids),
        gate.tiers.clone(),
        gate.signed_in.clone(),
        0,
    );
    fresh.tallies = false;
    let timed = time_stack(&mut fresh, &arrivals, longest_window(stack));
    let mut report = recorder.finish(&scenario.traffic, &spec.name, spec.params, &keys, peak, end);
    report.bypassed = Some(gate.bypassed);
    report.unlimited = Some(gate.unlimited);
    report.warned = Some(gate.warned);
    if crate::scenario::deployment::uses_deployments(scenario) {
        report.deployment = Some(crate::metrics::DeploymentReport::single_node());
    }
    let source_names: Vec<String> = scenario.traffic.iter().map(|s| s.name.clone()).collect();
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
                &source_names,
            )
        })
        .collect();
    let throughput = Throughput {
        algorithm: spec.name.clone(),
        decisions_timed: timed.0,
        decision_elapsed_ns: timed.1,
        decisions_per_sec: timed.0 as f64 / (timed.1 as f64 / 1e9).max(1e-9),
        simulation_elapsed_ns: elapsed.as_nanos() as u64,
        simulated_requests_per_sec: report.offered as f64 / elapsed.as_secs_f64().max(1e-9),
    };
    Ok((report, throughput, sink))
}
