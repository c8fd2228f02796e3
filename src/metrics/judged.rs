//! Per real client, against the intent: the exact limiter's verdicts (wrongly allowed and
//! rejected) and the rolling windows (violations, the worst window, needless and collateral
//! rejections), each client held to its own entitlement.
//!
//! While every request's client is its key (the common case: `key = "user"`) and the intent
//! gives every client the same entitlement, the per-key tallies already judge each client:
//! the recorder runs none of this. The first request whose client is not its key starts it
//! ([`Judged::from_keys`]: each client's state, and every count so far, is then its key's);
//! an intent with tiers starts it with the run.

use super::accuracy::{Accuracy, AccuracyPart};
use super::burst::{Bursts, BurstsPart};
use super::dense::Parts;
use super::intent::Bounds;
use super::per_key::KeyEntry;
use super::timelog::TimeLog;
use super::windows::History;
use crate::algorithms::Outcome;
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId};

/// One client's state: its log under the exact limiter of the intent, and its admissions.
#[derive(Debug, Default)]
pub(super) struct JudgedEntry {
    exact: TimeLog,
    history: History,
}

pub(super) struct Judged {
    accuracy: Accuracy,
    bursts: Bursts,
    clients: Vec<JudgedEntry>,
}

impl Judged {
    /// A judge of every client from the run's start; `clients`: those to make room for.
    pub fn new(bounds: Bounds, clients: usize) -> Self {
        Judged {
            accuracy: Accuracy::new(bounds.clone()),
            bursts: Bursts::new(bounds),
            clients: Vec::with_capacity(clients),
        }
    }

    /// The judge the per-key tallies have been so far, while each client was its key: their
    /// state of key `i` becomes client `i`'s.
    #[cold]
    pub fn from_keys(accuracy: &Accuracy, bursts: &Bursts, keys: &[KeyEntry]) -> Self {
        Judged {
            accuracy: accuracy.clone(),
            bursts: bursts.clone(),
            clients: keys
                .iter()
                .map(|k| JudgedEntry {
                    exact: k.exact.clone(),
                    history: k.history.clone(),
                })
                .collect(),
        }
    }

    /// One decision on a request of `a.client` (flags of [`super::harm`]).
    #[inline]
    pub fn on_decision(&mut self, a: &Arrival, outcome: Outcome, flags: u8) {
        let (t, client) = (a.time, a.client);
        self.bursts.judge_due(self.clients.as_mut_slice(), t);
        let e = super::dense::slot(&mut self.clients, client);
        let admitted = outcome.is_admitted();
        self.accuracy
            .on_decision(client, &mut e.exact, t, admitted, None, || 0);
        match outcome {
            Outcome::Allow => {
                self.bursts.on_admit(client, &mut e.history, t, a.source);
            }
            Outcome::Delay(_) => {} // admitted at its release
            Outcome::Reject { .. } => {
                self.bursts
                    .on_reject(client, &mut e.history, t, a.source, flags)
            }
        }
    }

    /// A delayed request of `client` from `source` reaches the backend at `time`.
    #[inline]
    pub fn on_admit(&mut self, client: ClientId, source: u16, time: Nanos) {
        self.bursts.judge_due(self.clients.as_mut_slice(), time);
        let e = super::dense::slot(&mut self.clients, client);
        self.bursts.on_admit(client, &mut e.history, time, source);
    }

    /// Frees what `now` allows.
    pub fn sweep(&mut self, now: Nanos) {
        self.bursts.sweep(self.clients.as_mut_slice(), now);
        self.accuracy.sweep(self.clients.as_mut_slice(), now);
    }

    pub fn finish(mut self) -> (AccuracyPart, BurstsPart) {
        let bursts = self.bursts.finish(self.clients.as_mut_slice());
        (self.accuracy.finish(), bursts)
    }
}

impl Parts<History> for [JudgedEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut History {
        &mut self[id as usize].history
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

impl Parts<TimeLog> for [JudgedEntry] {
    #[inline]
    fn part(&mut self, id: u32) -> &mut TimeLog {
        &mut self[id as usize].exact
    }
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::prefetch::prefetch(self, id as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::super::harm::{LEGIT, SHARED};
    use super::*;
    use proptest::prelude::*;

    const W: Nanos = 10;

    fn judged(ceilings: &[u64]) -> Judged {
        use super::super::intent::{Entitlement, Intent, IntentUnit, Per, TierEntitlement};
        let intent = Intent {
            unit: IntentUnit::Requests,
            base: Entitlement {
                limit: ceilings[0],
                window: W,
                burst: ceilings[0],
                calendar: None,
            },
            per: Per::Client,
            per_tier: ceilings[1..]
                .iter()
                .enumerate()
                .map(|(i, &c)| TierEntitlement {
                    tiers: vec![format!("t{i}")],
                    limit: c,
                    window_ns: W,
                    burst: c,
                    calendar: None,
                })
                .collect(),
            per_route: Vec::new(),
        };
        // Client i has tier t(i − 1): client 0 the base.
        let names: Vec<String> = (0..ceilings.len()).map(|i| format!("t{i}")).collect();
        let tier = |i: usize| (i > 0 && i < ceilings.len()).then(|| names[i - 1].as_str());
        Judged::new(Bounds::of_intent(&intent, ceilings.len(), tier), 4)
    }

    proptest! {
        /// An exact per-client limiter of the intent (each client its own ceiling) is never
        /// wrong, never over, and never refuses needlessly, whatever keys the requests carry.
        #[test]
        fn the_exact_per_client_limiter_is_judged_perfect(
            ceilings in proptest::collection::vec(1u64..4, 1..4),
            events in proptest::collection::vec((0u64..4, 0u32..4, any::<bool>()), 1..150),
        ) {
            let mut j = judged(&ceilings);
            let mut logs: Vec<Vec<Nanos>> = vec![Vec::new(); 4];
            let mut t = 0;
            for (gap, client, shared) in events {
                t += gap;
                let ceiling = ceilings.get(client as usize).filter(|_| client > 0).copied()
                    .unwrap_or(ceilings[0]);
                let log = &mut logs[client as usize];
                log.retain(|&a| a + W > t);
                let admit = (log.len() as u64) < ceiling;
                if admit {
                    log.push(t);
                }
                let outcome = if admit { Outcome::Allow } else { Outcome::Reject { retry_after: 1 } };
                let flags = LEGIT | if shared { SHARED } else { 0 };
                j.on_decision(&Arrival::new(t, client % 2, client, 0), outcome, flags);
            }
            let (accuracy, bursts) = j.finish();
            prop_assert_eq!((accuracy.wrongly_allowed, accuracy.wrongly_rejected), (0, 0));
            prop_assert_eq!(bursts.policy_violations, 0);
            prop_assert_eq!(bursts.needless_rejections, 0);
            prop_assert!(bursts.max_window_admitted <= bursts.worst_ceiling);
        }

        /// Whatever is decided: needless ≤ rejected, collateral ≤ needless of legit clients,
        /// clients hurt ≤ legit clients refused, and the sources' figures add up to the totals.
        #[test]
        fn harm_is_bounded_by_the_refusals(
            ceilings in proptest::collection::vec(1u64..4, 1..4),
            events in proptest::collection::vec(
                (0u64..4, 0u32..4, any::<bool>(), any::<bool>(), any::<bool>(), 0u16..2),
                1..150,
            ),
        ) {
            let mut j = judged(&ceilings);
            let (mut rejected, mut refused_legit) = (0u64, std::collections::BTreeSet::new());
            let mut t = 0;
            for (gap, client, admit, legit, shared, source) in events {
                t += gap;
                let outcome = if admit { Outcome::Allow } else { Outcome::Reject { retry_after: 1 } };
                if !admit {
                    rejected += 1;
                    if legit {
                        refused_legit.insert(client);
                    }
                }
                let flags = if legit { LEGIT } else { 0 } | if shared { SHARED } else { 0 };
                j.on_decision(&Arrival::new(t, 0, client, source), outcome, flags);
            }
            let (_, b) = j.finish();
            let h = &b.harm;
            prop_assert!(b.needless_rejections <= rejected);
            prop_assert!(h.collateral <= b.needless_rejections);
            prop_assert!(h.collateral_clients as usize <= refused_legit.len());
            let sum = |f: fn(&super::super::harm::SourceHarm) -> u64| h.by_source.iter().map(f).sum::<u64>();
            prop_assert_eq!(sum(|s| s.needless_rejections), b.needless_rejections);
            prop_assert_eq!(sum(|s| s.collateral_rejections), h.collateral);
            prop_assert_eq!(sum(|s| s.policy_violations), b.policy_violations);
            prop_assert!(sum(|s| s.clients_hurt) as usize <= refused_legit.len());
        }
    }
}
