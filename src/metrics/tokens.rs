//! What a rule counting an LLM's tokens let through, in tokens (docs/llm.md "Figures"): the
//! tokens its admitted requests really used, the most of them one key used in any rolling
//! window of the rule's against its limit (the overshoot: concurrency under check-then-charge,
//! a stream that ends past the budget), and the refusals an exact charge would have spared
//! (reservations never used).

use super::range_max::RangeMax;
use crate::algorithms::KeyId;
use crate::time::Nanos;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// A rule's token figures (`rules[].tokens` in `summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RuleTokens {
    /// What the rule counts: `tokens`, `input_tokens` or `output_tokens`.
    pub unit: String,
    /// When it charges them: `reserve`, `reconcile` or `after`.
    pub accounting: String,
    /// Tokens the rule charged when deciding (its estimates; 0 for `after`).
    pub charged_up_front: u64,
    /// Tokens the rule charged when responses ended (`after`, and `reconcile` where a
    /// response used more than its estimate).
    pub charged_after: u64,
    /// Tokens the rule gave back when responses ended (`reconcile`: estimates not used).
    pub given_back: u64,
    /// Tokens the contender's admitted requests used, as this rule counts them (the yardstick
    /// of the figures below; each credited at its admission).
    pub used: u64,
    /// The most tokens one rule key's admitted requests used in any rolling window of the
    /// rule's window (`(t − W, t]`).
    pub max_window_used: u64,
    /// `max_window_used / limit`: above 1, the key used more than its budget in a window.
    pub overshoot: f64,
    /// The rule key of that window (`None` when nothing was admitted).
    pub worst_key: Option<String>,
    /// The end of that window, in ns (`None` when nothing was admitted).
    pub worst_window_end_ns: Option<Nanos>,
    /// Refusals by this rule that the same rule, charging each request what it used up front
    /// (an exact charge), would have admitted: refused for reservations never used. `None`
    /// for `after`, which reserves nothing.
    pub refused_for_reservations: Option<u64>,
    /// The same per source, for sources with requests the rule applied to.
    pub sources: Vec<SourceTokens>,
    /// Per time bucket of the run, the most tokens one rule key's admitted requests used in
    /// its rolling window at any instant of the bucket (the budget-use chart; not
    /// serialized).
    #[serde(skip)]
    pub busiest: Vec<u64>,
}

/// One source's tokens under one rule (`rules[].tokens.sources[]`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SourceTokens {
    /// The source's name.
    pub source: String,
    /// Tokens its admitted requests used.
    pub used: u64,
    /// The most tokens the rule key of one of its admitted requests held in its rolling
    /// window once that request was counted (the key's whole use, other sources' included).
    pub max_window_used: u64,
    /// `max_window_used / limit`: the tenant's overshoot.
    pub overshoot: f64,
    /// Its requests the rule refused.
    pub refused: u64,
    /// Of those, the ones an exact charge would have admitted (`None` for `after`).
    pub refused_for_reservations: Option<u64>,
}

/// One key's admitted usage still inside a window, its total, and since when the total has
/// held.
#[derive(Default)]
struct KeyUsage {
    entries: VecDeque<(Nanos, u64)>,
    total: u64,
    since: Nanos,
}

impl KeyUsage {
    /// Lets the usage that leaves the window by `t` go, noting each total held until then.
    fn advance(&mut self, t: Nanos, window: Nanos, held: &mut RangeMax) {
        while let Some(&(at, used)) = self.entries.front() {
            let leaves = at.saturating_add(window);
            if leaves > t {
                break;
            }
            held.hold(self.since, leaves, self.total);
            self.entries.pop_front();
            self.total -= used;
            self.since = leaves;
        }
    }
}

#[derive(Default, Clone, Copy)]
struct PerSource {
    applied: bool,
    used: u64,
    max_window: u64,
    refused: u64,
    spared: u64,
}

/// The running token tally of one rule.
pub struct TokenTally {
    window: Nanos,
    reserves: bool,
    keys: FxHashMap<KeyId, KeyUsage>,
    charged_up_front: u64,
    charged_after: u64,
    given_back: u64,
    used: u64,
    worst: Option<(u64, KeyId, Nanos)>,
    sources: Vec<PerSource>,
    /// What each key held, per time bucket of the run.
    held: RangeMax,
}

impl TokenTally {
    /// A tally for a rule of `window` over `sources` sources; `reserves` when the rule
    /// charges an estimate up front (its refusals are judged against an exact charge).
    /// `(duration, bucket)` are the run's, for the use per time bucket.
    pub fn new(
        window: Nanos,
        reserves: bool,
        sources: usize,
        (duration, bucket): (Nanos, Nanos),
    ) -> Self {
        TokenTally {
            window,
            reserves,
            keys: FxHashMap::default(),
            charged_up_front: 0,
            charged_after: 0,
            given_back: 0,
            used: 0,
            worst: None,
            sources: vec![PerSource::default(); sources],
            held: RangeMax::new(duration, bucket),
        }
    }

    /// The contender admitted a request of `source` on rule key `key` at `t`, the rule
    /// charging `up_front` and the request using `used`.
    pub fn admit(&mut self, key: KeyId, t: Nanos, source: u16, up_front: u64, used: u64) {
        self.charged_up_front += up_front;
        self.used += used;
        let s = &mut self.sources[usize::from(source)];
        s.applied = true;
        s.used += used;
        let k = self.keys.entry(key).or_default();
        k.advance(t, self.window, &mut self.held);
        self.held.hold(k.since, t, k.total);
        k.entries.push_back((t, used));
        k.total += used;
        k.since = t;
        s.max_window = s.max_window.max(k.total);
        if self.worst.is_none_or(|w| k.total > w.0) {
            self.worst = Some((k.total, key, t));
        }
    }

    /// The contender refused a request of `source` the rule applied to; `by_this_rule` if
    /// this rule refused it, `spared` if an exact charge would have admitted it.
    pub fn reject(&mut self, source: u16, by_this_rule: bool, spared: bool) {
        let s = &mut self.sources[usize::from(source)];
        s.applied = true;
        if by_this_rule {
            s.refused += 1;
            s.spared += spared as u64;
        }
    }

    /// The end of a response settled `units`: charged (`charge`) or given back.
    pub fn settled(&mut self, units: u64, charge: bool) {
        if charge {
            self.charged_after += units;
        } else {
            self.given_back += units;
        }
    }

    /// Forgets the keys whose usage has all left the window by `now`.
    pub fn sweep(&mut self, now: Nanos) {
        let (w, held) = (self.window, &mut self.held);
        self.keys.retain(|_, k| {
            k.advance(now, w, held);
            !k.entries.is_empty()
        });
    }

    /// The figures, for a rule counting `unit` by `accounting` with `limit` tokens a window;
    /// `key_name` names rule keys, `source_names` the sources.
    pub fn finish(
        mut self,
        (unit, accounting): (&str, &str),
        limit: u64,
        key_name: impl Fn(KeyId) -> String,
        source_names: &[String],
    ) -> RuleTokens {
        for k in self.keys.values_mut() {
            k.advance(Nanos::MAX, self.window, &mut self.held);
        }
        let spared = |n: u64| self.reserves.then_some(n);
        let max = self.worst.map_or(0, |w| w.0);
        RuleTokens {
            unit: unit.to_string(),
            accounting: accounting.to_string(),
            charged_up_front: self.charged_up_front,
            charged_after: self.charged_after,
            given_back: self.given_back,
            used: self.used,
            max_window_used: max,
            overshoot: max as f64 / limit as f64,
            worst_key: self.worst.map(|w| key_name(w.1)),
            worst_window_end_ns: self.worst.map(|w| w.2),
            refused_for_reservations: spared(self.sources.iter().map(|s| s.spared).sum()),
            sources: self
                .sources
                .iter()
                .zip(source_names)
                .filter(|(s, _)| s.applied)
                .map(|(s, name)| SourceTokens {
                    source: name.clone(),
                    used: s.used,
                    max_window_used: s.max_window,
                    overshoot: s.max_window as f64 / limit as f64,
                    refused: s.refused,
                    refused_for_reservations: spared(s.spared),
                })
                .collect(),
            busiest: self.held.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_window_is_the_most_one_key_used_in_a_rolling_window() {
        // 60 s windows: key 1 uses 50 at 0, 70 at 30 s (120 in (−30, 30]), 40 at 60 s (the
        // first has left: 110), 10 at 89.9 s (120 again, not more). Key 2 uses 100 once.
        let mut t = TokenTally::new(60, false, 1, (100, 30));
        for (key, time, used) in [
            (1, 0, 50),
            (1, 30, 70),
            (2, 31, 100),
            (1, 60, 40),
            (1, 89, 10),
        ] {
            t.admit(key, time, 0, 0, used);
        }
        t.reject(0, true, true);
        t.settled(30, true);
        t.settled(5, false);
        let r = t.finish(("tokens", "after"), 100, |k| format!("k{k}"), &["s".into()]);
        assert_eq!((r.used, r.max_window_used, r.overshoot), (270, 120, 1.2));
        assert_eq!(
            (r.worst_key.as_deref(), r.worst_window_end_ns),
            (Some("k1"), Some(30))
        );
        assert_eq!((r.charged_after, r.given_back), (30, 5));
        // `after` reserves nothing: no refusal is blamed on reservations.
        assert_eq!(r.refused_for_reservations, None);
        assert_eq!(r.sources[0].refused, 1);
        assert_eq!(
            (r.sources[0].max_window_used, r.sources[0].overshoot),
            (120, 1.2)
        );
        // Per 30 ns bucket, the most one key held at any instant of it: 50 in [0, 30); 120
        // from 30 (key 1) and 100 from 31 (key 2); 120 (key 1, 110 from 60, 120 from 89);
        // 120 until 90, then 50 and 10 until 149 (key 1), in [90, 120) and [120, 150); the
        // last entry leaves at 149.
        assert_eq!(r.busiest, [50, 120, 120, 100, 10]);
    }

    proptest::proptest! {
        /// Per bucket, the tally's most is the most any key held at the bucket's start or at
        /// an admission in it (a key's usage only rises at admissions), sweeps or not.
        #[test]
        fn each_bucket_holds_the_most_any_key_used_during_it(
            gaps in proptest::collection::vec((0u64..40, 0u32..3, 0u64..50, proptest::bool::ANY), 1..60),
            window in 1u64..80,
            bucket in 1u64..30,
        ) {
            let mut tally = TokenTally::new(window, false, 1, (300, bucket));
            let mut admitted = Vec::new();
            let mut t = 0;
            for (gap, key, used, sweep) in gaps {
                t += gap;
                if sweep {
                    tally.sweep(t);
                }
                tally.admit(key, t, 0, 0, used);
                admitted.push((key, t, used));
            }
            let last = tally.held.buckets() - 1;
            let r = tally.finish(("tokens", "after"), 1, |k| k.to_string(), &["s".into()]);
            let usage = |key: u32, at: u64| -> u64 {
                admitted
                    .iter()
                    .filter(|&&(k, a, _)| k == key && a <= at && at < a + window)
                    .map(|e| e.2)
                    .sum()
            };
            let bucket_of = |at: u64| ((at / bucket) as usize).min(last);
            let mut expected = vec![0u64; last + 1];
            for (j, most) in expected.iter_mut().enumerate() {
                let start = j as u64 * bucket;
                for key in 0..3 {
                    let instants = std::iter::once(start).chain(
                        admitted.iter().filter(|e| bucket_of(e.1) == j).map(|e| e.1),
                    );
                    for at in instants {
                        *most = (*most).max(usage(key, at));
                    }
                }
            }
            while expected.last() == Some(&0) {
                expected.pop();
            }
            proptest::prop_assert_eq!(r.busiest, expected);
        }
    }
}
