//! Go `golang.org/x/time/rate` v0.13.0 (`rate/rate.go`: `NewLimiter`, `reserveN`, `advance`,
//! `durationFromTokens`, `tokensFromDuration`, `Every`), one `Limiter` per key.
//!
//! A token bucket of `burst` float64 tokens, starting full, refilled continuously at `limit`
//! tokens per second (`limit = Every(every) = 1 / every.Seconds()`). A request of cost `n` is
//! `AllowN(t, n)` / `ReserveN(t, n)`: `tokens = min(burst, tokens + elapsed.Seconds()·limit) − n`;
//! when that is negative the wait is `time.Duration((−tokens / limit)·1e9)`, truncated to whole
//! nanoseconds. `Allow` admits only when that wait is 0 (so a wait under 1 ns admits, leaving
//! the tokens slightly negative: the float edge is reproduced); `Reserve` always admits and
//! delays by the wait, taking the tokens now (the bucket goes negative). `n` above `burst` is
//! never OK (`reserveN`: `ok := n <= lim.burst && …`): refused in any state, taking nothing, in
//! every mode; a refused `AllowN` takes nothing either.
//!
//! With `max_delay` it is Traefik's `rateLimit` middleware (`pkg/middlewares/ratelimiter/
//! in_memory_limiter.go`, `Allow`): `Reserve`, and when the reservation's delay is over
//! `max_delay`, `res.Cancel()` and a 429. `Reservation.CancelAt` at the reservation's own instant
//! restores its tokens: `tokens = min(burst, (advance(now) − n) + n)`, `last = now` (the float
//! sum is kept as Go computes it). Traefik itself always reserves 1; a cost there is
//! `ReserveN(t, n)` and `CancelAt(t)` as the package does them. `average` and `period` give the
//! limit as Traefik computes it, `float64(average·1e9) / float64(period ns)`, instead of `Every`.

use super::{Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, first_ns};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params, beyond_capacity};
use crate::time::{NANOS_PER_SEC, Nanos};

/// `rate.NewLimiter(rate.Every(every), burst)`, used through `Allow` or `Reserve`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GoRate {
    /// `Limit`: tokens per second.
    limit: f64,
    burst: u64,
    reserve: bool,
    /// Traefik's maximum delay: a longer reservation is cancelled and the request refused.
    max_delay: Option<Nanos>,
}

// `limit` is never NaN (1 / a positive duration).
impl Eq for GoRate {}

/// The `Limiter`'s `tokens` and `last` (virtual ns; `None` is Go's zero `time.Time`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GoRateState {
    pub(crate) tokens: f64,
    pub(crate) last: Option<Nanos>,
}

impl GoRateState {
    /// The `Limiter`'s `tokens` after the last decision, as Go's float64 (negative while a
    /// reservation waits): what a differential test compares bit for bit.
    pub fn tokens(&self) -> f64 {
        self.tokens
    }
}

/// Whole tokens left for unit requests at this instant (none while the bucket is negative).
fn whole(tokens: f64) -> u64 {
    if tokens >= 0.0 { tokens as u64 } else { 0 }
}

/// `time.Duration.Seconds()`.
fn seconds(d: Nanos) -> f64 {
    (d / NANOS_PER_SEC) as f64 + (d % NANOS_PER_SEC) as f64 / 1e9
}

impl ProfileDef for GoRate {
    const NAME: &'static str = "go-x-time-rate";
    const DESCRIPTION: &'static str = "Go golang.org/x/time/rate v0.13 Limiter: float64 token bucket starting full; Allow refuses, Reserve delays";
    const WEIGHT: Weight = Weight::Takes(
        "AllowN(t, n) / ReserveN(t, n): n float64 tokens at once; n above the burst is never OK and takes nothing",
    );
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "every",
            ty: ParamType::Duration,
            default: "policy window / limit, rounded down to the nanosecond",
            doc: "rate.Every(every): one token per this interval (limit = 1 / every.Seconds())",
        },
        ParamSpec {
            name: "burst",
            ty: ParamType::Count,
            default: "policy burst",
            doc: "the bucket's size b of rate.NewLimiter(r, b); it starts full",
        },
        ParamSpec {
            name: "reserve",
            ty: ParamType::Bool,
            default: "false (Allow: refuse when no token)",
            doc: "true: Reserve (take the token now and wait for it), false: Allow",
        },
        ParamSpec {
            name: "max_delay",
            ty: ParamType::Duration,
            default: "none (Reserve waits however long)",
            doc: "Reserve, but a wait over this is cancelled (Reservation.Cancel) and refused, as Traefik's rateLimit; implies reserve",
        },
        ParamSpec {
            name: "average",
            ty: ParamType::Count,
            default: "none (use every)",
            doc: "with period: limit = float64(average·1e9) / float64(period in ns), as Traefik computes it",
        },
        ParamSpec {
            name: "period",
            ty: ParamType::Duration,
            default: "1s (with average)",
            doc: "Traefik's period, with average",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let max_delay = args.duration("max_delay", false)?;
        if max_delay.is_some() && args.bool("reserve")? == Some(false) {
            return Err(ProfileError::param(
                "max_delay",
                "needs reserve (it cancels a Reserve that would wait longer)",
            ));
        }
        let burst = args
            .count("burst", i32::MAX as u64)?
            .unwrap_or(policy.burst);
        if let Some(average) = args.count("average", i64::MAX as u64 / NANOS_PER_SEC)? {
            if args.has("every") {
                return Err(ProfileError::param(
                    "average",
                    "give `every` or `average`, not both",
                ));
            }
            let period = args.duration("period", true)?.unwrap_or(NANOS_PER_SEC);
            return Ok(GoRate {
                limit: (average * NANOS_PER_SEC) as f64 / period as f64,
                burst,
                reserve: true,
                max_delay,
            });
        }
        if args.has("period") {
            return Err(ProfileError::param("period", "needs `average`"));
        }
        let every = match args.duration("every", true)? {
            Some(e) => e,
            None => match policy.window / policy.limit {
                0 => {
                    return Err(ProfileError::general(
                        "window / limit is under 1 ns; set `every`",
                    ));
                }
                e => e,
            },
        };
        let reserve = args.bool("reserve")?.unwrap_or(max_delay.is_some());
        Ok(GoRate {
            limit: 1.0 / seconds(every),
            burst,
            reserve,
            max_delay,
        })
    }
}

impl GoRate {
    /// `advance`: the tokens at `now`, capped at the burst.
    fn advance(&self, s: &GoRateState, now: Nanos) -> f64 {
        let burst = self.burst as f64;
        match s.last {
            // Go's zero time is so long ago that the bucket is full.
            None => burst,
            Some(last) => {
                let tokens = s.tokens + seconds(now.saturating_sub(last)) * self.limit;
                if tokens > burst { burst } else { tokens }
            }
        }
    }

    /// `durationFromTokens` of the deficit, in ns (0 when there is none).
    fn wait(&self, tokens_after: f64) -> Nanos {
        if tokens_after >= 0.0 {
            return 0;
        }
        let d = (-tokens_after / self.limit) * 1e9;
        if d > i64::MAX as f64 {
            return i64::MAX as Nanos;
        }
        // `time.Duration(d)`: truncation toward zero.
        d as Nanos
    }

    fn full_at(&self, s: &GoRateState, now: Nanos) -> Nanos {
        first_ns(now, |x| self.advance(s, x) >= self.burst as f64)
    }
}

impl Limiter for GoRate {
    type State = GoRateState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::GoXTimeRate);

    fn new_state(&self, _now: Nanos) -> GoRateState {
        GoRateState {
            tokens: self.burst as f64,
            last: None,
        }
    }

    /// `AllowN(t, n)` / `ReserveN(t, n)` (then `CancelAt(t)` past `max_delay`): `n` tokens at
    /// once, the float64 deficit's wait truncated to the nanosecond. `n` above the burst is
    /// never OK and takes nothing.
    fn decide_n(&self, s: &mut GoRateState, now: Nanos, cost: Cost) -> Decision {
        let n = f64::from(cost);
        if u64::from(cost) > self.burst {
            // reserveN: `ok := n <= lim.burst && …`; a reservation that is not OK leaves the
            // limiter untouched, whatever the mode.
            return beyond_capacity(now, self.full_at(s, now), whole(self.advance(s, now)));
        }
        let tokens = self.advance(s, now) - n;
        let wait = self.wait(tokens);
        if let Some(max) = self.max_delay
            && wait > max
        {
            // Reserve, then Cancel at the same instant: its n tokens come back (restoreTokens
            // is n: no later reservation), `tokens = min(burst, (advance − n) + n)`.
            let at = first_ns(now, |x| self.wait(self.advance(s, x) - n) <= max);
            *s = GoRateState {
                tokens: (tokens + n).min(self.burst as f64),
                last: Some(now),
            };
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: (at - now).max(1),
                },
                remaining: whole(s.tokens),
                reset_at: self.full_at(s, now),
            };
        }
        if wait > 0 && !self.reserve {
            // AllowN refuses and takes nothing; smaller requests may still fit.
            let at = first_ns(now, |x| self.wait(self.advance(s, x) - n) == 0);
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: (at - now).max(1),
                },
                remaining: whole(self.advance(s, now)),
                reset_at: self.full_at(s, now),
            };
        }
        *s = GoRateState {
            tokens,
            last: Some(now),
        };
        Decision {
            outcome: if wait == 0 {
                Outcome::Allow
            } else {
                Outcome::Delay(wait)
            },
            remaining: whole(tokens),
            reset_at: self.full_at(s, now),
        }
    }

    fn is_idle(&self, s: &GoRateState, now: Nanos) -> bool {
        self.advance(s, now) >= self.burst as f64
    }

    fn redis_bytes(_: &GoRateState) -> usize {
        // In-process; a Redis port would keep a small hash (tokens, last).
        crate::algorithms::redis::SMALL_HASH_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    fn go(every: Nanos, burst: u64, reserve: bool) -> GoRate {
        GoRate {
            limit: 1.0 / seconds(every),
            burst,
            reserve,
            max_delay: None,
        }
    }

    #[test]
    fn traefik_cancels_a_reservation_over_the_max_delay() {
        // Traefik average 10, period 1s, burst 2: limit 10/s, maxDelay = 1s / (10·2) = 50 ms.
        let g = GoRate {
            limit: 10.0,
            burst: 2,
            reserve: true,
            max_delay: Some(50 * MS),
        };
        let mut s = g.new_state(0);
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Allow);
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Allow);
        // The third would wait 100 ms > 50 ms: cancelled, its token back (0 tokens, not −1).
        let d = g.decide(&mut s, 0);
        // 1 ns early, by the truncation: at 49 999 999 ns the wait is 50 000 000.99 ns → 50 ms.
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 50 * MS - 1
            }
        );
        assert_eq!(s.tokens, 0.0);
        // At 60 ms the bucket holds 0.6: a wait of 40 ms is served, delayed, bucket at −0.4.
        assert_eq!(g.decide(&mut s, 60 * MS).outcome, Outcome::Delay(40 * MS));
        // Right after, a wait of 140 ms: refused again, nothing taken.
        assert!(matches!(
            g.decide(&mut s, 60 * MS).outcome,
            Outcome::Reject { .. }
        ));
        assert!((s.tokens + 0.4).abs() < 1e-12, "{}", s.tokens);
    }

    #[test]
    fn starts_full_then_one_per_interval() {
        // Every(100ms) = 10/s, burst 2.
        let g = go(100 * MS, 2, false);
        let mut s = g.new_state(0);
        assert_eq!(g.decide(&mut s, 7 * MS), Decision::allow(1, 107 * MS));
        assert_eq!(g.decide(&mut s, 7 * MS).remaining, 0);
        // tokens −1 → wait (1/10)·1e9 = 100 ms: Allow refuses, the state is not touched. It
        // admits 1 ns early: after 99 999 999 ns the deficit is 9.99999993922529e−9 tokens, a
        // wait of 0.9999999939 ns, truncated to 0.
        let d = g.decide(&mut s, 7 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 100 * MS - 1
            }
        );
        assert_eq!(s.tokens, 0.0);
        // 0.1 s · 10 = 1.0 exactly.
        assert!(g.decide(&mut s, 107 * MS).outcome.is_admitted());
    }

    #[test]
    fn a_wait_under_one_nanosecond_admits_early() {
        // Every(600ms), burst 1: 599 999 999 ns after the first request the bucket holds
        // 0.9999999983333334 tokens; the wait (1.67e−9 / 1.6667)·1e9 = 0.99999995 ns truncates to 0.
        let g = go(600 * MS, 1, false);
        let mut s = g.new_state(0);
        assert!(g.decide(&mut s, 0).outcome.is_admitted());
        // One nanosecond earlier the wait is 1.99999997 ns → 1 ns: refused, retry 1 ns later.
        assert_eq!(
            g.decide(&mut s, 600 * MS - 2).outcome,
            Outcome::Reject { retry_after: 1 }
        );
        assert_eq!(g.decide(&mut s, 600 * MS - 1).outcome, Outcome::Allow);
        assert!(
            s.tokens < 0.0,
            "the bucket is left slightly negative: {}",
            s.tokens
        );
    }

    #[test]
    fn a_cost_above_the_burst_is_never_ok_and_takes_nothing() {
        // Every(100ms) = 10/s, burst 3: AllowN(t, 4) is false even from a full bucket, and
        // ReserveN(t, 4) is not OK (reserveN: `ok := n <= lim.burst && …`).
        for reserve in [false, true] {
            let g = go(100 * MS, 3, reserve);
            let mut s = g.new_state(0);
            // A fresh bucket is already full: the state is fresh at once, retry the minimum.
            let d = g.decide_n(&mut s, 0, 4);
            assert_eq!(d.outcome, Outcome::Reject { retry_after: 1 });
            assert_eq!((d.remaining, s.last), (3, None));
            assert_eq!(g.decide_n(&mut s, 0, 2), Decision::allow(1, 200 * MS));
            // 1 token left: full again when 0.2 s · 10 = 2 tokens are back, at 200 ms.
            let d = g.decide_n(&mut s, 0, 4);
            assert_eq!(
                d.outcome,
                Outcome::Reject {
                    retry_after: 200 * MS
                }
            );
            assert_eq!((d.remaining, s.tokens), (1, 1.0));
        }
    }

    #[test]
    fn allow_n_refuses_a_costly_request_and_leaves_room_for_smaller_ones() {
        // Every(100ms), burst 5. AllowN(0, 3) leaves 2 tokens.
        let g = go(100 * MS, 5, false);
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 3), Decision::allow(2, 300 * MS));
        // AllowN(0, 4): 2 − 4 = −2, a wait of 200 ms: refused, nothing taken, 2 units still fit.
        // Admitted 1 ns early by the truncation: at 199 999 999 ns the deficit is
        // 9.99999993922529e−9 tokens, a wait of 0.9999999939 ns → 0 (Go agrees).
        let d = g.decide_n(&mut s, 0, 4);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 200 * MS - 1
            }
        );
        assert_eq!((d.remaining, d.reset_at, s.tokens), (2, 300 * MS, 2.0));
        assert_eq!(g.decide_n(&mut s, 0, 2), Decision::allow(0, 500 * MS));
        // At 150 ms: 0 + 1.5 − 2 = −0.5, a wait of 50 ms: refused; 1 unit fits.
        let d = g.decide_n(&mut s, 150 * MS, 2);
        assert!(!d.outcome.is_admitted());
        assert_eq!(d.remaining, 1);
    }

    #[test]
    fn reserve_n_takes_n_tokens_into_debt() {
        // Every(100ms), burst 3: ReserveN(0, 3) empties the bucket; ReserveN(0, 3) again waits
        // 3 tokens = 300 ms (tokens −3); at 100 ms, −3 + 1 − 2 = −4: a wait of 400 ms.
        let g = go(100 * MS, 3, true);
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 3).outcome, Outcome::Allow);
        assert_eq!(g.decide_n(&mut s, 0, 3).outcome, Outcome::Delay(300 * MS));
        assert_eq!(s.tokens, -3.0);
        assert_eq!(
            g.decide_n(&mut s, 100 * MS, 2).outcome,
            Outcome::Delay(400 * MS)
        );
        // 7 tokens short of full: 700 ms after 100 ms.
        assert_eq!((s.tokens, g.full_at(&s, 100 * MS)), (-4.0, 800 * MS));
    }

    #[test]
    fn traefik_cancels_a_costly_reservation_and_restores_its_tokens() {
        // limit 10/s, burst 4, max_delay 150 ms. ReserveN(0, 4) empties the bucket.
        let g = GoRate {
            limit: 10.0,
            burst: 4,
            reserve: true,
            max_delay: Some(150 * MS),
        };
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 4).outcome, Outcome::Allow);
        // ReserveN(0, 2) would wait 200 ms > 150 ms: cancelled, (0 − 2) + 2 = 0 tokens again.
        // It fits once 0.5 token is back, at 50 ms: (2 − 0.5)/10 s = 150 ms (at 49 999 999 ns
        // the wait is 150.000001 ms, as Go computes it).
        let d = g.decide_n(&mut s, 0, 2);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 50 * MS
            }
        );
        assert_eq!((s.tokens, s.last, d.remaining), (0.0, Some(0), 0));
        assert_eq!(
            g.decide_n(&mut s, 50 * MS, 2).outcome,
            Outcome::Delay(150 * MS)
        );
        // Above the burst: not OK, nothing reserved, nothing cancelled.
        let before = s;
        assert!(!g.decide_n(&mut s, 50 * MS, 5).outcome.is_admitted());
        assert_eq!(s, before);
    }

    #[test]
    fn reserve_delays_and_goes_negative() {
        let g = go(100 * MS, 1, true);
        let mut s = g.new_state(0);
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Allow);
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Delay(100 * MS));
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Delay(200 * MS));
        assert_eq!(s.tokens, -2.0);
        // Full again (1 token) once 300 ms have refilled 3.
        assert!(!g.is_idle(&s, 300 * MS - 1));
        assert!(g.is_idle(&s, 300 * MS));
    }
}
