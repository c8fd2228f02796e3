//! A `calendar_window` rule's calendar: its period (`window = "month"`), the weekday or day of
//! the month the period starts on, and its time zone.

use super::ctx::Ctx;
use crate::algorithms::AlgorithmKind;
use crate::calendar::{Calendar, Period, parse_weekday};
use crate::error::Result;
use crate::scenario::raw::{Int, RawRule, S};

/// The fields that place a calendar period, as a rule or an `[intent]` writes them beside its
/// `window`.
pub(super) struct CalendarFields<'a> {
    pub time_zone: Option<&'a S<String>>,
    pub week_starts: Option<&'a S<String>>,
    pub month_starts: Option<&'a S<Int>>,
}

impl CalendarFields<'_> {
    /// The first field written, by name, with where it is.
    pub fn first_written(&self) -> Option<(&'static str, std::ops::Range<usize>)> {
        [
            ("time_zone", self.time_zone.map(S::span)),
            ("week_starts", self.week_starts.map(S::span)),
            ("month_starts", self.month_starts.map(S::span)),
        ]
        .into_iter()
        .find_map(|(n, s)| Some((n, s?)))
    }
}

impl Ctx<'_> {
    /// The calendar of a `calendar_window` rule; `None` for any other algorithm, which may not
    /// carry a calendar's fields nor name a calendar period as its window.
    pub(super) fn rule_calendar(
        &self,
        kind: AlgorithmKind,
        r: &RawRule,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Option<&'static Calendar>> {
        let fields = CalendarFields {
            time_zone: r.time_zone.as_ref(),
            week_starts: r.week_starts.as_ref(),
            month_starts: r.month_starts.as_ref(),
        };
        let window = r.window.get_ref();
        if kind != AlgorithmKind::CalendarWindow {
            if let Some((name, span)) = fields.first_written() {
                return Err(self.err(
                    span,
                    &f(name),
                    format!(
                        "`{name}` belongs to a calendar window: set `algorithm = \"calendar_window\"`, or drop it"
                    ),
                ));
            }
            if Period::parse(window).is_some() {
                return Err(self.err(
                    r.window.span(),
                    &f("window"),
                    format!(
                        "`{window}` is a calendar period, which `algorithm = \"calendar_window\"` counts (in a `time_zone`); `{kind}` takes a length such as `30d`"
                    ),
                ));
            }
            return Ok(None);
        }
        if r.profile.is_some() {
            return Err(self.err(
                r.profile.as_ref().map(S::span).unwrap_or_default(),
                &f("profile"),
                "`calendar_window` is not a library profile: it takes no native parameters",
            ));
        }
        let Some(period) = Period::parse(window) else {
            let length = crate::time::parse_positive_duration(window).is_ok();
            let hint = if length {
                ": a window of one length is `fixed_window`'s"
            } else {
                ""
            };
            return Err(self.err(
                r.window.span(),
                &f("window"),
                format!(
                    "`calendar_window` counts per calendar period: write `day`, `week`, `month` or `year`, not `{window}`{hint}"
                ),
            ));
        };
        self.calendar_in(period, &fields, f).map(Some)
    }

    /// The calendar of `period` as `fields` place it: the weekday a week starts on, the day a
    /// month starts on, and the time zone (UTC when none is written).
    pub(super) fn calendar_in(
        &self,
        mut period: Period,
        fields: &CalendarFields,
        f: &dyn Fn(&str) -> String,
    ) -> Result<&'static Calendar> {
        if let Some(w) = fields.week_starts {
            let Period::Week(_) = period else {
                return Err(self.err(
                    w.span(),
                    &f("week_starts"),
                    "only a `week` window starts on a weekday",
                ));
            };
            let day = parse_weekday(w.get_ref()).ok_or_else(|| {
                self.err(
                    w.span(),
                    &f("week_starts"),
                    format!(
                        "`{}` is not a weekday: write monday ... sunday",
                        w.get_ref()
                    ),
                )
            })?;
            period = Period::Week(day);
        }
        if let Some(m) = fields.month_starts {
            let Period::Month(_) = period else {
                return Err(self.err(
                    m.span(),
                    &f("month_starts"),
                    "only a `month` window starts on a day of the month",
                ));
            };
            let day = self.whole(m, &f("month_starts"), "a day of the month", 1, 31)?;
            period = Period::Month(day as u8);
        }
        let zone = fields.time_zone;
        let calendar = Calendar::new(period, zone.map_or("UTC", |z| z.get_ref())).map_err(|e| {
            let span = zone.map(S::span).unwrap_or_default();
            self.err(span, &f("time_zone"), e.to_string())
        })?;
        Ok(calendar.intern())
    }

    /// A `per_tier` entry's calendar: its own period (`window`), on the base's clocks and
    /// anchors; the base's calendar when it names none.
    pub(super) fn tier_calendar(
        &self,
        base: &'static Calendar,
        window: Option<&S<String>>,
        field: &str,
    ) -> Result<&'static Calendar> {
        let Some(w) = window else {
            return Ok(base);
        };
        let period = match (Period::parse(w.get_ref()), base.period()) {
            (Some(Period::Week(_)), Period::Week(day)) => Period::Week(day),
            (Some(Period::Month(_)), Period::Month(day)) => Period::Month(day),
            (Some(p), _) => p,
            (None, _) => {
                return Err(self.err(
                    w.span(),
                    field,
                    format!(
                        "counts per calendar period, as its base does: write `day`, `week`, `month` or `year`, not `{}`",
                        w.get_ref()
                    ),
                ));
            }
        };
        let calendar =
            Calendar::new(period, base.zone_name()).expect("the base's zone was checked");
        Ok(calendar.intern())
    }
}
