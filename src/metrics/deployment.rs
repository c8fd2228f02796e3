//! Deployment tally: what running a limiter on several replicas and a store costs and breaks
//! (store operations, latency added per request, outages, lost updates, keys left without
//! expiry). Over-admission against the intent is not here: the policy figures
//! (`policy_violations`, `burst_factor`, `wrongly_allowed`) already count every key's
//! admissions across all replicas against the policy's limit.

use crate::time::Nanos;
use hdrhistogram::Histogram;
use serde::Serialize;

/// A deployment's figures (`summary.json`'s `deployment` section, present only when the
/// contender runs with a deployment; flattened as `deployment_<field>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeploymentReport {
    /// Replicas of the limiter behind the balancer (1 for a row without a deployment).
    pub replicas: u64,
    /// `local`, `shared` or `cached`.
    pub store: String,
    /// `atomic`, `racy`, `incr_then_expire` (shared), `divided` (local with a divided limit),
    /// or the store's name.
    pub ops: String,
    /// How requests are spread over replicas: `round_robin`, `random`, `client_hash` or
    /// `key_hash` (`none` for a row without a deployment).
    pub balancer: String,
    /// The typical round trip to the store (the constant, a uniform's mean, a log-normal's
    /// median; 0 for `local`), and the sync period of `cached` (0 otherwise).
    pub rtt_ns: Nanos,
    /// The `cached` store's sync period, in nanoseconds (0 for the other stores).
    pub sync_every_ns: Nanos,
    /// Commands sent to the store (a script, a read, a write, an `EXPIRE`, a sync's push or
    /// pull of one key), and per second of the scenario's duration.
    pub store_ops: u64,
    /// `store_ops` per second of the scenario's duration: the load the limiter puts on the store.
    pub store_ops_per_sec: f64,
    /// Latency the store adds to each request (round trips the request waits for). Percentiles
    /// from an HdrHistogram (3 significant figures); mean and max exact.
    /// Mean of that latency over every request, in nanoseconds (0 with no request).
    pub latency_mean_ns: f64,
    /// Median store latency per request, in nanoseconds.
    pub latency_p50_ns: u64,
    /// 90th percentile of the store latency per request, in nanoseconds.
    pub latency_p90_ns: u64,
    /// 99th percentile of the store latency per request, in nanoseconds.
    pub latency_p99_ns: u64,
    /// Longest store latency one request waited, in nanoseconds.
    pub latency_max_ns: u64,
    /// Requests decided while the store was down, and how.
    pub outage_requests: u64,
    /// Of `outage_requests`, admitted by the outage mode (`fail_open`).
    pub outage_admitted: u64,
    /// Of `outage_requests`, refused by the outage mode (`fail_closed`).
    pub outage_rejected: u64,
    /// `racy`: writes that overwrote a state written after the one they had read.
    pub lost_updates: u64,
    /// `incr_then_expire`: keys whose `EXPIRE` never ran (the replica died after `INCR`), and
    /// the requests rejected on such keys once their counter passed the limit.
    pub keys_without_expiry: u64,
    /// Requests refused on keys without expiry once their counter passed the limit.
    pub rejected_on_keys_without_expiry: u64,
    /// `cached`: syncs of the replicas with the store.
    pub syncs: u64,
}

impl DeploymentReport {
    /// The figures of one node without a store (a row beside deployed contenders).
    pub fn single_node() -> Self {
        DeploymentReport {
            replicas: 1,
            store: "none".into(),
            ops: "none".into(),
            balancer: "none".into(),
            ..Default::default()
        }
    }
}

/// Counts a deployment's figures as the gate decides.
pub struct DeploymentTally {
    latency: Histogram<u64>,
    latency_sum: u128,
    latency_max: Nanos,
    /// Commands sent to the store so far ([`DeploymentReport::store_ops`]).
    pub store_ops: u64,
    /// Requests the outage mode admitted while the store was down.
    pub outage_admitted: u64,
    /// Requests the outage mode refused while the store was down.
    pub outage_rejected: u64,
    /// `racy` writes that overwrote a state written after the one they had read.
    pub lost_updates: u64,
    /// `incr_then_expire` keys whose `EXPIRE` never ran.
    pub keys_without_expiry: u64,
    /// Requests refused on those keys once their counter passed the limit.
    pub rejected_on_keys_without_expiry: u64,
    /// `cached` syncs performed.
    pub syncs: u64,
}

impl Default for DeploymentTally {
    fn default() -> Self {
        DeploymentTally {
            latency: Histogram::new(3).expect("3 significant figures is valid"),
            latency_sum: 0,
            latency_max: 0,
            store_ops: 0,
            outage_admitted: 0,
            outage_rejected: 0,
            lost_updates: 0,
            keys_without_expiry: 0,
            rejected_on_keys_without_expiry: 0,
            syncs: 0,
        }
    }
}

impl DeploymentTally {
    /// The latency one request waited for the store.
    #[inline]
    pub fn latency(&mut self, ns: Nanos) {
        // `record` grows the auto-resizing histogram; saturate only past its largest range.
        if self.latency.record(ns).is_err() {
            self.latency.saturating_record(ns);
        }
        self.latency_sum += ns as u128;
        self.latency_max = self.latency_max.max(ns);
    }

    /// The figures; `names` are the store's, operations' and balancer's names, `periods` the
    /// typical round trip and the sync period.
    pub fn finish(
        &self,
        replicas: u32,
        names: [&str; 3],
        periods: [Nanos; 2],
        duration: Nanos,
    ) -> DeploymentReport {
        let h = &self.latency;
        let q = |q: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q).min(self.latency_max)
            }
        };
        DeploymentReport {
            replicas: replicas as u64,
            store: names[0].to_string(),
            ops: names[1].to_string(),
            balancer: names[2].to_string(),
            rtt_ns: periods[0],
            sync_every_ns: periods[1],
            store_ops: self.store_ops,
            store_ops_per_sec: self.store_ops as f64 / (duration as f64 / 1e9),
            latency_mean_ns: if h.is_empty() {
                0.0
            } else {
                self.latency_sum as f64 / h.len() as f64
            },
            latency_p50_ns: q(0.5),
            latency_p90_ns: q(0.9),
            latency_p99_ns: q(0.99),
            latency_max_ns: self.latency_max,
            outage_requests: self.outage_admitted + self.outage_rejected,
            outage_admitted: self.outage_admitted,
            outage_rejected: self.outage_rejected,
            lost_updates: self.lost_updates,
            keys_without_expiry: self.keys_without_expiry,
            rejected_on_keys_without_expiry: self.rejected_on_keys_without_expiry,
            syncs: self.syncs,
        }
    }
}
