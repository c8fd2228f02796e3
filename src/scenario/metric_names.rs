//! The metric names a scenario's reports offer, for validating `expect` lines and `[goals]`
//! before anything runs: the shape of an empty report ([`crate::metrics::shape`]) with the
//! figures this scenario's features add ([`crate::metrics::Features`]), and its alerts'.

use super::model::scenario::Scenario;
use crate::metrics::Features;

impl Scenario {
    /// What of this scenario adds figures to every row of its report.
    pub fn features(&self) -> Features {
        Features {
            contenders: super::model::scenario::uses_contenders(self),
            deployments: super::model::scenario::uses_deployments(self),
            dry_runs: self
                .algorithms
                .iter()
                .any(|c| c.stack().is_some_and(|s| s.dry_runs())),
            keys_per_client: crate::metrics::keys_per_client_kept(&self.policy.key, &self.traffic),
            costs: self.has_costs(),
            cost_intent: !self.intent.unit.is_requests(),
        }
    }
}

/// The metric names any report of `scenario` offers: those of [`shape`](crate::metrics::shape) for its sources (an
/// empty report, built without running or recording anything).
///
/// [`shape`]: crate::metrics::shape
pub fn metric_names(scenario: &Scenario) -> crate::metrics::MetricNames {
    let mut report =
        crate::metrics::shape(scenario.traffic.iter().map(|s| (s.name.as_str(), s.role)));
    scenario.features().fill(&mut report);
    let mut names = crate::metrics::MetricNames::of_report(&report);
    // Alert figures exist only in runs that evaluate the scenario's rules.
    names
        .algorithm
        .extend(scenario.alerts.iter().flat_map(|a| a.metric_names()));
    names.algorithm.sort();
    names
}
