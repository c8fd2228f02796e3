//! A brute-force reference for the judges in units ([`super::weighed`] in rolling windows,
//! [`super::periods`] per calendar period): every admission kept, every figure recounted from
//! the whole history. The two judges' properties differ only in what a window is.

use super::accuracy::AccuracyPart;
use super::burst::BurstsPart;
use super::unit_figures::UnitsPart;
use crate::time::Nanos;
use proptest::prelude::*;

/// One decision of a property: its id, time, whether the contender admitted it, its units,
/// and whether the judge is swept just before it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub id: u32,
    pub t: Nanos,
    pub admitted: bool,
    pub units: u64,
    pub sweep: bool,
}

/// Steps from generated `(id, gap, admitted, units, sweep when 0)`, times the gaps' sums.
pub(super) fn steps(events: &[(u32, Nanos, bool, u64, u8)]) -> Vec<Step> {
    let mut t = 0;
    (events.iter())
        .map(|&(id, gap, admitted, units, sweep)| {
            t += gap;
            Step {
                id,
                t,
                admitted,
                units,
                sweep: sweep == 0,
            }
        })
        .collect()
}

/// The units of `log` in the window of `s`, `counts(a, s)` saying whether an admission at `a`
/// is in it.
pub(super) fn units_in(
    log: &[(Nanos, u64)],
    s: Nanos,
    counts: impl Fn(Nanos, Nanos) -> bool,
) -> u64 {
    log.iter()
        .filter(|&&(a, _)| counts(a, s))
        .map(|&(_, u)| u)
        .sum()
}

/// Checks a judge's finished figures against `steps` recounted by brute force, with
/// `ceiling` per window: `counts(a, s)` says whether an admission at `a` is in the window of
/// `s`, `needless(log, t, u)` whether a rejection of `u` units at `t` was needless given every
/// admission of its id (`log`).
pub(super) fn check(
    (accuracy, bursts, units): (AccuracyPart, BurstsPart, UnitsPart),
    steps: &[Step],
    ceiling: u64,
    counts: impl Fn(Nanos, Nanos) -> bool + Copy,
    needless: impl Fn(&[(Nanos, u64)], Nanos, u64) -> bool,
) -> Result<(), TestCaseError> {
    let ids = steps.iter().map(|s| s.id as usize + 1).max().unwrap_or(0);
    let mut admitted: Vec<Vec<(Nanos, u64)>> = vec![Vec::new(); ids];
    let mut exact: Vec<Vec<(Nanos, u64)>> = vec![Vec::new(); ids];
    let mut rejected = Vec::new();
    let (mut violations, mut over, mut worst, mut wrong) = (0, 0, 0, (0, 0));
    for s in steps {
        let e = &mut exact[s.id as usize];
        let fits = units_in(e, s.t, counts) + s.units <= ceiling;
        if fits {
            e.push((s.t, s.units));
        }
        match (s.admitted, fits) {
            (true, false) => wrong.0 += 1,
            (false, true) => wrong.1 += 1,
            _ => {}
        }
        if s.admitted {
            let a = &mut admitted[s.id as usize];
            a.push((s.t, s.units));
            let held = units_in(a, s.t, counts);
            worst = worst.max(held);
            if held > ceiling {
                violations += 1;
                over += s.units.min(held - ceiling);
            }
        } else {
            rejected.push(*s);
        }
    }
    let needless: Vec<u64> = (rejected.iter())
        .filter(|s| needless(&admitted[s.id as usize], s.t, s.units))
        .map(|s| s.units)
        .collect();
    prop_assert_eq!(bursts.policy_violations, violations);
    prop_assert_eq!(units.total.over_intent, over);
    prop_assert_eq!(bursts.needless_rejections, needless.len() as u64);
    prop_assert_eq!(units.total.needless, needless.iter().sum::<u64>());
    prop_assert_eq!(bursts.max_window_admitted, worst);
    prop_assert_eq!((accuracy.wrongly_allowed, accuracy.wrongly_rejected), wrong);
    Ok(())
}
