//! The terminal side of `rlsim run`: a progress bar for long runs and the choice of colour.
//!
//! Both go to the terminal only: files never carry colour codes, and a bar is drawn only when
//! standard error is a terminal, so scripts and CI logs see plain output.

use crate::report::human_rate;
use crate::scenario::Scenario;
use crate::sim::Progress;
use crate::time::{NANOS_PER_SEC, format_duration};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A run shorter than this shows no bar at all.
const SHOW_AFTER: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(50);

/// Whether standard output takes colour: a terminal, and `NO_COLOR` unset (`CLICOLOR_FORCE`
/// forces it), as `anstream` decides for any stream.
pub fn stdout_has_colour() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Runs `work` (a simulation updating `progress`) while a thread draws a progress bar on
/// standard error, if `show` and standard error is a terminal and the run lasts over a second.
/// The bar shows simulated time over `duration × algorithms`, and decisions per second.
/// The caller must not hold the standard error lock meanwhile: the bar's thread would wait
/// for it forever.
pub fn with_progress<T: Send>(
    scenario: &Scenario,
    progress: &Progress,
    show: bool,
    work: impl FnOnce() -> T + Send,
) -> T {
    if !show || !std::io::stderr().is_terminal() {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| draw(scenario, progress, &done));
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

fn draw(scenario: &Scenario, progress: &Progress, done: &AtomicBool) {
    let started = Instant::now();
    while started.elapsed() < SHOW_AFTER {
        if done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(TICK);
    }
    let total = scenario
        .duration
        .saturating_mul(scenario.algorithms.len() as u64);
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let template = "{spinner} {elapsed:>4} [{bar:30}] {percent:>3}% {msg}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    let label = format!(
        "of {} simulated ({} algorithms × {})",
        clock(total),
        scenario.algorithms.len(),
        format_duration(scenario.duration)
    );
    while !done.load(Ordering::Relaxed) {
        let simulated = progress.simulated_ns().min(total);
        let rate = progress.requests() as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_position(simulated);
        bar.set_message(format!(
            "{} {label}, {} requests/s",
            clock(simulated),
            human_rate(rate)
        ));
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}

/// Simulated time as a clock, `m:ss` or `h:mm:ss`: steady width while it runs.
fn clock(ns: u64) -> String {
    let s = ns / NANOS_PER_SEC;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, m, s) => format!("{m}:{s:02}"),
        (h, m, s) => format!("{h}:{m:02}:{s:02}"),
    }
}

#[cfg(test)]
mod tests {
    use super::clock;
    use crate::time::NANOS_PER_SEC;

    #[test]
    fn clock_format() {
        assert_eq!(clock(83 * NANOS_PER_SEC + 999), "1:23");
        assert_eq!(
            clock(3 * 3600 * NANOS_PER_SEC + 5 * NANOS_PER_SEC),
            "3:00:05"
        );
    }
}
