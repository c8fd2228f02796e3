//! The envoyproxy/ratelimit service's fixed windows (Redis backend), as its source counts them:
//! `src/limiter/cache_key.go` (`GenerateCacheKey`: the key ends in `(now/divider)*divider`, `now`
//! the Unix time in whole seconds, so windows are aligned to the Unix epoch),
//! `src/utils/utilities.go` (`UnitToDivider`: second 1 … month 30 days, year 365 days;
//! `CalculateReset`: `divider − now % divider`), `src/redis/fixed_cache_impl.go` (`DoLimit`:
//! `INCRBY key hits_addend` for every request, over the limit or not (a request's cost is its
//! `hits_addend`), as
//! `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT` defaults to false) and `src/limiter/base_limiter.go`
//! (`GetResponseDescriptorStatus`: OVER_LIMIT when the count after the increment exceeds
//! `requests_per_unit`; remaining `limit − count`).

use super::{Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{self, DEFAULT_START, NANOS_PER_SEC, Nanos};

/// `UnitToDivider`: each unit's window in seconds.
pub const UNITS: [(&str, u64); 7] = [
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
    ("week", 7 * 86_400),
    ("month", 30 * 86_400),
    ("year", 365 * 86_400),
];

/// The service's fixed window counter of one descriptor's rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvoyRatelimit {
    requests_per_unit: u64,
    /// `UnitToDivider(unit)`, in seconds.
    divider: u64,
    /// The instant virtual time 0 stands for (ns since the Unix epoch): windows are aligned to
    /// the epoch, as `time.Now().Unix()` reads it.
    epoch_ns: u64,
}

/// The Redis counter of the key's current window: its `now/divider` and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnvoyRatelimitState {
    /// The window's index: Unix seconds at the last hit divided by the unit's divider.
    pub window: u64,
    /// Requests counted in that window, refused ones included.
    pub count: u64,
}

impl ProfileDef for EnvoyRatelimit {
    const NAME: &'static str = "envoy-ratelimit";
    const DESCRIPTION: &'static str = "envoyproxy/ratelimit service (Redis): a counter per window aligned to the Unix epoch (now/divider, whole seconds; month 30 d, year 365 d), every request counted, over the limit past requests_per_unit";
    const WEIGHT: Weight = Weight::Takes(
        "hits_addend: INCRBY by the cost before the comparison, so a refused cost counts too",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "requests_per_unit",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "rate_limit.requests_per_unit: requests per window",
        },
        ParamSpec {
            name: "unit",
            ty: ParamType::Choice,
            default: "policy window, if it is one of the units",
            doc: "rate_limit.unit: second, minute, hour, day, week (7 d), month (30 d) or year (365 d), any case",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let requests_per_unit = args
            .count("requests_per_unit", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let names = || UNITS.map(|(n, _)| n).join(", ");
        let divider = match args.str("unit")? {
            Some(text) => unit_divider(text).ok_or_else(|| {
                ProfileError::param("unit", format!("\"{text}\" is not a unit ({})", names()))
            })?,
            None => UNITS
                .iter()
                .find(|&&(_, s)| s.checked_mul(NANOS_PER_SEC) == Some(policy.window))
                .map(|&(_, s)| s)
                .ok_or_else(|| {
                    ProfileError::param(
                        "unit",
                        format!(
                            "the policy window {} is not one of the service's units ({}); set `unit`",
                            time::format_duration(policy.window),
                            names()
                        ),
                    )
                })?,
        };
        Ok(EnvoyRatelimit {
            requests_per_unit,
            divider,
            epoch_ns: DEFAULT_START,
        })
    }
}

/// The seconds of the unit named `text` (the proto's enum names, in any case).
pub fn unit_divider(text: &str) -> Option<u64> {
    UNITS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(text))
        .map(|&(_, s)| s)
}

impl EnvoyRatelimit {
    /// The same limiter with virtual time 0 at `epoch_ns` after the Unix epoch.
    pub fn starting_at(self, epoch_ns: u64) -> Self {
        Self { epoch_ns, ..self }
    }

    /// `now/divider` at virtual time `now`, from `time.Now().Unix()` (whole seconds).
    fn window(&self, now: Nanos) -> u64 {
        self.epoch_ns.saturating_add(now) / NANOS_PER_SEC / self.divider
    }

    /// The first virtual ns of the window after `window`: where its key stops being used.
    fn end(&self, window: u64) -> Nanos {
        (window + 1)
            .saturating_mul(self.divider)
            .saturating_mul(NANOS_PER_SEC)
            .saturating_sub(self.epoch_ns)
    }
}

impl Limiter for EnvoyRatelimit {
    type State = EnvoyRatelimitState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::EnvoyRatelimit);

    fn new_state(&self, now: Nanos) -> EnvoyRatelimitState {
        EnvoyRatelimitState {
            window: self.window(now),
            count: 0,
        }
    }

    fn decide_n(&self, s: &mut EnvoyRatelimitState, now: Nanos, cost: Cost) -> Decision {
        let window = self.window(now);
        // A new window is a new cache key, which starts from 0.
        if s.window != window {
            *s = EnvoyRatelimitState { window, count: 0 };
        }
        // INCRBY hits_addend before the comparison, refused requests included: a cost above
        // the limit is counted, and refused with everything after it in the window.
        s.count = s.count.saturating_add(u64::from(cost));
        let end = self.end(window);
        if s.count > self.requests_per_unit {
            Decision {
                outcome: Outcome::Reject {
                    retry_after: end.saturating_sub(now).max(1),
                },
                remaining: 0,
                reset_at: end,
            }
        } else {
            Decision::allow(self.requests_per_unit - s.count, end)
        }
    }

    fn is_idle(&self, s: &EnvoyRatelimitState, now: Nanos) -> bool {
        s.count == 0 || self.window(now) != s.window
    }

    fn redis_bytes(_: &EnvoyRatelimitState) -> usize {
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC as S;

    /// 2026-01-01T00:00:30Z: 30 s past a minute boundary.
    const HALF_MINUTE_IN: u64 = DEFAULT_START + 30 * S;

    fn limiter(requests_per_unit: u64, divider: u64, epoch_ns: u64) -> EnvoyRatelimit {
        EnvoyRatelimit {
            requests_per_unit,
            divider,
            epoch_ns: DEFAULT_START,
        }
        .starting_at(epoch_ns)
    }

    #[test]
    fn minute_windows_turn_on_the_epochs_minutes_not_at_virtual_zero() {
        // 2 a minute from :30: the window ends at virtual 30 s, not 60 s.
        let l = limiter(2, 60, HALF_MINUTE_IN);
        let mut s = l.new_state(0);
        let d = l.decide(&mut s, 0);
        assert_eq!(d, Decision::allow(1, 30 * S));
        assert_eq!(l.decide(&mut s, S), Decision::allow(0, 30 * S));
        let d = l.decide(&mut s, 29 * S + 999_999_999);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert_eq!((d.remaining, d.reset_at), (0, 30 * S));
        assert!(!l.is_idle(&s, 30 * S - 1));
        assert!(l.is_idle(&s, 30 * S));
        // At virtual 30 s (00:01:00Z) a new key: the next window ends at 90 s.
        assert_eq!(l.decide(&mut s, 30 * S), Decision::allow(1, 90 * S));
    }

    #[test]
    fn whole_seconds_decide_the_window() {
        // Unix() truncates: 00:00:59.999999999 is still second 59, in the first minute.
        let l = limiter(1, 60, DEFAULT_START + 500_000_000);
        let mut s = l.new_state(0);
        assert!(l.decide(&mut s, 0).outcome.is_admitted());
        // Virtual 59.5 s is 00:01:00.0: the next minute.
        let d = l.decide(&mut s, 59 * S + 499_999_999);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert!(l.decide(&mut s, 59 * S + 500_000_000).outcome.is_admitted());
    }

    #[test]
    fn a_month_is_2_592_000_seconds_from_the_epoch() {
        // 2026-01-01 is 1767225600 s = 681 × 2592000 + 2073600: 518400 s (6 days) left in its
        // 30-day window, which ends at 2025-12-07 + 30 d = 2026-01-07.
        assert_eq!(1_767_225_600 % 2_592_000, 2_073_600);
        let l = limiter(1, 2_592_000, DEFAULT_START);
        let mut s = l.new_state(0);
        assert_eq!(l.decide(&mut s, 0), Decision::allow(0, 518_400 * S));
        let d = l.decide(&mut s, 518_400 * S - 1);
        assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
        assert!(l.decide(&mut s, 518_400 * S).outcome.is_admitted());
        // A year: 1767225600 = 56 × 31536000 + 1209600: 14 days into it.
        let y = limiter(1, 31_536_000, DEFAULT_START);
        let mut s = y.new_state(0);
        assert_eq!(y.decide(&mut s, 0).reset_at, (31_536_000 - 1_209_600) * S);
    }

    #[test]
    fn refused_requests_still_count() {
        // 2 per second: 5 at once count 5 in Redis; 3 refused, remaining 0 after each.
        let l = limiter(2, 1, DEFAULT_START);
        let mut s = l.new_state(0);
        let admitted = (0..5)
            .filter(|_| l.decide(&mut s, 0).outcome.is_admitted())
            .count();
        assert_eq!((admitted, s.count), (2, 5));
        assert_eq!(l.peek(&s, S / 2).remaining, 0);
        assert_eq!(s.count, 5);
        // The next second is a new key from 0.
        assert_eq!(l.decide(&mut s, S), Decision::allow(1, 2 * S));
        assert_eq!(
            s,
            EnvoyRatelimitState {
                window: s.window,
                count: 1
            }
        );
    }

    #[test]
    fn unit_defaults_from_the_window_or_is_named() {
        let policy = |window| Params {
            limit: 5,
            window,
            burst: 1,
        };
        let kind = super::super::ProfileKind::EnvoyRatelimit;
        let p = kind.configure(policy(3_600 * S), &[]).unwrap();
        let super::super::Profile::EnvoyRatelimit(l) = p else {
            panic!("{p:?}")
        };
        assert_eq!((l.requests_per_unit, l.divider), (5, 3_600));
        let e = kind.configure(policy(2 * S), &[]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("unit"));
        assert!(
            e.reason.contains("2s is not one of the service's units"),
            "{}",
            e.reason
        );
        let given = [
            (
                "unit".to_string(),
                super::super::ParamValue::Str("MONTH".into()),
            ),
            (
                "requests_per_unit".to_string(),
                super::super::ParamValue::Int(9),
            ),
        ];
        let p = kind.configure(policy(2 * S), &given).unwrap();
        let super::super::Profile::EnvoyRatelimit(l) = p else {
            panic!("{p:?}")
        };
        assert_eq!((l.requests_per_unit, l.divider), (9, 2_592_000));
        let bad = [(
            "unit".to_string(),
            super::super::ParamValue::Str("fortnight".into()),
        )];
        let e = kind.configure(policy(S), &bad).unwrap_err();
        assert_eq!(
            e.reason,
            "\"fortnight\" is not a unit (second, minute, hour, day, week, month, year)"
        );
    }

    /// hits_addend: 4 + 4 of a limit of 10 pass (8), 4 more are refused and counted (12): the
    /// window is closed to a unit request too; a cost of 11 on a new window is counted and
    /// refused at once.
    #[test]
    fn hits_addend_is_counted_before_the_comparison() {
        let l = limiter(10, 60, DEFAULT_START);
        let mut s = l.new_state(HALF_MINUTE_IN);
        assert_eq!(l.decide_n(&mut s, HALF_MINUTE_IN, 4).remaining, 6);
        assert_eq!(l.decide_n(&mut s, HALF_MINUTE_IN, 4).remaining, 2);
        let refused = l.decide_n(&mut s, HALF_MINUTE_IN, 4);
        assert_eq!(
            refused.outcome,
            Outcome::Reject {
                retry_after: 30 * S
            }
        );
        assert_eq!(s.count, 12);
        assert!(!l.decide(&mut s, HALF_MINUTE_IN).outcome.is_admitted());
        let next = HALF_MINUTE_IN + 30 * S;
        assert!(!l.decide_n(&mut s, next, 11).outcome.is_admitted());
        assert_eq!(s.count, 11);
    }
}
