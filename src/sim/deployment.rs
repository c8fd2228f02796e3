//! A limiter deployed on several replicas behind a balancer, with its state local to each
//! replica, in one shared store reached with a round trip, or cached per replica and synced
//! (docs/distributed.md).
//!
//! The deployment is a [`Gate`]: the engine still hands it arrivals in time order and gets a
//! decision back at once; what happens later in virtual time (a racy write landing in the store,
//! an `EXPIRE`, a sync) is kept in the gate and applied before the first operation it precedes.
//! The store serves operations in the order they were sent (one FIFO connection), so its times
//! never decrease and a varying round trip delays operations but does not reorder them.
//!
//! Time handed to the algorithm is the replica's clock (`t + r × clock_offset`), as a script
//! gets it as an argument; a key's state never goes back in time: an operation older than the
//! state's last one is decided at the state's time.

use super::engine::{Detail, Gate};
use crate::algorithms::{
    Cost, Decision, KeyId, KeyTable, Limiter, MemoryUsage, Outcome, keyspace_bytes, redis, slots,
};
use crate::metrics::DeploymentTally;
use crate::rng::{Stream, rng};
use crate::scenario::deployment::{Balancer, Deployment, FailMode, Rtt, Store};
use crate::time::Nanos;
use crate::traffic::Arrival;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use rustc_hash::FxHashMap;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One key's state where it is kept, with the time of its last operation and a version
/// bumped by each write (to count lost updates).
#[derive(Clone)]
struct Slot<S> {
    state: S,
    last: Nanos,
    version: u64,
}

/// A table of states in hashbrown's layout, whose bytes the memory model reads.
type Table<S> = KeyTable<Slot<S>>;

/// A racy write on its way to the store.
struct Write<S> {
    land: Nanos,
    seq: u64,
    key: KeyId,
    state: S,
    last: Nanos,
    read_version: u64,
}

impl<S> PartialEq for Write<S> {
    fn eq(&self, o: &Self) -> bool {
        (self.land, self.seq) == (o.land, o.seq)
    }
}
impl<S> Eq for Write<S> {}
impl<S> PartialOrd for Write<S> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<S> Ord for Write<S> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.land, self.seq).cmp(&(o.land, o.seq))
    }
}

/// An `INCR`/`EXPIRE` counter in the store.
#[derive(Clone, Copy, Default)]
struct Counter {
    count: u64,
    expires: Option<Nanos>,
    /// The replica died between `INCR` and `EXPIRE`: the key never expires.
    stuck: bool,
}

/// A replica's cached copy of a key.
struct Copy<S> {
    slot: Slot<S>,
    /// Admitted requests since the last sync.
    dirty: bool,
}

/// The state of a deployment, one variant per [`Store`].
enum Mode<S> {
    Local(Vec<Table<S>>),
    Atomic(Table<S>),
    Racy(Racy<S>),
    Incr(Incr),
    Cached {
        store: Table<S>,
        copies: Vec<FxHashMap<KeyId, Copy<S>>>,
        /// Requests the replicas admitted since the last sync, in time order, at the time each
        /// was decided: replayed into the store at the next sync.
        pending: Vec<(KeyId, Nanos, Cost)>,
        next_sync: Nanos,
        every: Nanos,
    },
}

/// An `INCR`/`EXPIRE` store: its counters, and the chance a replica dies between the two.
struct Incr {
    store: KeyTable<Counter>,
    die_chance: f64,
}

/// A racy shared store: the states, and the writes on their way to it.
struct Racy<S> {
    store: Table<S>,
    writes: BinaryHeap<Reverse<Write<S>>>,
    seq: u64,
}

/// How a round trip's time is drawn (an [`Rtt`] ready to sample).
enum Draw {
    Constant(Nanos),
    Uniform { min: Nanos, max: Nanos },
    LogNormal(LogNormal<f64>),
}

/// The round trips between the replicas and the store.
struct Link {
    draw: Draw,
    rng: ChaCha8Rng,
    /// The store's time: operations are served in the order they were sent.
    store_time: Nanos,
}

/// The deployment gate (see the module docs).
pub struct Deployed<'d, L: Limiter> {
    limiter: L,
    dep: &'d Deployment,
    /// The algorithm's limit and window (the `incr_then_expire` counter's).
    limit: u64,
    window: Nanos,
    mode: Mode<L::State>,
    link: Link,
    next_replica: u64,
    balance_rng: ChaCha8Rng,
    die_rng: ChaCha8Rng,
    pub tally: DeploymentTally,
    pub peak: MemoryUsage,
    pub end: MemoryUsage,
}

impl Link {
    /// One round trip's time.
    fn rtt(&mut self) -> Nanos {
        match &self.draw {
            Draw::Constant(x) => *x,
            Draw::Uniform { min, max } => self.rng.random_range(*min..=*max),
            // Floating point, rounded to whole nanoseconds (the draw only).
            Draw::LogNormal(d) => d.sample(&mut self.rng).round().min(u64::MAX as f64) as Nanos,
        }
    }

    /// Sends one operation at `sent`: when the store serves it (FIFO) and when its reply is
    /// back at the replica.
    fn round_trip(&mut self, sent: Nanos) -> (Nanos, Nanos) {
        let rtt = self.rtt();
        let served = sent.saturating_add(rtt / 2).max(self.store_time);
        self.store_time = served;
        (served, served.saturating_add(rtt - rtt / 2))
    }
}

/// Decides at the replica on `slot` at the replica's `clock` (never before the slot's last
/// operation): the decision and the time it was taken at.
fn decide_on<L: Limiter>(
    limiter: &L,
    slot: &mut Slot<L::State>,
    clock: Nanos,
    cost: Cost,
) -> (Decision, Nanos) {
    let now = clock.max(slot.last);
    slot.last = now;
    (limiter.decide_n(&mut slot.state, now, cost), now)
}

/// A key's state as the limiter starts it at `clock`.
fn fresh<L: Limiter>(limiter: &L, clock: Nanos) -> Slot<L::State> {
    Slot {
        state: limiter.new_state(clock),
        last: clock,
        version: 0,
    }
}

/// A 64-bit mix (SplitMix64's finaliser): the balancer's hash of a client or a key.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl<'d, L: Limiter> Deployed<'d, L> {
    /// `limiter` is the algorithm each replica (or the store's script) runs, with the
    /// replica's parameters ([`Deployment::replica_params`]); `seed` the scenario's.
    pub fn new(limiter: L, limit: u64, window: Nanos, dep: &'d Deployment, seed: u64) -> Self {
        let n = dep.replicas as usize;
        let mode = match dep.store {
            Store::Local { .. } => Mode::Local((0..n).map(|_| Table::default()).collect()),
            Store::Atomic => Mode::Atomic(Table::default()),
            Store::Racy => Mode::Racy(Racy {
                store: Table::default(),
                writes: BinaryHeap::new(),
                seq: 0,
            }),
            Store::IncrThenExpire { die_chance } => Mode::Incr(Incr {
                store: KeyTable::default(),
                die_chance,
            }),
            Store::Cached { sync_every } => Mode::Cached {
                store: Table::default(),
                copies: (0..n).map(|_| FxHashMap::default()).collect(),
                pending: Vec::new(),
                next_sync: sync_every,
                every: sync_every,
            },
        };
        let draw = match dep.rtt {
            Rtt::Constant(x) => Draw::Constant(x),
            Rtt::Uniform { min, max } => Draw::Uniform { min, max },
            Rtt::LogNormal { median, sigma } => Draw::LogNormal(
                LogNormal::new((median.max(1) as f64).ln(), sigma).expect("validated sigma"),
            ),
        };
        Deployed {
            limiter,
            dep,
            limit,
            window,
            mode,
            link: Link {
                draw,
                rng: rng(seed, Stream::Deployment, 0),
                store_time: 0,
            },
            next_replica: 0,
            balance_rng: rng(seed, Stream::Deployment, 1),
            die_rng: rng(seed, Stream::Deployment, 2),
            tally: DeploymentTally::default(),
            peak: MemoryUsage::default(),
            end: MemoryUsage::default(),
        }
    }

    /// The limiter each replica runs (to deploy it afresh).
    pub fn into_limiter(self) -> L {
        self.limiter
    }

    /// The replica the balancer sends `a` to.
    fn replica(&mut self, a: &Arrival) -> usize {
        let n = self.dep.replicas as u64;
        let r = match self.dep.balancer {
            Balancer::RoundRobin => {
                let r = self.next_replica % n;
                self.next_replica += 1;
                r
            }
            Balancer::Random => self.balance_rng.random_range(0..n),
            Balancer::ClientHash => mix(a.client as u64) % n,
            Balancer::KeyHash => mix(a.key as u64) % n,
        };
        r as usize
    }

    /// Applies the racy writes that reached the store by `at`.
    fn land_writes(&mut self, at: Nanos) {
        if let Mode::Racy(racy) = &mut self.mode {
            racy.land(at, &mut self.tally);
        }
    }

    /// Runs the cached store's syncs due by `t`.
    fn sync_due(&mut self, t: Nanos) {
        loop {
            let Mode::Cached {
                store,
                copies,
                pending,
                next_sync,
                every,
            } = &mut self.mode
            else {
                return;
            };
            if *next_sync > t {
                return;
            }
            let at = *next_sync;
            if self.dep.outage_at(at).is_none() {
                // Every replica pushes what it admitted (replayed into the store's state in
                // time order, as the algorithm counts), then pulls the keys it used.
                self.tally.syncs += 1;
                for &(key, time, cost) in pending.iter() {
                    let slot = store.entry(key).or_insert_with(|| Slot {
                        state: self.limiter.new_state(time),
                        last: time,
                        version: 0,
                    });
                    decide_on(&self.limiter, slot, time, cost);
                }
                pending.clear();
                for copy in copies.iter_mut() {
                    copy.retain(|key, c| {
                        if !c.dirty {
                            return false;
                        }
                        self.tally.store_ops += 2;
                        if let Some(s) = store.get(key) {
                            c.slot = s.clone();
                        }
                        c.dirty = false;
                        true
                    });
                }
            }
            let idle = pending.is_empty() && copies.iter().all(|c| c.is_empty());
            *next_sync = if idle {
                (t / *every).saturating_add(1).saturating_mul(*every)
            } else {
                at.saturating_add(*every)
            };
        }
    }

    /// The memory the deployment holds now: the store's keyspace (or every replica's, `local`),
    /// in the memory model of every keyed table ([`keyspace_bytes`]): one replica with a local
    /// store holds what the short form does.
    pub fn memory(&self) -> MemoryUsage {
        fn add<L: Limiter>(m: &mut MemoryUsage, t: &Table<L::State>) {
            let mut heap = 0;
            for s in t.values() {
                heap += L::heap_bytes(&s.state);
                m.redis_bytes += L::redis_bytes(&s.state);
            }
            m.live_keys += t.len();
            m.state_bytes += keyspace_bytes::<L, L::State>(slots(t), heap);
        }
        let mut m = MemoryUsage::default();
        match &self.mode {
            Mode::Local(tables) => tables.iter().for_each(|t| add::<L>(&mut m, t)),
            Mode::Atomic(t) | Mode::Racy(Racy { store: t, .. }) | Mode::Cached { store: t, .. } => {
                add::<L>(&mut m, t)
            }
            Mode::Incr(Incr { store, .. }) => {
                m.live_keys = store.len();
                m.state_bytes = keyspace_bytes::<L, Counter>(slots(store), 0);
                m.redis_bytes = store.len() * redis::STRING_KEY;
            }
        }
        m
    }

    /// Takes the memory figures (the engine calls this at every sweep and at the end).
    pub fn note_memory(&mut self) {
        let m = self.memory();
        self.end = m;
        self.peak = self.peak.max(m);
    }
}

/// A replica's connection to the store, and the tally its operations add to.
struct Conn<'a> {
    link: &'a mut Link,
    tally: &'a mut DeploymentTally,
}

impl Incr {
    /// `INCR` on `key`'s counter at `t`, then `EXPIRE` for a new key unless the replica dies
    /// first (a draw from `die_rng`); refused above `limit` in a `window`.
    fn decide(
        &mut self,
        conn: Conn,
        die_rng: &mut ChaCha8Rng,
        (limit, window): (u64, Nanos),
        key: KeyId,
        t: Nanos,
        cost: Cost,
    ) -> Decision {
        let Conn { link, tally } = conn;
        let (served, back) = link.round_trip(t);
        let mut latency = back - t;
        tally.store_ops += 1;
        let expire_rtt = link.rtt();
        let c = self.store.entry(key).or_default();
        if c.expires.is_some_and(|e| e <= served) {
            *c = Counter::default();
        }
        let new_key = c.count == 0;
        // `INCRBY key cost`.
        c.count += u64::from(cost);
        if new_key {
            if self.die_chance > 0.0 && die_rng.random::<f64>() < self.die_chance {
                c.stuck = true;
                tally.keys_without_expiry += 1;
            } else {
                // EXPIRE key W, sent once INCR's reply is back: the window starts when it lands.
                tally.store_ops += 1;
                latency += expire_rtt;
                let land = back.saturating_add(expire_rtt / 2);
                c.expires = Some(land.saturating_add(window));
            }
        }
        tally.latency(latency);
        let reset_at = c.expires.unwrap_or(Nanos::MAX);
        if c.count <= limit {
            Decision::allow(limit - c.count, reset_at)
        } else {
            if c.stuck {
                tally.rejected_on_keys_without_expiry += 1;
            }
            let retry_after = c.expires.map_or(window, |e| e.saturating_sub(t));
            Decision {
                outcome: Outcome::Reject {
                    retry_after: retry_after.max(1),
                },
                remaining: 0,
                reset_at,
            }
        }
    }
}

impl<S: Clone> Racy<S> {
    /// Applies the writes that reached the store by `at`.
    fn land(&mut self, at: Nanos, tally: &mut DeploymentTally) {
        while self.writes.peek().is_some_and(|w| w.0.land <= at) {
            let Some(Reverse(w)) = self.writes.pop() else {
                break;
            };
            let slot = self.store.entry(w.key).or_insert_with(|| Slot {
                state: w.state.clone(),
                last: w.last,
                version: 0,
            });
            if slot.version != w.read_version {
                tally.lost_updates += 1;
            }
            slot.state = w.state;
            slot.last = slot.last.max(w.last);
            slot.version += 1;
        }
    }

    /// Reads `key`'s state, decides at the replica's clock (`offset` ahead), and sends the
    /// new state back, to land half a round trip later.
    fn decide<L: Limiter<State = S>>(
        &mut self,
        limiter: &L,
        conn: Conn,
        key: KeyId,
        t: Nanos,
        offset: Nanos,
        cost: Cost,
    ) -> Decision {
        let Conn { link, tally } = conn;
        let (served, back) = link.round_trip(t);
        self.land(served, tally);
        let clock = back.saturating_add(offset);
        let mut slot = match self.store.get(&key) {
            Some(s) => s.clone(),
            None => fresh(limiter, clock),
        };
        let read_version = slot.version;
        let (decision, now) = decide_on(limiter, &mut slot, clock, cost);
        let write_rtt = link.rtt();
        tally.store_ops += 2;
        // The replica waits for the write's reply before answering.
        tally.latency(back - t + write_rtt);
        self.seq += 1;
        self.writes.push(Reverse(Write {
            land: back.saturating_add(write_rtt / 2),
            seq: self.seq,
            key,
            state: slot.state,
            last: now,
            read_version,
        }));
        decision
    }
}

impl<L: Limiter> Gate for Deployed<'_, L> {
    fn estimate(&self, _: &Arrival) -> Option<f64> {
        None
    }

    fn decide(&mut self, a: &Arrival) -> (Decision, Detail<'_>) {
        let t = a.time;
        let r = self.replica(a);
        let offset = (r as u64).saturating_mul(self.dep.clock_offset);
        let clock = t.saturating_add(offset);
        self.sync_due(t);
        let has_copy = match &self.mode {
            Mode::Local(_) => true,
            Mode::Cached { copies, .. } => copies[r].contains_key(&a.key),
            _ => false,
        };
        if !has_copy && let Some(o) = self.dep.outage_at(t) {
            self.tally.latency(0);
            let decision = match o.mode {
                FailMode::Open => {
                    self.tally.outage_admitted += 1;
                    Decision::allow(0, t)
                }
                FailMode::Closed => {
                    self.tally.outage_rejected += 1;
                    Decision {
                        outcome: Outcome::Reject {
                            retry_after: (o.to - t).max(1),
                        },
                        remaining: 0,
                        reset_at: o.to,
                    }
                }
            };
            return (decision, Detail::default());
        }
        let conn = Conn {
            link: &mut self.link,
            tally: &mut self.tally,
        };
        let limiter = &self.limiter;
        let decision = match &mut self.mode {
            Mode::Local(tables) => {
                conn.tally.latency(0);
                let slot = tables[r]
                    .entry(a.key)
                    .or_insert_with(|| fresh(limiter, clock));
                decide_on(limiter, slot, clock, a.cost).0
            }
            Mode::Atomic(store) => {
                let (_, back) = conn.link.round_trip(t);
                conn.tally.latency(back - t);
                conn.tally.store_ops += 1;
                let slot = store.entry(a.key).or_insert_with(|| fresh(limiter, clock));
                decide_on(limiter, slot, clock, a.cost).0
            }
            Mode::Racy(racy) => racy.decide(limiter, conn, a.key, t, offset, a.cost),
            Mode::Incr(incr) => {
                let limits = (self.limit, self.window);
                incr.decide(conn, &mut self.die_rng, limits, a.key, t, a.cost)
            }
            Mode::Cached {
                store,
                copies,
                pending,
                ..
            } => {
                let mut latency = 0;
                if !has_copy {
                    // The replica fetches the key's state from the store once.
                    let (_, back) = conn.link.round_trip(t);
                    latency = back - t;
                    conn.tally.store_ops += 1;
                }
                conn.tally.latency(latency);
                let copy = copies[r].entry(a.key).or_insert_with(|| Copy {
                    slot: store
                        .get(&a.key)
                        .cloned()
                        .unwrap_or_else(|| fresh(limiter, clock)),
                    dirty: false,
                });
                let (d, now) = decide_on(limiter, &mut copy.slot, clock, a.cost);
                if d.outcome.is_admitted() {
                    copy.dirty = true;
                    pending.push((a.key, now, a.cost));
                }
                d
            }
        };
        (decision, Detail::default())
    }

    fn evict_idle(&mut self, now: Nanos) {
        self.land_writes(now);
        self.note_memory();
        let limiter = &self.limiter;
        let idle = |_: &KeyId, s: &mut Slot<L::State>| !limiter.is_idle(&s.state, now);
        match &mut self.mode {
            Mode::Local(tables) => tables.iter_mut().for_each(|t| t.retain(idle)),
            Mode::Atomic(t) | Mode::Racy(Racy { store: t, .. }) | Mode::Cached { store: t, .. } => {
                t.retain(idle)
            }
            // A counter without expiry is never evicted: that is the leak.
            Mode::Incr(Incr { store, .. }) => {
                store.retain(|_, c| c.expires.is_none_or(|e| e > now))
            }
        }
    }
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;
