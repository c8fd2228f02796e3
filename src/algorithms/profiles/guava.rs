//! Guava's `RateLimiter` (com.google.common.util.concurrent, 31.1 as Debian packages it; the
//! class has not changed since): `SmoothRateLimiter.SmoothBursty` (`RateLimiter.create(pps)`)
//! and `SmoothRateLimiter.SmoothWarmingUp` (`RateLimiter.create(pps, warmupPeriod)`), one
//! limiter per key created at the key's first request, as a keyed Java service holds them.
//!
//! Time is the stopwatch's whole microseconds since the limiter was created
//! (`Stopwatch.elapsed(MICROSECONDS)`, truncated). The state is `storedPermits` (a double) and
//! `nextFreeTicketMicros` (a long). A request is admitted unless `nextFreeTicketMicros −
//! timeout > now` (`tryAcquire`'s `canAcquire`), and then pays *forward*: it waits until the old
//! `nextFreeTicketMicros` (zero for the first after an idle spell) and pushes the next free
//! ticket by the cost of its permits: stored permits cost nothing (bursty) or the integral of
//! the warm-up ramp over the ones taken from storage, fresh ones `stableIntervalMicros` each.
//! `acquire()` has no timeout: it always admits and delays.
//!
//! A request of cost `n` is `tryAcquire(n, timeout, MICROSECONDS)` / `acquire(n)`
//! (`reserveEarliestAvailable(n, now)`: `min(n, storedPermits)` from storage, the rest fresh).
//! Admission never looks at `n`: any number of permits, above `maxPermits` too, is admitted at
//! once by a free limiter, and the *next* request waits for them (the debt). The doubles follow the Java expressions operation by operation
//! (`resync`, `reserveEarliestAvailable`, `storedPermitsToWaitTime`, `doSetRate`), and Java's
//! `(long)` cast truncates as Rust's `as i64` does.

use super::{Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight, first_ns};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Limiter, Outcome, Params};
use crate::time::{NANOS_PER_MICRO, NANOS_PER_SEC, Nanos};

/// `SmoothWarmingUp`'s ramp: the permits above `threshold` cost more, up to `cold` intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ramp {
    warmup_micros: i64,
    threshold: f64,
    slope: f64,
}

/// The shared `SmoothRateLimiter`, bursty when `ramp` is `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Smooth {
    stable_interval: f64,
    max_permits: f64,
    ramp: Option<Ramp>,
    /// `tryAcquire(permits, timeout)` in µs; `None`: `acquire(permits)`.
    timeout: Option<i64>,
}

/// One key's limiter: `storedPermits`, `nextFreeTicketMicros`, and when it was created (the
/// stopwatch's zero, virtual ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuavaState {
    pub(crate) stored: f64,
    pub(crate) next_free: i64,
    pub(crate) created: Nanos,
}

impl GuavaState {
    /// Guava's `storedPermits` after the last decision (a double, as Guava keeps it).
    pub fn stored_permits(&self) -> f64 {
        self.stored
    }
}

impl Smooth {
    fn micros(s: &GuavaState, now: Nanos) -> i64 {
        ((now - s.created) / NANOS_PER_MICRO) as i64
    }

    fn cool_down_interval(&self) -> f64 {
        match self.ramp {
            None => self.stable_interval,
            Some(r) => r.warmup_micros as f64 / self.max_permits,
        }
    }

    /// `resync(nowMicros)`.
    fn resync(&self, s: &mut GuavaState, now_micros: i64) {
        if now_micros > s.next_free {
            let new_permits = (now_micros - s.next_free) as f64 / self.cool_down_interval();
            s.stored = self.max_permits.min(s.stored + new_permits);
            s.next_free = now_micros;
        }
    }

    /// `storedPermitsToWaitTime(storedPermits, permitsToTake)`.
    fn stored_wait(&self, stored: f64, mut take: f64) -> i64 {
        let Some(r) = self.ramp else { return 0 };
        let to_time = |permits: f64| self.stable_interval + permits * r.slope;
        let above = stored - r.threshold;
        let mut micros: i64 = 0;
        if above > 0.0 {
            let above_take = above.min(take);
            let length = to_time(above) + to_time(above - above_take);
            micros = (above_take * length / 2.0) as i64;
            take -= above_take;
        }
        micros.wrapping_add((self.stable_interval * take) as i64)
    }

    /// `reserveAndGetWaitLength(permits, nowMicros)`: the µs to wait. The wait is the previous
    /// requests' debt; these permits only push the next free ticket.
    fn reserve(&self, s: &mut GuavaState, now_micros: i64, permits: Cost) -> i64 {
        self.resync(s, now_micros);
        let moment_available = s.next_free;
        // `min(requiredPermits, storedPermits)`, the int widened to a double.
        let required = f64::from(permits);
        let spend = required.min(s.stored);
        let fresh = required - spend;
        let wait = self
            .stored_wait(s.stored, spend)
            .wrapping_add((fresh * self.stable_interval) as i64);
        s.next_free = s.next_free.saturating_add(wait);
        s.stored -= spend;
        (moment_available - now_micros).max(0)
    }

    /// The stored permits at `now` without changing the state.
    fn stored_at(&self, s: &GuavaState, now: Nanos) -> f64 {
        let mut copy = *s;
        self.resync(&mut copy, Self::micros(s, now));
        copy.stored
    }

    fn new_state(&self, now: Nanos) -> GuavaState {
        GuavaState {
            // `doSetRate` from a zero `maxPermits`: empty when bursty, full ("cold") warming up.
            stored: if self.ramp.is_some() {
                self.max_permits
            } else {
                0.0
            },
            next_free: 0,
            created: now,
        }
    }

    /// `tryAcquire(permits, timeout, MICROSECONDS)` or `acquire(permits)`. `canAcquire` looks
    /// at the next free ticket only, so the permits never decide admission (none is too many):
    /// they are paid for by the next request.
    fn decide(&self, s: &mut GuavaState, now: Nanos, permits: Cost) -> Decision {
        let now_micros = Self::micros(s, now);
        if let Some(timeout) = self.timeout
            && s.next_free.saturating_sub(timeout) > now_micros
        {
            // `canAcquire` is false; nothing changes. It holds again from that µs on.
            let at_micros = s.next_free.saturating_sub(timeout);
            let at = s.created + at_micros as Nanos * NANOS_PER_MICRO;
            return Decision {
                outcome: Outcome::Reject {
                    retry_after: at.saturating_sub(now).max(1),
                },
                remaining: 0,
                reset_at: self.full_at(s, now),
            };
        }
        let wait = self.reserve(s, now_micros, permits);
        Decision {
            outcome: match wait {
                0 => Outcome::Allow,
                w => Outcome::Delay(w as Nanos * NANOS_PER_MICRO),
            },
            remaining: if s.next_free <= now_micros {
                s.stored as u64
            } else {
                0
            },
            reset_at: self.full_at(s, now),
        }
    }

    fn full_at(&self, s: &GuavaState, now: Nanos) -> Nanos {
        first_ns(now, |x| self.stored_at(s, x) >= self.max_permits)
    }
}

/// Both Guava profiles weigh a request alike.
const GUAVA_WEIGHT: &str = "acquire(permits) / tryAcquire(permits, timeout, unit): admitted on the next free ticket alone, any number of permits (above maxPermits too), paid for by the next request";

/// `permitsPerSecond`: `1e6 / pps` is the stable interval (µs).
const PERMITS_PER_SECOND: ParamSpec = ParamSpec {
    name: "permitsPerSecond",
    ty: ParamType::Number,
    default: "policy limit / policy window in seconds (a double)",
    doc: "RateLimiter.create(permitsPerSecond): the stable rate",
};

const TIMEOUT: ParamSpec = ParamSpec {
    name: "timeout",
    ty: ParamType::Duration,
    default: "0 (tryAcquire(permits): refuse unless the next ticket is free now)",
    doc: "tryAcquire(permits, timeout): admit (and wait) when the next free ticket is at most this far off; whole µs",
};

const ACQUIRE: ParamSpec = ParamSpec {
    name: "acquire",
    ty: ParamType::Bool,
    default: "false",
    doc: "true: acquire(permits), which never refuses and waits as long as it takes",
};

fn permits_per_second(policy: Params, args: &Args<'_>) -> Result<f64, ProfileError> {
    let pps = match args.number("permitsPerSecond")? {
        Some(p) => p,
        None => policy.limit as f64 / (policy.window as f64 / NANOS_PER_SEC as f64),
    };
    if !(pps > 0.0 && pps.is_finite()) {
        return Err(ProfileError::param(
            "permitsPerSecond",
            "must be a positive finite number (Guava: checkArgument(permitsPerSecond > 0.0))",
        ));
    }
    Ok(pps)
}

fn timeout(args: &Args<'_>) -> Result<Option<i64>, ProfileError> {
    if args.bool("acquire")?.unwrap_or(false) {
        if args.str("timeout")?.is_some() {
            return Err(ProfileError::param(
                "timeout",
                "acquire() takes no timeout: give one or the other",
            ));
        }
        return Ok(None);
    }
    let t = args.duration("timeout", false)?.unwrap_or(0);
    Ok(Some((t / NANOS_PER_MICRO).min(i64::MAX as u64) as i64))
}

macro_rules! guava_limiter {
    ($ty:ident, $kind:ident) => {
        impl Limiter for $ty {
            type State = GuavaState;
            const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::$kind);

            fn new_state(&self, now: Nanos) -> GuavaState {
                self.0.new_state(now)
            }

            fn decide_n(&self, s: &mut GuavaState, now: Nanos, cost: Cost) -> Decision {
                self.0.decide(s, now, cost)
            }

            fn is_idle(&self, _: &GuavaState, _: Nanos) -> bool {
                // Never as good as new: a new bursty limiter starts empty, and a limiter's
                // microseconds count from its creation, so a rested one ticks at another phase
                // of the nanosecond clock than one created now.
                false
            }

            fn redis_bytes(_: &GuavaState) -> usize {
                // In-process; a Redis port would keep a small hash (stored, next free).
                crate::algorithms::redis::SMALL_HASH_KEY
            }
        }
    };
}

/// `RateLimiter.create(permitsPerSecond)`: `SmoothBursty` with `maxBurstSeconds = 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuavaBursty(Smooth);

// Every double is finite and never NaN (validated rates).
impl Eq for GuavaBursty {}

impl ProfileDef for GuavaBursty {
    const NAME: &'static str = "guava-bursty";
    const DESCRIPTION: &'static str = "Java Guava 31 RateLimiter.create(pps) (SmoothBursty): up to 1 s of unused permits saved, each request pays the next one's wait, µs clock, doubles";
    const WEIGHT: Weight = Weight::Takes(GUAVA_WEIGHT);
    const PARAMS: &'static [ParamSpec] = &[PERMITS_PER_SECOND, TIMEOUT, ACQUIRE];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let pps = permits_per_second(policy, args)?;
        Ok(GuavaBursty(Smooth {
            stable_interval: 1_000_000.0 / pps,
            max_permits: 1.0 * pps,
            ramp: None,
            timeout: timeout(args)?,
        }))
    }
}

guava_limiter!(GuavaBursty, GuavaBursty);

/// `RateLimiter.create(permitsPerSecond, warmupPeriod)`: `SmoothWarmingUp` with
/// `coldFactor = 3`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuavaWarmup(Smooth);

impl Eq for GuavaWarmup {}

impl ProfileDef for GuavaWarmup {
    const NAME: &'static str = "guava-warmup";
    const DESCRIPTION: &'static str = "Java Guava 31 RateLimiter.create(pps, warmupPeriod) (SmoothWarmingUp): starts cold, permits cost up to 3 intervals until warm, µs clock, doubles";
    const WEIGHT: Weight = Weight::Takes(GUAVA_WEIGHT);
    const PARAMS: &'static [ParamSpec] = &[
        PERMITS_PER_SECOND,
        ParamSpec {
            name: "warmupPeriod",
            ty: ParamType::Duration,
            default: "policy window",
            doc: "the time from cold (every permit at 3 stable intervals) to the stable rate; whole µs",
        },
        TIMEOUT,
        ACQUIRE,
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let pps = permits_per_second(policy, args)?;
        let warmup = args
            .duration("warmupPeriod", false)?
            .unwrap_or(policy.window);
        let warmup_micros = (warmup / NANOS_PER_MICRO).min(i64::MAX as u64) as i64;
        if warmup_micros == 0 {
            // Guava accepts 0, then divides by it (NaN permits): refused here.
            return Err(ProfileError::param(
                "warmupPeriod",
                "must be at least 1 µs (Guava divides by it)",
            ));
        }
        let stable = 1_000_000.0 / pps;
        let cold_factor = 3.0;
        let cold = stable * cold_factor;
        let threshold = 0.5 * warmup_micros as f64 / stable;
        let max_permits = threshold + 2.0 * warmup_micros as f64 / (stable + cold);
        let slope = (cold - stable) / (max_permits - threshold);
        Ok(GuavaWarmup(Smooth {
            stable_interval: stable,
            max_permits,
            ramp: Some(Ramp {
                warmup_micros,
                threshold,
                slope,
            }),
            timeout: timeout(args)?,
        }))
    }
}

guava_limiter!(GuavaWarmup, GuavaWarmup);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_MILLI as MS;

    fn bursty(pps: f64, timeout: Option<i64>) -> GuavaBursty {
        GuavaBursty(Smooth {
            stable_interval: 1_000_000.0 / pps,
            max_permits: pps,
            ramp: None,
            timeout,
        })
    }

    /// 2 permits/s (500 ms apart), tryAcquire(): the first request is free and books the next
    /// ticket at 500 ms; one at 100 ms is refused (500 > 100); at 500 ms admitted, next at 1 s.
    /// Idle from 1 s to 3 s saves 2 s / 500 ms = 4 permits, capped at maxPermits = 2: two at
    /// 3 s are admitted at once from storage, and the third books a fresh permit: admitted too
    /// (the ticket was now), the fourth refused until 3.5 s.
    #[test]
    fn bursty_pays_forward_and_saves_one_second() {
        let g = bursty(2.0, Some(0));
        let mut s = g.new_state(0);
        let outcomes: Vec<Outcome> = [0, 100, 500, 3000, 3000, 3000, 3000]
            .iter()
            .map(|ms| g.decide(&mut s, ms * MS).outcome)
            .collect();
        assert_eq!(
            outcomes,
            [
                Outcome::Allow,
                Outcome::Reject {
                    retry_after: 400 * MS
                },
                Outcome::Allow,
                Outcome::Allow,
                Outcome::Allow,
                Outcome::Allow,
                Outcome::Reject {
                    retry_after: 500 * MS
                },
            ]
        );
        assert_eq!((s.stored, s.next_free), (0.0, 3_500_000));
    }

    /// acquire() at 2/s: three at once wait 0, 500 and 1000 ms.
    #[test]
    fn acquire_delays_each_by_the_tickets_before_it() {
        let g = bursty(2.0, None);
        let mut s = g.new_state(7 * MS);
        let waits: Vec<Outcome> = (0..3).map(|_| g.decide(&mut s, 7 * MS).outcome).collect();
        assert_eq!(
            waits,
            [
                Outcome::Allow,
                Outcome::Delay(500 * MS),
                Outcome::Delay(1000 * MS)
            ]
        );
    }

    /// 2 permits/s, maxPermits 2, tryAcquire(permits): a free limiter admits 5 permits at once
    /// (none stored: 5 fresh, 5 × 500 ms), booking the next ticket at 2.5 s; the request after
    /// pays: refused at 1 s (1.5 s early), admitted at 2.5 s. acquire(5) likewise, and the next
    /// acquire waits the 2.5 s.
    #[test]
    fn bursty_admits_permits_above_max_permits_into_debt() {
        let g = bursty(2.0, Some(0));
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 5).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (0.0, 2_500_000));
        let d = g.decide_n(&mut s, 1000 * MS, 1);
        assert_eq!(
            d.outcome,
            Outcome::Reject {
                retry_after: 1500 * MS
            }
        );
        // A refusal takes nothing; the same request with more permits is refused alike.
        assert_eq!(g.decide_n(&mut s, 1000 * MS, 7), d);
        assert_eq!(s.next_free, 2_500_000);
        assert_eq!(g.decide_n(&mut s, 2500 * MS, 1).outcome, Outcome::Allow);
        assert_eq!(s.next_free, 3_000_000);

        let g = bursty(2.0, None);
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 5).outcome, Outcome::Allow);
        assert_eq!(g.decide_n(&mut s, 0, 1).outcome, Outcome::Delay(2500 * MS));
    }

    /// 2 permits/s: one at 0 books 0.5 s; idle until 3 s saves (3 − 0.5)/0.5 = 5 permits,
    /// capped at 2. tryAcquire(3) at 3 s takes the 2 stored (free) and 1 fresh (500 ms): next
    /// ticket 3.5 s, nothing stored; one at 3.2 s is refused for 300 ms.
    #[test]
    fn bursty_takes_stored_permits_first() {
        let g = bursty(2.0, Some(0));
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 1).outcome, Outcome::Allow);
        let d = g.decide_n(&mut s, 3000 * MS, 3);
        assert_eq!((d.outcome, d.remaining), (Outcome::Allow, 0));
        assert_eq!((s.stored, s.next_free), (0.0, 3_500_000));
        assert_eq!(
            g.decide_n(&mut s, 3200 * MS, 1).outcome,
            Outcome::Reject {
                retry_after: 300 * MS
            }
        );
    }

    fn warmup_1pps_4s() -> GuavaWarmup {
        let policy = Params {
            limit: 1,
            window: NANOS_PER_SEC,
            burst: 1,
        };
        let given = [
            (
                "permitsPerSecond".to_string(),
                super::super::ParamValue::Float(1.0),
            ),
            (
                "warmupPeriod".to_string(),
                super::super::ParamValue::Str("4s".into()),
            ),
        ];
        let Ok(super::super::Profile::GuavaWarmup(g)) =
            super::super::ProfileKind::GuavaWarmup.configure(policy, &given)
        else {
            panic!("guava-warmup configures")
        };
        g
    }

    /// 1 permit/s warming up over 4 s (threshold 2, maxPermits 4, slope 1e6 µs per permit, as
    /// below). Cold, 4 stored. 3 permits from storage: the 2 above the threshold cost the ramp
    /// from 4 to 2, 2·(3e6 + 1e6)/2 = 4 s, the third the stable 1 s: next ticket 5 s, 1 stored.
    /// 6 permits (above maxPermits) from cold: 4 s + 2 s for the 4 stored, 2 fresh × 1 s: 8 s.
    #[test]
    fn warmup_prices_the_permits_taken_from_storage_on_the_ramp() {
        let g = warmup_1pps_4s();
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 3).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (1.0, 5_000_000));
        // The next request pays: refused until 5 s.
        assert_eq!(
            g.decide_n(&mut s, 0, 1).outcome,
            Outcome::Reject {
                retry_after: 5 * NANOS_PER_SEC
            }
        );
        let mut s = g.new_state(0);
        assert_eq!(g.decide_n(&mut s, 0, 6).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (0.0, 8_000_000));
    }

    /// 1 permit/s warming up over 4 s: threshold = 0.5·4e6/1e6 = 2 permits, max = 2 +
    /// 2·4e6/(1e6 + 3e6) = 4, slope = (3e6 − 1e6)/(4 − 2) = 1e6 µs per permit above the
    /// threshold. Cold (4 stored), the first request is free and costs the ramp from 4 to 3
    /// stored: (3e6 + 2e6)/2 = 2.5 s, the next ticket. One at 1 s is refused (1.5 s early); at
    /// 2.5 s (3 stored, nothing saved since: the ticket was not in the past) it costs
    /// (2e6 + 1e6)/2 = 1.5 s; at 4 s (2 stored, at the threshold) the stable 1 s.
    #[test]
    fn warmup_starts_cold() {
        let g = warmup_1pps_4s();
        assert_eq!(g.0.max_permits, 4.0);
        let mut s = g.new_state(0);
        assert_eq!(g.decide(&mut s, 0).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (3.0, 2_500_000));
        assert_eq!(
            g.decide(&mut s, 1000 * MS).outcome,
            Outcome::Reject {
                retry_after: 1500 * MS
            }
        );
        assert_eq!(g.decide(&mut s, 2500 * MS).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (2.0, 4_000_000));
        assert_eq!(g.decide(&mut s, 4000 * MS).outcome, Outcome::Allow);
        assert_eq!((s.stored, s.next_free), (1.0, 5_000_000));
    }
}
