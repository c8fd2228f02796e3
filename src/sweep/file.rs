//! `sweep.json`'s model: what a sweep was and its rows ([`SweepFile`]), with its JSON and CSV
//! renderings and its reading back. Everything a sweep writes is rendered from one of these.

use super::axis::Axis;
use super::grid::Row;
use super::recommend::{self, GoalSpec, Recommendation};
use super::shard::Shard;
use crate::error::{Error, Location, Result};
use crate::scenario::Goal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

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
                let mut rec = recommend::recommend(rows, &self.goals(), self.prefer);
                if let Some(pick) = &rec.recommended {
                    rec.edges = recommend::edges(&self.axes, rows, pick);
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
