//! Expectations: what a scenario claims about its results, checked by `rlsim check`.
//!
//! Grammar, one string each: `ALGORITHM [role=ROLE | source=NAME | rule=NAME] METRIC OP NUMBER`,
//! where ALGORITHM is a name or `*` (every algorithm of the scenario) and OP is one of `<=`, `<`,
//! `>=`, `>`, `==`. A name with spaces is written in double quotes: `source="sync job"`.

pub use crate::metrics::Scope;
use crate::traffic::Role;
use serde::Serialize;
use std::fmt;
use strum::VariantArray;

/// A validated expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// `None` for `*`: one check per algorithm of the scenario.
    /// The contender's name (an algorithm's, in the short form).
    pub algorithm: Option<String>,
    /// Whose figures are checked: the algorithm's own, a role's totals, one source's or one
    /// rule's.
    pub scope: Scope,
    /// The metric's name, as in `summary.json` (`legit_goodput`, `delay_p99_ns`).
    pub metric: String,
    /// How the measured value is compared with `bound`.
    pub op: Op,
    /// The number the measured value is compared with, in the metric's own unit.
    pub bound: f64,
    /// The bound as written, so output echoes `2.0` rather than `2`.
    pub bound_text: String,
}

/// A comparison operator of an expectation or a goal; serialized as its symbol.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, strum::VariantArray,
)]
pub enum Op {
    /// `<=`: at most the bound.
    #[serde(rename = "<=")]
    Le,
    /// `<`: below the bound.
    #[serde(rename = "<")]
    Lt,
    /// `>=`: at least the bound.
    #[serde(rename = ">=")]
    Ge,
    /// `>`: above the bound.
    #[serde(rename = ">")]
    Gt,
    /// `==`: equal to the bound, within a relative 1e-9.
    #[serde(rename = "==")]
    Eq,
}

impl Op {
    /// The operator as written: `<=`, `<`, `>=`, `>` or `==`.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Eq => "==",
        }
    }

    /// Whether `measured OP bound` holds. `==` allows a relative 1e-9, so a bound written in
    /// decimal matches the binary float a ratio produced (`0.1` vs `1.0 / 10.0`).
    pub fn holds(self, measured: f64, bound: f64) -> bool {
        match self {
            Op::Le => measured <= bound,
            Op::Lt => measured < bound,
            Op::Ge => measured >= bound,
            Op::Gt => measured > bound,
            Op::Eq => (measured - bound).abs() <= 1e-9 * bound.abs().max(1.0),
        }
    }
}

impl Scope {
    /// The role a `role=` scope names; `None` for the other scopes.
    pub fn role(&self) -> Option<Role> {
        match self {
            Scope::Role(r) => Some(*r),
            _ => None,
        }
    }

    /// The source a `source=` scope names; `None` for the other scopes.
    pub fn source(&self) -> Option<&str> {
        match self {
            Scope::Source(s) => Some(s),
            _ => None,
        }
    }

    /// The rule a `rule=` scope names; `None` for the other scopes.
    pub fn rule(&self) -> Option<&str> {
        match self {
            Scope::Rule(r) => Some(r),
            _ => None,
        }
    }
}

/// `key=value `, the value quoted when it holds whitespace.
fn qualifier(f: &mut fmt::Formatter<'_>, key: &str, value: &str) -> fmt::Result {
    if value.contains(char::is_whitespace) {
        write!(f, "{key}=\"{value}\" ")
    } else {
        write!(f, "{key}={value} ")
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Algorithm => Ok(()),
            Scope::Role(r) => write!(f, "role={} ", r.name()),
            Scope::Source(s) => qualifier(f, "source", s),
            Scope::Rule(r) => qualifier(f, "rule", r),
        }
    }
}

impl Expectation {
    /// The expectation as it applies to one algorithm (`*` replaced by its name).
    pub fn describe(&self, algorithm: &str) -> String {
        format!(
            "{algorithm} {}{} {} {}",
            self.scope,
            self.metric,
            self.op.symbol(),
            self.bound_text
        )
    }
}

/// An expectation as written, before its names are checked against the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Syntax<'a> {
    pub algorithm: &'a str,
    /// `(key, value)` of `role=...`, `source=...` or `rule=...`.
    pub qualifier: Option<(&'a str, &'a str)>,
    pub metric: &'a str,
    pub op: Op,
    pub bound: f64,
    pub bound_text: &'a str,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads the grammar; names are checked by `validate::expect::resolve`.
pub fn parse(text: &str) -> Result<Syntax<'_>, String> {
    let text = text.trim();
    let (algorithm, rest) = text.split_once(char::is_whitespace).ok_or_else(|| {
        "expected `ALGORITHM [role=ROLE | source=NAME | rule=NAME] METRIC OP NUMBER`".to_string()
    })?;
    let mut rest = rest.trim_start();
    let mut qualifier = None;
    let word = rest.split(char::is_whitespace).next().unwrap_or("");
    if let Some((key, value)) = word.split_once('=')
        && !key.is_empty()
        && key.chars().all(is_ident)
        && !value.starts_with('=')
    {
        if !["role", "source", "rule"].contains(&key) {
            return Err(format!(
                "unknown qualifier `{key}=` (expected role=, source= or rule=; `==` tests equality)"
            ));
        }
        let after = &rest[key.len() + 1..];
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted
                    .find('"')
                    .ok_or_else(|| format!("unclosed quote in `{key}=`"))?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => after.split_at(after.find(char::is_whitespace).unwrap_or(after.len())),
        };
        if value.is_empty() {
            return Err(format!("`{key}=` needs a value"));
        }
        qualifier = Some((key, value));
        rest = tail.trim_start();
    }
    let metric_end = rest.find(|c| !is_ident(c)).unwrap_or(rest.len());
    let (metric, rest) = rest.split_at(metric_end);
    if metric.is_empty() {
        return Err("expected a metric name".into());
    }
    let rest = rest.trim_start();
    // The longest symbol that starts the rest, so `<=` is not read as `<`.
    let op = Op::VARIANTS
        .iter()
        .copied()
        .filter(|op| rest.starts_with(op.symbol()))
        .max_by_key(|op| op.symbol().len())
        .ok_or_else(|| {
            let hint = if rest.starts_with('=') {
                " (`==` tests equality)"
            } else {
                ""
            };
            format!("expected one of <=, <, >=, >, == after `{metric}`{hint}")
        })?;
    let bound_text = rest[op.symbol().len()..].trim();
    let bound: f64 = bound_text
        .parse()
        .ok()
        .filter(|b: &f64| b.is_finite())
        .ok_or_else(|| {
            format!(
                "expected a number after `{}`, got `{bound_text}`",
                op.symbol()
            )
        })?;
    Ok(Syntax {
        algorithm,
        qualifier,
        metric,
        op,
        bound,
        bound_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Syntax<'_> {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn the_grammar() {
        let s = ok("fixed_window burst_factor <= 2.0");
        assert_eq!(
            (
                s.algorithm,
                s.qualifier,
                s.metric,
                s.op,
                s.bound,
                s.bound_text
            ),
            ("fixed_window", None, "burst_factor", Op::Le, 2.0, "2.0")
        );
        let s = ok("  * source=users admitted_share>=0.99 ");
        assert_eq!(s.algorithm, "*");
        assert_eq!(s.qualifier, Some(("source", "users")));
        assert_eq!((s.metric, s.op, s.bound), ("admitted_share", Op::Ge, 0.99));
        let s = ok("gcra role=legit admitted == 100");
        assert_eq!((s.qualifier, s.op), (Some(("role", "legit")), Op::Eq));
        let s = ok("gcra source=\"sync job\" rejected < 1e3");
        assert_eq!(
            (s.qualifier, s.bound),
            (Some(("source", "sync job")), 1000.0)
        );
        let s = ok("llm rule=tpm tokens_overshoot <= 1.5");
        assert_eq!(
            (s.qualifier, s.metric),
            (Some(("rule", "tpm")), "tokens_overshoot")
        );
        assert_eq!(ok("gcra x > -1").op, Op::Gt);
        assert_eq!(ok("gcra x<1").op, Op::Lt);
    }

    #[test]
    fn syntax_errors_say_what_was_expected() {
        let err = |t: &str| parse(t).unwrap_err();
        assert!(err("fixed_window").contains("expected `ALGORITHM"));
        assert!(err("gcra sourc=users admitted >= 1").contains("unknown qualifier `sourc=`"));
        assert!(err("gcra source= admitted >= 1").contains("needs a value"));
        assert!(err("gcra source=\"a b admitted >= 1").contains("unclosed quote"));
        assert!(err("gcra <= 1").contains("expected a metric name"));
        assert!(err("gcra burst_factor = 1").contains("`==` tests equality"));
        assert!(err("gcra burst_factor ~ 1").contains("expected one of"));
        assert!(err("gcra burst_factor <= two").contains("got `two`"));
        assert!(err("gcra burst_factor <= inf").contains("got `inf`"));
        assert!(err("gcra burst_factor <= 1 2").contains("got `1 2`"));
    }

    #[test]
    fn comparisons() {
        assert!(Op::Le.holds(2.0, 2.0) && !Op::Lt.holds(2.0, 2.0));
        assert!(Op::Ge.holds(2.0, 2.0) && !Op::Gt.holds(2.0, 2.0));
        assert!(Op::Eq.holds(1.0 / 10.0 * 3.0, 0.3));
        assert!(!Op::Eq.holds(0.3001, 0.3));
        assert!(Op::Eq.holds(0.0, 0.0) && !Op::Eq.holds(1e-6, 0.0));
    }

    #[test]
    fn description_replaces_the_star() {
        let e = Expectation {
            algorithm: None,
            scope: Scope::Source("sync job".into()),
            metric: "admitted".into(),
            op: Op::Ge,
            bound: 1.0,
            bound_text: "1.0".into(),
        };
        assert_eq!(
            e.describe("gcra"),
            "gcra source=\"sync job\" admitted >= 1.0"
        );
        let e = Expectation {
            scope: Scope::Rule("plan/pro".into()),
            ..e
        };
        assert_eq!(e.describe("llm"), "llm rule=plan/pro admitted >= 1.0");
    }
}
