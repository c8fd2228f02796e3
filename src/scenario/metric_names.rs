//! The metric names a scenario's reports offer, for validating `expect` lines and `[goals]`
//! before anything runs: the shape of an empty report ([`crate::metrics::shape`]) plus the
//! figures this scenario's features add (identity, contenders, alerts).

use super::Scenario;

/// The metric names any report of `scenario` offers: those of [`shape`](crate::metrics::shape) for its sources (an
/// empty report, built without running or recording anything).
pub fn metric_names(scenario: &Scenario) -> crate::metrics::MetricNames {
    let mut report =
        crate::metrics::shape(scenario.traffic.iter().map(|s| (s.name.as_str(), s.role)));
    if crate::metrics::keys_per_client_kept(&scenario.policy.key, &scenario.traffic) {
        for source in &mut report.sources {
            source.keys_per_client_max = Some(0.0);
            source.keys_per_client_mean = Some(0.0);
        }
    }
    if scenario.algorithms.iter().any(|a| a.stack.is_some()) {
        // Contenders add their own figures to every row of the scenario.
        report.bypassed = Some(0);
        report.unlimited = Some(0);
        report.warned = Some(0);
    }
    if super::deployment::uses_deployments(scenario) {
        report.deployment = Some(crate::metrics::DeploymentReport::single_node());
    }
    let mut names = crate::metrics::MetricNames::of_report(&report);
    // Alert figures exist only in runs that evaluate the scenario's rules.
    names
        .algorithm
        .extend(scenario.alerts.iter().flat_map(|a| a.metric_names()));
    names.algorithm.sort();
    names
}
