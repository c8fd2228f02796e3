//! Alert rules evaluated exactly on the virtual timeline.
//!
//! A decision at time `t` falls in evaluation interval `ceil(t / every)`: the evaluation at
//! `k·every` sees every decision with `t ≤ k·every`, and its window `(k·every − window, k·every]`
//! is the union of the last `window / every` intervals, so each label value keeps one small
//! count per interval and the window's value is exact. Like Prometheus, a rule whose condition
//! holds becomes pending, fires once it has held at every evaluation for `for`, and resolves at
//! the first evaluation where it no longer holds.

use crate::scenario::{AlertSpec, Measure};
use crate::time::Nanos;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// One firing of one label value: fired at an evaluation instant, resolved at a later one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Episode {
    /// The label value (empty for `by = "none"` or `"contender"`).
    pub label: String,
    /// The evaluation instant it fired at (virtual ns, a multiple of the rule's `every`).
    pub fired_ns: Nanos,
    /// `None` when still firing at the end of the run.
    pub resolved_ns: Option<Nanos>,
}

/// The state of one label value.
#[derive(Debug, Default)]
struct Group {
    /// `(interval, requests, refusals)`, oldest first, within the window.
    buckets: VecDeque<(u64, u64, u64)>,
    pending_since: Option<Nanos>,
    /// Index in `episodes` while firing.
    firing: Option<usize>,
    /// Sources whose requests carried this label value since the group was last idle.
    sources: Vec<u16>,
}

/// One rule's evaluation for one contender.
#[derive(Debug)]
pub struct Evaluator {
    /// The `[[alert]]` rule evaluated.
    pub spec: AlertSpec,
    /// The next evaluation instant, as a multiple of `every`.
    next: u64,
    groups: FxHashMap<Box<str>, Group>,
    /// Every firing so far, of any label value, in firing order.
    pub episodes: Vec<Episode>,
    /// Per source: the first time an alert fired about it.
    pub detected: Vec<Option<Nanos>>,
}

impl Evaluator {
    /// An evaluation of `spec` with nothing recorded, for a scenario of `sources` traffic
    /// sources.
    pub fn new(spec: AlertSpec, sources: usize) -> Self {
        Evaluator {
            spec,
            next: 0,
            groups: FxHashMap::default(),
            episodes: Vec::new(),
            detected: vec![None; sources],
        }
    }

    /// Counts one decision of label value `label`, after evaluating every instant before it.
    pub fn record(&mut self, time: Nanos, label: &str, source: u16, refused: bool) {
        let interval = time.div_ceil(self.spec.every);
        self.evaluate_before(interval);
        let group = match self.groups.get_mut(label) {
            Some(g) => g,
            None => self.groups.entry(label.into()).or_default(),
        };
        match group.buckets.back_mut() {
            Some(b) if b.0 == interval => {
                b.1 += 1;
                b.2 += u64::from(refused);
            }
            _ => group.buckets.push_back((interval, 1, u64::from(refused))),
        }
        if !group.sources.contains(&source) {
            group.sources.push(source);
        }
    }

    /// Evaluates every instant up to and including `end` (rounded up to an instant).
    pub fn finish(&mut self, end: Nanos) {
        let last = end.div_ceil(self.spec.every);
        self.evaluate_before(last.saturating_add(1));
    }

    /// Evaluates the instants `next..until`. Instants where no label value has state are
    /// skipped: nothing can change there.
    fn evaluate_before(&mut self, until: u64) {
        while self.next < until {
            if self.groups.is_empty() {
                self.next = until;
                break;
            }
            self.evaluate(self.next);
            self.next += 1;
        }
    }

    fn evaluate(&mut self, k: u64) {
        let spec = &self.spec;
        let now = k.saturating_mul(spec.every);
        let intervals = spec.window / spec.every;
        let episodes = &mut self.episodes;
        let detected = &mut self.detected;
        self.groups.retain(|label, g| {
            while g.buckets.front().is_some_and(|b| b.0 + intervals <= k) {
                g.buckets.pop_front();
            }
            let (requests, refusals) = g
                .buckets
                .iter()
                .fold((0, 0), |(r, f), b| (r + b.1, f + b.2));
            let holds = match spec.measure {
                Measure::Refusals => refusals as f64 >= spec.threshold,
                Measure::Requests => requests as f64 >= spec.threshold,
                // Exact comparison without division: refusals/requests ≥ threshold.
                Measure::RefusedShare => {
                    requests > 0 && refusals as f64 >= spec.threshold * requests as f64
                }
            };
            if holds {
                let since = *g.pending_since.get_or_insert(now);
                if g.firing.is_none() && now - since >= spec.for_ {
                    g.firing = Some(episodes.len());
                    episodes.push(Episode {
                        label: label.to_string(),
                        fired_ns: now,
                        resolved_ns: None,
                    });
                    for &s in &g.sources {
                        detected[s as usize].get_or_insert(now);
                    }
                }
            } else {
                g.pending_since = None;
                if let Some(i) = g.firing.take() {
                    episodes[i].resolved_ns = Some(now);
                }
            }
            // An idle group (empty window, not pending) holds nothing worth keeping.
            !(g.buckets.is_empty() && g.pending_since.is_none() && g.firing.is_none())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GroupBy;

    const S: Nanos = 1_000_000_000;

    fn rule(measure: Measure, threshold: f64, window: Nanos, for_: Nanos) -> AlertSpec {
        AlertSpec {
            name: "r".into(),
            measure,
            by: GroupBy::Ip,
            threshold,
            window,
            for_,
            every: 15 * S,
        }
    }

    /// 100 refusals from one IP at 20 s..29.9 s: the evaluation at 30 s sees all 100 in
    /// `(−30 s, 30 s]` and fires; at 90 s the window `(30 s, 90 s]` is empty and it resolves.
    #[test]
    fn fires_at_the_first_instant_the_window_holds_the_threshold_and_resolves() {
        let mut e = Evaluator::new(rule(Measure::Refusals, 100.0, 60 * S, 0), 2);
        for i in 0..100 {
            e.record(20 * S + i * S / 10, "1.2.3.4", 1, true);
        }
        // Another address stays under the threshold: 99 refusals.
        for i in 0..99 {
            e.record(21 * S + i * S / 10, "5.6.7.8", 0, true);
        }
        e.finish(180 * S);
        assert_eq!(
            e.episodes,
            vec![Episode {
                label: "1.2.3.4".into(),
                fired_ns: 30 * S,
                resolved_ns: Some(90 * S),
            }]
        );
        assert_eq!(e.detected, vec![None, Some(30 * S)]);
    }

    /// A decision exactly at an evaluation instant counts in that evaluation.
    #[test]
    fn a_decision_at_an_instant_counts_there() {
        let mut e = Evaluator::new(rule(Measure::Requests, 2.0, 15 * S, 0), 1);
        e.record(0, "a", 0, false);
        e.record(15 * S, "a", 0, false);
        e.finish(60 * S);
        // Window (0, 15 s] holds only the one at 15 s; (−15 s, 0] only the one at 0.
        assert!(e.episodes.is_empty());
        let mut e = Evaluator::new(rule(Measure::Requests, 2.0, 15 * S, 0), 1);
        e.record(S, "a", 0, false);
        e.record(15 * S, "a", 0, false);
        e.finish(60 * S);
        assert_eq!(e.episodes[0].fired_ns, 15 * S);
        assert_eq!(e.episodes[0].resolved_ns, Some(30 * S));
    }

    /// `for = 30s`: the condition must hold at 15, 30 and 45 s before firing at 45 s; a gap
    /// resets it.
    #[test]
    fn for_holds_the_alert_pending() {
        let spec = rule(Measure::RefusedShare, 0.5, 15 * S, 30 * S);
        let mut e = Evaluator::new(spec.clone(), 1);
        // One refused request in each of (0,15], (15,30], (30,45], (45,60]: share 1.0.
        for k in 0..4 {
            e.record(k * 15 * S + S, "x", 0, true);
        }
        e.finish(120 * S);
        assert_eq!(
            e.episodes,
            vec![Episode {
                label: "x".into(),
                fired_ns: 45 * S,
                resolved_ns: Some(75 * S),
            }]
        );
        // Held at 15 and 30 s, then a half-admitted interval (share 1/3 < 0.5) at 45 s: never
        // held for 30 s.
        let mut e = Evaluator::new(spec, 1);
        e.record(S, "x", 0, true);
        e.record(16 * S, "x", 0, true);
        e.record(31 * S, "x", 0, true);
        e.record(32 * S, "x", 0, false);
        e.record(33 * S, "x", 0, false);
        e.record(46 * S, "x", 0, true);
        e.record(61 * S, "x", 0, true);
        e.finish(120 * S);
        assert!(e.episodes.is_empty(), "{:?}", e.episodes);
    }

    /// Still firing when the run ends: no resolution time.
    #[test]
    fn firing_at_the_end_has_no_resolution() {
        let mut e = Evaluator::new(rule(Measure::Refusals, 1.0, 60 * S, 0), 1);
        e.record(59 * S, "a", 0, true);
        e.finish(60 * S);
        assert_eq!(e.episodes[0].fired_ns, 60 * S);
        assert_eq!(e.episodes[0].resolved_ns, None);
    }
}
