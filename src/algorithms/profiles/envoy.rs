//! Envoy's local rate limit (`source/extensions/filters/common/local_ratelimit/
//! local_ratelimit_impl.cc`, `AtomicTokenBucket`; `source/common/common/token_bucket_impl.h`,
//! `AtomicTokenBucketImpl::consume`), one token bucket per key (as a per-descriptor bucket).
//!
//! Current Envoy has no fill timer any more: the bucket is one double, `time_in_seconds`, and
//! the tokens are derived from it: `total = min(max_tokens, (now − time) · fill_rate)` with
//! `fill_rate = tokens_per_fill / fill_interval` (seconds, doubles). A request needs
//! `total >= 1`; it then sets `time = now − (total − 1) / fill_rate`. `now` is the monotonic clock
//! in seconds as a double; rlsim reads the virtual time there (Envoy started at virtual 0). A
//! key's bucket is taken as existing and full at its first request (`time = −∞`, exactly
//! `max_tokens`), as for buckets Envoy creates from its configuration; a bucket Envoy creates on
//! the fly (`time = now − max_tokens / fill_rate`) can start a token short in the doubles.
//!
//! With `fill_timer = true` it is instead the timer bucket of Envoy up to 1.35 (runtime guard
//! `no_timer_based_rate_limit_token_bucket = false`): integer tokens, `tokens_per_fill` added
//! (capped at `max_tokens`) every `fill_interval` by one timer started with Envoy, i.e. at
//! every multiple of `fill_interval` of virtual time (a refill due at the very instant of a
//! request happens first).

use super::{
    Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, first_ns, policy_millis,
};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{NANOS_PER_MILLI, Nanos};

/// `local_rate_limit` with `token_bucket { max_tokens, tokens_per_fill, fill_interval }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyLocal {
    max_tokens: u64,
    tokens_per_fill: u64,
    fill_interval_ms: u64,
    /// `tokens_per_fill / fill_interval` in tokens per second, at least one per year.
    fill_rate: f64,
    timer: bool,
}

impl Eq for EnvoyLocal {}

/// `time_in_seconds` (atomic bucket) or the integer tokens and the last tick counted (timer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EnvoyState {
    /// Current Envoy's `AtomicTokenBucketImpl` (`fill_timer = false`).
    Atomic {
        /// `time_in_seconds` (virtual seconds): the bucket holds `(now − time) · fill_rate`
        /// tokens, capped at `max_tokens`; `-inf` (full) before the key's first request.
        time: f64,
    },
    /// The fill-timer bucket of Envoy up to 1.35 (`fill_timer = true`).
    Timer {
        /// Whole tokens left after the last update, the fills up to `tick` counted.
        tokens: u64,
        /// The last fill counted: the update's virtual time divided by `fill_interval`.
        tick: u64,
    },
}

/// The monotonic clock in seconds, as `std::chrono::duration<double>` of nanoseconds gives it.
fn seconds(now: Nanos) -> f64 {
    now as f64 / 1e9
}

impl ProfileDef for EnvoyLocal {
    const NAME: &'static str = "envoy-local";
    const DESCRIPTION: &'static str = "Envoy local rate limit token bucket (max_tokens, tokens_per_fill per fill_interval); continuous double refill, or the pre-1.36 fill timer";
    const WEIGHT: Weight = Weight::Requests("Envoy's local rate limit takes one token per request");
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "max_tokens",
            ty: ParamType::Count,
            default: "policy burst",
            doc: "token_bucket.max_tokens: the bucket's size; it starts full",
        },
        ParamSpec {
            name: "tokens_per_fill",
            ty: ParamType::Count,
            default: "policy limit",
            doc: "token_bucket.tokens_per_fill",
        },
        ParamSpec {
            name: "fill_interval",
            ty: ParamType::Duration,
            default: "policy window (whole ms, at least 50 ms)",
            doc: "token_bucket.fill_interval (Envoy refuses under 50 ms)",
        },
        ParamSpec {
            name: "fill_timer",
            ty: ParamType::Bool,
            default: "false (current Envoy: continuous refill)",
            doc: "true: the fill-timer bucket of Envoy up to 1.35 (refill in steps)",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let max_tokens = args
            .count("max_tokens", u32::MAX as u64)?
            .unwrap_or(policy.burst);
        let tokens_per_fill = args
            .count("tokens_per_fill", u32::MAX as u64)?
            .unwrap_or(policy.limit);
        let fill_interval_ms = match args.millis("fill_interval", true)? {
            Some(ms) => ms,
            None => policy_millis(policy.window, "fill_interval")?,
        };
        if fill_interval_ms < 50 {
            return Err(ProfileError {
                param: args
                    .has("fill_interval")
                    .then(|| "fill_interval".to_string()),
                reason: "local rate limit token bucket fill timer must be >= 50ms".into(),
            });
        }
        const MIN_FILL_RATE: f64 = 1.0 / (365.0 * 24.0 * 60.0 * 60.0);
        let fill_rate =
            (tokens_per_fill as f64 / (fill_interval_ms as f64 / 1000.0)).max(MIN_FILL_RATE);
        Ok(EnvoyLocal {
            max_tokens,
            tokens_per_fill,
            fill_interval_ms,
            fill_rate,
            timer: args.bool("fill_timer")?.unwrap_or(false),
        })
    }
}

impl EnvoyLocal {
    fn interval(&self) -> Nanos {
        self.fill_interval_ms * NANOS_PER_MILLI
    }

    /// Tokens in the bucket at `now`, before a request.
    fn tokens(&self, s: &EnvoyState, now: Nanos) -> f64 {
        match *s {
            EnvoyState::Atomic { time } => {
                (self.max_tokens as f64).min((seconds(now) - time) * self.fill_rate)
            }
            EnvoyState::Timer { tokens, tick } => {
                let fills = (now / self.interval() - tick).saturating_mul(self.tokens_per_fill);
                self.max_tokens.min(tokens.saturating_add(fills)) as f64
            }
        }
    }
}

impl Limiter for EnvoyLocal {
    type State = EnvoyState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::EnvoyLocal);

    fn new_state(&self, now: Nanos) -> EnvoyState {
        if self.timer {
            EnvoyState::Timer {
                tokens: self.max_tokens,
                tick: now / self.interval(),
            }
        } else {
            EnvoyState::Atomic {
                time: f64::NEG_INFINITY,
            }
        }
    }

    fn decide_n(&self, s: &mut EnvoyState, now: Nanos, cost: Cost) -> Decision {
        debug_assert_eq!(cost, 1, "validation hands a unit-only profile cost 1");
        let total = self.tokens(s, now);
        let full = |s: &EnvoyState| first_ns(now, |x| self.tokens(s, x) >= self.max_tokens as f64);
        if total < 1.0 {
            let snapshot = *s;
            let at = first_ns(now, |x| self.tokens(&snapshot, x) >= 1.0);
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: (at - now).max(1),
                },
                remaining: 0,
                reset_at: full(s),
            };
        }
        *s = match *s {
            EnvoyState::Atomic { .. } => EnvoyState::Atomic {
                time: seconds(now) - (total - 1.0) / self.fill_rate,
            },
            EnvoyState::Timer { .. } => EnvoyState::Timer {
                tokens: total as u64 - 1,
                tick: now / self.interval(),
            },
        };
        Decision::allow((total - 1.0) as u64, full(s))
    }

    fn is_idle(&self, s: &EnvoyState, now: Nanos) -> bool {
        self.tokens(s, now) >= self.max_tokens as f64
    }

    fn redis_bytes(_: &EnvoyState) -> usize {
        // In-process; the size of a string key if it were kept in Redis.
        crate::algorithms::redis::STRING_KEY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    fn envoy(
        max_tokens: u64,
        tokens_per_fill: u64,
        fill_interval_ms: u64,
        timer: bool,
    ) -> EnvoyLocal {
        EnvoyLocal {
            max_tokens,
            tokens_per_fill,
            fill_interval_ms,
            fill_rate: tokens_per_fill as f64 / (fill_interval_ms as f64 / 1000.0),
            timer,
        }
    }

    #[test]
    fn timer_bucket_refills_in_steps() {
        // max 2, 1 token per 1 s: ticks at every whole second of virtual time.
        let e = envoy(2, 1, 1000, true);
        let mut s = e.new_state(1500 * MS);
        assert!(e.decide(&mut s, 1500 * MS).outcome.is_admitted());
        assert!(e.decide(&mut s, 1500 * MS).outcome.is_admitted());
        // Empty; the next fill is at 2 s (not 2.5 s).
        let d = e.decide(&mut s, 1600 * MS);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 400 * MS
            }
        );
        assert!(e.decide(&mut s, 2000 * MS).outcome.is_admitted());
        assert!(!e.decide(&mut s, 2999 * MS).outcome.is_admitted());
    }

    #[test]
    fn atomic_bucket_refills_continuously() {
        // max 2, 10 per 1 s: one token per 100 ms, from the request's own time.
        let e = envoy(2, 10, 1000, false);
        let mut s = e.new_state(3000 * MS);
        assert!(e.decide(&mut s, 3000 * MS).outcome.is_admitted());
        assert!(e.decide(&mut s, 3000 * MS).outcome.is_admitted());
        let d = e.decide(&mut s, 3050 * MS);
        let Outcome::Reject { retry_after } = d.outcome else {
            panic!("{d:?}")
        };
        // About 50 ms, give or take the doubles' rounding.
        assert!(retry_after.abs_diff(50 * MS) < 1000, "{retry_after}");
        assert!(
            e.decide(&mut s, 3050 * MS + retry_after)
                .outcome
                .is_admitted()
        );
    }

    #[test]
    fn a_bucket_created_full_can_lose_a_token_to_rounding() {
        // Envoy creating a bucket at 1.5 s sets time = 1.5 − 0.2, and (1.5 − 1.3)·10 =
        // 1.9999999999999996 tokens, not 2: the second request at that instant is refused.
        let e = envoy(2, 10, 1000, false);
        let created = |t: f64| EnvoyState::Atomic {
            time: t - 2.0 / 10.0,
        };
        let mut s = created(1.5);
        assert!(e.decide(&mut s, 1500 * MS).outcome.is_admitted());
        assert!(!e.decide(&mut s, 1500 * MS).outcome.is_admitted());
        // At 3 s the same subtraction is exact and both pass; so they do for rlsim's new keys,
        // taken as existing full buckets.
        let mut s = created(3.0);
        assert!(e.decide(&mut s, 3000 * MS).outcome.is_admitted());
        assert!(e.decide(&mut s, 3000 * MS).outcome.is_admitted());
        let mut s = e.new_state(1500 * MS);
        assert!(e.decide(&mut s, 1500 * MS).outcome.is_admitted());
        assert!(e.decide(&mut s, 1500 * MS).outcome.is_admitted());
    }
}
