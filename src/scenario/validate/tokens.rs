//! Validation of an LLM source's tokens: `input_tokens`, `cached_share`, `max_tokens` (with
//! `max_tokens_share`), `output_tokens` and `output_rate`; and what a rule counting them
//! charges, when (docs/llm.md).

use super::ctx::Ctx;
use crate::algorithms::{AlgorithmKind, Cost};
use crate::error::Result;
use crate::scenario::model::stack::{Accounting, Check, Estimate, RuleUnit, TokenCount, TokenKind};
use crate::scenario::raw::{Num, RawRule, RawTraffic, S};
use crate::time;
use crate::traffic::cost::CostDist;
use crate::traffic::{Arrivals, SourceSpec, TokenModel, TrafficKind};

/// A token count as written: a whole number, or a distribution's table.
type RawCount = S<toml::Value>;

impl Ctx<'_> {
    /// The source's token model, `None` when it states no tokens.
    pub(super) fn tokens(
        &self,
        t: &RawTraffic,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Option<TokenModel>> {
        let (Some(input), Some(output)) = (&t.input_tokens, &t.output_tokens) else {
            let stated = [
                ("input_tokens", t.input_tokens.as_ref().map(|v| v.span())),
                ("output_tokens", t.output_tokens.as_ref().map(|v| v.span())),
                ("cached_share", t.cached_share.as_ref().map(|v| v.span())),
                ("max_tokens", t.max_tokens.as_ref().map(|v| v.span())),
                (
                    "max_tokens_share",
                    t.max_tokens_share.as_ref().map(|v| v.span()),
                ),
                ("output_rate", t.output_rate.as_ref().map(|v| v.span())),
            ];
            return match stated.into_iter().find_map(|(n, s)| s.map(|s| (n, s))) {
                None => Ok(None),
                Some((name, span)) => Err(self.err(
                    span,
                    &f(name),
                    "an LLM source states both `input_tokens` and `output_tokens`",
                )),
            };
        };
        let share = |v: &Option<S<Num>>, field: &str, default: f64| match v {
            None => Ok(default),
            Some(s) if (0.0..=1.0).contains(&s.get_ref().0) => Ok(s.get_ref().0),
            Some(s) => Err(self.err(
                s.span(),
                &f(field),
                format!("must be in [0, 1], got {}", s.get_ref().0),
            )),
        };
        if let (None, Some(s)) = (&t.max_tokens, &t.max_tokens_share) {
            let why = "needs `max_tokens`, what the other requests state";
            return Err(self.err(s.span(), &f("max_tokens_share"), why));
        }
        let output_rate = match &t.output_rate {
            Some(r) => Some(
                time::parse_rate(r.get_ref())
                    .map_err(|e| self.unit_err(r.span(), &f("output_rate"), e))?,
            ),
            None => None,
        };
        Ok(Some(TokenModel {
            input: self.token_count(input, &f("input_tokens"), 0)?,
            cached_share: share(&t.cached_share, "cached_share", 0.0)?,
            max_tokens: match &t.max_tokens {
                Some(m) => Some(self.token_count(m, &f("max_tokens"), 1)?),
                None => None,
            },
            max_tokens_share: share(&t.max_tokens_share, "max_tokens_share", 1.0)?,
            output: self.token_count(output, &f("output_tokens"), 0)?,
            output_rate,
        }))
    }

    /// `chars_per_token`, in thousandths: a number in (0, 100], for a source that sends tokens
    /// (a replayed trace may); English's 4 when not stated.
    pub(super) fn chars_per_token(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        f: &dyn Fn(&str) -> String,
    ) -> Result<u32> {
        let Some(c) = &t.chars_per_token else {
            return Ok(crate::traffic::tokens::ENGLISH_MILLI_CHARS);
        };
        let field = f("chars_per_token");
        let x = c.get_ref().0;
        if t.input_tokens.is_none() && kind != TrafficKind::Replay {
            let why = "describes an LLM source's prompts: give `input_tokens` too";
            return Err(self.err(c.span(), &field, why));
        }
        let milli = (x * 1000.0).round();
        if !(x > 0.0 && x <= 100.0) || milli < 1.0 {
            let why = format!("must be in (0, 100] characters per token, got {x}");
            return Err(self.err(c.span(), &field, why));
        }
        Ok(milli as u32)
    }

    /// A token count: a whole number from `min`, or a table `{ dist = "uniform", min, max }`,
    /// `{ dist = "lognormal", mean, sigma, max }`, `{ dist = "zipf", max, exponent }`.
    fn token_count(&self, v: &RawCount, field: &str, min: u32) -> Result<CostDist> {
        let err = |why: String| self.err(v.span(), field, why);
        let whole = |x: &toml::Value, name: &str, min: u32| match x.as_integer() {
            Some(n) if (i64::from(min)..=i64::from(Cost::MAX)).contains(&n) => Ok(n as Cost),
            _ => Err(err(format!(
                "{name} must be a whole number of tokens from {min} to {}, got {x}",
                Cost::MAX
            ))),
        };
        let table = match v.get_ref() {
            toml::Value::Table(t) => t,
            x => return Ok(CostDist::Fixed(whole(x, "the count", min)?)),
        };
        let dist = table.get("dist").and_then(|d| d.as_str()).unwrap_or("");
        let allowed: &[&str] = match dist {
            "uniform" => &["dist", "min", "max"],
            "lognormal" => &["dist", "mean", "sigma", "max"],
            "zipf" => &["dist", "max", "exponent"],
            _ => {
                return Err(err(format!(
                    "`dist` must be `uniform`, `lognormal` or `zipf`, got `{dist}`"
                )));
            }
        };
        if let Some(k) = table.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(err(format!("`{k}` is not used by dist `{dist}`")));
        }
        let get = |name: &str| {
            table
                .get(name)
                .ok_or_else(|| err(format!("dist `{dist}` needs `{name}`")))
        };
        let positive = |name: &str, most: f64| {
            let x = get(name)?;
            match x.as_float().or(x.as_integer().map(|i| i as f64)) {
                Some(n) if n > 0.0 && n <= most => Ok(n),
                _ => Err(err(format!("{name} must be in (0, {most}], got {x}"))),
            }
        };
        let max = whole(get("max")?, "max", min.max(1))?;
        Ok(match dist {
            "uniform" => {
                let lo = match table.get("min") {
                    Some(x) => whole(x, "min", min)?,
                    None => min,
                };
                if lo > max {
                    return Err(err(format!("min {lo} is above max {max}")));
                }
                CostDist::Uniform { min: lo, max }
            }
            "lognormal" => CostDist::Lognormal {
                mean: positive("mean", f64::from(Cost::MAX))?,
                sigma: positive("sigma", 10.0)?,
                max,
            },
            _ => CostDist::Zipf {
                max,
                exponent: positive("exponent", 10.0)?,
            },
        })
    }
}

impl Ctx<'_> {
    /// What rule `r` (of algorithm `kind`) counts: `unit`, with the token fields of a rule
    /// counting tokens (and none of them otherwise).
    pub(super) fn rule_unit(
        &self,
        r: &RawRule,
        f: &dyn Fn(&str) -> String,
        kind: AlgorithmKind,
        sources: Option<&[SourceSpec]>,
    ) -> Result<RuleUnit> {
        let Some(token_kind) = self.unit_kind(r, f)? else {
            return Ok(match r.unit.as_ref().map(|u| u.get_ref().as_str()) {
                Some("requests") => RuleUnit::Requests,
                _ => RuleUnit::Cost,
            });
        };
        let unit_span = r.unit.as_ref().map(|u| u.span()).unwrap_or_default();
        let states_tokens = |s: &SourceSpec| {
            s.population.tokens.is_some() || matches!(s.arrivals, Arrivals::Replay { .. })
        };
        if sources.is_some_and(|s| !s.iter().any(states_tokens)) {
            let why = "no source states tokens: give one `input_tokens` and `output_tokens`, or \
                       replay a trace with token columns";
            return Err(self.err(unit_span, &f("unit"), why));
        }
        if !kind.weighs() {
            let why = format!("`{kind}` counts requests, one each: it cannot count tokens");
            return Err(self.err(r.algorithm.span(), &f("algorithm"), why));
        }
        if kind == AlgorithmKind::SlidingWindowLog {
            let why = "a sliding log keeps one entry per unit counted, so one per token here \
                       (a budget of 100,000 tokens a minute would log 100,000 per key): use \
                       `sliding_window_counter`";
            return Err(self.err(r.algorithm.span(), &f("algorithm"), why));
        }
        let pick = |v: &Option<S<String>>, field: &str, names: &[&str]| -> Result<usize> {
            let Some(v) = v else { return Ok(0) };
            names.iter().position(|n| n == v.get_ref()).ok_or_else(|| {
                let expected = names.join(", ");
                let why = format!("unknown {field} `{}` (expected {expected})", v.get_ref());
                self.err(v.span(), &f(field), why)
            })
        };
        let accounting = [
            Accounting::Reserve,
            Accounting::Reconcile,
            Accounting::After,
        ][pick(
            &r.accounting,
            "accounting",
            &["reserve", "reconcile", "after"],
        )?];
        let estimate =
            [Estimate::Sum, Estimate::Max][pick(&r.estimate, "estimate", &["sum", "max"])?];
        let check =
            [Check::Under, Check::NotOver][pick(&r.check, "check", &["under", "not_over"])?];
        if accounting != Accounting::Reserve && !kind.charges() {
            let why = format!(
                "`{kind}` cannot be charged once it has decided: accounting `reserve`, or an \
                 exact algorithm"
            );
            return Err(self.err(r.algorithm.span(), &f("algorithm"), why));
        }
        if let (Check::NotOver, Some(c)) = (check, &r.check)
            && kind != AlgorithmKind::FixedWindow
        {
            let why = "`not_over` is envoyproxy/ratelimit's check of its fixed windows: use \
                       algorithm `fixed_window`, or `under`";
            return Err(self.err(c.span(), &f("check"), why));
        }
        let max_tokens_default = match &r.max_tokens_default {
            Some(v) => {
                let what = "a whole number of tokens";
                self.whole(v, &f("max_tokens_default"), what, 0, i64::from(Cost::MAX))? as u32
            }
            None => 0,
        };
        let chars_per_token = match &r.estimate_chars_per_token {
            Some(v) if token_kind == TokenKind::Output => {
                let why = "estimates a prompt: a rule counting output tokens has none";
                return Err(self.err(v.span(), &f("estimate_chars_per_token"), why));
            }
            Some(v) => {
                let what = "a whole number of characters per token";
                Some(self.whole(v, &f("estimate_chars_per_token"), what, 1, 100)? as u32)
            }
            None => None,
        };
        Ok(RuleUnit::Tokens(TokenCount {
            kind: token_kind,
            cached: r.cached.as_ref().is_none_or(|c| *c.get_ref()),
            accounting,
            max_tokens_default,
            estimate,
            check,
            chars_per_token,
        }))
    }

    /// The tokens rule `r` counts (`None`: it counts cost or requests, and then takes none of
    /// the token fields).
    fn unit_kind(&self, r: &RawRule, f: &dyn Fn(&str) -> String) -> Result<Option<TokenKind>> {
        let unit = r.unit.as_ref().map(|u| (u.get_ref().as_str(), u.span()));
        let token_kind = match unit {
            None | Some(("cost", _)) => None,
            Some(("requests", _)) => Some(None),
            Some(("input_tokens", _)) => Some(Some(TokenKind::Input)),
            Some(("output_tokens", _)) => Some(Some(TokenKind::Output)),
            Some(("tokens", _)) => Some(Some(TokenKind::Total)),
            Some((other, span)) => {
                return Err(self.err(
                    span,
                    &f("unit"),
                    format!(
                        "unknown unit `{other}` (expected cost, requests, input_tokens, \
                         output_tokens or tokens)"
                    ),
                ));
            }
        };
        let token_fields = [
            ("accounting", r.accounting.as_ref().map(|v| v.span())),
            ("cached", r.cached.as_ref().map(|v| v.span())),
            (
                "max_tokens_default",
                r.max_tokens_default.as_ref().map(|v| v.span()),
            ),
            ("estimate", r.estimate.as_ref().map(|v| v.span())),
            ("check", r.check.as_ref().map(|v| v.span())),
        ];
        let Some(Some(token_kind)) = token_kind else {
            if let Some((name, span)) = token_fields.iter().find_map(|(n, s)| Some((n, s.clone()?)))
            {
                let why = "only a rule counting tokens (`unit = \"tokens\"`, `\"input_tokens\"`, \
                           `\"output_tokens\"`) takes it";
                return Err(self.err(span, &f(name), why));
            }
            return Ok(None);
        };
        Ok(Some(token_kind))
    }
}
