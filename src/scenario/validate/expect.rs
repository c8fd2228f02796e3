//! An `expect` line's names checked against the scenario (the grammar is `expect.rs`'s).

use crate::algorithms::AlgorithmKind;
use crate::metrics::MetricNames;
use crate::scenario::expect::{Expectation, Scope, parse};
use crate::scenario::model::scenario::Scenario;
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
