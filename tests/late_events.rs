//! Releases and retries long after a scenario's end must not size its
//! memory. A counting allocator measures the run's peak heap (its own test binary, since the
//! allocator counts the whole process), and the late events land in the final time bucket.

use rlsim::metrics::{AlgorithmReport, final_bucket};
use rlsim::report::DecisionPart;
use rlsim::{Scenario, sim};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// One measured run at a time: the counters are global.
static SERIAL: Mutex<()> = Mutex::new(());

fn add(bytes: isize) {
    let now = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs the scenario's single algorithm; returns its report and the peak heap growth.
fn run(toml: &str) -> (Scenario, AlgorithmReport, isize) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::parse(toml, Path::new("late.toml")).expect("valid scenario");
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let (report, _, _) =
        sim::run_one::<DecisionPart>(&scenario, &scenario.algorithms[0], None, false, None)
            .expect("the run succeeds");
    let peak = PEAK.load(Ordering::SeqCst) - before;
    (scenario, report, peak)
}

const MIB: isize = 1 << 20;

fn final_row(scenario: &Scenario, report: &AlgorithmReport) -> rlsim::metrics::TimeBucket {
    let last = final_bucket(scenario.duration, scenario.bucket);
    assert_eq!(
        report.timeseries.len(),
        last + 1,
        "the final bucket is the last one"
    );
    let offered: u64 = report.timeseries.iter().map(|b| b.offered).sum();
    let admitted: u64 = report.timeseries.iter().map(|b| b.admitted).sum();
    assert_eq!((offered, admitted), (report.offered, report.admitted));
    report.timeseries[last]
}

#[test]
fn retries_a_day_after_a_ten_second_run() {
    // 10 requests at 0..9 s; 5 fit the day's window, the other 5 retry at its end (1 d).
    let (scenario, report, peak) = run(r#"
        name = "late retries"
        duration = "10s"
        algorithms = ["fixed_window"]
        [policy]
        limit = 5
        window = "1d"
        [[traffic]]
        name = "c"
        kind = "constant"
        rate = "1/s"
        on_reject = { retry = "retry_after", max_retries = 1 }
    "#);
    assert!(peak < 16 * MIB, "peak heap {peak} B");
    assert_eq!(report.last_event_ns, 86_400_000_000_000);
    let last = final_row(&scenario, &report);
    assert_eq!((last.offered, last.retries, last.admitted), (5, 5, 5));
}

#[test]
fn a_leaky_bucket_releasing_for_four_days() {
    // Queue of 100, one release per hour: 99 delayed requests leave over 99 h.
    let (scenario, report, peak) = run(r#"
        name = "late releases"
        duration = "100s"
        algorithms = ["leaky_bucket"]
        [policy]
        limit = 1
        window = "1h"
        burst = 100
        [[traffic]]
        name = "c"
        kind = "constant"
        rate = "1/s"
    "#);
    assert!(peak < 16 * MIB, "peak heap {peak} B");
    assert_eq!(report.delayed, 99);
    assert_eq!(report.last_event_ns, 99 * 3_600_000_000_000);
    let last = final_row(&scenario, &report);
    assert_eq!((last.offered, last.admitted), (0, 99));
}

#[test]
fn a_token_bucket_window_of_585_years() {
    let (scenario, report, peak) = run(r#"
        name = "huge override"
        duration = "10s"
        algorithms = ["token_bucket"]
        [policy]
        limit = 5
        window = "1s"
        [algorithm.token_bucket]
        window = "213503d"
        [[traffic]]
        name = "c"
        kind = "constant"
        rate = "1/s"
        on_reject = { retry = "retry_after", max_retries = 1 }
    "#);
    assert!(peak < 16 * MIB, "peak heap {peak} B");
    assert_eq!(
        report.offered, 15,
        "5 admitted, 5 rejected and retried once"
    );
    let last = final_row(&scenario, &report);
    assert_eq!(last.retries, 5, "every retry waits past twice the duration");
}
