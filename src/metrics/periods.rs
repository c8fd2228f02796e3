//! Against an intent per calendar period (`[intent] window = "month"` in a time zone): each
//! judged id (a real client, a client's route budget, or a key) may have at most its limit
//! admitted in each period of its calendar, in requests or in the intent's unit.
//!
//! The figures are the rolling judges' ([`super::weighed`]) with every window a period:
//! - the exact limiter of the intent is a calendar window per id: it admits a request while
//!   the period's units plus the request's stay within the limit;
//! - an admission that takes its period over the limit is a violation, and puts
//!   `min(units, period − limit)` units over the intent;
//! - a rejection of `u` units is needless when its period ended with at most `limit − u`
//!   admitted: admitting it alone would have kept the period within the limit. It is judged
//!   when the period ends (a period the run cuts short, when the run does);
//! - the worst window is the period holding the most of one id for its limit, ending at the
//!   admission that completed it. No admissions are traced around it: the busiest-key chart
//!   draws each client's period filling up.
//!
//! An id holds its current period only (its end, units admitted, the exact limiter's units),
//! whatever the period's length, and the rejections that may turn out needless, run-length
//! encoded: a client refused ten thousand times in a month by one throttle holds one entry.

use super::accuracy::AccuracyPart;
use super::burst::BurstsPart;
use super::intent::{Bound, Bounds};
use super::unit_figures::{UnitFigures, UnitsPart, Worst};
use super::weighed::Decided;
use crate::calendar::Calendar;
use crate::time::Nanos;

/// Rejections of one id in its current period that waited with room left: `count` of them,
/// each of `units`, from `source` with [`super::harm`] `flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Waiting {
    units: u64,
    count: u64,
    source: u16,
    flags: u8,
}

/// One id's current period.
#[derive(Debug, Default)]
struct IdPeriod {
    /// The period's end in ns since the Unix epoch; 0 before the id's first request.
    end: u64,
    /// Units the contender admitted in the period.
    admitted: u64,
    /// Units the exact limiter admitted in the period.
    exact: u64,
    waiting: Vec<Waiting>,
    /// In [`Periods::live`]: holding a period a sweep may end.
    listed: bool,
}

/// One key's offered units in its period, under the exact limiter of the base entitlement.
#[derive(Debug, Default, Clone, Copy)]
struct KeyPeriod {
    end: u64,
    units: u64,
}

/// The judge of every id against an intent per calendar period.
pub(super) struct Periods {
    bounds: Bounds,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
    ids: Vec<IdPeriod>,
    /// Ids holding a period, for sweeps.
    live: Vec<u32>,
    /// Per key: whether its offered units ever exceeded the base allowance (the keys tally's
    /// ground truth).
    keys: Vec<KeyPeriod>,
    figures: UnitFigures,
}

/// The calendar of a bound the judge was made with (validation gives every entitlement of an
/// intent per period one).
#[inline]
fn calendar(b: Bound) -> &'static Calendar {
    b.calendar
        .expect("an intent per period has a calendar in every bound")
}

impl Periods {
    /// A judge with room for `ids` judged ids and `keys` keys (those known before the run),
    /// virtual time 0 at `epoch_ns`.
    pub fn with_room(bounds: Bounds, epoch_ns: u64, ids: usize, keys: usize) -> Self {
        let stride = bounds.stride();
        Periods {
            bounds,
            epoch_ns,
            ids: Vec::with_capacity(ids),
            live: Vec::new(),
            keys: Vec::with_capacity(keys),
            figures: UnitFigures::new(stride),
        }
    }

    /// The state of `id` in its period at `t`, settling the period it leaves.
    #[inline]
    fn period(&mut self, id: u32, t: Nanos, b: Bound) -> &mut IdPeriod {
        let at = self.epoch_ns.saturating_add(t);
        let i = id as usize;
        if i >= self.ids.len() {
            self.ids.resize_with(i + 1, IdPeriod::default);
        }
        if at >= self.ids[i].end {
            self.roll(id, at, b);
        }
        &mut self.ids[i]
    }

    /// `id` enters the period holding `at`: the one it leaves is settled.
    #[cold]
    fn roll(&mut self, id: u32, at: u64, b: Bound) {
        self.settle(id, b);
        let (_, end) = calendar(b).bounds_cached(at);
        let s = &mut self.ids[id as usize];
        (s.end, s.admitted, s.exact) = (end, 0, 0);
        if !s.listed {
            s.listed = true;
            self.live.push(id);
        }
    }

    /// Judges the rejections of `id`'s current period against what the period admitted.
    fn settle(&mut self, id: u32, b: Bound) {
        let s = &mut self.ids[id as usize];
        let (admitted, waiting) = (s.admitted, std::mem::take(&mut s.waiting));
        for w in &waiting {
            if admitted.saturating_add(w.units) <= b.ceiling {
                (self.figures).on_needless(id, w.source, w.flags, (w.units, w.count));
            }
        }
        // Keep the buffer: the id is likely refused again next period.
        let mut waiting = waiting;
        waiting.clear();
        self.ids[id as usize].waiting = waiting;
    }

    /// Whether key `key`'s offered units, `units` at `t` included, are still within the base
    /// allowance in every period so far (times never decrease).
    #[inline]
    pub fn key_within(&mut self, key: u32, t: Nanos, units: u64) -> bool {
        let base = self.bounds.base();
        let at = self.epoch_ns.saturating_add(t);
        let k = super::dense::slot(&mut self.keys, key);
        if at >= k.end {
            *k = KeyPeriod {
                end: calendar(base).bounds_cached(at).1,
                units: 0,
            };
        }
        let within = k.units.saturating_add(units) <= base.ceiling;
        if within {
            k.units += units;
        }
        within
    }

    /// A decision on a request of `id` weighing `units` (see [`Decided`]); when it is admitted
    /// now, the units of `id`'s period, this request's included.
    #[inline]
    pub fn on_decision(&mut self, id: u32, t: Nanos, units: u64, d: Decided) -> Option<u64> {
        let b = self.bounds.of(id);
        let s = self.period(id, t, b);
        let exact = s.exact.saturating_add(units) <= b.ceiling;
        if exact {
            s.exact += units;
        }
        self.figures.on_verdict(exact, d.admitted || d.delayed);
        if d.admitted {
            return Some(self.admit(id, d.source, t, units));
        }
        let s = &mut self.ids[id as usize];
        // A period already too full for the request settles it: it only fills further.
        if !d.delayed && s.admitted.saturating_add(units) <= b.ceiling {
            let w = Waiting {
                units,
                count: 1,
                source: d.source,
                flags: d.flags,
            };
            match s.waiting.last_mut() {
                Some(last) if Waiting { count: 1, ..*last } == w => last.count += 1,
                _ => s.waiting.push(w),
            }
        }
        None
    }

    /// A request of `id` from `source` weighing `units` reaches the backend at `t` (times never
    /// decrease); returns the units of `id`'s period, these included.
    #[inline]
    pub fn admit(&mut self, id: u32, source: u16, t: Nanos, units: u64) -> u64 {
        let b = self.bounds.of(id);
        let s = self.period(id, t, b);
        s.admitted = s.admitted.saturating_add(units);
        let in_period = s.admitted;
        self.figures
            .on_admitted(source, units, in_period, b.ceiling);
        if self.figures.is_worse(in_period, b.ceiling) {
            self.figures.worst = Some(Worst {
                units: in_period,
                ceiling: b.ceiling,
                id,
                end: t,
            });
        }
        in_period
    }

    /// Settles the periods that ended by `now` and frees their ids.
    pub fn sweep(&mut self, now: Nanos) {
        let at = self.epoch_ns.saturating_add(now);
        let mut live = std::mem::take(&mut self.live);
        live.retain(|&id| {
            if at < self.ids[id as usize].end {
                return true;
            }
            let b = self.bounds.of(id);
            self.settle(id, b);
            self.ids[id as usize] = IdPeriod::default();
            false
        });
        self.live = live;
    }

    /// The figures, once the run is over (each period still open judged as the run left it).
    pub fn finish(mut self) -> (AccuracyPart, BurstsPart, UnitsPart) {
        for id in std::mem::take(&mut self.live) {
            let b = self.bounds.of(id);
            self.settle(id, b);
        }
        let ceiling = self.bounds.of(0).ceiling;
        (self.figures).finish(ceiling, (Vec::new(), Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute;
    use super::super::intent::{Entitlement, Intent, IntentUnit, Per, TierEntitlement};
    use super::*;
    use crate::calendar::Period;
    use crate::time::{NANOS_PER_DAY as D, NANOS_PER_HOUR as H};
    use proptest::prelude::*;

    /// 2026-03-01T00:00:00Z.
    const MARCH_1: u64 = 1_772_323_200_000_000_000;

    fn day_utc() -> &'static Calendar {
        Calendar::new(Period::Day, "UTC").unwrap().intern()
    }

    fn intent(limit: u64, calendar: &'static Calendar) -> Intent {
        Intent {
            unit: IntentUnit::Requests,
            base: Entitlement {
                limit,
                window: calendar.longest(),
                burst: limit,
                calendar: Some(calendar),
            },
            per: Per::Client,
            per_tier: Vec::new(),
            per_route: Vec::new(),
        }
    }

    fn judge(intent: &Intent) -> Periods {
        Periods::with_room(Bounds::of_intent(intent, 0, |_| None), MARCH_1, 0, 0)
    }

    /// 3 requests a UTC day, one client, times in hours from 1 March.
    #[test]
    fn a_hand_computed_run_per_day() {
        let mut p = judge(&intent(3, day_utc()));
        let mut on = |h: u64, admit: bool, source: u16| {
            p.on_decision(0, h * H, 1, Decided::legit(admit, source))
        };
        // 1 March: admitted at 1, 2, 3 (the exact limiter too), 5 (a violation: 4 > 3);
        // refused at 6 (no room: never needless).
        assert_eq!(on(1, true, 0), Some(1));
        on(2, true, 0);
        on(3, true, 0);
        assert_eq!(on(5, true, 0), Some(4));
        on(6, false, 0);
        // 2 March: refused at 25 and 26 (source 1), admitted at 30: the day ends with 1 of 3,
        // so both refusals were needless (1 + 1 ≤ 3).
        on(25, false, 1);
        on(26, false, 1);
        on(30, true, 0);
        // 3 March: admitted at 49, 50; refused at 51 with room (2 + 1 ≤ 3) but a later
        // admission at 52 fills the day: not needless.
        on(49, true, 0);
        on(50, true, 0);
        on(51, false, 1);
        on(52, true, 0);
        p.sweep(72 * H);
        let (accuracy, bursts, units) = p.finish();
        assert_eq!(bursts.policy_violations, 1);
        assert_eq!(units.total.over_intent, 1);
        assert_eq!(bursts.needless_rejections, 2);
        assert_eq!(bursts.harm.by_source[1].needless_rejections, 2);
        assert_eq!(bursts.harm.by_source[1].clients_hurt, 1);
        assert_eq!(bursts.max_window_admitted, 4);
        assert_eq!(bursts.worst_window_end_ns, 5 * H);
        // Exact: 1 March admits 1, 2, 3 and refuses 5 (wrongly allowed) and 6 (right);
        // 2 March admits 25, 26 (both wrongly rejected) and 30; 3 March admits 49, 50, 51
        // (wrongly rejected) and refuses 52 (wrongly allowed).
        assert_eq!(
            (accuracy.wrongly_allowed, accuracy.wrongly_rejected),
            (2, 3)
        );
    }

    /// The run's end judges a period it cuts short as it stands.
    #[test]
    fn a_period_cut_short_is_judged_at_the_end() {
        let mut p = judge(&intent(2, day_utc()));
        p.on_decision(0, H, 1, Decided::legit(true, 0));
        p.on_decision(0, 2 * H, 1, Decided::legit(false, 0));
        let (_, bursts, _) = p.finish();
        assert_eq!(bursts.needless_rejections, 1);
    }

    /// A São Paulo month starts at 03:00 UTC: a request at 02:00 UTC on 1 April is March's.
    #[test]
    fn periods_follow_the_zone() {
        let month = Calendar::new(Period::Month(1), "America/Sao_Paulo")
            .unwrap()
            .intern();
        let mut p = judge(&intent(1, month));
        // 31 days after 1 March 00:00 UTC is 1 April 00:00 UTC: still March in São Paulo.
        p.on_decision(0, 3 * H, 1, Decided::legit(true, 0));
        assert_eq!(
            p.on_decision(0, 31 * D + 2 * H, 1, Decided::legit(true, 0)),
            Some(2)
        );
        assert_eq!(
            p.on_decision(0, 31 * D + 3 * H, 1, Decided::legit(true, 0)),
            Some(1)
        );
        let (_, bursts, _) = p.finish();
        assert_eq!(bursts.policy_violations, 1);
    }

    /// Tiers count on their own calendars: a free client per day, a pro client per week.
    #[test]
    fn each_tier_counts_on_its_own_calendar() {
        let week = Calendar::new(Period::Week(jiff::civil::Weekday::Monday), "UTC")
            .unwrap()
            .intern();
        let mut i = intent(1, day_utc());
        i.per_tier = vec![TierEntitlement {
            tiers: vec!["pro".into()],
            limit: 2,
            window_ns: week.longest(),
            burst: 2,
            calendar: Some(week),
        }];
        let tiers = [None, Some("pro")];
        let bounds = Bounds::of_intent(&i, 2, |c| tiers[c]);
        let mut p = Periods::with_room(bounds, MARCH_1, 2, 0);
        // 1 March 2026 is a Sunday: the pro client's week ends at midnight, the free
        // client's day too.
        for id in 0..2 {
            p.on_decision(id, H, 1, Decided::legit(true, 0));
            p.on_decision(id, 2 * H, 1, Decided::legit(true, 0));
            p.on_decision(id, D + H, 1, Decided::legit(true, 0));
        }
        let (_, bursts, _) = p.finish();
        assert_eq!(
            bursts.policy_violations, 1,
            "the free client's second on 1 March"
        );
    }

    proptest! {
        /// A calendar window per client with the intent's limit and calendar is the intent's
        /// exact limiter: judged against it, it is never wrong, never over, and never refuses
        /// needlessly, whatever the zone, period, costs and sweeps.
        #[test]
        fn the_intents_own_calendar_window_is_judged_perfect(
            which in 0usize..4,
            limit in 1u64..6,
            events in proptest::collection::vec(
                (0u32..3, 0u64..30 * H, 1u64..4, 0u8..8), 1..150),
        ) {
            use crate::algorithms::{CalendarWindow, Limiter, Params};
            let calendar = [
                day_utc(),
                Calendar::new(Period::Day, "America/New_York").unwrap().intern(),
                Calendar::new(Period::Week(jiff::civil::Weekday::Sunday), "+05:45").unwrap().intern(),
                Calendar::new(Period::Month(31), "America/Sao_Paulo").unwrap().intern(),
            ][which];
            let params = Params { limit, window: calendar.longest(), burst: 0 };
            let q = CalendarWindow::new(params, calendar).unwrap().starting_at(MARCH_1);
            let mut states = [q.new_state(0); 3];
            let mut p = judge(&intent(limit, calendar));
            let mut t = 0;
            for (id, gap, units, sweep) in events {
                t += gap;
                if sweep == 0 {
                    p.sweep(t);
                }
                let d = q.decide_n(&mut states[id as usize], t, units as u32);
                p.on_decision(id, t, units, Decided::legit(d.outcome.is_admitted(), 0));
            }
            let (accuracy, bursts, units) = p.finish();
            prop_assert_eq!((accuracy.wrongly_allowed, accuracy.wrongly_rejected), (0, 0));
            prop_assert_eq!((bursts.policy_violations, units.total.over_intent), (0, 0));
            prop_assert_eq!(bursts.needless_rejections, 0);
            prop_assert!(bursts.max_window_admitted <= limit);
        }

        /// Against brute force over whole runs, with sweeps and several ids, on a daily
        /// calendar: violations and units over, needless rejections and their units, the
        /// worst period, and the exact calendar window's verdicts.
        #[test]
        fn periods_agree_with_brute_force(
            ceiling in 1u64..12,
            events in proptest::collection::vec(
                (0u32..3, 0u64..7 * H, any::<bool>(), 0u64..8, 0u8..8), 0..150),
        ) {
            let steps = brute::steps(&events);
            let mut p = judge(&intent(ceiling, day_utc()));
            for s in &steps {
                if s.sweep {
                    p.sweep(s.t);
                }
                p.on_decision(s.id, s.t, s.units, Decided::legit(s.admitted, 0));
            }
            let day = |t: Nanos| (MARCH_1 + t) / D;
            let counts = move |a: Nanos, s: Nanos| day(a) == day(s);
            // The whole day of t keeps room for u more.
            let needless = |log: &[(Nanos, u64)], t: Nanos, u: u64| {
                brute::units_in(log, t, |a, _| day(a) == day(t)) + u <= ceiling
            };
            brute::check(p.finish(), &steps, ceiling, counts, needless)?;
        }
    }
}
