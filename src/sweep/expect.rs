//! Claims about a sweep's recommendation, written in the scenario's `[sweep]` table and checked
//! by `rlsim check`:
//!
//! - `recommended.<swept field> OP VALUE`: `recommended.policy.limit == 60` (a duration is
//!   compared in seconds: `recommended.policy.window <= 1m`);
//! - `recommended.<figure> OP NUMBER`: `recommended.abusive_leakage <= 0.05`;
//! - `recommended.algorithm == NAME`: the recommended contender (measured 1 when it is NAME);
//! - `meeting OP NUMBER`: how many point × contender rows meet every goal.
//!
//! With no recommendation, every `recommended.` claim fails (measured: none).

use super::axis::Axis;
use super::grid::{Row, numeric};
use super::recommend::Recommendation;
use crate::scenario::Op;
use serde_json::Value;

/// One claim, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub text: String,
    /// `recommended.policy.limit`, `meeting`.
    pub subject: String,
    pub op: Op,
    pub bound: f64,
    /// For `recommended.algorithm == NAME`.
    pub name: Option<String>,
}

/// A claim checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimResult {
    pub claim: Claim,
    pub measured: Option<f64>,
    pub passed: bool,
}

const OPS: [Op; 5] = [Op::Le, Op::Ge, Op::Eq, Op::Lt, Op::Gt];

/// Parses a claim; the subject must be a swept field, a figure of `figures`, `algorithm` or
/// `meeting`.
pub fn parse(text: &str, axes: &[Axis], figures: &[String]) -> Result<Claim, String> {
    let (at, op) = OPS
        .iter()
        .filter_map(|op| text.find(op.symbol()).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, std::cmp::Reverse(op.symbol().len())))
        .ok_or_else(|| {
            format!("`{text}`: expected `SUBJECT OP VALUE`, e.g. `recommended.policy.limit == 60`")
        })?;
    let subject = text[..at].trim().to_string();
    let value = text[at + op.symbol().len()..].trim().trim_matches('"');
    let bad = |why: String| format!("`{text}`: {why}");
    let number = |v: &str| {
        v.replace('_', "")
            .parse::<f64>()
            .ok()
            .or_else(|| numeric(&Value::String(v.to_string())))
            .ok_or_else(|| bad(format!("`{v}` is not a number or a duration")))
    };
    let claim = |bound, name| Claim {
        text: text.trim().to_string(),
        subject: subject.clone(),
        op,
        bound,
        name,
    };
    if subject == "meeting" {
        return Ok(claim(number(value)?, None));
    }
    let Some(field) = subject.strip_prefix("recommended.") else {
        return Err(bad(
            "the subject is `recommended.<field>` or `meeting`".into()
        ));
    };
    if field == "algorithm" {
        if op != Op::Eq {
            return Err(bad("the contender is compared with `==`".into()));
        }
        return Ok(claim(1.0, Some(value.to_string())));
    }
    if axes.iter().any(|a| a.field == field) || figures.iter().any(|f| f == field) {
        return Ok(claim(number(value)?, None));
    }
    let known = axes
        .iter()
        .map(|a| a.field.as_str())
        .chain(figures.iter().map(String::as_str));
    Err(bad(crate::suggest::unknown(
        "swept field or figure",
        field,
        known,
    )))
}

/// Checks `claim` against the recommendation of `rows`.
pub fn evaluate(claim: &Claim, axes: &[Axis], rows: &[Row], rec: &Recommendation) -> ClaimResult {
    let row = rec.recommended.as_ref().map(|p| &rows[p.row]);
    let measured = match (claim.subject.as_str(), row) {
        ("meeting", _) => Some(rec.meeting as f64),
        (_, None) => None,
        (subject, Some(row)) => {
            let field = subject.strip_prefix("recommended.").unwrap_or(subject);
            if let Some(name) = &claim.name {
                Some(if row.name() == name { 1.0 } else { 0.0 })
            } else if let Some(i) = axes.iter().position(|a| a.field == field) {
                numeric(&row.values[i])
            } else {
                row.figure(field)
            }
        }
    };
    ClaimResult {
        claim: claim.clone(),
        measured,
        passed: measured.is_some_and(|m| claim.op.holds(m, claim.bound)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_parse_against_axes_and_figures() {
        let axes = [Axis {
            field: "policy.limit".into(),
            values: vec!["10".into()],
        }];
        let figures = ["legit_goodput".to_string()];
        let c = parse("recommended.policy.limit == 60", &axes, &figures).unwrap();
        assert_eq!(
            (c.subject.as_str(), c.op, c.bound),
            ("recommended.policy.limit", Op::Eq, 60.0)
        );
        let c = parse("recommended.legit_goodput >= 0.999", &axes, &figures).unwrap();
        assert_eq!((c.op, c.bound), (Op::Ge, 0.999));
        let c = parse("recommended.algorithm == gcra", &axes, &figures).unwrap();
        assert_eq!(c.name.as_deref(), Some("gcra"));
        assert_eq!(parse("meeting >= 1", &axes, &figures).unwrap().bound, 1.0);
        assert_eq!(
            parse("recommended.policy.limit <= 2m", &axes, &figures)
                .unwrap()
                .bound,
            120.0
        );
        assert!(
            parse("recommended.policy.limt == 1", &axes, &figures)
                .unwrap_err()
                .contains("did you mean `policy.limit`")
        );
        assert!(parse("limit == 1", &axes, &figures).is_err());
        assert!(parse("recommended.policy.limit", &axes, &figures).is_err());
    }
}
