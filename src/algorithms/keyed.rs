//! Per-key state for one algorithm: the simulated equivalent of the limiter's keyspace.
//!
//! States live in a dense array indexed by key id: one cache line per request, which the
//! engine asks for a few requests ahead ([`KeyedLimiter::prefetch`]). Which keys are live is a
//! bitmap beside it (an eighth of a byte per key, in the cache): the states need no `Option`
//! (a GCRA state is 8 bytes, not 16), and an eviction reads the states of the live keys only,
//! and writes none.
//!
//! A deployed limiter keeps its keys in a hash table instead, and that is what the memory
//! figures describe: a shadow set of the live keys goes through exactly the inserts and
//! removals such a table would (new keys, idle keys dropped in the table's own order), so its
//! allocation, and hence `peak_state_bytes`, is the one a `HashMap<KeyId, State>` would have
//! held.

use super::{Cost, Decision, Limiter};
use crate::time::Nanos;
use bit_vec::BitVec;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::mem::size_of;

/// A rate-limiting key (an IP, a user, or a combination), interned to a dense integer.
pub type KeyId = u32;

type Hasher = rustc_hash::FxBuildHasher;

/// How much memory the keyspace holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryUsage {
    /// Keys with live state.
    pub live_keys: usize,
    /// Bytes of the state table plus the heap buffers its states own.
    pub state_bytes: usize,
    /// Estimated bytes of the same states in Redis ([`Limiter::redis_bytes`]).
    pub redis_bytes: usize,
}

/// An algorithm plus the states of every key it has seen.
///
/// Idle keys (those whose state is back to its initial value) are dropped by [`evict_idle`],
/// which the engine calls once per window of virtual time, the way a Redis `EXPIRE` would.
///
/// [`evict_idle`]: KeyedLimiter::evict_idle
pub struct KeyedLimiter<L: Limiter> {
    limiter: L,
    /// The state of each key, by key id: meaningful where `live_keys` says so, a fresh state
    /// elsewhere (holding no heap memory).
    states: Vec<L::State>,
    /// The keys with a state, by key id.
    live_keys: BitVec,
    /// Keys with a state.
    live: usize,
    /// What the memory figures are read from (see [`Shadow`]): behind a cell so that reading
    /// them takes `&self`; the run's own updates reach it through `get_mut`, without a check.
    shadow: RefCell<Shadow<L>>,
    /// Sum of [`Limiter::heap_bytes`] over live states, maintained incrementally.
    heap_bytes: usize,
    /// Sum of [`Limiter::redis_bytes`] over live states, maintained incrementally.
    redis_bytes: usize,
    /// The peak's live keys and Redis bytes (its state bytes are the shadow's, settled).
    peak: MemoryUsage,
}

/// The hash table of live keys the memory figures describe, brought up to date lazily.
struct Shadow<L: Limiter> {
    /// The live keys, in the hash table the memory figures describe, as of the last
    /// [`Shadow::settle`]. A map to `()` rather than a set: a set's `insert` makes room
    /// before it looks for a slot (and so grows where a map's vacant entry reuses a tombstone).
    table: KeyTable<()>,
    /// Keys new since the table was settled, in order: the table learns of new keys in batches
    /// (one pass at each eviction or reading), not with a cache miss per request.
    arrived: Vec<KeyId>,
    /// With states that own heap memory, the most heap bytes held from each arrival in
    /// `arrived` to the next (without, always 0: a state without drop glue owns no heap).
    arrived_heap: Vec<usize>,
    /// The most heap bytes held after a decision since the table was settled, before the first
    /// new key; `None` without such a decision.
    heap_before: Option<usize>,
    /// The table's allocation and the bytes of a keyspace with a table of states as large (its
    /// states' heap aside), as last computed.
    table_bytes: (usize, usize),
    /// The most state bytes held after any decision up to the last settling.
    peak_state_bytes: usize,
    _states: PhantomData<L>,
}

/// A keyed table as a deployed limiter holds one: hashbrown's layout, the keyspace's hash.
pub type KeyTable<V> = hashbrown::HashMap<KeyId, V, Hasher>;

/// The keyspace a deployed limiter holds, whose size the memory figures report: the algorithm,
/// a hash table of states `S`, and the same counters. Never built: only its size is read.
#[allow(dead_code)]
struct HashKeyspace<L, S> {
    limiter: L,
    states: KeyTable<S>,
    heap_bytes: usize,
    redis_bytes: usize,
    peak: MemoryUsage,
}

/// The memory model of every keyed table: the bytes of a deployed keyspace of `L` whose table
/// of states `S` has `slots` slots ([`slots`]), plus `heap`, the bytes its states own.
pub fn keyspace_bytes<L, S>(slots: usize, heap: usize) -> usize {
    size_of::<HashKeyspace<L, S>>() + table_bytes::<(KeyId, S)>(slots) + heap
}

/// The slots of `table`: any table with the same inserts and removals has as many, since
/// hashbrown grows and shrinks a table by its count of items and tombstones alone.
pub fn slots<V>(table: &KeyTable<V>) -> usize {
    buckets::<(KeyId, V)>(table.allocation_size())
}

impl<L: Limiter> KeyedLimiter<L> {
    /// A table with no keys yet, deciding with `limiter`.
    pub fn new(limiter: L) -> Self {
        KeyedLimiter {
            limiter,
            states: Vec::new(),
            live_keys: BitVec::new(),
            live: 0,
            shadow: RefCell::new(Shadow {
                table: KeyTable::default(),
                arrived: Vec::new(),
                arrived_heap: Vec::new(),
                heap_before: None,
                table_bytes: (0, keyspace_bytes::<L, L::State>(0, 0)),
                peak_state_bytes: 0,
                _states: PhantomData,
            }),
            heap_bytes: 0,
            redis_bytes: 0,
            peak: MemoryUsage::default(),
        }
    }

    /// Makes room for key ids under `keys` (the keys interned before a run): the states then
    /// never move while the run fills them, instead of being copied at every doubling. The
    /// memory figures describe a deployed limiter's table, and do not change.
    pub fn reserve(&mut self, keys: usize) {
        self.states
            .reserve_exact(keys.saturating_sub(self.states.len()));
    }

    /// The algorithm the keys are decided by.
    pub fn limiter(&self) -> &L {
        &self.limiter
    }

    /// The algorithm, without its keys.
    pub fn into_limiter(self) -> L {
        self.limiter
    }

    /// Decides on one request of `key` at `now` of cost 1.
    #[inline(always)]
    pub fn decide(&mut self, key: KeyId, now: Nanos) -> Decision {
        self.decide_n(key, now, 1)
    }

    /// Decides on one request of `key` at `now` weighing `cost` ([`Limiter::decide_n`]).
    // Always inlined: a call returns the decision through memory, which the caller then stalls
    // reading back.
    #[inline(always)]
    pub fn decide_n(&mut self, key: KeyId, now: Nanos, cost: Cost) -> Decision {
        let i = key as usize;
        if i >= self.states.len() {
            self.grow(i);
        }
        let limiter = &self.limiter;
        // A new key adds its whole footprint; a known one only the change.
        let state = &mut self.states[i];
        let fresh = self.live_keys.get(i) != Some(true);
        let (heap, redis) = if fresh {
            *state = limiter.new_state(now);
            self.live_keys.set(i, true);
            (0, 0)
        } else {
            (L::heap_bytes(state), L::redis_bytes(state))
        };
        let decision = limiter.decide_n(state, now, cost);
        let (new_heap, new_redis) = (L::heap_bytes(state), L::redis_bytes(state));
        debug_assert!(
            std::mem::needs_drop::<L::State>() || new_heap == 0,
            "a state that owns heap memory has drop glue"
        );
        self.heap_bytes = self.heap_bytes + new_heap - heap;
        self.redis_bytes = self.redis_bytes + new_redis - redis;
        if fresh {
            self.note_new_key(key);
        } else {
            self.note_heap();
        }
        // Only a new key or a state that grew can raise the peak.
        if fresh || new_redis > redis {
            self.peak.redis_bytes = self.peak.redis_bytes.max(self.redis_bytes);
        }
        decision
    }

    /// Gives back `units` of what `key`'s request at `charged_at` was charged ([`Limiter::refund`]),
    /// at `now`. A key evicted since is fresh, and stays so unless its library's refund opens
    /// a state of its own (rate-limiter-flexible's `reward` of an expired key starts a record
    /// of negative points). A refund of a live key only shrinks its state: it raises no peak.
    pub fn refund(&mut self, key: KeyId, now: Nanos, charged_at: Nanos, units: Cost) {
        let i = key as usize;
        if self.live_keys.get(i) != Some(true) {
            let mut fresh = self.limiter.new_state(now);
            self.limiter.refund(&mut fresh, now, charged_at, units);
            if !self.limiter.is_idle(&fresh, now) {
                self.revive(key, fresh);
            }
            return;
        }
        let state = &mut self.states[i];
        let (heap, redis) = (L::heap_bytes(state), L::redis_bytes(state));
        self.limiter.refund(state, now, charged_at, units);
        self.heap_bytes = self.heap_bytes + L::heap_bytes(state) - heap;
        self.redis_bytes = self.redis_bytes + L::redis_bytes(state) - redis;
    }

    /// Charges `key` `units` at `now`, into debt if need be ([`Limiter::charge`]); a key evicted
    /// since starts fresh. The state may grow (a log's entries), raising the peaks.
    pub fn charge(&mut self, key: KeyId, now: Nanos, units: Cost) {
        let i = key as usize;
        if self.live_keys.get(i) != Some(true) {
            let mut fresh = self.limiter.new_state(now);
            self.limiter.charge(&mut fresh, now, units);
            if !self.limiter.is_idle(&fresh, now) {
                self.revive(key, fresh);
            }
            return;
        }
        let state = &mut self.states[i];
        let (heap, redis) = (L::heap_bytes(state), L::redis_bytes(state));
        self.limiter.charge(state, now, units);
        self.heap_bytes = self.heap_bytes + L::heap_bytes(state) - heap;
        self.redis_bytes = self.redis_bytes + L::redis_bytes(state) - redis;
        self.peak.redis_bytes = self.peak.redis_bytes.max(self.redis_bytes);
        self.note_heap();
    }

    /// Notes the heap a known key's state holds now among the peaks. Only a state that owns
    /// heap memory can make a known key's change a new peak (without, every figure it could
    /// give was noted when the table reached its size).
    #[inline(always)]
    fn note_heap(&mut self) {
        if std::mem::needs_drop::<L::State>() {
            let shadow = self.shadow.get_mut();
            let most = match shadow.arrived_heap.last_mut() {
                Some(most) => most,
                None => shadow.heap_before.get_or_insert(0),
            };
            *most = (*most).max(self.heap_bytes);
        }
    }

    /// Makes `key` live in `state` (a refund or a charge opened it), accounted as a new key (as a
    /// decision on it would be).
    #[cold]
    fn revive(&mut self, key: KeyId, state: L::State) {
        let i = key as usize;
        if i >= self.states.len() {
            self.grow(i);
        }
        self.states[i] = state;
        self.live_keys.set(i, true);
        self.heap_bytes += L::heap_bytes(&self.states[i]);
        self.redis_bytes += L::redis_bytes(&self.states[i]);
        self.peak.redis_bytes = self.peak.redis_bytes.max(self.redis_bytes);
        self.note_new_key(key);
    }

    /// Counts `key`, just made live (its bytes added), among the live keys and the arrivals the
    /// memory figures replay.
    #[inline(always)]
    fn note_new_key(&mut self, key: KeyId) {
        self.live += 1;
        self.peak.live_keys = self.peak.live_keys.max(self.live);
        let shadow = self.shadow.get_mut();
        shadow.arrived.push(key);
        if std::mem::needs_drop::<L::State>() {
            shadow.arrived_heap.push(self.heap_bytes);
        }
    }

    /// Room for key ids up to `i`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let filler = || self.limiter.new_state(0);
        self.states.resize_with(i + 1, filler);
        self.live_keys.grow(i + 1 - self.live_keys.len(), false);
    }

    /// The state of `key`, if it is live.
    #[inline]
    fn live(&self, key: KeyId) -> Option<&L::State> {
        let i = key as usize;
        (self.live_keys.get(i) == Some(true)).then(|| &self.states[i])
    }

    /// The decision `decide` would make, without changing any state ([`Limiter::peek`]: no
    /// copy of the key's state for the algorithms that override it). For rules that are all
    /// checked before any is committed.
    pub fn peek(&self, key: KeyId, now: Nanos) -> Decision {
        self.peek_n(key, now, 1)
    }

    /// [`KeyedLimiter::peek`] for a request weighing `cost`.
    pub fn peek_n(&self, key: KeyId, now: Nanos, cost: Cost) -> Decision {
        match self.live(key) {
            Some(s) => self.limiter.peek_n(s, now, cost),
            None => self.limiter.peek_n(&self.limiter.new_state(now), now, cost),
        }
    }

    /// The algorithm's estimate of the key's rolling-window count at `now` (before a request),
    /// for algorithms that approximate it. A key without state estimates 0.
    #[inline]
    pub fn estimate(&self, key: KeyId, now: Nanos) -> Option<f64> {
        if !L::ESTIMATES {
            return None;
        }
        match self.live(key) {
            Some(state) => self.limiter.estimated_count(state, now),
            None => Some(0.0),
        }
    }

    /// Starts loading the state of `key`, requests ahead (a hint: it changes nothing).
    #[inline]
    pub fn prefetch(&self, key: KeyId) {
        crate::prefetch::prefetch(&self.states, key as usize);
    }

    /// Drops the keys that are idle at `now`.
    pub fn evict_idle(&mut self, now: Nanos) {
        let shadow = self.shadow.get_mut();
        shadow.settle();
        let limiter = &self.limiter;
        let (mut heap, mut redis, mut dropped) = (0, 0, 0);
        // `BitVec`'s blocks are `u32`s: walk the set bits of each.
        const BLOCK: usize = u32::BITS as usize;
        for b in 0..self.live_keys.storage().len() {
            let mut bits = self.live_keys.storage()[b];
            while bits != 0 {
                let key = b * BLOCK + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let state = &mut self.states[key];
                if limiter.is_idle(state, now) {
                    heap += L::heap_bytes(state);
                    redis += L::redis_bytes(state);
                    if std::mem::needs_drop::<L::State>() {
                        *state = limiter.new_state(0);
                    }
                    self.live_keys.set(key, false);
                    dropped += 1;
                }
            }
        }
        if dropped > 0 {
            self.live -= dropped;
            // The table drops them in its own order, as a table's `retain` would: where a
            // removal leaves a tombstone depends on the removals before it.
            let live = &self.live_keys;
            shadow
                .table
                .retain(|&key, _| live.get(key as usize) == Some(true));
        }
        self.heap_bytes -= heap;
        self.redis_bytes -= redis;
        shadow.heap_before = None;
    }

    /// Memory held now.
    pub fn memory(&self) -> MemoryUsage {
        let mut shadow = self.shadow.borrow_mut();
        shadow.settle();
        MemoryUsage {
            live_keys: self.live,
            state_bytes: shadow.bytes(self.heap_bytes),
            redis_bytes: self.redis_bytes,
        }
    }

    /// The most memory held at any point so far.
    pub fn peak_memory(&self) -> MemoryUsage {
        let mut shadow = self.shadow.borrow_mut();
        shadow.settle();
        MemoryUsage {
            state_bytes: shadow.peak_state_bytes,
            ..self.peak
        }
    }

    /// The state of `key`, if it is live (for tests and inspection).
    pub fn state(&self, key: KeyId) -> Option<&L::State> {
        self.live(key)
    }
}

impl<L: Limiter> Shadow<L> {
    /// Brings the table up to date with the keys that arrived since it last was, noting the
    /// peak each arrival made: the table only grows between evictions, so its size after each
    /// arrival, plus the most heap held until the next, is every figure the peak could take.
    fn settle(&mut self) {
        if let Some(heap) = self.heap_before.take() {
            let bytes = self.bytes(heap);
            self.peak_state_bytes = self.peak_state_bytes.max(bytes);
        }
        let mut arrived = std::mem::take(&mut self.arrived);
        for (i, &key) in arrived.iter().enumerate() {
            let heap = self.arrived_heap.get(i).copied().unwrap_or(0);
            self.table.entry(key).or_insert(());
            let bytes = self.bytes(heap);
            self.peak_state_bytes = self.peak_state_bytes.max(bytes);
        }
        arrived.clear();
        self.arrived = arrived;
        self.arrived_heap.clear();
    }

    /// The state bytes of a deployed keyspace with this table's slots and `heap` bytes of
    /// states' heap buffers ([`keyspace_bytes`]).
    #[inline]
    fn bytes(&mut self, heap: usize) -> usize {
        let allocated = self.table.allocation_size();
        if allocated != self.table_bytes.0 {
            self.table_bytes = (
                allocated,
                keyspace_bytes::<L, L::State>(slots(&self.table), 0),
            );
        }
        self.table_bytes.1 + heap
    }
}

/// Control bytes per group in hashbrown's tables (SSE2 on x86-64, a machine word elsewhere).
const GROUP_WIDTH: usize = if cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
    16
} else {
    8
};

/// The bytes hashbrown allocates for a table of `buckets` slots of `T` (0 for none): the slots,
/// padded to the control bytes' alignment, then one control byte per slot and a group more.
fn table_bytes<T>(buckets: usize) -> usize {
    if buckets == 0 {
        return 0;
    }
    let align = std::mem::align_of::<T>().max(GROUP_WIDTH);
    (size_of::<T>() * buckets).next_multiple_of(align) + buckets + GROUP_WIDTH
}

/// The slots of a table of `T` whose allocation is `bytes`.
fn buckets<T>(bytes: usize) -> usize {
    if bytes == 0 {
        return 0;
    }
    let mut buckets = 1;
    while table_bytes::<T>(buckets) < bytes {
        buckets *= 2;
    }
    debug_assert_eq!(table_bytes::<T>(buckets), bytes, "a hashbrown layout");
    buckets
}

#[cfg(test)]
mod reference_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{Params, SlidingWindowLog};
    use proptest::prelude::*;

    proptest! {
        /// The peak noted only when a figure can rise equals the peak of the memory read after
        /// every decision, through growing and shrinking logs, new keys and evictions.
        #[test]
        fn peak_equals_the_most_memory_after_any_decision(
            limit in 1u64..6,
            steps in proptest::collection::vec((0u32..20, 0u64..400, proptest::bool::weighted(0.05)), 1..300),
        ) {
            let window = 1_000;
            let params = Params { limit, window, burst: limit };
            let mut keyed = KeyedLimiter::new(SlidingWindowLog::new(params).unwrap());
            let mut reference = MemoryUsage::default();
            let mut now = 0;
            for (key, gap, evict) in steps {
                now += gap;
                if evict {
                    keyed.evict_idle(now);
                }
                keyed.decide(key, now);
                let m = keyed.memory();
                reference.live_keys = reference.live_keys.max(m.live_keys);
                reference.state_bytes = reference.state_bytes.max(m.state_bytes);
                reference.redis_bytes = reference.redis_bytes.max(m.redis_bytes);
            }
            prop_assert_eq!(keyed.peak_memory(), reference);
        }
    }
}
