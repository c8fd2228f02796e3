//! Replay streams: memory stays flat whatever the trace's size. A counting global allocator
//! (as in `tests/memory.rs`) records the peak heap while a multi-million-line trace is replayed;
//! the peak must not grow past what the first records needed. (Its own test binary: the
//! allocator counts the whole process, so nothing else may run.)

use rlsim::policy::{KeyField, KeySpec};
use rlsim::traffic::{KeySpace, ReplayOptions, ReplaySource, Source, TraceFormat};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::SeqCst) + by;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Lines in the generated trace: enough that keeping even 8 bytes per line would show as 16 MB.
const LINES: u64 = 2_000_000;

#[test]
fn replaying_a_multi_million_line_trace_keeps_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 0..LINES {
            // 1000 distinct addresses, 1 ms apart, a little out of order every 100 lines.
            let t = i * 1_000_000 + if i % 100 == 1 { 3_000_000 } else { 0 };
            writeln!(
                w,
                "{{\"time\":{t},\"ip\":\"10.0.{}.{}\"}}",
                i % 1000 / 250,
                i % 250
            )
            .unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let key = KeySpec::new(vec![KeyField::Ip]).unwrap();
    let options = ReplayOptions {
        format: TraceFormat::Jsonl,
        sort_window: 5_000_000,
        ..ReplayOptions::default()
    };
    let mut keys = KeySpace::new();
    let mut source = ReplaySource::open(&path, 0, 0, u64::MAX, &key, &options).unwrap();
    let started = std::time::Instant::now();
    let (mut n, mut last, mut warm) = (0u64, 0u64, 0isize);
    while let Some(a) = source.next_arrival(&mut keys).unwrap() {
        assert!(a.time >= last, "sorted within the window");
        last = a.time;
        n += 1;
        if n == 10_000 {
            // Every key and buffer exists by now: from here on the heap must not grow.
            warm = PEAK.load(Ordering::SeqCst);
        }
    }
    let elapsed = started.elapsed();
    let peak = PEAK.load(Ordering::SeqCst);
    assert_eq!(n, LINES);
    assert_eq!(keys.len(), 1000);
    eprintln!(
        "replayed {n} lines ({} MB) in {elapsed:.2?} ({:.2} M lines/s); peak heap {} KiB, {} KiB more than after 10 000 lines",
        size / 1_000_000,
        n as f64 / elapsed.as_secs_f64() / 1e6,
        peak / 1024,
        (peak - warm) / 1024
    );
    assert!(
        peak - warm < 64 * 1024,
        "heap grew by {} bytes",
        peak - warm
    );
}
