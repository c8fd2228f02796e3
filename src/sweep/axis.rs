//! One swept field and its values: `FIELD=LIST_OR_RANGE`.
//!
//! Values are kept as the TOML text `--set` splices in, so a point is validated exactly like a
//! scenario file. Forms (see docs/sweeps.md):
//! - a list: `10,50,100` (any TOML values, or bare words taken as strings);
//! - an integer range with a step, both ends included when reached: `50..500:50`;
//! - a duration range: `10s..2m:10s`;
//! - a log range, each value `x` times the last: `1..10000:x10`.

use crate::error::{Error, Result};
use crate::time::{self, Nanos};

/// Most values one axis may have: a typo in a step should not start a million runs.
pub const MAX_VALUES: usize = 10_000;

/// A swept field: its dotted path and its values, as TOML text.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Axis {
    pub field: String,
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `FIELD=LIST_OR_RANGE`; `origin` names where it was written, for errors.
    pub fn parse(text: &str, origin: &str) -> Result<Axis> {
        let fail = |message: String| Error::Usage(format!("{origin}: {message}"));
        let (field, spec) = text
            .split_once('=')
            .filter(|(f, _)| !f.trim().is_empty())
            .ok_or_else(|| {
                fail("expected FIELD=LIST_OR_RANGE, e.g. `policy.limit=50..500:50`".into())
            })?;
        let values = values(spec.trim()).map_err(fail)?;
        Ok(Axis {
            field: field.trim().to_string(),
            values,
        })
    }
}

/// The values of a list or range, as TOML text.
pub fn values(spec: &str) -> std::result::Result<Vec<String>, String> {
    if spec.is_empty() {
        return Err("no values".into());
    }
    let out = match spec.split_once("..") {
        Some((from, rest)) if !from.starts_with('"') => {
            let (to, step) = rest
                .split_once(':')
                .ok_or_else(|| format!("the range `{spec}` needs a step: `{from}..{rest}:STEP`"))?;
            range(from.trim(), to.trim(), step.trim())?
        }
        _ => list(spec)?,
    };
    if out.len() > MAX_VALUES {
        return Err(format!("more than {MAX_VALUES} values"));
    }
    Ok(out)
}

fn list(spec: &str) -> std::result::Result<Vec<String>, String> {
    let items: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
    if items.iter().any(String::is_empty) {
        return Err(format!("an empty value in the list `{spec}`"));
    }
    Ok(items)
}

fn range(from: &str, to: &str, step: &str) -> std::result::Result<Vec<String>, String> {
    if let Some(factor) = step.strip_prefix('x') {
        let (a, b) = (int(from)?, int(to)?);
        let f = int(factor)?;
        if f < 2 {
            return Err(format!(
                "a log range multiplies by 2 or more, got `x{factor}`"
            ));
        }
        if a == 0 {
            return Err("a log range starts above 0".into());
        }
        ordered(a, b)?;
        let mut out = Vec::new();
        let mut v = a;
        while v <= b && out.len() <= MAX_VALUES {
            out.push(v.to_string());
            v = match v.checked_mul(f) {
                Some(n) => n,
                None => break,
            };
        }
        return Ok(out);
    }
    // Integers, unless any end is a duration (which carries a unit).
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if [from, to, step].iter().all(|t| digits(t)) {
        let (a, b, s) = (int(from)?, int(to)?, int(step)?);
        return stepped(a, b, s).map(|v| v.iter().map(u64::to_string).collect());
    }
    let dur = |t: &str| {
        time::parse_duration(t)
            .map_err(|e| format!("`{t}` is neither an integer nor a duration: {e}"))
    };
    let (a, b, s) = (dur(from)?, dur(to)?, dur(step)?);
    stepped(a, b, s).map(|v| v.into_iter().map(duration_text).collect())
}

fn stepped(a: u64, b: u64, step: u64) -> std::result::Result<Vec<u64>, String> {
    if step == 0 {
        return Err("the step must be above 0".into());
    }
    ordered(a, b)?;
    let count = (b - a) / step + 1;
    if count > MAX_VALUES as u64 {
        return Err(format!("more than {MAX_VALUES} values"));
    }
    Ok((0..count).map(|i| a + i * step).collect())
}

fn ordered(a: u64, b: u64) -> std::result::Result<(), String> {
    if a > b {
        return Err(format!("the range runs backwards ({a} > {b})"));
    }
    Ok(())
}

/// A whole number a swept value can be: TOML's integers stop at i64::MAX.
fn int(t: &str) -> std::result::Result<u64, String> {
    let max = i64::MAX as u64;
    crate::error::whole(&t.replace('_', ""), 0, max).map_err(|why| {
        format!(
            "`{t}` is {why}: {}",
            crate::error::must_be("a whole number", 0, max)
        )
    })
}

/// A duration as an exact quoted TOML string in its largest whole unit: `"90s"`, `"2m"`.
fn duration_text(ns: Nanos) -> String {
    let units = [
        (time::NANOS_PER_HOUR, "h"),
        (time::NANOS_PER_MIN, "m"),
        (time::NANOS_PER_SEC, "s"),
        (time::NANOS_PER_MILLI, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    let (unit, name) = units
        .into_iter()
        .find(|(u, _)| ns > 0 && ns.is_multiple_of(*u))
        .unwrap_or((1, "ns"));
    format!("\"{}{name}\"", ns / unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(values("10,50, 100").unwrap(), ["10", "50", "100"]);
        assert_eq!(values("50..200:50").unwrap(), ["50", "100", "150", "200"]);
        // The end is included only when a step reaches it.
        assert_eq!(values("1..10:4").unwrap(), ["1", "5", "9"]);
        assert_eq!(
            values("1..10000:x10").unwrap(),
            ["1", "10", "100", "1000", "10000"]
        );
        assert_eq!(values("3..100:x3").unwrap(), ["3", "9", "27", "81"]);
        assert_eq!(
            values("30s..2m:30s").unwrap(),
            ["\"30s\"", "\"1m\"", "\"90s\"", "\"2m\""]
        );
        assert_eq!(values("7").unwrap(), ["7"]);
        assert_eq!(values("\"a..b\",x").unwrap(), ["\"a..b\"", "x"]);
    }

    #[test]
    fn range_errors_say_what_is_wrong() {
        let err = |s: &str| values(s).unwrap_err();
        assert!(err("1..10").contains("needs a step"));
        assert!(err("10..1:1").contains("backwards"));
        assert!(err("1..10:0").contains("above 0"));
        assert!(err("1..10:x1").contains("2 or more"));
        assert!(err("0..10:x2").contains("starts above 0"));
        assert!(err("1..1000000:1").contains("more than"));
        assert!(err("1s..banana:1s").contains("neither an integer nor a duration"));
        assert!(err("1,,2").contains("empty value"));
        assert_eq!(
            err("1..99999999999999999999:1"),
            "`99999999999999999999` is too large: must be a whole number from 0 to 9223372036854775807"
        );
        assert_eq!(
            err("1..100:x1e400"),
            "`1e400` is not a whole number: must be a whole number from 0 to 9223372036854775807"
        );
        assert_eq!(
            values("1..9_223_372_036_854_775_807:9223372036854775806")
                .unwrap()
                .len(),
            2
        );
        let e = Axis::parse("limit", "--set").unwrap_err().to_string();
        assert!(e.starts_with("--set: expected FIELD="), "{e}");
    }
}
