//! The observer that turns one algorithm's decisions into figures: the tallies, joined.
//!
//! Each tally (one metric family) owns its state, its update and its part of the report:
//! [`SourceCounts`], [`Accuracy`], [`Bursts`] (rolling windows), [`Keys`] (ground truth),
//! [`Headers`], [`Retries`], [`Delays`] and [`Timeline`]. The recorder routes every event to the
//! tallies that need it and assembles their parts into an [`AlgorithmReport`], field by field,
//! in the order `summary.json` has always had.
//!
//! Accuracy and harm are measured against the scenario's intent (`metrics::intent`): "at most
//! the entitlement per real client in any rolling window (t−W, t]", whatever key the contender
//! counts on ([`Judged`]; on the fast path, each client being its key, the per-key tallies
//! judge the clients). An intent in units of cost or tokens is judged by [`Weighed`], one per
//! calendar period by [`Periods`]. The per-key figures (keys seen, false positive keys, the rate error of
//! an estimate, headers) hold each key to the intent's base entitlement. Delayed requests are
//! admitted when they are released, since that is when they reach the backend.

use super::accuracy::Accuracy;
use super::backtest::{Backtest, Deciders};
use super::burst::Bursts;
use super::counts::SourceCounts;
use super::delays::Delays;
use super::harm::{LEGIT, SHARED, SourceHarm};
use super::headers::Headers;
use super::intent::{Bounds, Intent};
use super::judged::Judged;
use super::keys::{ClientPart, Keys, Seen};
use super::keys_per_client::KeysPerClient;
use super::per_key::PerKey;
use super::periods::Periods;
use super::retries::Retries;
use super::row::RowParts;
use super::timeline::Timeline;
use super::unit_figures::UnitsPart;
use super::weighed::{Decided, Weighed};
use super::{AlgorithmReport, CostCounts, Counts, RoleReport, SourceReport, ratio};
use crate::algorithms::{Cost, Decision, KeyId, Outcome, Params};
use crate::policy::Policy;
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId, Identity, KeySpace, Role, SourceSpec};

/// The status of a refusal in a log that records only statuses: nginx's default
/// `limit_req_status`.
pub const DEFAULT_REFUSE_STATUS: u16 = 503;

/// Observes one algorithm's or contender's run, decision by decision, and builds its
/// [`AlgorithmReport`] at the end; the figures are measured against the scenario's intent.
pub struct Recorder {
    /// How often the tallies are swept, in virtual time.
    sweep_every: Nanos,
    intent: Intent,
    /// Per source: user → tier, for an intent with tiers (read once, before the run).
    tiers: Vec<(String, String)>,
    /// The per-client judge, once clients are not their keys (or from the start with tiers);
    /// `None` while the per-key tallies judge the clients, or when the intent judges keys.
    judged: Option<Judged>,
    /// With an intent in units of cost or per calendar period, the judge of every client (or
    /// key), from the start: the per-key tallies then judge nothing the report shows but the
    /// rate error (none per period).
    intent_judge: Option<IntentJudge>,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch (calendar periods
    /// hang on it).
    epoch_ns: u64,
    /// With `[intent] per_route`: per source, the entry judging its requests plus one (0: the
    /// base), and the judged ids per client ([`Bounds::stride`]); empty and 1 without.
    routes: Vec<u8>,
    stride: u32,
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
    /// Against production's decisions, for replayed requests that carry them.
    backtest: Backtest,
}

impl Recorder {
    /// A recorder measuring against `intent` (the policy's key: `policy`), for `sources` over
    /// `duration` in `bucket` steps, virtual time 0 at `epoch_ns` since the Unix epoch.
    pub fn new(
        policy: &Policy,
        intent: &Intent,
        sources: &[SourceSpec],
        (duration, bucket): (Nanos, Nanos),
        epoch_ns: u64,
    ) -> Self {
        let ceiling = intent.base.ceiling();
        // Per calendar period the per-key tallies' rolling windows judge nothing reported:
        // one nanosecond keeps them from holding a month of history per key. The periods'
        // judge is swept daily.
        let (window, sweep) = match intent.per_period() {
            true => (1, crate::time::NANOS_PER_DAY),
            false => (intent.base.window, intent.base.window),
        };
        let routed = intent.per_client() && !intent.per_route.is_empty();
        let own_judge = !intent.unit.is_requests() || intent.per_period();
        let tiered = (intent.per_client() && !intent.per_tier.is_empty() || routed) && !own_judge;
        Recorder {
            sweep_every: sweep,
            intent: intent.clone(),
            tiers: if tiered || own_judge && intent.per_client() {
                users_tiers(sources)
            } else {
                Vec::new()
            },
            judged: tiered.then(|| Judged::new(Bounds::of_intent(intent, 0, |_| None), 0)),
            intent_judge: own_judge.then(|| {
                IntentJudge::new(
                    intent,
                    Bounds::of_intent(intent, 0, |_| None),
                    epoch_ns,
                    (0, 0),
                )
            }),
            epoch_ns,
            routes: match routed {
                true => source_routes(intent, sources),
                false => Vec::new(),
            },
            stride: if routed {
                intent.per_route.len() as u32 + 1
            } else {
                1
            },
            roles: sources.iter().map(|s| s.role).collect(),
            sources: SourceCounts::new(sources.len()),
            accuracy: Accuracy::new(Bounds::uniform(ceiling, window)),
            bursts: Bursts::new(Bounds::uniform(ceiling, window)),
            keys: Keys::new(ceiling, window),
            headers: Headers::default(),
            retries: Retries::default(),
            delays: Delays::new(costed(sources)),
            timeline: Timeline::new(duration, bucket),
            keys_per_client: KeysPerClient::new(&policy.key, sources),
            entries: PerKey::default(),
            skipped_lines: Vec::new(),
            backtest: Backtest::new(DEFAULT_REFUSE_STATUS),
        }
    }

    /// The contender's parameters (where its slots fall, for the back-test's causes).
    pub fn set_params(&mut self, params: Params) {
        self.backtest.set_params(params);
    }

    /// The status the contender's refusals answer: a log's status-only records are refusals
    /// when they carry it (a `[[contender]]`'s `refuse_status`; 503 otherwise).
    pub fn set_refuse_status(&mut self, status: u16) {
        self.backtest.set_refuse_status(status);
    }

    /// A stack's rules' parameters, in order (the back-test judges each rule's keys).
    pub fn set_rule_params(&mut self, rules: &[Params]) {
        self.backtest.set_rule_params(rules);
    }

    /// Makes room for the keys and clients `keys` holds already (a synthetic source interns
    /// all of its clients before the run): the per-key entries then never move while the run
    /// fills them, instead of being copied at every doubling. Changes no figure.
    pub fn reserve_for(&mut self, keys: &KeySpace) {
        self.entries.reserve(keys.len(), keys.clients());
        if !self.tiers.is_empty() || self.judged.is_some() || self.intent_judge.is_some() {
            // Each client's entitlement, once: its name's tier (clients interned later, of
            // replayed traces, have the base).
            let tier = |id: usize| {
                let name = keys.client_name(id as ClientId);
                self.tiers
                    .binary_search_by(|(u, _)| u.as_str().cmp(name))
                    .ok()
                    .map(|i| self.tiers[i].1.as_str())
            };
            let bounds = Bounds::of_intent(&self.intent, keys.clients(), tier);
            let ids = keys.clients() * self.stride as usize;
            let (intent, epoch) = (&self.intent, self.epoch_ns);
            match &mut self.intent_judge {
                Some(w) if intent.per_client() => {
                    *w = IntentJudge::new(intent, bounds, epoch, (ids, keys.len()))
                }
                Some(w) => *w = IntentJudge::new(intent, bounds, epoch, (keys.len(), keys.len())),
                None => self.judged = Some(Judged::new(bounds, ids)),
            }
        }
    }

    /// The intent the figures are judged against.
    pub fn intent(&self) -> &Intent {
        &self.intent
    }

    /// One decision on an arriving request. `estimate` is the algorithm's own estimate of the
    /// key's rolling count just before it ([`crate::algorithms::KeyedLimiter::estimate`]).
    /// `shared`: whether the key that decided (a stack's refusing rule's) had been used by
    /// another client; `None`: the policy key decided.
    #[inline]
    pub fn on_decision(
        &mut self,
        a: &Arrival,
        decision: &Decision,
        estimate: Option<f64>,
        shared: Option<bool>,
        deciders: Deciders<'_>,
    ) {
        let t = a.time;
        let legit = self.roles[a.source as usize] == Role::Legit;
        let outcome = decision.outcome;
        let admitted = outcome.is_admitted();
        let rejected = !admitted;
        let retry = a.attempt > 0;
        if a.key != a.client && (!self.entries.clients_kept() || self.judging_keys()) {
            self.keep_clients();
        }
        self.bursts.judge_due(self.entries.keys(), t);
        let (key, client) = self.entries.both(a.key, a.client);
        let (bursts, history) = (&self.bursts, &mut key.history);
        let exact_admits =
            self.accuracy
                .on_decision(a.key, &mut key.exact, t, admitted, estimate, || {
                    bursts.count_now(a.key, history, t)
                });
        let over_policy = match &mut self.intent_judge {
            Some(w) => !w.key_within(a.key, t, u64::from(self.intent.unit.weigh(a))),
            None => !exact_admits,
        };
        let key_shared = self.keys.on_decision(
            Seen {
                key: a.key,
                client: a.client,
                t,
                legit,
                admitted,
                limited: !matches!(outcome, Outcome::Allow),
                over_policy,
            },
            &mut key.stats,
            client.map(|c| ClientPart {
                stats: &mut c.stats,
                demand: &mut c.demand,
            }),
        );
        let flags = if legit { LEGIT } else { 0 }
            | if shared.unwrap_or(key_shared) {
                SHARED
            } else {
                0
            };
        if let Some(judged) = &mut self.judged {
            match self.routes.is_empty() {
                true => judged.on_decision(a, outcome, flags),
                false => judged.on_decision(&routed(a, &self.routes, self.stride), outcome, flags),
            }
        }
        let mut in_period = None;
        if let Some(w) = &mut self.intent_judge {
            let id = match self.intent.per_client() {
                true => judged_id(a.client, a.source, &self.routes, self.stride),
                false => a.key,
            };
            let decided = Decided {
                admitted: outcome == Outcome::Allow,
                delayed: matches!(outcome, Outcome::Delay(_)),
                source: a.source,
                flags,
            };
            in_period = w.on_decision(id, t, u64::from(self.intent.unit.weigh(a)), decided);
        }
        self.headers.on_decision(&mut key.advertised, t, decision);
        self.sources
            .on_decision(a.source, retry, &outcome, (a.cost, a.refund));
        self.retries.on_request(t, retry);
        let delayed = matches!(outcome, Outcome::Delay(_));
        self.timeline
            .on_arrival(t, (u32::from(a.source), a.cost), retry, delayed, rejected);
        self.keys_per_client.record(a);
        // A retry is the client's reaction to the contender, not in production's log.
        if let Some(verdict) = a.logged.verdict()
            && !retry
        {
            self.backtest.on_decision(a, verdict, decision, deciders);
        }
        match outcome {
            Outcome::Allow => {
                let in_window = self.bursts.on_admit(a.key, &mut key.history, t, a.source);
                self.timeline.on_admit(t, in_period.unwrap_or(in_window));
            }
            Outcome::Delay(d) => self.delays.on_delay(d, legit, a.cost),
            Outcome::Reject { .. } => {
                self.bursts
                    .on_reject(a.key, &mut key.history, t, a.source, flags)
            }
        }
    }

    /// Starts loading what [`Recorder::on_decision`] will touch for `a`: called a request
    /// ahead, so the cache misses of a large keyspace overlap.
    #[inline]
    pub fn prefetch(&self, a: &Arrival) {
        self.entries.prefetch(a.key, a.client);
    }

    /// Whether the per-key tallies still judge the clients of a per-client intent.
    #[inline]
    fn judging_keys(&self) -> bool {
        self.judged.is_none() && self.intent_judge.is_none() && self.intent.per_client()
    }

    /// Clients stop mirroring keys (see [`PerKey`]): every tally keeps them from now on, and
    /// the per-client judge takes over from the per-key tallies.
    #[cold]
    #[inline(never)]
    fn keep_clients(&mut self) {
        if self.judging_keys() {
            let judged = Judged::from_keys(&self.accuracy, &self.bursts, self.entries.keys());
            self.judged = Some(judged);
        }
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

    /// A delayed request of `key` (its client `client`, from `source`, settling `units`) is
    /// released now and reaches the backend. Times passed here never decrease.
    #[inline]
    pub fn on_admit(
        &mut self,
        key: KeyId,
        client: ClientId,
        source: u16,
        time: Nanos,
        units: Cost,
    ) {
        self.bursts.judge_due(self.entries.keys(), time);
        let history = &mut self.entries.key(key).history;
        let mut in_window = self.bursts.on_admit(key, history, time, source);
        let id = judged_id(client, source, &self.routes, self.stride);
        if let Some(judged) = &mut self.judged {
            judged.on_admit(id, source, time);
        }
        if let Some(w) = &mut self.intent_judge {
            let id = if self.intent.per_client() { id } else { key };
            if let Some(n) = w.admit(id, source, time, u64::from(units)) {
                in_window = n;
            }
        }
        self.timeline.on_admit(time, in_window);
    }

    /// The sources have finished; `skipped_lines`: the malformed lines each skipped, in order.
    pub fn on_sources_finished(&mut self, skipped_lines: impl Iterator<Item = u64>) {
        self.skipped_lines = skipped_lines.collect();
    }

    /// How often [`Recorder::evict_idle`] should run: once per intent window of virtual time
    /// (once a day per calendar period).
    pub fn sweep_every(&self) -> Nanos {
        self.sweep_every
    }

    /// Frees what no longer matters at `now`; called every [`Recorder::sweep_every`].
    pub fn evict_idle(&mut self, now: Nanos) {
        let (keys, clients) = self.entries.split();
        self.bursts.sweep(keys, now);
        self.keys.sweep(clients, now);
        self.accuracy.sweep(keys, now);
        if let Some(judged) = &mut self.judged {
            judged.sweep(now);
        }
        if let Some(w) = &mut self.intent_judge {
            w.sweep(now);
        }
    }

    /// The row of the finished run: the recorder's figures with the contender's `parts`, the
    /// figures the row lacks filled as the scenario's features say
    /// ([`Features::fill`](super::Features::fill)).
    pub fn finish(
        mut self,
        traffic: &[SourceSpec],
        keys: &KeySpace,
        parts: RowParts,
    ) -> AlgorithmReport {
        let (params, (peak, end), gate) = (parts.params, parts.memory, parts.gate);
        #[cfg(test)]
        if !self.entries.clients_kept() {
            super::per_key::MIRRORED_AT_FINISH.set(super::per_key::MIRRORED_AT_FINISH.get() + 1);
        }
        let mut accuracy = self.accuracy.finish();
        let mut bursts = self.bursts.finish(self.entries.keys());
        let judged_clients =
            self.judged.is_some() || self.intent_judge.is_some() && self.intent.per_client();
        // Per real client; the rate error stays the estimate's, of its own key.
        let mean_rate_error = accuracy.mean_rate_error;
        if let Some(judged) = self.judged.take() {
            (accuracy, bursts) = judged.finish();
        }
        let mut units = None;
        if let Some(w) = self.intent_judge.take() {
            let part;
            (accuracy, bursts, part) = w.finish();
            // Per period in requests, the units are the requests.
            units = Some(part).filter(|_| !self.intent.unit.is_requests());
        }
        // Per period, no window of the estimate's kind judges it.
        accuracy.mean_rate_error = mean_rate_error.filter(|_| !self.intent.per_period());
        let (intent, stride) = (self.intent.clone(), self.stride);
        let worst_name = |id| match judged_clients {
            true => judged_name(&intent, stride, keys, id),
            false => keys.name(id).to_string(),
        };
        let costed = costed(traffic) || units.is_some();
        let (sources, total) = source_reports(
            &self.sources,
            &self.keys_per_client,
            (traffic, costed),
            &bursts.harm.by_source,
            units.as_ref(),
        );
        let k = Keys::finish(self.entries.key_stats(), self.entries.kept_client_stats());
        let headers = self.headers.finish();
        let retries = self.retries.finish();
        let delays = self.delays.finish();
        let (delay, legit_delay, abusive_delay) = (delays.all, delays.legit, delays.abusive);
        let timeline = self.timeline.finish();
        let admitted = total.admitted();
        let per_key = |bytes: usize| ratio(bytes as u64, peak.live_keys as u64);
        let mut report = AlgorithmReport {
            would_refuse: gate.would_refuse,
            refuse_status: parts.refuse_status,
            alerts: parts.alerts,
            algorithm: parts.name,
            limit: params.limit,
            window_ns: params.window,
            burst: params.burst,
            offered: total.offered,
            admitted,
            allowed: total.allowed,
            delayed: total.delayed,
            rejected: total.rejected,
            cost: self
                .sources
                .costs(costed, settles(traffic))
                .map(|(_, total)| match &units {
                    Some(u) => CostCounts {
                        over_intent: Some(u.total.over_intent),
                        needless: Some(u.total.needless),
                        ..total
                    },
                    None => total,
                }),
            retries: total.retries,
            abandoned: total.abandoned,
            attempts_per_request: ratio(total.offered, total.requests()),
            request_success_rate: ratio(admitted, total.requests()),
            clients_gave_up: k.clients_gave_up,
            peak_pending_retries: retries.peak_pending_retries,
            retry_backlog_drain_ns: retries.retry_backlog_drain_ns,
            burst_factor: bursts.max_window_admitted as f64 / bursts.worst_ceiling.max(1) as f64,
            max_window_admitted: bursts.max_window_admitted,
            worst_window_key: bursts.worst_window_key.map_or_else(String::new, worst_name),
            worst_window_end_ns: bursts.worst_window_end_ns,
            policy_violations: bursts.policy_violations,
            policy_violation_rate: ratio(bursts.policy_violations, admitted),
            clients_hurt: bursts.harm.by_source.iter().map(|h| h.clients_hurt).sum(),
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
            collateral_rejections: bursts.harm.collateral,
            collateral_clients: bursts.harm.collateral_clients,
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
            cost_delay: delays.per_unit,
            sources,
            timeseries: timeline.buckets,
            busiest_key: timeline.busiest_key,
            retries_by_source: timeline.retries_by_source,
            skipped_lines: self.skipped_lines,
            replay_ends: parts.replay_ends,
            legit_delay: legit_delay.clone(),
            abusive_delay,
            worst_window_admissions: bursts.worst_window_admissions,
            worst_window_units: units.map(|u| u.worst_units).unwrap_or_default(),
            intent_unit: self.intent.unit,
            bypassed: gate.bypassed,
            unlimited: gate.unlimited,
            warned: gate.warned,
            rules: gate.rules,
            deployment: gate.deployment,
            backtest: self.backtest.finish(keys),
        };
        parts.features.fill(&mut report);
        report
    }
}

/// The name of judged id `id`: its client's, and with `per_route` the entry's routes.
fn judged_name(intent: &Intent, stride: u32, keys: &KeySpace, id: u32) -> String {
    let (client, r) = (id / stride, id % stride);
    let name = keys.client_name(client);
    match r.checked_sub(1) {
        Some(r) => format!(
            "{name} on {}",
            intent.per_route[r as usize].routes.join("+")
        ),
        None => name.to_string(),
    }
}

/// Arrival `a` as the per-client judge sees it under `per_route`: its client's judged id for
/// its source's route entry (`routes`, [`source_routes`]).
#[inline]
fn routed(a: &Arrival, routes: &[u8], stride: u32) -> Arrival {
    Arrival {
        client: judged_id(a.client, a.source, routes, stride),
        ..*a
    }
}

/// The judged id of `client`'s requests from `source`: the client, or under `per_route` its
/// id for the source's route entry (`routes`, [`source_routes`]; `stride` ids per client).
#[inline]
fn judged_id(client: ClientId, source: u16, routes: &[u8], stride: u32) -> u32 {
    match routes.get(source as usize) {
        Some(&r) => client * stride + u32::from(r),
        None => client,
    }
}

/// Per source, the `per_route` entry its requests go to, plus one (0: none). Validation
/// admits `per_route` only where each source's requests all go to one entry (or none).
fn source_routes(intent: &Intent, sources: &[SourceSpec]) -> Vec<u8> {
    sources
        .iter()
        .map(|s| intent.route_of(&s.population.endpoint))
        .collect()
}

/// Every user of the sources with tiers and its tier, sorted by user (the first source to
/// name a user decides its tier).
fn users_tiers(sources: &[SourceSpec]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = Vec::new();
    for (index, s) in sources.iter().enumerate() {
        for j in 0..s.population.clients {
            if let Some(t) = s.population.tier(j) {
                let unspecified = std::net::IpAddr::from([0, 0, 0, 0]);
                let user = Identity::of_client(s, index, j, unspecified, |_| false).user;
                all.push((user, t.to_string()));
            }
        }
    }
    // Stable: of equal users, the first source's entry comes first and is kept.
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all.dedup_by(|b, a| a.0 == b.0);
    all
}

/// Each source's report, with its keys per client and its harm; and the totals.
fn source_reports(
    counts: &SourceCounts,
    keys_per_client: &KeysPerClient,
    (traffic, costed): (&[SourceSpec], bool),
    harm: &[SourceHarm],
    units: Option<&UnitsPart>,
) -> (Vec<SourceReport>, Counts) {
    let (mut sources, total) = counts.finish(traffic.iter().map(|s| (s.name.as_str(), s.role)));
    let costs = counts.costs(costed, settles(traffic)).map(|(each, _)| each);
    for (i, report) in sources.iter_mut().enumerate() {
        report.cost = costs.as_ref().map(|c| match units {
            Some(u) => {
                let mine = u.by_source.get(i).copied().unwrap_or_default();
                CostCounts {
                    over_intent: Some(mine.over_intent),
                    needless: Some(mine.needless),
                    ..c[i]
                }
            }
            None => c[i],
        });
        if let Some((max, mean)) = keys_per_client.of(i) {
            report.keys_per_client_max = Some(max);
            report.keys_per_client_mean = Some(mean);
        }
        let h = harm.get(i).copied().unwrap_or_default();
        report.policy_violations = h.policy_violations;
        report.needless_rejections = h.needless_rejections;
        report.collateral_rejections = h.collateral_rejections;
        report.clients_hurt = h.clients_hurt;
    }
    (sources, total)
}

/// Whether a generated source's requests may weigh more than 1.
fn costed(traffic: &[SourceSpec]) -> bool {
    traffic.iter().any(|s| s.has_costs())
}

fn settles(traffic: &[SourceSpec]) -> bool {
    traffic.iter().any(|s| s.settles())
}

/// The judge of an intent in units (rolling) or per calendar period.
enum IntentJudge {
    Rolling(Weighed),
    Periods(Periods),
}

impl IntentJudge {
    /// The judge `intent` needs over `bounds`, with room for `(ids, keys)`.
    fn new(intent: &Intent, bounds: Bounds, epoch_ns: u64, (ids, keys): (usize, usize)) -> Self {
        match intent.per_period() {
            true => IntentJudge::Periods(Periods::with_room(bounds, epoch_ns, ids, keys)),
            false => IntentJudge::Rolling(Weighed::with_room(bounds, ids, keys)),
        }
    }

    #[inline]
    fn key_within(&mut self, key: u32, t: Nanos, units: u64) -> bool {
        match self {
            IntentJudge::Rolling(w) => w.key_within(key, t, units),
            IntentJudge::Periods(p) => p.key_within(key, t, units),
        }
    }

    /// A decision; per period, when admitted now, the units of the id's period.
    #[inline]
    fn on_decision(&mut self, id: u32, t: Nanos, units: u64, d: Decided) -> Option<u64> {
        match self {
            IntentJudge::Rolling(w) => {
                w.on_decision(id, t, units, d);
                None
            }
            IntentJudge::Periods(p) => p.on_decision(id, t, units, d),
        }
    }

    /// A delayed request reaches the backend; per period, the units of the id's period.
    #[inline]
    fn admit(&mut self, id: u32, source: u16, t: Nanos, units: u64) -> Option<u64> {
        match self {
            IntentJudge::Rolling(w) => {
                w.admit(id, source, t, units);
                None
            }
            IntentJudge::Periods(p) => Some(p.admit(id, source, t, units)),
        }
    }

    fn sweep(&mut self, now: Nanos) {
        match self {
            IntentJudge::Rolling(w) => w.sweep(now),
            IntentJudge::Periods(p) => p.sweep(now),
        }
    }

    fn finish(
        self,
    ) -> (
        super::accuracy::AccuracyPart,
        super::burst::BurstsPart,
        UnitsPart,
    ) {
        match self {
            IntentJudge::Rolling(w) => w.finish(),
            IntentJudge::Periods(p) => p.finish(),
        }
    }
}
