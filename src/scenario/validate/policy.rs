//! `[policy]`, `algorithms`, `[algorithm.NAME]` and `[profile.NAME]`: the short form's
//! contenders, one per algorithm under the policy.

use super::ctx::{Ctx, Found};
use crate::algorithms::profiles::ParamValue;
use crate::algorithms::{AlgorithmKind, LimiterSpec, Params, Profile, ProfileKind};
use crate::error::Result;
use crate::policy::{KeyField, KeySpec, Policy};
use crate::scenario::model::scenario::Contender;
use crate::scenario::raw::{RawOverride, RawScenario, S};

impl Ctx<'_> {
    /// `[policy]`, each field checked even when another is refused.
    pub(super) fn policy(&self, raw: &RawScenario, found: &mut Found) -> Option<Policy> {
        let p = raw.policy.get_ref();
        let limit = found.ok(self.count(&p.limit, "policy.limit", u32::MAX as u64));
        let window = found.ok(self.duration(&p.window, "policy.window", true));
        let burst = match &p.burst {
            Some(b) => found.ok(self.count(b, "policy.burst", u32::MAX as u64)),
            None => limit,
        };
        let key = match &p.key {
            None => Some(KeySpec::new(vec![KeyField::Ip]).expect("non-empty")),
            Some(k) => found.ok(self.key_spec(k, "policy.key")),
        };
        Some(Policy {
            limit: limit?,
            window: window?,
            burst: burst?,
            key: key?,
        })
    }

    fn algorithm_kind(&self, s: &S<String>, field: &str) -> Result<AlgorithmKind> {
        s.get_ref()
            .parse()
            .map_err(|m: String| self.err(s.span(), field, m))
    }

    pub(super) fn algorithms(&self, raw: &RawScenario, policy: &Policy) -> Result<Vec<Contender>> {
        let kinds: Vec<AlgorithmKind> = match &raw.algorithms {
            // With contenders, the short form runs only the algorithms it lists.
            None if !raw.contender.is_empty() => Vec::new(),
            None => AlgorithmKind::ALL.to_vec(),
            Some(list) => {
                let mut kinds = Vec::new();
                for (i, name) in list.get_ref().iter().enumerate() {
                    let field = format!("algorithms[{i}]");
                    let kind = self.algorithm_kind(name, &field)?;
                    if kind == AlgorithmKind::CalendarWindow {
                        return Err(self.err(
                            name.span(),
                            &field,
                            "`calendar_window` counts per calendar period, which `[policy]`'s window is not: give it as a contender rule (`[[contender.rule]]` with `algorithm = \"calendar_window\"`, `window = \"month\"`)",
                        ));
                    }
                    if kinds.contains(&kind) {
                        return Err(self.err(
                            name.span(),
                            &field,
                            format!("`{kind}` is listed twice"),
                        ));
                    }
                    kinds.push(kind);
                }
                if kinds.is_empty() {
                    return Err(self.err(
                        list.span(),
                        "algorithms",
                        "must list at least one algorithm",
                    ));
                }
                kinds
            }
        };
        let base = Params {
            limit: policy.limit,
            window: policy.window,
            burst: policy.burst,
        };
        let mut entries: Vec<(AlgorithmKind, Params)> =
            kinds.iter().map(|&kind| (kind, base)).collect();
        for (name, over) in &raw.algorithm {
            let field = format!("algorithm.{name}");
            let kind: AlgorithmKind = name
                .parse()
                .map_err(|m: String| self.err(over.span(), &field, m))?;
            if let AlgorithmKind::Profile(p) = kind {
                return Err(self.err(
                    over.span(),
                    &field,
                    format!("`{p}` is a profile: give its own parameters in `[profile.{p}]`"),
                ));
            }
            let Some((_, params)) = entries.iter_mut().find(|(k, _)| *k == kind) else {
                return Err(self.err(
                    over.span(),
                    &field,
                    format!("`{kind}` is not in `algorithms`"),
                ));
            };
            *params = self.override_params(base, over.get_ref(), &field)?;
            if over.get_ref().burst.is_some() && !kind.uses_burst() {
                return Err(self.err(
                    over.span(),
                    &format!("{field}.burst"),
                    format!("`{kind}` has no burst parameter"),
                ));
            }
        }
        let profiles = self.profiles(raw, &entries)?;
        let mut specs = Vec::with_capacity(entries.len());
        for ((kind, params), profile) in entries.into_iter().zip(profiles) {
            let limiter = match profile {
                Some(profile) => LimiterSpec::profile(params, profile),
                None => LimiterSpec::new(kind, params).map_err(|e| {
                    // Point at the table the parameters came from: the override, or the policy.
                    let name = kind.name();
                    match raw.algorithm.get(name) {
                        Some(over) => {
                            self.err(over.span(), &format!("algorithm.{name}"), e.to_string())
                        }
                        None => self.err(raw.policy.span(), "policy", e.to_string()),
                    }
                })?,
            };
            specs.push(Contender::short(limiter));
        }
        Ok(specs)
    }

    /// Configures every profile of `entries` from its `[profile.NAME]` table (or the policy
    /// alone), pointing any error at the parameter's line: by entry, `None` for an algorithm.
    fn profiles(
        &self,
        raw: &RawScenario,
        entries: &[(AlgorithmKind, Params)],
    ) -> Result<Vec<Option<Profile>>> {
        for (name, table) in &raw.profile {
            let field = format!("profile.{name}");
            let kind: AlgorithmKind = name
                .parse()
                .map_err(|m: String| self.err(table.span(), &field, m))?;
            if !matches!(kind, AlgorithmKind::Profile(_)) {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`{kind}` is an algorithm, not a profile: override it in `[algorithm.{kind}]`"),
                ));
            }
            if !entries.iter().any(|(k, _)| *k == kind) {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`{kind}` is not in `algorithms`"),
                ));
            }
            // A former name (ProfileKind::ALIASES) and the name are the same table.
            if let Some((other, _)) = raw
                .profile
                .iter()
                .take_while(|(n, _)| *n != name)
                .find(|(n, _)| n.parse::<AlgorithmKind>() == Ok(kind))
            {
                return Err(self.err(
                    table.span(),
                    &field,
                    format!("`[profile.{other}]` already configures `{kind}`"),
                ));
            }
        }
        let mut profiles = Vec::with_capacity(entries.len());
        for &(kind, params) in entries {
            let AlgorithmKind::Profile(kind) = kind else {
                profiles.push(None);
                continue;
            };
            // The table as the scenario named it: the profile's name or a former one.
            let (written, table) = match raw
                .profile
                .iter()
                .find(|(n, _)| ProfileKind::parse(n) == Some(kind))
            {
                Some((n, t)) => (n.as_str(), Some(t)),
                None => (kind.name(), None),
            };
            let given: Vec<(String, ParamValue)> = table
                .map(|t| {
                    t.get_ref()
                        .iter()
                        .map(|(k, v)| (k.clone(), param_value(v.get_ref())))
                        .collect()
                })
                .unwrap_or_default();
            let profile = kind.configure(params, &given).map_err(|e| {
                let param = e
                    .param
                    .as_deref()
                    .and_then(|p| table?.get_ref().get_key_value(p));
                match (param, table) {
                    (Some((p, v)), _) => {
                        self.err(v.span(), &format!("profile.{written}.{p}"), e.reason)
                    }
                    (None, Some(t)) => self.err(t.span(), &format!("profile.{written}"), e.reason),
                    (None, None) => self.err(
                        raw.policy.span(),
                        "policy",
                        format!("profile `{kind}`: {}", e.reason),
                    ),
                }
            })?;
            profiles.push(Some(profile));
        }
        Ok(profiles)
    }

    fn override_params(&self, base: Params, o: &RawOverride, field: &str) -> Result<Params> {
        Ok(Params {
            limit: match &o.limit {
                Some(l) => self.count(l, &format!("{field}.limit"), u32::MAX as u64)?,
                None => base.limit,
            },
            window: match &o.window {
                Some(w) => self.duration(w, &format!("{field}.window"), true)?,
                None => base.window,
            },
            burst: match &o.burst {
                Some(b) => self.count(b, &format!("{field}.burst"), u32::MAX as u64)?,
                None => base.burst,
            },
        })
    }
}

/// A TOML value as a profile parameter.
pub(super) fn param_value(v: &toml::Value) -> ParamValue {
    match v {
        toml::Value::Integer(i) => ParamValue::Int(*i),
        toml::Value::String(s) => ParamValue::Str(s.clone()),
        toml::Value::Boolean(b) => ParamValue::Bool(*b),
        toml::Value::Float(f) => ParamValue::Float(*f),
        toml::Value::Datetime(_) => ParamValue::Other("date"),
        toml::Value::Array(_) => ParamValue::Other("array"),
        toml::Value::Table(_) => ParamValue::Other("table"),
    }
}
