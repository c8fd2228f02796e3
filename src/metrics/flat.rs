//! Metric values: an [`AlgorithmReport`] flattened into `name → number` by the one flattener,
//! [`super::flatten_value`] (names are defined there), plus scopes:
//! each entry of `sources` apart, for `source=NAME`; `role=ROLE` sums the count figures of the
//! role's sources and recomputes each `<count>_share` from the sums; each entry of `rules`
//! apart, for `rule=NAME`.

use super::AlgorithmReport;
use super::Scope;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Metric values by name; `None` where the report holds no number (a JSON `null`).
pub type Values = BTreeMap<String, Option<f64>>;

/// One report, flattened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flat {
    /// The report's own figures, by flattened name (`delay_p99_ns`, `deployment_store_ops`).
    pub report: Values,
    /// Each entry of the report's `sources`, in its order: the `source=` and `role=` scopes.
    pub sources: Vec<FlatSource>,
    /// Each entry of the report's `rules` (a stack's), by name: the `rule=` scope.
    pub rules: Vec<(String, Values)>,
}

/// One entry of the report's `sources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlatSource {
    /// The source's name, as `source=NAME` selects it.
    pub name: String,
    /// The source's role as serialised (`legit`, `abusive`), as `role=ROLE` selects it.
    pub role: String,
    /// The source's numeric fields, by name (`offered`, `admitted_share`).
    pub values: Values,
    /// The leaves that are whole numbers: the counts a role total may sum.
    pub counts: BTreeSet<String>,
}

impl Flat {
    /// Flattens a report through its JSON form, as [`Flat::of_json`] does `summary.json`'s.
    pub fn of_report(report: &AlgorithmReport) -> Flat {
        Flat::of_json(&serde_json::to_value(report).expect("plain data serialises"))
    }

    /// Flattens one algorithm's object as `summary.json` holds it, with [`super::flatten_value`]
    /// for the report's figures; strings are not metrics.
    pub fn of_json(value: &Value) -> Flat {
        let mut flat = Flat::default();
        if let Some(Value::Array(entries)) = value.get("sources") {
            flat.sources = entries.iter().map(flat_source).collect();
        }
        if let Some(Value::Array(entries)) = value.get("rules") {
            flat.rules = entries.iter().map(flat_rule).collect();
        }
        for (name, v) in super::flatten_value(value.clone()) {
            insert_number(&mut flat.report, name, &v);
        }
        flat
    }

    /// The value of `metric` in `scope`: `None` when the metric or the scope does not exist,
    /// `Some(None)` when it exists but holds no number.
    pub fn get(&self, scope: &Scope, metric: &str) -> Option<Option<f64>> {
        match scope {
            Scope::Algorithm => self.report.get(metric).copied(),
            Scope::Source(name) => self
                .sources
                .iter()
                .find(|s| &s.name == name)
                .and_then(|s| s.values.get(metric).copied()),
            Scope::Role(role) => self.role_totals(role.name()).get(metric).copied(),
            Scope::Rule(name) => self.rule(name).and_then(|r| r.get(metric).copied()),
        }
    }

    /// Every metric name `scope` offers, sorted.
    pub fn names(&self, scope: &Scope) -> Vec<String> {
        match scope {
            Scope::Algorithm => self.report.keys().cloned().collect(),
            Scope::Source(_) => self
                .sources
                .first()
                .map(|s| s.values.keys().cloned().collect())
                .unwrap_or_default(),
            Scope::Role(role) => self.role_totals(role.name()).into_keys().collect(),
            Scope::Rule(name) => self
                .rule(name)
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default(),
        }
    }

    fn rule(&self, name: &str) -> Option<&Values> {
        self.rules.iter().find(|r| r.0 == name).map(|r| &r.1)
    }

    /// The role's sources summed: every count, and each `<count>_share` as `<count> / offered`.
    fn role_totals(&self, role: &str) -> Values {
        let template = self.sources.first();
        let mut sums: BTreeMap<&str, f64> = template
            .map(|s| s.counts.iter().map(|c| (c.as_str(), 0.0)).collect())
            .unwrap_or_default();
        for source in self.sources.iter().filter(|s| s.role == role) {
            for (name, sum) in &mut sums {
                *sum += source.values.get(*name).copied().flatten().unwrap_or(0.0);
            }
        }
        let mut totals: Values = sums
            .iter()
            .map(|(k, v)| (k.to_string(), Some(*v)))
            .collect();
        let offered = sums.get("offered").copied();
        for name in template.map(|s| s.values.keys()).into_iter().flatten() {
            if let Some(count) = name.strip_suffix("_share")
                && let (Some(&num), Some(den)) = (sums.get(count), offered)
            {
                let share = if den == 0.0 { 0.0 } else { num / den };
                totals.insert(name.clone(), Some(share));
            }
        }
        totals
    }
}

fn insert_number(values: &mut Values, name: String, v: &Value) {
    match v {
        Value::Number(n) => {
            values.insert(name, n.as_f64());
        }
        // serde_json writes a non-finite float as null: still a metric, with no value.
        Value::Null => {
            values.insert(name, None);
        }
        _ => {}
    }
}

/// A rule's name and numeric figures, nested ones (`tokens`) by their flattened names
/// (`tokens_overshoot`).
fn flat_rule(value: &Value) -> (String, Values) {
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut values = Values::new();
    for (key, v) in super::flatten_value(value.clone()) {
        insert_number(&mut values, key, &v);
    }
    (name.to_string(), values)
}

fn flat_source(value: &Value) -> FlatSource {
    let mut source = FlatSource::default();
    // Nested figures (`cost`) by their flattened names (`cost_admitted`), as the report's.
    for (key, v) in super::flatten_value(value.clone()) {
        match (key.as_str(), &v) {
            ("name", Value::String(s)) => source.name = s.clone(),
            ("role", Value::String(s)) => source.role = s.clone(),
            (_, Value::Number(n)) if n.is_u64() || n.is_i64() => {
                source.counts.insert(key.clone());
                insert_number(&mut source.values, key, &v);
            }
            _ => insert_number(&mut source.values, key, &v),
        }
    }
    source
}
