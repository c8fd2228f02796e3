//! A calendar rule judged per calendar period (a usage plan's quota), per rule key: what a
//! product manager asks of a quota. Which keys ran out, on which day of the period, and for
//! how much of the period they were then refused.
//!
//! A rolling window as long as a month would keep every admission of the month per key; a
//! period's figures need only its count. So each key holds its current period's bounds and
//! counts (memory per key does not grow with the period's length). A refusal by the rule is
//! needless when admitting it alone would have kept its period within the limit: when the
//! period ends with fewer admissions than the limit. The period's count is in requests, like
//! the rule's other figures.

use super::range_max::RangeMax;
use crate::algorithms::KeyId;
use crate::calendar::Calendar;
use crate::time::Nanos;
use serde::Serialize;

/// The run-outs `summary.json` lists; `ran_out` counts them all.
const LISTED: usize = 100;

/// A calendar rule's quota figures (`rules[].quota` in `summary.json`; docs/metrics.md).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RuleQuota {
    /// The rule's calendar: "month in America/Sao_Paulo", "week from sunday in UTC".
    pub calendar: String,
    /// Periods of some rule key with a request the rule applied to (a key's period counts
    /// once).
    pub key_periods: u64,
    /// Of those, the periods in which the rule refused the key: its quota ran out.
    pub ran_out: u64,
    /// Distinct rule keys whose quota ran out at least once.
    pub keys_ran_out: u64,
    /// Each run-out in time order (the first 100; `ran_out` counts them all).
    pub run_outs: Vec<RunOut>,
    /// Per time bucket of the run, the most requests one rule key had counted in its period
    /// at any instant of the bucket (the quota-use chart; not serialized).
    #[serde(skip)]
    pub busiest: Vec<u64>,
}

/// One rule key's quota running out in one period (`rules[].quota.run_outs[]`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunOut {
    /// The rule key.
    pub key: String,
    /// The period, on the calendar's clocks: its month (`2026-02`), year, or first day.
    pub period: String,
    /// The day of the period the rule first refused the key on (1: the period's first day).
    pub day: u32,
    /// When the rule first refused the key in the period, in ns of virtual time.
    pub at_ns: Nanos,
    /// The share of the period from that refusal to the period's end: how long the key was
    /// out of quota (a quota does not come back before its period ends).
    pub refused_share: f64,
    /// Requests the rule refused the key in the period.
    pub refused: u64,
    /// Requests admitted to the key in the period (its count when the period ended, or when
    /// the run did).
    pub admitted: u64,
}

/// One key's current period.
#[derive(Debug, Default, Clone, Copy)]
struct KeyPeriod {
    /// Bounds in ns since the Unix epoch; `end == 0` before the key's first request.
    start: u64,
    end: u64,
    admitted: u64,
    refused: u64,
    /// Index in `run_outs` plus one; 0 while the quota has not run out this period.
    run_out: u32,
}

/// A key's run-out, until the figures name its key and period.
#[derive(Debug, Clone, Copy)]
struct Noted {
    key: KeyId,
    start: u64,
    end: u64,
    at: Nanos,
    refused: u64,
    admitted: u64,
}

/// The running quota tally of one calendar rule.
pub struct QuotaTally {
    calendar: &'static Calendar,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
    limit: u64,
    keys: Vec<KeyPeriod>,
    key_periods: u64,
    needless: u64,
    run_outs: Vec<Noted>,
    held: RangeMax,
    duration: Nanos,
}

impl QuotaTally {
    /// A tally of `limit` requests per period of `calendar`, virtual time 0 at `epoch_ns`;
    /// `(duration, bucket)` are the run's, for the use per time bucket.
    pub fn new(
        calendar: &'static Calendar,
        epoch_ns: u64,
        limit: u64,
        (duration, bucket): (Nanos, Nanos),
    ) -> Self {
        QuotaTally {
            calendar,
            epoch_ns,
            limit,
            keys: Vec::new(),
            key_periods: 0,
            needless: 0,
            run_outs: Vec::new(),
            held: RangeMax::new(duration, bucket),
            duration,
        }
    }

    /// The key's period at `t`, settling the one it leaves.
    fn period(&mut self, key: KeyId, t: Nanos) -> &mut KeyPeriod {
        let i = key as usize;
        if i >= self.keys.len() {
            self.keys.resize(i + 1, KeyPeriod::default());
        }
        let at = self.epoch_ns.saturating_add(t);
        if at >= self.keys[i].end {
            let old = self.keys[i];
            self.settle(old);
            let (start, end) = self.calendar.bounds_cached(at);
            self.keys[i] = KeyPeriod {
                start,
                end,
                ..KeyPeriod::default()
            };
            self.key_periods += 1;
        }
        &mut self.keys[i]
    }

    /// A period over: its refusals were needless if it ended under the limit.
    fn settle(&mut self, p: KeyPeriod) {
        if p.end > 0 && p.admitted < self.limit {
            self.needless += p.refused;
        }
        if p.run_out > 0 {
            self.run_outs[p.run_out as usize - 1].admitted = p.admitted;
        }
    }

    /// The contender admitted a request of `key` at `t`; returns the key's count in its period
    /// (the rule's tally takes its violations and its most from it).
    pub fn admit(&mut self, key: KeyId, t: Nanos) -> u64 {
        let epoch = self.epoch_ns;
        let p = self.period(key, t);
        p.admitted += 1;
        let (n, end) = (p.admitted, p.end);
        // The count holds until the period ends (the run's end at the latest).
        let until = end
            .saturating_sub(epoch)
            .min(self.duration.saturating_add(1));
        self.held.hold(t, until.max(t + 1), n);
        n
    }

    /// The contender refused a request of `key` at `t` the rule applied to; `by_this_rule` if
    /// this rule was the refusing one.
    pub fn reject(&mut self, key: KeyId, t: Nanos, by_this_rule: bool) {
        let next = self.run_outs.len() as u32 + 1;
        let p = self.period(key, t);
        if !by_this_rule {
            return;
        }
        p.refused += 1;
        let (start, end, first) = (p.start, p.end, p.run_out == 0);
        if first {
            p.run_out = next;
            self.run_outs.push(Noted {
                key,
                start,
                end,
                at: t,
                refused: 0,
                admitted: 0,
            });
        }
        let i = self.keys[key as usize].run_out as usize - 1;
        self.run_outs[i].refused += 1;
    }

    /// The needless refusals, with every period settled.
    pub fn finish_needless(&mut self) -> u64 {
        for i in 0..self.keys.len() {
            let p = self.keys[i];
            self.settle(p);
            self.keys[i].end = 0;
        }
        self.needless
    }

    /// The figures, keys named by `key_name`; after [`QuotaTally::finish_needless`].
    pub fn report(&self, key_name: impl Fn(KeyId) -> String) -> RuleQuota {
        let mut keys: Vec<KeyId> = self.run_outs.iter().map(|r| r.key).collect();
        keys.sort_unstable();
        keys.dedup();
        let c = self.calendar;
        RuleQuota {
            calendar: c.to_string(),
            key_periods: self.key_periods,
            ran_out: self.run_outs.len() as u64,
            keys_ran_out: keys.len() as u64,
            run_outs: (self.run_outs.iter().take(LISTED))
                .map(|r| {
                    let at = self.epoch_ns.saturating_add(r.at);
                    RunOut {
                        key: key_name(r.key),
                        period: c.label(r.start),
                        day: c.day_of_period(r.start, at),
                        at_ns: r.at,
                        refused_share: (r.end - at) as f64 / (r.end - r.start) as f64,
                        refused: r.refused,
                        admitted: r.admitted,
                    }
                })
                .collect(),
            busiest: self.held.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Period;
    use crate::time::{DEFAULT_START, NANOS_PER_DAY as D, NANOS_PER_HOUR as H};

    /// 3 a day in São Paulo (days start at 03:00 UTC: virtual 3 h, 27 h, ...), buckets of 12 h
    /// over 3 days.
    fn tally() -> QuotaTally {
        let c = Calendar::new(Period::Day, "America/Sao_Paulo")
            .unwrap()
            .intern();
        QuotaTally::new(c, DEFAULT_START, 3, (3 * D, 12 * H))
    }

    #[test]
    fn run_outs_name_the_day_and_the_share_of_the_period_refused() {
        let mut q = tally();
        // Key 0, the day from 3 h: three admitted, refused at 9 h (a quarter into the day).
        let mut counts: Vec<u64> = [3 * H, 4 * H, 5 * H].map(|t| q.admit(0, t)).to_vec();
        q.reject(0, 9 * H, true);
        q.reject(0, 10 * H, true);
        // Another rule's refusal does not run the quota out.
        q.reject(1, 10 * H, false);
        // Key 1 in the next day: two admitted, one refused by this rule: needless.
        counts.push(q.admit(1, 28 * H));
        counts.push(q.admit(1, 29 * H));
        q.reject(1, 30 * H, true);
        let violations = counts.iter().filter(|&&n| n > 3).count();
        let most = counts.iter().copied().max();
        assert_eq!((violations, most, q.finish_needless()), (0, Some(3), 1));
        let r = q.report(|k| format!("k{k}"));
        assert_eq!(r.calendar, "day in America/Sao_Paulo");
        // Key 0: one period; key 1: the day of its other-rule refusal, and the next.
        assert_eq!((r.key_periods, r.ran_out, r.keys_ran_out), (3, 2, 2));
        let first = &r.run_outs[0];
        assert_eq!(first.key, "k0");
        assert_eq!(first.period, "2026-01-01");
        assert_eq!(
            (first.day, first.at_ns, first.refused, first.admitted),
            (1, 9 * H, 2, 3)
        );
        assert_eq!(first.refused_share, 0.75);
        assert_eq!(r.run_outs[1].period, "2026-01-02");
        assert_eq!(r.run_outs[1].admitted, 2);
        // Key 0's 3 hold until its day ends at 27 h; key 1's 2 from 29 h until 51 h.
        assert_eq!(r.busiest, vec![3, 3, 3, 2, 2]);
    }

    #[test]
    fn a_key_over_its_quota_is_a_violation_and_counts_from_zero_next_period() {
        let mut q = tally();
        let counts = [3 * H, 4 * H, 5 * H, 6 * H].map(|t| q.admit(0, t));
        assert_eq!(q.admit(0, 27 * H), 1);
        let violations = counts.iter().filter(|&&n| n > 3).count();
        let most = counts.iter().copied().max();
        assert_eq!((violations, most, q.finish_needless()), (1, Some(4), 0));
    }
}
