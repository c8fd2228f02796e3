//! What a run measures, as serialisable results. Every field is defined in `docs/metrics.md`.
//!
//! Everything here is a deterministic function of the scenario and seed. Wall-clock figures
//! (decision throughput) live apart, in [`Throughput`], and in their own output file.

mod accuracy;
mod backtest;
#[cfg(test)]
mod brute;
mod burst;
mod counts;
mod delays;
mod demand;
mod dense;
mod deployment;
mod flat;
mod harm;
mod headers;
mod intent;
mod judged;
mod keys;
mod keys_per_client;
mod memory;
pub(crate) mod names;
mod per_key;
mod periods;
mod quota;
mod range_max;
mod recorder;
mod retries;
mod row;
mod rules;
mod shape;
mod throughput;
mod timeline;
mod timelog;
mod tokens;
mod unit_figures;
mod weighed;
mod windows;

pub use backtest::{
    BacktestDisagreement, BacktestReport, BacktestRow, Cause, Deciders, KEPT_DISAGREEMENTS,
    RuleDecision, TOP_CLIENTS,
};
pub use deployment::{DeploymentReport, DeploymentTally};
pub use flat::{Flat, FlatSource, Values};
pub use harm::SourceHarm;
pub use intent::{
    Entitlement, Intent, IntentReport, IntentUnit, Per, RouteEntitlement, TierEntitlement,
};
pub use keys::jain;
pub use names::{Better, MetricNames, Scope, better, directed, flatten, flatten_value, shape};
#[cfg(test)]
pub(crate) use per_key::{MIRRORED_AT_FINISH, NO_MIRROR};
pub use quota::{QuotaTally, RuleQuota, RunOut};
pub use recorder::Recorder;
pub use row::{GateFigures, RowParts};
pub use rules::{RuleReport, RuleTally, SourceKeys};
pub use shape::Features;
pub use throughput::{Throughput, Timing};
pub use timeline::{TAIL_FACTOR, final_bucket};
pub use tokens::{RuleTokens, SourceTokens, TokenTally};

use crate::time::Nanos;
use crate::traffic::Role;
use serde::Serialize;

/// Request counts. `offered = allowed + delayed + rejected`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Requests that arrived, retries included.
    pub offered: u64,
    /// Admitted at once.
    pub allowed: u64,
    /// Admitted after a delay (shapers only).
    pub delayed: u64,
    /// Refused.
    pub rejected: u64,
    /// Of `offered`, retries of earlier rejected requests (closed-loop clients).
    pub retries: u64,
    /// Rejected requests whose client gave up (no retry follows).
    pub abandoned: u64,
}

impl Counts {
    /// Adds `other`'s counts to these, field by field.
    pub fn add(&mut self, other: &Counts) {
        self.offered += other.offered;
        self.allowed += other.allowed;
        self.delayed += other.delayed;
        self.rejected += other.rejected;
        self.retries += other.retries;
        self.abandoned += other.abandoned;
    }

    /// Original requests: first tries, not retries.
    pub fn requests(&self) -> u64 {
        self.offered - self.retries
    }

    /// Requests that reached the backend: `allowed + delayed`.
    pub fn admitted(&self) -> u64 {
        self.allowed + self.delayed
    }
}

/// Units of cost offered, admitted and refused, for traffic whose requests weigh more than one
/// (`offered = admitted + rejected`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CostCounts {
    /// The cost of every request that arrived, retries included.
    pub offered: u64,
    /// Of `offered`, the cost of the requests admitted, at once or after a delay.
    pub admitted: u64,
    /// Of `offered`, the cost of the requests refused.
    pub rejected: u64,
    /// What the admitted requests actually cost once their responses settled (at most
    /// `admitted`): only where the traffic states actual costs (`actual_cost`, `actual_share`,
    /// a trace's `actual_cost`). A rule with `refunds` gives back `admitted − settled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<u64>,
    /// Against an intent in units of cost (`[intent] unit = "cost"`) or in an LLM's tokens
    /// (`"tokens"`, ...), in that unit: the units admitted beyond their clients' entitlements
    /// (an admission taking its window `u` over the ceiling puts `min(u, its weight)` over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_intent: Option<u64>,
    /// Against an intent in units of cost or tokens: the units of the needless rejections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needless: Option<u64>,
}

impl CostCounts {
    /// These counts and `other`'s, field by field.
    pub fn plus(self, other: &CostCounts) -> CostCounts {
        CostCounts {
            offered: self.offered + other.offered,
            admitted: self.admitted + other.admitted,
            rejected: self.rejected + other.rejected,
            settled: plus(self.settled, other.settled),
            over_intent: plus(self.over_intent, other.over_intent),
            needless: plus(self.needless, other.needless),
        }
    }
}

/// `a + b`, absent when both are.
fn plus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

/// One traffic source's fate under one algorithm.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SourceReport {
    /// The source's name in the scenario.
    pub name: String,
    /// Whether the source is legit or abusive traffic.
    pub role: Role,
    /// The source's requests that arrived, retries included.
    pub offered: u64,
    /// Of `offered`, admitted at once or after a delay.
    pub admitted: u64,
    /// Of `offered`, admitted after a shaper's delay.
    pub delayed: u64,
    /// Of `offered`, refused.
    pub rejected: u64,
    /// Of `offered`, retries; and rejected requests given up on.
    pub retries: u64,
    /// Rejected requests of this source whose client gave up (no retry follows).
    pub abandoned: u64,
    /// `admitted / offered`.
    pub admitted_share: f64,
    /// `offered / (offered − retries)`: attempts per original request.
    pub attempts_per_request: f64,
    /// `admitted / (offered − retries)`: original requests eventually served.
    pub request_success_rate: f64,
    /// The same in units of cost, when the scenario's requests weigh more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostCounts>,
    /// Distinct keys a real client of this source produced under the policy's key: the most
    /// any client produced (a whole number, written as a float so role totals do not sum it)
    /// and the mean over the clients that sent. Only for scenarios about client identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys_per_client_max: Option<f64>,
    /// The mean distinct keys per client, over this source's clients that sent (see
    /// `keys_per_client_max`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys_per_client_mean: Option<f64>,
    /// Against the intent, per real client (docs/metrics.md "Harm per real client"): this
    /// source's admissions beyond its client's entitlement, its needless and collateral
    /// rejections, and its legit clients with at least one needless rejection.
    pub policy_violations: u64,
    /// This source's rejections that, admitted alone, would have kept every window of their
    /// client within its entitlement.
    pub needless_rejections: u64,
    /// Of `needless_rejections`, those of legit clients on a deciding key another client had
    /// used (shared-key collateral).
    pub collateral_rejections: u64,
    /// This source's legit clients with at least one needless rejection.
    pub clients_hurt: u64,
}

impl SourceReport {
    /// A source's report from its counts, with the ratios computed and the per-client figures
    /// (keys per client, harm against the intent) zero or absent until the caller fills them.
    pub fn new(name: String, role: Role, c: Counts) -> Self {
        SourceReport {
            name,
            role,
            offered: c.offered,
            admitted: c.admitted(),
            delayed: c.delayed,
            rejected: c.rejected,
            retries: c.retries,
            abandoned: c.abandoned,
            admitted_share: ratio(c.admitted(), c.offered),
            attempts_per_request: ratio(c.offered, c.requests()),
            request_success_rate: ratio(c.admitted(), c.requests()),
            cost: None,
            keys_per_client_max: None,
            keys_per_client_mean: None,
            policy_violations: 0,
            needless_rejections: 0,
            collateral_rejections: 0,
            clients_hurt: 0,
        }
    }
}

/// Totals per role: how much wanted traffic got through, how long it waited, and how much of
/// the attack leaked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RoleReport {
    /// Requests of `legit` sources that arrived, retries included.
    pub legit_offered: u64,
    /// Of `legit_offered`, admitted at once or after a delay.
    pub legit_admitted: u64,
    /// `legit_admitted / legit_offered` (0 when there is no legit traffic).
    pub legit_goodput: f64,
    /// Legit requests a shaper delayed, and the delay it added to them.
    pub legit_delayed: u64,
    /// Mean delay added to `legit_delayed`, in nanoseconds (exact).
    pub legit_delay_mean_ns: f64,
    /// 99th percentile of that delay, in nanoseconds (HdrHistogram, within 0.1%).
    pub legit_delay_p99_ns: u64,
    /// Longest delay added to a legit request, in nanoseconds (exact).
    pub legit_delay_max_ns: u64,
    /// Requests of `abusive` sources that arrived, retries included.
    pub abusive_offered: u64,
    /// Of `abusive_offered`, admitted at once or after a delay.
    pub abusive_admitted: u64,
    /// `abusive_admitted / abusive_offered`; `None` (JSON `null`) when there is no abusive
    /// traffic: nothing leaked, but nothing was tried either, so 0 would read as a perfect score.
    pub abusive_leakage: Option<f64>,
}

impl RoleReport {
    /// Sums `sources` by role and takes the legit delay figures from `legit_delay`.
    pub fn new(sources: &[SourceReport], legit_delay: &DelayStats) -> Self {
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
            legit_delayed: legit_delay.count,
            legit_delay_mean_ns: legit_delay.mean_ns,
            legit_delay_p99_ns: legit_delay.p99_ns,
            legit_delay_max_ns: legit_delay.max_ns,
            abusive_offered: ao,
            abusive_admitted: aa,
            abusive_leakage: (ao > 0).then(|| ratio(aa, ao)),
        }
    }
}

/// Distribution of the delays a shaper added. Percentiles come from an HdrHistogram with three
/// significant figures (within 0.1%); `count`, `mean_ns` and `max_ns` are exact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DelayStats {
    /// Delayed requests.
    pub count: u64,
    /// Mean added delay, in nanoseconds (0 without delayed requests).
    pub mean_ns: f64,
    /// Median added delay, in nanoseconds.
    pub p50_ns: u64,
    /// 90th percentile of the added delay, in nanoseconds.
    pub p90_ns: u64,
    /// 99th percentile of the added delay, in nanoseconds.
    pub p99_ns: u64,
    /// 99.9th percentile of the added delay, in nanoseconds.
    pub p999_ns: u64,
    /// Longest added delay, in nanoseconds.
    pub max_ns: u64,
}

/// Counts in one time bucket. `offered`, `delayed` and `rejected` count arrivals in the bucket;
/// `admitted` counts requests reaching the backend in it (a delayed request at its release).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TimeBucket {
    /// Requests that arrived in the bucket, retries included.
    pub offered: u64,
    /// Of `offered`, retries.
    pub retries: u64,
    /// Requests that reached the backend in the bucket (allowed on arrival, or released).
    pub admitted: u64,
    /// Requests arriving in the bucket that a shaper delayed.
    pub delayed: u64,
    /// Requests arriving in the bucket that were refused.
    pub rejected: u64,
    /// The cost of the first tries arriving in the bucket (the rate chart's offered load
    /// where requests weigh more than one; not in `timeseries.csv`).
    #[serde(skip)]
    pub cost_offered: u64,
    /// The cost of the requests arriving in the bucket that were admitted, at once or after
    /// a delay (counted when decided, not when released).
    #[serde(skip)]
    pub cost_admitted: u64,
}

/// The malformed trace lines each source of a run skipped, in the scenario's order
/// ([`AlgorithmReport::skipped_lines`], the same in every row); empty without a row.
pub fn skipped_lines(rows: &[AlgorithmReport]) -> &[u64] {
    rows.first().map_or(&[], |row| &row.skipped_lines)
}

/// Everything measured for one algorithm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AlgorithmReport {
    /// The row's name: the algorithm's, a profile's or a contender's.
    pub algorithm: String,
    /// The parameters the algorithm ran with (the policy's unless overridden): requests per
    /// window.
    pub limit: u64,
    /// The window the limit applies to, in nanoseconds.
    pub window_ns: Nanos,
    /// The burst allowance, in requests (listed even for algorithms that ignore it).
    pub burst: u64,
    /// Requests that arrived, retries included.
    pub offered: u64,
    /// `allowed + delayed`.
    pub admitted: u64,
    /// Admitted at once.
    pub allowed: u64,
    /// Admitted after a shaper's delay.
    pub delayed: u64,
    /// Refused; `offered = admitted + rejected`.
    pub rejected: u64,
    /// Offered, admitted and refused in units of cost, when the scenario's requests weigh
    /// more than one (docs/metrics.md, "Costs").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostCounts>,
    /// Of `offered`, retries of rejected requests by closed-loop clients.
    pub retries: u64,
    /// Rejected requests whose client gave up.
    pub abandoned: u64,
    /// `offered / (offered − retries)`: attempts per original request.
    pub attempts_per_request: f64,
    /// `admitted / (offered − retries)`: original requests eventually served.
    pub request_success_rate: f64,
    /// Clients that gave up on at least one request.
    pub clients_gave_up: u64,
    /// Most retries waiting to be made at one time: the size of the herd.
    pub peak_pending_retries: u64,
    /// How long retries went on after the last original request: last retry − last first try
    /// (0 without retries).
    pub retry_backlog_drain_ns: Nanos,
    /// Against the intent, per real client (per policy key with `per` a key; docs/metrics.md):
    /// the worst client's `max_window_admitted / its entitlement's ceiling`, the highest over
    /// clients.
    pub burst_factor: f64,
    /// The worst client's most admissions in one rolling window `(t−W, t]` of its entitlement.
    pub max_window_admitted: u64,
    /// That client (its name) and the end of the first window that reached it.
    pub worst_window_key: String,
    /// The end `t` of that window `(t−W, t]`, in nanoseconds of virtual time.
    pub worst_window_end_ns: Nanos,
    /// Admissions at which the client's count in `(t−W, t]` exceeds its entitlement.
    pub policy_violations: u64,
    /// `policy_violations / admitted`.
    pub policy_violation_rate: f64,
    /// Rejections that, admitted alone, would have kept every window of the client containing
    /// them within its entitlement (see `windows.rs` and docs/metrics.md).
    pub needless_rejections: u64,
    /// `needless_rejections / rejected`.
    pub needless_rejection_rate: f64,
    /// Distinct keys in the traffic.
    pub keys_seen: u64,
    /// Keys whose offered traffic never exceeded L in a rolling window, and the others.
    pub keys_within_policy: u64,
    /// Keys whose offered traffic exceeded L in some rolling window.
    pub keys_over_policy: u64,
    /// Keys within the policy that were limited (rejected or delayed) at least once.
    pub false_positive_keys: u64,
    /// Keys over the policy that were never limited.
    pub false_negative_keys: u64,
    /// Legit clients with at least one needless rejection.
    pub clients_hurt: u64,
    /// Requests this algorithm admitted that the exact sliding log of the intent (per real
    /// client, its entitlement) rejected, and the reverse.
    pub wrongly_allowed: u64,
    /// Requests this algorithm refused that the exact sliding log of the intent admitted.
    pub wrongly_rejected: u64,
    /// `(wrongly_allowed + wrongly_rejected) / offered`.
    pub wrongly_decided_share: f64,
    /// For algorithms that estimate the rolling count: mean of |estimate − true| / true over
    /// decisions whose key had admissions in the window. `null` for the others.
    pub mean_rate_error: Option<f64>,
    /// Needless rejections of legit clients on a key that decided (the policy key, or a stack's
    /// refusing rule's) another client had used: NAT collateral damage.
    pub collateral_rejections: u64,
    /// Legit clients that suffered at least one collateral rejection.
    pub collateral_clients: u64,
    /// Jain's index over legit keys' `admitted / offered`: 1 when every key got the same share
    /// of its demand.
    pub fairness_jain: f64,
    /// Rejections right after a decision of the same key advertised `remaining > 0`.
    pub remaining_lies: u64,
    /// Requests that arrived exactly at the key's advertised Retry-After, and of those, admitted.
    pub retries_at_retry_after: u64,
    /// Of `retries_at_retry_after`, admitted.
    pub retries_at_retry_after_admitted: u64,
    /// Most keys with live limiter state at one time.
    pub peak_live_keys: u64,
    /// Keys with live limiter state at the end of the run.
    pub final_live_keys: u64,
    /// Peak bytes of the limiter's keyspace: table allocation plus state-owned heap buffers.
    pub peak_state_bytes: u64,
    /// `peak_state_bytes / peak_live_keys`.
    pub state_bytes_per_key: f64,
    /// Peak estimated bytes of the same keyspace in Redis.
    pub peak_redis_bytes: u64,
    /// `peak_redis_bytes / peak_live_keys`.
    pub redis_bytes_per_key: f64,
    /// Time of the last arrival or release.
    pub last_event_ns: Nanos,
    /// The delays a shaper added, over every delayed request.
    pub delay: DelayStats,
    /// Where requests weigh more than one: the same delays with each request counted once per
    /// unit of its cost, so the percentiles are those of a unit of cost (the waits of costly
    /// requests weigh as much as they cost). `count` is the units delayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_delay: Option<DelayStats>,
    /// Totals per role: legit goodput and delay, abusive leakage.
    pub roles: RoleReport,
    /// Each traffic source's fate, in the scenario's order.
    pub sources: Vec<SourceReport>,
    /// The figures of the scenario's alert rules, `<rule>_<figure>` (read as
    /// `alerts_<rule>_<figure>`); absent when the scenario has no `[[alert]]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alerts: Option<std::collections::BTreeMap<String, Option<f64>>>,
    /// Counts per time bucket over the run, oldest first: `timeseries.csv` and the charts.
    #[serde(skip)]
    pub timeseries: Vec<TimeBucket>,
    /// Contenders of `[[contender]]` only (absent in the short form): requests let through by
    /// the bypass lists, requests no rule applied to (skipped routes), admitted requests that
    /// carried a warning, and each rule's figures against its own limit, window and key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bypassed: Option<u64>,
    /// A dry-run contender's (`dry_run = true`) requests its rules refused, all admitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_refuse: Option<u64>,
    /// The HTTP status this contender's refusals answer (`refuse_status`; nginx's
    /// `limit_req_status`), for a back-test to read a log's statuses by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuse_status: Option<u16>,
    /// Contenders only: requests no rule applied to (a skipped route, a route no rule names),
    /// all admitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlimited: Option<u64>,
    /// Contenders only: admitted requests that carried a rule's `warn_at` warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warned: Option<u64>,
    /// Contenders only: each rule's figures against its own limit, window and key, in the
    /// contender's order; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleReport>,
    /// Contenders run with a deployment only (see `deployment.rs` and docs/distributed.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentReport>,
    /// Against production's decisions, when the replayed trace records them (see
    /// `backtest.rs` and docs/backtest.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backtest: Option<BacktestReport>,
    /// Admission times of `worst_window_key` in `(end − 2W, end + W]` around
    /// `worst_window_end_ns`, oldest first: the worst-moment chart's data.
    #[serde(skip)]
    pub worst_window_admissions: Vec<Nanos>,
    /// Against an intent in units of cost, the units of each of `worst_window_admissions`;
    /// empty when each weighs one.
    #[serde(skip)]
    pub worst_window_units: Vec<u64>,
    /// What the intent counts, which names the units of `cost.over_intent` and
    /// `cost.needless` in words.
    #[serde(skip)]
    pub intent_unit: IntentUnit,
    /// Per `timeseries` bucket, the most admissions of one key in its rolling window at an
    /// admission in the bucket (0 when nothing was admitted): the busiest-key chart's data.
    /// Under an intent per calendar period, the most one judged client had in its period.
    #[serde(skip)]
    pub busiest_key: Vec<u64>,
    /// Per source (in `sources` order), per bucket: retries; empty for sources that never
    /// retried. The retry chart's data.
    #[serde(skip)]
    pub retries_by_source: Vec<Vec<u64>>,
    /// Per source (in the scenario's order): the malformed trace lines it skipped
    /// (`--skip-bad-lines`), as it reported when it finished; 0 for generated sources and for
    /// the later parts of a split trace. Every row's run reads the whole trace, so the counts
    /// are the same in every row; the summary lists them with the sources.
    #[serde(skip)]
    pub skipped_lines: Vec<u64>,
    /// Per source (in the scenario's order): how its replay ended (`None` for a generated
    /// source), the same in every row: what the verdict warns of a trace cut short or empty.
    #[serde(skip)]
    pub replay_ends: Vec<Option<crate::traffic::ReplayEnd>>,
    /// The delays of legit and of abusive requests: the delay chart's data.
    #[serde(skip)]
    pub legit_delay: DelayStats,
    /// The delays a shaper added to abusive requests (see `legit_delay`).
    #[serde(skip)]
    pub abusive_delay: DelayStats,
}

/// `num / den`, or 0 when nothing was counted.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// Whether a run keeps the keys-per-client figures: its key is an identity function, or a
/// source sits behind a proxy, forges headers or signs in.
pub fn keys_per_client_kept(
    key: &crate::policy::KeySpec,
    sources: &[crate::traffic::SourceSpec],
) -> bool {
    keys_per_client::KeysPerClient::kept(key, sources)
}
