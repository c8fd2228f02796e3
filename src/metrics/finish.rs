//! The end of a run: from the recorder's tallies to an [`AlgorithmReport`].

use super::recorder::{Delays, Recorder, Worst};
use super::{AlgorithmReport, Counts, DelayStats, RoleReport, SourceReport};
use crate::algorithms::{MemoryUsage, Params};
use crate::scenario::Scenario;
use crate::traffic::KeySpace;

/// `num / den`, or 0 when nothing was counted.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl DelayStats {
    pub(super) fn from_delays(d: &Delays) -> Self {
        let h = &d.histogram;
        if h.is_empty() {
            return DelayStats::default();
        }
        // HdrHistogram reports the top of a value's bucket; never above the exact maximum.
        let q = |q: f64| h.value_at_quantile(q).min(d.max);
        DelayStats {
            count: h.len(),
            mean_ns: d.sum as f64 / h.len() as f64,
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: d.max,
        }
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`: 1 when all `x` are equal, `1/n` when one takes all.
/// 1 for an empty set or all zeros (nothing was shared unequally).
pub fn jain(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut n, mut sum, mut squares) = (0.0, 0.0, 0.0);
    for x in xs {
        n += 1.0;
        sum += x;
        squares += x * x;
    }
    if squares == 0.0 {
        1.0
    } else {
        sum * sum / (n * squares)
    }
}

impl Recorder {
    /// The figures of the finished run.
    pub fn finish(
        mut self,
        scenario: &Scenario,
        algorithm: &str,
        params: Params,
        keys: &KeySpace,
        peak: MemoryUsage,
        end: MemoryUsage,
    ) -> AlgorithmReport {
        let mut total = Counts::default();
        let sources: Vec<SourceReport> = scenario
            .traffic
            .iter()
            .zip(&self.sources)
            .enumerate()
            .map(|(i, (spec, counts))| {
                total.add(counts);
                let mut report = SourceReport::new(spec.name.clone(), spec.role, *counts);
                if let Some((max, mean)) = self.keys_per_client.of(i) {
                    report.keys_per_client_max = Some(max);
                    report.keys_per_client_mean = Some(mean);
                }
                report
            })
            .collect();
        let worst = self.worst.unwrap_or(Worst {
            admitted: 0,
            key: 0,
            end: 0,
        });
        let admitted = total.admitted();
        let needless = self.windows.finish();

        let (mut within, mut over, mut false_pos, mut false_neg) = (0, 0, 0, 0);
        for (id, k) in self.keys.iter().enumerate() {
            if k.offered == 0 {
                continue;
            }
            if self.key_demand.exceeded(id as u32) {
                over += 1;
                false_neg += (k.limited == 0) as u64;
            } else {
                within += 1;
                false_pos += (k.limited > 0) as u64;
            }
        }
        let (mut collateral, mut collateral_clients) = (0, 0);
        for (id, c) in self.clients.iter().enumerate() {
            if c.legit && c.rejected_on_shared_key > 0 && !self.client_demand.exceeded(id as u32) {
                collateral += c.rejected_on_shared_key;
                collateral_clients += 1;
            }
        }
        let fairness = jain(
            self.keys
                .iter()
                .filter(|k| k.legit && k.offered > 0)
                .map(|k| k.admitted as f64 / k.offered as f64),
        );
        let per_key = |bytes: usize| {
            if peak.live_keys == 0 {
                0.0
            } else {
                bytes as f64 / peak.live_keys as f64
            }
        };
        let delay = DelayStats::from_delays(&self.delays);
        let legit_delay = DelayStats::from_delays(&self.legit_delays);
        AlgorithmReport {
            algorithm: algorithm.to_string(),
            limit: params.limit,
            window_ns: params.window,
            burst: params.burst,
            offered: total.offered,
            admitted,
            allowed: total.allowed,
            delayed: total.delayed,
            rejected: total.rejected,
            retries: total.retries,
            abandoned: total.abandoned,
            attempts_per_request: ratio(total.offered, total.requests()),
            request_success_rate: ratio(admitted, total.requests()),
            clients_gave_up: self.clients.iter().filter(|c| c.gave_up).count() as u64,
            peak_pending_retries: self.peak_pending_retries,
            retry_backlog_drain_ns: self
                .last_retry
                .map_or(0, |t| t.saturating_sub(self.last_first_try)),
            burst_factor: worst.admitted as f64 / self.limit as f64,
            max_window_admitted: worst.admitted,
            worst_window_key: if worst.admitted > 0 {
                keys.name(worst.key).to_string()
            } else {
                String::new()
            },
            worst_window_end_ns: worst.end,
            policy_violations: self.violations,
            policy_violation_rate: ratio(self.violations, admitted),
            needless_rejections: needless,
            needless_rejection_rate: ratio(needless, total.rejected),
            keys_seen: self.keys.iter().filter(|k| k.offered > 0).count() as u64,
            keys_within_policy: within,
            keys_over_policy: over,
            false_positive_keys: false_pos,
            false_negative_keys: false_neg,
            wrongly_allowed: self.wrongly_allowed,
            wrongly_rejected: self.wrongly_rejected,
            wrongly_decided_share: ratio(
                self.wrongly_allowed + self.wrongly_rejected,
                total.offered,
            ),
            mean_rate_error: (self.estimates > 0)
                .then(|| self.estimate_error_sum / self.estimates as f64),
            collateral_rejections: collateral,
            collateral_clients,
            fairness_jain: fairness,
            remaining_lies: self.remaining_lies,
            retries_at_retry_after: self.retries_at_retry_after,
            retries_at_retry_after_admitted: self.retries_at_retry_after_admitted,
            peak_live_keys: peak.live_keys as u64,
            final_live_keys: end.live_keys as u64,
            peak_state_bytes: peak.state_bytes as u64,
            state_bytes_per_key: per_key(peak.state_bytes),
            peak_redis_bytes: peak.redis_bytes as u64,
            redis_bytes_per_key: per_key(peak.redis_bytes),
            last_event_ns: self.last_event,
            roles: RoleReport::new(&sources, &legit_delay),
            delay,
            sources,
            timeseries: std::mem::take(&mut self.buckets),
            worst_window_admissions: std::mem::take(&mut self.worst_trace.times).into(),
            bypassed: None,
            unlimited: None,
            warned: None,
            rules: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_index() {
        assert_eq!(jain([0.5, 0.5, 0.5].into_iter()), 1.0);
        // One of four gets everything: 1/n.
        assert_eq!(jain([1.0, 0.0, 0.0, 0.0].into_iter()), 0.25);
        // (1 + 0.5)² / (2 · (1 + 0.25)) = 2.25 / 2.5 = 0.9
        assert_eq!(jain([1.0, 0.5].into_iter()), 0.9);
        assert_eq!(jain(std::iter::empty()), 1.0);
    }
}
