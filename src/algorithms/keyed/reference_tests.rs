//! The dense keyspace against the hash-table keyspace it stands for: the same decisions and the
//! same memory figures after every step, for every algorithm, through new keys, growing and
//! shrinking logs, idle keys dropped (tombstones) and tables that grow and rehash.

use super::*;
use crate::algorithms::{
    FixedWindow, Gcra, LeakyBucket, Params, SlidingWindowCounter, SlidingWindowLog, TokenBucket,
};
use hashbrown::hash_map::Entry;
use proptest::prelude::*;

/// A keyspace in a `HashMap<KeyId, State>`, as `KeyedLimiter` kept it before the dense array:
/// the reference its figures must equal.
struct Reference<L: Limiter> {
    limiter: L,
    states: hashbrown::HashMap<KeyId, L::State, Hasher>,
    heap_bytes: usize,
    redis_bytes: usize,
    peak: MemoryUsage,
}

impl<L: Limiter> Reference<L> {
    fn new(limiter: L) -> Self {
        Reference {
            limiter,
            states: Default::default(),
            heap_bytes: 0,
            redis_bytes: 0,
            peak: MemoryUsage::default(),
        }
    }

    fn decide(&mut self, key: KeyId, now: Nanos) -> Decision {
        let limiter = &self.limiter;
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
        let m = self.memory();
        self.peak.live_keys = self.peak.live_keys.max(m.live_keys);
        self.peak.state_bytes = self.peak.state_bytes.max(m.state_bytes);
        self.peak.redis_bytes = self.peak.redis_bytes.max(m.redis_bytes);
        decision
    }

    fn evict_idle(&mut self, now: Nanos) {
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

    fn memory(&self) -> MemoryUsage {
        MemoryUsage {
            live_keys: self.states.len(),
            state_bytes: size_of::<Self>() + self.states.allocation_size() + self.heap_bytes,
            redis_bytes: self.redis_bytes,
        }
    }
}

/// Runs `steps` (key, gap, evict first?) through both keyspaces, comparing decisions after
/// each, and the memory figures after each (`every_step`) or only at the end: reading them
/// settles the dense keyspace's table, so the end-only comparison is the one where new keys
/// reach the table in batches.
fn same_as_reference<L: Limiter + Clone>(
    limiter: L,
    steps: &[(u32, u64, bool)],
    every_step: bool,
) -> Result<(), TestCaseError> {
    let mut dense = KeyedLimiter::new(limiter.clone());
    let mut reference = Reference::new(limiter);
    let mut now = 0;
    for &(key, gap, evict) in steps {
        now += gap;
        if evict {
            dense.evict_idle(now);
            reference.evict_idle(now);
            if every_step {
                prop_assert_eq!(dense.memory(), reference.memory());
            }
        }
        prop_assert_eq!(dense.peek(key, now), reference.decide_peek(key, now));
        prop_assert_eq!(dense.decide(key, now), reference.decide(key, now));
        if !every_step {
            continue;
        }
        prop_assert_eq!(
            dense.memory(),
            reference.memory(),
            "{} after key {} at {}: key set {} bytes, table {} bytes",
            L::KIND.name(),
            key,
            now,
            dense.shadow.borrow().table.allocation_size(),
            reference.states.allocation_size()
        );
        prop_assert_eq!(dense.peak_memory(), reference.peak);
    }
    prop_assert_eq!(dense.memory(), reference.memory());
    prop_assert_eq!(dense.peak_memory(), reference.peak);
    Ok(())
}

impl<L: Limiter> Reference<L> {
    fn decide_peek(&self, key: KeyId, now: Nanos) -> Decision {
        match self.states.get(&key) {
            Some(s) => self.limiter.peek(s, now),
            None => self.limiter.peek(&self.limiter.new_state(now), now),
        }
    }
}

fn steps() -> impl Strategy<Value = Vec<(u32, u64, bool)>> {
    // Few keys (logs that grow and shrink) or many (tables that grow, rehash in place after
    // evictions, and hold tombstones).
    prop_oneof![
        proptest::collection::vec((0u32..8, 0u64..300, proptest::bool::weighted(0.05)), 1..400),
        proptest::collection::vec(
            (0u32..3_000, 0u64..40, proptest::bool::weighted(0.02)),
            1..3_000
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_algorithm_matches_the_hash_table_keyspace(
        // Limits up to 40: logs that grow (and reallocate) long after their key arrived.
        limit in 1u64..40,
        burst in 1u64..40,
        window in 50u64..2_000,
        steps in steps(),
        every_step in proptest::bool::ANY,
    ) {
        let p = Params { limit, window, burst };
        let e = every_step;
        same_as_reference(Gcra::new(p).unwrap(), &steps, e)?;
        same_as_reference(TokenBucket::new(p).unwrap(), &steps, e)?;
        same_as_reference(LeakyBucket::new(p).unwrap(), &steps, e)?;
        same_as_reference(FixedWindow::new(p).unwrap(), &steps, e)?;
        same_as_reference(SlidingWindowLog::new(p).unwrap(), &steps, e)?;
        same_as_reference(SlidingWindowCounter::new(p).unwrap(), &steps, e)?;
    }
}

/// The layout formula against hashbrown's own allocation, for slot sizes and alignments of
/// every state type, across table sizes.
#[test]
fn table_bytes_is_hashbrowns_allocation() {
    fn check<T: Default>() {
        let mut map: hashbrown::HashMap<u32, T, Hasher> = Default::default();
        let mut set: hashbrown::HashMap<u32, (), Hasher> = Default::default();
        assert_eq!(table_bytes::<(u32, T)>(slots(&set)), 0);
        for key in 0..5_000 {
            map.insert(key, T::default());
            set.insert(key, ());
            assert_eq!(table_bytes::<(u32, T)>(slots(&set)), map.allocation_size());
        }
    }
    check::<u64>();
    check::<(u64, u64)>();
    check::<u8>();
    check::<std::collections::VecDeque<u64>>();
    check::<[u64; 5]>();
}
