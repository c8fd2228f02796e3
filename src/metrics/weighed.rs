//! Against an intent in units of cost (`[intent] unit = "cost"`): each judged id (a real
//! client, a client's route budget, or a key) may have at most its ceiling in units admitted in
//! any rolling window `(t−W, t]`, each admitted request weighing the units it settled (its
//! actual cost where the traffic states one, else its cost).
//!
//! The figures are those of the request judges ([`super::judged`], [`super::windows`]), with
//! every count of a window a sum of units:
//! - the exact limiter of the intent is the weighted sliding log: it admits a request when
//!   the units in its window plus the request's stay within the ceiling;
//! - an admission that takes its window over the ceiling is a violation, and puts
//!   `min(units, window − ceiling)` units over the intent;
//! - a rejection of `u` units at `t` is needless when adding those `u` units at `t` alone would
//!   have left every window `(s−W, s]` with `s ∈ [t, t+W)` within the ceiling, given what the
//!   contender admitted before and after (judged once `t + W` has passed, as for requests).
//!
//! With every request weighing one unit these are the request judges' figures exactly (a
//! property test holds them to it). Each id keeps its admissions as `(time, running total)`
//! pairs, so the units of any span are a difference of two totals: judging a rejection is a
//! few binary searches and one pass over the admissions in `(t, t + W)`. The histories are
//! the request judges' logs ([`TimeLog`]) of pairs: a few inline in the id's entry, more on the
//! heap until a sweep finds them short (docs/performance.md, "Judging in units of cost").

use super::accuracy::AccuracyPart;
use super::burst::BurstsPart;
use super::intent::{Bound, Bounds};
use super::timelog::TimeLog;
use super::unit_figures::{UnitFigures, UnitsPart, Worst};
use crate::time::Nanos;
use std::collections::VecDeque;

/// Admissions a history keeps inline, in the id's own entry: an id with more moves them to
/// a ring on the heap until a sweep finds it short again (as the request judges' logs do).
const INLINE: usize = 4;

/// A log of `(time, units)` or `(time, running total)`, oldest first.
type UnitLog = TimeLog<INLINE, (Nanos, u64)>;

/// One id's admitted history in units.
#[derive(Debug, Default, Clone)]
struct Ledger {
    /// `(time, units admitted to the id up to and including this admission)`, oldest first,
    /// those after `now − keep` ([`Weighed::keep`]).
    admitted: UnitLog,
    /// The running total before `admitted[0]` (what trimming dropped).
    before: u64,
    /// Index of the first admission inside `(now−W, now]`; only advances.
    window_start: usize,
}

impl Ledger {
    /// The running total before entry `i`.
    #[inline]
    fn total_before(&self, i: usize) -> u64 {
        match i.checked_sub(1) {
            Some(j) => self.admitted.get(j).1,
            None => self.before,
        }
    }

    /// The running total through every admission kept.
    #[inline]
    fn total(&self) -> u64 {
        self.total_before(self.admitted.len())
    }

    /// Units in `(now−W, now]`; `now` is at least the latest admission and never decreases.
    #[inline]
    fn units_now(&mut self, now: Nanos, window: Nanos) -> u64 {
        while self.window_start < self.admitted.len()
            && self
                .admitted
                .get(self.window_start)
                .0
                .saturating_add(window)
                <= now
        {
            self.window_start += 1;
        }
        self.total() - self.total_before(self.window_start)
    }

    /// Drops admissions at or before `now − keep`.
    fn trim(&mut self, now: Nanos, keep: Nanos) {
        while let Some((t, total)) = self.admitted.front() {
            if t.saturating_add(keep) > now {
                break;
            }
            self.admitted.pop_front();
            self.before = total;
            self.window_start = self.window_start.saturating_sub(1);
        }
    }

    /// Units admitted in `(s−W, s]`, for any `s` (the kept history covering it).
    fn units_in(&self, s: Nanos, window: Nanos) -> u64 {
        let lo = (self.admitted).partition_point(|&(a, _)| a.saturating_add(window) <= s);
        let hi = (self.admitted).partition_point(|&(a, _)| a <= s);
        self.total_before(hi) - self.total_before(lo)
    }

    /// Whether `units` more at `t` keep every window `(s−W, s]` with `s ∈ [t, t+W)` within
    /// `ceiling`.
    fn is_needless(&self, t: Nanos, units: u64, b: Bound) -> bool {
        if self.units_in(t, b.window) + units > b.ceiling {
            return false;
        }
        // A window's units only rise at an admission: the maximum over [t, t+W) is at t
        // (above) or at the last admission of some instant in (t, t+W).
        let start = (self.admitted).partition_point(|&(a, _)| a <= t);
        let end = (self.admitted).partition_point(|&(a, _)| a < t.saturating_add(b.window));
        let mut left = (self.admitted).partition_point(|&(a, _)| a.saturating_add(b.window) <= t);
        for i in start..end {
            let s = self.admitted.get(i).0;
            if i + 1 < end && self.admitted.get(i + 1).0 == s {
                continue;
            }
            while self.admitted.get(left).0.saturating_add(b.window) <= s {
                left += 1;
            }
            if self.total_before(i + 1) - self.total_before(left) + units > b.ceiling {
                return false;
            }
        }
        true
    }
}

/// One id's log under the exact limiter of the intent: `(time, units)` in its window.
#[derive(Debug, Default, Clone)]
struct ExactLedger {
    log: UnitLog,
    units: u64,
}

impl ExactLedger {
    /// Whether the weighted sliding log admits `units` at `now` (and records them).
    #[inline]
    fn admits(&mut self, now: Nanos, units: u64, b: Bound) -> bool {
        while let Some((t, u)) = self.log.front() {
            if t.saturating_add(b.window) > now {
                break;
            }
            self.log.pop_front();
            self.units -= u;
        }
        let admit = self.units + units <= b.ceiling;
        if admit && units > 0 {
            self.log.push_back((now, units));
            self.units += units;
        }
        admit
    }

    /// Drops what expired by `now` with `window`, and moves a short log back inline;
    /// whether the log still holds something.
    fn expire(&mut self, now: Nanos, window: Nanos) -> bool {
        let b = Bound {
            ceiling: 0,
            window,
            calendar: None,
        };
        self.admits(now, 0, b);
        self.log.fit_inline();
        !self.log.is_empty()
    }
}

/// One judged id's state.
#[derive(Debug, Default)]
struct IdState {
    ledger: Ledger,
    exact: ExactLedger,
    /// In [`Weighed::live`]: holding history a sweep may free.
    listed: bool,
}

/// A rejection waiting for its later windows.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    t: Nanos,
    id: u32,
    units: u64,
    source: u16,
    flags: u8,
}

/// The judge of every id against an intent in units of cost.
pub(super) struct Weighed {
    bounds: Bounds,
    ids: Vec<IdState>,
    /// Ids holding history, for sweeps.
    live: Vec<u32>,
    /// Per key, the exact limiter at the base entitlement: the keys tally's ground truth
    /// (whether a key's offered units ever exceeded the intent).
    keys: Vec<ExactLedger>,
    pending: VecDeque<Waiting>,
    figures: UnitFigures,
    /// The worst id's admissions in `(end − 2W, end + W]`, recorded up to `until`.
    trace: VecDeque<(Nanos, u64)>,
    trace_until: Nanos,
}

impl Weighed {
    #[cfg(test)]
    pub fn new(bounds: Bounds) -> Self {
        Self::with_room(bounds, 0, 0)
    }

    /// A judge with room for `ids` judged ids and `keys` keys (those known before the run):
    /// their tables then never move as the run fills them.
    pub fn with_room(bounds: Bounds, ids: usize, keys: usize) -> Self {
        let stride = bounds.stride();
        Weighed {
            bounds,
            ids: Vec::with_capacity(ids),
            live: Vec::new(),
            keys: Vec::with_capacity(keys),
            pending: VecDeque::new(),
            figures: UnitFigures::new(stride),
            trace: VecDeque::new(),
            trace_until: 0,
        }
    }

    /// What a history with `window` keeps: its window and the longest (every rejection still
    /// waiting looks back one window).
    fn keep(&self, window: Nanos) -> Nanos {
        window.saturating_add(self.bounds.longest())
    }

    fn state(&mut self, id: u32) -> &mut IdState {
        let s = super::dense::slot(&mut self.ids, id);
        if !s.listed {
            s.listed = true;
            self.live.push(id);
        }
        s
    }

    /// Whether key `key`'s offered units, `units` at `t` included, are still within the base
    /// entitlement in every window so far (times never decrease).
    #[inline]
    pub fn key_within(&mut self, key: u32, t: Nanos, units: u64) -> bool {
        let base = self.bounds.base();
        super::dense::slot(&mut self.keys, key).admits(t, units, base)
    }

    /// Judges the rejections whose windows have all ended by `now`.
    #[inline]
    fn judge_due(&mut self, now: Nanos) {
        let longest = self.bounds.longest();
        while let Some(&w) = self.pending.front() {
            if w.t.saturating_add(longest) > now {
                break;
            }
            self.pending.pop_front();
            let b = self.bounds.of(w.id);
            if self.ids[w.id as usize].ledger.is_needless(w.t, w.units, b) {
                (self.figures).on_needless(w.id, w.source, w.flags, (w.units, 1));
            }
        }
    }

    /// A decision on a request of `id` weighing `units`, from `source` (flags of
    /// [`super::harm`]): `admitted` now, or (`delayed`) later through [`Weighed::admit`].
    #[inline]
    pub fn on_decision(&mut self, id: u32, t: Nanos, units: u64, d: Decided) {
        self.judge_due(t);
        let b = self.bounds.of(id);
        let exact = self.state(id).exact.admits(t, units, b);
        self.figures.on_verdict(exact, d.admitted || d.delayed);
        if d.admitted {
            self.admit(id, d.source, t, units);
        } else if !d.delayed {
            let ledger = &mut self.state(id).ledger;
            // A full window at t settles it: the request alone would exceed the ceiling.
            if ledger.units_now(t, b.window) + units <= b.ceiling {
                self.pending.push_back(Waiting {
                    t,
                    id,
                    units,
                    source: d.source,
                    flags: d.flags,
                });
            }
        }
    }

    /// A request of `id` from `source` weighing `units` reaches the backend at `t` (times never
    /// decrease).
    #[inline]
    pub fn admit(&mut self, id: u32, source: u16, t: Nanos, units: u64) {
        self.judge_due(t);
        let b = self.bounds.of(id);
        let keep = self.keep(b.window);
        let ledger = &mut self.state(id).ledger;
        ledger.trim(t, keep);
        let total = ledger.total() + units;
        ledger.admitted.push_back((t, total));
        let in_window = ledger.units_now(t, b.window);
        self.figures
            .on_admitted(source, units, in_window, b.ceiling);
        self.track_worst(id, t, units, in_window, b);
    }

    /// Keeps the worst window, and the admissions around it for the worst-moment chart.
    fn track_worst(&mut self, id: u32, t: Nanos, units: u64, in_window: u64, b: Bound) {
        let traced = (self.figures.worst).is_some_and(|w| w.id == id && t <= self.trace_until);
        if traced {
            self.trace.push_back((t, units));
        }
        if !self.figures.is_worse(in_window, b.ceiling) {
            return;
        }
        self.figures.worst = Some(Worst {
            units: in_window,
            ceiling: b.ceiling,
            id,
            end: t,
        });
        let window = self.bounds.base().window;
        if !traced {
            // The history holds (t − 2W, t] at least, this admission included.
            let ledger = &self.ids[id as usize].ledger;
            self.trace.clear();
            let mut before = ledger.before;
            for (at, total) in ledger.admitted.iter() {
                self.trace.push_back((at, total - before));
                before = total;
            }
        }
        self.trace_until = t.saturating_add(window);
        let from = t.saturating_sub(window.saturating_mul(2));
        while self
            .trace
            .front()
            .is_some_and(|&(a, _)| a <= from && from > 0)
        {
            self.trace.pop_front();
        }
    }

    /// Judges what is due by `now` and frees the histories nothing still needs.
    pub fn sweep(&mut self, now: Nanos) {
        self.judge_due(now);
        let longest = self.bounds.longest();
        let keep = self.keep(longest);
        let ids = &mut self.ids;
        self.live.retain(|&id| {
            let s = &mut ids[id as usize];
            s.ledger.trim(now, keep);
            s.ledger.admitted.fit_inline();
            let holds = s.exact.expire(now, longest) || !s.ledger.admitted.is_empty();
            s.listed = holds;
            holds
        });
        let window = self.bounds.base().window;
        for k in &mut self.keys {
            k.expire(now, window);
        }
    }

    /// The figures, once the run is over: the request judges' parts (their windows in units)
    /// and the units.
    pub fn finish(mut self) -> (AccuracyPart, BurstsPart, UnitsPart) {
        self.judge_due(Nanos::MAX);
        let ceiling = self.bounds.of(0).ceiling;
        (self.figures).finish(ceiling, self.trace.into_iter().unzip())
    }
}

/// How a request was decided, as [`Weighed::on_decision`] judges it.
#[derive(Debug, Clone, Copy)]
pub struct Decided {
    pub admitted: bool,
    /// Admitted later, when released.
    pub delayed: bool,
    pub source: u16,
    pub flags: u8,
}

#[cfg(test)]
impl Decided {
    /// A legit request from `source`, admitted now or refused.
    pub fn legit(admitted: bool, source: u16) -> Decided {
        Decided {
            admitted,
            delayed: false,
            source,
            flags: super::harm::LEGIT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute;
    use super::super::harm::LEGIT;
    use super::super::judged::Judged;
    use super::*;
    use crate::algorithms::Outcome;
    use crate::traffic::Arrival;
    use proptest::prelude::*;

    const W: Nanos = 10;

    /// Ceiling 10 units per 10 ns, one client.
    #[test]
    fn a_hand_computed_run_in_units() {
        let mut w = Weighed::new(Bounds::uniform(10, W));
        w.on_decision(0, 0, 6, Decided::legit(true, 0));
        // (−8, 2] holds 6 + 5 = 11: one violation, 1 unit over.
        w.on_decision(0, 2, 5, Decided::legit(true, 0));
        // (−6, 4] holds 11: 3 more can never fit, not needless.
        w.on_decision(0, 4, 3, Decided::legit(false, 0));
        // (1, 11] holds 5 (the 6 at 0 has left): 5 + 4 ≤ 10; of the windows ending in
        // [11, 21), the one ending at 15 holds the 2 admitted then (the 5 left at 12): needless.
        w.on_decision(0, 11, 4, Decided::legit(false, 1));
        w.on_decision(0, 15, 2, Decided::legit(true, 0));
        // (9, 19] holds 2, and 2 + 8 ≤ 10; but the window ending at 22 would hold 2 + 8 + 9.
        w.on_decision(0, 19, 8, Decided::legit(false, 1));
        // (12, 22] holds 2 + 9 = 11: a second violation, 1 unit over.
        w.on_decision(0, 22, 9, Decided::legit(true, 0));
        let (accuracy, bursts, units) = w.finish();
        assert_eq!(bursts.policy_violations, 2);
        assert_eq!(units.total.over_intent, 2);
        assert_eq!(bursts.needless_rejections, 1);
        assert_eq!(units.total.needless, 4);
        assert_eq!(units.by_source[1].needless, 4);
        assert_eq!(bursts.max_window_admitted, 11);
        assert_eq!(
            bursts.worst_window_end_ns, 2,
            "the first window of 11 units"
        );
        assert_eq!(bursts.worst_window_admissions, [0, 2]);
        assert_eq!(
            units.worst_units,
            [6, 5],
            "traced to 12: nothing after 2 until 15"
        );
        // The exact weighted log admits 6 at 0, refuses 5 at 2 (11 > 10): wrongly allowed;
        // admits 3 at 4 (9): wrongly rejected; 4 at 11 ((1, 11] holds 3): wrongly rejected;
        // 2 at 15 (6): right; 8 at 19 ((9, 19] holds 4 + 2): rejected, right; 9 at 22 ((12,
        // 22] holds 2): wrongly allowed.
        assert_eq!(
            (accuracy.wrongly_allowed, accuracy.wrongly_rejected),
            (2, 2)
        );
    }

    proptest! {
        /// Against brute force over whole histories, with sweeps and several ids: violations and
        /// the units over, needless rejections and their units, the worst window, and the exact
        /// weighted log's verdicts.
        #[test]
        fn units_agree_with_brute_force(
            ceiling in 1u64..12,
            events in proptest::collection::vec(
                (0u32..3, 0u64..6, any::<bool>(), 0u64..8, 0u8..8), 0..150),
        ) {
            let steps = brute::steps(&events);
            let mut w = Weighed::new(Bounds::uniform(ceiling, W));
            for s in &steps {
                if s.sweep {
                    w.sweep(s.t);
                }
                w.on_decision(s.id, s.t, s.units, Decided::legit(s.admitted, 0));
            }
            let counts = |a: Nanos, s: Nanos| a + W > s && a <= s;
            // Every window (s − W, s] with s in [t, t + W) keeps room for u more at t.
            let needless = |log: &[(Nanos, u64)], t: Nanos, u: u64| {
                std::iter::once(t)
                    .chain(log.iter().map(|&(s, _)| s).filter(|&s| s > t && s < t + W))
                    .all(|s| brute::units_in(log, s, counts) + u <= ceiling)
            };
            brute::check(w.finish(), &steps, ceiling, counts, needless)?;
        }

        /// Every request weighing one unit, the figures are the request judge's.
        #[test]
        fn one_unit_each_is_the_request_judge(
            ceiling in 1u64..4,
            events in proptest::collection::vec(
                (0u32..3, 0u64..6, any::<bool>(), 0u16..2, 0u8..8), 0..150),
        ) {
            let mut w = Weighed::new(Bounds::uniform(ceiling, W));
            let mut j = Judged::new(Bounds::uniform(ceiling, W), 3);
            let mut t = 0;
            for (id, gap, admit, source, sweep) in events {
                t += gap;
                if sweep == 0 {
                    w.sweep(t);
                    j.sweep(t);
                }
                w.on_decision(id, t, 1, Decided::legit(admit, source));
                let outcome = match admit {
                    true => Outcome::Allow,
                    false => Outcome::Reject { retry_after: 1 },
                };
                j.on_decision(&Arrival::new(t, id, id, source), outcome, LEGIT);
            }
            let (wa, wb, units) = w.finish();
            let (ja, jb) = j.finish();
            prop_assert_eq!((wa.wrongly_allowed, wa.wrongly_rejected), (ja.wrongly_allowed, ja.wrongly_rejected));
            prop_assert_eq!(wb.policy_violations, jb.policy_violations);
            prop_assert_eq!(units.total.over_intent, jb.policy_violations);
            prop_assert_eq!(wb.needless_rejections, jb.needless_rejections);
            prop_assert_eq!(units.total.needless, jb.needless_rejections);
            prop_assert_eq!(wb.max_window_admitted, jb.max_window_admitted);
            prop_assert_eq!(wb.worst_window_key, jb.worst_window_key);
            prop_assert_eq!(wb.worst_window_end_ns, jb.worst_window_end_ns);
            prop_assert_eq!(&wb.worst_window_admissions, &jb.worst_window_admissions);
            prop_assert_eq!(wb.harm.by_source, jb.harm.by_source);
            prop_assert_eq!(wb.harm.collateral, jb.harm.collateral);
        }
    }
}
