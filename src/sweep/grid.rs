//! The grid of a sweep: points in mixed radix over the axes, the overrides that make each
//! point, swept values as JSON and numbers, and the row of one point × contender.

use super::axis::Axis;
use crate::error::{Error, Result};
use crate::scenario::overrides::Override;
use serde_json::{Map, Value};

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 1_000_000;

/// One row of `sweep.csv`: a point, its swept values and every figure of one contender.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The point's index in the grid (the last axis varies fastest).
    pub point: usize,
    /// The value of each axis, in axis order.
    pub values: Vec<Value>,
    /// Every figure of `summary.csv`, in its order, `algorithm` (the row's name) first.
    pub figures: Map<String, Value>,
}

impl Row {
    /// The contender's name.
    pub fn name(&self) -> &str {
        self.figures
            .get("algorithm")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// A figure as a number; `None` when absent or `null`.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.get(name).and_then(Value::as_f64)
    }
}

/// The grid of `axes`: how many points it has.
pub fn point_count(axes: &[Axis]) -> Result<usize> {
    axes.iter().try_fold(1usize, |n, a| {
        n.checked_mul(a.values.len())
            .filter(|&n| n <= MAX_POINTS)
            .ok_or_else(|| Error::Usage(format!("the sweep has more than {MAX_POINTS} points")))
    })
}

/// The value index of each axis at `point`: mixed radix, the last axis fastest.
pub fn coordinates(axes: &[Axis], mut point: usize) -> Vec<usize> {
    let mut out = vec![0; axes.len()];
    for (i, a) in axes.iter().enumerate().rev() {
        out[i] = point % a.values.len();
        point /= a.values.len();
    }
    out
}

/// The point at `coords` (the inverse of [`coordinates`]).
pub fn point_at(axes: &[Axis], coords: &[usize]) -> usize {
    axes.iter()
        .zip(coords)
        .fold(0, |p, (a, &k)| p * a.values.len() + k)
}

/// The overrides that make `point` out of the base scenario.
pub fn point_overrides(axes: &[Axis], point: usize) -> Vec<Override> {
    axes.iter()
        .zip(coordinates(axes, point))
        .map(|(a, i)| Override {
            field: a.field.clone(),
            value: a.values[i].clone(),
        })
        .collect()
}

/// A swept value as JSON: TOML integers, floats and booleans as themselves, strings as strings.
pub fn json_value(toml_text: &str) -> Value {
    match toml::de::DeValue::parse(toml_text).map(|v| v.into_inner()) {
        Ok(toml::de::DeValue::Integer(i)) => {
            i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                .map_or_else(|_| Value::String(toml_text.into()), Value::from)
        }
        Ok(toml::de::DeValue::Float(f)) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .map_or_else(|_| Value::String(toml_text.into()), Value::from),
        Ok(toml::de::DeValue::Boolean(b)) => Value::Bool(b),
        Ok(toml::de::DeValue::String(s)) => Value::String(s.into_owned()),
        _ => Value::String(toml_text.to_string()),
    }
}

/// A swept value as a number for a chart axis or an expectation: numbers as they are,
/// durations in seconds.
pub fn numeric(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => crate::time::parse_duration(s)
            .ok()
            .map(|ns| ns as f64 / crate::time::NANOS_PER_SEC as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(field: &str, values: &[&str]) -> Axis {
        Axis {
            field: field.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_grid_varies_the_last_axis_fastest() {
        let axes = [axis("a", &["1", "2"]), axis("b", &["x", "y", "z"])];
        assert_eq!(point_count(&axes).unwrap(), 6);
        let grid: Vec<Vec<usize>> = (0..6).map(|p| coordinates(&axes, p)).collect();
        assert_eq!(
            grid,
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]].map(Vec::from)
        );
        let o = point_overrides(&axes, 5);
        assert_eq!((o[0].value.as_str(), o[1].value.as_str()), ("2", "z"));
        let big = [axis("a", &["1"; 1000]), axis("b", &["1"; 1001])];
        assert!(point_count(&big).is_err());
    }

    #[test]
    fn values_read_as_json_and_numbers() {
        assert_eq!(json_value("60"), Value::from(60));
        assert_eq!(json_value("0.5"), Value::from(0.5));
        assert_eq!(json_value("\"90s\""), Value::from("90s"));
        assert_eq!(json_value("ip"), Value::from("ip"));
        assert_eq!(numeric(&json_value("\"90s\"")), Some(90.0));
        assert_eq!(numeric(&json_value("ip")), None);
    }
}
