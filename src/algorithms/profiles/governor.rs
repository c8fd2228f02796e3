//! `governor` (Rust crate 0.10): `RateLimiter::direct(Quota::with_period(p).allow_burst(b))`.
//!
//! governor's `gcra.rs` is the virtual-scheduling GCRA that rlsim's `gcra` implements (the
//! differential test `governor_differential` in the algorithms' proptests drives the real crate),
//! so this profile is [`Gcra`] under the library's name and native parameters: the replenish
//! `period` and the `burst` (governor's `max_burst`).

use super::{Args, ParamSpec, ParamType, ProfileDef, ProfileError, Weight};
use crate::algorithms::{AlgorithmKind, Cost, Decision, Gcra, Limiter, Params, gcra::GcraState};
use crate::time::Nanos;

/// governor's GCRA with its quota's period and burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Governor(Gcra);

impl ProfileDef for Governor {
    const NAME: &'static str = "governor";
    const DESCRIPTION: &'static str =
        "Rust crate governor 0.10: GCRA, one cell per `period`, `burst` cells back to back";
    const WEIGHT: Weight =
        Weight::Takes("check_n(n): n cells at once; n above the burst is InsufficientCapacity");
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "period",
            ty: ParamType::Duration,
            default: "policy window / limit, rounded down to the nanosecond",
            doc: "Quota::with_period: the time to replenish one cell",
        },
        ParamSpec {
            name: "burst",
            ty: ParamType::Count,
            default: "policy burst",
            doc: "Quota::allow_burst: cells admitted back to back from a full bucket",
        },
    ];

    fn build(policy: Params, args: &Args<'_>) -> Result<Self, ProfileError> {
        let burst = args
            .count("burst", u32::MAX as u64)?
            .unwrap_or(policy.burst);
        let params = match args.duration("period", true)? {
            Some(period) => Params {
                limit: 1,
                window: period,
                burst,
            },
            None => Params { burst, ..policy },
        };
        Gcra::new(params)
            .map(Governor)
            .map_err(|e| ProfileError::general(e.reason))
    }
}

impl Limiter for Governor {
    type State = GcraState;
    const KIND: AlgorithmKind = AlgorithmKind::Profile(super::ProfileKind::Governor);

    fn new_state(&self, now: Nanos) -> GcraState {
        self.0.new_state(now)
    }

    /// `check_n(n)`: the GCRA of `n` cells at once; `n` above the burst is governor's
    /// `InsufficientCapacity`, a refusal no wait ends.
    fn decide_n(&self, state: &mut GcraState, now: Nanos, cost: Cost) -> Decision {
        self.0.decide_n(state, now, cost)
    }

    fn is_idle(&self, state: &GcraState, now: Nanos) -> bool {
        self.0.is_idle(state, now)
    }

    fn redis_bytes(state: &GcraState) -> usize {
        Gcra::redis_bytes(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::profiles::{ParamValue, ProfileKind};
    use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_MIN};

    #[test]
    fn period_and_burst_are_governors_quota() {
        let policy = Params {
            limit: 100,
            window: NANOS_PER_MIN,
            burst: 3,
        };
        // Default: period 600 ms, burst 3, exactly the gcra algorithm.
        let g = match ProfileKind::Governor.configure(policy, &[]).unwrap() {
            super::super::Profile::Governor(g) => g,
            other => panic!("{other:?}"),
        };
        assert_eq!(g.0, Gcra::new(policy).unwrap());
        // period 1 s, burst 2: two at once, the third 1 s after the first.
        let given = [
            ("period".to_string(), ParamValue::Str("1s".into())),
            ("burst".to_string(), ParamValue::Int(2)),
        ];
        let g = match ProfileKind::Governor.configure(policy, &given).unwrap() {
            super::super::Profile::Governor(g) => g,
            other => panic!("{other:?}"),
        };
        let mut s = g.new_state(0);
        assert!(g.decide(&mut s, 0).outcome.is_admitted());
        assert!(g.decide(&mut s, 0).outcome.is_admitted());
        assert!(!g.decide(&mut s, 999 * MS).outcome.is_admitted());
        assert!(g.decide(&mut s, 1000 * MS).outcome.is_admitted());
    }
}
