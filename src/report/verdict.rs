//! The verdict: the contender to choose, the runner-up, why the first beats the second, and
//! what to mind about the choice. One structure, built once from the ranking
//! ([`super::ranking`]): `rlsim run` prints it after its table ([`Verdict::lines`]),
//! `summary.json` carries it as `verdict`, and the reports open with it ([`Verdict::blocks`]).
//! Its texts are plain (no Markdown), so a program can show them as they are.

use super::document::{Block, plain};
use super::ranking::{self, CRITERIA, Decided, Ranked, percent};
use super::resonance::resonance;
use super::table::wrap;
use super::yardstick;
use crate::metrics::AlgorithmReport;
use crate::scenario::{Goal, Scenario, Shape};
use crate::time::format_duration;
use crate::traffic::Role;
use serde::Serialize;
use std::cmp::Ordering;

/// Abusive leakage above this share is "most of the abusive traffic": a recommended contender
/// letting that much through says so.
const MOST: f64 = 0.5;

/// The verdict of a run (`summary.json`'s `verdict`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Verdict {
    /// The contender ranked first; `null` when the scenario runs none.
    pub recommended: Option<String>,
    /// The contender ranked second; `null` with fewer than two.
    pub runner_up: Option<String>,
    /// What violations, burst factor, needless and collateral rejections are judged against
    /// (the scenario's intent): `100 per 1m per client`.
    pub yardstick: String,
    /// How the contenders were ordered: against the scenario's `[goals]` first, or by the
    /// default order alone.
    pub basis: Basis,
    /// Every contender, best first.
    pub ranking: Vec<Place>,
    /// Why the recommended contender ranks above the runner-up: the deciding figure first, then
    /// the other figures on which it is better. Empty without a runner-up.
    pub reasons: Vec<String>,
    /// The figures on which the recommended contender is worse than the runner-up (state per
    /// key aside).
    pub trade_offs: Vec<String>,
    /// What to mind about the choice, most serious first.
    pub warnings: Vec<Warning>,
    /// The scenario's goals and whether the recommended contender meets each; empty without
    /// `[goals]`.
    pub goals: Vec<GoalOutcome>,
    /// How often the recommended contender ranks first across the seeds of `--replicates N`
    /// (N ≥ 2); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
}

/// The recommendation across replicates (`verdict.stability`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Stability {
    /// Replicates in which the recommended contender ranks first.
    pub chosen: usize,
    /// Replicates run (replicate 1 is the run itself).
    pub of: usize,
    /// `chosen / of`.
    pub share: f64,
    /// `share` is at least the stable share (80%).
    pub stable: bool,
}

/// What runs beyond the plain one found, for the verdict to judge (`crate::replicate` builds
/// it; the default: nothing ran).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robustness {
    /// The contender ranked first in each replicate, replicate 1 (the run itself) first;
    /// empty without replicates.
    pub by_replicate: Vec<String>,
    /// The share of replicates a stable recommendation is chosen in.
    pub stable_share: f64,
    /// Each uncertain value that changes the recommendation, in file order.
    pub flips: Vec<Flip>,
}

/// One uncertain value that changes the recommendation of the sensitivity pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    /// The field, as `--set` names it (`traffic.scraper.kind`).
    pub field: String,
    /// The value of the field that changes the recommendation, as `--set` takes it.
    pub value: String,
    /// What it recommends, and what the scenario as written recommends.
    pub recommended: String,
    /// The contender the scenario as written recommends, which `value` displaces.
    pub instead_of: String,
}

/// How the ranking was ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Contenders meeting every goal first, then by goals missed, then the default order.
    Goals,
    /// The default order alone (docs/reports.md#which-algorithm).
    Default,
}

/// One contender's place.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Place {
    /// 1-based; contenders equal on every ranking figure share a rank.
    pub rank: usize,
    /// The contender's name (its row's `algorithm`).
    pub contender: String,
    /// The goals it misses, as `metric op bound` (`delay_p99_ns <= 1s`).
    pub goals_missed: Vec<String>,
    /// It delays legitimate requests by a p99 over 10 s, so it ranks after every contender
    /// that does not (the harm rule).
    pub severe_delay: bool,
    /// The figures it was ranked by.
    pub figures: Figures,
    /// Its place in words: the goals it missed with the measured values, then its figures.
    pub reason: String,
}

/// The figures the default order compares, as in `algorithms[]`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Figures {
    /// The share of legit requests admitted, in [0, 1] (`roles.legit_goodput`).
    pub legit_goodput: f64,
    /// Admissions beyond the client's entitlement, against the intent.
    pub policy_violations: u64,
    /// The share of abusive requests admitted (`roles.abusive_leakage`); `null` without abusive
    /// traffic.
    pub abusive_leakage: Option<f64>,
    /// 99th percentile of the delay added to legit requests, in nanoseconds.
    pub legit_delay_p99_ns: u64,
    /// 99th percentile of the delay added to any delayed request, in nanoseconds (`delay.p99_ns`).
    pub delay_p99_ns: u64,
    /// Rejections that, admitted alone, would have kept their client within its entitlement.
    pub needless_rejections: u64,
    /// Peak keyspace bytes per peak live key.
    pub state_bytes_per_key: f64,
}

/// One thing to mind.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    /// What the warning is about, as `summary.json` names it (`goals_unmet`, `leakage`, ...).
    pub kind: WarningKind,
    /// The contender it is about.
    pub contender: String,
    /// Plain text in JSON and on the terminal; the reports render its inline Markdown
    /// (an imported file's directives in code).
    #[serde(serialize_with = "serialize_plain")]
    pub text: String,
}

fn serialize_plain<S: serde::Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&plain(text))
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// No contender meets every goal.
    GoalsUnmet,
    /// The recommended contender ties the next on every ranking figure.
    Tie,
    /// A contender ranked first or second delays legitimate requests by a p99 over 10 s.
    SevereDelay,
    /// The recommended contender delays legitimate requests (p99 up to 10 s).
    Delay,
    /// A contender with a p99 delay over 10 s would rank higher on its other figures.
    Demoted,
    /// The recommended contender lets most of the abusive traffic through.
    Leakage,
    /// Across `--replicates`, the recommended contender ranks first in under 80% of them.
    Unstable,
    /// An `[[uncertain]]` input's value changes the recommendation (`--sensitivity`).
    Sensitive,
    /// The recommended contender admits requests beyond the intent.
    Violations,
    /// A perfectly periodic source's period fits a window a whole number of times: the
    /// ranking depends on that alignment (`--replicates` with `jitter`, or Poisson, tells).
    Resonance,
    /// The recommended contender refuses legitimate requests on keys another client shared.
    Collateral,
    /// What an imported contender's configuration is often misread as (docs/import.md).
    Import,
    /// A replayed trace cut at the scenario's `duration` with records left, or one with no
    /// record (its figures are 0 over 0 requests); `contender` is empty.
    Replay,
}

/// One goal against the recommended contender.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GoalOutcome {
    /// The goal as the scenario's `[goals]` names it (`max_delay_p99_ns`).
    pub name: String,
    /// `metric op bound`: `delay_p99_ns <= 1s`.
    pub goal: String,
    /// `null` when the metric has no value for the contender (then it is met).
    pub measured: Option<f64>,
    /// Whether the recommended contender meets the goal (a goal without a measured value is met).
    pub met: bool,
}

impl Verdict {
    /// The verdict of a run of `scenario`, with what its replicates and sensitivity pass found
    /// (`Robustness::default()` without them): the one constructor of the terminal's verdict,
    /// `summary.json`'s and the reports'.
    pub fn new(
        scenario: &Scenario,
        algorithms: &[AlgorithmReport],
        robustness: &Robustness,
    ) -> Verdict {
        // A recorded contender (production, a probed service) is what the candidates are
        // compared with, not one to deploy: it is judged and shown, never ranked.
        let recorded = |name: &str| {
            (scenario.algorithms.iter())
                .any(|c| c.name == name && matches!(c.shape, Shape::Recorded(_)))
        };
        let candidates: Vec<AlgorithmReport> = algorithms
            .iter()
            .filter(|a| !recorded(&a.algorithm))
            .cloned()
            .collect();
        let mut verdict = Verdict::judge(&scenario.goals, &yardstick(scenario), &candidates);
        let about = verdict.recommended.clone().unwrap_or_default();
        verdict.stability = stability(&about, robustness);
        // What the figures cover comes first: a cut or empty trace changes every one.
        let replays = super::replayed::warnings(scenario, algorithms).into_iter();
        let data = replays.map(|text| Warning {
            kind: WarningKind::Replay,
            contender: String::new(),
            text: format!("{text}."),
        });
        verdict.warnings.splice(0..0, data);
        for c in &scenario.algorithms {
            verdict.warnings.extend(c.notes.iter().map(|n| Warning {
                kind: WarningKind::Import,
                contender: c.name.clone(),
                text: format!("{n}."),
            }));
        }
        let warn = |kind, text: String| Warning {
            kind,
            contender: about.clone(),
            text,
        };
        if let Some(text) = unstable(&about, robustness) {
            verdict.warnings.push(warn(WarningKind::Unstable, text));
        }
        for text in sensitive(&robustness.flips) {
            verdict.warnings.push(warn(WarningKind::Sensitive, text));
        }
        for r in resonance(scenario) {
            verdict
                .warnings
                .push(warn(WarningKind::Resonance, format!("{}.", r.text())));
        }
        verdict
    }

    /// The verdict of `algorithms` (in the scenario's order) against `goals`, their figures
    /// judged against `yardstick`.
    pub fn judge(goals: &[Goal], yardstick: &str, algorithms: &[AlgorithmReport]) -> Verdict {
        let ranked = ranking::rank(goals, algorithms);
        let first = ranked.first();
        let second = ranked.get(1);
        Verdict {
            recommended: first.map(|r| r.report.algorithm.clone()),
            runner_up: second.map(|r| r.report.algorithm.clone()),
            yardstick: yardstick.to_string(),
            basis: if goals.is_empty() {
                Basis::Default
            } else {
                Basis::Goals
            },
            ranking: ranked.iter().map(place).collect(),
            reasons: match (first, second) {
                (Some(a), Some(b)) => reasons(a, b),
                _ => Vec::new(),
            },
            trade_offs: match (first, second) {
                (Some(a), Some(b)) => trade_offs(a.report, b.report),
                _ => Vec::new(),
            },
            warnings: warnings(&ranked, goals.len(), yardstick),
            goals: first.map_or_else(Vec::new, |r| {
                r.results
                    .iter()
                    .map(|g| GoalOutcome {
                        name: g.goal.name.clone(),
                        goal: g.goal.describe(),
                        measured: g.measured,
                        met: g.met,
                    })
                    .collect()
            }),
            stability: None,
        }
    }
}

/// How often `recommended` ranks first across the replicates (two or more).
fn stability(recommended: &str, r: &Robustness) -> Option<Stability> {
    let of = r.by_replicate.len();
    if of < 2 {
        return None;
    }
    let chosen = r.by_replicate.iter().filter(|c| *c == recommended).count();
    let share = chosen as f64 / of as f64;
    Some(Stability {
        chosen,
        of,
        share,
        stable: share >= r.stable_share,
    })
}

/// The warning of a recommendation ranked first in under the stable share of replicates,
/// naming the contenders ranked first in the others (most often first, ties in order of
/// first appearance).
fn unstable(recommended: &str, r: &Robustness) -> Option<String> {
    let s = stability(recommended, r).filter(|s| !s.stable)?;
    let mut others: Vec<(&str, usize)> = Vec::new();
    for c in r.by_replicate.iter().filter(|c| *c != recommended) {
        match others.iter_mut().find(|(n, _)| n == c) {
            Some((_, k)) => *k += 1,
            None => others.push((c, 1)),
        }
    }
    others.sort_by_key(|(_, k)| std::cmp::Reverse(*k));
    let others: Vec<String> = others.iter().map(|(n, k)| format!("{n} in {k}")).collect();
    Some(format!(
        "The recommendation is not stable across seeds: {recommended} ranks first in {} of {} \
         replicates ({:.0}%, under the {:.0}% a stable choice needs); the others: {}.",
        s.chosen,
        s.of,
        100.0 * s.share,
        100.0 * r.stable_share,
        others.join(", ")
    ))
}

/// One warning per uncertain input with a value that changes the recommendation, naming every
/// such value (inputs in file order).
fn sensitive(flips: &[Flip]) -> Vec<String> {
    let mut fields: Vec<&str> = Vec::new();
    for f in flips {
        if !fields.contains(&f.field.as_str()) {
            fields.push(&f.field);
        }
    }
    fields
        .iter()
        .map(|field| {
            let at: Vec<String> = (flips.iter())
                .filter(|f| f.field == *field)
                .map(|f| {
                    format!(
                        "{} ({} instead of {})",
                        f.value, f.recommended, f.instead_of
                    )
                })
                .collect();
            format!(
                "Input {field} flips the verdict at {}: the recommendation depends on it.",
                at.join(", ")
            )
        })
        .collect()
}

fn place(r: &Ranked) -> Place {
    let a = r.report;
    Place {
        rank: r.rank,
        contender: a.algorithm.clone(),
        goals_missed: (r.results.iter())
            .filter(|g| !g.met)
            .map(|g| g.goal.describe())
            .collect(),
        severe_delay: r.severe_delay(),
        figures: Figures {
            legit_goodput: a.roles.legit_goodput,
            policy_violations: a.policy_violations,
            abusive_leakage: a.roles.abusive_leakage,
            legit_delay_p99_ns: a.roles.legit_delay_p99_ns,
            delay_p99_ns: a.delay.p99_ns,
            needless_rejections: a.needless_rejections,
            state_bytes_per_key: a.state_bytes_per_key,
        },
        reason: plain(&r.reason),
    }
}

/// `figure X against Y` for criterion `i` of `a` and `b`.
fn against(i: usize, a: &AlgorithmReport, b: &AlgorithmReport) -> String {
    let c = &CRITERIA[i];
    match c.in_cost.is_some() && ranking::judged_in_cost(a) {
        // "0 cost against 2820 cost": the unit names the figure.
        true => format!("{} against {}", (c.value)(a), (c.value)(b)),
        false => format!("{} {} against {}", c.figure, (c.value)(a), (c.value)(b)),
    }
}

/// Why `first` ranks above `second`: what decided it, then the other figures on which it is
/// better.
fn reasons(first: &Ranked, second: &Ranked) -> Vec<String> {
    let (a, b) = (first.report, second.report);
    let decided = ranking::decided(first, second);
    let mut out = vec![match decided {
        Decided::Goals => format!(
            "{} misses fewer goals ({} against {})",
            a.algorithm,
            first.missed(),
            second.missed()
        ),
        Decided::SevereDelay => format!(
            "{} delays legitimate requests by a p99 of {}, over 10s, and {} does not",
            b.algorithm,
            format_duration(b.roles.legit_delay_p99_ns),
            a.algorithm
        ),
        Decided::Criterion(i) => format!(
            "{} {} ({})",
            a.algorithm,
            CRITERIA[i].better_for(a),
            against(i, a, b)
        ),
        Decided::Order => format!(
            "{} and {} tie on every ranking figure, and the scenario lists {} first",
            a.algorithm, b.algorithm, a.algorithm
        ),
    }];
    for (i, c) in CRITERIA.iter().enumerate() {
        // The delay criterion says again what the harm rule said.
        let said = decided == Decided::Criterion(i) || decided == Decided::SevereDelay && i == 3;
        if (c.cmp)(a, b) == Ordering::Less && !said {
            out.push(format!(
                "{} also {} ({})",
                a.algorithm,
                c.better_for(a),
                against(i, a, b)
            ));
        }
    }
    out
}

/// The figures on which `a` is worse than `b`, state per key aside (it harms nobody).
fn trade_offs(a: &AlgorithmReport, b: &AlgorithmReport) -> Vec<String> {
    let state = CRITERIA.len() - 1;
    (CRITERIA.iter().enumerate().take(state))
        .filter(|(_, c)| (c.cmp)(a, b) == Ordering::Greater)
        .map(|(i, c)| format!("{} {} ({})", a.algorithm, c.worse_for(a), against(i, a, b)))
        .collect()
}

/// The warnings of a ranking, most serious first.
fn warnings(ranked: &[Ranked], goals: usize, yardstick: &str) -> Vec<Warning> {
    let Some(first) = ranked.first() else {
        return Vec::new();
    };
    let a = first.report;
    let warn = |kind, r: &AlgorithmReport, text: String| Warning {
        kind,
        contender: r.algorithm.clone(),
        text,
    };
    let mut out = Vec::new();
    if goals > 0 && first.missed() > 0 {
        let missed: Vec<String> = (first.results.iter())
            .filter(|g| !g.met)
            .map(|g| g.goal.describe())
            .collect();
        let text = format!(
            "No contender meets every goal: {} misses the fewest, {} of {goals} ({}).",
            a.algorithm,
            first.missed(),
            missed.join(", ")
        );
        out.push(warn(WarningKind::GoalsUnmet, a, text));
    }
    let tied: Vec<&str> = (ranked.iter().skip(1))
        .filter(|r| r.rank == first.rank)
        .map(|r| r.report.algorithm.as_str())
        .collect();
    if !tied.is_empty() {
        let text = format!(
            "{} ties {} on every ranking figure: only the scenario's order puts it first.",
            a.algorithm,
            tied.join(", ")
        );
        out.push(warn(WarningKind::Tie, a, text));
    }
    out.extend(delay_warnings(ranked));
    out.extend(leakage_warning(ranked, yardstick));
    if a.policy_violations > 0 {
        let text = format!(
            "{} admits {} requests beyond the intent ({yardstick}); burst factor {:.2}.",
            a.algorithm, a.policy_violations, a.burst_factor
        );
        out.push(warn(WarningKind::Violations, a, text));
    }
    if a.collateral_rejections > 0 {
        let text = format!(
            "{} refuses {} legitimate requests of {} clients on keys another client shared \
             (a NAT address, a shared API key).",
            a.algorithm, a.collateral_rejections, a.collateral_clients
        );
        out.push(warn(WarningKind::Collateral, a, text));
    }
    out
}

/// Delays to mind: of the recommended contender (any), of the runner-up (over 10 s), and of a
/// contender the harm rule moved out of the first two places.
fn delay_warnings(ranked: &[Ranked]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, r) in ranked.iter().take(2).enumerate() {
        let a = r.report;
        let p99 = format_duration(a.roles.legit_delay_p99_ns);
        let which = if i == 0 { "recommended" } else { "runner-up" };
        let (kind, text) = if r.severe_delay() {
            (
                WarningKind::SevereDelay,
                format!(
                    "{} (the {which}) delays legitimate requests by a p99 of {p99}, over 10s: \
                     clients give up before that, so those requests are as good as refused.",
                    a.algorithm
                ),
            )
        } else if i == 0 && a.roles.legit_delayed > 0 {
            (
                WarningKind::Delay,
                format!(
                    "{} delays {} legitimate requests (p99 {p99}): their clients wait that long.",
                    a.algorithm, a.roles.legit_delayed
                ),
            )
        } else {
            continue;
        };
        out.push(Warning {
            kind,
            contender: a.algorithm.clone(),
            text,
        });
    }
    // A demoted contender that its other figures would have put in the first two places.
    let shown: Vec<&Ranked> = (ranked.iter().take(2))
        .filter(|r| !r.severe_delay())
        .collect();
    for r in ranked.iter().skip(2).filter(|r| r.severe_delay()) {
        let found = shown.iter().enumerate().find_map(|(j, above)| {
            let i = ranking::first_difference(r.report, above.report)?;
            let beats = (CRITERIA[i].cmp)(r.report, above.report) == Ordering::Less;
            (beats && above.missed() == r.missed()).then_some((j, above.report, i))
        });
        let Some((j, above, i)) = found else {
            continue;
        };
        let who = if j == 0 { "recommended" } else { "runner-up" };
        out.push(Warning {
            kind: WarningKind::Demoted,
            contender: r.report.algorithm.clone(),
            text: format!(
                "{} {} than the {who}, {} ({}), but ranks {} of {}: it delays legitimate \
                 requests by a p99 of {}, over 10s.",
                r.report.algorithm,
                CRITERIA[i].better_for(r.report),
                above.algorithm,
                against(i, r.report, above),
                r.rank,
                ranked.len(),
                format_duration(r.report.roles.legit_delay_p99_ns)
            ),
        });
    }
    out
}

/// The recommended contender lets most of the abusive traffic through: by how much, per
/// abusive source, and against the least leaky contender.
fn leakage_warning(ranked: &[Ranked], yardstick: &str) -> Option<Warning> {
    let a = ranked.first()?.report;
    let leak = a.roles.abusive_leakage.filter(|l| *l > MOST)?;
    let sources: Vec<String> = (a.sources.iter())
        .filter(|s| s.role == Role::Abusive)
        .map(|s| format!("{} {}", s.name, percent(s.admitted_share)))
        .collect();
    let least = ranked
        .iter()
        .filter_map(|r| Some((r.report, r.report.roles.abusive_leakage?)))
        .min_by(|x, y| x.1.total_cmp(&y.1))?;
    let mut text = format!(
        "{} lets {} of the abusive traffic through ({}).",
        a.algorithm,
        percent(leak),
        sources.join(", ")
    );
    if least.1 < leak - 0.0005 {
        text.push_str(&format!(
            " The least leaky contender, {}, lets {} through.",
            least.0.algorithm,
            percent(least.1)
        ));
    }
    if least.1 > MOST {
        text.push_str(&format!(
            " No contender stops most of it: a limit stops only what exceeds the intent \
             ({yardstick}), so what stays within it needs another defence."
        ));
    }
    Some(Warning {
        kind: WarningKind::Leakage,
        contender: a.algorithm.clone(),
        text,
    })
}

/// The verdict's report blocks, after its heading: who is recommended and how the ranking was
/// made, why, and the warnings.
impl Verdict {
    /// The verdict's report blocks, after its heading: who is recommended and how the ranking
    /// was made, why, and the warnings.
    pub fn blocks(&self) -> Vec<Block> {
        let Some(first) = &self.recommended else {
            return vec![Block::Paragraph("The scenario runs no contender.".into())];
        };
        let mut text = format!("**{first}** is the recommended contender");
        if let Some(second) = &self.runner_up {
            text.push_str(&format!("; the runner-up is **{second}**"));
        }
        text.push_str(". ");
        text.push_str(&self.basis_words());
        let mut b = vec![Block::Paragraph(text)];
        if !self.reasons.is_empty() {
            b.push(Block::Paragraph(format!(
                "Why: {}.",
                self.reasons.join("; ")
            )));
        }
        if !self.trade_offs.is_empty() {
            b.push(Block::Paragraph(format!(
                "At a cost: {}.",
                self.trade_offs.join("; ")
            )));
        }
        if !self.warnings.is_empty() {
            b.push(Block::List(
                false,
                (self.warnings.iter())
                    .map(|w| format!("**Warning**: {}", w.text))
                    .collect(),
            ));
        }
        b
    }

    fn basis_words(&self) -> String {
        let goals = self.goals.len();
        let missed = self.goals.iter().filter(|g| !g.met).count();
        match self.basis {
            Basis::Default => "The scenario states no `[goals]`, so the contenders are ranked by \
                 the default order ([Which algorithm](#which-algorithm))."
                .to_string(),
            Basis::Goals if missed == 0 => {
                format!("It meets all {goals} of the scenario's goals.")
            }
            Basis::Goals => format!(
                "No contender meets every goal; it misses the fewest ({missed} of {goals})."
            ),
        }
    }

    /// The verdict for the terminal, plain text in lines of at most `width` columns:
    /// `verdict: A (runner-up B)`, `why: ...`, then one `warning: ...` each.
    pub fn lines(&self, width: usize) -> String {
        let Some(first) = &self.recommended else {
            return "verdict: no contender ran\n".into();
        };
        let mut out = String::new();
        let head = match &self.runner_up {
            Some(second) => format!("verdict: {first} is recommended; runner-up {second}"),
            None => format!("verdict: {first} is recommended"),
        };
        let basis = match self.basis {
            Basis::Default => " (default order: no [goals])".to_string(),
            Basis::Goals => {
                let met = self.goals.iter().filter(|g| g.met).count();
                format!(" (meets {met} of {} goals)", self.goals.len())
            }
        };
        out.push_str(&wrap(&format!("{head}{basis}"), width, "  "));
        if !self.reasons.is_empty() {
            let why = format!("  why: {}.", self.reasons.join("; "));
            out.push_str(&wrap(&why, width, "       "));
        }
        if !self.trade_offs.is_empty() {
            let but = format!("  but: {}.", self.trade_offs.join("; "));
            out.push_str(&wrap(&but, width, "       "));
        }
        for w in &self.warnings {
            out.push_str(&wrap(
                &format!("  warning: {}", plain(&w.text)),
                width,
                "           ",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Counts, DelayStats, RoleReport, SourceReport};

    /// A hand-built row: legit goodput, violations, the legit p99 delay in seconds (0: none),
    /// and the abusive leakage (`None`: no abusive traffic).
    fn row(
        name: &str,
        goodput: f64,
        violations: u64,
        p99_s: u64,
        leak: Option<f64>,
    ) -> AlgorithmReport {
        let delayed = u64::from(p99_s > 0) * 100;
        let scraper = leak.map(|l| {
            let allowed = (l * 1000.0).round() as u64;
            let counts = Counts {
                offered: 1000,
                allowed,
                rejected: 1000 - allowed,
                ..Counts::default()
            };
            SourceReport::new("scraper".into(), Role::Abusive, counts)
        });
        AlgorithmReport {
            algorithm: name.into(),
            policy_violations: violations,
            burst_factor: if violations > 0 { 1.5 } else { 1.0 },
            state_bytes_per_key: 64.0,
            roles: RoleReport {
                legit_goodput: goodput,
                legit_delayed: delayed,
                legit_delay_p99_ns: p99_s * 1_000_000_000,
                abusive_leakage: leak,
                ..RoleReport::default()
            },
            delay: DelayStats {
                count: delayed,
                p99_ns: p99_s * 1_000_000_000,
                ..DelayStats::default()
            },
            sources: scraper.into_iter().collect(),
            ..AlgorithmReport::default()
        }
    }

    fn kinds(v: &Verdict) -> Vec<WarningKind> {
        v.warnings.iter().map(|w| w.kind).collect()
    }

    const YARDSTICK: &str = "100 per 1m per ip";

    /// nat's shape: the leaky bucket serves more than fixed_window but delays legit users by a
    /// p99 of 60 s; by_user serves everyone and lets the whole scraper through.
    #[test]
    fn nat_a_sixty_second_delay_is_harm_and_a_total_leak_is_said() {
        let rows = [
            row("fixed_window", 0.9056, 2039, 0, Some(0.6639)),
            row("leaky_bucket", 0.9151, 0, 60, Some(0.6906)),
            row("by_user", 1.0, 5449, 0, Some(1.0)),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert_eq!(v.recommended.as_deref(), Some("by_user"));
        assert_eq!(v.runner_up.as_deref(), Some("fixed_window"));
        assert_eq!(v.basis, Basis::Default);
        let places: Vec<(usize, &str, bool)> = (v.ranking.iter())
            .map(|p| (p.rank, p.contender.as_str(), p.severe_delay))
            .collect();
        assert_eq!(
            places,
            [
                (1, "by_user", false),
                (2, "fixed_window", false),
                (3, "leaky_bucket", true)
            ]
        );
        assert_eq!(
            v.reasons,
            ["by_user serves more legitimate requests (legit goodput 100.0% against 90.6%)"]
        );
        assert_eq!(
            v.trade_offs,
            [
                "by_user admits more requests beyond the intent (violations 5449 against 2039)",
                "by_user lets more abusive traffic through (abuse leak 100.0% against 66.4%)"
            ]
        );
        assert_eq!(
            kinds(&v),
            [
                WarningKind::Demoted,
                WarningKind::Leakage,
                WarningKind::Violations
            ]
        );
        assert_eq!(
            v.warnings[0].text,
            "leaky_bucket serves more legitimate requests than the runner-up, fixed_window \
             (legit goodput 91.5% against 90.6%), but ranks 3 of 3: it delays legitimate \
             requests by a p99 of 1m, over 10s."
        );
        assert_eq!(
            v.warnings[1].text,
            "by_user lets 100.0% of the abusive traffic through (scraper 100.0%). The least \
             leaky contender, fixed_window, lets 66.4% through. No contender stops most of it: a \
             limit stops only what exceeds the intent (100 per 1m per ip), so what stays within \
             it needs another defence."
        );
        assert_eq!(
            v.warnings[2].text,
            "by_user admits 5449 requests beyond the intent (100 per 1m per ip); burst factor 1.50."
        );
        // The place's reason is plain text; its figures are the report's.
        assert_eq!(v.ranking[2].figures.legit_delay_p99_ns, 60_000_000_000);
        assert!(!v.ranking.iter().any(|p| p.reason.contains('`')));
    }

    /// Under 50 % leaked, nothing is said; when some contender stops most of it, the warning
    /// names it without the "no contender" sentence.
    #[test]
    fn leakage_is_a_warning_only_past_half() {
        let rows = [
            row("a", 1.0, 0, 0, Some(0.5)),
            row("b", 0.9, 0, 0, Some(0.1)),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert!(kinds(&v).is_empty(), "{:?}", v.warnings);
        let rows = [
            row("a", 1.0, 0, 0, Some(0.8)),
            row("b", 0.9, 0, 0, Some(0.1)),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert_eq!(
            v.warnings[0].text,
            "a lets 80.0% of the abusive traffic through (scraper 80.0%). The least leaky \
             contender, b, lets 10.0% through."
        );
        assert_eq!(
            v.trade_offs,
            ["a lets more abusive traffic through (abuse leak 80.0% against 10.0%)"]
        );
    }

    /// Equal on every figure: a shared rank, a reason that says so, and a warning.
    #[test]
    fn ties_share_a_rank_and_are_called_out() {
        let rows = [
            row("x", 0.5, 0, 0, None),
            row("y", 0.5, 0, 0, None),
            row("z", 0.4, 0, 0, None),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        let ranks: Vec<usize> = v.ranking.iter().map(|p| p.rank).collect();
        assert_eq!(ranks, [1, 1, 3]);
        assert_eq!(
            v.reasons,
            ["x and y tie on every ranking figure, and the scenario lists x first"]
        );
        assert!(v.trade_offs.is_empty());
        assert_eq!(kinds(&v), [WarningKind::Tie]);
        assert_eq!(
            v.warnings[0].text,
            "x ties y on every ranking figure: only the scenario's order puts it first."
        );
    }

    /// A severe delay decides against a contender that serves more; when every contender has
    /// one, the recommended one is warned about; a mild delay gets a milder warning.
    #[test]
    fn delay_harm_decides_and_warns() {
        let rows = [
            row("shaper", 1.0, 0, 60, None),
            row("limiter", 0.5, 0, 0, None),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert_eq!(v.recommended.as_deref(), Some("limiter"));
        assert_eq!(
            v.reasons,
            ["shaper delays legitimate requests by a p99 of 1m, over 10s, and limiter does not"]
        );
        // Two contenders: the shaper is the runner-up, and is warned about as such.
        assert_eq!(kinds(&v), [WarningKind::SevereDelay]);
        assert!(v.warnings[0].text.starts_with(
            "shaper (the runner-up) delays legitimate requests by a p99 of 1m, over 10s"
        ));
        let rows = [
            row("slow", 1.0, 0, 60, None),
            row("slower", 1.0, 0, 90, None),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert_eq!(
            kinds(&v),
            [WarningKind::SevereDelay, WarningKind::SevereDelay]
        );
        let rows = [row("mild", 1.0, 0, 2, None), row("none", 0.9, 0, 0, None)];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        assert_eq!(kinds(&v), [WarningKind::Delay]);
        assert_eq!(
            v.warnings[0].text,
            "mild delays 100 legitimate requests (p99 2s): their clients wait that long."
        );
    }

    /// Goals first: the contender meeting more goals wins; when none meets them all, the verdict
    /// says so and lists the recommended contender's goals with their outcome.
    #[test]
    fn goals_decide_first_and_unmet_goals_are_warned_about() {
        let table: std::collections::BTreeMap<String, toml::Spanned<toml::Value>> =
            toml::from_str("max_policy_violations = 0\nmin_legit_goodput = 0.99").unwrap();
        let shape = crate::metrics::MetricNames {
            algorithm: vec!["policy_violations".into(), "legit_goodput".into()],
            ..Default::default()
        };
        let goals = crate::scenario::goals::resolve(&table, &shape, 60_000_000_000).unwrap();
        let rows = [
            row("open", 1.0, 10, 0, None),
            row("tight", 0.95, 0, 0, None),
        ];
        let v = Verdict::judge(&goals, YARDSTICK, &rows);
        assert_eq!(v.basis, Basis::Goals);
        // Each misses one goal: the default order decides (goodput).
        assert_eq!(v.recommended.as_deref(), Some("open"));
        assert_eq!(kinds(&v)[0], WarningKind::GoalsUnmet);
        assert_eq!(
            v.warnings[0].text,
            "No contender meets every goal: open misses the fewest, 1 of 2 (policy_violations <= 0)."
        );
        let met: Vec<(&str, bool)> = v.goals.iter().map(|g| (g.goal.as_str(), g.met)).collect();
        assert_eq!(
            met,
            [
                ("policy_violations <= 0", false),
                ("legit_goodput >= 0.99", true)
            ]
        );
        let rows = [
            row("open", 1.0, 10, 0, None),
            row("fits", 0.995, 0, 0, None),
        ];
        let v = Verdict::judge(&goals, YARDSTICK, &rows);
        assert_eq!(v.recommended.as_deref(), Some("fits"));
        assert_eq!(v.reasons[0], "fits misses fewer goals (0 against 1)");
        assert_eq!(v.ranking[1].goals_missed, ["policy_violations <= 0"]);
    }

    /// The terminal lines: plain, at most the width, the same every time; no contender at all
    /// reads as such.
    #[test]
    fn terminal_lines_are_plain_and_fit() {
        let rows = [
            row("fixed_window", 0.9056, 2039, 0, Some(0.6639)),
            row("leaky_bucket", 0.9151, 0, 60, Some(0.6906)),
            row("by_user", 1.0, 5449, 0, Some(1.0)),
        ];
        let v = Verdict::judge(&[], YARDSTICK, &rows);
        let text = v.lines(80);
        assert!(text.starts_with(
            "verdict: by_user is recommended; runner-up fixed_window (default order: no [goals])\n"
        ) || text.starts_with("verdict: by_user is recommended; runner-up fixed_window (default"));
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(!text.contains('`') && !text.contains("**"), "{text}");
        assert_eq!(text.matches("\n  warning: ").count(), 3, "{text}");
        assert_eq!(text, Verdict::judge(&[], YARDSTICK, &rows).lines(80));
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(
            json,
            serde_json::to_string(&Verdict::judge(&[], YARDSTICK, &rows)).unwrap()
        );
        let none = Verdict::judge(&[], YARDSTICK, &[]);
        assert_eq!(none.recommended, None);
        assert_eq!(none.lines(80), "verdict: no contender ran\n");
    }
}
