//! Calendar window: one counter per calendar period (a day, a week, a month, a year) on the
//! clocks of a time zone, the quota of a usage plan.
//!
//! The fixed window's arithmetic over periods of unequal length: the window is the
//! [`Calendar`] period holding the request's absolute time (virtual time 0 is the scenario's
//! start instant, or a replayed trace's own time), so a monthly quota in São Paulo resets at
//! 03:00 UTC on the 1st and a day across a DST change lasts 23 or 25 hours. The Redis
//! equivalent is `INCRBY` on a key named after the period with `EXPIREAT` its end. Refused
//! requests are not counted.
//!
//! Kong's `rate-limiting` names its counter after the period but sets its lifetime from the
//! period's first admission (`EXPIRE` of 30 days for a month, 365 for a year; its
//! `expiration.lua`): in a 31-day month the counter expires a day early, and the next
//! admission starts it again from 0. A counter lifetime ([`CalendarWindow::with_counter_ttl`])
//! models it.

use super::{
    AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, ParamsError, beyond_capacity,
    check_common,
};
use crate::calendar::Calendar;
use crate::time::{DEFAULT_START, Nanos};

/// At most `limit` admissions per calendar period. Ignores `burst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalendarWindow {
    limit: u64,
    calendar: &'static Calendar,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
    /// How long a period's counter lives after its first admission; `None`: to the period's
    /// end.
    counter_ttl: Option<Nanos>,
}

/// Per-key state: the period last seen (its bounds in ns since the Unix epoch), the
/// admissions counted in it, and when that count expires (with a counter lifetime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CalendarWindowState {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) count: u64,
    pub(crate) expires: u64,
}

impl CalendarWindow {
    /// `params.limit` per period of `calendar`; `window` and `burst` are not used (the
    /// period's length is the calendar's). Fails if `limit` is 0.
    pub fn new(params: Params, calendar: &'static Calendar) -> Result<Self, ParamsError> {
        check_common(Self::KIND, params)?;
        Ok(CalendarWindow {
            limit: params.limit,
            calendar,
            epoch_ns: DEFAULT_START,
            counter_ttl: None,
        })
    }

    /// The same limiter whose period counter lives `ttl` from its first admission (Kong's
    /// month and year counters); `None`: to the period's end.
    pub fn with_counter_ttl(self, ttl: Option<Nanos>) -> Self {
        CalendarWindow {
            counter_ttl: ttl,
            ..self
        }
    }

    /// How long a period's counter lives after its first admission, if not to the period's end.
    pub fn counter_ttl(&self) -> Option<Nanos> {
        self.counter_ttl
    }

    /// The calendar the periods come from.
    pub fn calendar(&self) -> &'static Calendar {
        self.calendar
    }

    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    pub fn epoch_ns(&self) -> u64 {
        self.epoch_ns
    }

    /// The same limiter with virtual time 0 at `epoch_ns` after the Unix epoch.
    pub fn starting_at(self, epoch_ns: u64) -> Self {
        CalendarWindow { epoch_ns, ..self }
    }

    fn at(&self, now: Nanos) -> u64 {
        self.epoch_ns.saturating_add(now)
    }

    /// Moves the state to the period holding `at` when it has passed, and drops a count whose
    /// counter has expired.
    fn roll(&self, s: &mut CalendarWindowState, at: u64) {
        if at >= s.end {
            let (start, end) = self.calendar.bounds_cached(at);
            *s = CalendarWindowState {
                start,
                end,
                count: 0,
                expires: 0,
            };
        } else if self.counter_ttl.is_some() && s.count > 0 && at >= s.expires {
            s.count = 0;
        }
    }

    /// `units` more on the period's counter at `at`, which starts its lifetime if it held
    /// nothing.
    fn count(&self, s: &mut CalendarWindowState, at: u64, units: u64) {
        if s.count == 0
            && let Some(ttl) = self.counter_ttl
        {
            s.expires = at.saturating_add(ttl);
        }
        s.count = s.count.saturating_add(units);
    }
}

impl Limiter for CalendarWindow {
    type State = CalendarWindowState;
    const KIND: AlgorithmKind = AlgorithmKind::CalendarWindow;

    fn new_state(&self, now: Nanos) -> CalendarWindowState {
        let (start, end) = self.calendar.bounds_cached(self.at(now));
        CalendarWindowState {
            start,
            end,
            count: 0,
            expires: 0,
        }
    }

    fn decide_n(&self, s: &mut CalendarWindowState, now: Nanos, cost: Cost) -> Decision {
        let at = self.at(now);
        self.roll(s, at);
        // The period holds `now`, so its end is after virtual time 0.
        let reset_at = s.end - self.epoch_ns;
        let cost = u64::from(cost);
        if cost > self.limit {
            let fresh_at = if s.count == 0 { now } else { reset_at };
            return beyond_capacity(now, fresh_at, self.limit.saturating_sub(s.count));
        }
        if s.count + cost <= self.limit {
            self.count(s, at, cost);
            Decision::allow(self.limit - s.count, reset_at)
        } else {
            Decision {
                outcome: Outcome::Reject {
                    retry_after: reset_at - now,
                },
                remaining: self.limit.saturating_sub(s.count),
                reset_at,
            }
        }
    }

    /// The current period's count grows by `units`, past the limit if need be (`INCRBY`).
    fn charge(&self, s: &mut CalendarWindowState, now: Nanos, units: Cost) {
        let at = self.at(now);
        self.roll(s, at);
        self.count(s, at, u64::from(units));
    }

    /// The period's count drops by `units` while the period charged is still the key's.
    fn refund(&self, s: &mut CalendarWindowState, _: Nanos, charged_at: Nanos, units: Cost) {
        if (s.start..s.end).contains(&self.at(charged_at)) {
            s.count = s.count.saturating_sub(u64::from(units));
        }
    }

    fn redis_bytes(_: &CalendarWindowState) -> usize {
        super::redis::STRING_KEY
    }

    fn is_idle(&self, s: &CalendarWindowState, now: Nanos) -> bool {
        let at = self.at(now);
        s.count == 0 || at >= s.end || self.counter_ttl.is_some() && at >= s.expires
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Period;
    use crate::time::{NANOS_PER_DAY as D, NANOS_PER_HOUR as H};

    /// `limit` per `period` in `zone`, virtual time 0 at 2026-01-01T00:00Z.
    fn quota(limit: u64, period: Period, zone: &str) -> CalendarWindow {
        let calendar = Calendar::new(period, zone).unwrap().intern();
        let params = Params {
            limit,
            window: calendar.longest(),
            burst: 0,
        };
        CalendarWindow::new(params, calendar).unwrap()
    }

    #[test]
    fn a_monthly_quota_in_sao_paulo_resets_at_03_00_utc_on_the_first() {
        // 2 per month. January in São Paulo ends at 2026-02-01T03:00Z: virtual 31 d + 3 h.
        let q = quota(2, Period::Month(1), "America/Sao_Paulo");
        let feb = 31 * D + 3 * H;
        let mut s = q.new_state(0);
        // 2026-01-01T00:00Z is still 31 December in São Paulo: December's period.
        assert_eq!(q.decide(&mut s, 0), Decision::allow(1, 3 * H));
        assert_eq!(q.decide(&mut s, H), Decision::allow(0, 3 * H));
        assert_eq!(
            q.decide(&mut s, 2 * H).outcome,
            Outcome::Reject { retry_after: H }
        );
        // January: two more, then refusals until February starts.
        assert_eq!(q.decide(&mut s, 3 * H), Decision::allow(1, feb));
        assert_eq!(q.decide(&mut s, 10 * D), Decision::allow(0, feb));
        let d = q.decide(&mut s, feb - 1);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!((d.remaining, d.reset_at), (0, feb));
        assert_eq!(s.count, 2);
        assert!(!q.is_idle(&s, feb - 1));
        assert!(q.is_idle(&s, feb));
        // February runs 28 days.
        assert_eq!(q.decide(&mut s, feb), Decision::allow(1, feb + 28 * D));
    }

    /// Kong's month: a counter of 30 days from the month's first admission. January has 31:
    /// its counter from 1 January 00:00 expires on 31 January 00:00, and that day counts
    /// afresh.
    #[test]
    fn a_counter_that_expires_before_its_month_ends_counts_afresh() {
        let q = quota(2, Period::Month(1), "UTC").with_counter_ttl(Some(30 * D));
        let mut s = q.new_state(0);
        let feb = 31 * D;
        assert_eq!(q.decide(&mut s, 0), Decision::allow(1, feb));
        assert_eq!(q.decide(&mut s, D), Decision::allow(0, feb));
        assert!(!q.decide(&mut s, 2 * D).outcome.is_admitted());
        assert!(!q.decide(&mut s, 30 * D - 1).outcome.is_admitted());
        assert!(!q.is_idle(&s, 30 * D - 1));
        assert!(q.is_idle(&s, 30 * D), "the counter has expired");
        assert_eq!(q.decide(&mut s, 30 * D), Decision::allow(1, feb));
        assert_eq!(q.decide(&mut s, 30 * D + H), Decision::allow(0, feb));
        assert!(!q.decide(&mut s, 30 * D + 2 * H).outcome.is_admitted());
        // February's counter starts with February's first admission.
        assert_eq!(
            q.decide(&mut s, feb + 5 * H),
            Decision::allow(1, feb + 28 * D)
        );
        assert_eq!(s.expires, DEFAULT_START + feb + 5 * H + 30 * D);
        // Without a lifetime the count holds to the month's end.
        let plain = quota(2, Period::Month(1), "UTC");
        let mut s = plain.new_state(0);
        plain.decide(&mut s, 0);
        plain.decide(&mut s, D);
        assert!(!plain.decide(&mut s, 30 * D).outcome.is_admitted());
    }

    #[test]
    fn a_weekly_quota_from_sunday() {
        // 2026-01-01 is a Thursday: the week from Sunday 2025-12-28 ends Sunday 2026-01-04.
        let q = quota(1, Period::Week(jiff::civil::Weekday::Sunday), "UTC");
        let mut s = q.new_state(0);
        assert_eq!(q.decide(&mut s, 0), Decision::allow(0, 3 * D));
        assert_eq!(
            q.decide(&mut s, 3 * D - 1).outcome,
            Outcome::Reject { retry_after: 1 }
        );
        assert_eq!(q.decide(&mut s, 3 * D), Decision::allow(0, 10 * D));
    }

    #[test]
    fn costs_charges_and_refunds_stay_in_their_period() {
        let q = quota(10, Period::Day, "UTC");
        let mut s = q.new_state(0);
        assert_eq!(q.decide_n(&mut s, H, 7), Decision::allow(3, D));
        // A request above the whole quota is refused and counts nothing.
        let d = q.decide_n(&mut s, H, 11);
        assert_eq!(
            (d.outcome, d.remaining),
            (Outcome::Reject { retry_after: D - H }, 3)
        );
        q.charge(&mut s, 2 * H, 5);
        assert_eq!(s.count, 12);
        q.refund(&mut s, 3 * H, H, 4);
        assert_eq!(s.count, 8);
        // A refund of yesterday's charge gives nothing back today.
        assert_eq!(q.decide(&mut s, D), Decision::allow(9, 2 * D));
        q.refund(&mut s, D + H, H, 1);
        assert_eq!(s.count, 1);
    }

    /// The zones and periods the property draws from: DST in both hemispheres, a zone whose
    /// DST jumps at midnight, fixed offsets, every period kind.
    fn calendars() -> Vec<&'static Calendar> {
        let zones = [
            "UTC",
            "America/New_York",
            "America/Havana",
            "Australia/Lord_Howe",
            "+05:45",
        ];
        let periods = [
            Period::Day,
            Period::Week(jiff::civil::Weekday::Sunday),
            Period::Month(1),
            Period::Month(31),
            Period::Year,
        ];
        zones
            .iter()
            .flat_map(|z| periods.map(|p| Calendar::new(p, z).unwrap().intern()))
            .collect()
    }

    proptest::proptest! {
        /// The limiter admits a request exactly when its period's count (the period found
        /// afresh by the calendar, no state) plus its cost stays within the limit; its reset is
        /// the period's end. Keys of other calendars interleave on the thread's cache.
        #[test]
        fn decides_as_a_count_per_period(
            which in 0usize..25,
            limit in 1u64..6,
            epoch_s in 1_600_000_000u64..1_900_000_000,
            ttl_days in proptest::option::of(1u64..40),
            steps in proptest::collection::vec((0u64..20 * D, 1u32..4), 1..60),
        ) {
            let calendar = calendars()[which];
            let other = calendars()[(which + 7) % 25];
            let params = Params { limit, window: calendar.longest(), burst: 0 };
            let epoch = epoch_s * 1_000_000_000;
            let ttl = ttl_days.map(|d| d * D);
            let q = CalendarWindow::new(params, calendar)
                .unwrap()
                .starting_at(epoch)
                .with_counter_ttl(ttl);
            let mut s = q.new_state(0);
            // Per period start: its counter's count and expiry (as Redis holds a key).
            let mut counters: std::collections::HashMap<u64, (u64, u64)> = Default::default();
            let mut t = 0;
            for (gap, cost) in steps {
                // Mostly short gaps, so that periods fill up.
                t += gap % (calendar.longest() / 8);
                let at = epoch + t;
                let (start, end) = calendar.bounds(at);
                other.bounds_cached(at);
                let (count, expires) = counters.entry(start).or_default();
                if ttl.is_some() && at >= *expires {
                    *count = 0;
                }
                let d = q.decide_n(&mut s, t, cost);
                let admit = *count + u64::from(cost) <= limit;
                proptest::prop_assert_eq!(d.outcome.is_admitted(), admit);
                // A cost above the whole quota is refused, the state fresh again at once when
                // the period has counted nothing.
                let reset = if u64::from(cost) > limit && *count == 0 { t } else { end - epoch };
                proptest::prop_assert_eq!(d.reset_at, reset);
                if admit {
                    if *count == 0 {
                        *expires = at + ttl.unwrap_or(0);
                    }
                    *count += u64::from(cost);
                }
                proptest::prop_assert_eq!(d.remaining, limit.saturating_sub(*count));
            }
        }
    }
}
