//! The files of `rlsim sweep --out DIR`, and `rlsim merge`.
//!
//! Everything is rendered from one [`SweepFile`] (the rows in point order plus what the sweep
//! was): `sweep.json` holds all of it, so merging shards is reading their `sweep.json` files,
//! checking that they belong together, and rendering the union. An unsharded sweep and merged
//! shards thus write the same bytes.

use super::recommend::{GoalSpec, Recommendation, recommend};
use super::{Axis, Row, Shard};
use crate::error::{Error, Location, Result};
use crate::report::write_atomic;
use crate::scenario::Goal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What a sweep was, and its rows: the content of `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(title = "rlsim sweep.json")]
pub struct SweepFile {
    /// The version of this document's shape: raised when a field is removed, renamed or changes
    /// meaning (docs/schema/).
    pub schema_version: u32,
    pub rlsim_version: String,
    pub scenario: String,
    /// SHA-256 of the scenario file's bytes: shards of different files do not merge.
    pub scenario_sha256: String,
    pub seed: u64,
    /// `--set` overrides applied to every point, as given.
    pub overrides: Vec<String>,
    pub axes: Vec<Axis>,
    pub points: usize,
    pub goals: Vec<GoalSpec>,
    /// The goal the recommendation is best on (index in `goals`).
    pub prefer: usize,
    /// The figure of the line chart and the heatmap.
    pub chart: String,
    /// Set in a shard's file only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Of a whole sweep only (a shard cannot know it).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<Recommendation>,
    /// One object per point × contender: `point`, each swept field, every figure.
    pub rows: Vec<Map<String, Value>>,
}

/// The JSON schema of `sweep.json` (docs/schema/sweep.schema.json).
pub fn schema() -> schemars::Schema {
    crate::report::schema_of::<SweepFile>()
}

impl SweepFile {
    /// The rows as [`Row`]s.
    pub fn rows(&self) -> Result<Vec<Row>> {
        self.rows
            .iter()
            .map(|m| {
                let point = m
                    .get("point")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| Error::Usage("sweep.json: a row without a `point`".into()))?
                    as usize;
                let values = self
                    .axes
                    .iter()
                    .map(|a| m.get(&a.field).cloned().unwrap_or(Value::Null))
                    .collect();
                let figures = m
                    .iter()
                    .filter(|(k, _)| *k != "point" && !self.axes.iter().any(|a| &a.field == *k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok(Row {
                    point,
                    values,
                    figures,
                })
            })
            .collect()
    }

    pub fn goals(&self) -> Vec<Goal> {
        self.goals.iter().map(GoalSpec::to_goal).collect()
    }

    /// Sets the rows (in point order) and, for a whole sweep, the recommendation.
    pub fn with_rows(mut self, rows: &[Row]) -> SweepFile {
        self.rows = rows.iter().map(|r| row_object(&self.axes, r)).collect();
        self.recommendation = match self.shard {
            Some(_) => None,
            None => {
                let mut rec = recommend(rows, &self.goals(), self.prefer);
                if let Some(pick) = &rec.recommended {
                    rec.edges = super::recommend::edges(&self.axes, rows, pick);
                }
                Some(rec)
            }
        };
        self
    }
}

fn row_object(axes: &[Axis], r: &Row) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("point".into(), Value::from(r.point));
    for (a, v) in axes.iter().zip(&r.values) {
        m.insert(a.field.clone(), v.clone());
    }
    m.extend(r.figures.iter().map(|(k, v)| (k.clone(), v.clone())));
    m
}

/// `sweep.json`: pretty-printed, newline-terminated.
pub fn sweep_json(file: &SweepFile) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(file).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// `sweep.csv`: one row per point × contender: `point`, the swept fields, then every column of
/// `summary.csv`. Absent values (`null`) are empty cells.
pub fn sweep_csv(file: &SweepFile) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for (i, row) in file.rows.iter().enumerate() {
        if i == 0 {
            w.write_record(row.keys())
                .expect("writing to memory cannot fail");
        }
        w.write_record(row.values().map(|v| match v {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }))
        .expect("writing to memory cannot fail");
    }
    w.into_inner().expect("writing to memory cannot fail")
}

/// Writes a sweep's files into `dir`: a shard writes `sweep.json` and `sweep.csv`; a whole sweep
/// also its charts and `sweep.md`/`sweep.html`. Everything is rendered before anything is written.
pub fn write(dir: &Path, file: &SweepFile) -> Result<()> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (dir.join("sweep.json"), sweep_json(file)),
        (dir.join("sweep.csv"), sweep_csv(file)),
    ];
    if file.shard.is_none() {
        let rows = file.rows()?;
        let charts = super::report::charts(file, &rows)?;
        let (md, html) = super::report::documents(file, &rows, &charts);
        for c in &charts {
            files.push((dir.join("charts").join(c.file), c.svg.clone().into_bytes()));
        }
        files.push((dir.join("sweep.md"), md.into_bytes()));
        files.push((dir.join("sweep.html"), html.into_bytes()));
    }
    for (path, bytes) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        write_atomic(&path, &bytes)?;
    }
    Ok(())
}

/// Reads a shard directory's `sweep.json`.
pub fn read(dir: &Path) -> Result<SweepFile> {
    let path = dir.join("sweep.json");
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Baseline {
        location: Location {
            path: path.clone(),
            line: Some(e.line()),
            column: Some(e.column()),
        },
        message: format!("not a sweep.json rlsim wrote: {e}"),
    })
}

/// `rlsim merge DIR...`: the shards of one sweep, every one present once, as the whole sweep.
pub fn merge(dirs: &[PathBuf]) -> Result<SweepFile> {
    let files: Vec<(PathBuf, SweepFile)> = dirs
        .iter()
        .map(|d| read(d).map(|f| (d.clone(), f)))
        .collect::<Result<_>>()?;
    let Some((first_dir, first)) = files.first() else {
        return Err(Error::Usage("merge: no shard directory given".into()));
    };
    let refuse = |dir: &Path, what: &str, a: String, b: String| {
        Error::Usage(format!(
            "merge: {} and {} are shards of different sweeps: different {what} ({a} vs {b})",
            first_dir.display(),
            dir.display()
        ))
    };
    let Some(count) = first.shard.map(|s| s.count) else {
        return Err(Error::Usage(format!(
            "merge: {} holds a whole sweep, not a shard (`--shard K/N`)",
            first_dir.display()
        )));
    };
    let mut seen = vec![None::<&Path>; count];
    for (dir, f) in &files {
        let checks = [
            ("scenario", &first.scenario, &f.scenario),
            ("scenario file", &first.scenario_sha256, &f.scenario_sha256),
            ("rlsim version", &first.rlsim_version, &f.rlsim_version),
        ];
        for (what, a, b) in checks {
            if a != b {
                return Err(refuse(dir, what, a.clone(), b.clone()));
            }
        }
        if f.seed != first.seed {
            return Err(refuse(
                dir,
                "seed",
                first.seed.to_string(),
                f.seed.to_string(),
            ));
        }
        let Some(shard) = f.shard else {
            return Err(Error::Usage(format!(
                "merge: {} holds a whole sweep, not a shard",
                dir.display()
            )));
        };
        if shard.count != count {
            return Err(refuse(
                dir,
                "shard count",
                count.to_string(),
                shard.count.to_string(),
            ));
        }
        if f.axes != first.axes || f.overrides != first.overrides {
            return Err(refuse(
                dir,
                "swept values",
                format!("{:?}", first.overrides),
                format!("{:?}", f.overrides),
            ));
        }
        match &mut seen[shard.index - 1] {
            Some(other) => {
                return Err(Error::Usage(format!(
                    "merge: {} and {} are both shard {}/{count}",
                    other.display(),
                    dir.display(),
                    shard.index
                )));
            }
            slot => *slot = Some(dir),
        }
    }
    if let Some(missing) = seen.iter().position(Option::is_none) {
        return Err(Error::Usage(format!(
            "merge: shard {}/{count} is missing",
            missing + 1
        )));
    }
    let mut rows = Vec::new();
    for (_, f) in &files {
        rows.extend(f.rows()?);
    }
    // Point order; within a point, the contenders keep their order (a stable sort).
    rows.sort_by_key(|r| r.point);
    let mut whole = first.clone();
    whole.shard = None;
    Ok(whole.with_rows(&rows))
}
