//! Accuracy of one rule of a contender against its own intent: at most `limit` requests per
//! key (the rule's key) in any rolling window of the rule's `window`, over the requests the
//! rule applies to. The contender's admissions of those requests are the history measured, so
//! a rule is charged for what the whole contender let through (another rule's refusal can
//! keep a rule within its limit; a bypass never reaches it). Delayed requests count at their
//! decision time here (the contender-level figures count them at release).

use super::keys_per_client::KeysPerClient;
use super::quota::{QuotaTally, RuleQuota};
use super::windows::KeyWindows;
use crate::algorithms::KeyId;
use crate::policy::KeySpec;
use crate::time::Nanos;
use crate::traffic::ClientId;
use serde::Serialize;

/// One rule's figures (`rules[]` in `summary.json`; docs/metrics.md "Per-rule figures").
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RuleReport {
    /// The rule's name in the contender (a `per_tier` entry is its own rule, `plan/pro`).
    pub name: String,
    /// The name of the rule's algorithm (`fixed_window`, `gcra`, ...).
    pub algorithm: String,
    /// The rule's limit, in requests per window: the yardstick of its figures.
    pub limit: u64,
    /// The rule's window, in nanoseconds.
    pub window_ns: Nanos,
    /// The rule's burst, in requests.
    pub burst: u64,
    /// The key the rule counts on, which its per-key figures judge.
    pub key: KeySpec,
    /// Requests the rule applied to (not bypassed, route not skipped, matchers held).
    pub applied: u64,
    /// Of those, admitted by the contender.
    pub admitted: u64,
    /// Requests this rule refused (it was the contender's refusing rule).
    pub refused: u64,
    /// Admitted requests that had used the rule's `warn_at` share once counted.
    pub warned: u64,
    /// Admissions at which the rule key's count in `(t−W, t]` exceeds the rule's limit.
    pub violations: u64,
    /// The most admissions of one rule key in any rolling window, and that over the limit.
    pub max_window_admitted: u64,
    /// `max_window_admitted / limit`.
    pub burst_factor: f64,
    /// Refusals by this rule that, admitted alone, would have kept every window of the rule
    /// within its limit (its own key and window; see `windows.rs`).
    pub needless_rejections: u64,
    /// Distinct rule keys the rule saw.
    pub keys_seen: u64,
    /// Rule keys this rule refused at least once; of those, the ones warned before their first
    /// refusal; and the time from first warning to first refusal over those (min, mean).
    pub keys_refused: u64,
    /// Of `keys_refused`, the keys this rule warned before its first refusal of them.
    pub keys_warned_before_refusal: u64,
    /// Over those keys, the least first refusal − first warning, in nanoseconds; `None` when
    /// no key was warned before a refusal.
    pub warning_lead_min_ns: Option<Nanos>,
    /// Over those keys, the mean of first refusal − first warning, in nanoseconds (rounded
    /// down); `None` when no key was warned before a refusal.
    pub warning_lead_mean_ns: Option<Nanos>,
    /// Per source, distinct rule keys per real client over the requests the rule applied to:
    /// only for a rule keyed by an identity function (a forger whose forged header the rule
    /// believes makes one key per request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys_per_client: Option<Vec<SourceKeys>>,
    /// For a rule counting an LLM's tokens, its figures in tokens (docs/llm.md); the figures
    /// above count requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<super::RuleTokens>,
    /// For a calendar window (a quota), who ran out and when; its `violations`,
    /// `max_window_admitted` and `needless_rejections` are then judged per calendar period,
    /// and `window_ns` is its longest period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<RuleQuota>,
}

/// How a rule's windows are judged: rolling windows of its length, or its calendar's periods.
enum Windows {
    Rolling(KeyWindows),
    Calendar(QuotaTally),
}

/// Distinct keys per real client of one source under one rule (`rules[].keys_per_client[]`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SourceKeys {
    /// The source's name (only sources with requests the rule applied to are listed).
    pub source: String,
    /// The most distinct rule keys one real client of the source produced (a whole number).
    pub max: f64,
    /// The mean distinct rule keys per real client, over the source's clients the rule met.
    pub mean: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct KeyMarks {
    seen: bool,
    first_warning: Option<Nanos>,
    refused: bool,
}

/// The running tally of one rule.
pub struct RuleTally {
    limit: u64,
    windows: Windows,
    keys: Vec<KeyMarks>,
    applied: u64,
    admitted: u64,
    refused: u64,
    warned: u64,
    violations: u64,
    max_window: u64,
    keys_refused: u64,
    leads: Vec<Nanos>,
    clients: Option<KeysPerClient>,
}

impl RuleTally {
    /// A tally for a rule of `limit` requests per `window` nanoseconds, with nothing counted.
    pub fn new(limit: u64, window: Nanos) -> Self {
        RuleTally::judged_by(limit, Windows::Rolling(KeyWindows::new(limit, window)))
    }

    /// A tally for a calendar rule: its figures judged per period of the quota's calendar.
    pub fn calendar(quota: QuotaTally, limit: u64) -> Self {
        RuleTally::judged_by(limit, Windows::Calendar(quota))
    }

    fn judged_by(limit: u64, windows: Windows) -> Self {
        RuleTally {
            limit,
            windows,
            keys: Vec::new(),
            applied: 0,
            admitted: 0,
            refused: 0,
            warned: 0,
            violations: 0,
            max_window: 0,
            keys_refused: 0,
            leads: Vec::new(),
            clients: None,
        }
    }

    /// Also counts distinct rule keys per real client of each of `sources` sources.
    pub fn with_clients(mut self, sources: usize) -> Self {
        self.clients = Some(KeysPerClient::kept_for(sources));
        self
    }

    /// A request of `client` from `source` the rule applied to, under rule key `key`.
    pub fn client_key(&mut self, source: u16, client: ClientId, key: KeyId) {
        if let Some(c) = &mut self.clients {
            c.record_key(source, client, key);
        }
    }

    fn marks(&mut self, key: KeyId) -> &mut KeyMarks {
        let i = key as usize;
        if i >= self.keys.len() {
            self.keys.resize_with(i + 1, KeyMarks::default);
        }
        let m = &mut self.keys[i];
        m.seen = true;
        m
    }

    /// The contender admitted a request this rule applied to; `warned` if it passed the rule's
    /// warning share.
    pub fn admit(&mut self, key: KeyId, t: Nanos, warned: bool) {
        self.applied += 1;
        self.admitted += 1;
        let n = match &mut self.windows {
            Windows::Rolling(w) => w.admit(key, t),
            Windows::Calendar(q) => q.admit(key, t),
        };
        self.violations += (n > self.limit) as u64;
        self.max_window = self.max_window.max(n);
        if warned {
            self.warned += 1;
            let m = self.marks(key);
            m.first_warning.get_or_insert(t);
        } else {
            self.marks(key);
        }
    }

    /// The contender refused a request this rule applied to; `by_this_rule` if this rule was
    /// the refusing one.
    pub fn reject(&mut self, key: KeyId, t: Nanos, by_this_rule: bool) {
        self.applied += 1;
        match &mut self.windows {
            Windows::Rolling(w) if by_this_rule => w.reject(key, t),
            Windows::Rolling(_) => {}
            Windows::Calendar(q) => q.reject(key, t, by_this_rule),
        }
        let m = self.marks(key);
        if by_this_rule {
            let first = !m.refused;
            m.refused = true;
            let warning = m.first_warning;
            self.refused += 1;
            if first {
                self.keys_refused += 1;
                if let Some(w) = warning {
                    self.leads.push(t - w);
                }
            }
        }
    }

    /// Judges the rejections whose windows have all passed by `now` and frees the heap
    /// histories of keys that no longer need them (called periodically during the run).
    pub fn sweep(&mut self, now: Nanos) {
        if let Windows::Rolling(w) = &mut self.windows {
            w.sweep(now);
        }
    }

    /// The rule's figures once the run is over, judging the rejections still waiting; `sources`
    /// are the scenario's source names, for `keys_per_client`; `key_name` names a rule key.
    pub fn finish(
        mut self,
        name: String,
        algorithm: &str,
        params: crate::algorithms::Params,
        key: KeySpec,
        sources: &[String],
        key_name: impl Fn(KeyId) -> String,
    ) -> RuleReport {
        let (needless, quota) = match &mut self.windows {
            Windows::Rolling(w) => (w.finish(), None),
            Windows::Calendar(q) => (q.finish_needless(), Some(q.report(key_name))),
        };
        let n = self.leads.len() as u64;
        RuleReport {
            name,
            algorithm: algorithm.to_string(),
            limit: params.limit,
            window_ns: params.window,
            burst: params.burst,
            key,
            applied: self.applied,
            admitted: self.admitted,
            refused: self.refused,
            warned: self.warned,
            violations: self.violations,
            max_window_admitted: self.max_window,
            burst_factor: self.max_window as f64 / self.limit as f64,
            needless_rejections: needless,
            keys_seen: self.keys.iter().filter(|m| m.seen).count() as u64,
            keys_refused: self.keys_refused,
            keys_warned_before_refusal: n,
            warning_lead_min_ns: self.leads.iter().copied().min(),
            // Integer mean, rounded down.
            warning_lead_mean_ns: (n > 0).then(|| {
                (self.leads.iter().map(|&l| l as u128).sum::<u128>() / n as u128) as Nanos
            }),
            keys_per_client: self.clients.as_ref().map(|c| {
                sources
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| {
                        let (max, mean) = c.of(i)?;
                        (max > 0.0).then(|| SourceKeys {
                            source: s.clone(),
                            max,
                            mean,
                        })
                    })
                    .collect()
            }),
            tokens: None,
            quota,
        }
    }
}
