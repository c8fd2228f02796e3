//! The scenario a command runs: the file, with the command line's seed, `--set` overrides and
//! `--skip-bad-lines` laid over it. Every command that takes one loads it here.

use crate::error::Result;
use crate::scenario::Scenario;
use crate::scenario::overrides::Override;
use std::path::PathBuf;

/// Where a scenario comes from and what the command line lays over it.
#[derive(Debug, Clone, Default)]
pub struct ScenarioInput {
    /// The TOML file, or `-` for standard input.
    pub path: PathBuf,
    /// `--seed`: replaces the file's `seed`; `None` keeps it.
    pub seed: Option<u64>,
    /// `FIELD=VALUE` overrides, applied before validation.
    pub set: Vec<String>,
    /// `--skip-bad-lines`: malformed trace lines are counted and skipped, not refused.
    pub skip_bad_lines: bool,
}

/// A loaded scenario and the bytes it was read from (the reports name the file by their hash).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file's text as read, before any override.
    pub text: String,
    /// The scenario validated from it, overrides, seed and `--skip-bad-lines` applied.
    pub scenario: Scenario,
}

impl ScenarioInput {
    /// A scenario file as it is, nothing laid over it.
    pub fn file(path: impl Into<PathBuf>) -> ScenarioInput {
        ScenarioInput {
            path: path.into(),
            ..ScenarioInput::default()
        }
    }

    /// Reads the file once, and validates it with the overrides spliced in. A malformed `--set`
    /// is refused before the file is read.
    pub fn load(&self) -> Result<Loaded> {
        let overrides = self
            .set
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<Vec<_>>>()?;
        let text = Scenario::read(&self.path)?;
        let shown = Scenario::shown(&self.path);
        let mut scenario = if overrides.is_empty() {
            Scenario::parse(&text, shown)?
        } else {
            Scenario::parse_with(&text, shown, &overrides)?
        };
        if let Some(seed) = self.seed {
            scenario = scenario.with_seed(seed);
        }
        if self.skip_bad_lines {
            scenario = scenario.with_skip_bad_lines();
        }
        Ok(Loaded { text, scenario })
    }
}

/// One standard error line per replay source that skipped malformed lines (`--skip-bad-lines`);
/// `skipped`: how many each source reported.
pub(crate) fn skipped_lines(scenario: &Scenario, skipped: &[u64]) -> String {
    let mut out = String::new();
    for (s, &n) in scenario.traffic.iter().zip(skipped) {
        if let crate::traffic::Arrivals::Replay { path, .. } = &s.arrivals
            && n > 0
        {
            let lines = if n == 1 { "line" } else { "lines" };
            out.push_str(&format!(
                "source `{}`: skipped {n} malformed {lines} of {}\n",
                s.name,
                path.display()
            ));
        }
    }
    // A sampled log's figures: which stay valid (docs/traffic.md, "Sampled logs").
    for w in crate::traffic::sampling_warnings(&scenario.traffic) {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
