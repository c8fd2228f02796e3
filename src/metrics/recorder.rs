//! The observer that turns one algorithm's decisions into figures: the tallies, joined.
//!
//! Each tally (one metric family) owns its state, its update and its part of the report:
//! [`SourceCounts`], [`Accuracy`], [`Bursts`] (rolling windows), [`Keys`] (ground truth),
//! [`Headers`], [`Retries`], [`Delays`] and [`Timeline`]. The recorder routes every event to the
//! tallies that need it and assembles their parts into an [`AlgorithmReport`], field by field,
//! in the order `summary.json` has always had.
//!
//! Accuracy is measured against the policy's intent, "at most L requests per key in any rolling
//! window (t−W, t]". Delayed requests are admitted when they are released, since that is when
//! they reach the backend.

use super::accuracy::Accuracy;
use super::burst::Bursts;
use super::counts::SourceCounts;
use super::delays::Delays;
use super::headers::Headers;
use super::keys::{ClientPart, Keys, Seen};
use super::keys_per_client::KeysPerClient;
use super::per_key::PerKey;
use super::retries::Retries;
use super::timeline::Timeline;
use super::{AlgorithmReport, Counts, RoleReport, SourceReport, ratio};
use crate::algorithms::{Decision, KeyId, MemoryUsage, Outcome, Params};
use crate::policy::Policy;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace, Role, SourceSpec};

pub struct Recorder {
    limit: u64,
    window: Nanos,
    roles: Vec<Role>,
    sources: SourceCounts,
    accuracy: Accuracy,
    bursts: Bursts,
    keys: Keys,
    headers: Headers,
    retries: Retries,
    delays: Delays,
    timeline: Timeline,
    keys_per_client: KeysPerClient,
    /// Every key's and client's state in the tallies above, one entry each.
    entries: PerKey,
    /// What each source reported when it finished: the malformed lines it skipped.
    skipped_lines: Vec<u64>,
}

impl Recorder {
    /// A recorder measuring against `policy`, for `sources` over `duration` in `bucket` steps.
    pub fn new(policy: &Policy, sources: &[SourceSpec], duration: Nanos, bucket: Nanos) -> Self {
        let (limit, window) = (policy.limit, policy.window);
        Recorder {
            limit,
            window,
            roles: sources.iter().map(|s| s.role).collect(),
            sources: SourceCounts::new(sources.len()),
            accuracy: Accuracy::new(Params {
                limit,
                window,
                burst: policy.burst,
            }),
            bursts: Bursts::new(limit, window),
            keys: Keys::new(limit, window),
            headers: Headers::default(),
            retries: Retries::default(),
            delays: Delays::new(),
            timeline: Timeline::new(duration, bucket),
            keys_per_client: KeysPerClient::new(&policy.key, sources),
            entries: PerKey::default(),
            skipped_lines: Vec::new(),
        }
    }

    /// Makes room for the keys and clients `keys` holds already (a synthetic source interns
    /// all of its clients before the run): the per-key entries then never move while the run
    /// fills them, instead of being copied at every doubling. Changes no figure.
    pub fn reserve_for(&mut self, keys: &KeySpace) {
        self.entries.reserve(keys.len(), keys.clients());
    }

    /// One decision on an arriving request. `estimate` is the algorithm's own estimate of the
    /// key's rolling count just before it ([`crate::algorithms::KeyedLimiter::estimate`]).
    #[inline]
    pub fn on_decision(&mut self, a: &Arrival, decision: &Decision, estimate: Option<f64>) {
        let t = a.time;
        let legit = self.roles[a.source as usize] == Role::Legit;
        let outcome = decision.outcome;
        let admitted = outcome.is_admitted();
        let rejected = !admitted;
        let retry = a.attempt > 0;
        if a.key != a.client && !self.entries.clients_kept() {
            self.keep_clients();
        }
        self.bursts.judge_due(self.entries.keys(), t);
        let (key, client) = self.entries.both(a.key, a.client);
        let (bursts, history) = (&self.bursts, &mut key.history);
        let exact_admits =
            self.accuracy
                .on_decision(a.key, &mut key.exact, t, admitted, estimate, || {
                    bursts.count_now(history, t)
                });
        self.keys.on_decision(
            Seen {
                key: a.key,
                client: a.client,
                t,
                legit,
                admitted,
                limited: !matches!(outcome, Outcome::Allow),
                rejected,
                over_policy: !exact_admits,
            },
            &mut key.stats,
            client.map(|c| ClientPart {
                stats: &mut c.stats,
                demand: &mut c.demand,
            }),
        );
        self.headers.on_decision(&mut key.advertised, t, decision);
        self.sources.on_decision(a.source, retry, &outcome);
        self.retries.on_request(t, retry);
        let delayed = matches!(outcome, Outcome::Delay(_));
        self.timeline
            .on_arrival(t, u32::from(a.source), retry, delayed, rejected);
        self.keys_per_client.record(a);
        match outcome {
            Outcome::Allow => {
                let in_window = self.bursts.on_admit(a.key, &mut key.history, t);
                self.timeline.on_admit(t, in_window);
            }
            Outcome::Delay(d) => self.delays.on_delay(d, legit),
            Outcome::Reject { .. } => self.bursts.on_reject(a.key, &mut key.history, t),
        }
    }

    /// Starts loading what [`Recorder::on_decision`] will touch for `a`: called a request
    /// ahead, so the cache misses of a large keyspace overlap.
    #[inline]
    pub fn prefetch(&self, a: &Arrival) {
        self.entries.prefetch(a.key, a.client);
    }

    /// Clients stop mirroring keys (see [`PerKey`]): every tally keeps them from now on.
    #[cold]
    #[inline(never)]
    fn keep_clients(&mut self) {
        if !self.entries.clients_kept() {
            let spilled = self.entries.keep_clients();
            self.keys.keep_clients(spilled);
        }
    }

    /// A rejected request's client gave up on it.
    #[inline]
    pub fn on_abandon(&mut self, a: &Arrival) {
        self.sources.on_abandon(a.source);
        if a.key != a.client && !self.entries.clients_kept() {
            self.keep_clients(); // (the request's decision has done it already)
        }
        match self.entries.mirrored_client(a.key) {
            Some(mirrored) => Keys::on_mirrored_abandon(mirrored),
            None => Keys::on_abandon(&mut self.entries.client(a.client).stats),
        }
    }

    /// A retry was scheduled; `pending` retries are now waiting.
    pub fn on_retry_scheduled(&mut self, pending: u64) {
        self.retries.on_scheduled(pending);
    }

    /// A request reaches the backend: admitted now, or a delayed one released now.
    /// Times passed here never decrease.
    #[inline]
    pub fn on_admit(&mut self, key: KeyId, time: Nanos) {
        self.bursts.judge_due(self.entries.keys(), time);
        let history = &mut self.entries.key(key).history;
        let in_window = self.bursts.on_admit(key, history, time);
        self.timeline.on_admit(time, in_window);
    }

    /// The sources have finished; `skipped_lines`: the malformed lines each skipped, in order.
    pub fn on_sources_finished(&mut self, skipped_lines: impl Iterator<Item = u64>) {
        self.skipped_lines = skipped_lines.collect();
    }

    /// How often [`Recorder::evict_idle`] should run: once per policy window of virtual time.
    pub fn sweep_every(&self) -> Nanos {
        self.window
    }

    /// Frees what no longer matters at `now`; called once per policy window of virtual time.
    pub fn evict_idle(&mut self, now: Nanos) {
        let (keys, clients) = self.entries.split();
        self.bursts.sweep(keys, now);
        self.keys.sweep(clients, now);
        self.accuracy.sweep(keys, now);
    }

    /// Each source's report, with its keys per client; and the totals.
    fn source_reports(&self, traffic: &[SourceSpec]) -> (Vec<SourceReport>, Counts) {
        let (mut sources, total) = self
            .sources
            .finish(traffic.iter().map(|s| (s.name.as_str(), s.role)));
        for (i, report) in sources.iter_mut().enumerate() {
            if let Some((max, mean)) = self.keys_per_client.of(i) {
                report.keys_per_client_max = Some(max);
                report.keys_per_client_mean = Some(mean);
            }
        }
        (sources, total)
    }

    /// The figures of the finished run.
    pub fn finish(
        mut self,
        traffic: &[SourceSpec],
        algorithm: &str,
        params: Params,
        keys: &KeySpace,
        peak: MemoryUsage,
        end: MemoryUsage,
    ) -> AlgorithmReport {
        let (sources, total) = self.source_reports(traffic);
        #[cfg(test)]
        if !self.entries.clients_kept() {
            super::per_key::MIRRORED_AT_FINISH.set(super::per_key::MIRRORED_AT_FINISH.get() + 1);
        }
        let accuracy = self.accuracy.finish();
        let bursts = self.bursts.finish(self.entries.keys());
        let k = Keys::finish(self.entries.key_stats(), self.entries.kept_client_stats());
        let headers = self.headers.finish();
        let retries = self.retries.finish();
        let (delay, legit_delay, abusive_delay) = self.delays.finish();
        let timeline = self.timeline.finish();
        let admitted = total.admitted();
        let per_key = |bytes: usize| ratio(bytes as u64, peak.live_keys as u64);
        AlgorithmReport {
            alerts: None,
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
            clients_gave_up: k.clients_gave_up,
            peak_pending_retries: retries.peak_pending_retries,
            retry_backlog_drain_ns: retries.retry_backlog_drain_ns,
            burst_factor: bursts.max_window_admitted as f64 / self.limit as f64,
            max_window_admitted: bursts.max_window_admitted,
            worst_window_key: bursts
                .worst_window_key
                .map_or_else(String::new, |key| keys.name(key).to_string()),
            worst_window_end_ns: bursts.worst_window_end_ns,
            policy_violations: bursts.policy_violations,
            policy_violation_rate: ratio(bursts.policy_violations, admitted),
            needless_rejections: bursts.needless_rejections,
            needless_rejection_rate: ratio(bursts.needless_rejections, total.rejected),
            keys_seen: k.keys_seen,
            keys_within_policy: k.keys_within_policy,
            keys_over_policy: k.keys_over_policy,
            false_positive_keys: k.false_positive_keys,
            false_negative_keys: k.false_negative_keys,
            wrongly_allowed: accuracy.wrongly_allowed,
            wrongly_rejected: accuracy.wrongly_rejected,
            wrongly_decided_share: ratio(
                accuracy.wrongly_allowed + accuracy.wrongly_rejected,
                total.offered,
            ),
            mean_rate_error: accuracy.mean_rate_error,
            collateral_rejections: k.collateral_rejections,
            collateral_clients: k.collateral_clients,
            fairness_jain: k.fairness_jain,
            remaining_lies: headers.remaining_lies,
            retries_at_retry_after: headers.retries_at_retry_after,
            retries_at_retry_after_admitted: headers.retries_at_retry_after_admitted,
            peak_live_keys: peak.live_keys as u64,
            final_live_keys: end.live_keys as u64,
            peak_state_bytes: peak.state_bytes as u64,
            state_bytes_per_key: per_key(peak.state_bytes),
            peak_redis_bytes: peak.redis_bytes as u64,
            redis_bytes_per_key: per_key(peak.redis_bytes),
            last_event_ns: timeline.last_event,
            roles: RoleReport::new(&sources, &legit_delay),
            delay,
            sources,
            timeseries: timeline.buckets,
            busiest_key: timeline.busiest_key,
            retries_by_source: timeline.retries_by_source,
            skipped_lines: self.skipped_lines,
            legit_delay: legit_delay.clone(),
            abusive_delay,
            worst_window_admissions: bursts.worst_window_admissions,
            bypassed: None,
            unlimited: None,
            warned: None,
            rules: Vec::new(),
            deployment: None,
        }
    }
}
