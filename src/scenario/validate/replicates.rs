//! Validation of `replicates = N`, `[[uncertain]]` and a constant source's `jitter`
//! (docs/replicates.md). Whether an uncertain value fits its field is known only by splicing it
//! into the file, which `crate::replicate::check_uncertain` does before anything runs: here
//! each entry's shape is checked.

use super::ctx::Ctx;
use crate::error::Result;
use crate::scenario::model::replicates::{
    MAX_REPLICATES, MAX_UNCERTAIN_VALUES, ReplicateSpec, Uncertain, UncertainValue,
};
use crate::scenario::raw::{RawScenario, RawTraffic, RawUncertain, S};
use crate::traffic::{Arrivals, Population, RateDist};

/// Parts per million in one percent: a jitter is kept in millionths of the gap.
const PPM_PER_PERCENT: f64 = 10_000.0;
/// The largest jitter, in percent of the gap: up to half a gap, requests keep their order.
pub(crate) const MAX_JITTER_PERCENT: f64 = 50.0;

/// Fields an `[[uncertain]]` entry cannot vary: the seed is what replicates vary, and the
/// replicate settings themselves.
const FIXED: [&str; 3] = ["seed", "replicates", "uncertain"];

impl Ctx<'_> {
    /// `replicates = N` and every `[[uncertain]]` entry.
    pub(super) fn replicates(&self, raw: &RawScenario) -> Result<ReplicateSpec> {
        let count = match &raw.replicates {
            Some(n) => Some(self.count(n, "replicates", u64::from(MAX_REPLICATES))? as u32),
            None => None,
        };
        let uncertain = raw
            .uncertain
            .iter()
            .enumerate()
            .map(|(i, u)| self.uncertain(i, u))
            .collect::<Result<Vec<_>>>()?;
        let values: usize = uncertain.iter().map(|u| u.values.len()).sum();
        if values > MAX_UNCERTAIN_VALUES {
            return Err(self.err(
                raw.uncertain[0].span(),
                "uncertain",
                format!("{values} values in all: at most {MAX_UNCERTAIN_VALUES}, one run each"),
            ));
        }
        Ok(ReplicateSpec { count, uncertain })
    }

    fn uncertain(&self, i: usize, entry: &S<RawUncertain>) -> Result<Uncertain> {
        let name = format!("uncertain[{i}]");
        let u = entry.get_ref();
        let field = u.set.get_ref().trim().to_string();
        let root = field.split(['.', '[']).next().unwrap_or("");
        if field.is_empty() || field.contains('=') {
            return Err(self.err(
                u.set.span(),
                &format!("{name}.set"),
                "must be a field's dotted path as `--set` takes it (`traffic.scraper.rate`), without `=` and a value",
            ));
        }
        if FIXED.contains(&root) {
            return Err(self.err(
                u.set.span(),
                &format!("{name}.set"),
                format!("`{root}` cannot be uncertain: replicates vary the seed"),
            ));
        }
        if u.values.get_ref().is_empty() {
            return Err(self.err(
                u.values.span(),
                &format!("{name}.values"),
                "must list at least one value to try",
            ));
        }
        let mut values = Vec::new();
        for (j, v) in u.values.get_ref().iter().enumerate() {
            let (toml, shown) = match v.get_ref() {
                toml::Value::String(s) => (toml::Value::String(s.clone()).to_string(), s.clone()),
                toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                    (v.get_ref().to_string(), v.get_ref().to_string())
                }
                other => {
                    return Err(self.err(
                        v.span(),
                        &format!("{name}.values[{j}]"),
                        format!(
                            "must be a string, a number or a boolean, got a {}",
                            other.type_str()
                        ),
                    ));
                }
            };
            values.push(UncertainValue {
                toml,
                shown,
                at: self.location(Some(v.span())),
            });
        }
        Ok(Uncertain {
            field,
            values,
            at: self.location(Some(u.set.span())),
            name,
        })
    }

    /// A source's `jitter`, in millionths of the gap between its requests; 0 without one.
    /// Only a constant source with one rate for all its clients has one gap to jitter.
    pub(super) fn jitter(
        &self,
        t: &RawTraffic,
        arrivals: &Arrivals,
        population: &Population,
        f: &dyn Fn(&str) -> String,
    ) -> Result<u32> {
        let Some(j) = &t.jitter else {
            return Ok(0);
        };
        if !matches!(arrivals, Arrivals::Constant(_)) || !matches!(population.rates, RateDist::Same)
        {
            return Err(self.err(
                j.span(),
                &f("jitter"),
                "applies only to a source with constant arrivals and one rate for all its clients (no `rate_dist`)",
            ));
        }
        let text = j.get_ref().trim();
        let percent = text
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|p| p.is_finite() && *p >= 0.0 && *p <= MAX_JITTER_PERCENT);
        match percent {
            Some(p) => Ok((p * PPM_PER_PERCENT).round() as u32),
            None => Err(self.err(
                j.span(),
                &f("jitter"),
                format!(
                    "must be a share of the gap between requests, from \"0%\" to \"{MAX_JITTER_PERCENT}%\", got `{text}`"
                ),
            )),
        }
    }
}
