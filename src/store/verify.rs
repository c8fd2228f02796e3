//! `rlsim verify`: each algorithm's decisions from the in-memory model and from Redis,
//! compared one by one.

use crate::algorithms::{Decision, KeyId, Outcome};
use crate::time::Nanos;
use std::fmt::Write as _;

pub use crate::sim::Tally;

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

/// What `rlsim verify` compared: the scenario, the store and each contender's tally.
#[derive(Debug, Clone)]
pub struct Verification<'a> {
    pub scenario: &'a str,
    pub url: &'a str,
    /// `--limit`: at most this many decisions per algorithm compared.
    pub limit: Option<u64>,
    pub tallies: &'a [Tally],
    /// Contenders that decide in memory only (stacked rules, simulated deployments).
    pub in_memory: &'a [&'a str],
}

/// Why a contender of `in_memory` was not stored.
const IN_MEMORY: &str = "stacked rules and simulated deployments decide in memory only";

impl Verification<'_> {
    /// Algorithms compared through a script.
    pub fn verified(&self) -> usize {
        self.tallies.iter().filter(|t| t.script.is_some()).count()
    }

    /// Something was compared, and every comparison agreed.
    pub fn passed(&self) -> bool {
        self.verified() > 0 && self.tallies.iter().all(Tally::exact)
    }
}

/// The text report: one line per algorithm, and the first disagreement of each that has one.
pub fn text(v: &Verification) -> String {
    let mut out = format!("verify {} against {}\n", v.scenario, v.url);
    let width = v
        .tallies
        .iter()
        .map(|t| t.algorithm.len())
        .chain(v.in_memory.iter().map(|n| n.len()))
        .max()
        .unwrap_or(0);
    for t in v.tallies {
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
    for name in v.in_memory {
        let _ = writeln!(out, "  {name:width$}  not stored: {IN_MEMORY}");
    }
    if let Some(n) = v.limit {
        let _ = writeln!(
            out,
            "(at most {n} decisions per algorithm compared: --limit)"
        );
    }
    out
}

/// The same report as one JSON document (`rlsim verify --format json`).
pub fn json(v: &Verification) -> Vec<u8> {
    let mut algorithms: Vec<Row> = v.tallies.iter().map(Row::compared).collect();
    algorithms.extend(
        v.in_memory
            .iter()
            .map(|name| Row::in_memory(name, IN_MEMORY)),
    );
    let doc = Doc {
        rlsim_version: env!("CARGO_PKG_VERSION"),
        scenario: v.scenario,
        store: v.url,
        limit: v.limit,
        verified: v.verified(),
        passed: v.passed(),
        algorithms,
    };
    let mut out = serde_json::to_vec_pretty(&doc).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// The JSON document's shape (field order is the output's).
#[derive(serde::Serialize)]
struct Doc<'a> {
    rlsim_version: &'static str,
    scenario: &'a str,
    store: &'a str,
    limit: Option<u64>,
    /// Algorithms compared through a script; 0 fails the verification.
    verified: usize,
    passed: bool,
    algorithms: Vec<Row<'a>>,
}

#[derive(serde::Serialize)]
struct Row<'a> {
    algorithm: &'a str,
    /// The script that stored it; `null` when nothing did (`not_stored` says why).
    script: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_stored: Option<&'static str>,
    decisions: u64,
    agreed: u64,
    admissions_agreed: u64,
    exact: bool,
    first_disagreement: Option<First>,
}

impl Row<'_> {
    /// A contender compared through its script (or with none to compare through).
    fn compared(t: &Tally) -> Row<'_> {
        Row {
            algorithm: &t.algorithm,
            script: t.script,
            not_stored: t.script.is_none().then_some("no Redis script for it"),
            decisions: t.decisions,
            agreed: t.agreed,
            admissions_agreed: t.admissions_agreed,
            exact: t.exact(),
            first_disagreement: t.first.map(|d| First {
                request: d.request,
                time_ns: d.time,
                key: d.key,
                model: Shown::of(&d.model),
                store: Shown::of(&d.store),
            }),
        }
    }

    /// A contender that decides in memory only: nothing to compare.
    fn in_memory<'a>(name: &'a str, reason: &'static str) -> Row<'a> {
        Row {
            algorithm: name,
            script: None,
            not_stored: Some(reason),
            decisions: 0,
            agreed: 0,
            admissions_agreed: 0,
            exact: true,
            first_disagreement: None,
        }
    }
}

#[derive(serde::Serialize)]
struct First {
    request: u64,
    time_ns: Nanos,
    key: KeyId,
    model: Shown,
    store: Shown,
}

/// One side's decision of the first disagreement.
#[derive(serde::Serialize)]
struct Shown {
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_ns: Option<Nanos>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_ns: Option<Nanos>,
    remaining: u64,
    reset_at_ns: Nanos,
}

impl Shown {
    fn of(d: &Decision) -> Shown {
        let (outcome, delay_ns, retry_after_ns) = match d.outcome {
            Outcome::Allow => ("allow", None, None),
            Outcome::Delay(n) => ("delay", Some(n), None),
            Outcome::Reject { retry_after } => ("reject", None, Some(retry_after)),
        };
        Shown {
            outcome,
            delay_ns,
            retry_after_ns,
            remaining: d.remaining,
            reset_at_ns: d.reset_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Arrival;

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
        let tallies = [t];
        let v = Verification {
            scenario: "s.toml",
            url: "redis://x:1",
            limit: None,
            tallies: &tallies,
            in_memory: &["stack"],
        };
        assert_eq!((v.verified(), v.passed()), (1, false));
        let report = text(&v);
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
        assert!(
            report.contains("stack  not stored: stacked rules"),
            "{report}"
        );
        let doc: serde_json::Value = serde_json::from_slice(&json(&v)).unwrap();
        assert_eq!(
            (doc["verified"].as_u64(), doc["passed"].as_bool()),
            (Some(1), Some(false))
        );
        let first = &doc["algorithms"][0]["first_disagreement"];
        assert_eq!(first["request"], 2);
        assert_eq!(first["store"]["remaining"], 2);
        assert_eq!(doc["algorithms"][1]["algorithm"], "stack");
        assert_eq!(doc["algorithms"][1]["script"], serde_json::Value::Null);
    }
}
