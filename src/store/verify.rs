//! `rlsim verify`: each algorithm's decisions from the in-memory model and from Redis,
//! compared one by one.

use crate::algorithms::{Decision, KeyId, Outcome};
use crate::time::Nanos;
use crate::traffic::Arrival;
use std::fmt::Write as _;

/// The first decision on which the store and the model differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disagreement {
    /// 1-based position among the algorithm's decisions.
    pub request: u64,
    pub time: Nanos,
    pub key: KeyId,
    pub model: Decision,
    pub store: Decision,
}

/// One algorithm's comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub algorithm: String,
    /// The script that stored it; `None` when no script does (the model ran alone).
    pub script: Option<&'static str>,
    /// Decisions made by both.
    pub decisions: u64,
    /// Decisions equal in every field (outcome, retry-after or delay, remaining, reset).
    pub agreed: u64,
    /// Decisions whose admission (admitted or refused) agrees.
    pub admissions_agreed: u64,
    pub first: Option<Disagreement>,
}

impl Tally {
    pub fn new(algorithm: &str, script: Option<&'static str>) -> Tally {
        Tally {
            algorithm: algorithm.to_string(),
            script,
            decisions: 0,
            agreed: 0,
            admissions_agreed: 0,
            first: None,
        }
    }

    pub fn record(&mut self, arrival: &Arrival, model: &Decision, store: &Decision) {
        self.decisions += 1;
        if model == store {
            self.agreed += 1;
        } else if self.first.is_none() {
            self.first = Some(Disagreement {
                request: self.decisions,
                time: arrival.time,
                key: arrival.key,
                model: *model,
                store: *store,
            });
        }
        if model.outcome.is_admitted() == store.outcome.is_admitted() {
            self.admissions_agreed += 1;
        }
    }

    /// Every decision agreed (vacuously so for an algorithm without a script).
    pub fn exact(&self) -> bool {
        self.agreed == self.decisions
    }
}

fn decision(d: &Decision) -> String {
    let outcome = match d.outcome {
        Outcome::Allow => "allow".to_string(),
        Outcome::Delay(n) => format!("delay {n} ns"),
        Outcome::Reject { retry_after } => format!("reject, retry after {retry_after} ns"),
    };
    format!(
        "{outcome}, remaining {}, reset at {} ns",
        d.remaining, d.reset_at
    )
}

/// The text report: one line per algorithm, and the first disagreement of each that has one.
pub fn text(scenario: &str, url: &str, tallies: &[Tally]) -> String {
    let mut out = format!("verify {scenario} against {url}\n");
    let width = tallies.iter().map(|t| t.algorithm.len()).max().unwrap_or(0);
    for t in tallies {
        let name = &t.algorithm;
        let Some(script) = t.script else {
            let _ = writeln!(out, "  {name:width$}  not stored: no Redis script for it");
            continue;
        };
        let pct = if t.decisions == 0 {
            100.0
        } else {
            100.0 * t.agreed as f64 / t.decisions as f64
        };
        let verdict = if t.exact() { "ok" } else { "DISAGREE" };
        let _ = writeln!(
            out,
            "  {name:width$}  {verdict:8} {}/{} decisions agree ({pct:.3}%), admissions {}/{} [script {script}]",
            t.agreed, t.decisions, t.admissions_agreed, t.decisions
        );
        if let Some(d) = &t.first {
            let _ = writeln!(
                out,
                "  {:width$}  first disagreement: request {} at {} ns, key #{}\n  {:width$}    model: {}\n  {:width$}    redis: {}",
                "",
                d.request,
                d.time,
                d.key,
                "",
                decision(&d.model),
                "",
                decision(&d.store)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(time: Nanos, key: KeyId) -> Arrival {
        Arrival::new(time, key, 0, 0)
    }

    #[test]
    fn counts_agreement_and_keeps_the_first_disagreement() {
        let mut t = Tally::new("gcra", Some("gcra"));
        let allow = Decision::allow(3, 10);
        let other = Decision::allow(2, 10);
        let refuse = Decision {
            outcome: Outcome::Reject { retry_after: 5 },
            remaining: 0,
            reset_at: 10,
        };
        t.record(&arrival(1, 0), &allow, &allow);
        t.record(&arrival(2, 7), &allow, &other);
        t.record(&arrival(3, 8), &allow, &refuse);
        assert_eq!((t.decisions, t.agreed, t.admissions_agreed), (3, 1, 2));
        let first = t.first.unwrap();
        assert_eq!((first.request, first.time, first.key), (2, 2, 7));
        assert!(!t.exact());
        let report = text("s.toml", "redis://x:1", &[t]);
        assert!(
            report.contains("DISAGREE 1/3 decisions agree (33.333%)"),
            "{report}"
        );
        assert!(
            report.contains("first disagreement: request 2 at 2 ns, key #7"),
            "{report}"
        );
        assert!(
            report.contains("model: allow, remaining 3, reset at 10 ns"),
            "{report}"
        );
        assert!(
            report.contains("redis: allow, remaining 2, reset at 10 ns"),
            "{report}"
        );
    }
}
