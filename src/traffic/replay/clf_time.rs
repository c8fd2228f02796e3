//! The combined log's timestamp, `10/Oct/2000:13:55:36 -0700`, read fast.
//!
//! A replayed access log repeats each second's stamp for every request of that second, and
//! chrono's general `parse_from_str` was the largest cost of a replay. So the last stamp read is
//! remembered (a log of 100 requests per second parses one in a hundred), and a new one in the
//! canonical layout (two-digit day, English month abbreviation as nginx and Apache write it,
//! four-digit year, `+hhmm` offset) is computed by hand. Anything else (another spelling of the
//! month, a leap second, a year outside 1970..2200, odd spacing) goes to chrono, which stays the
//! reference: a property test holds the fast path to it.

use crate::time::NANOS_PER_SEC;

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The last stamp parsed and its time.
#[derive(Debug, Default)]
pub(super) struct StampCache {
    last: Option<([u8; 26], u64)>,
}

impl StampCache {
    /// Nanoseconds since the Unix epoch of `stamp`, or chrono's error message.
    pub(super) fn parse(&mut self, stamp: &str) -> Result<u64, String> {
        if let Some((text, ns)) = &self.last
            && stamp.as_bytes() == text
        {
            return Ok(*ns);
        }
        let ns = match fast(stamp.as_bytes()) {
            Some(ns) => ns,
            None => return slow(stamp),
        };
        let mut text = [0; 26];
        text.copy_from_slice(stamp.as_bytes());
        self.last = Some((text, ns));
        Ok(ns)
    }
}

/// chrono's reading of the stamp, with the messages replay has always given.
pub(super) fn slow(stamp: &str) -> Result<u64, String> {
    let dt = chrono::DateTime::parse_from_str(stamp, "%d/%b/%Y:%H:%M:%S %z")
        .map_err(|e| format!("`{stamp}` is not like `10/Oct/2000:13:55:36 -0700` ({e})"))?;
    super::to_epoch_ns(dt, stamp)
}

/// The canonical layout, computed by hand; `None` for anything else (chrono decides).
fn fast(s: &[u8]) -> Option<u64> {
    let s: &[u8; 26] = s.try_into().ok()?;
    if s[2] != b'/' || s[6] != b'/' || s[11] != b':' || s[14] != b':' || s[17] != b':' {
        return None;
    }
    if s[20] != b' ' {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<u64> {
        s[from..from + len].iter().try_fold(0u64, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + (b - b'0') as u64)
        })
    };
    let day = num(0, 2)?;
    let month = MONTHS.iter().position(|m| s[3..6] == m[..])? as u64 + 1;
    let year = num(7, 4)?;
    let (hour, minute, second) = (num(12, 2)?, num(15, 2)?, num(18, 2)?);
    let sign = match s[21] {
        b'+' => 1i64,
        b'-' => -1,
        _ => return None,
    };
    let (off_h, off_m) = (num(22, 2)?, num(24, 2)?);
    if !(1970..2200).contains(&year) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    if day == 0 || day > days_in_month(year, month) || off_h > 23 || off_m > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let local = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64;
    let utc = local - sign * (off_h * 3600 + off_m * 60) as i64;
    // Before the epoch: chrono words the error.
    let utc = u64::try_from(utc).ok()?;
    Some(utc * NANOS_PER_SEC)
}

fn leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the date (proleptic Gregorian; Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: u64, month: u64, day: u64) -> i64 {
    let y = year as i64 - (month <= 2) as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_documented_example() {
        // 2000-10-10 13:55:36 at −07:00 is 20:55:36 UTC: 971211336 s after the epoch.
        let mut cache = StampCache::default();
        assert_eq!(
            cache.parse("10/Oct/2000:13:55:36 -0700"),
            Ok(971_211_336 * NANOS_PER_SEC)
        );
        assert_eq!(
            fast(b"10/Oct/2000:13:55:36 -0700"),
            Some(971_211_336 * NANOS_PER_SEC)
        );
        // Not the canonical layout: chrono decides (here it refuses a full month name).
        assert_eq!(fast(b"10/October/2000:13:55:36 -0700"), None);
        assert!(cache.parse("10/October/2000:13:55:36 -0700").is_err());
        assert!(cache.parse("31/Feb/2000:13:55:36 -0700").is_err());
        assert!(cache.parse("01/Jan/1969:00:00:00 +0000").is_err());
    }

    /// A stamp in the canonical layout, with fields anywhere in (and a little beyond) range.
    fn stamp() -> impl Strategy<Value = String> {
        (
            0u32..33,
            0usize..13,
            1960u32..2210,
            0u32..26,
            0u32..62,
            0u32..62,
            any::<bool>(),
            0u32..26,
            0u32..62,
        )
            .prop_map(|(d, mo, y, h, mi, s, plus, oh, om)| {
                let month = [
                    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                    "Dec", "oct",
                ][mo];
                let sign = if plus { '+' } else { '-' };
                format!("{d:02}/{month}/{y:04}:{h:02}:{mi:02}:{s:02} {sign}{oh:02}{om:02}")
            })
    }

    proptest! {
        /// Wherever the fast path answers, chrono answers the same; and the cache never
        /// changes an answer, including after a stamp that failed.
        #[test]
        fn the_fast_path_agrees_with_chrono(stamps in proptest::collection::vec(stamp(), 1..8)) {
            let mut cache = StampCache::default();
            for s in &stamps {
                if let Some(ns) = fast(s.as_bytes()) {
                    prop_assert_eq!(Ok(ns), slow(s));
                }
                prop_assert_eq!(cache.parse(s), slow(s));
                prop_assert_eq!(cache.parse(s), slow(s));
            }
        }

        /// Valid dates are all taken by the fast path (chrono is the exception, not the rule).
        #[test]
        fn canonical_stamps_take_the_fast_path(
            days in 0u64..(2199 - 1970) * 365,
            secs in 0u64..86_400,
        ) {
            let t = chrono::DateTime::from_timestamp((days * 86_400 + secs) as i64, 0).unwrap();
            let s = t.format("%d/%b/%Y:%H:%M:%S +0000").to_string();
            prop_assert_eq!(fast(s.as_bytes()), Some((days * 86_400 + secs) * NANOS_PER_SEC));
        }
    }
}
