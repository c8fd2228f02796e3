//! Per-key state for one algorithm: the simulated equivalent of the limiter's keyspace.

use super::{Decision, Limiter};
use crate::time::Nanos;
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
    peak: MemoryUsage,
}

impl<L: Limiter> KeyedLimiter<L> {
    pub fn new(limiter: L) -> Self {
        KeyedLimiter {
            limiter,
            states: StateMap::default(),
            heap_bytes: 0,
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
        let state = self
            .states
            .entry(key)
            .or_insert_with(|| limiter.new_state(now));
        let before = L::heap_bytes(state);
        let decision = limiter.decide(state, now);
        let after = L::heap_bytes(state);
        self.heap_bytes = self.heap_bytes + after - before;
        self.note_peak();
        decision
    }

    /// Drops the keys that are idle at `now`.
    pub fn evict_idle(&mut self, now: Nanos) {
        let limiter = &self.limiter;
        let mut freed = 0;
        self.states.retain(|_, state| {
            let idle = limiter.is_idle(state, now);
            if idle {
                freed += L::heap_bytes(state);
            }
            !idle
        });
        self.heap_bytes -= freed;
    }

    /// Memory held now.
    pub fn memory(&self) -> MemoryUsage {
        MemoryUsage {
            live_keys: self.states.len(),
            state_bytes: size_of::<Self>() + self.states.allocation_size() + self.heap_bytes,
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
    }

    /// The state of `key`, if it is live (for tests and inspection).
    pub fn state(&self, key: KeyId) -> Option<&L::State> {
        self.states.get(&key)
    }
}
