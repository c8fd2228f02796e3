//! "Which algorithm": the contenders ranked against the scenario's goals, and the harm rule
//! behind the default order.
//!
//! Order: contenders meeting every goal first, then by the number of goals missed. Then, and
//! first of all when the scenario has no `[goals]`, harm a figure of goodput hides: a contender
//! that delays legitimate requests by a p99 over [`SEVERE_DELAY_NS`] ranks after every one that
//! does not (its clients have given up by then, so its "served" requests were as good as
//! refused). Then the default order of what matters to the people behind the traffic: higher
//! legit goodput (to the nearest 0.1 percentage point, so noise does not outrank the next
//! criteria), fewer requests admitted beyond the intent (violations), less abusive traffic let
//! through (leakage, to 0.1 point), a shorter p99 delay of legitimate requests, fewer needless
//! rejections, fewer state bytes per key, and finally the scenario's order of contenders.
//! Contenders equal on every one of these share a rank.

use crate::metrics::AlgorithmReport;
use crate::metrics::Flat;
use crate::report::human_bytes;
use crate::scenario::{Goal, Scope};
use crate::time::format_duration;
use std::cmp::Ordering;

/// A legit p99 delay above this is harm the default order ranks after everything else: 10 s is
/// the limit of a person's attention (Nielsen's response-time limits) and, in the same range,
/// where HTTP clients and proxies time out (10–60 s).
pub const SEVERE_DELAY_NS: u64 = 10_000_000_000;

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
    /// 1-based; contenders equal on every ranking figure share a rank (1, 2, 2, 4).
    pub rank: usize,
    pub results: Vec<GoalResult<'a>>,
    /// One line naming the figures that decided its place.
    pub reason: String,
}

impl Ranked<'_> {
    pub fn missed(&self) -> usize {
        self.results.iter().filter(|r| !r.met).count()
    }

    /// Whether it delays legitimate requests past [`SEVERE_DELAY_NS`] (ranked after the rest).
    pub fn severe_delay(&self) -> bool {
        severe_delay(self.report)
    }
}

/// Whether `a` delays legitimate requests by a p99 over [`SEVERE_DELAY_NS`].
pub fn severe_delay(a: &AlgorithmReport) -> bool {
    a.roles.legit_delayed > 0 && a.roles.legit_delay_p99_ns > SEVERE_DELAY_NS
}

/// One criterion of the default order: how it compares two reports (`Less` = the first ranks
/// higher), what a better and a worse value mean in words, and the figure it compares.
pub struct Criterion {
    pub cmp: fn(&AlgorithmReport, &AlgorithmReport) -> Ordering,
    pub better: &'static str,
    pub worse: &'static str,
    /// `better` and `worse` against an intent in units of cost, where they differ.
    pub in_cost: Option<(&'static str, &'static str)>,
    /// `better` and `worse` against an intent in tokens, where they differ.
    pub in_tokens: Option<(&'static str, &'static str)>,
    /// The figure's line in a contender's reason ("0 violations").
    pub show: fn(&AlgorithmReport) -> String,
    /// The figure's name and its value alone, to compare two contenders ("violations": "0").
    pub figure: &'static str,
    pub value: fn(&AlgorithmReport) -> String,
}

impl Criterion {
    /// How a report better on this criterion is, in the unit of its intent.
    pub fn better_for(&self, a: &AlgorithmReport) -> &'static str {
        match self.in_unit(a) {
            Some((better, _)) => better,
            None => self.better,
        }
    }

    /// How a report worse on this criterion is, in the unit of its intent.
    pub fn worse_for(&self, a: &AlgorithmReport) -> &'static str {
        match self.in_unit(a) {
            Some((_, worse)) => worse,
            None => self.worse,
        }
    }

    /// `better` and `worse` in the unit `a` was judged in, where they differ from requests'.
    fn in_unit(&self, a: &AlgorithmReport) -> Option<(&'static str, &'static str)> {
        match (judged_in_cost(a), a.intent_unit.is_tokens()) {
            (false, _) => None,
            (true, false) => self.in_cost,
            (true, true) => self.in_tokens,
        }
    }
}

/// Whether `a` was judged against an intent in units (of cost, or tokens).
pub fn judged_in_cost(a: &AlgorithmReport) -> bool {
    a.cost.is_some_and(|c| c.over_intent.is_some())
}

pub const CRITERIA: [Criterion; 6] = [
    Criterion {
        cmp: |x, y| goodput_permille(y).cmp(&goodput_permille(x)),
        better: "serves more legitimate requests",
        worse: "serves fewer legitimate requests",
        in_cost: None,
        in_tokens: None,
        show: |a| format!("legit goodput {}", percent(a.roles.legit_goodput)),
        figure: "legit goodput",
        value: |a| percent(a.roles.legit_goodput),
    },
    Criterion {
        cmp: |x, y| over_intent(x).cmp(&over_intent(y)),
        better: "admits fewer requests beyond the intent",
        worse: "admits more requests beyond the intent",
        in_cost: Some((
            "admits less cost beyond the intent",
            "admits more cost beyond the intent",
        )),
        in_tokens: Some((
            "admits fewer tokens beyond the intent",
            "admits more tokens beyond the intent",
        )),
        show: |a| match a.cost.and_then(|c| c.over_intent) {
            Some(units) => format!("{units} {} over the intent", a.intent_unit.noun()),
            None => format!("{} violations", a.policy_violations),
        },
        figure: "violations",
        value: |a| match a.cost.and_then(|c| c.over_intent) {
            Some(units) => format!("{units} {}", a.intent_unit.noun()),
            None => a.policy_violations.to_string(),
        },
    },
    Criterion {
        cmp: |x, y| leakage_permille(x).cmp(&leakage_permille(y)),
        better: "lets less abusive traffic through",
        worse: "lets more abusive traffic through",
        in_cost: None,
        in_tokens: None,
        show: |a| match a.roles.abusive_leakage {
            Some(l) => format!("abuse leak {}", percent(l)),
            None => "no abusive traffic".into(),
        },
        figure: "abuse leak",
        value: |a| a.roles.abusive_leakage.map_or("n/a".into(), percent),
    },
    Criterion {
        cmp: |x, y| {
            (x.roles.legit_delay_p99_ns, x.delay.p99_ns)
                .cmp(&(y.roles.legit_delay_p99_ns, y.delay.p99_ns))
        },
        better: "delays requests less",
        worse: "delays requests more",
        in_cost: None,
        in_tokens: None,
        show: delay_words,
        figure: "legit p99 delay",
        value: delay_value,
    },
    Criterion {
        cmp: |x, y| needless(x).cmp(&needless(y)),
        better: "rejects fewer requests needlessly",
        worse: "rejects more requests needlessly",
        in_cost: Some((
            "rejects less cost needlessly",
            "rejects more cost needlessly",
        )),
        in_tokens: Some((
            "rejects fewer tokens needlessly",
            "rejects more tokens needlessly",
        )),
        show: |a| match a.cost.and_then(|c| c.needless) {
            Some(units) => format!("{units} {} needlessly rejected", a.intent_unit.noun()),
            None => format!("{} needless rejections", a.needless_rejections),
        },
        figure: "needless rejections",
        value: |a| match a.cost.and_then(|c| c.needless) {
            Some(units) => format!("{units} {}", a.intent_unit.noun()),
            None => a.needless_rejections.to_string(),
        },
    },
    Criterion {
        cmp: |x, y| x.state_bytes_per_key.total_cmp(&y.state_bytes_per_key),
        better: "keeps less state per key",
        worse: "keeps more state per key",
        in_cost: None,
        in_tokens: None,
        show: |a| format!("{}/key", human_bytes(a.state_bytes_per_key.round() as u64)),
        figure: "state per key",
        value: |a| human_bytes(a.state_bytes_per_key.round() as u64),
    },
];

/// What a row admitted beyond the intent, in the intent's unit: units of cost against an
/// intent in cost, else the violations.
fn over_intent(a: &AlgorithmReport) -> u64 {
    a.cost
        .and_then(|c| c.over_intent)
        .unwrap_or(a.policy_violations)
}

/// What a row refused needlessly, in the intent's unit (see [`over_intent`]).
fn needless(a: &AlgorithmReport) -> u64 {
    a.cost
        .and_then(|c| c.needless)
        .unwrap_or(a.needless_rejections)
}

/// Legit goodput in tenths of a percent: differences below that are ties.
fn goodput_permille(a: &AlgorithmReport) -> i64 {
    (a.roles.legit_goodput * 1000.0).round() as i64
}

/// Abusive leakage in tenths of a percent (0 without abusive traffic: every contender of a
/// run sees the same traffic, so either all have a value or none has).
fn leakage_permille(a: &AlgorithmReport) -> i64 {
    a.roles
        .abusive_leakage
        .map_or(0, |l| (l * 1000.0).round() as i64)
}

fn delay_words(a: &AlgorithmReport) -> String {
    if a.roles.legit_delayed > 0 {
        format!(
            "legit p99 delay {}",
            format_duration(a.roles.legit_delay_p99_ns)
        )
    } else if a.delay.count > 0 {
        format!("p99 delay {}", format_duration(a.delay.p99_ns))
    } else {
        "no delay".to_string()
    }
}

/// The legit requests' p99 delay alone (`1.4s`), `none` without one (with the abusive
/// requests' when only they were delayed).
fn delay_value(a: &AlgorithmReport) -> String {
    if a.roles.legit_delayed > 0 {
        format_duration(a.roles.legit_delay_p99_ns)
    } else if a.delay.count > 0 {
        format!("none (abusive p99 {})", format_duration(a.delay.p99_ns))
    } else {
        "none".to_string()
    }
}

/// The default order of two reports (goals aside): the harm rule, then [`CRITERIA`].
fn by_default(x: &AlgorithmReport, y: &AlgorithmReport) -> Ordering {
    severe_delay(x)
        .cmp(&severe_delay(y))
        .then_with(|| by_criteria(x, y))
}

fn by_criteria(x: &AlgorithmReport, y: &AlgorithmReport) -> Ordering {
    CRITERIA
        .iter()
        .fold(Ordering::Equal, |o, c| o.then_with(|| (c.cmp)(x, y)))
}

/// What ranks `first` above `second`, in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// It misses fewer goals.
    Goals,
    /// `second` delays legitimate requests past [`SEVERE_DELAY_NS`], `first` does not.
    SevereDelay,
    /// The first criterion of [`CRITERIA`] on which they differ (its index).
    Criterion(usize),
    /// Nothing: they tie, and the scenario lists `first` first.
    Order,
}

/// What puts `first` ahead of `second`.
pub fn decided(first: &Ranked, second: &Ranked) -> Decided {
    if first.missed() != second.missed() {
        return Decided::Goals;
    }
    if first.severe_delay() != second.severe_delay() {
        return Decided::SevereDelay;
    }
    first_difference(first.report, second.report).map_or(Decided::Order, Decided::Criterion)
}

/// The first of [`CRITERIA`] on which `x` and `y` differ (its index), if any.
pub fn first_difference(x: &AlgorithmReport, y: &AlgorithmReport) -> Option<usize> {
    CRITERIA
        .iter()
        .position(|c| (c.cmp)(x, y) != Ordering::Equal)
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
                rank: 0,
                results,
                reason: String::new(),
            };
            r.reason = reason(&r, goals.len());
            (i, r)
        })
        .collect();
    let order = |a: &Ranked, b: &Ranked| {
        a.missed()
            .cmp(&b.missed())
            .then_with(|| by_default(a.report, b.report))
    };
    ranked.sort_by(|(i, a), (j, b)| order(a, b).then(i.cmp(j)));
    let mut out: Vec<Ranked<'a>> = Vec::with_capacity(ranked.len());
    for (place, (_, mut r)) in ranked.into_iter().enumerate() {
        r.rank = match out.last() {
            Some(prev) if order(prev, &r) == Ordering::Equal => prev.rank,
            _ => place + 1,
        };
        out.push(r);
    }
    out
}

/// The default criteria's figures of one report, in human units (leakage only where there is
/// abusive traffic).
pub fn figures(a: &AlgorithmReport) -> String {
    CRITERIA
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2 || a.roles.abusive_leakage.is_some())
        .map(|(_, c)| (c.show)(a))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A share as a percentage with one decimal: `91.5%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// The figures a reader needs to see why the algorithm sits where it does: the goals it missed
/// with the measured value, the harm rule when it applies, then the default criteria's figures.
fn reason(r: &Ranked, goals: usize) -> String {
    let mut figures = figures(r.report);
    if r.severe_delay() {
        figures = format!(
            "ranked after the contenders without it: legit p99 delay {} is over 10s; {figures}",
            format_duration(r.report.roles.legit_delay_p99_ns)
        );
    }
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

    /// What puts `first` ahead of `second` in words ("serves more legitimate requests"), or `None`
    /// when only the scenario's order separates them.
    fn decided_by(first: &Ranked, second: &Ranked) -> Option<&'static str> {
        match decided(first, second) {
            Decided::Goals => Some("misses fewer goals"),
            Decided::SevereDelay => Some("does not delay legitimate requests past 10s"),
            Decided::Criterion(i) => Some(CRITERIA[i].better_for(first.report)),
            Decided::Order => None,
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
        assert_eq!(ranked.iter().map(|r| r.rank).collect::<Vec<_>>(), [1, 2, 3]);
    }

    /// Goodput within 0.05 percentage point is a tie, decided by violations, then by delay.
    #[test]
    fn near_equal_goodput_goes_to_violations_then_delay() {
        let reports = [
            report("a", 0.91504, 10, 0),
            report("b", 0.91496, 0, 6),
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
            Some("admits fewer requests beyond the intent")
        );
        // Identical figures: only the scenario's order separates them, and they share a rank.
        let same = [
            report("x", 0.5, 0, 0),
            report("w", 0.9, 0, 0),
            report("y", 0.5, 0, 0),
        ];
        let ranked = rank(&[], &same);
        assert_eq!(decided_by(&ranked[1], &ranked[2]), None);
        assert_eq!(decided(&ranked[1], &ranked[2]), Decided::Order);
        assert_eq!(order(&same), ["w", "x", "y"]);
        assert_eq!(ranked.iter().map(|r| r.rank).collect::<Vec<_>>(), [1, 2, 2]);
    }

    /// nat's shape: the leaky bucket serves the most but delays legit users by a p99 of 60 s;
    /// it ranks after every contender that does not delay past 10 s, whatever its goodput.
    #[test]
    fn a_severe_delay_ranks_after_every_contender_without_one() {
        let reports = [
            report("fixed_window", 0.9056, 2039, 0),
            report("leaky_bucket", 0.9151, 0, 60),
            report("sliding_window_log", 0.8478, 0, 0),
            report("shaper_10s", 0.90, 0, 10),
        ];
        assert_eq!(
            order(&reports),
            [
                "fixed_window",
                "shaper_10s",
                "sliding_window_log",
                "leaky_bucket"
            ]
        );
        let ranked = rank(&[], &reports);
        // Exactly 10 s is not over 10 s: only the 60 s shaper is demoted.
        assert!(ranked[3].severe_delay() && !ranked[1].severe_delay());
        assert_eq!(decided(&ranked[2], &ranked[3]), Decided::SevereDelay);
        assert_eq!(
            decided(&ranked[0], &ranked[1]),
            Decided::Criterion(0),
            "goodput still decides among the rest"
        );
        assert!(
            ranked[3].reason.starts_with(
                "ranked after the contenders without it: legit p99 delay 1m is over 10s; \
                 legit goodput 91.5%"
            ),
            "{}",
            ranked[3].reason
        );
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
                .starts_with("misses `delay_p99_ns <= 1s` (1m); ranked after the contenders"),
            "{}",
            ranked[1].reason
        );
    }
}
