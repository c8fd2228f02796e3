//! An `expect` line's names checked against the scenario (the grammar is `expect.rs`'s).

use crate::algorithms::AlgorithmKind;
use crate::metrics::MetricNames;
use crate::scenario::expect::{Expectation, Scope, parse};
use crate::scenario::model::scenario::Scenario;
use crate::scenario::model::stack::RuleUnit;
use crate::suggest;
use crate::traffic::Role;

/// Parses `text` and checks its names against `scenario`, whose reports have the shape `shape`.
pub(super) fn resolve(
    text: &str,
    scenario: &Scenario,
    shape: &MetricNames,
) -> Result<Expectation, String> {
    let syntax = parse(text)?;
    let algorithm = match syntax.algorithm {
        "*" => None,
        name => {
            // A profile's former name stands for its name (ProfileKind::ALIASES).
            let name = match name.parse::<AlgorithmKind>() {
                Ok(AlgorithmKind::Profile(p))
                    if !scenario.algorithms.iter().any(|a| a.name == name) =>
                {
                    p.name()
                }
                _ => name,
            };
            if !scenario.algorithms.iter().any(|a| a.name == name) {
                // An algorithm's name gets the parser's hints; anything else is a contender.
                let kind: AlgorithmKind = name.parse().map_err(|_| {
                    suggest::unknown(
                        "contender",
                        name,
                        scenario.algorithms.iter().map(|a| a.name.as_str()),
                    )
                })?;
                return Err(format!("`{kind}` is not among this scenario's algorithms"));
            }
            Some(name.to_string())
        }
    };
    let scope = match syntax.qualifier {
        None => Scope::Algorithm,
        Some(("role", "legit")) => Scope::Role(Role::Legit),
        Some(("role", "abusive")) => Scope::Role(Role::Abusive),
        Some(("role", other)) => {
            return Err(format!(
                "unknown role `{other}` (expected legit or abusive)"
            ));
        }
        Some(("rule", name)) => {
            rule_of_every_contender(scenario, algorithm.as_deref(), name, syntax.metric)?;
            Scope::Rule(name.to_string())
        }
        Some((_, name)) => {
            let names = scenario.traffic.iter().map(|s| s.name.as_str());
            if !names.clone().any(|n| n == name) {
                return Err(suggest::unknown("source", name, names));
            }
            Scope::Source(name.to_string())
        }
    };
    let names = shape.of(&scope);
    if !names.iter().any(|n| n == syntax.metric) {
        let what = match scope {
            Scope::Algorithm => "metric",
            Scope::Role(_) => "per-role metric",
            Scope::Source(_) => "per-source metric",
            Scope::Rule(_) => "per-rule metric",
        };
        return Err(suggest::unknown(
            what,
            syntax.metric,
            names.iter().map(String::as_str),
        ));
    }
    Ok(Expectation {
        algorithm,
        scope,
        metric: syntax.metric.to_string(),
        op: syntax.op,
        bound: syntax.bound,
        bound_text: syntax.bound_text.to_string(),
    })
}

/// A `rule=` scope needs the rule in every contender the line checks (`algorithm`, or all of
/// them for `*`), a `tokens_` figure a rule counting tokens, and a `quota_` figure a calendar
/// window.
fn rule_of_every_contender(
    scenario: &Scenario,
    algorithm: Option<&str>,
    rule: &str,
    metric: &str,
) -> Result<(), String> {
    let checked = scenario
        .algorithms
        .iter()
        .filter(|c| algorithm.is_none_or(|a| a == c.name));
    for contender in checked {
        let rules = contender
            .stack()
            .map(|s| s.rules.as_slice())
            .unwrap_or_default();
        let Some(found) = rules.iter().find(|r| r.name == rule) else {
            if rules.is_empty() {
                return Err(format!(
                    "contender `{}` has no rules (`rule=` reads a stack's `rules[]`)",
                    contender.name
                ));
            }
            let unknown = suggest::unknown("rule", rule, rules.iter().map(|r| r.name.as_str()));
            return Err(format!("{unknown} (in contender `{}`)", contender.name));
        };
        if metric.starts_with("tokens_") && !matches!(found.unit, RuleUnit::Tokens(_)) {
            return Err(format!(
                "rule `{rule}` of contender `{}` counts {}, not tokens: it has no `{metric}`",
                contender.name,
                found.unit.name()
            ));
        }
        if metric.starts_with("quota_") && found.limiter.calendar_of().is_none() {
            return Err(format!(
                "rule `{rule}` of contender `{}` is `{}`, not a calendar window: it has no `{metric}`",
                contender.name,
                found.limiter.kind()
            ));
        }
    }
    Ok(())
}
