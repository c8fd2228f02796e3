//! What a run measures, as serialisable results. Every field is defined in `docs/metrics.md`.
//!
//! Everything here is a deterministic function of the scenario and seed. Wall-clock figures
//! (decision throughput) live apart, in [`Throughput`], and in their own output file.

mod recorder;

pub use recorder::{Recorder, ratio};

use crate::time::Nanos;
use crate::traffic::Role;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Request counts. `offered = allowed + delayed + rejected`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub offered: u64,
    /// Admitted at once.
    pub allowed: u64,
    /// Admitted after a delay (shapers only).
    pub delayed: u64,
    pub rejected: u64,
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.offered += other.offered;
        self.allowed += other.allowed;
        self.delayed += other.delayed;
        self.rejected += other.rejected;
    }

    pub fn admitted(&self) -> u64 {
        self.allowed + self.delayed
    }
}

/// One traffic source's fate under one algorithm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceReport {
    pub name: String,
    pub role: Role,
    pub offered: u64,
    pub admitted: u64,
    pub delayed: u64,
    pub rejected: u64,
    /// `admitted / offered`.
    pub admitted_share: f64,
}

impl SourceReport {
    pub fn new(name: String, role: Role, c: Counts) -> Self {
        SourceReport {
            name,
            role,
            offered: c.offered,
            admitted: c.admitted(),
            delayed: c.delayed,
            rejected: c.rejected,
            admitted_share: ratio(c.admitted(), c.offered),
        }
    }
}

/// Totals per role: how much wanted traffic got through, and how much of the attack leaked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleReport {
    pub legit_offered: u64,
    pub legit_admitted: u64,
    /// `legit_admitted / legit_offered` (0 when there is no legit traffic).
    pub legit_goodput: f64,
    pub abusive_offered: u64,
    pub abusive_admitted: u64,
    /// `abusive_admitted / abusive_offered` (0 when there is no abusive traffic).
    pub abusive_leakage: f64,
}

impl RoleReport {
    pub fn from_sources(sources: &[SourceReport]) -> Self {
        let sum = |role: Role, f: fn(&SourceReport) -> u64| -> u64 {
            sources.iter().filter(|s| s.role == role).map(f).sum()
        };
        let (lo, la) = (
            sum(Role::Legit, |s| s.offered),
            sum(Role::Legit, |s| s.admitted),
        );
        let (ao, aa) = (
            sum(Role::Abusive, |s| s.offered),
            sum(Role::Abusive, |s| s.admitted),
        );
        RoleReport {
            legit_offered: lo,
            legit_admitted: la,
            legit_goodput: ratio(la, lo),
            abusive_offered: ao,
            abusive_admitted: aa,
            abusive_leakage: ratio(aa, ao),
        }
    }
}

/// Distribution of the delays a shaper added. Percentiles come from an HdrHistogram with three
/// significant figures (within 0.1%); `count`, `mean_ns` and `max_ns` are exact.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DelayStats {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl DelayStats {
    pub fn from_histogram(h: &Histogram<u64>, sum: u128, max: Nanos) -> Self {
        if h.is_empty() {
            return DelayStats::default();
        }
        let q = |q: f64| h.value_at_quantile(q).min(max);
        DelayStats {
            count: h.len(),
            mean_ns: sum as f64 / h.len() as f64,
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: max,
        }
    }
}

/// Counts in one time bucket. `offered`, `delayed` and `rejected` count arrivals in the bucket;
/// `admitted` counts requests reaching the backend in it (a delayed request at its release).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TimeBucket {
    pub offered: u64,
    pub admitted: u64,
    pub delayed: u64,
    pub rejected: u64,
}

/// Everything measured for one algorithm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlgorithmReport {
    pub algorithm: String,
    /// The parameters the algorithm ran with (the policy's unless overridden).
    pub limit: u64,
    pub window_ns: Nanos,
    pub burst: u64,
    pub offered: u64,
    /// `allowed + delayed`.
    pub admitted: u64,
    pub allowed: u64,
    pub delayed: u64,
    pub rejected: u64,
    /// `max_window_admitted / policy.limit`.
    pub burst_factor: f64,
    /// The most admissions of one key in any rolling window `(t−W, t]` of the policy.
    pub max_window_admitted: u64,
    /// The key and the end of the first window that reached `max_window_admitted`.
    pub worst_window_key: String,
    pub worst_window_end_ns: Nanos,
    /// Admissions at which the key's count in `(t−W, t]` exceeds the policy limit.
    pub policy_violations: u64,
    /// `policy_violations / admitted`.
    pub policy_violation_rate: f64,
    /// Distinct keys in the traffic.
    pub keys_seen: u64,
    pub peak_live_keys: u64,
    pub final_live_keys: u64,
    /// Peak bytes of the limiter's keyspace: table allocation plus state-owned heap buffers.
    pub peak_state_bytes: u64,
    /// Time of the last arrival or release.
    pub last_event_ns: Nanos,
    pub delay: DelayStats,
    pub roles: RoleReport,
    pub sources: Vec<SourceReport>,
    #[serde(skip)]
    pub timeseries: Vec<TimeBucket>,
}

/// Wall-clock speed of one algorithm. Not deterministic: kept out of every deterministic output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    pub algorithm: String,
    /// Decisions timed, replaying the run's first arrivals through a fresh limiter.
    pub decisions_timed: u64,
    pub decision_elapsed_ns: u64,
    pub decisions_per_sec: f64,
    /// Wall time of the whole simulation of this algorithm (traffic, decisions, metrics).
    pub simulation_elapsed_ns: u64,
    /// `offered / simulation time`: end-to-end simulated requests per second.
    pub simulated_requests_per_sec: f64,
}
