//! "Which algorithm": the algorithms ranked against the scenario's goals, and the verdict that
//! opens the report.
//!
//! Order: algorithms meeting every goal first, then by the number of goals missed. Then, and
//! alone when the scenario has no `[goals]`, the default order of what matters to the people
//! behind the traffic: higher legit goodput (to the nearest 0.1 percentage point, so noise does
//! not outrank the next criteria), fewer policy violations, a shorter p99 delay of legitimate
//! requests, then fewer needless rejections, fewer state bytes per key, and finally the
//! scenario's order of algorithms.

use crate::metrics::AlgorithmReport;
use crate::metrics::Flat;
use crate::report::human_bytes;
use crate::scenario::{Goal, Scope};
use crate::time::format_duration;
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

/// The default criteria after the goals, in order: each compares two reports (`Less` = the
/// first ranks higher) and says in words what it compared.
type Criterion = (
    fn(&AlgorithmReport, &AlgorithmReport) -> Ordering,
    &'static str,
);

const CRITERIA: [Criterion; 5] = [
    (
        |x, y| goodput_permille(y).cmp(&goodput_permille(x)),
        "serves more legitimate requests",
    ),
    (
        |x, y| x.policy_violations.cmp(&y.policy_violations),
        "admits fewer requests beyond the policy",
    ),
    (
        |x, y| {
            (x.roles.legit_delay_p99_ns, x.delay.p99_ns)
                .cmp(&(y.roles.legit_delay_p99_ns, y.delay.p99_ns))
        },
        "delays requests less",
    ),
    (
        |x, y| x.needless_rejections.cmp(&y.needless_rejections),
        "rejects fewer requests needlessly",
    ),
    (
        |x, y| x.state_bytes_per_key.total_cmp(&y.state_bytes_per_key),
        "keeps less state per key",
    ),
];

/// Legit goodput in tenths of a percent: differences below that are ties.
fn goodput_permille(a: &AlgorithmReport) -> i64 {
    (a.roles.legit_goodput * 1000.0).round() as i64
}

/// The default order of two reports (goals aside).
fn by_default(x: &AlgorithmReport, y: &AlgorithmReport) -> Ordering {
    CRITERIA
        .iter()
        .fold(Ordering::Equal, |o, (cmp, _)| o.then_with(|| cmp(x, y)))
}

/// What puts `first` ahead of `second` in words ("serves more legitimate requests"), or `None`
/// when only the scenario's order separates them.
pub fn decided_by(first: &Ranked, second: &Ranked) -> Option<&'static str> {
    if first.missed() != second.missed() {
        return Some("misses fewer goals");
    }
    CRITERIA
        .iter()
        .find(|(cmp, _)| cmp(first.report, second.report) != Ordering::Equal)
        .map(|(_, words)| *words)
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
        a.missed()
            .cmp(&b.missed())
            .then_with(|| by_default(a.report, b.report))
            .then(i.cmp(j))
    });
    ranked.into_iter().map(|(_, r)| r).collect()
}

/// The default criteria's figures of one report, in human units.
pub fn figures(a: &AlgorithmReport) -> String {
    let delay = if a.roles.legit_delayed > 0 {
        format!(
            "legit p99 delay {}",
            format_duration(a.roles.legit_delay_p99_ns)
        )
    } else if a.delay.count > 0 {
        format!("p99 delay {}", format_duration(a.delay.p99_ns))
    } else {
        "no delay".to_string()
    };
    format!(
        "legit goodput {}, {} violations, {delay}, {} needless rejections, {}/key",
        percent(a.roles.legit_goodput),
        a.policy_violations,
        a.needless_rejections,
        human_bytes(a.state_bytes_per_key.round() as u64)
    )
}

/// A share as a percentage with one decimal: `91.5%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// The figures a reader needs to see why the algorithm sits where it does: the goals it missed
/// with the measured value, then the default criteria's figures.
fn reason(r: &Ranked, goals: usize) -> String {
    let figures = figures(r.report);
    let missed: Vec<String> = r
        .results
        .iter()
        .filter(|g| !g.met)
        .map(|g| {
            let measured = g.measured.map_or("n/a".into(), |v| g.goal.show(v));
            format!("`{}` ({measured})", g.goal.describe())
        })
        .collect();
    match (goals, missed.is_empty()) {
        (0, _) => figures,
        (n, true) => format!("meets all {n} goals; {figures}"),
        (_, false) => format!("misses {}; {figures}", missed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{DelayStats, RoleReport};

    fn report(name: &str, goodput: f64, violations: u64, legit_p99_s: u64) -> AlgorithmReport {
        AlgorithmReport {
            algorithm: name.into(),
            policy_violations: violations,
            state_bytes_per_key: 64.0,
            roles: RoleReport {
                legit_goodput: goodput,
                legit_delayed: u64::from(legit_p99_s > 0),
                legit_delay_p99_ns: legit_p99_s * 1_000_000_000,
                ..RoleReport::default()
            },
            delay: DelayStats {
                count: u64::from(legit_p99_s > 0),
                p99_ns: legit_p99_s * 1_000_000_000,
                ..DelayStats::default()
            },
            ..AlgorithmReport::default()
        }
    }

    fn order(reports: &[AlgorithmReport]) -> Vec<&str> {
        rank(&[], reports)
            .iter()
            .map(|r| r.report.algorithm.as_str())
            .collect()
    }

    /// retry_storm's shape: the leaky bucket serves 52.01% with no violation but a 1 s delay,
    /// gcra 52.13% with 665 violations. Goodput comes first: gcra wins.
    #[test]
    fn goodput_first_then_violations_then_delay() {
        let reports = [
            report("leaky_bucket", 0.5201, 0, 1),
            report("sliding_window_log", 0.4545, 0, 0),
            report("gcra", 0.5213, 665, 0),
        ];
        assert_eq!(
            order(&reports),
            ["gcra", "leaky_bucket", "sliding_window_log"]
        );
        let ranked = rank(&[], &reports);
        assert_eq!(
            decided_by(&ranked[0], &ranked[1]),
            Some("serves more legitimate requests")
        );
        assert_eq!(
            ranked[1].reason,
            "legit goodput 52.0%, 0 violations, legit p99 delay 1s, 0 needless rejections, 64 B/key"
        );
    }

    /// Goodput within 0.05 percentage point is a tie, decided by violations, then by delay.
    #[test]
    fn near_equal_goodput_goes_to_violations_then_delay() {
        let reports = [
            report("a", 0.91504, 10, 0),
            report("b", 0.91496, 0, 60),
            report("c", 0.9150, 0, 0),
        ];
        assert_eq!(order(&reports), ["c", "b", "a"]);
        let ranked = rank(&[], &reports);
        assert_eq!(
            decided_by(&ranked[0], &ranked[1]),
            Some("delays requests less")
        );
        assert_eq!(
            decided_by(&ranked[1], &ranked[2]),
            Some("admits fewer requests beyond the policy")
        );
        // Identical figures: only the scenario's order separates them.
        let same = [report("x", 0.5, 0, 0), report("y", 0.5, 0, 0)];
        let ranked = rank(&[], &same);
        assert_eq!(decided_by(&ranked[0], &ranked[1]), None);
        assert_eq!(order(&same), ["x", "y"]);
    }

    /// Goals come before the default order; a missed goal shows its measured value in its unit.
    #[test]
    fn goals_first_with_human_units() {
        let table: std::collections::BTreeMap<String, toml::Spanned<toml::Value>> =
            toml::from_str("max_delay_p99 = \"1s\"").unwrap();
        let shape = crate::metrics::MetricNames {
            algorithm: vec!["delay_p99_ns".into()],
            ..Default::default()
        };
        let goals = crate::scenario::goals::resolve(&table, &shape, 60_000_000_000).unwrap();
        let reports = [report("slow", 1.0, 0, 60), report("fast", 0.5, 0, 0)];
        let ranked = rank(&goals, &reports);
        assert_eq!(ranked[0].report.algorithm, "fast");
        assert_eq!(
            decided_by(&ranked[0], &ranked[1]),
            Some("misses fewer goals")
        );
        assert!(
            ranked[1]
                .reason
                .starts_with("misses `delay_p99_ns <= 1s` (1m); legit goodput 100.0%"),
            "{}",
            ranked[1].reason
        );
    }
}
