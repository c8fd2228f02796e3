//! Dashboard chart: the keys refused most, one bar per contender (the "top offenders" panel).

use super::bars::{self, Bars};
use crate::error::Result;
use crate::observe::Observation;
use crate::report::table::shown_key;
use crate::scenario::Scenario;
use std::collections::BTreeMap;

pub const FILE: &str = "top_refused_keys.svg";
/// Keys shown: the most refused over all contenders together.
const KEYS: usize = 5;

/// Whether any contender refused a request.
pub fn applies(observations: &[Observation]) -> bool {
    observations.iter().any(|o| !o.top_refused_keys.is_empty())
}

pub fn chart(scenario: &Scenario, observations: &[Observation]) -> Result<super::Chart> {
    let title = format!("Top keys by refusals: {}", scenario.name);
    let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
    for o in observations {
        for (k, n) in &o.top_refused_keys {
            *totals.entry(k).or_default() += n;
        }
    }
    let mut keys: Vec<(&str, u64)> = totals.into_iter().collect();
    keys.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    keys.truncate(KEYS);
    let groups: Vec<&str> = keys.iter().map(|k| k.0).collect();
    let shown: Vec<_> = groups.iter().map(|g| shown_key(g)).collect();
    let shown: Vec<&str> = shown.iter().map(|g| g.as_ref()).collect();
    let values: Vec<f64> = observations
        .iter()
        .flat_map(|o| o.top_refused_keys.iter().map(|k| k.1 as f64))
        .collect();
    let svg = bars::draw(Bars {
        file: FILE,
        title: &title,
        groups: &shown,
        y_desc: "refusals",
        series: observations
            .iter()
            .map(|o| {
                let per_key = groups
                    .iter()
                    .map(|g| {
                        o.top_refused_keys
                            .iter()
                            .find(|k| k.0 == *g)
                            .map_or(0.0, |k| k.1 as f64)
                    })
                    .collect();
                (o.contender.as_str(), per_key)
            })
            .collect(),
        label: &|v| format!("{v:.0}"),
        log: bars::wants_log(values.into_iter()),
        tick: &|v| format!("{v:.0}"),
    })?;
    Ok(super::Chart {
        file: FILE,
        lead: None,
        caption: format!(
            "Refusals of the {KEYS} keys refused most over all contenders, per contender (a key \
             outside a contender's own top 10 shows as 0 there)."
        ),
        title,
        svg,
    })
}
