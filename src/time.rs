//! Virtual time and the units scenarios are written in.
//!
//! Simulated time is a plain `u64` of nanoseconds since the start of the run. Nothing in the
//! engine reads the wall clock. Durations (`500ms`, `59.5s`, `1h`) and rates (`100/min`,
//! `2.5/s`) are parsed into exact integers and exact rationals so that no decision ever depends on
//! floating-point rounding.

use std::fmt;

/// A point in virtual time or a span of it, in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds in one microsecond.
pub const NANOS_PER_MICRO: Nanos = 1_000;
/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: Nanos = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SEC: Nanos = 1_000_000_000;
/// Nanoseconds in one minute.
pub const NANOS_PER_MIN: Nanos = 60 * NANOS_PER_SEC;
/// Nanoseconds in one hour.
pub const NANOS_PER_HOUR: Nanos = 60 * NANOS_PER_MIN;
/// Nanoseconds in one day (24 hours; virtual time has no leap seconds or time zones).
pub const NANOS_PER_DAY: Nanos = 24 * NANOS_PER_HOUR;

/// The instant (ns since the Unix epoch) virtual time 0 stands for in a synthetic scenario that
/// states no `start`: 2026-01-01T00:00:00Z. Only profiles of libraries that read the wall clock
/// and align windows to it (or round its floats) see it; a replay uses its trace's own time.
pub const DEFAULT_START: Nanos = 1_767_225_600 * NANOS_PER_SEC;

/// Why a duration or rate string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The value is empty or only whitespace.
    #[error("empty value")]
    Empty,
    /// The numeric part is not a plain decimal number (digits, at most one `.`, `_` only between
    /// digits); the whole text.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// The value starts with `-`; the whole text.
    #[error("negative values are not allowed (`{0}`)")]
    Negative(String),
    /// The suffix after the number is not a known unit.
    #[error("unknown unit `{unit}` (expected one of {expected})")]
    UnknownUnit {
        /// The suffix as written.
        unit: String,
        /// The accepted units, comma-separated, for the message.
        expected: &'static str,
    },
    /// A duration with a fraction of a nanosecond (`1.5ns`, `0.0001us`); the whole text.
    #[error("`{0}` is not a whole number of nanoseconds")]
    SubNanosecond(String),
    /// A duration past virtual time's end (u64 nanoseconds).
    #[error("`{0}` is too large: a duration is at most 18446744073709551615ns (about 584 years)")]
    Overflow(String),
    /// A rate whose exact fraction does not fit: rates are kept as whole requests per whole
    /// nanoseconds, each a u64.
    #[error(
        "`{0}` is out of range: a rate, as whole requests per whole nanoseconds, must have both at most 18446744073709551615"
    )]
    RateOverflow(String),
    /// A rate with a zero count, or a zero duration where [`parse_positive_duration`] needs a
    /// positive one; the whole text.
    #[error("`{0}` must be greater than zero")]
    Zero(String),
    /// A rate without the `/` between count and span; the whole text.
    #[error("`{0}` is not a rate: write it as COUNT/UNIT, e.g. `100/min` or `2.5/s`")]
    NotARate(String),
    /// A rate whose span after `/` is zero (`5/0s`); the whole text.
    #[error("`{0}` is a rate per zero time: the span after `/` must be greater than zero")]
    PerZero(String),
    /// A number written with an exponent (`1.5e3ms`); the whole text.
    #[error(
        "`{0}` is not a plain decimal number: exponents are not accepted (write e.g. `1500ms`, not `1.5e3ms`)"
    )]
    Exponent(String),
}

const DURATION_UNITS: &str = "ns, us, ms, s, m/min, h, d";

fn unit_nanos(unit: &str) -> Option<Nanos> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" => NANOS_PER_MICRO,
        "ms" => NANOS_PER_MILLI,
        "s" | "sec" => NANOS_PER_SEC,
        "m" | "min" => NANOS_PER_MIN,
        "h" | "hour" => NANOS_PER_HOUR,
        "d" | "day" => NANOS_PER_DAY,
        _ => return None,
    })
}

/// A non-negative decimal number kept exact: `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

fn parse_decimal(text: &str) -> Result<Decimal, UnitError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitError::Empty);
    }
    if t.starts_with('-') {
        return Err(UnitError::Negative(text.to_string()));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, f),
        None => (t, ""),
    };
    // `_` only separates digits (`1_000`): never first, last, doubled, or next to the point.
    let digits_ok = |s: &str| {
        s.chars().all(|c| c.is_ascii_digit() || c == '_')
            && !s.starts_with('_')
            && !s.ends_with('_')
            && !s.contains("__")
    };
    if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
        return Err(UnitError::NotANumber(text.to_string()));
    }
    let mut mantissa: u128 = 0;
    let mut scale = 0u32;
    for (is_frac, c) in int
        .chars()
        .map(|c| (false, c))
        .chain(frac.chars().map(|c| (true, c)))
    {
        if c == '_' {
            continue;
        }
        let digit = c.to_digit(10).expect("checked above") as u128;
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(digit))
            .ok_or_else(|| UnitError::Overflow(text.to_string()))?;
        if is_frac {
            scale += 1;
        }
    }
    Ok(Decimal { mantissa, scale })
}

fn split_unit(text: &str) -> (&str, &str) {
    let t = text.trim();
    let at = t
        .find(|c: char| c.is_alphabetic() || c == 'µ')
        .unwrap_or(t.len());
    (t[..at].trim(), t[at..].trim())
}

/// Parses a duration such as `500ms`, `59.5s`, `1h` or `1m30s` into exact nanoseconds.
///
/// Compound forms add up (`1m30s` is 90 s). A bare number is refused: the unit is part of the
/// meaning. Zero is allowed here; callers that need a positive span use [`parse_positive_duration`].
pub fn parse_duration(text: &str) -> Result<Nanos, UnitError> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(UnitError::Empty);
    }
    if rest.starts_with('-') {
        return Err(UnitError::Negative(text.to_string()));
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == '+'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_end);
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let unit = unit.trim();
        if is_exponent(unit, tail) {
            return Err(UnitError::Exponent(text.to_string()));
        }
        if num.is_empty() {
            return Err(UnitError::NotANumber(text.to_string()));
        }
        if unit.is_empty() {
            return Err(UnitError::UnknownUnit {
                unit: String::new(),
                expected: DURATION_UNITS,
            });
        }
        let scale_ns = unit_nanos(unit).ok_or_else(|| UnitError::UnknownUnit {
            unit: unit.to_string(),
            expected: DURATION_UNITS,
        })?;
        let d = parse_decimal(num).map_err(|e| match e {
            UnitError::NotANumber(_) => UnitError::NotANumber(text.to_string()),
            e => e,
        })?;
        let pow = 10u128
            .checked_pow(d.scale)
            .ok_or_else(|| UnitError::Overflow(text.to_string()))?;
        let scaled = d
            .mantissa
            .checked_mul(scale_ns as u128)
            .ok_or_else(|| UnitError::Overflow(text.to_string()))?;
        if scaled % pow != 0 {
            return Err(UnitError::SubNanosecond(text.to_string()));
        }
        total = total
            .checked_add(scaled / pow)
            .ok_or_else(|| UnitError::Overflow(text.to_string()))?;
        rest = tail.trim_start();
    }
    Nanos::try_from(total).map_err(|_| UnitError::Overflow(text.to_string()))
}

/// `1e400s` splits into the number `1` and the "unit" `e` followed by digits: an exponent.
fn is_exponent(unit: &str, after: &str) -> bool {
    matches!(unit, "e" | "E" | "e-" | "E-" | "e+" | "E+")
        && after.starts_with(|c: char| c.is_ascii_digit())
}

/// [`parse_duration`], refusing zero.
pub fn parse_positive_duration(text: &str) -> Result<Nanos, UnitError> {
    match parse_duration(text)? {
        0 => Err(UnitError::Zero(text.to_string())),
        d => Ok(d),
    }
}

/// Formats nanoseconds in the largest unit it reaches, with up to three decimals (`1m`,
/// `59.9s`, `250ms`). For display only.
pub fn format_duration(ns: Nanos) -> String {
    const UNITS: [(Nanos, &str); 6] = [
        (NANOS_PER_HOUR, "h"),
        (NANOS_PER_MIN, "m"),
        (NANOS_PER_SEC, "s"),
        (NANOS_PER_MILLI, "ms"),
        (NANOS_PER_MICRO, "us"),
        (1, "ns"),
    ];
    match UNITS.iter().find(|(unit, _)| ns >= *unit) {
        Some(&(unit, name)) if ns.is_multiple_of(unit) => format!("{}{name}", ns / unit),
        Some(&(unit, name)) => format!("{}{name}", trim_float(ns as f64 / unit as f64)),
        None => "0s".to_string(),
    }
}

/// A duration exactly, in the largest unit it is a whole number of (`1d`, `90s`, `1500ms`,
/// `0s`): the text parses back to the same nanoseconds, unlike [`format_duration`]'s.
pub fn duration_text(ns: Nanos) -> String {
    const UNITS: [(Nanos, &str); 6] = [
        (NANOS_PER_DAY, "d"),
        (NANOS_PER_HOUR, "h"),
        (NANOS_PER_MIN, "m"),
        (NANOS_PER_SEC, "s"),
        (NANOS_PER_MILLI, "ms"),
        (NANOS_PER_MICRO, "us"),
    ];
    if ns == 0 {
        return "0s".to_string();
    }
    UNITS
        .iter()
        .find(|(unit, _)| ns.is_multiple_of(*unit))
        .map_or_else(
            || format!("{ns}ns"),
            |(unit, name)| format!("{}{name}", ns / unit),
        )
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An exact rate: `count` events every `per` nanoseconds.
///
/// Kept as a reduced fraction so `2.5/s` is 5 events per 2 s, with no rounding anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    /// Events per `per`, positive, coprime with `per` once built by [`Rate::new`] or parsing.
    pub count: u64,
    /// The span `count` events take, in nanoseconds; positive.
    pub per: Nanos,
}

impl Rate {
    /// Builds a rate, reducing the fraction. `count` and `per` must be positive.
    pub fn new(count: u64, per: Nanos) -> Option<Rate> {
        if count == 0 || per == 0 {
            return None;
        }
        let g = gcd(count, per);
        Some(Rate {
            count: count / g,
            per: per / g,
        })
    }

    /// Events per second, for display and for sampling random inter-arrival times.
    pub fn per_second(&self) -> f64 {
        self.count as f64 * NANOS_PER_SEC as f64 / self.per as f64
    }

    /// Mean gap between events in nanoseconds (floating point; used only by random processes).
    pub fn mean_interval_ns(&self) -> f64 {
        self.per as f64 / self.count as f64
    }

    /// The time of the `k`-th event of a strictly periodic process starting at 0, rounded down
    /// to the nanosecond: exact for any `k` because it is computed from `k`, not accumulated.
    #[inline]
    pub fn nth_event(&self, k: u64) -> Option<Nanos> {
        // The same quotient in 64 bits while the product fits: a 128-bit division is a library
        // call, and this runs once per generated request.
        if let Some(product) = k.checked_mul(self.per) {
            return Some(product / self.count);
        }
        let t = (k as u128 * self.per as u128) / self.count as u128;
        Nanos::try_from(t).ok()
    }

    /// This rate multiplied by a whole factor (e.g. many clients of the same rate).
    pub fn times(&self, factor: u64) -> Option<Rate> {
        Rate::new(self.count.checked_mul(factor)?, self.per)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", trim_float(self.per_second()))
    }
}

/// Parses `100/min`, `2.5/s`, `10000/h`, `3/10s` into an exact [`Rate`].
pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    if text.trim_start().starts_with('-') {
        return Err(UnitError::Negative(text.to_string()));
    }
    let (count, per) = text
        .split_once('/')
        .ok_or_else(|| UnitError::NotARate(text.to_string()))?;
    if count.trim().contains(['e', 'E']) && count.trim().starts_with(|c: char| c.is_ascii_digit()) {
        return Err(UnitError::Exponent(text.to_string()));
    }
    let count = parse_decimal(count).map_err(|e| match e {
        UnitError::Overflow(_) => UnitError::RateOverflow(text.to_string()),
        e => e,
    })?;
    let per = per.trim();
    // `/min` means one minute; `/10s` means ten seconds.
    let (num, unit) = split_unit(per);
    let per_ns = if num.is_empty() {
        unit_nanos(unit).ok_or_else(|| UnitError::UnknownUnit {
            unit: unit.to_string(),
            expected: DURATION_UNITS,
        })?
    } else {
        parse_duration(per)?
    };
    let pow = 10u128
        .checked_pow(count.scale)
        .ok_or_else(|| UnitError::RateOverflow(text.to_string()))?;
    // `1/0s` is not zero requests: it is no rate at all, even where a zero rate is allowed.
    if per_ns == 0 {
        return Err(UnitError::PerZero(text.to_string()));
    }
    let per_total = (per_ns as u128)
        .checked_mul(pow)
        .ok_or_else(|| UnitError::RateOverflow(text.to_string()))?;
    if count.mantissa == 0 || per_total == 0 {
        return Err(UnitError::Zero(text.to_string()));
    }
    let g = gcd128(count.mantissa, per_total);
    let (c, p) = (count.mantissa / g, per_total / g);
    match (u64::try_from(c), u64::try_from(p)) {
        (Ok(count), Ok(per)) => Ok(Rate { count, per }),
        _ => Err(UnitError::RateOverflow(text.to_string())),
    }
}

/// Greatest common divisor of `a` and `b` (`gcd(a, 0) == a`), used to reduce rates and to scale
/// the bucket algorithms' integer units.
pub fn gcd(a: u64, b: u64) -> u64 {
    gcd128(a as u128, b as u128) as u64
}

fn gcd128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_exact() {
        assert_eq!(parse_duration("500ms"), Ok(500 * NANOS_PER_MILLI));
        assert_eq!(parse_duration("59.5s"), Ok(59_500_000_000));
        assert_eq!(parse_duration("59.9s"), Ok(59_900_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("1m30s"), Ok(90 * NANOS_PER_SEC));
        assert_eq!(parse_duration("3m"), Ok(180 * NANOS_PER_SEC));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert_eq!(
            parse_duration("1.5ns"),
            Err(UnitError::SubNanosecond("1.5ns".into()))
        );
        assert!(matches!(parse_duration("-1s"), Err(UnitError::Negative(_))));
        assert!(matches!(
            parse_duration("10"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_duration("10 parsecs"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_positive_duration("0ms"),
            Err(UnitError::Zero(_))
        ));
    }

    #[test]
    fn rates_are_exact_fractions() {
        // Reduced fractions: 100/min is one event every 600 ms, 2.5/s one every 400 ms.
        let r = |count, per| Ok(Rate { count, per });
        assert_eq!(parse_rate("100/min"), r(1, 600_000_000));
        assert_eq!(parse_rate("2.5/s"), r(1, 400_000_000));
        assert_eq!(parse_rate("3/7s"), r(3, 7 * NANOS_PER_SEC));
        assert_eq!(
            parse_rate("3/10s"),
            Ok(Rate {
                count: 3,
                per: 10 * NANOS_PER_SEC
            })
        );
        assert_eq!(
            parse_rate("10000/h").unwrap().per_second(),
            10000.0 / 3600.0
        );
        assert!(matches!(parse_rate("-5/s"), Err(UnitError::Negative(_))));
        assert!(matches!(parse_rate("0/s"), Err(UnitError::Zero(_))));
        assert!(matches!(parse_rate("5 per s"), Err(UnitError::NotARate(_))));
        assert!(matches!(
            parse_rate("5/fortnight"),
            Err(UnitError::UnknownUnit { .. })
        ));
    }

    #[test]
    fn malformed_numbers_are_refused() {
        // A rate per zero time is an error, not a zero rate.
        assert_eq!(parse_rate("1/0s"), Err(UnitError::PerZero("1/0s".into())));
        assert_eq!(parse_rate("0/s"), Err(UnitError::Zero("0/s".into())));
        // `_` separates digits, nothing else.
        assert_eq!(parse_duration("1_000ms"), Ok(NANOS_PER_SEC));
        for bad in ["_1s", "1__0s", "1_s", "1_.5s", "1._5s"] {
            assert_eq!(
                parse_duration(bad),
                Err(UnitError::NotANumber(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(parse_rate("_5/s"), Err(UnitError::NotANumber("_5".into())));
        // An exponent is named as such, not as an unknown unit `e`.
        for bad in ["1e400s", "1.5e3ms", "2E-3s"] {
            assert_eq!(
                parse_duration(bad),
                Err(UnitError::Exponent(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            parse_rate("1e400/s"),
            Err(UnitError::Exponent("1e400/s".into()))
        );
        assert!(
            UnitError::Exponent("1e400s".into())
                .to_string()
                .contains("not a plain decimal number")
        );
    }

    #[test]
    fn periodic_events_do_not_drift() {
        let r = parse_rate("3/s").unwrap();
        // 1/3 s is not a whole number of ns; the millionth event is still exactly on time.
        assert_eq!(r.nth_event(3_000_000), Some(1_000_000 * NANOS_PER_SEC));
        assert_eq!(r.nth_event(1), Some(333_333_333));
    }

    proptest::proptest! {
        /// The 64-bit shortcut gives the 128-bit quotient whenever it applies.
        #[test]
        fn nth_event_is_the_exact_quotient(k: u64, per: u64, count in 1u64..) {
            let r = Rate { count, per };
            let exact = Nanos::try_from(k as u128 * per as u128 / count as u128).ok();
            proptest::prop_assert_eq!(r.nth_event(k), exact);
        }
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_duration(NANOS_PER_MIN), "1m");
        assert_eq!(format_duration(59_900_000_000), "59.9s");
        assert_eq!(format_duration(250 * NANOS_PER_MILLI), "250ms");
    }

    #[test]
    fn duration_text_picks_the_largest_whole_unit() {
        assert_eq!(duration_text(60 * NANOS_PER_SEC), "1m");
        assert_eq!(duration_text(1500 * NANOS_PER_MILLI), "1500ms");
        assert_eq!(duration_text(2 * NANOS_PER_HOUR), "2h");
        assert_eq!(duration_text(NANOS_PER_DAY), "1d");
        assert_eq!(duration_text(90 * NANOS_PER_SEC), "90s");
        assert_eq!(duration_text(1_000_001), "1000001ns");
        assert_eq!(duration_text(0), "0s");
        for ns in [1, 999, 59_900_000_000, 36 * NANOS_PER_HOUR, 1_234_567_000] {
            assert_eq!(parse_duration(&duration_text(ns)), Ok(ns));
        }
    }
}
