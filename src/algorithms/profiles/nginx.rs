//! nginx `limit_req` (1.31.5, `src/http/modules/ngx_http_limit_req_module.c`, functions
//! `ngx_http_limit_req_lookup` and `ngx_http_limit_req_account`), one zone, one key.
//!
//! nginx keeps per key an `excess` in milli-requests and the millisecond `last` it was updated.
//! A request at `now` (nginx's cached millisecond clock) computes
//! `excess = max(0, lr.excess − rate·(now − last)/1000 + 1000)` in integer arithmetic, where
//! `rate` is milli-requests per second (`Nr/s` → N·1000, `Nr/m` → N·1000/60, both rounded down).
//! Above `burst·1000` it is rejected and the node is left untouched; otherwise `excess` and
//! `last = now` are stored, and the request waits `(excess − delay·1000)·1000/rate` ms if that is
//! positive (`nodelay` makes the threshold unreachable). A key's first request creates the node
//! with excess 0, so it never waits. Because `last` moves on every admitted request while the
//! drain `rate·ms/1000` is rounded down, frequent requests drain slower than the nominal rate:
//! that loss is nginx's and is reproduced.

use super::{Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, at_ms, ms, retry_at_ms};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{NANOS_PER_SEC, Nanos};

/// One `limit_req zone=... [burst=N] [nodelay | delay=N]` over `limit_req_zone ... rate=R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NginxLimitReq {
    /// `ctx->rate`: milli-requests per second, > 0.
    rate: u64,
    /// `limit->burst`: the burst in milli-requests.
    burst: u64,
    /// `limit->delay`: excess (milli-requests) served without delay.
    delay: u64,
}

/// nginx's `ngx_http_limit_req_node_t`, the fields that decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NginxState {
    /// No node yet (or one nginx would treat the same): the next request passes with excess 0.
    pub fresh: bool,
    /// `lr->excess`, milli-requests.
    pub excess: u64,
    /// `lr->last`, ms.
    pub last: u64,
}

/// Parses `10r/s` / `600r/m` into milli-requests per second, as `ngx_http_limit_req_zone` does.
fn parse_rate(text: &str) -> Result<u64, String> {
    let bad = || {
        let range = crate::error::must_be(
            "a whole number of requests per second or minute (`10r/s`, `600r/m`)",
            1,
            u32::MAX,
        );
        format!("rate `{text}`: {range}")
    };
    let (digits, scale) = if let Some(n) = text.strip_suffix("r/s") {
        (n, 1)
    } else if let Some(n) = text.strip_suffix("r/m") {
        (n, 60)
    } else {
        return Err(bad());
    };
    // nginx's ngx_atoi and its refusal of 0; rlsim's counts stop at u32::MAX.
    let n = crate::error::whole(digits, 1, u32::MAX.into()).map_err(|_| bad())?;
    Ok(n * 1000 / scale)
}

impl ProfileDef for NginxLimitReq {
    const NAME: &'static str = "nginx-limit-req";
    const DESCRIPTION: &'static str = "nginx 1.31 limit_req: leaky bucket in integer milli-requests on a ms clock; burst, nodelay, delay=";
    const WEIGHT: Weight = Weight::Requests(
        "nginx's limit_req adds one request's excess per request; it has no weight",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "rate",
            ty: ParamType::NginxRate,
            default: "policy limit per policy window, as milli-requests per second rounded down \
                      (a 1 min window is exactly \"<limit>r/m\")",
            doc: "limit_req_zone rate=: \"Nr/s\" or \"Nr/m\"",
        },
        ParamSpec {
            name: "burst",
            ty: ParamType::Count,
            default: "policy burst − 1 (nginx admits burst + 1 back to back)",
            doc: "limit_req burst=: excess requests queued or, with nodelay, admitted at once (0: no burst=)",
        },
        ParamSpec {
            name: "nodelay",
            ty: ParamType::Bool,
            default: "false (nginx's default: excess requests are delayed)",
            doc: "limit_req nodelay: admit requests within the burst without delay",
        },
        ParamSpec {
            name: "delay",
            ty: ParamType::Count,
            default: "unset (0: every excess request is delayed)",
            doc: "limit_req delay=: excess requests admitted without delay before delaying",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let rate = match args.str("rate")? {
            Some(text) => parse_rate(text).map_err(|m| ProfileError::param("rate", m))?,
            None => {
                let r = policy.limit as u128 * 1000 * NANOS_PER_SEC as u128 / policy.window as u128;
                if r == 0 {
                    return Err(ProfileError::general(
                        "the policy's rate is under 1 milli-request per second, which nginx cannot express; set `rate`",
                    ));
                }
                r.min(u32::MAX as u128 * 1000) as u64
            }
        };
        // nginx refuses `burst=0`; leaving it out means none.
        // 0 is `limit_req` without `burst=` (nginx's own syntax refuses `burst=0`).
        let burst = match args.count_or_zero("burst", u32::MAX as u64)? {
            Some(b) => b,
            None => policy.burst.saturating_sub(1),
        };
        let nodelay = args.bool("nodelay")?.unwrap_or(false);
        let delay = args.count("delay", u32::MAX as u64)?;
        let delay = match (nodelay, delay) {
            (true, Some(_)) => {
                return Err(ProfileError::param(
                    "delay",
                    "`delay` and `nodelay = true` are exclusive (nginx keeps whichever is written last)",
                ));
            }
            // NGX_MAX_INT_T_VALUE / 1000, as nginx stores `nodelay`.
            (true, None) => i64::MAX as u64 / 1000,
            (false, d) => d.unwrap_or(0),
        };
        Ok(NginxLimitReq {
            rate,
            burst: burst * 1000,
            delay: delay * 1000,
        })
    }
}

impl NginxLimitReq {
    /// `rate·ms/1000`, the milli-requests drained over `ms` milliseconds (rounded down).
    fn drained(&self, ms: u64) -> u128 {
        self.rate as u128 * ms as u128 / 1000
    }

    /// The first ms, from `last`, by which `drained(ms) ≥ need`.
    fn ms_to_drain(&self, need: u64) -> u64 {
        (need as u128 * 1000)
            .div_ceil(self.rate as u128)
            .min(u64::MAX as u128) as u64
    }

    /// The first instant at which the node drains back to fresh (the excess after a request
    /// would be 0).
    fn idle_at(&self, s: &NginxState) -> Nanos {
        if s.fresh {
            return 0;
        }
        at_ms(s.last.saturating_add(self.ms_to_drain(s.excess + 1000)))
    }
}

impl Limiter for NginxLimitReq {
    type State = NginxState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::NginxLimitReq);

    fn new_state(&self, _now: Nanos) -> NginxState {
        NginxState {
            fresh: true,
            excess: 0,
            last: 0,
        }
    }

    fn decide_n(&self, s: &mut NginxState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let now_ms = ms(now);
        let excess = if s.fresh {
            0
        } else {
            // Times never decrease, so nginx's clamps of negative `ms` never apply.
            let elapsed = now_ms - s.last;
            (s.excess as u128 + 1000).saturating_sub(self.drained(elapsed)) as u64
        };
        if excess > self.burst {
            // NGX_BUSY: the node is not written. The next request passes once
            // rate·ms/1000 ≥ excess_before + 1000 − burst.
            let need = s.excess + 1000 - self.burst;
            let at = s.last.saturating_add(self.ms_to_drain(need));
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: retry_at_ms(now, at),
                },
                remaining: 0,
                reset_at: self.idle_at(s),
            };
        }
        *s = NginxState {
            fresh: false,
            excess,
            last: now_ms,
        };
        let outcome = if excess <= self.delay {
            Outcome::Allow
        } else {
            // The request's timer fires when the ms clock reads now + delay.
            let wait_ms = ((excess - self.delay) as u128 * 1000 / self.rate as u128) as u64;
            match wait_ms {
                0 => Outcome::Allow,
                w => Outcome::Delay(at_ms(now_ms.saturating_add(w)) - now),
            }
        };
        Decision {
            outcome,
            remaining: (self.burst - excess) / 1000,
            reset_at: self.idle_at(s),
        }
    }

    fn is_idle(&self, s: &NginxState, now: Nanos) -> bool {
        now >= self.idle_at(s)
    }

    fn redis_bytes(_: &NginxState) -> usize {
        // Not a Redis structure: nginx's shared-memory node (rbtree node, queue, excess, last,
        // key) is about the size of a Redis string key.
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::profiles::{ParamValue, Profile, ProfileKind};
    use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_MIN};

    fn nginx(given: &[(&str, ParamValue)]) -> Result<NginxLimitReq, ProfileError> {
        let policy = Params {
            limit: 100,
            window: NANOS_PER_MIN,
            burst: 1,
        };
        let given: Vec<_> = given
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        match ProfileKind::NginxLimitReq.configure(policy, &given)? {
            Profile::NginxLimitReq(n) => Ok(n),
            other => panic!("{other:?}"),
        }
    }

    fn s(v: &str) -> ParamValue {
        ParamValue::Str(v.into())
    }

    #[test]
    fn rates_parse_as_nginx_does() {
        assert_eq!(parse_rate("10r/s"), Ok(10_000));
        assert_eq!(parse_rate("100r/m"), Ok(1666));
        assert_eq!(parse_rate("1r/m"), Ok(16));
        assert!(parse_rate("0r/s").unwrap_err().contains("0r/s"));
        assert!(parse_rate("10r/h").is_err());
        assert!(parse_rate("r/s").is_err());
        // The policy's 100 per minute is exactly "100r/m".
        assert_eq!(nginx(&[]).unwrap().rate, 1666);
        let e = nginx(&[("rate", s("0r/s"))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("rate"));
    }

    #[test]
    fn two_per_second_burst_two_nodelay() {
        // rate=2r/s burst=2 nodelay: 3 back to back (burst + 1), then one per 500 ms.
        let n = nginx(&[
            ("rate", s("2r/s")),
            ("burst", ParamValue::Int(2)),
            ("nodelay", ParamValue::Bool(true)),
        ])
        .unwrap();
        let mut st = n.new_state(0);
        // First: node created, excess 0. remaining = (2000 − 0)/1000 = 2.
        let d = n.decide(&mut st, 5 * MS + 7);
        assert_eq!(d, Decision::allow(2, 505 * MS));
        // Same ms: excess 1000, then 2000.
        assert_eq!(n.decide(&mut st, 5 * MS + 9).remaining, 1);
        assert_eq!(n.decide(&mut st, 5 * MS + 9).remaining, 0);
        assert_eq!(st.excess, 2000);
        // 3000 > 2000: busy; need rate·ms/1000 ≥ 1000 → ms ≥ 500 → at 505 ms.
        let d = n.decide(&mut st, 6 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 499 * MS
            }
        );
        assert_eq!(st.excess, 2000, "a rejected request leaves the node alone");
        assert!(!n.decide(&mut st, 505 * MS - 1).outcome.is_admitted());
        assert!(n.decide(&mut st, 505 * MS).outcome.is_admitted());
        assert_eq!(
            st,
            NginxState {
                fresh: false,
                excess: 2000,
                last: 505
            }
        );
    }

    #[test]
    fn frequent_requests_drain_slower_than_the_rate() {
        // 100r/m = 1666 milli-r/s: each 1 ms step drains 1666/1000 = 1, not 1.666.
        let n = nginx(&[
            ("burst", ParamValue::Int(5)),
            ("nodelay", ParamValue::Bool(true)),
        ])
        .unwrap();
        let mut st = n.new_state(0);
        n.decide(&mut st, 0);
        n.decide(&mut st, MS);
        assert_eq!(st.excess, 999);
        n.decide(&mut st, 2 * MS);
        assert_eq!(st.excess, 1998);
        // One step of 2 ms instead drains 3.
        let mut st2 = n.new_state(0);
        n.decide(&mut st2, 0);
        n.decide(&mut st2, MS);
        n.decide(&mut st2, 3 * MS);
        assert_eq!(st2.excess, 1996);
    }

    #[test]
    fn excess_is_delayed_without_nodelay() {
        // 2r/s burst=3, delay=1: excess 1000 passes, 2000 waits (2000−1000)·1000/2000 = 500 ms.
        let n = nginx(&[
            ("rate", s("2r/s")),
            ("burst", ParamValue::Int(3)),
            ("delay", ParamValue::Int(1)),
        ])
        .unwrap();
        let mut st = n.new_state(0);
        let t = 10 * MS + 300;
        assert_eq!(n.decide(&mut st, t).outcome, Outcome::Allow);
        assert_eq!(n.decide(&mut st, t).outcome, Outcome::Allow);
        // Released when the ms clock reads 10 + 500.
        assert_eq!(n.decide(&mut st, t).outcome, Outcome::Delay(510 * MS - t));
        assert_eq!(n.decide(&mut st, t).outcome, Outcome::Delay(1010 * MS - t));
        assert!(!n.decide(&mut st, t).outcome.is_admitted());
    }

    #[test]
    fn burst_default_and_conflicts() {
        // Policy burst 1 → nginx burst 0: a second request in the same ms is rejected.
        let n = nginx(&[("nodelay", ParamValue::Bool(true))]).unwrap();
        let mut st = n.new_state(0);
        assert!(n.decide(&mut st, 0).outcome.is_admitted());
        assert!(!n.decide(&mut st, 0).outcome.is_admitted());
        let e = nginx(&[
            ("nodelay", ParamValue::Bool(true)),
            ("delay", ParamValue::Int(2)),
        ])
        .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("delay"));
        // `burst=0` is nginx's own default (a `limit_req` without `burst=`): accepted, and the
        // second request in the same millisecond is refused, exactly as without the parameter.
        let zero = nginx(&[
            ("burst", ParamValue::Int(0)),
            ("nodelay", ParamValue::Bool(true)),
        ])
        .unwrap();
        let mut st = zero.new_state(0);
        assert!(zero.decide(&mut st, 0).outcome.is_admitted());
        assert!(!zero.decide(&mut st, 0).outcome.is_admitted());
        assert_eq!(
            nginx(&[("burst", ParamValue::Int(-1))])
                .unwrap_err()
                .param
                .as_deref(),
            Some("burst")
        );
    }

    #[test]
    fn idle_means_the_next_request_sees_a_fresh_node() {
        let n = nginx(&[("rate", s("2r/s")), ("burst", ParamValue::Int(2))]).unwrap();
        let mut st = n.new_state(0);
        n.decide(&mut st, 0);
        n.decide(&mut st, 0);
        // excess 1000 at 0 ms: drained to 0 after a request once rate·ms/1000 ≥ 2000 → 1000 ms.
        assert_eq!(n.idle_at(&st), 1000 * MS);
        assert!(!n.is_idle(&st, 1000 * MS - 1));
        let mut later = st;
        n.decide(&mut later, 1000 * MS);
        assert_eq!(later.excess, 0);
    }
}
