//! Per-key state for one algorithm: the simulated equivalent of the limiter's keyspace.

use super::{Decision, Limiter};
use crate::time::Nanos;
use hashbrown::hash_map::Entry;
use std::mem::size_of;

/// A rate-limiting key (an IP, a user, or a combination), interned to a dense integer.
pub type KeyId = u32;

type StateMap<S> = hashbrown::HashMap<KeyId, S, rustc_hash::FxBuildHasher>;

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
    states: StateMap<L::State>,
    /// Sum of [`Limiter::heap_bytes`] over live states, maintained incrementally.
    heap_bytes: usize,
    /// Sum of [`Limiter::redis_bytes`] over live states, maintained incrementally.
    redis_bytes: usize,
    peak: MemoryUsage,
}

impl<L: Limiter> KeyedLimiter<L> {
    pub fn new(limiter: L) -> Self {
        KeyedLimiter {
            limiter,
            states: StateMap::default(),
            heap_bytes: 0,
            redis_bytes: 0,
            peak: MemoryUsage::default(),
        }
    }

    pub fn limiter(&self) -> &L {
        &self.limiter
    }

    /// The algorithm, without its keys.
    pub fn into_limiter(self) -> L {
        self.limiter
    }

    /// Decides on one request of `key` at `now`.
    #[inline]
    pub fn decide(&mut self, key: KeyId, now: Nanos) -> Decision {
        let limiter = &self.limiter;
        // A new key adds its whole footprint; a known one only the change.
        let (state, heap, redis) = match self.states.entry(key) {
            Entry::Occupied(e) => {
                let state = e.into_mut();
                let (heap, redis) = (L::heap_bytes(state), L::redis_bytes(state));
                (state, heap, redis)
            }
            Entry::Vacant(e) => (e.insert(limiter.new_state(now)), 0, 0),
        };
        let decision = limiter.decide(state, now);
        self.heap_bytes = self.heap_bytes + L::heap_bytes(state) - heap;
        self.redis_bytes = self.redis_bytes + L::redis_bytes(state) - redis;
        self.note_peak();
        decision
    }

    /// The decision `decide` would make, without changing any state ([`Limiter::peek`]: no
    /// copy of the key's state for the algorithms that override it). For rules that are all
    /// checked before any is committed.
    pub fn peek(&self, key: KeyId, now: Nanos) -> Decision {
        match self.states.get(&key) {
            Some(s) => self.limiter.peek(s, now),
            None => self.limiter.peek(&self.limiter.new_state(now), now),
        }
    }

    /// The algorithm's estimate of the key's rolling-window count at `now` (before a request),
    /// for algorithms that approximate it. A key without state estimates 0.
    #[inline]
    pub fn estimate(&self, key: KeyId, now: Nanos) -> Option<f64> {
        if !L::ESTIMATES {
            return None;
        }
        match self.states.get(&key) {
            Some(state) => self.limiter.estimated_count(state, now),
            None => Some(0.0),
        }
    }

    /// Looks `key` up a request ahead, so the hash table's cache misses overlap the work in
    /// between: the table offers no prefetch, but an early lookup whose result nothing waits
    /// for is one (a hint: it changes nothing).
    #[inline]
    pub fn prefetch(&self, key: KeyId) {
        std::hint::black_box(self.states.get(&key));
    }

    /// Drops the keys that are idle at `now`.
    pub fn evict_idle(&mut self, now: Nanos) {
        let limiter = &self.limiter;
        let (mut heap, mut redis) = (0, 0);
        self.states.retain(|_, state| {
            let idle = limiter.is_idle(state, now);
            if idle {
                heap += L::heap_bytes(state);
                redis += L::redis_bytes(state);
            }
            !idle
        });
        self.heap_bytes -= heap;
        self.redis_bytes -= redis;
    }

    /// Memory held now.
    pub fn memory(&self) -> MemoryUsage {
        MemoryUsage {
            live_keys: self.states.len(),
            state_bytes: size_of::<Self>() + self.states.allocation_size() + self.heap_bytes,
            redis_bytes: self.redis_bytes,
        }
    }

    /// The most memory held at any point so far.
    pub fn peak_memory(&self) -> MemoryUsage {
        self.peak
    }

    #[inline]
    fn note_peak(&mut self) {
        let now = self.memory();
        self.peak.live_keys = self.peak.live_keys.max(now.live_keys);
        self.peak.state_bytes = self.peak.state_bytes.max(now.state_bytes);
        self.peak.redis_bytes = self.peak.redis_bytes.max(now.redis_bytes);
    }

    /// The state of `key`, if it is live (for tests and inspection).
    pub fn state(&self, key: KeyId) -> Option<&L::State> {
        self.states.get(&key)
    }
}
