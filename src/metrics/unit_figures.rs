//! The figures both judges in units keep ([`super::weighed`] in rolling windows,
//! [`super::periods`] per calendar period), whatever a window is to them: harm, units over the
//! intent and refused needlessly, violations, the exact limiter's verdicts, the worst window.

use super::accuracy::AccuracyPart;
use super::burst::BurstsPart;
use super::harm::Harm;
use crate::time::Nanos;

/// Units per source, beside [`Harm`]'s counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitsHarm {
    /// Units admitted beyond the entitlement.
    pub over_intent: u64,
    /// Units of the needless rejections.
    pub needless: u64,
}

/// The figures of a judge in units, beside the request figures it shares with the request
/// judges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitsPart {
    pub total: UnitsHarm,
    pub by_source: Vec<UnitsHarm>,
    /// Units of each admission of the worst window's trace, as `worst_window_admissions`.
    pub worst_units: Vec<u64>,
}

/// The window holding the most units of one id for its ceiling (the highest
/// `units / ceiling`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Worst {
    pub units: u64,
    pub ceiling: u64,
    pub id: u32,
    /// The admission that completed this window.
    pub end: Nanos,
}

pub(super) struct UnitFigures {
    harm: Harm,
    units: UnitsHarm,
    units_by_source: Vec<UnitsHarm>,
    violations: u64,
    wrongly_allowed: u64,
    wrongly_rejected: u64,
    pub worst: Option<Worst>,
}

impl UnitFigures {
    /// Figures over judged ids of `stride` per client.
    pub fn new(stride: u32) -> Self {
        UnitFigures {
            harm: Harm::per_client(stride),
            units: UnitsHarm::default(),
            units_by_source: Vec::new(),
            violations: 0,
            wrongly_allowed: 0,
            wrongly_rejected: 0,
            worst: None,
        }
    }

    /// The exact limiter of the intent admitted a request (`exact`) or not; the contender
    /// `admitted` it or not.
    #[inline]
    pub fn on_verdict(&mut self, exact: bool, admitted: bool) {
        if exact != admitted {
            match admitted {
                true => self.wrongly_allowed += 1,
                false => self.wrongly_rejected += 1,
            }
        }
    }

    /// An admission of `units` from `source` left its window holding `held` units against
    /// `ceiling`: past it, a violation and `min(units, held − ceiling)` units over.
    #[inline]
    pub fn on_admitted(&mut self, source: u16, units: u64, held: u64, ceiling: u64) {
        if held > ceiling {
            let over = units.min(held - ceiling);
            self.violations += 1;
            self.harm.on_violation(source);
            self.units.over_intent += over;
            super::dense::slot(&mut self.units_by_source, u32::from(source)).over_intent += over;
        }
    }

    /// `count` needless rejections of `id`'s requests of `units` each, from `source` with
    /// [`super::harm`] `flags`.
    pub fn on_needless(&mut self, id: u32, source: u16, flags: u8, (units, count): (u64, u64)) {
        for _ in 0..count {
            self.harm.on_needless(id, source, flags);
        }
        let units = units * count;
        self.units.needless += units;
        super::dense::slot(&mut self.units_by_source, u32::from(source)).needless += units;
    }

    /// Whether a window holding `held` units against `ceiling` is worse than the worst so far
    /// (an empty window never is).
    #[inline]
    pub fn is_worse(&self, held: u64, ceiling: u64) -> bool {
        let worse = |w: Worst| {
            u128::from(held) * u128::from(w.ceiling.max(1))
                > u128::from(w.units) * u128::from(ceiling.max(1))
        };
        held > 0 && self.worst.is_none_or(worse)
    }

    /// The request judges' parts and the units, once the run is over; `ceiling`: the worst
    /// window's ceiling when nothing was admitted; `trace`: the admissions around the worst
    /// window and their units.
    pub fn finish(
        self,
        ceiling: u64,
        (times, units): (Vec<Nanos>, Vec<u64>),
    ) -> (AccuracyPart, BurstsPart, UnitsPart) {
        let worst = self.worst.unwrap_or(Worst {
            units: 0,
            ceiling,
            id: 0,
            end: 0,
        });
        let accuracy = AccuracyPart {
            wrongly_allowed: self.wrongly_allowed,
            wrongly_rejected: self.wrongly_rejected,
            mean_rate_error: None,
        };
        let bursts = BurstsPart {
            max_window_admitted: worst.units,
            worst_window_key: (worst.units > 0).then_some(worst.id),
            worst_window_end_ns: worst.end,
            worst_ceiling: worst.ceiling,
            policy_violations: self.violations,
            needless_rejections: self.harm.needless,
            worst_window_admissions: times,
            harm: self.harm,
        };
        let part = UnitsPart {
            total: self.units,
            by_source: self.units_by_source,
            worst_units: units,
        };
        (accuracy, bursts, part)
    }
}
