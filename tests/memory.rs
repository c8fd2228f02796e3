//! The memory rlsim reports for a keyspace is the memory a deployed keyspace holds: a hash
//! table of states (rlsim keeps its own states in a dense array, and reports what the table
//! would hold). A counting global allocator measures the heap of such a table, filled with the
//! same decisions, and each algorithm's `state_bytes` must be within 10% of it.
//! (Its own test binary: the allocator counts the whole process, so nothing else may run.)

use rlsim::algorithms::{AlgorithmKind, KeyedLimiter, Limiter, LimiterVisitor, Params};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::SeqCst);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Fills a hash table of states, and rlsim's keyspace, with the same decisions; returns what
/// rlsim reports for the states and what the table holds on the heap.
struct Check {
    keys: u32,
    requests_per_key: u64,
}

impl LimiterVisitor for Check {
    type Output = (usize, isize);
    fn visit<L: Limiter + 'static>(self, limiter: L) -> (usize, isize) {
        let before = LIVE.load(Ordering::SeqCst);
        let mut table: HashMap<u32, L::State> = HashMap::new();
        for i in 0..self.requests_per_key {
            for key in 0..self.keys {
                let now = i * 1_000_000;
                let state = table.entry(key).or_insert_with(|| limiter.new_state(now));
                limiter.decide(state, now);
            }
        }
        let heap = LIVE.load(Ordering::SeqCst) - before;
        drop(table);
        let mut keyed = KeyedLimiter::new(limiter);
        // `state_bytes` also counts the keyspace's inline size: an empty one's figure.
        let inline = keyed.memory().state_bytes;
        for i in 0..self.requests_per_key {
            for key in 0..self.keys {
                keyed.decide(key, i * 1_000_000);
            }
        }
        (keyed.memory().state_bytes - inline, heap)
    }
}

#[test]
fn reported_state_bytes_match_the_heap() {
    // 10 000 keys, 20 requests each, 1 ms apart, against 50 per second: logs hold 20 entries.
    let params = Params {
        limit: 50,
        window: 1_000_000_000,
        burst: 50,
    };
    for kind in AlgorithmKind::ALL {
        let check = Check {
            keys: 10_000,
            requests_per_key: 20,
        };
        let (reported, heap) = kind.visit(params, check).unwrap();
        let heap = heap as f64;
        let error = (reported as f64 - heap).abs() / heap;
        assert!(
            error <= 0.10,
            "{kind}: reported {reported} B, heap {heap} B ({:.1}% off)",
            error * 100.0
        );
    }
}
