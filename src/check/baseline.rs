//! Comparing a run with an earlier one: which metrics got worse, beyond a relative tolerance.
//!
//! Only metrics with a known "better" direction are compared; counts such as `offered` or
//! `admitted` say nothing good or bad on their own.

use crate::check::metric::{Flat, Values};
use crate::error::{Error, Location, Result};
use crate::metrics::AlgorithmReport;
use crate::suggest;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A change this small is float noise, even against a baseline of zero.
const EPSILON: f64 = 1e-12;

pub use crate::metrics::{Better, better};

/// Relative tolerances: a default and per-metric overrides.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tolerance {
    pub default: f64,
    pub per_metric: BTreeMap<String, f64>,
}

impl Tolerance {
    /// From `--tolerance REL` and each `--tolerance-for METRIC=REL`. A tolerance is a
    /// fraction (`0.05`) or a percentage (`5%`).
    pub fn parse(default: &str, overrides: &[String]) -> Result<Tolerance> {
        let check = |text: &str, what: &str| {
            let (number, scale) = match text.trim().strip_suffix('%') {
                Some(percent) => (percent.trim(), 100.0),
                None => (text.trim(), 1.0),
            };
            // A million times the baseline is past any regression worth gating on.
            let range =
                "must be a fraction from 0 to 1000000 (like 0.05), or a percentage (like 5%)";
            let v = number
                .parse::<f64>()
                .map_err(|_| Error::Usage(format!("{what}: `{text}` is not a number: {range}")))?
                / scale;
            if (0.0..=1e6).contains(&v) {
                Ok(v)
            } else {
                let why = match v {
                    v if v > 1e6 => "too large",
                    v if v < 0.0 => "too small",
                    _ => "not a number",
                };
                Err(Error::Usage(format!("{what}: `{text}` is {why}: {range}")))
            }
        };
        let mut tolerance = Tolerance {
            default: check(default, "--tolerance")?,
            per_metric: BTreeMap::new(),
        };
        for o in overrides {
            let what = format!("--tolerance-for {o}");
            let (metric, rel) = o
                .split_once('=')
                .ok_or_else(|| Error::Usage(format!("{what}: expected METRIC=REL")))?;
            if better(metric).is_none() {
                let known = crate::metrics::directed();
                let msg = suggest::unknown("compared metric", metric, known);
                return Err(Error::Usage(format!("{what}: {msg}")));
            }
            tolerance
                .per_metric
                .insert(metric.to_string(), check(rel, &what)?);
        }
        Ok(tolerance)
    }

    pub fn for_metric(&self, metric: &str) -> f64 {
        self.per_metric.get(metric).copied().unwrap_or(self.default)
    }
}

/// Earlier results: scenario name → algorithm → metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    pub scenarios: BTreeMap<String, BTreeMap<String, Values>>,
}

impl Baseline {
    /// Reads each file: a `summary.json` or the output of `rlsim check --format json`.
    pub fn load(paths: &[PathBuf]) -> Result<Baseline> {
        let mut baseline = Baseline::default();
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            baseline.add(&text, path)?;
        }
        Ok(baseline)
    }

    fn add(&mut self, text: &str, path: &Path) -> Result<()> {
        let err = |line: Option<usize>, column: Option<usize>, message: String| Error::Baseline {
            location: Location {
                path: path.to_path_buf(),
                line,
                column,
            },
            message,
        };
        let value: Value = serde_json::from_str(text).map_err(|e| {
            err(
                Some(e.line()),
                Some(e.column()),
                format!("not valid JSON: {e}"),
            )
        })?;
        // A check result holds many scenarios; a summary.json is one.
        let scenarios: Vec<&Value> = match (value.get("scenarios"), value.get("scenario")) {
            (Some(Value::Array(list)), _) => list.iter().collect(),
            (None, Some(_)) => vec![&value],
            _ => {
                return Err(err(
                    None,
                    None,
                    "neither a summary.json nor an `rlsim check --format json` result".into(),
                ));
            }
        };
        for s in scenarios {
            let name = s
                .get("name")
                .or_else(|| s.get("scenario").and_then(|i| i.get("name")))
                .and_then(Value::as_str);
            let algorithms = s.get("algorithms").and_then(Value::as_array);
            let (Some(name), Some(algorithms)) = (name, algorithms) else {
                return Err(err(
                    None,
                    None,
                    "a scenario without a `name` or an `algorithms` list".into(),
                ));
            };
            if self.scenarios.contains_key(name) {
                return Err(err(
                    None,
                    None,
                    format!("scenario `{name}` appears twice in the baseline"),
                ));
            }
            let entry = self.scenarios.entry(name.to_string()).or_default();
            for a in algorithms {
                let algorithm = a.get("algorithm").and_then(Value::as_str).unwrap_or("");
                entry.insert(algorithm.to_string(), Flat::of_json(a).report);
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Unchanged,
    Improved,
    /// Worse, but within the tolerance.
    WithinTolerance,
    Regressed,
}

/// One metric of one algorithm of one scenario, then and now.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Change {
    pub scenario: String,
    pub algorithm: String,
    pub metric: String,
    pub better: Better,
    pub baseline: f64,
    pub current: f64,
    /// `(current − baseline) / |baseline|`; `None` when the baseline is 0.
    pub change: Option<f64>,
    pub tolerance: f64,
    pub verdict: Verdict,
}

/// Every comparison made, and what the baseline lacked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub rows: Vec<Change>,
    /// `scenario` or `scenario / algorithm` entries of the run with nothing to compare against.
    pub not_in_baseline: Vec<String>,
}

impl Comparison {
    pub fn regressed(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regressed)
            .count()
    }

    /// The rows whose value moved.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.rows.iter().filter(|r| r.verdict != Verdict::Unchanged)
    }
}

/// Compares each scenario's reports (`(name, reports)`) with the baseline.
pub fn compare(
    baseline: &Baseline,
    current: &[(&str, &[AlgorithmReport])],
    tolerance: &Tolerance,
) -> Comparison {
    let mut out = Comparison::default();
    for (scenario, reports) in current {
        let Some(before) = baseline.scenarios.get(*scenario) else {
            out.not_in_baseline.push(scenario.to_string());
            continue;
        };
        for report in *reports {
            let Some(before) = before.get(&report.algorithm) else {
                out.not_in_baseline
                    .push(format!("{scenario} / {}", report.algorithm));
                continue;
            };
            for (metric, now) in Flat::of_report(report).report {
                let (Some(better), Some(Some(then)), Some(now)) =
                    (better(&metric), before.get(&metric), now)
                else {
                    continue;
                };
                let tol = tolerance.for_metric(&metric);
                out.rows.push(Change {
                    scenario: scenario.to_string(),
                    algorithm: report.algorithm.clone(),
                    verdict: verdict(better, *then, now, tol),
                    metric,
                    better,
                    baseline: *then,
                    current: now,
                    change: (*then != 0.0).then(|| (now - then) / then.abs()),
                    tolerance: tol,
                });
            }
        }
    }
    out
}

/// Worse means a move in the bad direction by more than `tolerance × |baseline|`.
pub fn verdict(better: Better, baseline: f64, current: f64, tolerance: f64) -> Verdict {
    let worse_by = match better {
        Better::Lower => current - baseline,
        Better::Higher => baseline - current,
    };
    if worse_by > (tolerance * baseline.abs()).max(EPSILON) {
        Verdict::Regressed
    } else if worse_by.abs() <= EPSILON {
        Verdict::Unchanged
    } else if worse_by > 0.0 {
        Verdict::WithinTolerance
    } else {
        Verdict::Improved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polarity() {
        assert_eq!(better("burst_factor"), Some(Better::Lower));
        assert_eq!(better("delay_p99_ns"), Some(Better::Lower));
        assert_eq!(better("legit_goodput"), Some(Better::Higher));
        assert_eq!(better("offered"), None);
    }

    #[test]
    fn verdicts() {
        use Verdict::*;
        assert_eq!(verdict(Better::Lower, 100.0, 104.0, 0.05), WithinTolerance);
        assert_eq!(verdict(Better::Lower, 100.0, 106.0, 0.05), Regressed);
        assert_eq!(verdict(Better::Lower, 100.0, 90.0, 0.0), Improved);
        assert_eq!(verdict(Better::Higher, 1.0, 0.9, 0.05), Regressed);
        assert_eq!(verdict(Better::Higher, 0.9, 1.0, 0.0), Improved);
        assert_eq!(verdict(Better::Lower, 0.0, 1e-9, 0.5), Regressed);
        assert_eq!(verdict(Better::Lower, 0.0, 1e-13, 0.0), Unchanged);
        assert_eq!(verdict(Better::Lower, 2.0, 2.0, 0.0), Unchanged);
    }

    #[test]
    fn tolerance_overrides() {
        let t = Tolerance::parse("0.05", &["burst_factor=0.5".into()]).unwrap();
        assert_eq!(
            (t.for_metric("burst_factor"), t.for_metric("x")),
            (0.5, 0.05)
        );
        let err = |d: &str, o: &str| Tolerance::parse(d, &[o.into()]).unwrap_err().to_string();
        assert!(err("0", "burst_factr=1").contains("did you mean `burst_factor`"));
        assert!(err("0", "burst_factor").contains("expected METRIC=REL"));
        assert!(err("0", "burst_factor=x").contains("not a number"));
        assert!(
            err("0", "burst_factor=-1")
                .contains("`-1` is too small: must be a fraction from 0 to 1000000 (like 0.05)")
        );
        assert!(err("0", "burst_factor=2000000").contains("`2000000` is too large"));
        assert!(err("5 %%", "burst_factor=1").contains("`5 %%` is not a number"));
        assert!(Tolerance::parse("-0.1", &[]).is_err());
        assert!(Tolerance::parse("-1%", &[]).is_err());
    }

    #[test]
    fn tolerances_are_fractions_or_percentages() {
        let t = Tolerance::parse("5%", &["burst_factor=12.5%".into()]).unwrap();
        assert_eq!((t.default, t.for_metric("burst_factor")), (0.05, 0.125));
        assert_eq!(Tolerance::parse("0.05", &[]).unwrap().default, 0.05);
    }

    #[test]
    fn reads_both_baseline_formats() {
        let summary = r#"{"scenario": {"name": "s"}, "algorithms": [{"algorithm": "gcra", "burst_factor": 1.0}]}"#;
        let check = r#"{"scenarios": [{"name": "t", "algorithms": [{"algorithm": "gcra", "roles": {"legit_goodput": 0.5}}]}]}"#;
        let mut b = Baseline::default();
        b.add(summary, Path::new("a.json")).unwrap();
        b.add(check, Path::new("b.json")).unwrap();
        assert_eq!(b.scenarios["s"]["gcra"]["burst_factor"], Some(1.0));
        assert_eq!(b.scenarios["t"]["gcra"]["legit_goodput"], Some(0.5));
        let e = b.add("{\"x\": 1}", Path::new("c.json")).unwrap_err();
        assert!(e.to_string().starts_with("c.json: neither"), "{e}");
        let e = b.add("{\n  oops", Path::new("d.json")).unwrap_err();
        assert!(e.to_string().starts_with("d.json:2:"), "{e}");
        assert!(b.add(summary, Path::new("a.json")).is_err(), "twice");
    }
}
