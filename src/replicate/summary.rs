//! The replicates' summary: each contender's headline figures as estimates, how often each
//! ranks first, and the recommendation's stability. `replicates.json` is this, serialised.

use super::stats::Estimate;
use super::{HEADLINE, Replicate, STABLE_SHARE, most_chosen};
use crate::scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;

/// What `--replicates N` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replicates {
    pub scenario: String,
    /// The scenario's seed, from which the others derive.
    pub seed: u64,
    pub replicates: usize,
    /// Each replicate's seed, replicate 1 first.
    pub seeds: Vec<u64>,
    /// How the intervals are computed.
    pub interval: &'static str,
    pub recommendation: Stability,
    pub contenders: Vec<ContenderFigures>,
    /// The warnings of `replicate::warnings` (an unstable recommendation, a resonance), which
    /// `outputs::Plan::run` puts here.
    pub warnings: Vec<String>,
}

/// The recommendation over the replicates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stability {
    /// The contender recommended most often.
    pub recommended: String,
    /// In how many replicates it was.
    pub chosen: usize,
    pub of: usize,
    pub share: f64,
    /// `share >= STABLE_SHARE`.
    pub stable: bool,
    pub threshold: f64,
    /// The contender recommended in each replicate, in replicate order.
    pub by_replicate: Vec<String>,
}

/// One contender's figures over the replicates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContenderFigures {
    pub name: String,
    /// Replicates in which the ranking puts it first, and their share.
    pub ranked_first: usize,
    pub first_share: f64,
    /// By figure name, in [`HEADLINE`] order; `null` where no replicate has a value.
    #[serde(serialize_with = "in_order")]
    pub figures: indexmap::IndexMap<String, Option<Estimate>>,
}

/// The figures as a JSON object in their order.
fn in_order<S: serde::Serializer>(
    figures: &indexmap::IndexMap<String, Option<Estimate>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(figures.iter())
}

impl Replicates {
    /// The summary of `runs` of `scenario` (in replicate order).
    pub fn new(scenario: &Scenario, runs: &[Replicate]) -> Replicates {
        let names: Vec<String> = scenario.algorithms.iter().map(|c| c.name.clone()).collect();
        let choices: Vec<usize> = runs.iter().map(|r| r.recommended).collect();
        let (best, chosen) = most_chosen(&choices, names.len());
        let n = runs.len();
        let share = chosen as f64 / n as f64;
        let recommendation = Stability {
            recommended: names[best].clone(),
            chosen,
            of: n,
            share,
            stable: share >= STABLE_SHARE,
            threshold: STABLE_SHARE,
            by_replicate: choices.iter().map(|&c| names[c].clone()).collect(),
        };
        let mut firsts: BTreeMap<usize, usize> = BTreeMap::new();
        for &c in &choices {
            *firsts.entry(c).or_default() += 1;
        }
        let contenders = names
            .iter()
            .enumerate()
            .map(|(j, name)| {
                let figures = HEADLINE
                    .iter()
                    .enumerate()
                    .map(|(f, figure)| {
                        let values: Vec<f64> =
                            runs.iter().filter_map(|r| r.figures[j][f]).collect();
                        (figure.to_string(), Estimate::of(&values))
                    })
                    .collect();
                let ranked_first = firsts.get(&j).copied().unwrap_or(0);
                ContenderFigures {
                    name: name.clone(),
                    ranked_first,
                    first_share: ranked_first as f64 / n as f64,
                    figures,
                }
            })
            .collect();
        Replicates {
            scenario: scenario.name.clone(),
            seed: scenario.seed,
            replicates: n,
            seeds: runs.iter().map(|r| r.seed).collect(),
            interval: "95% Student t interval on the mean over the replicates (mean ± t(0.975, n-1)·s/√n)",
            recommendation,
            contenders,
            warnings: Vec::new(),
        }
    }

    /// The contenders by how often they rank first (most first; ties in scenario order).
    pub fn by_first(&self) -> Vec<&ContenderFigures> {
        let mut out: Vec<&ContenderFigures> = self.contenders.iter().collect();
        out.sort_by_key(|c| std::cmp::Reverse(c.ranked_first));
        out
    }

    /// `replicates.json`.
    pub fn json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("plain data serialises");
        out.push(b'\n');
        out
    }

    /// `replicates.csv`: one row per contender and figure.
    pub fn csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let header = [
            "contender",
            "figure",
            "n",
            "mean",
            "low",
            "high",
            "min",
            "max",
            "ranked_first",
            "first_share",
        ];
        w.write_record(header).expect("in memory");
        let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for c in &self.contenders {
            for (figure, e) in &c.figures {
                let e = e.as_ref();
                w.write_record([
                    c.name.clone(),
                    figure.clone(),
                    e.map_or("0".into(), |e| e.n.to_string()),
                    num(e.map(|e| e.mean)),
                    num(e.and_then(|e| e.low)),
                    num(e.and_then(|e| e.high)),
                    num(e.map(|e| e.min)),
                    num(e.map(|e| e.max)),
                    c.ranked_first.to_string(),
                    c.first_share.to_string(),
                ])
                .expect("in memory");
            }
        }
        w.into_inner().expect("in memory")
    }
}
