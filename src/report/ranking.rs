//! "Which algorithm": the algorithms ranked against the scenario's goals.
//!
//! Order: algorithms meeting every goal first, then by the number of goals missed. Ties are
//! broken, in this order, by fewer policy violations, higher legit goodput, fewer needless
//! rejections, fewer state bytes per key, and finally the scenario's order of algorithms. With
//! no `[goals]`, that tie-break order alone ranks them.

use crate::metrics::AlgorithmReport;
use crate::metrics::Flat;
use crate::report::human_bytes;
use crate::scenario::goals::trim_number;
use crate::scenario::{Goal, Scope};
use std::cmp::Ordering;

/// How one algorithm did against one goal.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalResult<'a> {
    pub goal: &'a Goal,
    pub measured: Option<f64>,
    pub met: bool,
}

/// One algorithm's place in the ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked<'a> {
    pub report: &'a AlgorithmReport,
    pub results: Vec<GoalResult<'a>>,
    /// One line naming the figures that decided its place.
    pub reason: String,
}

impl Ranked<'_> {
    pub fn missed(&self) -> usize {
        self.results.iter().filter(|r| !r.met).count()
    }
}

/// Ranks `algorithms` (in the scenario's order) against `goals`.
pub fn rank<'a>(goals: &'a [Goal], algorithms: &'a [AlgorithmReport]) -> Vec<Ranked<'a>> {
    let mut ranked: Vec<(usize, Ranked<'a>)> = algorithms
        .iter()
        .enumerate()
        .map(|(i, report)| {
            let flat = Flat::of_report(report);
            let results: Vec<GoalResult> = goals
                .iter()
                .map(|goal| {
                    let measured = flat.get(&Scope::Algorithm, &goal.metric).flatten();
                    GoalResult {
                        goal,
                        measured,
                        met: goal.met(measured),
                    }
                })
                .collect();
            let mut r = Ranked {
                report,
                results,
                reason: String::new(),
            };
            r.reason = reason(&r, goals.len());
            (i, r)
        })
        .collect();
    ranked.sort_by(|(i, a), (j, b)| {
        let (x, y) = (a.report, b.report);
        a.missed()
            .cmp(&b.missed())
            .then(x.policy_violations.cmp(&y.policy_violations))
            .then(desc(x.roles.legit_goodput, y.roles.legit_goodput))
            .then(x.needless_rejections.cmp(&y.needless_rejections))
            .then(x.state_bytes_per_key.total_cmp(&y.state_bytes_per_key))
            .then(i.cmp(j))
    });
    ranked.into_iter().map(|(_, r)| r).collect()
}

fn desc(a: f64, b: f64) -> Ordering {
    b.total_cmp(&a)
}

/// The figures a reader needs to see why the algorithm sits where it does: the goals it missed
/// with the measured value, then the tie-break figures.
fn reason(r: &Ranked, goals: usize) -> String {
    let a = r.report;
    let figures = format!(
        "{} violations, legit goodput {:.4}, {} needless rejections, {}/key",
        a.policy_violations,
        a.roles.legit_goodput,
        a.needless_rejections,
        human_bytes(a.state_bytes_per_key.round() as u64)
    );
    let missed: Vec<String> = r
        .results
        .iter()
        .filter(|g| !g.met)
        .map(|g| {
            let measured = g.measured.map_or("no value".into(), trim_measured);
            format!("`{}` ({measured})", g.goal.describe())
        })
        .collect();
    match (goals, missed.is_empty()) {
        (0, _) => figures,
        (n, true) => format!("meets all {n} goals; {figures}"),
        (_, false) => format!("misses {}; {figures}", missed.join(", ")),
    }
}

fn trim_measured(v: f64) -> String {
    if v.fract() == 0.0 {
        trim_number(v)
    } else {
        format!("{v:.4}")
    }
}
