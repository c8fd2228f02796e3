//! HAProxy 2.6 stick-table `http_req_rate(<period>)` and the deny rule comparing it
//! (`http-request track-sc0 src` then `http-request deny if { sc_http_req_rate(0) gt N }`).
//!
//! Followed (haproxy v2.6.0, the branch of Debian's 2.6.12): `include/haproxy/freq_ctr.h`
//! (`update_freq_ctr_period`, `read_freq_ctr_period`), `src/freq_ctr.c` (`freq_ctr_total`),
//! `src/http_act.c` (`http_action_track_sc`), `src/stick_table.c`
//! (`smp_fetch_sc_http_req_rate`, `stktable_touch_local`, the expiry task), and
//! `include/haproxy/stream.h` (`stream_store_counters`).
//!
//! A counter is `curr_tick` (start of the current period, ms), `curr_ctr` and `prev_ctr`.
//! **Update** at `now` (`update_freq_ctr_period`, u32 ms arithmetic): if `now − curr_tick <
//! period`, `curr_ctr += 1`; otherwise the period rotates: `prev_ctr = curr_ctr`, `curr_ctr =
//! 1`, `curr_tick += period`, and if still `now − curr_tick >= period` (two periods missed)
//! `prev_ctr = 0, curr_tick = now`. The tick is then stored as `curr_tick & ~1` (its low bit is
//! the rotation lock), so a period starts on an even millisecond of HAProxy's clock.
//! **Read** (`read_freq_ctr_period` → `freq_ctr_total(ctr, period, -1)`):
//! `remain = curr_tick + period − now`; if negative, `remain += period` and
//! `past = remain >= 0 ? curr : 0`, `curr = 0`; if then `curr == 0 && past <= 1` the total is
//! `past · period` (the "flapping correction"); else `past · remain + curr · period`; the rate
//! is `total / period` rounded down (`div64_32`). It is a sliding estimate: the previous period weighted by the part of it still
//! inside the sliding window, plus the whole current period.
//!
//! **Order.** `http_action_track_sc` counts the request (`update_freq_ctr_period(..., 1)`) when
//! the `track-sc` rule runs, before the later `deny` rule reads the rate, so the deny compares a
//! rate that includes this request, and a denied request stays counted: a client that keeps
//! sending at twice the threshold is refused for as long as it keeps sending. Read after an
//! update, `curr_ctr >= 1`, so the flapping correction never applies here (it is kept, for
//! fidelity of the reading).
//!
//! **Expiry.** Tracking touches the entry (`stktable_touch_local`: `expire = now + expire`);
//! `stream_store_counters` at the stream's end only kills it if already expired. The table's
//! expiry task drops an entry from the instant `now >= expire` (when it runs: rlsim takes it to
//! run at that millisecond, before a request of the same millisecond), and a request after that
//! creates a zeroed entry. `expire = 0` is a table without `expire`: entries stay until `size`
//! evicts the oldest (not modelled).
//!
//! **Clock.** HAProxy 2.6's `now_ms` is the wall clock in ms (`clock.c`: `global_now_ms =
//! now.tv_sec * 1000 + now.tv_usec / 1000` at boot, then monotonic), so the even-millisecond
//! period start is the absolute millisecond's parity: the profile reads `floor((START + now) /
//! 1 ms)`. A zeroed entry has `curr_tick = 0`: its first update rotates with "two periods
//! missed" unless `now_ms mod 2^32 < period`, which happens for `period` ms every 49.7 days
//! and is not reproduced (a new entry always starts a period at its first request). Since
//! HAProxy 2.8 the clock starts about 20 s before the u32 wrap instead of at the wall clock,
//! so the parity is that of an arbitrary origin; the arithmetic is otherwise unchanged (3.x
//! moved it into `update_freq_ctr_period_slow` and `_freq_ctr_total_from_values`).

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, at_ms, first_ns, policy_millis,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{NANOS_PER_MILLI, Nanos};

/// How the deny rule compares the rate with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `gt N`: denied when the rate is above N.
    Gt,
    /// `ge N`: denied when the rate is N or more.
    Ge,
}

impl Operator {
    pub fn parse(text: &str) -> Option<Operator> {
        match text {
            "gt" => Some(Operator::Gt),
            "ge" => Some(Operator::Ge),
            _ => None,
        }
    }

    fn denies(self, rate: u64, threshold: u64) -> bool {
        match self {
            Operator::Gt => rate > threshold,
            Operator::Ge => rate >= threshold,
        }
    }
}

/// `stick-table ... expire E store http_req_rate(P)` with `deny if { sc_http_req_rate(0) OP N }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaproxyHttpReqRate {
    period_ms: u64,
    threshold: u64,
    operator: Operator,
    /// 0: the table has no `expire`.
    expire_ms: u64,
    /// The instant virtual time 0 stands for, in ns since the Unix epoch.
    epoch_ns: u64,
}

/// `struct freq_ctr` of one entry, and when the entry was last touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaproxyState {
    /// No entry in the table (never created, or expired): a zeroed one is created.
    pub fresh: bool,
    /// `curr_tick`, ms of HAProxy's clock (always even).
    pub tick: u64,
    pub(crate) curr: u64,
    pub(crate) prev: u64,
    /// The ms of the last `track-sc` (the entry expires at `touched + expire`).
    pub touched: u64,
}

const FRESH: HaproxyState = HaproxyState {
    fresh: true,
    tick: 0,
    curr: 0,
    prev: 0,
    touched: 0,
};

impl ProfileDef for HaproxyHttpReqRate {
    const NAME: &'static str = "haproxy-http-req-rate";
    const DESCRIPTION: &'static str = "HAProxy 2.6 stick-table http_req_rate(period) tracked by track-sc and compared by a deny rule (gt/ge); denied requests count; entries expire";
    const WEIGHT: Weight =
        Weight::Requests("a stick table's http_req_rate counts one per HTTP request");
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "period",
            ty: ParamType::Duration,
            default: "policy window (whole ms)",
            doc: "store http_req_rate(<period>): the counter's period",
        },
        ParamSpec {
            name: "threshold",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "N of sc_http_req_rate(0) gt N (0 allowed)",
        },
        ParamSpec {
            name: "operator",
            ty: ParamType::Choice,
            default: "\"gt\"",
            doc: "\"gt\" (deny above N) or \"ge\" (deny at N or more)",
        },
        ParamSpec {
            name: "expire",
            ty: ParamType::Duration,
            default: "period",
            doc: "stick-table expire: an entry untracked this long is dropped (\"0s\": no expire)",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let period_ms = match args.millis("period", true)? {
            Some(ms) => ms,
            None => policy_millis(policy.window, "period")?,
        };
        if period_ms > i32::MAX as u64 {
            return Err(ProfileError::param(
                "period",
                "must be under 2^31 ms (HAProxy's ticks are 32-bit)",
            ));
        }
        let threshold = args
            .count_or_zero("threshold", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let operator = match args.str("operator")? {
            None => Operator::Gt,
            Some(text) => Operator::parse(text).ok_or_else(|| {
                ProfileError::param(
                    "operator",
                    format!("must be \"gt\" or \"ge\", got \"{text}\""),
                )
            })?,
        };
        let expire_ms = args.millis("expire", false)?.unwrap_or(period_ms);
        if expire_ms > i32::MAX as u64 {
            return Err(ProfileError::param(
                "expire",
                "must be under 2^31 ms (HAProxy refuses longer table expiries)",
            ));
        }
        Ok(HaproxyHttpReqRate {
            period_ms,
            threshold,
            operator,
            expire_ms,
            epoch_ns: 0,
        })
    }
}

impl HaproxyHttpReqRate {
    /// The profile with virtual 0 standing for `epoch_ns` (HAProxy 2.6's clock is the wall
    /// clock, whose parity decides where a period starts).
    pub fn starting_at(self, epoch_ns: u64) -> Self {
        Self { epoch_ns, ..self }
    }

    /// `now_ms` at virtual time `now`.
    fn now_ms(&self, now: Nanos) -> u64 {
        self.epoch_ns.saturating_add(now) / NANOS_PER_MILLI
    }

    /// The first virtual ns at which `now_ms` reads `ms`.
    fn at(&self, ms: u64) -> Nanos {
        at_ms(ms).saturating_sub(self.epoch_ns)
    }

    fn expired(&self, s: &HaproxyState, now_ms: u64) -> bool {
        s.fresh || (self.expire_ms > 0 && now_ms >= s.touched + self.expire_ms)
    }

    /// `update_freq_ctr_period(ctr, period, 1)` on the entry (zeroed if absent) and the touch.
    fn update(&self, s: &mut HaproxyState, now_ms: u64) {
        if self.expired(s, now_ms) {
            // A zeroed entry: its curr_tick 0 is two periods behind any realistic clock.
            *s = HaproxyState {
                fresh: false,
                tick: now_ms & !1,
                curr: 1,
                prev: 0,
                touched: now_ms,
            };
            return;
        }
        let p = self.period_ms;
        if now_ms - s.tick < p {
            s.curr += 1;
        } else {
            s.prev = s.curr;
            s.curr = 1;
            let mut tick = s.tick + p;
            if now_ms - tick >= p {
                s.prev = 0;
                tick = now_ms;
            }
            s.tick = tick & !1;
        }
        s.touched = now_ms;
    }

    /// `read_freq_ctr_period(ctr, period)`: `freq_ctr_total(ctr, period, -1) / period`.
    fn read(&self, s: &HaproxyState, now_ms: u64) -> u64 {
        let p = self.period_ms as i64;
        let (mut past, mut curr) = (s.prev, s.curr);
        let mut remain = s.tick as i64 + p - now_ms as i64;
        if remain < 0 {
            remain += p;
            past = if remain >= 0 { curr } else { 0 };
            curr = 0;
        }
        let total = if curr == 0 && past <= 1 {
            past * p as u64
        } else {
            past * remain.max(0) as u64 + curr * p as u64
        };
        total / p as u64
    }

    /// Whether a request at virtual `now` on `s` would pass the deny rule.
    fn admits(&self, s: &HaproxyState, now: Nanos) -> bool {
        let mut probe = *s;
        let now_ms = self.now_ms(now);
        self.update(&mut probe, now_ms);
        !self
            .operator
            .denies(self.read(&probe, now_ms), self.threshold)
    }

    /// From when `s` decides like a zeroed entry: expired, or two periods behind (the next
    /// update then starts over with `prev_ctr = 0, curr_tick = now`).
    fn idle_from_ms(&self, s: &HaproxyState) -> u64 {
        if s.fresh {
            return 0;
        }
        let stale = s.tick + 2 * self.period_ms;
        if self.expire_ms > 0 {
            stale.min(s.touched + self.expire_ms)
        } else {
            stale
        }
    }
}

impl Limiter for HaproxyHttpReqRate {
    type State = HaproxyState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::HaproxyHttpReqRate);

    fn new_state(&self, _now: Nanos) -> HaproxyState {
        FRESH
    }

    fn decide_n(&self, s: &mut HaproxyState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = self.now_ms(now);
        self.update(s, now_ms);
        let rate = self.read(s, now_ms);
        let reset_at = self.at(self.idle_from_ms(s)).max(now);
        if self.operator.denies(rate, self.threshold) {
            let snapshot = *s;
            let at = first_ns(now, |t| self.admits(&snapshot, t));
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: at.saturating_sub(now).max(1),
                },
                remaining: 0,
                reset_at,
            };
        }
        // Each further request at this instant adds exactly one to the rate.
        let allowed = match self.operator {
            Operator::Gt => self.threshold,
            Operator::Ge => self.threshold - 1,
        };
        Decision::allow(allowed - rate, reset_at)
    }

    fn is_idle(&self, s: &HaproxyState, now: Nanos) -> bool {
        self.now_ms(now) >= self.idle_from_ms(s)
    }

    fn redis_bytes(_: &HaproxyState) -> usize {
        // In-process stick table; the size of a string key if it were kept in Redis.
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;
    use proptest::prelude::*;

    fn haproxy(
        period_ms: u64,
        threshold: u64,
        operator: Operator,
        expire_ms: u64,
    ) -> HaproxyHttpReqRate {
        HaproxyHttpReqRate {
            period_ms,
            threshold,
            operator,
            expire_ms,
            epoch_ns: 0,
        }
    }

    /// The refused request numbers (1-based) of a trace given in ms.
    fn refused(l: &HaproxyHttpReqRate, trace_ms: &[u64]) -> Vec<usize> {
        let mut s = l.new_state(0);
        let mut out = vec![];
        for (i, &t) in trace_ms.iter().enumerate() {
            if !l.decide(&mut s, t * MS).outcome.is_admitted() {
                out.push(i + 1);
            }
        }
        out
    }

    #[test]
    fn a_burst_is_refused_past_the_threshold() {
        // period 10 s, gt 10: 15 requests at t = 1 s. The first creates the entry (tick 1000,
        // curr 1, prev 0); the nth reads 0·remain + n·10000 → rate n. n > 10 is denied.
        let l = haproxy(10_000, 10, Operator::Gt, 10_000);
        assert_eq!(refused(&l, &[1000; 15]), [11, 12, 13, 14, 15]);
        // ge 10: the 10th (rate 10) is already denied.
        let l = haproxy(10_000, 10, Operator::Ge, 10_000);
        assert_eq!(refused(&l, &[1000; 12]), [10, 11, 12]);
    }

    #[test]
    fn a_steady_stream_above_the_threshold_is_refused_for_good() {
        // gt 10 over 10 s; one request every 500 ms (20 per period) from t = 0. Requests 1..20
        // fall in the first period (tick 0): rate = k, so 11..20 are denied but counted (curr
        // 20). Request 21 at 10 s rotates (prev 20, curr 1, tick 10000); at 10000 + 500j,
        // curr = j + 1 and remain = 10000 − 500j: total = 20·(10000 − 500j) + (j + 1)·10000 =
        // 210000 → rate 21 at every later request: refused as long as it keeps coming.
        let l = haproxy(10_000, 10, Operator::Gt, 10_000);
        let trace: Vec<u64> = (0..60).map(|k| 500 * k).collect();
        assert_eq!(refused(&l, &trace), (11..=60).collect::<Vec<_>>());
    }

    #[test]
    fn the_previous_period_weighs_by_what_remains_of_it() {
        // gt 10 over 10 s: 10 at t = 0 (rates 1..10, admitted; tick 0, curr 10). At 15 s the
        // counter rotates once (prev 10, curr 1, tick 10000; 15000 − 10000 < 10000), remain =
        // 5000: 10·5000 + 1·10000 = 60000 → 6; the next at 15 s read 7, 8, 9, 10 (admitted),
        // then 11 (request 16, denied, counted: curr 6). At 19.999 s: curr 7, remain 1:
        // 10 + 70000 → 7 (admitted). At 20 s: rotate (prev 7, curr 1, tick 20000): 80000 → 8.
        // At 40 s: two periods missed (prev 0, tick 40000): rate 1.
        let l = haproxy(10_000, 10, Operator::Gt, 60_000);
        let mut trace = vec![0; 10];
        trace.extend([15_000; 6]);
        trace.extend([19_999, 20_000, 40_000]);
        assert_eq!(refused(&l, &trace), [16]);
        let mut s = l.new_state(0);
        let rates: Vec<u64> = trace
            .iter()
            .map(|&t| {
                l.update(&mut s, t);
                l.read(&s, t)
            })
            .collect();
        assert_eq!(
            rates,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 6, 7, 8, 9, 10, 11, 7, 8, 1]
        );
    }

    #[test]
    fn a_period_starts_on_an_even_millisecond() {
        // gt 6 over 10 s: 5 at t = 1001 ms start the period at 1000 (1001 & ~1). At 11000 it
        // rotates (11000 − 1000 = period): prev 5, curr 1, tick 11000 → 5·10000 + 10000 → 6,
        // admitted. At 11001: curr 2, remain 9999 → 49995 + 20000 → 6, admitted. Had the
        // period started at 1001, 11000 would read curr 6 (rate 6) and 11001 would rotate to
        // prev 6, curr 1 → rate 7, denied.
        let l = haproxy(10_000, 6, Operator::Gt, 10_000);
        assert_eq!(
            refused(&l, &[1001, 1001, 1001, 1001, 1001, 11_000, 11_001]),
            [] as [usize; 0]
        );
        // The parity is the absolute clock's: one ms later in wall-clock terms, the same trace
        // starts at an even 1002 and its last request rotates into a rate of 7.
        let l = l.starting_at(MS);
        assert_eq!(
            refused(&l, &[1001, 1001, 1001, 1001, 1001, 11_000, 11_001]),
            [7]
        );
    }

    #[test]
    fn an_expired_entry_starts_over() {
        // expire 2 s, period 10 s, gt 3: 4 at t = 0 (4th denied). At 1.999 s the entry is still
        // there (rate 5, denied); the touch at 1.999 s moves the expiry to 3.999 s: at 3.998 s
        // rate 6 (denied), at 5.998 s (two seconds after the last touch) the entry is gone: 1.
        let l = haproxy(10_000, 3, Operator::Gt, 2_000);
        assert_eq!(refused(&l, &[0, 0, 0, 0, 1_999, 3_998, 5_998]), [4, 5, 6]);
        // Without expire (0) the entry stays: at 5.998 s rate 5 (denied); at 19.999 s the
        // counter rotates (prev 5, curr 1, tick 10000), remain 1: 5 + 10000 → 1, admitted.
        let l = haproxy(10_000, 3, Operator::Gt, 0);
        assert_eq!(refused(&l, &[0, 0, 0, 0, 5_998, 19_999]), [4, 5]);
    }

    #[test]
    fn flapping_correction_holds_a_single_past_event() {
        // Read without an update (as src_http_req_rate from a rule that does not track): one
        // event in the previous period reads 1 for the whole next period, not a decaying 0.
        let l = haproxy(10_000, 3, Operator::Gt, 0);
        let mut s = l.new_state(0);
        l.update(&mut s, 0);
        assert_eq!(l.read(&s, 15_000), 1);
        assert_eq!(l.read(&s, 20_000), 1);
        assert_eq!(l.read(&s, 20_001), 0);
    }

    /// A line-by-line transcription of the C (u32 ticks, wrapping differences, the lock bit,
    /// signed `remain`), over a zeroed entry whose clock is far from 0, for the property below.
    #[derive(Clone, Copy, Default)]
    struct CFreqCtr {
        curr_tick: u32,
        curr_ctr: u32,
        prev_ctr: u32,
    }

    fn c_update(ctr: &mut CFreqCtr, period: u32, now_ms: u32) {
        let curr_tick = ctr.curr_tick;
        if now_ms.wrapping_sub(curr_tick) < period {
            ctr.curr_ctr += 1;
            return;
        }
        // The CAS stores `curr_tick | 1` (the lock) in memory; the local copy stays even.
        ctr.prev_ctr = ctr.curr_ctr;
        ctr.curr_ctr = 1;
        let mut curr_tick = curr_tick.wrapping_add(period);
        if now_ms.wrapping_sub(curr_tick) >= period {
            ctr.prev_ctr = 0;
            curr_tick = now_ms;
        }
        ctr.curr_tick = curr_tick & !1;
    }

    fn c_read(ctr: &CFreqCtr, period: u32, now_ms: u32) -> u32 {
        let mut past = ctr.prev_ctr as u64;
        let mut curr = ctr.curr_ctr as u64;
        let mut remain = ctr.curr_tick.wrapping_add(period).wrapping_sub(now_ms) as i32;
        if remain < 0 {
            remain += period as i32;
            past = if remain >= 0 { curr } else { 0 };
            curr = 0;
        }
        let total = if curr == 0 && past <= 1 {
            past * period as u64
        } else {
            past * remain as u64 + curr * period as u64
        };
        (total / period as u64) as u32
    }

    /// The C model of the whole rule: expiry by a deadline, track (update), then deny.
    fn c_trace(
        period: u32,
        threshold: u32,
        ge: bool,
        expire: u32,
        base: u32,
        gaps: &[u32],
    ) -> Vec<bool> {
        let mut entry: Option<(CFreqCtr, u32)> = None;
        let mut now: u32 = base;
        let mut out = vec![];
        for &g in gaps {
            now = now.wrapping_add(g);
            if let Some((_, exp)) = entry
                && expire > 0
                && (now.wrapping_sub(exp) as i32) >= 0
            {
                entry = None;
            }
            // A new entry is zeroed: curr_tick 0, far behind `now` (base keeps it so).
            let (mut ctr, _) = entry.unwrap_or_default();
            c_update(&mut ctr, period, now);
            entry = Some((ctr, now.wrapping_add(expire)));
            let rate = c_read(&ctr, period, now);
            out.push(if ge {
                rate < threshold
            } else {
                rate <= threshold
            });
        }
        out
    }

    proptest! {
        #[test]
        fn matches_a_transcription_of_the_c(
            period in 1u32..30_000,
            threshold in 0u32..20,
            ge in any::<bool>(),
            expire in prop_oneof![Just(0u32), 1u32..60_000],
            start in 0u64..1_000_000,
            gaps in prop::collection::vec(prop_oneof![
                3 => Just(0u32), 3 => 0u32..50, 2 => 0u32..5_000, 1 => 0u32..80_000
            ], 1..300),
        ) {
            // HAProxy's clock: the absolute ms, a realistic 2026 date (parity from `start`).
            let base_ms = 1_767_225_600_000u64 + start;
            let op = if ge { Operator::Ge } else { Operator::Gt };
            let l = haproxy(period as u64, threshold as u64, op, expire as u64)
                .starting_at(base_ms * MS);
            let expected = c_trace(period, threshold, ge, expire, base_ms as u32, &gaps);
            let mut s = l.new_state(0);
            let mut t = 0u64;
            for (i, (&g, &want)) in gaps.iter().zip(&expected).enumerate() {
                t += g as u64;
                // Sub-ms offsets must not matter: HAProxy sees whole ms.
                let got = l.decide(&mut s, t * MS + (i as u64 % 7) * 100_000).outcome.is_admitted();
                prop_assert_eq!(got, want, "request {} at {} ms", i + 1, t);
            }
        }
    }
}
