//! The counters a deployment of each contender would expose, scraped on the virtual clock, and
//! their OpenMetrics text (`--metrics-out`).
//!
//! A scrape at `k·SCRAPE` sees every decision with `t ≤ k·SCRAPE`. Samples are kept per scrape
//! (a few numbers per series every 15 s of virtual time, whatever the request rate) and written
//! at the end, family by family, each series in time order, as a backfill needs.

use crate::algorithms::{Decision, KeyId, Outcome};
use crate::time::Nanos;
use indexmap::IndexMap;
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// The scrape interval: Prometheus's default `scrape_interval`.
pub const SCRAPE: Nanos = 15_000_000_000;
/// Upper bounds of the delay histogram's buckets, in nanoseconds (1 ms to 1 min).
pub const DELAY_BUCKETS: [Nanos; 6] = [
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    60_000_000_000,
];

/// The labels of one request counter series besides `contender` and `rule`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Series {
    /// The contender's rule that decided (refused, or carried the headers of an admission).
    rule: Box<str>,
    outcome: &'static str,
    endpoint: Box<str>,
    signed_in: bool,
}

#[derive(Debug, Clone, Default)]
struct Scrape {
    /// Counter values by series index (series created later are absent).
    requests: Vec<u64>,
    live_keys: u64,
    /// Cumulative counts per bucket of `DELAY_BUCKETS`, then the count of all observations.
    delay: [u64; DELAY_BUCKETS.len() + 1],
    delay_sum_ns: u128,
}

/// One contender's exposed metrics.
#[derive(Debug)]
pub struct Exporter {
    /// The contender's name: the `contender` label of every series.
    pub contender: String,
    /// The `rule` label of the delay histogram (the observers give [`RULE`](super::RULE)).
    pub rule: &'static str,
    policy_window: Nanos,
    series: IndexMap<Series, usize>,
    current: Scrape,
    scrapes: Vec<Scrape>,
    /// Last decision time of each key seen within the last policy window.
    live: FxHashMap<KeyId, Nanos>,
}

impl Exporter {
    /// `contender`'s exporter, no scrape taken yet; a key leaves the live-keys gauge once idle
    /// for `policy_window` (ns).
    pub fn new(contender: String, rule: &'static str, policy_window: Nanos) -> Self {
        Exporter {
            contender,
            rule,
            policy_window,
            series: IndexMap::new(),
            current: Scrape::default(),
            scrapes: Vec::new(),
            live: FxHashMap::default(),
        }
    }

    /// Counts one decision, after taking every scrape before it.
    pub fn record(
        &mut self,
        time: Nanos,
        key: KeyId,
        rule: &str,
        endpoint: &str,
        signed_in: bool,
        decision: &Decision,
    ) {
        self.scrape_before(time.div_ceil(SCRAPE));
        let outcome = decision.outcome.label();
        let found = self.series.iter().find_map(|(s, &i)| {
            (s.outcome == outcome
                && s.signed_in == signed_in
                && &*s.endpoint == endpoint
                && &*s.rule == rule)
                .then_some(i)
        });
        let i = found.unwrap_or_else(|| {
            let i = self.series.len();
            let series = Series {
                rule: rule.into(),
                outcome,
                endpoint: endpoint.into(),
                signed_in,
            };
            self.series.insert(series, i);
            self.current.requests.push(0);
            i
        });
        self.current.requests[i] += 1;
        self.live.insert(key, time);
        let delay = match decision.outcome {
            Outcome::Allow => Some(0),
            Outcome::Delay(d) => Some(d),
            Outcome::Reject { .. } => None,
        };
        if let Some(d) = delay {
            for (bucket, &le) in self.current.delay.iter_mut().zip(&DELAY_BUCKETS) {
                *bucket += u64::from(d <= le);
            }
            self.current.delay[DELAY_BUCKETS.len()] += 1;
            self.current.delay_sum_ns += u128::from(d);
        }
    }

    /// Takes the scrapes up to and including the one at or after `end`.
    pub fn finish(&mut self, end: Nanos) {
        self.scrape_before(end.div_ceil(SCRAPE).saturating_add(1));
    }

    fn scrape_before(&mut self, until: u64) {
        while (self.scrapes.len() as u64) < until {
            let now = self.scrapes.len() as u64 * SCRAPE;
            let window = self.policy_window;
            // Keys idle for a whole window hold no state in a limiter that evicts them.
            self.live.retain(|_, &mut t| t.saturating_add(window) > now);
            self.current.live_keys = self.live.len() as u64;
            self.scrapes.push(self.current.clone());
        }
    }

    /// Scrapes taken, one per `SCRAPE` from time 0.
    pub fn scrapes(&self) -> usize {
        self.scrapes.len()
    }

    /// `(time, refused share of the requests decided since the previous scrape)` per scrape
    /// with requests: the dashboard's "refused share over time".
    pub fn refused_share(&self) -> Vec<(Nanos, f64)> {
        let refused: Vec<usize> = self
            .series
            .iter()
            .filter(|(s, _)| s.outcome == "reject")
            .map(|(_, &i)| i)
            .collect();
        let mut previous = (0u64, 0u64);
        let mut out = Vec::new();
        for (k, s) in self.scrapes.iter().enumerate() {
            let total: u64 = s.requests.iter().sum();
            let rej: u64 = refused.iter().filter_map(|&i| s.requests.get(i)).sum();
            let (dt, dr) = (total - previous.0, rej - previous.1);
            if dt > 0 {
                out.push((k as u64 * SCRAPE, dr as f64 / dt as f64));
            }
            previous = (total, rej);
        }
        out
    }
}

/// The OpenMetrics text of every contender's metrics. Counter families are named with their
/// `_total` suffix: Prometheus's text parser (`promtool check metrics`) needs it and its
/// OpenMetrics parser (`promtool tsdb create-blocks-from openmetrics`) accepts it.
pub fn text(exporters: &[&Exporter]) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(
        "# HELP rlsim_requests_total Requests the contender decided, by refusing rule, outcome, endpoint and whether a user was signed in.\n\
         # TYPE rlsim_requests_total counter\n",
    );
    for e in exporters {
        let mut series: Vec<(&Series, usize)> = e.series.iter().map(|(s, &i)| (s, i)).collect();
        series.sort();
        for (s, i) in series {
            let labels = format!(
                "contender=\"{}\",rule=\"{}\",outcome=\"{}\",endpoint=\"{}\",signed_in=\"{}\"",
                escape(&e.contender),
                escape(&s.rule),
                s.outcome,
                escape(&s.endpoint),
                s.signed_in
            );
            for (k, scrape) in e.scrapes.iter().enumerate() {
                if let Some(v) = scrape.requests.get(i) {
                    let _ = writeln!(out, "rlsim_requests_total{{{labels}}} {v} {}", stamp(k));
                }
            }
        }
    }
    out.push_str(
        "# HELP rlsim_live_keys Keys with a decision in the last policy window: the state a limiter that evicts idle keys holds.\n\
         # TYPE rlsim_live_keys gauge\n",
    );
    for e in exporters {
        let labels = format!("contender=\"{}\"", escape(&e.contender));
        for (k, scrape) in e.scrapes.iter().enumerate() {
            let _ = writeln!(
                out,
                "rlsim_live_keys{{{labels}}} {} {}",
                scrape.live_keys,
                stamp(k)
            );
        }
    }
    out.push_str(
        "# HELP rlsim_delay_seconds Delay imposed on admitted requests (0 for those allowed at once).\n\
         # TYPE rlsim_delay_seconds histogram\n\
         # UNIT rlsim_delay_seconds seconds\n",
    );
    for e in exporters {
        let labels = format!(
            "contender=\"{}\",rule=\"{}\"",
            escape(&e.contender),
            escape(e.rule)
        );
        let bounds = DELAY_BUCKETS
            .iter()
            .map(|&le| seconds(u128::from(le)))
            .chain(["+Inf".to_string()]);
        for (b, le) in bounds.enumerate() {
            for (k, scrape) in e.scrapes.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "rlsim_delay_seconds_bucket{{{labels},le=\"{le}\"}} {} {}",
                    scrape.delay[b],
                    stamp(k)
                );
            }
        }
        for (k, scrape) in e.scrapes.iter().enumerate() {
            let _ = writeln!(
                out,
                "rlsim_delay_seconds_count{{{labels}}} {} {}",
                scrape.delay[DELAY_BUCKETS.len()],
                stamp(k)
            );
        }
        for (k, scrape) in e.scrapes.iter().enumerate() {
            let _ = writeln!(
                out,
                "rlsim_delay_seconds_sum{{{labels}}} {} {}",
                seconds(scrape.delay_sum_ns),
                stamp(k)
            );
        }
    }
    out.push_str("# EOF\n");
    out.into_bytes()
}

/// The timestamp of scrape `k`, in whole seconds (virtual time 0 is the Unix epoch).
fn stamp(k: usize) -> u64 {
    k as u64 * (SCRAPE / 1_000_000_000)
}

/// Nanoseconds as exact decimal seconds, without trailing zeros.
fn seconds(ns: u128) -> String {
    let (s, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        return s.to_string();
    }
    let digits = format!("{frac:09}");
    format!("{s}.{}", digits.trim_end_matches('0'))
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn decision(outcome: Outcome) -> Decision {
        Decision {
            outcome,
            remaining: 0,
            reset_at: 0,
        }
    }

    /// A contender's requests are counted per deciding rule: a refusal by `login` and an
    /// admission carried by `short` are two series of one contender.
    #[test]
    fn requests_are_labelled_by_the_deciding_rule() {
        let mut e = Exporter::new("nestjs".into(), "policy", 60 * S);
        e.record(S, 0, "short", "/", true, &decision(Outcome::Allow));
        e.record(
            2 * S,
            0,
            "login",
            "/login",
            false,
            &decision(Outcome::Reject { retry_after: S }),
        );
        e.record(
            3 * S,
            0,
            "login",
            "/login",
            false,
            &decision(Outcome::Reject { retry_after: S }),
        );
        e.finish(15 * S);
        let text = String::from_utf8(text(&[&e])).unwrap();
        assert!(text.contains(
            "rlsim_requests_total{contender=\"nestjs\",rule=\"short\",outcome=\"allow\",endpoint=\"/\",signed_in=\"true\"} 1 15\n"
        ));
        assert!(text.contains(
            "rlsim_requests_total{contender=\"nestjs\",rule=\"login\",outcome=\"reject\",endpoint=\"/login\",signed_in=\"false\"} 2 15\n"
        ));
    }

    /// Hand-computed: three decisions, two scrapes after time 0.
    #[test]
    fn samples_and_timestamps_are_exact() {
        let mut e = Exporter::new("gcra".into(), "policy", 60 * S);
        e.record(0, 0, "policy", "/", true, &decision(Outcome::Allow));
        e.record(
            15 * S,
            1,
            "policy",
            "/",
            true,
            &decision(Outcome::Delay(S / 2)),
        );
        e.record(
            16 * S,
            0,
            "policy",
            "/login",
            false,
            &decision(Outcome::Reject { retry_after: S }),
        );
        e.finish(20 * S);
        let text = String::from_utf8(text(&[&e])).unwrap();
        let expected = "\
# HELP rlsim_requests_total Requests the contender decided, by refusing rule, outcome, endpoint and whether a user was signed in.
# TYPE rlsim_requests_total counter
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"allow\",endpoint=\"/\",signed_in=\"true\"} 1 0
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"allow\",endpoint=\"/\",signed_in=\"true\"} 1 15
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"allow\",endpoint=\"/\",signed_in=\"true\"} 1 30
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"delay\",endpoint=\"/\",signed_in=\"true\"} 1 15
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"delay\",endpoint=\"/\",signed_in=\"true\"} 1 30
rlsim_requests_total{contender=\"gcra\",rule=\"policy\",outcome=\"reject\",endpoint=\"/login\",signed_in=\"false\"} 1 30
# HELP rlsim_live_keys Keys with a decision in the last policy window: the state a limiter that evicts idle keys holds.
# TYPE rlsim_live_keys gauge
rlsim_live_keys{contender=\"gcra\"} 1 0
rlsim_live_keys{contender=\"gcra\"} 2 15
rlsim_live_keys{contender=\"gcra\"} 2 30
# HELP rlsim_delay_seconds Delay imposed on admitted requests (0 for those allowed at once).
# TYPE rlsim_delay_seconds histogram
# UNIT rlsim_delay_seconds seconds
rlsim_delay_seconds_bucket{contender=\"gcra\",rule=\"policy\",le=\"0.001\"} 1 0
rlsim_delay_seconds_bucket{contender=\"gcra\",rule=\"policy\",le=\"0.001\"} 1 15
rlsim_delay_seconds_bucket{contender=\"gcra\",rule=\"policy\",le=\"0.001\"} 1 30
";
        assert!(text.starts_with(expected), "{text}");
        assert!(text.contains(
            "rlsim_delay_seconds_bucket{contender=\"gcra\",rule=\"policy\",le=\"1\"} 2 15\n"
        ));
        assert!(
            text.contains("rlsim_delay_seconds_count{contender=\"gcra\",rule=\"policy\"} 2 30\n")
        );
        assert!(
            text.contains("rlsim_delay_seconds_sum{contender=\"gcra\",rule=\"policy\"} 0.5 15\n")
        );
        assert!(text.ends_with(
            "rlsim_delay_seconds_sum{contender=\"gcra\",rule=\"policy\"} 0.5 30\n# EOF\n"
        ));
        assert_eq!(
            e.refused_share(),
            vec![(0, 0.0), (15 * S, 0.0), (30 * S, 1.0)]
        );
    }

    /// A key idle for a whole policy window leaves the live-keys gauge.
    #[test]
    fn live_keys_forget_idle_keys() {
        let mut e = Exporter::new("c".into(), "policy", 30 * S);
        e.record(S, 7, "policy", "/", true, &decision(Outcome::Allow));
        e.finish(60 * S);
        let live: Vec<u64> = e.scrapes.iter().map(|s| s.live_keys).collect();
        // Scrapes at 0, 15, 30, 45, 60 s: alive in (t − 30 s, t] for t = 15 and 30 s.
        assert_eq!(live, vec![0, 1, 1, 0, 0]);
    }
}
