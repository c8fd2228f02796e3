//! Calendar periods: a day, a week, a month or a year on the clocks of a time zone.
//!
//! Quotas are sold per calendar period ("100,000 requests a month"), and a period's length
//! depends on where its clock hangs: a day in a zone with daylight saving time lasts 23 or 25
//! hours twice a year, a month 28 to 31 days, and midnight in São Paulo is 03:00 UTC. A
//! [`Calendar`] finds the period an absolute instant (nanoseconds since the Unix epoch) falls in,
//! with the time zone database bundled into the binary (jiff's copy of the IANA database), so a
//! scenario decides the same on every machine whatever tzdata it has installed.
//!
//! A period starts at the first instant of its first day: local midnight, or the instant the
//! clocks jump to when a transition skips midnight (jiff's "compatible" disambiguation). Days
//! are civil days, weeks start on a named weekday (Monday by default, as ISO 8601's), months
//! on an anchor day (the 1st by default; an anchor past a short month's end falls on its last
//! day, as billing cycles do), and years on 1 January.

use crate::time::{NANOS_PER_DAY, NANOS_PER_HOUR, Nanos};
use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use jiff::tz::{Offset, TimeZone};
use std::cell::Cell;
use std::fmt;
use std::sync::Mutex;

/// The length of the calendar period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// A civil day, midnight to midnight.
    Day,
    /// Seven days from the named weekday.
    Week(Weekday),
    /// From the anchor day (1 to 31) of one month to the anchor day of the next; an anchor past
    /// a month's last day falls on that last day.
    Month(u8),
    /// From 1 January to 1 January.
    Year,
}

impl Period {
    /// The word a scenario writes for the period (`day`, `week`, `month`, `year`).
    pub fn word(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week(_) => "week",
            Period::Month(_) => "month",
            Period::Year => "year",
        }
    }

    /// The period a scenario's `window` names, with weeks from Monday and months from the 1st;
    /// `None` when the text is not one of the four words.
    pub fn parse(text: &str) -> Option<Period> {
        Some(match text.trim() {
            "day" => Period::Day,
            "week" => Period::Week(Weekday::Monday),
            "month" => Period::Month(1),
            "year" => Period::Year,
            _ => return None,
        })
    }

    /// The longest such period in civil days (before a time zone adds its hour of DST).
    fn longest_days(self) -> u64 {
        match self {
            Period::Day => 1,
            Period::Week(_) => 7,
            Period::Month(_) => 31,
            Period::Year => 366,
        }
    }
}

/// A weekday by its English name (`monday`, case-insensitive, or its first three letters).
pub fn parse_weekday(text: &str) -> Option<Weekday> {
    let t = text.trim().to_ascii_lowercase();
    WEEKDAYS
        .iter()
        .find(|(name, _)| t == *name || (t.len() == 3 && name.starts_with(t.as_str())))
        .map(|&(_, w)| w)
}

const WEEKDAYS: [(&str, Weekday); 7] = [
    ("monday", Weekday::Monday),
    ("tuesday", Weekday::Tuesday),
    ("wednesday", Weekday::Wednesday),
    ("thursday", Weekday::Thursday),
    ("friday", Weekday::Friday),
    ("saturday", Weekday::Saturday),
    ("sunday", Weekday::Sunday),
];

fn weekday_name(w: Weekday) -> &'static str {
    WEEKDAYS
        .iter()
        .find(|(_, d)| *d == w)
        .expect("every weekday")
        .0
}

/// Why a time zone was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ZoneError(String);

/// A calendar period in a time zone.
#[derive(Clone)]
pub struct Calendar {
    period: Period,
    zone: TimeZone,
    /// The zone as the scenario wrote it once checked (`America/Sao_Paulo`, `UTC`, `-03:00`).
    zone_name: String,
}

impl PartialEq for Calendar {
    fn eq(&self, other: &Calendar) -> bool {
        self.period == other.period && self.zone_name == other.zone_name
    }
}

impl Eq for Calendar {}

impl fmt::Debug for Calendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Calendar({self})")
    }
}

/// "month in America/Sao_Paulo", "week from sunday in UTC", "month from day 15 in -03:00".
impl fmt::Display for Calendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.period.word())?;
        match self.period {
            Period::Week(w) if w != Weekday::Monday => write!(f, " from {}", weekday_name(w))?,
            Period::Month(d) if d != 1 => write!(f, " from day {d}")?,
            _ => {}
        }
        write!(f, " in {}", self.zone_name)
    }
}

/// The time zone a scenario names: `UTC`, an IANA name (`America/Sao_Paulo`), or a fixed
/// offset from UTC (`-03:00`, `+05:30`, `+09`).
pub fn time_zone(text: &str) -> Result<(TimeZone, String), ZoneError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("utc") || t == "Z" {
        return Ok((TimeZone::UTC, "UTC".to_string()));
    }
    if let Some(sign) = t.chars().next().filter(|c| *c == '+' || *c == '-') {
        let offset = fixed_offset(&t[1..]).ok_or_else(|| {
            ZoneError(format!(
                "`{t}` is not an offset from UTC: write `+HH:MM` or `-HH:MM` (at most 18:00)"
            ))
        })?;
        let seconds = if sign == '-' { -offset } else { offset };
        let offset = Offset::from_seconds(seconds).expect("at most 18 hours");
        return Ok((TimeZone::fixed(offset), t.to_string()));
    }
    match TimeZone::get(t) {
        Ok(zone) => Ok((zone, zone_canonical(t))),
        Err(_) => {
            let names: Vec<String> = jiff::tz::db().available().map(|n| n.to_string()).collect();
            // Hundreds of names: a close one is worth naming, the list is not.
            let hint = crate::suggest::closest(t, names.iter().map(String::as_str))
                .map(|close| format!(": did you mean `{close}`?"))
                .unwrap_or_default();
            Err(ZoneError(format!(
                "unknown time zone `{t}`{hint} (an IANA name such as `America/Sao_Paulo`, UTC, or an offset such as `-03:00`)"
            )))
        }
    }
}

/// The database's own spelling of a name it found (lookups ignore case).
fn zone_canonical(name: &str) -> String {
    jiff::tz::db()
        .available()
        .map(|n| n.to_string())
        .find(|n| n.eq_ignore_ascii_case(name))
        .unwrap_or_else(|| name.to_string())
}

/// `HH`, `HH:MM` or `HHMM`, at most 18 hours: the offset in seconds.
fn fixed_offset(text: &str) -> Option<i32> {
    let (h, m) = match text.split_once(':') {
        Some((h, m)) => (h, m),
        None if text.len() == 4 => text.split_at(2),
        None => (text, "00"),
    };
    let digits = |s: &str| (1..=2).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || m.len() != 2 || !digits(m) {
        return None;
    }
    let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
    (m < 60 && h * 60 + m <= 18 * 60).then_some(h * 3600 + m * 60)
}

/// Every calendar built so far, each once: limiters hold a `&'static` to theirs so that they
/// stay `Copy`, and the set of distinct calendars a process meets is small.
static INTERNED: Mutex<Vec<&'static Calendar>> = Mutex::new(Vec::new());

thread_local! {
    /// The period last looked up on this thread: (calendar, start, end). Keys of one rule roll
    /// over into the same period one after the other.
    static LAST: Cell<(usize, u64, u64)> = const { Cell::new((0, 0, 0)) };
}

impl Calendar {
    /// `period` on the clocks of `zone` (see [`time_zone`]).
    pub fn new(period: Period, zone: &str) -> Result<Calendar, ZoneError> {
        if let Period::Month(d) = period {
            assert!((1..=31).contains(&d), "a month's anchor day is 1 to 31");
        }
        let (zone, zone_name) = time_zone(zone)?;
        Ok(Calendar {
            period,
            zone,
            zone_name,
        })
    }

    /// The one shared copy of this calendar.
    pub fn intern(self) -> &'static Calendar {
        let mut all = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = all.iter().find(|c| ***c == self) {
            return c;
        }
        let leaked: &'static Calendar = Box::leak(Box::new(self));
        all.push(leaked);
        leaked
    }

    /// The period's kind and anchor.
    pub fn period(&self) -> Period {
        self.period
    }

    /// The time zone as written (`America/Sao_Paulo`, `UTC`, `-03:00`).
    pub fn zone_name(&self) -> &str {
        &self.zone_name
    }

    /// An upper bound of any period's length: its longest run of civil days, plus an hour when
    /// the zone is not fixed (a day that DST lengthens). Figures that need one window length
    /// (the worst rolling window) use it.
    pub fn longest(&self) -> Nanos {
        let dst = if self.zone.to_fixed_offset().is_ok() {
            0
        } else {
            NANOS_PER_HOUR
        };
        self.period.longest_days() * NANOS_PER_DAY + dst
    }

    /// The period holding `at` (ns since the Unix epoch): its first instant and the first
    /// instant of the next one, in ns since the Unix epoch (a start before the epoch is 0).
    pub fn bounds(&self, at: u64) -> (u64, u64) {
        let ts = Timestamp::from_nanosecond(i128::from(at)).expect("u64 ns is a timestamp");
        let day = self.zone.to_datetime(ts).date();
        let (start, next) = match self.period {
            Period::Day => (day, day.tomorrow().expect("in range")),
            Period::Week(first) => {
                let back =
                    (day.weekday().to_monday_zero_offset() + 7 - first.to_monday_zero_offset()) % 7;
                let start = day
                    .checked_sub(jiff::Span::new().days(back))
                    .expect("in range");
                (
                    start,
                    start
                        .checked_add(jiff::Span::new().days(7))
                        .expect("in range"),
                )
            }
            Period::Month(anchor) => {
                let this = anchored(day.year(), day.month(), anchor);
                let start = if day >= this {
                    this
                } else {
                    let prev = day.first_of_month().yesterday().expect("in range");
                    anchored(prev.year(), prev.month(), anchor)
                };
                let after = start.last_of_month().tomorrow().expect("in range");
                (start, anchored(after.year(), after.month(), anchor))
            }
            Period::Year => {
                let start = day.first_of_year();
                (start, start.last_of_year().tomorrow().expect("in range"))
            }
        };
        (self.instant(start), self.instant(next))
    }

    /// [`Calendar::bounds`], remembering the last period this thread looked up: keys roll over
    /// into a new period one after another, and each then finds it without the tz arithmetic.
    pub fn bounds_cached(&'static self, at: u64) -> (u64, u64) {
        let id = self as *const Calendar as usize;
        LAST.with(|last| {
            let (c, start, end) = last.get();
            if c == id && (start..end).contains(&at) {
                return (start, end);
            }
            let (start, end) = self.bounds(at);
            last.set((id, start, end));
            (start, end)
        })
    }

    /// The civil date of `at` (ns since the Unix epoch) on this calendar's clocks.
    fn date_of(&self, at: u64) -> Date {
        let ts = Timestamp::from_nanosecond(i128::from(at)).expect("u64 ns is a timestamp");
        self.zone.to_datetime(ts).date()
    }

    /// The period starting at `start` as a reader names it: its first day (`2026-02-01`),
    /// or the month (`2026-02`) or year (`2026`) when it starts on the first.
    pub fn label(&self, start: u64) -> String {
        let d = self.date_of(start);
        match self.period {
            Period::Month(1) => format!("{:04}-{:02}", d.year(), d.month()),
            Period::Year => format!("{:04}", d.year()),
            _ => d.to_string(),
        }
    }

    /// The day of the period starting at `start` that `at` falls on, on this calendar's
    /// clocks: 1 on its first day.
    pub fn day_of_period(&self, start: u64, at: u64) -> u32 {
        let (first, day) = (self.date_of(start), self.date_of(at));
        let days = first.until(day).expect("dates in range").get_days();
        u32::try_from(days.max(0)).unwrap_or(0) + 1
    }

    /// The first instant of `date` on this calendar's clocks, in ns since the Unix epoch.
    fn instant(&self, date: Date) -> u64 {
        let ns = date
            .to_zoned_datetime(self.zone.clone())
            .expect("a date the clock reaches")
            .timestamp()
            .as_nanosecond();
        u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
    }
}

/// The anchor day of a month, or its last day when the month is shorter.
fn anchored(year: i16, month: i8, anchor: u8) -> Date {
    let first = Date::new(year, month, 1).expect("a month");
    let day = (anchor as i8).min(first.days_in_month());
    Date::new(year, month, day).expect("within the month")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC as S;

    /// ns since the Unix epoch of a UTC civil time.
    fn utc(y: i16, mo: i8, d: i8, h: i8, mi: i8) -> u64 {
        let ts = Date::new(y, mo, d)
            .unwrap()
            .at(h, mi, 0, 0)
            .to_zoned_datetime(TimeZone::UTC)
            .unwrap()
            .timestamp();
        ts.as_nanosecond() as u64
    }

    fn cal(period: Period, zone: &str) -> Calendar {
        Calendar::new(period, zone).unwrap()
    }

    #[test]
    fn a_sao_paulo_month_runs_from_03_00_utc_on_the_first() {
        // São Paulo has kept -03:00 all year since 2019: its months start at 03:00 UTC.
        let c = cal(Period::Month(1), "America/Sao_Paulo");
        // 2026-02-01 02:59 UTC is still 31 January, 23:59 in São Paulo.
        let jan = (utc(2026, 1, 1, 3, 0), utc(2026, 2, 1, 3, 0));
        assert_eq!(c.bounds(utc(2026, 2, 1, 2, 59)), jan);
        assert_eq!(c.bounds(jan.1 - 1), jan);
        // One nanosecond later February starts; it lasts 28 days.
        let feb = c.bounds(jan.1);
        assert_eq!(feb, (jan.1, utc(2026, 3, 1, 3, 0)));
        assert_eq!(feb.1 - feb.0, 28 * NANOS_PER_DAY);
        assert_eq!(c.to_string(), "month in America/Sao_Paulo");
    }

    #[test]
    fn a_day_lasts_23_and_25_hours_across_new_york_dst() {
        let c = cal(Period::Day, "America/New_York");
        // 2026-03-08: clocks go 02:00 EST → 03:00 EDT. The day runs 05:00Z to 04:00Z next day.
        let spring = c.bounds(utc(2026, 3, 8, 12, 0));
        assert_eq!(spring, (utc(2026, 3, 8, 5, 0), utc(2026, 3, 9, 4, 0)));
        assert_eq!(spring.1 - spring.0, 23 * NANOS_PER_HOUR);
        // 2026-11-01: 02:00 EDT → 01:00 EST. The day runs 04:00Z to 05:00Z next day.
        let autumn = c.bounds(utc(2026, 11, 1, 12, 0));
        assert_eq!(autumn, (utc(2026, 11, 1, 4, 0), utc(2026, 11, 2, 5, 0)));
        assert_eq!(autumn.1 - autumn.0, 25 * NANOS_PER_HOUR);
        // The instants around the jump belong to the day they are on.
        assert_eq!(c.bounds(utc(2026, 3, 8, 6, 59)), spring);
        assert_eq!(c.bounds(utc(2026, 3, 8, 7, 0)), spring);
        assert_eq!(c.longest(), 25 * NANOS_PER_HOUR);
    }

    #[test]
    fn a_day_whose_midnight_is_skipped_starts_when_the_clocks_jump() {
        // Havana springs forward at midnight: 2026-03-08 00:00 CST is 01:00 CDT, 05:00Z.
        let c = cal(Period::Day, "America/Havana");
        let (start, end) = c.bounds(utc(2026, 3, 8, 12, 0));
        assert_eq!(start, utc(2026, 3, 8, 5, 0));
        assert_eq!(end, utc(2026, 3, 9, 4, 0));
    }

    #[test]
    fn weeks_start_on_their_weekday() {
        // 2026-01-07 is a Wednesday.
        let at = utc(2026, 1, 7, 12, 0);
        let iso = cal(Period::Week(Weekday::Monday), "UTC");
        assert_eq!(
            iso.bounds(at),
            (utc(2026, 1, 5, 0, 0), utc(2026, 1, 12, 0, 0))
        );
        let sunday = cal(Period::Week(Weekday::Sunday), "UTC");
        assert_eq!(
            sunday.bounds(at),
            (utc(2026, 1, 4, 0, 0), utc(2026, 1, 11, 0, 0))
        );
        // On its first day a week starts that midnight.
        let wed = cal(Period::Week(Weekday::Wednesday), "UTC");
        assert_eq!(
            wed.bounds(at),
            (utc(2026, 1, 7, 0, 0), utc(2026, 1, 14, 0, 0))
        );
        assert_eq!(sunday.to_string(), "week from sunday in UTC");
    }

    #[test]
    fn an_anchor_past_a_short_month_falls_on_its_last_day() {
        let c = cal(Period::Month(31), "UTC");
        // 31 Jan → 28 Feb → 31 Mar.
        assert_eq!(
            c.bounds(utc(2026, 2, 10, 0, 0)),
            (utc(2026, 1, 31, 0, 0), utc(2026, 2, 28, 0, 0))
        );
        assert_eq!(
            c.bounds(utc(2026, 3, 1, 0, 0)),
            (utc(2026, 2, 28, 0, 0), utc(2026, 3, 31, 0, 0))
        );
        let mid = cal(Period::Month(15), "-03:00");
        assert_eq!(
            mid.bounds(utc(2026, 1, 15, 2, 59)),
            (utc(2025, 12, 15, 3, 0), utc(2026, 1, 15, 3, 0))
        );
        assert_eq!(mid.to_string(), "month from day 15 in -03:00");
        assert_eq!(mid.longest(), 31 * NANOS_PER_DAY);
    }

    #[test]
    fn years_and_leap_days() {
        let c = cal(Period::Year, "Asia/Tokyo");
        let (start, end) = c.bounds(utc(2028, 6, 1, 0, 0));
        assert_eq!(
            (start, end),
            (utc(2027, 12, 31, 15, 0), utc(2028, 12, 31, 15, 0))
        );
        assert_eq!(end - start, 366 * NANOS_PER_DAY);
    }

    #[test]
    fn zones_are_checked_and_named_once() {
        assert_eq!(time_zone("utc").unwrap().1, "UTC");
        assert_eq!(
            time_zone("america/sao_paulo").unwrap().1,
            "America/Sao_Paulo"
        );
        let (z, _) = time_zone("+05:30").unwrap();
        assert_eq!(z.to_fixed_offset().unwrap().seconds(), 5 * 3600 + 1800);
        assert_eq!(
            time_zone("-03")
                .unwrap()
                .0
                .to_fixed_offset()
                .unwrap()
                .seconds(),
            -10800
        );
        for bad in ["+19:00", "-3:7", "+ab"] {
            assert!(time_zone(bad).unwrap_err().0.contains("offset"), "{bad}");
        }
        let e = time_zone("America/Sao_Paolo").unwrap_err().0;
        assert!(e.contains("did you mean `America/Sao_Paulo`"), "{e}");
    }

    #[test]
    fn interned_calendars_are_shared_and_the_cache_follows_the_calendar() {
        let a = cal(Period::Day, "Europe/Berlin").intern();
        let b = cal(Period::Day, "Europe/Berlin").intern();
        assert!(std::ptr::eq(a, b));
        let other = cal(Period::Day, "UTC").intern();
        let at = utc(2026, 7, 1, 23, 30);
        // 23:30Z is already 2 July in Berlin (+02:00), still 1 July in UTC.
        assert_eq!(
            a.bounds_cached(at),
            (utc(2026, 7, 1, 22, 0), utc(2026, 7, 2, 22, 0))
        );
        assert_eq!(
            other.bounds_cached(at),
            (utc(2026, 7, 1, 0, 0), utc(2026, 7, 2, 0, 0))
        );
        assert_eq!(a.bounds_cached(at + S), a.bounds(at));
    }

    #[test]
    fn periods_are_labelled_and_their_days_counted_on_local_clocks() {
        let c = cal(Period::Month(1), "America/Sao_Paulo");
        let (start, _) = c.bounds(utc(2026, 2, 10, 0, 0));
        assert_eq!(c.label(start), "2026-02");
        // 2026-02-19 02:00Z is still 18 February in São Paulo: day 18.
        assert_eq!(c.day_of_period(start, utc(2026, 2, 19, 2, 0)), 18);
        assert_eq!(c.day_of_period(start, utc(2026, 2, 19, 3, 0)), 19);
        assert_eq!(c.day_of_period(start, start), 1);
        let w = cal(Period::Week(Weekday::Sunday), "UTC");
        assert_eq!(w.label(w.bounds(utc(2026, 1, 7, 0, 0)).0), "2026-01-04");
        let y = cal(Period::Year, "UTC");
        assert_eq!(y.label(utc(2026, 1, 1, 0, 0)), "2026");
    }

    #[test]
    fn weekday_names() {
        assert_eq!(parse_weekday("Sunday"), Some(Weekday::Sunday));
        assert_eq!(parse_weekday("sun"), Some(Weekday::Sunday));
        assert_eq!(parse_weekday("su"), None);
        assert_eq!(Period::parse("month"), Some(Period::Month(1)));
        assert_eq!(Period::parse("1 month"), None);
    }
}
