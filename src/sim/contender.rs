//! Running a `[[contender]]`: its rules stacked in front of the same traffic.
//!
//! Sources render every request's whole identity (all key fields) into a keyspace of their
//! own; a thin wrapper maps each identity to the policy's key, so the metrics see exactly the
//! keys of the short form, and keeps the identity on the arrival for the rules, each of which
//! keys it its own way. What a rule needs to know of a request (route, user, tier, bypass) is
//! worked out once per identity and source, not per request.

use super::engine::{Capture, Detail, Gate, opening};
use super::harness::{ARRIVAL_CAPTURE_LIMIT, Captured, Contest, Setup, time_gate};
use crate::algorithms::{
    Cost, Decision, KeyId, KeyedLimiter, Limiter, LimiterVisitor, MemoryUsage, Outcome, Params,
};
use crate::error::Result;
use crate::metrics::{
    Deciders, GateFigures, QuotaTally, RuleDecision, RuleTally, Timing, TokenTally,
};
use crate::policy::identity::Seen;
use crate::policy::{KeyField, KeySpec};
use crate::scenario::Scenario;
use crate::scenario::contender::{
    Accounting, Charge, Commit, Facts, RuleUnit, Stack, longest_window, source_signed_in,
};
use crate::time::Nanos;
use crate::traffic::via::Wire;
use crate::traffic::{self, Arrival, ClientId, Direct, Identity, Keeps, KeyLayout, KeySpace};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{IpAddr, Ipv4Addr};

/// One rule's keyed limiter, whatever its algorithm.
trait RuleLimiter: Send {
    fn decide(&mut self, key: KeyId, now: Nanos, cost: Cost) -> Decision;
    fn peek(&self, key: KeyId, now: Nanos, cost: Cost) -> Decision;
    fn evict_idle(&mut self, now: Nanos);
    /// Memory held now (O(1) after a decision).
    fn current(&self) -> MemoryUsage;
    fn refund(&mut self, key: KeyId, now: Nanos, charged_at: Nanos, units: Cost);
    fn charge(&mut self, key: KeyId, now: Nanos, units: Cost);

    /// Decides on `charge`, or only checks it (a peek, the state left as it is: what it
    /// advertises remaining is what the unit checked leaves, plus that unit).
    #[inline]
    fn decide_charge(&mut self, key: KeyId, now: Nanos, charge: Charge) -> Decision {
        if !charge.check {
            return self.decide(key, now, charge.units);
        }
        let mut d = self.peek(key, now, charge.units);
        if d.outcome.is_admitted() {
            d.remaining += u64::from(charge.units);
        }
        d
    }
}

impl<L: Limiter> RuleLimiter for KeyedLimiter<L> {
    fn decide(&mut self, key: KeyId, now: Nanos, cost: Cost) -> Decision {
        KeyedLimiter::decide_n(self, key, now, cost)
    }
    fn peek(&self, key: KeyId, now: Nanos, cost: Cost) -> Decision {
        KeyedLimiter::peek_n(self, key, now, cost)
    }
    fn evict_idle(&mut self, now: Nanos) {
        KeyedLimiter::evict_idle(self, now)
    }
    fn current(&self) -> MemoryUsage {
        KeyedLimiter::memory(self)
    }
    fn refund(&mut self, key: KeyId, now: Nanos, charged_at: Nanos, units: Cost) {
        KeyedLimiter::refund(self, key, now, charged_at, units)
    }
    fn charge(&mut self, key: KeyId, now: Nanos, units: Cost) {
        KeyedLimiter::charge(self, key, now, units)
    }
}

/// What an admitted request's response settles with one rule when it ends: units given back
/// (a refund, a reservation set right) or charged (tokens counted after). Ordered by when the
/// response ends, then as the requests came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Settlement {
    ends: Nanos,
    order: u64,
    rule: usize,
    key: KeyId,
    charged_at: Nanos,
    units: Cost,
    charge: bool,
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
            let c = self.to_client.len() as ClientId;
            // A replayed record without a user is the client named like its policy key, as
            // the short form names it, not like its whole identity (which holds its route).
            let id = match self.space.client_key(c) {
                Some(k) => {
                    let name = keys.name(self.to_key[k as usize]).to_owned();
                    keys.intern_client(&name)
                }
                None => keys.intern_client(self.space.client_name(c)),
            };
            self.to_client.push(id);
        }
        // Production's routes, numbered in the identities' keyspace, as the metrics name them.
        while keys.routes() < self.space.routes() {
            keys.intern_route(self.space.route_name(keys.routes() + 1));
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
    /// Per rule key, its first client ([`NO_CLIENT`] before any, [`SHARED_KEY`] once another
    /// used it): a needless refusal on a shared key is collateral (`metrics::harm`).
    users: Vec<ClientId>,
    /// A rule counting tokens: its token figures.
    tokens: Option<TokenTally>,
    /// A rule reserving tokens up front: the same rule charging each request what it used,
    /// whose admissions judge the rule's refusals (`refused_for_reservations`).
    exact: Option<Box<dyn RuleLimiter>>,
    /// A calendar rule: its calendar and the instant virtual time 0 stands for. Its keys go
    /// idle together when a period ends, so they are evicted then, not scanned in vain at
    /// every sweep (a month's keys stay live all month).
    calendar: Option<(&'static crate::calendar::Calendar, u64)>,
    /// A calendar rule's next eviction: the end of the period of its last one (virtual time).
    next_evict: Nanos,
}

const NO_CLIENT: ClientId = ClientId::MAX;
const SHARED_KEY: ClientId = ClientId::MAX - 1;

impl RuleRun {
    /// `client` used rule key `key`: whether another client had used it.
    #[inline]
    fn note_user(&mut self, key: KeyId, client: ClientId) -> bool {
        let slot = key as usize;
        if self.users.len() <= slot {
            self.users.resize(slot + 1, NO_CLIENT);
        }
        let first = &mut self.users[slot];
        if *first == NO_CLIENT {
            *first = client;
        } else if *first != client {
            *first = SHARED_KEY;
        }
        *first == SHARED_KEY
    }
}

/// A contender's rules as the engine's [`Gate`].
pub(super) struct StackGate<'a> {
    stack: &'a Stack,
    rules: Vec<RuleRun>,
    /// Every request's whole identity, which the sources intern into ([`Gate::identities`]).
    ids: Identities,
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
    decisions: Vec<RuleDecision>,
    bypassed: u64,
    /// Requests a dry run admitted that its rules refused.
    would_refuse: u64,
    unlimited: u64,
    warned: u64,
    /// The most memory the rules held together, noted after every request they decided (each
    /// field on its own, as a single limiter notes its peak).
    peak: MemoryUsage,
    /// Whether the rules' tallies (metrics, not decisions) are kept: not while timing.
    tallies: bool,
    /// Settlements not yet due, soonest first (only for rules with `refunds`, or counting
    /// tokens that responses settle).
    settlements: BinaryHeap<Reverse<Settlement>>,
    settlements_made: u64,
    /// Per source, how long after its admission a response ends (`response_time`).
    response_time: Vec<Nanos>,
    /// Per source, its prompts' characters per token, in thousandths (`chars_per_token`).
    milli_chars: Vec<u32>,
    /// Whether a rule's charges change when responses end.
    settling: bool,
    /// Whether a rule counts tokens (and keeps their figures).
    counts_tokens: bool,
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
        let space = &self.ids.space;
        let fields = space.fields(a.identity).expect("a recording keyspace");
        let wire = space.wire(a.identity);
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
        let wire = match self.wires.get_mut(&a.identity).filter(|_| rekey) {
            Some(w) => {
                w.rotate(IpAddr::V4(Ipv4Addr::from(a.forged)));
                Some(&*w)
            }
            None => None,
        };
        for i in 0..self.rules.len() {
            if known.applies & (1 << i) == 0 {
                continue;
            }
            let rule = &self.stack.rules[i];
            let run = &mut self.rules[i];
            let key = match wire {
                Some(w) if rule.key.identity_fn().is_some() => {
                    let fields = self
                        .ids
                        .space
                        .fields(a.identity)
                        .expect("a recording keyspace");
                    let signed_in = self.signed_in[a.source as usize];
                    intern_rule_key(&mut run.keys, &rule.key, fields, Some(w), signed_in)
                }
                _ => run.of_identity[a.identity as usize],
            };
            self.keys_now[i] = key;
            if self.tallies {
                run.tally.client_key(a.source, a.client, key);
                run.note_user(key, a.client);
            }
        }
    }
}

impl Gate for StackGate<'_> {
    fn estimate(&self, _: &Arrival) -> Option<f64> {
        None
    }

    fn identities(&mut self) -> Option<&mut KeySpace> {
        Some(&mut self.ids.space)
    }

    fn resolve(&mut self, a: &mut Arrival, keys: &mut KeySpace) {
        let (key, client) = self.ids.map(a.key, a.client, keys);
        a.identity = a.key;
        a.key = key;
        a.client = client;
    }

    fn decide(&mut self, a: &Arrival) -> (Decision, Detail<'_>) {
        let now = a.time;
        if self.settlements.peek().is_some_and(|s| s.0.ends <= now) {
            self.settle(now);
        }
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
            match r.calendar {
                Some(_) if now < r.next_evict => {}
                Some((calendar, epoch)) => {
                    r.limiter.evict_idle(now);
                    let (_, end) = calendar.bounds(epoch.saturating_add(now));
                    r.next_evict = end.saturating_sub(epoch);
                }
                None => r.limiter.evict_idle(now),
            }
            r.tally.sweep(now);
            if let Some(t) = &mut r.tokens {
                t.sweep(now);
            }
            if let Some(exact) = &mut r.exact {
                exact.evict_idle(now);
            }
        }
    }
}

impl StackGate<'_> {
    /// Settles every response ended by `now`, in the order they ended.
    #[cold]
    fn settle(&mut self, now: Nanos) {
        while let Some(&Reverse(s)) = self.settlements.peek() {
            if s.ends > now {
                break;
            }
            self.settlements.pop();
            let run = &mut self.rules[s.rule];
            if s.charge {
                run.limiter.charge(s.key, s.ends, s.units);
            } else {
                run.limiter.refund(s.key, s.ends, s.charged_at, s.units);
            }
            if let Some(t) = &mut run.tokens {
                t.settled(u64::from(s.units), s.charge);
            }
        }
    }

    /// Schedules what the response of `a`, admitted and served after `delay`, settles with
    /// each rule that admitted it: a refund where the rule refunds, the tokens it used where
    /// the rule counts them when responses end.
    #[cold]
    fn schedule_settlements(&mut self, a: &Arrival, delay: Nanos) {
        let ends = a
            .time
            .saturating_add(delay)
            .saturating_add(self.response_time[a.source as usize])
            .saturating_add(a.stream);
        for &(i, key, d, _) in &self.decisions {
            let rule = &self.stack.rules[i];
            if !d.outcome.is_admitted() {
                continue;
            }
            let (units, charge) = match rule.unit {
                RuleUnit::Tokens(t) => {
                    let s = t.settles(&a.tokens, self.milli_chars[usize::from(a.source)]);
                    (s.unsigned_abs().min(u64::from(Cost::MAX)) as Cost, s > 0)
                }
                _ if rule.refunds => (a.refund, false),
                _ => (0, false),
            };
            if units == 0 {
                continue;
            }
            let order = self.settlements_made;
            self.settlements_made += 1;
            self.settlements.push(Reverse(Settlement {
                ends,
                order,
                rule: i,
                key,
                charged_at: a.time,
                units,
                charge,
            }));
        }
    }

    /// What follows the decision on `a` (`admitted`, served after `delay`; else refused by
    /// rule `refused_by`) under the rules of `applies`: what its response will settle, and
    /// its tokens tallied.
    #[inline]
    fn follow_up(
        &mut self,
        a: &Arrival,
        (admitted, delay): (bool, Nanos),
        applies: u64,
        refused_by: Option<usize>,
    ) {
        if admitted && self.settling {
            self.schedule_settlements(a, delay);
        }
        if self.tallies && self.counts_tokens {
            self.tally_tokens(a, applies, admitted, refused_by);
        }
    }

    /// Tallies `a`'s tokens under each applying rule counting them (bit i of `applies`):
    /// the contender `admitted` it, or rule `refused_by` refused it. A reserving rule's exact
    /// twin decides it too.
    #[cold]
    fn tally_tokens(
        &mut self,
        a: &Arrival,
        applies: u64,
        admitted: bool,
        refused_by: Option<usize>,
    ) {
        for (i, run) in self.rules.iter_mut().enumerate() {
            let (Some(tally), RuleUnit::Tokens(t)) = (&mut run.tokens, self.stack.rules[i].unit)
            else {
                continue;
            };
            if applies & (1 << i) == 0 {
                continue;
            }
            let key = self.keys_now[i];
            let used = t.used(&a.tokens);
            let exact_admits = match &mut run.exact {
                Some(exact) if used > 0 => exact.decide(key, a.time, used).outcome.is_admitted(),
                _ => true,
            };
            if admitted {
                let chars = self.milli_chars[usize::from(a.source)];
                let up_front = u64::from(t.up_front(&a.tokens, chars));
                tally.admit(key, a.time, a.source, up_front, u64::from(used));
            } else {
                tally.reject(a.source, refused_by == Some(i), exact_admits);
            }
        }
    }

    fn rules_dry(&self, rule: usize) -> bool {
        self.stack.rules[rule].dry_run
    }

    /// The memory the rules hold together now.
    fn current(&mut self) -> MemoryUsage {
        self.rules.iter_mut().map(|r| r.limiter.current()).sum()
    }

    /// When each deciding rule's key next admits (for the back-test's causes).
    #[cold]
    fn note_openings(&mut self, a: &Arrival) {
        for (i, key, _, opens) in &mut self.decisions {
            let charge = self.stack.rules[*i].weigh(a, self.milli_chars[usize::from(a.source)]);
            let next = self.rules[*i].limiter.peek(*key, a.time, charge.units);
            *opens = opening(&next, a.time);
        }
    }

    fn note_memory(&mut self) {
        self.peak = self.peak.max(self.current());
    }

    /// The stack's decision on a request some rule applies to (its keys in `keys_now`).
    /// Decides the applying rules (`applies`, one bit per rule) by the stack's `commit`: the
    /// refusing rule and its decision, or `None` with every rule's decision in `decisions`.
    #[inline]
    fn commit_rules(&mut self, a: &Arrival, applies: u64) -> Option<(usize, Decision)> {
        let now = a.time;
        let rules = &self.stack.rules;
        let chars = self.milli_chars[usize::from(a.source)];
        let weigh = |i: usize| rules[i].weigh(a, chars);
        let applying = (0..self.rules.len()).filter(|i| applies & (1 << i) != 0);
        self.decisions.clear();
        let mut refused = None;
        match self.stack.commit {
            Commit::AllOrNothing => {
                for i in applying.clone() {
                    let key = self.keys_now[i];
                    if !self.rules[i]
                        .limiter
                        .peek(key, now, weigh(i).units)
                        .outcome
                        .is_admitted()
                    {
                        // The refusing rule records its refusal as its algorithm does (a
                        // profile may count the hit or start a block); the others nothing.
                        let d = self.rules[i].limiter.decide_charge(key, now, weigh(i));
                        refused = Some((i, d));
                        break;
                    }
                }
                if refused.is_none() {
                    for i in applying.clone() {
                        let key = self.keys_now[i];
                        let d = self.rules[i].limiter.decide_charge(key, now, weigh(i));
                        self.decisions.push((i, key, d, 0));
                    }
                }
            }
            Commit::InOrder => {
                for i in applying.clone() {
                    let key = self.keys_now[i];
                    let d = self.rules[i].limiter.decide_charge(key, now, weigh(i));
                    if !d.outcome.is_admitted() {
                        refused = Some((i, d));
                        break;
                    }
                    self.decisions.push((i, key, d, 0));
                }
            }
            Commit::EveryRule => {
                // Every rule counts the request; the first refusing one (in rule order) names it.
                for i in applying {
                    let key = self.keys_now[i];
                    let d = self.rules[i].limiter.decide_charge(key, now, weigh(i));
                    if d.outcome.is_admitted() {
                        self.decisions.push((i, key, d, 0));
                        continue;
                    }
                    // A dry-run rule names the refusal only when no enforcing rule refuses.
                    match refused {
                        None => refused = Some((i, d)),
                        Some((r, dry)) if self.rules_dry(r) && !self.rules_dry(i) => {
                            self.decisions.push((r, self.keys_now[r], dry, 0));
                            refused = Some((i, d));
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        refused
    }

    fn decide_rules(&mut self, a: &Arrival, known: Known) -> (Decision, Detail<'_>) {
        let now = a.time;
        let refused = self.commit_rules(a, known.applies);
        if a.logged.is_some() {
            self.note_openings(a);
        }
        let applying = (0..self.rules.len()).filter(|i| known.applies & (1 << i) != 0);
        self.note_memory();
        if let Some((r, d)) = refused {
            for i in applying {
                let key = self.keys_now[i];
                if self.tallies {
                    self.rules[i].tally.reject(key, now, i == r);
                }
            }

            let key = self.keys_now[r];
            self.decisions.push((r, key, d, 0));
            // A dry-run rule admits what it refused; its refusal counted as its commit counts.
            let dry = self.stack.rules[r].dry_run;
            self.follow_up(a, (dry, 0), known.applies, Some(r));
            let rule = &self.stack.rules[r];
            self.would_refuse += dry as u64;
            let detail = Detail {
                rule: &rule.name,
                warned: false,
                unlimited: false,
                shared_key: Some(self.rules[r].users.get(key as usize) == Some(&SHARED_KEY)),
                deciders: Deciders {
                    rules: &self.decisions,
                    opens_at: 0,
                    refuse_status: rule.refuse_status,
                    would_refuse: dry,
                },
            };
            return (
                Decision {
                    outcome: if dry { Outcome::Allow } else { d.outcome },
                    remaining: 0,
                    reset_at: d.reset_at,
                },
                detail,
            );
        }
        let mut delay = 0;
        let mut warned = false;
        let mut binding = self.decisions[0];
        for &(i, key, d, _) in &self.decisions {
            let rule = &self.stack.rules[i];
            // nginx's dry run accounts a request it would delay, and serves it at once.
            if let (Outcome::Delay(x), false) = (d.outcome, rule.dry_run) {
                delay = delay.max(x);
            }
            let used = rule.params().limit - d.remaining.min(rule.params().limit);
            let warns = rule.warn_from.is_some_and(|w| used >= w);
            warned |= warns;
            if self.tallies {
                self.rules[i].tally.admit(key, now, warns);
            }
            if d.remaining < binding.2.remaining {
                binding = (i, key, d, 0);
            }
        }
        self.warned += warned as u64;
        self.follow_up(a, (true, delay), known.applies, None);
        let outcome = if delay > 0 {
            Outcome::Delay(delay)
        } else {
            Outcome::Allow
        };
        let rule = &self.stack.rules[binding.0];
        let detail = Detail {
            rule: &rule.name,
            warned,
            unlimited: false,
            shared_key: Some(false),
            deciders: Deciders {
                rules: &self.decisions,
                opens_at: 0,
                refuse_status: rule.refuse_status,
                would_refuse: false,
            },
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
        ids: Identities,
        tiers: Vec<FxHashMap<String, String>>,
        signed_in: Vec<Option<bool>>,
    ) -> Self {
        let rules = stack
            .rules
            .iter()
            .map(|r| RuleRun {
                limiter: r.limiter.visit(Build),
                keys: KeySpace::new(),
                of_identity: Vec::new(),
                users: Vec::new(),
                tally: {
                    let limit = r.params().limit;
                    let tally = match r.limiter.calendar_clock() {
                        Some((calendar, epoch_ns)) => RuleTally::calendar(
                            QuotaTally::new(
                                calendar,
                                epoch_ns,
                                limit,
                                (scenario.duration, scenario.bucket),
                            ),
                            limit,
                        ),
                        None => RuleTally::new(limit, r.params().window),
                    };
                    if r.key.identity_fn().is_some() {
                        tally.with_clients(scenario.traffic.len())
                    } else {
                        tally
                    }
                },
                tokens: match r.unit {
                    RuleUnit::Tokens(t) => Some(TokenTally::new(
                        r.params().window,
                        t.accounting != Accounting::After,
                        scenario.traffic.len(),
                        (scenario.duration, scenario.bucket),
                    )),
                    _ => None,
                },
                exact: match r.unit {
                    RuleUnit::Tokens(t) if t.accounting != Accounting::After => {
                        Some(r.limiter.visit(Build))
                    }
                    _ => None,
                },
                calendar: r.limiter.calendar_clock(),
                next_evict: 0,
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
            would_refuse: 0,
            unlimited: 0,
            warned: 0,
            peak: MemoryUsage::default(),
            tallies: true,
            settlements: BinaryHeap::new(),
            settlements_made: 0,
            response_time: scenario
                .traffic
                .iter()
                .map(|s| s.population.costs.response_time)
                .collect(),
            milli_chars: scenario
                .traffic
                .iter()
                .map(|s| s.population.milli_chars_per_token)
                .collect(),
            settling: stack.rules.iter().any(|r| match r.unit {
                RuleUnit::Tokens(t) => t.settles_later(),
                _ => r.refunds,
            }),
            counts_tokens: stack
                .rules
                .iter()
                .any(|r| matches!(r.unit, RuleUnit::Tokens(_))),
        }
    }
}

/// A contender's stack of rules as the harness runs it (see the module docs).
pub(super) struct StackContest<'a> {
    stack: &'a Stack,
    scenario: &'a Scenario,
    /// Built with the sources, then owned by the gate.
    ids: Option<Identities>,
    tiers: Vec<FxHashMap<String, String>>,
    signed_in: Vec<Option<bool>>,
}

impl<'a> StackContest<'a> {
    pub fn new(scenario: &'a Scenario, stack: &'a Stack) -> Self {
        StackContest {
            stack,
            scenario,
            ids: None,
            tiers: scenario.traffic.iter().enumerate().map(tiers).collect(),
            signed_in: scenario.traffic.iter().map(source_signed_in).collect(),
        }
    }

    fn build_gate(&self, ids: Identities) -> StackGate<'a> {
        let (tiers, signed_in) = (self.tiers.clone(), self.signed_in.clone());
        StackGate::new(self.stack, self.scenario, ids, tiers, signed_in)
    }
}

/// Per user of source `index`, its tier (for a source with tiers).
fn tiers((index, s): (usize, &traffic::SourceSpec)) -> FxHashMap<String, String> {
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
}

impl<'a> Contest for StackContest<'a> {
    type Gate = Captured<StackGate<'a>>;

    /// The metrics' keys only: the identities live in the stack's own keyspace.
    fn keyspace(&self, _: &Scenario, _: bool) -> KeySpace {
        KeySpace::new()
    }

    fn sources(&mut self, scenario: &Scenario, keys: &mut KeySpace) -> Result<Vec<Direct>> {
        let all = KeySpec::new(KeyField::ALL.to_vec()).expect("non-empty");
        let layout = KeyLayout::for_sources(&scenario.traffic, Keeps::FieldsAndPaths);
        let mut space = KeySpace::with_layout(layout);
        let inner = traffic::build_sources(&scenario.traffic, &all, scenario.seed, &mut space)?;
        let mut ids = Identities {
            space,
            policy: scenario.policy.key.clone(),
            to_key: Vec::new(),
            to_client: Vec::new(),
        };
        // Every synthetic client's key up front, in the order the short form registers them.
        if !ids.space.is_empty() {
            let (last, clients) = (ids.space.len() - 1, ids.space.clients());
            ids.map(last as KeyId, clients.saturating_sub(1) as ClientId, keys);
        }
        self.ids = Some(ids);
        Ok(inner)
    }

    fn gate(&mut self, setup: &Setup, _: &KeySpace) -> Result<Self::Gate> {
        let limit = if setup.timed {
            ARRIVAL_CAPTURE_LIMIT
        } else {
            0
        };
        let ids = self.ids.take().ok_or_else(|| {
            crate::error::Error::Internal("a stack's gate was built before its sources".into())
        })?;
        Ok(Captured::new(self.build_gate(ids), limit))
    }

    fn params(&self) -> Params {
        let first = &self.stack.rules[0];
        first.params()
    }

    fn rule_params(&self) -> Vec<Params> {
        self.stack.rules.iter().map(|r| r.params()).collect()
    }

    fn evict_every(&self) -> Nanos {
        self.scenario.policy.window
    }

    fn memory(&self, gate: &mut Self::Gate) -> (MemoryUsage, MemoryUsage) {
        let end = gate.gate.current();
        (gate.gate.peak, end)
    }

    fn figures(&self, gate: &mut Self::Gate) -> GateFigures {
        let gate = &mut gate.gate;
        // Responses still streaming when the traffic ended settle, for the token figures.
        gate.settle(Nanos::MAX);
        let source_names: Vec<String> = self
            .scenario
            .traffic
            .iter()
            .map(|s| s.name.clone())
            .collect();
        let rules = std::mem::take(&mut gate.rules)
            .into_iter()
            .zip(&self.stack.rules)
            .map(|(run, rule)| {
                let (name, key) = (rule.name.clone(), rule.key.clone());
                let mut report = run.tally.finish(
                    name,
                    rule.limiter.kind().name(),
                    rule.params(),
                    key,
                    &source_names,
                    |k| run.keys.name(k).to_string(),
                );
                if let (Some(tally), RuleUnit::Tokens(t)) = (run.tokens, rule.unit) {
                    let names = (t.kind.name(), t.accounting.name());
                    let key_name = |k| run.keys.name(k).to_string();
                    report.tokens =
                        Some(tally.finish(names, rule.params().limit, key_name, &source_names));
                }
                report
            })
            .collect();
        GateFigures {
            bypassed: Some(gate.bypassed),
            would_refuse: self.stack.dry_runs().then_some(gate.would_refuse),
            unlimited: Some(gate.unlimited),
            warned: Some(gate.warned),
            rules,
            deployment: None,
        }
    }

    /// A fresh stack (fresh limiters, no tallies) decides the captured arrivals again: the
    /// whole stack's decision (matching, keying, every applying rule) per request, without
    /// the metrics.
    fn time(self, gate: Self::Gate, _: &Capture) -> Timing {
        let mut fresh = self.build_gate(gate.gate.ids);
        fresh.tallies = false;
        time_gate(&mut fresh, &gate.arrivals, longest_window(self.stack))
    }
}
