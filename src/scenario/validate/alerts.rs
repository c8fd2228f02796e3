//! `[[alert]]` tables validated into [`AlertSpec`]s.

use super::ctx::{Ctx, Found};
use crate::error::Result;
use crate::scenario::model::alerts::{AlertSpec, DEFAULT_EVERY, GroupBy, Measure};
use crate::scenario::raw::{RawAlert, S};
use crate::time::Nanos;
use std::collections::HashSet;
use strum::VariantArray;

/// Most evaluation instants a rule may have over a run (bounds the work and the memory).
const MAX_EVALUATIONS: u64 = 10_000_000;

impl Ctx<'_> {
    /// Every `[[alert]]`; `None` when one was refused.
    pub(super) fn alerts(
        &self,
        raw: &[S<RawAlert>],
        duration: Nanos,
        found: &mut Found,
    ) -> Option<Vec<AlertSpec>> {
        let mut names = HashSet::new();
        found.all(raw.iter().enumerate(), |(i, a)| {
            let spec = self.alert(i, a.get_ref(), duration)?;
            if !names.insert(spec.name.clone()) {
                return Err(self.err(
                    a.get_ref().name.span(),
                    &format!("alert[{i}].name"),
                    format!("another alert is already named `{}`", spec.name),
                ));
            }
            Ok(spec)
        })
    }

    fn alert(&self, i: usize, a: &RawAlert, duration: Nanos) -> Result<AlertSpec> {
        let field = |f: &str| format!("alert[{i}].{f}");
        let name = a.name.get_ref().as_str();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(self.err(
                a.name.span(),
                &field("name"),
                format!(
                    "must be lowercase letters, digits and `_` (it names metrics), got `{name}`"
                ),
            ));
        }
        let measure = (Measure::VARIANTS.iter().copied())
            .find(|m| m.name() == a.count.get_ref())
            .ok_or_else(|| {
                self.err(
                    a.count.span(),
                    &field("count"),
                    format!(
                        "unknown count `{}` (expected refusals, requests or refused_share)",
                        a.count.get_ref()
                    ),
                )
            })?;
        let by = match &a.by {
            None => GroupBy::None,
            Some(b) => (GroupBy::VARIANTS.iter().copied())
                .find(|g| g.name() == b.get_ref())
                .ok_or_else(|| {
                    self.err(
                        b.span(),
                        &field("by"),
                        format!(
                            "unknown label `{}` (expected ip, user, key, endpoint, contender or none)",
                            b.get_ref()
                        ),
                    )
                })?,
        };
        let threshold = self.threshold(a, measure, &field("threshold"))?;
        let every = match &a.every {
            Some(e) => self.duration(e, &field("every"), true)?,
            None => DEFAULT_EVERY,
        };
        if duration / every > MAX_EVALUATIONS {
            let span = a.every.as_ref().map_or(a.name.span(), |e| e.span());
            return Err(self.err(
                span,
                &field("every"),
                format!(
                    "gives more than {MAX_EVALUATIONS} evaluations over the scenario's duration"
                ),
            ));
        }
        let window = self.duration(&a.window, &field("window"), true)?;
        if window % every != 0 {
            return Err(self.err(
                a.window.span(),
                &field("window"),
                format!(
                    "must be a whole number of evaluation intervals (`every`, {} ns), got {window} ns",
                    every
                ),
            ));
        }
        let for_ = match &a.for_ {
            Some(f) => self.duration(f, &field("for"), false)?,
            None => 0,
        };
        Ok(AlertSpec {
            name: name.to_string(),
            measure,
            by,
            threshold,
            window,
            for_,
            every,
        })
    }

    /// `threshold`: a share in (0, 1] for `refused_share`, else a count of at least 1.
    fn threshold(&self, a: &RawAlert, measure: Measure, field: &str) -> Result<f64> {
        let threshold = match a.threshold.get_ref() {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(f) => *f,
            other => {
                return Err(self.err(
                    a.threshold.span(),
                    field,
                    format!("must be a number, got {}", other.type_str()),
                ));
            }
        };
        let valid = match measure {
            Measure::RefusedShare => threshold > 0.0 && threshold <= 1.0,
            _ => threshold >= 1.0 && threshold.is_finite(),
        };
        if !valid {
            let expected = match measure {
                Measure::RefusedShare => "a share in (0, 1]",
                _ => "a count of at least 1",
            };
            return Err(self.err(
                a.threshold.span(),
                field,
                format!("must be {expected}, got {threshold}"),
            ));
        }
        Ok(threshold)
    }
}
