//! What a run must say of a replayed trace it did not replay whole: one cut at the scenario's
//! `duration` with records left (their figures cover only the start of the log), and one that
//! gave no record at all (its figures are 0 over 0 requests). The sources report how their
//! reading ended ([`crate::traffic::ReplayEnd`]); the verdict carries these warnings.

use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;
use crate::traffic::{Arrivals, ReplayEnd, Stopped};
use std::path::Path;

/// Logged times from here on are read as dates (2001-09-09): smaller ones are a trace's own
/// nanosecond counts, used as virtual time.
const DATES_FROM: u64 = 1_000_000_000_000_000_000;

/// The warnings of the replay sources of a run of `scenario` (its rows: `algorithms`), in the
/// scenario's order: one per trace, however many sources its parts are.
pub fn warnings(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<String> {
    let Some(first) = algorithms.first() else {
        return Vec::new();
    };
    let skipped = crate::metrics::skipped_lines(algorithms);
    let mut out = Vec::new();
    for (i, s) in scenario.traffic.iter().enumerate() {
        let Arrivals::Replay { path, options } = &s.arrivals else {
            continue;
        };
        // A split trace's parts all read it; its first part speaks for them.
        if !options.reports_skipped() {
            continue;
        }
        let Some(end) = trace_end(scenario, algorithms, path) else {
            continue;
        };
        let name = &s.name;
        let file = path.display();
        if end.records == 0 {
            let lines = skipped.get(i).copied().unwrap_or(0);
            out.push(empty(name, &file.to_string(), lines, first.offered));
        } else if let Some(stop) = end.stopped
            && s.stop == scenario.duration
        {
            let loops = options.loops > 1;
            out.push(cut(
                name,
                &file.to_string(),
                end.replayed,
                stop,
                s.stop,
                loops,
            ));
        }
    }
    out
}

/// How the reading of the trace at `path` ended, over every source that replays it: the
/// records replayed by all its parts, the records read and where it stopped (every part reads
/// the whole trace up to the same record).
fn trace_end(scenario: &Scenario, rows: &[AlgorithmReport], path: &Path) -> Option<ReplayEnd> {
    let ends = &rows.first()?.replay_ends;
    let mut total: Option<ReplayEnd> = None;
    for (s, end) in scenario.traffic.iter().zip(ends) {
        let (Arrivals::Replay { path: p, .. }, Some(end)) = (&s.arrivals, end) else {
            continue;
        };
        if p != path {
            continue;
        }
        let t = total.get_or_insert(ReplayEnd {
            replayed: 0,
            ..*end
        });
        t.replayed += end.replayed;
        t.records = t.records.max(end.records);
        t.stopped = match (t.stopped, end.stopped) {
            (Some(a), Some(b)) => Some(if b.time < a.time { b } else { a }),
            (a, b) => a.or(b),
        };
    }
    total
}

/// A trace with no record: its figures mean nothing.
fn empty(name: &str, file: &str, skipped: u64, offered: u64) -> String {
    let why = match skipped {
        0 => String::new(),
        1 => " (its only line was malformed and skipped)".to_string(),
        n => format!(" (all {n} of its lines were malformed and skipped)"),
    };
    let mut text = format!(
        "source `{name}` replayed nothing: {file} has no records{why}; its figures are over 0 \
         requests and mean nothing"
    );
    if offered == 0 {
        text.push_str(
            "; the run offered no request at all, so legit_goodput 0.0000 and every share are \
             0 over 0 requests, not measurements",
        );
    }
    text
}

/// A trace cut at the scenario's duration with records left.
fn cut(name: &str, file: &str, replayed: u64, stop: Stopped, duration: u64, loops: bool) -> String {
    let records = if replayed == 1 { "record" } else { "records" };
    let repetition = if loops {
        format!(" of repetition {} of `loop`", stop.repetition + 1)
    } else {
        String::new()
    };
    let logged = if stop.logged >= DATES_FROM {
        let at = chrono::DateTime::from_timestamp_nanos(stop.logged as i64);
        format!(
            "logged {}, ",
            at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        )
    } else {
        String::new()
    };
    format!(
        "source `{name}` stopped at the scenario's duration ({}) after replaying {replayed} \
         {records} of {file}: the rest of the log, from line {}{repetition} ({logged}{} into the \
         run) on, was not read, and the figures cover only the log's first {}; raise `duration` \
         (or `--set duration=...`) to replay the rest",
        format_duration(duration),
        stop.line,
        format_duration(stop.time),
        format_duration(duration),
    )
}
