//! The recommendation: of every point × contender, the rows that meet every goal of `[goals]`,
//! and the best of them on the preferred goal (the first goal unless `[sweep] prefer` names
//! another). Ties go to the other goals in order, then to the earlier point and contender, so the
//! pick is deterministic. When no row meets every goal, it says which goal no row meets and how
//! close the nearest row came.

use super::axis::Axis;
use super::grid::{Row, coordinates, numeric};
use crate::scenario::{Goal, Op};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A goal as `sweep.json` carries it: `min_legit_goodput` and its bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GoalSpec {
    pub goal: String,
    pub bound: f64,
}

impl GoalSpec {
    pub fn of(goal: &Goal) -> GoalSpec {
        GoalSpec {
            goal: goal.name.clone(),
            bound: goal.bound,
        }
    }

    pub fn to_goal(&self) -> Goal {
        let (op, metric) = match self.goal.strip_prefix("max_") {
            Some(m) => (Op::Le, m),
            None => (Op::Ge, self.goal.strip_prefix("min_").unwrap_or(&self.goal)),
        };
        Goal {
            name: self.goal.clone(),
            metric: metric.to_string(),
            op,
            bound: self.bound,
            written: None,
        }
    }
}

/// One row, by its point and contender.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Pick {
    pub point: usize,
    pub name: String,
    /// Index in the rows.
    #[serde(skip)]
    pub row: usize,
}

/// A goal no row meets, and the row that came nearest.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Unmet {
    pub goal: String,
    pub bound: f64,
    /// The best value any row reached (`None` when no row has the figure).
    pub nearest: Option<f64>,
    pub at: Option<Pick>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Recommendation {
    /// The goal the pick is best on.
    pub prefer: Option<String>,
    /// Rows meeting every goal.
    pub meeting: usize,
    pub recommended: Option<Pick>,
    /// Goals no row meets on its own.
    pub unmet: Vec<Unmet>,
    /// Without a recommendation: the row missing the fewest goals, and the goals it misses.
    pub nearest: Option<Pick>,
    pub nearest_misses: Vec<String>,
    /// The axes on which the recommended point sits at the first or last value swept (a
    /// better point may lie beyond); see [`edges`].
    pub edges: Vec<Edge>,
}

/// An axis on whose edge the recommended point sits.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Edge {
    /// The swept field.
    pub field: String,
    /// The recommended point's value of it.
    pub value: serde_json::Value,
    /// `first` or `last`: which end of the values swept.
    pub end: &'static str,
}

/// The axes of three or more numeric values on which `pick` is at the first or the last value,
/// among those its contender has rows at (an axis that does not apply to it has one).
pub fn edges(axes: &[Axis], rows: &[Row], pick: &Pick) -> Vec<Edge> {
    let row = &rows[pick.row];
    let at = coordinates(axes, pick.point);
    let mut out = Vec::new();
    for (i, axis) in axes.iter().enumerate() {
        let n = axis.values.len();
        if n < 3 || numeric(&row.values[i]).is_none() {
            continue;
        }
        // The values of this axis the contender has rows at, the other axes as at the pick.
        let seen: Vec<usize> = rows
            .iter()
            .filter(|r| r.name() == pick.name)
            .map(|r| coordinates(axes, r.point))
            .filter(|c| (0..axes.len()).all(|j| j == i || c[j] == at[j]))
            .map(|c| c[i])
            .collect();
        if seen.len() < 2 {
            continue;
        }
        let end = match at[i] {
            0 => "first",
            k if k == n - 1 => "last",
            _ => continue,
        };
        out.push(Edge {
            field: axis.field.clone(),
            value: row.values[i].clone(),
            end,
        });
    }
    out
}

fn better(goal: &Goal, a: Option<f64>, b: Option<f64>) -> Ordering {
    let (a, b) = (a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN));
    match goal.op {
        Op::Ge | Op::Gt => b.total_cmp(&a),
        _ => a.total_cmp(&b),
    }
}

/// Recommends a row of `rows` against `goals`, best on `goals[prefer]` first.
pub fn recommend(rows: &[Row], goals: &[Goal], prefer: usize) -> Recommendation {
    let pick = |i: usize| Pick {
        point: rows[i].point,
        name: rows[i].name().to_string(),
        row: i,
    };
    let missed = |r: &Row| -> Vec<&Goal> {
        goals
            .iter()
            .filter(|g| !g.met(r.figure(&g.metric)))
            .collect()
    };
    let mut order: Vec<&Goal> = Vec::new();
    if let Some(g) = goals.get(prefer) {
        order.push(g);
    }
    order.extend(
        goals
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != prefer)
            .map(|(_, g)| g),
    );
    let rank = |a: &usize, b: &usize| {
        order
            .iter()
            .map(|g| better(g, rows[*a].figure(&g.metric), rows[*b].figure(&g.metric)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
            .then(a.cmp(b))
    };
    let meeting: Vec<usize> = (0..rows.len())
        .filter(|&i| missed(&rows[i]).is_empty())
        .collect();
    let recommended = meeting.iter().copied().min_by(rank).map(pick);
    let unmet = goals
        .iter()
        .filter(|g| !rows.iter().any(|r| g.met(r.figure(&g.metric))))
        .map(|g| {
            let best = (0..rows.len())
                .filter(|&i| rows[i].figure(&g.metric).is_some())
                .min_by(|a, b| {
                    better(g, rows[*a].figure(&g.metric), rows[*b].figure(&g.metric)).then(a.cmp(b))
                });
            Unmet {
                goal: g.name.clone(),
                bound: g.bound,
                nearest: best.and_then(|i| rows[i].figure(&g.metric)),
                at: best.map(pick),
            }
        })
        .collect();
    let (nearest, nearest_misses) = match (&recommended, rows.is_empty() || goals.is_empty()) {
        (None, false) => {
            let i = (0..rows.len())
                .min_by(|a, b| {
                    missed(&rows[*a])
                        .len()
                        .cmp(&missed(&rows[*b]).len())
                        .then(rank(a, b))
                })
                .expect("rows is not empty");
            let misses = missed(&rows[i]).iter().map(|g| g.describe()).collect();
            (Some(pick(i)), misses)
        }
        _ => (None, Vec::new()),
    };
    Recommendation {
        prefer: goals.get(prefer).map(|g| g.name.clone()),
        meeting: meeting.len(),
        recommended,
        unmet,
        nearest,
        nearest_misses,
        edges: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    fn row(point: usize, name: &str, goodput: f64, leakage: f64) -> Row {
        let mut figures = Map::new();
        figures.insert("algorithm".into(), Value::from(name));
        figures.insert("legit_goodput".into(), json!(goodput));
        figures.insert("abusive_leakage".into(), json!(leakage));
        Row {
            point,
            values: vec![json!(point * 10)],
            figures,
        }
    }

    fn goals(goodput: f64, leakage: f64) -> Vec<Goal> {
        [
            ("min_legit_goodput", goodput),
            ("max_abusive_leakage", leakage),
        ]
        .iter()
        .map(|(g, b)| {
            GoalSpec {
                goal: g.to_string(),
                bound: *b,
            }
            .to_goal()
        })
        .collect()
    }

    /// Limits 10..40: more limit, more goodput and more leakage; `b` leaks less than `a`.
    fn rows() -> Vec<Row> {
        vec![
            row(1, "a", 0.90, 0.01),
            row(1, "b", 0.95, 0.00),
            row(2, "a", 0.99, 0.05),
            row(2, "b", 0.99, 0.03),
            row(3, "a", 1.00, 0.20),
            row(3, "b", 1.00, 0.08),
        ]
    }

    #[test]
    fn the_pick_meets_every_goal_and_is_best_on_the_preferred_one() {
        let rows = rows();
        // goodput >= 0.99 and leakage <= 0.05: rows 2a, 2b. Best goodput: a tie at 0.99,
        // broken by the next goal, leakage: 2b.
        let r = recommend(&rows, &goals(0.99, 0.05), 0);
        assert_eq!(r.meeting, 2);
        let pick = r.recommended.unwrap();
        assert_eq!((pick.point, pick.name.as_str()), (2, "b"));
        // Preferring leakage: among the same two rows, 2b (0.03) again; with leakage <= 0.1 the
        // rows 2a, 2b, 3b meet; best goodput is 3b.
        let r = recommend(&rows, &goals(0.99, 0.1), 0);
        assert_eq!((r.meeting, r.recommended.unwrap().point), (3, 3));
        let r = recommend(&rows, &goals(0.99, 0.1), 1);
        assert_eq!(r.recommended.unwrap().point, 2);
        assert!(r.unmet.is_empty() && r.nearest.is_none());
    }

    #[test]
    fn without_a_pick_it_says_which_goal_and_how_close() {
        let rows = rows();
        // Goodput >= 0.999 with leakage <= 0.01: goodput 1.0 only leaks 0.08 or more.
        let r = recommend(&rows, &goals(0.999, 0.01), 0);
        assert_eq!((r.meeting, r.recommended.as_ref()), (0, None));
        assert!(r.unmet.is_empty(), "each goal alone is met by some row");
        let nearest = r.nearest.unwrap();
        // Every row misses exactly one goal; the best on goodput then leakage is 3b.
        assert_eq!((nearest.point, nearest.name.as_str()), (3, "b"));
        assert_eq!(r.nearest_misses, ["abusive_leakage <= 0.01"]);
        // No row reaches goodput 1.5: named, with the nearest value and where.
        let r = recommend(&rows, &goals(1.5, 1.0), 0);
        assert_eq!(r.unmet.len(), 1);
        assert_eq!(r.unmet[0].goal, "min_legit_goodput");
        assert_eq!(r.unmet[0].nearest, Some(1.0));
        assert_eq!(r.unmet[0].at.as_ref().unwrap().point, 3);
    }
}
