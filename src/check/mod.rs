//! `rlsim check`: the CI gate. Runs scenarios, checks their expectations, optionally compares the
//! results with a baseline, and reports as text, JSON and JUnit XML. See `docs/ci.md`.

pub(crate) mod baseline;
pub(crate) mod expect;
pub(crate) mod junit;
pub(crate) mod metric;
pub(crate) mod output;

pub use baseline::{Baseline, Comparison, Tolerance};
pub use expect::{ExpectationResult, evaluate};

use crate::error::{Error, Result};
use crate::metrics::AlgorithmReport;
use crate::output::Destination;
use crate::scenario::Scenario;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One scenario run and checked.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    pub scenario: Scenario,
    pub reports: Vec<AlgorithmReport>,
    pub expectations: Vec<ExpectationResult>,
}

impl ScenarioResult {
    pub fn failed(&self) -> usize {
        self.expectations.iter().filter(|e| !e.passed).count()
    }
}

/// What `rlsim check` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub paths: Vec<PathBuf>,
    pub json: bool,
    /// The text report keeps only what failed (and the count line).
    pub quiet: bool,
    pub junit: Option<PathBuf>,
    pub baselines: Vec<PathBuf>,
    pub tolerance: Tolerance,
}

/// The outcome of a check: the bytes to print, and whether everything passed.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub stdout: Vec<u8>,
    /// Every expectation held, nothing regressed, and something was checked.
    pub passed: bool,
    /// Expectations evaluated plus baseline metrics compared: 0 means the gate checked nothing.
    pub checked: usize,
}

/// Runs a check. Every input problem (a bad scenario, an unreadable baseline) is an `Err`,
/// reported before anything is simulated or written.
pub fn check(options: &CheckOptions) -> Result<CheckReport> {
    let files = scenario_files(&options.paths)?;
    // Every file is loaded, and every bad one reported (in order) before anything runs.
    let (mut scenarios, mut bad) = (Vec::new(), Vec::new());
    for f in &files {
        match Scenario::load(f) {
            Ok(s) => scenarios.push(s),
            Err(e) => bad.push(e),
        }
    }
    match bad.len() {
        0 => {}
        1 => return Err(bad.remove(0)),
        _ => return Err(Error::Several(bad)),
    }
    // Sweeps with claims (`[sweep] expect`), planned and parsed before anything runs.
    let sweeps: Vec<Option<SweepCheck>> = scenarios
        .iter()
        .zip(&files)
        .map(|(s, f)| SweepCheck::plan(s, f))
        .collect::<Result<_>>()?;
    let baseline = match options.baselines.as_slice() {
        [] => None,
        files => {
            unique_names(&scenarios)?;
            Some(Baseline::load(files)?)
        }
    };
    let junit = match &options.junit {
        Some(path) => {
            let d = Destination::file(path)?;
            let baselines = options.baselines.iter().map(PathBuf::as_path);
            let inputs = scenarios.iter().flat_map(Scenario::inputs);
            d.refuse_inputs("--junit", inputs.chain(baselines))?;
            Some(d)
        }
        None => None,
    };
    let results: Vec<ScenarioResult> = scenarios
        .into_par_iter()
        .zip(sweeps)
        .map(|(scenario, sweep)| {
            let reports = crate::observe::figures(&scenario, crate::sim::RunOptions::new())?;
            let mut expectations = evaluate(&scenario, &reports);
            if let Some(sweep) = sweep {
                expectations.extend(sweep.run(expectations.len())?);
            }
            Ok(ScenarioResult {
                scenario,
                reports,
                expectations,
            })
        })
        .collect::<Result<_>>()?;
    let comparison = baseline.map(|b| {
        let current: Vec<(&str, &[AlgorithmReport])> = results
            .iter()
            .map(|r| (r.scenario.name.as_str(), r.reports.as_slice()))
            .collect();
        baseline::compare(&b, &current, &options.tolerance)
    });
    if let Some(d) = &junit {
        let xml = junit::junit(&results, comparison.as_ref());
        d.write_all(&xml, &mut std::io::sink())?;
    }
    let stdout = if options.json {
        output::json(&results, comparison.as_ref(), &options.tolerance)
    } else {
        output::text(&results, comparison.as_ref(), options.quiet).into_bytes()
    };
    let failed: usize = results.iter().map(ScenarioResult::failed).sum();
    let regressed = comparison.as_ref().map_or(0, Comparison::regressed);
    let expectations: usize = results.iter().map(|r| r.expectations.len()).sum();
    let checked = expectations + comparison.as_ref().map_or(0, |c| c.rows.len());
    Ok(CheckReport {
        stdout,
        passed: failed == 0 && regressed == 0 && checked > 0,
        checked,
    })
}

/// A scenario's `[sweep]` with claims, planned: `rlsim check` runs it and checks them.
struct SweepCheck {
    plan: crate::sweep::plan::Plan,
    claims: Vec<crate::sweep::expect::Claim>,
}

impl SweepCheck {
    fn plan(scenario: &Scenario, file: &Path) -> Result<Option<SweepCheck>> {
        let Some(spec) = scenario.sweep.as_ref().filter(|s| !s.expect.is_empty()) else {
            return Ok(None);
        };
        let text = Scenario::read(file)?;
        let axes = crate::sweep::axes(scenario, &[])?;
        let plan =
            crate::sweep::plan::plan_of(text, scenario.clone(), axes, Default::default(), None)?;
        let names = crate::scenario::metric_names(scenario);
        let figures = names.of(&crate::scenario::Scope::Algorithm);
        let claims = spec
            .expect
            .iter()
            .map(|(text, at)| {
                crate::sweep::expect::parse(text, &plan.axes, figures)
                    .map_err(|m| Error::Usage(format!("{at}: field `sweep.expect`: {m}")))
            })
            .collect::<Result<_>>()?;
        Ok(Some(SweepCheck { plan, claims }))
    }

    /// The claims checked, numbered after the scenario's own `first` expectations.
    fn run(self, first: usize) -> Result<Vec<ExpectationResult>> {
        let (file, rows) = crate::sweep::plan::run(&self.plan, &|| {})?;
        let rec = file
            .recommendation
            .expect("a whole sweep is recommended on");
        Ok(self
            .claims
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let r = crate::sweep::expect::evaluate(c, &self.plan.axes, &rows, &rec);
                ExpectationResult {
                    expectation: format!("sweep: {}", c.text),
                    index: first + i,
                    algorithm: "sweep".into(),
                    role: None,
                    source: None,
                    rule: None,
                    metric: c.subject.clone(),
                    op: c.op,
                    bound: c.bound,
                    measured: r.measured,
                    passed: r.passed,
                }
            })
            .collect())
    }
}

/// The scenario files named by `paths`: files as given, directories searched (recursively,
/// skipping hidden entries) for `*.toml`, each directory's entries in name order.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            let before = files.len();
            find_toml(path, &mut files)?;
            if files.len() == before {
                return Err(Error::Usage(format!(
                    "{}: no scenario (*.toml) in this directory",
                    path.display()
                )));
            }
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Whether a `*.toml` file found in a directory is a scenario: one whose top level has a
/// `[policy]` or a `[[traffic]]` (every scenario has both), so that `Cargo.toml` or a tool's
/// configuration beside the scenarios is left alone. A file that is not TOML at all is taken
/// for a broken scenario and reported. A file named on the command line is always a scenario.
fn is_scenario(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return true;
    };
    match toml::from_str::<toml::Table>(&text) {
        Ok(table) => table.contains_key("policy") || table.contains_key("traffic"),
        Err(_) => true,
    }
}

fn find_toml(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)
        .and_then(|rd| {
            rd.map(|e| e.and_then(|e| Ok((e.path(), e.file_type()?))))
                .collect()
        })
        .map_err(|e| Error::io(dir, e))?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in entries {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        // A symlinked directory is not followed: it could lead back up the tree.
        if kind.is_dir() {
            find_toml(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "toml") && is_scenario(&path) {
            files.push(path);
        }
    }
    Ok(())
}

/// A baseline is matched by scenario name, so two checked scenarios may not share one.
fn unique_names(scenarios: &[Scenario]) -> Result<()> {
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for s in scenarios {
        if let Some(other) = seen.insert(&s.name, &s.path) {
            return Err(Error::Usage(format!(
                "{} and {} are both named `{}`: a baseline cannot tell them apart",
                other.display(),
                s.path.display(),
                s.name
            )));
        }
    }
    Ok(())
}
