//! Python `limits` 5.8 with `MemoryStorage` (`limits/strategies.py`, `limits/storage/memory.py`):
//! the moving window, fixed window and sliding window counter strategies.
//!
//! `limits` reads `time.time()`, a float of seconds since the Unix epoch, and does its window
//! arithmetic in floats; these profiles do the same float operations in the same order (IEEE
//! doubles, as CPython). Virtual time 0 stands for the scenario's start instant (`epoch_ns`,
//! nanoseconds since the Unix epoch: a replayed trace's own time, or the scenario's `start`,
//! 2026-01-01T00:00:00Z by default), and the clock reads `(epoch_ns + now) as f64 / 1e9`, which
//! is how CPython turns its nanosecond clock into `time.time()`. The absolute time matters: the
//! sliding counter aligns its windows to the Unix epoch, and every strategy's float rounding
//! depends on the magnitude of the time. The storage's background expiry thread (every 10 ms of
//! wall time) is not modelled: it only drops entries, and the decisions below are those of the
//! storage calls themselves (see docs/profiles.md for the one edge where the thread matters).
//!
//! Each strategy weighs a request as `hit(item, key, cost=n)` does. The moving window and the
//! sliding counter refuse `n > amount` up front (`acquire_entry`, `acquire_sliding_window_entry`:
//! `if amount > limit: return False`), leaving the storage untouched; the fixed window has no
//! such test: `incr` adds `n` before the comparison, so a refused cost, even one above the
//! limit, still counts.

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, first_ns, policy_seconds,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, beyond_capacity};
use crate::time::{DEFAULT_START, Nanos};
use std::collections::VecDeque;

/// `time.time()` at virtual time `now` when virtual time 0 is `epoch_ns` after the Unix epoch.
pub fn py_time(epoch_ns: u64, now: Nanos) -> f64 {
    epoch_ns.saturating_add(now) as f64 / 1e9
}

/// A `limits` rate string: `"100/minute"`, `"100 per 2 hours"` (one expression).
/// Returns (amount, expiry in seconds).
fn parse_rate(text: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!(
            "couldn't parse rate limit string '{text}': expected \"N/unit\" or \"N per M units\" \
             (unit: second, minute, hour, day, month, year)"
        )
    };
    let lower = text.trim().to_ascii_lowercase();
    let (amount, rest) = if let Some((a, r)) = lower.split_once('/') {
        (a.trim(), r.trim())
    } else if let Some((a, r)) = lower.split_once(" per ") {
        (a.trim(), r.trim())
    } else {
        return Err(bad());
    };
    let amount: u64 = amount.parse().map_err(|_| bad())?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let multiples: u64 = match &rest[..digits] {
        "" => 1,
        d => d.parse().map_err(|_| bad())?,
    };
    let unit = rest[digits..].trim();
    let seconds = match unit.strip_suffix('s').unwrap_or(unit) {
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "month" => 86_400 * 30,
        "year" => 86_400 * 30 * 12,
        _ => return Err(bad()),
    };
    if amount == 0 || multiples == 0 {
        return Err(format!(
            "'{text}': the amount and the multiple must be at least 1"
        ));
    }
    Ok((amount, seconds * multiples))
}

/// The clock and the start instant, shared by the three strategies.
macro_rules! py_clock {
    ($($t:ty),*) => {$(
        impl $t {
            /// `time.time()` at virtual time `now`.
            fn t(&self, now: Nanos) -> f64 {
                py_time(self.epoch_ns, now)
            }

            /// The same limiter with virtual time 0 at `epoch_ns` after the Unix epoch.
            pub fn starting_at(self, epoch_ns: u64) -> Self {
                Self { epoch_ns, ..self }
            }
        }
    )*};
}

py_clock!(
    PythonLimitsMovingWindow,
    PythonLimitsFixedWindow,
    PythonLimitsSlidingWindow
);

/// The `limit` parameter shared by the three strategies.
const LIMIT_PARAM: ParamSpec = ParamSpec {
    name: "limit",
    ty: ParamType::RateString,
    default: "\"<policy limit> per <policy window in seconds> seconds\"",
    doc: "the rate limit string, as limits.parse takes it: \"100/minute\", \"10 per 30 seconds\"",
};

fn build_rate(policy: Params, args: &Args<'_>) -> Result<(u64, u64), ProfileError> {
    match args.str("limit")? {
        Some(text) => parse_rate(text).map_err(|m| ProfileError::param("limit", m)),
        None => Ok((policy.limit, policy_seconds(policy.window, "limit")?)),
    }
}

/// A refusal that may retry at `at`, with `remaining` units left for cheaper requests.
fn reject(now: Nanos, at: Nanos, reset_at: Nanos, remaining: u64) -> Decision {
    Decision {
        outcome: Outcome::Reject {
            retry_after: at.saturating_sub(now).max(1),
        },
        remaining,
        reset_at,
    }
}

// ---------------------------------------------------------------------------------------------

/// `MovingWindowRateLimiter` over `MemoryStorage.acquire_entry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonLimitsMovingWindow {
    amount: u64,
    expiry: u64,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
}

/// The admissions' `atime`s, oldest first (the library keeps them newest first); only the
/// newest `amount` can decide, so older ones are dropped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LimitsMovingWindowState {
    /// `time.time()` of the newest admissions (at most `amount` of them), in float seconds.
    pub atimes: VecDeque<f64>,
}

impl ProfileDef for PythonLimitsMovingWindow {
    const NAME: &'static str = "python-limits-moving-window";
    const DESCRIPTION: &'static str = "PyPI limits 5.8 MovingWindowRateLimiter (MemoryStorage): a log of admissions, float seconds, closed edge";
    const WEIGHT: Weight = Weight::Takes(
        "hit(item, key, cost=n): n entries at once; n above the limit is refused, logging nothing",
    );
    const PARAMS: &'static [ParamSpec] = &[LIMIT_PARAM];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (amount, expiry) = build_rate(policy, args)?;
        Ok(PythonLimitsMovingWindow {
            amount,
            expiry,
            epoch_ns: DEFAULT_START,
        })
    }
}

impl PythonLimitsMovingWindow {
    /// `acquire_entry`'s refusal test for `cost <= amount` entries: the entry at index
    /// `amount − cost` of the newest-first log (the `(amount − cost + 1)`-th newest) is at or
    /// after `t − expiry`.
    fn refuses(&self, s: &LimitsMovingWindowState, t: f64, cost: u64) -> bool {
        let n = s.atimes.len() as u64;
        let newer = self.amount - cost;
        n > newer && s.atimes[(n - 1 - newer) as usize] >= t - self.expiry as f64
    }

    /// `amount` less the entries with `atime >= t − expiry` (the closed edge `acquire_entry`
    /// refuses on): the units of cost 1 still admitted at `t`.
    fn remaining(&self, s: &LimitsMovingWindowState, t: f64) -> u64 {
        let floor = t - self.expiry as f64;
        self.amount - s.atimes.iter().filter(|&&a| a >= floor).count() as u64
    }

    fn idle_at(&self, s: &LimitsMovingWindowState, from: Nanos) -> Nanos {
        match s.atimes.back() {
            None => from,
            Some(&newest) => first_ns(from, |x| newest < self.t(x) - self.expiry as f64),
        }
    }
}

impl Limiter for PythonLimitsMovingWindow {
    type State = LimitsMovingWindowState;
    const KIND: AlgorithmKind =
        AlgorithmKind::Profile(super::ProfileKind::PythonLimitsMovingWindow);

    fn new_state(&self, _now: Nanos) -> LimitsMovingWindowState {
        LimitsMovingWindowState::default()
    }

    fn decide_n(&self, s: &mut LimitsMovingWindowState, now: Nanos, cost: Cost) -> Decision {
        let cost = u64::from(cost);
        let t = self.t(now);
        if cost > self.amount {
            return beyond_capacity(now, self.idle_at(s, now), self.remaining(s, t));
        }
        if self.refuses(s, t, cost) {
            let at = first_ns(now, |x| !self.refuses(s, self.t(x), cost));
            return reject(now, at, self.idle_at(s, now), self.remaining(s, t));
        }
        // `[Entry(expiry)] * amount`: `cost` entries of the same `atime`.
        s.atimes.extend(std::iter::repeat_n(t, cost as usize));
        while s.atimes.len() as u64 > self.amount {
            s.atimes.pop_front();
        }
        Decision::allow(self.remaining(s, t), self.idle_at(s, now))
    }

    fn is_idle(&self, s: &LimitsMovingWindowState, now: Nanos) -> bool {
        s.atimes
            .back()
            .is_none_or(|&newest| newest < self.t(now) - self.expiry as f64)
    }

    fn heap_bytes(s: &LimitsMovingWindowState) -> usize {
        s.atimes.capacity() * size_of::<f64>()
    }

    fn redis_bytes(s: &LimitsMovingWindowState) -> usize {
        // limits' Redis storage keeps the moving window as a list.
        crate::algorithms::redis::sorted_set(s.atimes.len())
    }
}

// ---------------------------------------------------------------------------------------------

/// `FixedWindowRateLimiter` over `MemoryStorage.incr`: a window from the key's first hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonLimitsFixedWindow {
    amount: u64,
    expiry: u64,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
}

/// The storage's counter and its expiration (`time.time()` of the first hit + expiry).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LimitsFixedWindowState {
    /// Hits counted since the counter started, refused ones included.
    pub count: u64,
    /// 0.0 when there is none (`expirations.get(key, 0)`).
    pub expiration: f64,
}

impl ProfileDef for PythonLimitsFixedWindow {
    const NAME: &'static str = "python-limits-fixed-window";
    const DESCRIPTION: &'static str = "PyPI limits 5.8 FixedWindowRateLimiter (MemoryStorage): a counter from each key's first hit, float seconds, rejected hits counted";
    const WEIGHT: Weight = Weight::Takes(
        "hit(item, key, cost=n): incr by n, then count <= limit; a refused n still counts, even above the limit",
    );
    const PARAMS: &'static [ParamSpec] = &[LIMIT_PARAM];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (amount, expiry) = build_rate(policy, args)?;
        Ok(PythonLimitsFixedWindow {
            amount,
            expiry,
            epoch_ns: DEFAULT_START,
        })
    }
}

impl Limiter for PythonLimitsFixedWindow {
    type State = LimitsFixedWindowState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::PythonLimitsFixedWindow);

    fn new_state(&self, _now: Nanos) -> LimitsFixedWindowState {
        LimitsFixedWindowState::default()
    }

    fn decide_n(&self, s: &mut LimitsFixedWindowState, now: Nanos, cost: Cost) -> Decision {
        let cost = u64::from(cost);
        let t = self.t(now);
        if s.expiration <= t {
            *s = LimitsFixedWindowState::default();
        }
        // `incr` adds before `hit` compares, whatever the cost: refused units count.
        s.count += cost;
        // `if self.storage[key] == amount`: the counter was 0, a new window.
        if s.count == cost {
            s.expiration = t + self.expiry as f64;
        }
        let expiration = s.expiration;
        let reset_at = first_ns(now, |x| expiration <= self.t(x));
        if s.count <= self.amount {
            Decision::allow(self.amount - s.count, reset_at)
        } else {
            reject(now, reset_at, reset_at, 0)
        }
    }

    fn is_idle(&self, s: &LimitsFixedWindowState, now: Nanos) -> bool {
        s.expiration <= self.t(now)
    }

    fn redis_bytes(_: &LimitsFixedWindowState) -> usize {
        crate::algorithms::redis::STRING_KEY
    }
}

// ---------------------------------------------------------------------------------------------

/// `SlidingWindowCounterRateLimiter` over `MemoryStorage.acquire_sliding_window_entry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonLimitsSlidingWindow {
    amount: u64,
    expiry: u64,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
}

/// The storage's counters of this key's windows: (window index, count, expiration).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LimitsSlidingWindowState {
    /// One entry per live window counter: its epoch-aligned index, its count and its expiration
    /// (`time.time()` float seconds).
    pub windows: Vec<(i64, u64, f64)>,
}

impl LimitsSlidingWindowState {
    /// `MemoryStorage.get`: the count, or 0 once its expiration has passed.
    fn get(&self, idx: i64, t: f64) -> u64 {
        self.windows
            .iter()
            .find(|w| w.0 == idx)
            .map_or(0, |w| if w.2 <= t { 0 } else { w.1 })
    }
}

impl ProfileDef for PythonLimitsSlidingWindow {
    const NAME: &'static str = "python-limits-sliding-window-counter";
    const DESCRIPTION: &'static str = "PyPI limits 5.8 SlidingWindowCounterRateLimiter (MemoryStorage): epoch-aligned windows, previous one weighted by its remaining time, floats";
    const WEIGHT: Weight = Weight::Takes(
        "hit(item, key, cost=n): floor(weighted) + n <= limit, then n added; n above the limit is refused",
    );
    const PARAMS: &'static [ParamSpec] = &[LIMIT_PARAM];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let (amount, expiry) = build_rate(policy, args)?;
        Ok(PythonLimitsSlidingWindow {
            amount,
            expiry,
            epoch_ns: DEFAULT_START,
        })
    }
}

impl PythonLimitsSlidingWindow {
    /// `sliding_window_keys`: (previous, current) window indices.
    fn keys(&self, t: f64) -> (i64, i64) {
        let e = self.expiry as f64;
        (((t - e) / e) as i64, (t / e) as i64)
    }

    /// `_get_sliding_window_info`'s weighted count before a hit: `pc·pttl/E` and `cc`.
    fn weighted_parts(&self, s: &LimitsSlidingWindowState, t: f64) -> (f64, u64) {
        let e = self.expiry as f64;
        let (p, c) = self.keys(t);
        let pc = s.get(p, t);
        let pttl = if pc == 0 {
            0.0
        } else {
            // Python's `%` is floored: in the epoch's first window (t - e)/e is negative
            // and its `% 1` is t/e, not Rust's truncated -(1 - t/e).
            (1.0 - ((t - e) / e).rem_euclid(1.0)) * e
        };
        (pc as f64 * pttl / e, s.get(c, t))
    }

    /// `acquire_sliding_window_entry` for `cost <= amount`: `floor(weighted) + cost <= limit`,
    /// then the check after the increment (a lost race in the library) on the same float sum.
    fn admits(&self, s: &LimitsSlidingWindowState, t: f64, cost: u64) -> bool {
        let (prev, cc) = self.weighted_parts(s, t);
        let before = (prev + cc as f64).floor() as u64;
        let after = (prev + (cc + cost) as f64).floor() as u64;
        before + cost <= self.amount && after <= self.amount
    }

    /// `get_window_stats`' remaining, `max(0, amount − floor(weighted))`, where a request of
    /// cost 1 would be admitted; 0 where it would not.
    fn remaining(&self, s: &LimitsSlidingWindowState, t: f64) -> u64 {
        if !self.admits(s, t, 1) {
            return 0;
        }
        let (prev, cc) = self.weighted_parts(s, t);
        self.amount
            .saturating_sub((prev + cc as f64).floor() as u64)
    }

    fn idle(&self, s: &LimitsSlidingWindowState, t: f64) -> bool {
        let (p, _) = self.keys(t);
        s.windows.iter().all(|w| w.2 <= t || w.0 < p)
    }

    /// The first instant a hit of `cost` would be admitted: indices change at window edges, and
    /// between two changes a later time only weighs the previous window less.
    fn retry_at(&self, s: &LimitsSlidingWindowState, now: Nanos, cost: u64) -> Nanos {
        let mut x = now;
        for _ in 0..8 {
            let keys = self.keys(self.t(x));
            let end = first_ns(x, |y| self.keys(self.t(y)) != keys);
            let at = first_ns(x, |y| y >= end || self.admits(s, self.t(y), cost));
            if at < end {
                return at;
            }
            x = end;
        }
        x
    }
}

impl Limiter for PythonLimitsSlidingWindow {
    type State = LimitsSlidingWindowState;
    const KIND: AlgorithmKind =
        AlgorithmKind::Profile(super::ProfileKind::PythonLimitsSlidingWindow);

    fn new_state(&self, _now: Nanos) -> LimitsSlidingWindowState {
        LimitsSlidingWindowState::default()
    }

    fn decide_n(&self, s: &mut LimitsSlidingWindowState, now: Nanos, cost: Cost) -> Decision {
        let cost = u64::from(cost);
        let t = self.t(now);
        let (p, c) = self.keys(t);
        // Windows before the previous one are never read again.
        s.windows.retain(|w| w.0 >= p);
        let idle_at = |s: &LimitsSlidingWindowState| first_ns(now, |x| self.idle(s, self.t(x)));
        if cost > self.amount {
            return beyond_capacity(now, idle_at(s), self.remaining(s, t));
        }
        if !self.admits(s, t, cost) {
            let at = self.retry_at(s, now, cost);
            return reject(now, at, idle_at(s), self.remaining(s, t));
        }
        // `incr(current_key, 2·expiry, amount=cost)`: restart an expired counter, set the
        // expiration when it was 0.
        let fresh = (c, cost, t + (2 * self.expiry) as f64);
        match s.windows.iter_mut().find(|w| w.0 == c) {
            Some(w) if w.2 > t => w.1 += cost,
            Some(w) => *w = fresh,
            None => s.windows.push(fresh),
        }
        let (prev, cc) = self.weighted_parts(s, t);
        let used = (prev + cc as f64).floor() as u64;
        Decision::allow(self.amount.saturating_sub(used), idle_at(s))
    }

    fn is_idle(&self, s: &LimitsSlidingWindowState, now: Nanos) -> bool {
        self.idle(s, self.t(now))
    }

    fn heap_bytes(s: &LimitsSlidingWindowState) -> usize {
        s.windows.capacity() * size_of::<(i64, u64, f64)>()
    }

    fn redis_bytes(s: &LimitsSlidingWindowState) -> usize {
        s.windows.len() * crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    #[test]
    fn rate_strings_parse_as_limits_does() {
        assert_eq!(parse_rate("100/minute"), Ok((100, 60)));
        assert_eq!(parse_rate("100 per minute"), Ok((100, 60)));
        assert_eq!(parse_rate("10 per 30 seconds"), Ok((10, 30)));
        assert_eq!(parse_rate("5/2hours"), Ok((5, 7200)));
        assert_eq!(parse_rate("1/month"), Ok((1, 2_592_000)));
        assert!(parse_rate("100/fortnight").is_err());
        assert!(parse_rate("0/second").is_err());
    }

    #[test]
    fn clock_is_cpythons() {
        // 2026-01-01T00:00:00Z + 1.5 s.
        assert_eq!(py_time(DEFAULT_START, 1500 * MS), 1_767_225_601.5);
        // Doubles near 1.77e9 s are 2^-22 s (≈ 238 ns) apart: nearby nanoseconds collapse.
        assert_eq!(py_time(DEFAULT_START, 1), py_time(DEFAULT_START, 0));
    }

    #[test]
    fn moving_window_edge_is_closed() {
        let m = PythonLimitsMovingWindow {
            amount: 2,
            expiry: 1,
            epoch_ns: DEFAULT_START,
        };
        let mut s = m.new_state(0);
        assert!(m.decide(&mut s, 0).outcome.is_admitted());
        assert!(m.decide(&mut s, 100 * MS).outcome.is_admitted());
        // At exactly 1 s the oldest admission (atime t0) satisfies atime >= t − 1: refused.
        let d = m.decide(&mut s, 1000 * MS);
        assert!(!d.outcome.is_admitted());
        let Outcome::Reject { retry_after } = d.outcome else {
            unreachable!()
        };
        // The first representable time after 1 s (ns collapse into ≈ 238 ns steps).
        assert!(retry_after > 0 && retry_after < 300, "{retry_after}");
        assert!(
            m.decide(&mut s, 1000 * MS + retry_after)
                .outcome
                .is_admitted()
        );
    }

    #[test]
    fn fixed_window_counts_refusals_and_starts_at_first_hit() {
        let f = PythonLimitsFixedWindow {
            amount: 1,
            expiry: 1,
            epoch_ns: DEFAULT_START,
        };
        let mut s = f.new_state(0);
        assert_eq!(f.decide(&mut s, 300 * MS).remaining, 0);
        assert!(!f.decide(&mut s, 900 * MS).outcome.is_admitted());
        assert_eq!(s.count, 2);
        assert!(!f.decide(&mut s, 1300 * MS - 1000).outcome.is_admitted());
        assert!(f.decide(&mut s, 1300 * MS).outcome.is_admitted());
    }

    use crate::time::NANOS_PER_SEC as SEC;

    fn retry(d: Decision) -> Nanos {
        match d.outcome {
            Outcome::Reject { retry_after } => retry_after,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn moving_window_takes_cost_entries_at_once() {
        // 3 per 10 s from the Unix epoch (time.time() is then exact in whole seconds).
        let m = PythonLimitsMovingWindow {
            amount: 3,
            expiry: 10,
            epoch_ns: 0,
        };
        let mut s = m.new_state(0);
        // cost 4 > 3: `if amount > limit: return False`, the log untouched; the key is as new
        // (retry 1 ns), all 3 units left.
        let d = m.decide_n(&mut s, 0, 4);
        assert_eq!(d, beyond_capacity(0, 0, 3));
        assert!(s.atimes.is_empty());
        // cost 2 at 0: index 3 − 2 = 1 of an empty log is missing: two entries at 0, 1 left.
        assert_eq!(m.decide_n(&mut s, 0, 2).remaining, 1);
        // cost 2 at 1 s: events[1] is an entry of atime 0 >= 1 − 10: refused, nothing logged,
        // and the unit left stays. It passes once 0 < t − 10, the first float after 10 s.
        let d = m.decide_n(&mut s, SEC, 2);
        assert_eq!(d.remaining, 1);
        assert_eq!(retry(d), 9 * SEC + 1);
        assert_eq!(s.atimes.len(), 2);
        // A unit at 1 s: events[2] does not exist, admitted; none left.
        assert_eq!(m.decide_n(&mut s, SEC, 1), Decision::allow(0, 11 * SEC + 1));
    }

    #[test]
    fn fixed_window_counts_a_refused_cost_even_above_the_limit() {
        // 3 per 10 s from the Unix epoch.
        let f = PythonLimitsFixedWindow {
            amount: 3,
            expiry: 10,
            epoch_ns: 0,
        };
        let mut s = f.new_state(0);
        // cost 5 at 0: incr makes the counter 5 (== amount: a new window to 10 s), 5 > 3.
        let reject_until = |now: Nanos, at: Nanos| reject(now, at, at, 0);
        assert_eq!(f.decide_n(&mut s, 0, 5), reject_until(0, 10 * SEC));
        assert_eq!(s.count, 5);
        // A unit at 1 s makes 6: refused until the window ends at 10 s.
        assert_eq!(f.decide(&mut s, SEC), reject_until(SEC, 10 * SEC));
        // At 10 s (expiration 10.0 <= 10.0) the counter restarts at 2: 1 left, to 20 s.
        assert_eq!(
            f.decide_n(&mut s, 10 * SEC, 2),
            Decision::allow(1, 20 * SEC)
        );
        // cost 2 at 11 s: 4 > 3, refused, and counted: the unit left is gone.
        assert_eq!(
            f.decide_n(&mut s, 11 * SEC, 2),
            reject_until(11 * SEC, 20 * SEC)
        );
        assert_eq!(s.count, 4);
        assert!(!f.decide(&mut s, 12 * SEC).outcome.is_admitted());
    }

    #[test]
    fn sliding_counter_refuses_a_cost_over_the_weighted_count() {
        // 4 per 10 s from 2026-01-01 (a multiple of 10 s: virtual 0 starts a window).
        let w = PythonLimitsSlidingWindow {
            amount: 4,
            expiry: 10,
            epoch_ns: DEFAULT_START,
        };
        let mut s = w.new_state(0);
        // cost 5 > 4: refused up front, no counter touched; the key is as new.
        assert_eq!(w.decide_n(&mut s, 0, 5), beyond_capacity(0, 0, 4));
        assert!(s.windows.is_empty());
        // cost 3 at 0: floor(0) + 3 <= 4, the current counter is 3: 1 left.
        assert_eq!(w.decide_n(&mut s, 0, 3).remaining, 1);
        // cost 2 at 1 s: floor(0·… + 3) + 2 = 5 > 4, refused, nothing added; a unit would
        // pass (3 + 1 <= 4), so 4 − 3 = 1 left.
        let d = w.decide_n(&mut s, SEC, 2);
        assert_eq!(d.remaining, 1);
        // It passes once the 3 weigh less than 3: in the next window (from 10 s) the previous
        // count weighs 3·(1 − u/10) for u into it, under 3 from the first float after 10 s
        // (doubles near 1.77e9 s are 2^-22 s ≈ 238 ns apart).
        let r = retry(d);
        assert!(r > 9 * SEC && r < 9 * SEC + 300, "{r}");
        assert!(!w.peek_n(&s, 10 * SEC, 2).outcome.is_admitted());
        assert!(w.peek_n(&s, SEC + r, 2).outcome.is_admitted());
        // The refused 2 consumed nothing: a unit at 1 s passes, leaving 0.
        assert_eq!(w.decide_n(&mut s, SEC, 1).remaining, 0);
    }

    #[test]
    fn sliding_counter_weighs_the_previous_window() {
        // 10 per 10 s. 10 hits in [0, 10 s); at 15 s the previous window weighs 10 × 0.5 = 5.
        let w = PythonLimitsSlidingWindow {
            amount: 10,
            expiry: 10,
            epoch_ns: DEFAULT_START,
        };
        let mut s = w.new_state(0);
        for i in 0..10 {
            assert!(w.decide(&mut s, i * 100 * MS).outcome.is_admitted());
        }
        assert!(!w.decide(&mut s, 9_999 * MS).outcome.is_admitted());
        let admitted = (0..10)
            .filter(|_| w.decide(&mut s, 15_000 * MS).outcome.is_admitted())
            .count();
        assert_eq!(admitted, 5);
    }

    #[test]
    fn sliding_counter_windows_are_aligned_to_the_unix_epoch() {
        // `1 per 11 seconds`, hits at 1735689593 s and 10 s later. 1735689593 is a multiple of
        // 11: both hits are in one window and the library refuses the second. From 2026-01-01
        // (not a multiple of 11 s) the second hit would fall in the next window and pass.
        let start = 1_735_689_593_000 * MS;
        let w = PythonLimitsSlidingWindow {
            amount: 1,
            expiry: 11,
            epoch_ns: DEFAULT_START,
        };
        let at_trace = w.starting_at(start);
        let mut s = at_trace.new_state(0);
        assert!(at_trace.decide(&mut s, 0).outcome.is_admitted());
        assert!(!at_trace.decide(&mut s, 10_000 * MS).outcome.is_admitted());
        // The same two hits at the default start instant: admitted, as the library does there.
        let mut s = w.new_state(0);
        assert!(w.decide(&mut s, 0).outcome.is_admitted());
        assert!(w.decide(&mut s, 10_000 * MS).outcome.is_admitted());
    }

    #[test]
    fn sliding_counter_in_the_epochs_first_window_counts_each_hit_once() {
        // `10 per 15 minute` from the Unix epoch itself (a trace of relative times): in
        // [0, 900 s) the previous and current keys are both window 0 (`int()` truncates), and
        // the previous count weighs 1 - t/900 (Python's floored `%`). Before the k-th hit the
        // weighted count is (k - 1)(2 - t/900): 0, 1.85, 3.67, 5.28, 6.75, all admitted; the
        // remaining after each, 10 - floor(k(2 - t/900)): 9, 7, 5, 3, 2 (the library's figures).
        let w = PythonLimitsSlidingWindow {
            amount: 10,
            expiry: 900,
            epoch_ns: DEFAULT_START,
        }
        .starting_at(0);
        let mut s = w.new_state(0);
        let remaining: Vec<u64> = [100_867, 130_914, 148_768, 214_637, 280_976]
            .iter()
            .map(|&ms| {
                let d = w.decide(&mut s, ms * MS);
                assert!(d.outcome.is_admitted(), "{ms} ms: {d:?}");
                d.remaining
            })
            .collect();
        assert_eq!(remaining, [9, 7, 5, 3, 2]);
    }
}
