//! The observer that turns one algorithm's decisions into figures.
//!
//! Accuracy is measured against the policy's intent, "at most L requests per key in any rolling
//! window (t−W, t]", from the algorithm's own admitted history: for every key the recorder keeps
//! the admission times still inside the window, so each admission knows exactly how many
//! admissions of its key share its window. Delayed requests are admitted when they are released,
//! since that is when they reach the backend.

use super::{AlgorithmReport, Counts, DelayStats, SourceReport, TimeBucket};
use crate::algorithms::{Decision, KeyId, MemoryUsage, Outcome, Params};
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::{Arrival, KeySpace};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

pub struct Recorder {
    limit: u64,
    window: Nanos,
    bucket: Nanos,
    /// Admission times of each key within the last window, oldest first.
    recent: Vec<VecDeque<Nanos>>,
    sources: Vec<Counts>,
    admitted_by_source: Vec<u64>,
    violations: u64,
    worst: Option<Worst>,
    delays: Histogram<u64>,
    delay_sum: u128,
    delay_max: Nanos,
    buckets: Vec<TimeBucket>,
    last_event: Nanos,
}

/// The rolling window holding the most admissions of one key.
#[derive(Debug, Clone, Copy)]
struct Worst {
    admitted: u64,
    key: KeyId,
    /// The admission that completed this window: the window is (end − W, end].
    end: Nanos,
}

impl Recorder {
    pub fn new(scenario: &Scenario) -> Self {
        Recorder {
            limit: scenario.policy.limit,
            window: scenario.policy.window,
            bucket: scenario.bucket,
            recent: Vec::new(),
            sources: vec![Counts::default(); scenario.traffic.len()],
            admitted_by_source: vec![0; scenario.traffic.len()],
            violations: 0,
            worst: None,
            delays: Histogram::new(3).expect("3 significant figures is valid"),
            delay_sum: 0,
            delay_max: 0,
            buckets: Vec::new(),
            last_event: 0,
        }
    }

    #[inline]
    fn bucket_mut(&mut self, time: Nanos) -> &mut TimeBucket {
        let i = (time / self.bucket) as usize;
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, TimeBucket::default());
        }
        &mut self.buckets[i]
    }

    /// One decision on an arriving request.
    #[inline]
    pub fn on_decision(&mut self, arrival: &Arrival, decision: &Decision) {
        let counts = &mut self.sources[arrival.source as usize];
        counts.offered += 1;
        let bucket = self.bucket_mut(arrival.time);
        bucket.offered += 1;
        match decision.outcome {
            Outcome::Allow => {
                self.sources[arrival.source as usize].allowed += 1;
                self.on_admit(arrival.key, arrival.source, arrival.time);
            }
            Outcome::Delay(d) => {
                bucket.delayed += 1;
                self.sources[arrival.source as usize].delayed += 1;
                self.delays.saturating_record(d);
                self.delay_sum += d as u128;
                self.delay_max = self.delay_max.max(d);
            }
            Outcome::Reject { .. } => {
                bucket.rejected += 1;
                self.sources[arrival.source as usize].rejected += 1;
            }
        }
        self.last_event = self.last_event.max(arrival.time);
    }

    /// A request reaches the backend: admitted now, or a delayed one released now.
    /// Times passed here never decrease.
    #[inline]
    pub fn on_admit(&mut self, key: KeyId, source: u16, time: Nanos) {
        self.admitted_by_source[source as usize] += 1;
        self.bucket_mut(time).admitted += 1;
        self.last_event = self.last_event.max(time);
        let k = key as usize;
        if k >= self.recent.len() {
            self.recent.resize_with(k + 1, VecDeque::new);
        }
        let window = self.window;
        let recent = &mut self.recent[k];
        while recent.front().is_some_and(|&t| t + window <= time) {
            recent.pop_front();
        }
        recent.push_back(time);
        let in_window = recent.len() as u64;
        if in_window > self.limit {
            self.violations += 1;
        }
        if self.worst.is_none_or(|w| in_window > w.admitted) {
            self.worst = Some(Worst {
                admitted: in_window,
                key,
                end: time,
            });
        }
    }

    /// Frees the history of keys with no admission in the window ending at `now`.
    pub fn evict_idle(&mut self, now: Nanos) {
        for recent in &mut self.recent {
            if recent.back().is_some_and(|&t| t + self.window <= now) {
                *recent = VecDeque::new();
            }
        }
    }

    /// The figures of the finished run.
    pub fn finish(
        self,
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
            .zip(&self.admitted_by_source)
            .map(|((spec, counts), &released)| {
                total.add(counts);
                debug_assert_eq!(released, counts.allowed + counts.delayed);
                SourceReport::new(spec.name.clone(), spec.role, *counts)
            })
            .collect();
        let worst = self.worst.unwrap_or(Worst {
            admitted: 0,
            key: 0,
            end: 0,
        });
        let admitted = total.allowed + total.delayed;
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
            keys_seen: keys.len() as u64,
            peak_live_keys: peak.live_keys as u64,
            final_live_keys: end.live_keys as u64,
            peak_state_bytes: peak.state_bytes as u64,
            last_event_ns: self.last_event,
            delay: DelayStats::from_histogram(&self.delays, self.delay_sum, self.delay_max),
            roles: super::RoleReport::from_sources(&sources),
            sources,
            timeseries: self.buckets,
        }
    }
}

/// `num / den`, or 0 when nothing was counted.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}
