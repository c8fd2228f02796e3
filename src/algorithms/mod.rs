//! The rate-limiting algorithms, one file each, behind the [`Limiter`] trait.
//!
//! An algorithm is pure arithmetic over one key's state and a virtual time it is handed: it never
//! reads a clock and never sees other keys. [`KeyedLimiter`] owns the per-key states (the
//! equivalent of the Redis keyspace), evicts idle keys and accounts for their memory.

mod calendar_window;
pub(crate) mod catalogue;
#[cfg(test)]
mod charge_tests;
#[cfg(test)]
mod cost_tests;
mod fixed_window;
mod gcra;
mod keyed;
mod leaky_bucket;
pub mod profiles;
#[cfg(test)]
mod proptests;
mod sliding_window_counter;
mod sliding_window_log;
mod spec;
mod token_bucket;

pub use calendar_window::{CalendarWindow, CalendarWindowState};
pub use fixed_window::{FixedWindow, FixedWindowState};
pub use gcra::{Gcra, GcraState};
pub use keyed::{KeyId, KeyTable, KeyedLimiter, MemoryUsage, keyspace_bytes, slots};
pub use leaky_bucket::{LeakyBucket, LeakyBucketState};
pub use profiles::{Profile, ProfileKind};
pub use sliding_window_counter::{SlidingWindowCounter, SlidingWindowCounterState};
pub use sliding_window_log::SlidingWindowLog;
pub use spec::LimiterSpec;
pub use token_bucket::{TokenBucket, TokenBucketState};

use crate::time::Nanos;
use std::fmt;
use std::str::FromStr;

/// What one request weighs: 1 for a plain request, more for a costly one (GraphQL points, a
/// batch, tokens). Every count an algorithm keeps is in these units.
pub type Cost = u32;

/// A refusal of a request costlier than the key's whole capacity: no state would admit it.
/// It advertises the time until the key's state is fresh, `reset_at` (at least 1 ns), and the
/// `remaining` units smaller requests still have.
// Inlined: a call returns the decision through memory, and a keyed limiter's caller then read
// it back with wider loads than the stores (a store-forwarding stall on every request).
#[inline]
pub(crate) fn beyond_capacity(now: Nanos, reset_at: Nanos, remaining: u64) -> Decision {
    Decision {
        outcome: Outcome::Reject {
            retry_after: reset_at.saturating_sub(now).max(1),
        },
        remaining,
        reset_at,
    }
}

/// What happened to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Admitted now.
    Allow,
    /// Admitted, but held back for this many nanoseconds (a shaper's queue). Always > 0.
    Delay(Nanos),
    /// Refused. `retry_after` is the earliest span after which the same key's next request would
    /// be admitted, assuming no other request of that key arrives in between. Always > 0.
    Reject {
        /// Nanoseconds from the request until the key's next request would be admitted.
        retry_after: Nanos,
    },
}

impl Outcome {
    /// The outcome's name in outputs: `allow`, `delay` or `reject`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Delay(_) => "delay",
            Outcome::Reject { .. } => "reject",
        }
    }

    /// Whether the request was admitted, at once or delayed (anything but a rejection).
    pub fn is_admitted(&self) -> bool {
        !matches!(self, Outcome::Reject { .. })
    }
}

/// A decision and what the limiter would advertise in its response headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is admitted, delayed or refused.
    pub outcome: Outcome,
    /// Further units of cost the key could spend at this same instant and have admitted, as
    /// requests of cost 1 (`X-RateLimit-Remaining`).
    pub remaining: u64,
    /// The earliest time at which the key's state is back to its initial value, i.e. its full
    /// quota is available again (`X-RateLimit-Reset`). A key is idle, and may be evicted, from
    /// this time on.
    pub reset_at: Nanos,
}

impl Decision {
    /// An immediate admission.
    pub fn allow(remaining: u64, reset_at: Nanos) -> Decision {
        Decision {
            outcome: Outcome::Allow,
            remaining,
            reset_at,
        }
    }
}

/// Policy parameters an algorithm is built from: at most `limit` requests per `window`, with a
/// burst allowance `burst` where the algorithm has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// Admissions allowed per `window` (at least 1).
    pub limit: u64,
    /// The span `limit` applies to, in ns (at least 1).
    pub window: Nanos,
    /// The burst allowance (at least 1 for the algorithms that use it, ignored by the others:
    /// see [`AlgorithmKind::uses_burst`]).
    pub burst: u64,
}

/// Why parameters cannot build a given algorithm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{algorithm}: {reason}")]
pub struct ParamsError {
    /// The name of the algorithm the parameters were for ([`AlgorithmKind::name`]).
    pub algorithm: &'static str,
    /// What is wrong with the parameters, as shown to the user.
    pub reason: String,
}

/// One rate-limiting algorithm: the decision for one key, given that key's state and the time.
///
/// Implementations are pure: the same state and time always give the same decision and the same
/// new state. Times passed for one key never decrease. A limiter is its configuration, so it is
/// `Clone`: each run of a contender (the run itself, its timing pass) starts from a copy.
pub trait Limiter: Clone + Send + Sync {
    /// Per-key state. A key seen for the first time starts from [`Limiter::new_state`].
    type State: Clone + fmt::Debug + Send;

    /// The registry entry for this algorithm.
    const KIND: AlgorithmKind;

    /// The state of a key that has never been seen (or was evicted as idle) at time `now`.
    fn new_state(&self, now: Nanos) -> Self::State;

    /// Decides on one request of the key at `now` weighing `cost` units (at least 1), updating
    /// its state. Counts, `remaining` and retry-afters are in units of cost.
    ///
    /// A request costlier than the key could ever admit (above the capacity) is refused
    /// whatever the state, and consumes nothing; its `retry_after` is the time until the key's
    /// state is fresh again (at least 1 ns), the most a limiter can say of it. A library profile
    /// whose library cannot weigh a request ([`AlgorithmKind::weighs`]) is only ever handed a
    /// cost of 1: validation refuses a scenario that would hand it more.
    fn decide_n(&self, state: &mut Self::State, now: Nanos, cost: Cost) -> Decision;

    /// Decides on one request of cost 1 ([`Limiter::decide_n`]).
    #[inline(always)]
    fn decide(&self, state: &mut Self::State, now: Nanos) -> Decision {
        self.decide_n(state, now, 1)
    }

    /// The decision [`Limiter::decide_n`] would make at `now`, leaving the state as it is (for
    /// rules all checked before any commits). The default decides on a copy, which allocates
    /// for a state that owns heap memory: such algorithms override it (the sliding window
    /// log; the library profiles with a log still copy).
    fn peek_n(&self, state: &Self::State, now: Nanos, cost: Cost) -> Decision {
        self.decide_n(&mut state.clone(), now, cost)
    }

    /// [`Limiter::peek_n`] for a request of cost 1.
    fn peek(&self, state: &Self::State, now: Nanos) -> Decision {
        self.peek_n(state, now, 1)
    }

    /// Gives back, at `now`, `units` of what a request admitted at `charged_at` was charged:
    /// its response settled an actual cost below the requested one (Shopify's refund). Units
    /// the state no longer holds are not given back: a passed window's count, tokens the bucket
    /// has refilled since, cells already drained. A state never ends fuller than a fresh one.
    /// Only the algorithms whose kind refunds ([`AlgorithmKind::refunds`]) are handed refunds;
    /// for the others (validation refuses them) it does nothing.
    fn refund(&self, _state: &mut Self::State, _now: Nanos, _charged_at: Nanos, _units: Cost) {}

    /// Charges `units` at `now` whatever the state holds: a response settled more than its
    /// request was charged up front (a gateway that counts an LLM's tokens when the stream
    /// ends). The state may go into debt, past its limit: later requests are refused until
    /// the debt has been paid back, by refill or by the window moving on. Only the algorithms
    /// whose kind charges ([`AlgorithmKind::charges`]) are handed charges; for the others
    /// (validation refuses them) it does nothing.
    fn charge(&self, _state: &mut Self::State, _now: Nanos, _units: Cost) {}

    /// Whether the key's state is equivalent to a fresh one at `now`, so it can be dropped.
    fn is_idle(&self, state: &Self::State, now: Nanos) -> bool;

    /// Heap bytes the state owns beyond its inline size (e.g. a log's buffer).
    fn heap_bytes(_state: &Self::State) -> usize {
        0
    }

    /// Estimated bytes of this state in Redis, as the data structure the algorithm is usually
    /// deployed with. An estimate from Redis's encodings (see `algorithms::redis` and docs/metrics.md).
    fn redis_bytes(state: &Self::State) -> usize;

    /// Whether [`Limiter::estimated_count`] is implemented (lets callers skip the work).
    const ESTIMATES: bool = false;

    /// For algorithms that approximate "admissions of the key in the rolling window ending at
    /// `now`", their estimate of it (before a request at `now`). Floating point, for reporting
    /// the approximation error only; decisions never use it.
    fn estimated_count(&self, _state: &Self::State, _now: Nanos) -> Option<f64> {
        None
    }
}

/// Redis memory estimates, per key, for the structures the algorithms map to. Figures are what
/// Redis 7 `MEMORY USAGE` reports for such keys with a 24-byte key name, plus the 16-byte entry
/// of the expires dictionary every rate-limit key has; they are estimates, not measurements.
pub(crate) mod redis {
    /// A string key holding a counter or a timestamp (`INCR`, `SET`): fixed window, GCRA,
    /// leaky bucket, and each of the sliding window counter's two keys.
    pub const STRING_KEY: usize = 80;
    /// A hash with two small fields in listpack encoding (token bucket: tokens, last refill).
    pub const SMALL_HASH_KEY: usize = 104;
    /// A sorted set's fixed cost in listpack encoding (up to 128 members).
    pub const ZSET_LISTPACK_KEY: usize = 80;
    /// Per member of a listpack sorted set: a 19-digit member string and its score.
    pub const ZSET_LISTPACK_ENTRY: usize = 32;
    /// Members above which Redis converts a sorted set to a skiplist (`zset-max-listpack-entries`).
    pub const ZSET_LISTPACK_MAX: usize = 128;
    /// A skiplist sorted set's fixed cost (dict, skiplist header).
    pub const ZSET_SKIPLIST_KEY: usize = 208;
    /// Per member of a skiplist sorted set: dict entry, SDS member, skiplist node and levels.
    pub const ZSET_SKIPLIST_ENTRY: usize = 112;

    /// A sorted set of `n` members.
    pub fn sorted_set(n: usize) -> usize {
        match n {
            0 => 0,
            n if n <= ZSET_LISTPACK_MAX => ZSET_LISTPACK_KEY + n * ZSET_LISTPACK_ENTRY,
            n => ZSET_SKIPLIST_KEY + n * ZSET_SKIPLIST_ENTRY,
        }
    }
}

/// Every algorithm rlsim knows, in the order reports list them: the six exact algorithms, then
/// the fidelity profiles of real libraries (see [`profiles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AlgorithmKind {
    /// [`FixedWindow`]: one counter per aligned window (`fixed_window`).
    FixedWindow,
    /// [`SlidingWindowLog`]: one timestamp per admission, an exact rolling window
    /// (`sliding_window_log`).
    SlidingWindowLog,
    /// [`SlidingWindowCounter`]: two aligned counters, the previous one weighted by its overlap
    /// (`sliding_window_counter`).
    SlidingWindowCounter,
    /// [`TokenBucket`]: `burst` tokens refilled continuously (`token_bucket`).
    TokenBucket,
    /// [`LeakyBucket`]: a queue of `burst` places, delaying then rejecting (`leaky_bucket`).
    LeakyBucket,
    /// [`Gcra`]: the generic cell rate algorithm, a theoretical arrival time per key (`gcra`).
    Gcra,
    /// A library's limiter, reproduced with its own edges.
    Profile(ProfileKind),
    /// [`CalendarWindow`]: one counter per calendar period in a time zone, a usage plan's quota
    /// (`calendar_window`). Built from a [`crate::calendar::Calendar`], not from a window length.
    CalendarWindow,
}

impl AlgorithmKind {
    /// The six exact algorithms, without the profiles ([`AlgorithmKind::every`] adds them).
    pub const ALL: [AlgorithmKind; 6] = [
        AlgorithmKind::FixedWindow,
        AlgorithmKind::SlidingWindowLog,
        AlgorithmKind::SlidingWindowCounter,
        AlgorithmKind::TokenBucket,
        AlgorithmKind::LeakyBucket,
        AlgorithmKind::Gcra,
    ];

    /// The exact algorithms, every profile, then the calendar window: everything a scenario
    /// can name. (The calendar window comes last so that the others keep their chart colours.)
    pub fn every() -> impl Iterator<Item = AlgorithmKind> + Clone {
        AlgorithmKind::ALL
            .into_iter()
            .chain(ProfileKind::ALL.map(AlgorithmKind::Profile))
            .chain([AlgorithmKind::CalendarWindow])
    }

    /// The name scenarios and outputs use (`token_bucket`, or the profile's name); [`FromStr`]
    /// parses it back.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::Profile(p) => p.name(),
            AlgorithmKind::FixedWindow => "fixed_window",
            AlgorithmKind::SlidingWindowLog => "sliding_window_log",
            AlgorithmKind::SlidingWindowCounter => "sliding_window_counter",
            AlgorithmKind::TokenBucket => "token_bucket",
            AlgorithmKind::LeakyBucket => "leaky_bucket",
            AlgorithmKind::Gcra => "gcra",
            AlgorithmKind::CalendarWindow => "calendar_window",
        }
    }

    /// One line on what the algorithm does.
    pub fn description(self) -> &'static str {
        match self {
            AlgorithmKind::FixedWindow => {
                "one counter per aligned window; rejected hits not counted"
            }
            AlgorithmKind::SlidingWindowLog => "one timestamp per admission; exact rolling window",
            AlgorithmKind::SlidingWindowCounter => {
                "two aligned counters, the previous one weighted by its overlap"
            }
            AlgorithmKind::TokenBucket => "burst tokens refilled continuously at limit per window",
            AlgorithmKind::LeakyBucket => {
                "a queue drained at limit per window; delays, then rejects"
            }
            AlgorithmKind::Gcra => {
                "theoretical arrival time; burst back to back, then one per interval"
            }
            AlgorithmKind::CalendarWindow => {
                "one counter per calendar day, week, month or year in a time zone; rejected hits not counted"
            }
            AlgorithmKind::Profile(p) => p.description(),
        }
    }

    /// Whether the algorithm weighs a request by its cost: every exact algorithm does, and a
    /// profile whose library takes a weight ([`profiles::Weight`]); the others count requests.
    pub fn weighs(self) -> bool {
        match self {
            AlgorithmKind::Profile(p) => matches!(p.weight(), profiles::Weight::Takes(_)),
            _ => true,
        }
    }

    /// Whether the algorithm can give units back when a response settles a smaller actual
    /// cost ([`Limiter::refund`]): every exact algorithm, and rate-limiter-flexible (its
    /// `reward`), the one library of the profiles that gives points back.
    pub fn refunds(self) -> bool {
        match self {
            AlgorithmKind::Profile(p) => p == ProfileKind::RateLimiterFlexible,
            _ => true,
        }
    }

    /// Whether the algorithm can be charged after its decision, into debt ([`Limiter::charge`]):
    /// every exact algorithm; no library profile (none of their libraries can).
    pub fn charges(self) -> bool {
        !matches!(self, AlgorithmKind::Profile(_))
    }

    /// Whether the algorithm uses the `burst` parameter (the others ignore it).
    pub fn uses_burst(self) -> bool {
        matches!(
            self,
            AlgorithmKind::TokenBucket | AlgorithmKind::LeakyBucket | AlgorithmKind::Gcra
        )
    }

    /// Calls `visitor` with the concrete limiter built from `params`.
    ///
    /// This is how code generic over [`Limiter`] (the engine, benches) is run for an algorithm
    /// chosen at run time, without a virtual call per decision.
    pub fn visit<V: LimiterVisitor>(
        self,
        params: Params,
        visitor: V,
    ) -> Result<V::Output, ParamsError> {
        Ok(LimiterSpec::new(self, params)?.visit(visitor))
    }

    /// Checks that `params` can build this algorithm.
    pub fn validate(self, params: Params) -> Result<(), ParamsError> {
        struct Noop;
        impl LimiterVisitor for Noop {
            type Output = ();
            fn visit<L: Limiter>(self, _: L) {}
        }
        self.visit(params, Noop)
    }
}

impl fmt::Display for AlgorithmKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AlgorithmKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AlgorithmKind::ALL
            .into_iter()
            .chain([AlgorithmKind::CalendarWindow])
            .find(|k| k.name() == s)
            .or_else(|| ProfileKind::parse(s).map(AlgorithmKind::Profile))
            .ok_or_else(|| {
                crate::suggest::unknown(
                    "algorithm or profile",
                    s,
                    AlgorithmKind::every().map(|k| k.name()),
                )
            })
    }
}

/// Code generic over the limiter type, run for an algorithm picked at run time
/// (see [`AlgorithmKind::visit`]).
pub trait LimiterVisitor {
    /// What the visit returns.
    type Output;
    /// Runs the visitor's code with the concrete limiter `limiter`.
    fn visit<L: Limiter + 'static>(self, limiter: L) -> Self::Output;
}

pub(crate) fn params_error(kind: AlgorithmKind, reason: impl Into<String>) -> ParamsError {
    ParamsError {
        algorithm: kind.name(),
        reason: reason.into(),
    }
}

/// Checks the parameters every algorithm needs.
pub(crate) fn check_common(kind: AlgorithmKind, p: Params) -> Result<(), ParamsError> {
    if p.limit == 0 {
        return Err(params_error(kind, "limit must be at least 1"));
    }
    if p.window == 0 {
        return Err(params_error(kind, "window must be longer than 0"));
    }
    if kind.uses_burst() && p.burst == 0 {
        return Err(params_error(kind, "burst must be at least 1"));
    }
    Ok(())
}
