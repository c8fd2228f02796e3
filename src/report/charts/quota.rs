//! Calendar quotas over time: one panel per calendar rule, each line per time bucket the most
//! requests one rule key had counted in its current period, as a share of the rule's limit.
//! A line climbs through each period and drops when the period ends; at 1 the busiest key has
//! run out, and stays refused until the period ends.

use super::budget_use::Budget;
use crate::error::Result;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

/// The chart's file name under `charts/`.
pub const FILE: &str = "quota.svg";

const QUOTA: Budget = Budget {
    file: FILE,
    title: "Quota use over time",
    series: |r| r.quota.as_ref().map(|q| q.busiest.as_slice()),
    caption: |r| {
        let calendar = r.quota.as_ref().map_or("", |q| q.calendar.as_str());
        format!("{} ({} per {calendar})", r.name, r.limit)
    },
    reference: "quota (1 = the rule's limit per period)",
    y_desc: |bucket| format!("most one key counted in its period, / quota (per {bucket} bucket)"),
    noun: "quota",
    chart_caption: "Per time bucket and per calendar rule, the most requests one rule key had \
                    counted in its current calendar period (day, week, month or year on the \
                    rule's clocks), as a share of the rule's limit (black: 1, the quota). A line \
                    climbs through each period and drops when the next begins; at 1 the busiest \
                    key's quota has run out.",
};

/// What to see: the contender and rule with the most key periods run out.
fn lead(algorithms: &[AlgorithmReport]) -> Option<String> {
    let (a, rule, q) = algorithms
        .iter()
        .flat_map(|a| {
            a.rules
                .iter()
                .filter_map(move |r| Some((a, r, r.quota.as_ref()?)))
        })
        .max_by_key(|x| x.2.ran_out)?;
    let first = q.run_outs.iter().min_by_key(|o| (o.period.clone(), o.day));
    Some(match first {
        None => format!(
            "no key ran out of its quota (`{}`, rule `{}`, {} per {}).",
            a.algorithm, rule.name, rule.limit, q.calendar
        ),
        Some(o) => format!(
            "under `{}`, {} of {} key periods of rule `{}` ran out of their {} per {}; the first, \
             key {}, on day {} of {}.",
            a.algorithm,
            q.ran_out,
            q.key_periods,
            rule.name,
            rule.limit,
            q.calendar,
            o.key,
            o.day,
            o.period
        ),
    })
}

/// The chart, or `None` when no contender has a calendar rule.
pub fn chart(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Result<Option<super::Chart>> {
    QUOTA.chart(scenario, algorithms, lead(algorithms))
}
