//! `[[contender]]` entries validated into [`Stack`]s: rules, which requests each applies to,
//! bypass lists and warnings.

use super::ctx::{Ctx, Found};
use crate::algorithms::profiles::{ParamValue, Weight};
use crate::algorithms::{AlgorithmKind, LimiterSpec, Params};
use crate::error::Result;
use crate::policy::Policy;
use crate::scenario::model::scenario::{Contender, DEFAULT_REFUSE_STATUS, Origin, Shape};
use crate::scenario::model::stack::{Bypass, Commit, Facts, Matcher, Route, Rule, RuleUnit, Stack};
use crate::scenario::raw::{Int, RawBypass, RawContender, RawRule, S};
use crate::traffic::method::Method;
use crate::traffic::{Arrivals, SourceSpec};
use ipnet::IpNet;
use std::collections::{BTreeMap, HashSet};

/// A rule's `profile = { ... }` table as written.
type RawNative = S<BTreeMap<String, S<toml::Value>>>;

/// Rule names are reported per contender, so they are kept short and plain.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The first of the fields that make a contender's rules (and, with `dry_run`, its `dry_run`)
/// it was written with: what a contender taking its rules from elsewhere must leave out.
fn first_written(
    c: &RawContender,
    dry_run: bool,
) -> Option<(&'static str, std::ops::Range<usize>)> {
    let written = [
        ("rule", c.rule.first().map(|r| r.span())),
        ("commit", c.commit.as_ref().map(|x| x.span())),
        ("bypass", c.bypass.as_ref().map(|x| x.span())),
        ("deployment", c.deployment.as_ref().map(|x| x.span())),
        (
            "dry_run",
            c.dry_run.as_ref().filter(|_| dry_run).map(|x| x.span()),
        ),
    ];
    written
        .into_iter()
        .find_map(|(name, span)| span.map(|s| (name, s)))
}

impl Ctx<'_> {
    /// The contenders of `[[contender]]`, each with its [`Stack`]; `None` when one was refused.
    /// `sources` is the traffic, to refuse a rule that no request could match (`None`: a
    /// source was refused, and rules are not matched).
    pub(super) fn contenders(
        &self,
        raw: &[S<RawContender>],
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
        found: &mut Found,
    ) -> Option<Vec<Contender>> {
        if let (Some(first), Some(_)) = (raw.first(), policy.key.identity_fn()) {
            // The policy's key is the intent every contender is measured against; the metrics key
            // each request once, from its fields (rules may key by identity functions).
            found.push(self.err(
                first.get_ref().name.span(),
                "contender[0].name",
                "contenders need a `[policy] key` of fields (ip, user, api_key, endpoint), not an identity function: give the identity function to the rules' `key`",
            ));
            return None;
        }
        let mut names = HashSet::new();
        found.all(raw.iter().enumerate(), |(i, c)| {
            self.contender(i, c.get_ref(), policy, sources, &mut names)
        })
    }

    /// One `[[contender]]` with its [`Stack`]; `names` are those of the contenders before it.
    pub(super) fn contender(
        &self,
        i: usize,
        c: &RawContender,
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
        names: &mut HashSet<String>,
    ) -> Result<Contender> {
        let field = |f: &str| format!("contender[{i}].{f}");
        let name = c.name.get_ref().trim().to_string();
        if !plain_name(&name) {
            return Err(self.err(
                c.name.span(),
                &field("name"),
                "must be letters, digits, `_`, `-` or `.` (expectations name it)",
            ));
        }
        if !names.insert(name.clone()) {
            return Err(self.err(
                c.name.span(),
                &field("name"),
                format!("another contender is already named `{name}`"),
            ));
        }
        if let Some(import) = &c.import {
            return self.imported(i, c, import, policy, sources, names);
        }
        if let Some(llm) = &c.llm {
            return self.llm_contender(i, c, llm, (policy, sources), names);
        }
        if let Some(recorded) = c.recorded.as_ref().filter(|r| *r.get_ref()) {
            return self.recorded(i, c, name, recorded.span(), policy, sources);
        }
        let commit = self.commit(c, i)?;
        if c.rule.is_empty() {
            return Err(self.err(
                c.name.span(),
                &field("rule"),
                "a contender needs at least one [[contender.rule]]",
            ));
        }
        let outcome = self.outcome_fields(c, i)?;
        let mut rules = Vec::new();
        for (j, r) in c.rule.iter().enumerate() {
            let prefix = format!("contender[{i}].rule[{j}]");
            self.rule(r.get_ref(), &prefix, policy, sources, outcome, &mut rules)?;
        }
        let mut seen = HashSet::new();
        for (j, r) in c.rule.iter().enumerate() {
            let n = r.get_ref().name.get_ref();
            if !seen.insert(n.as_str()) {
                return Err(self.err(
                    r.get_ref().name.span(),
                    &format!("contender[{i}].rule[{j}].name"),
                    format!("another rule of this contender is already named `{n}`"),
                ));
            }
        }
        let bypass = match &c.bypass {
            None => Bypass::default(),
            Some(b) => self.bypass(b.get_ref(), &field("bypass"))?,
        };
        let refuse_status = outcome.1;
        if let (true, Some(d)) = (rules.iter().any(|r| r.dry_run), &c.deployment) {
            return Err(self.err(
                d.span(),
                &field("deployment"),
                "`dry_run` runs on one node: a deployed contender cannot be a dry run",
            ));
        }
        Ok(Contender {
            name,
            description: c
                .description
                .as_ref()
                .map(|d| d.get_ref().trim().to_string())
                .unwrap_or_default(),
            origin: Origin::Contender {
                index: i,
                imported: false,
            },
            shape: Shape::Stack(Box::new(Stack {
                commit,
                rules,
                bypass,
            })),
            refuse_status,
            notes: Vec::new(),
        })
    }

    /// A `[[contender]]` with `recorded = true`: production's decisions as every replayed
    /// source records them, so it decides nothing itself and takes no rules.
    fn recorded(
        &self,
        i: usize,
        c: &RawContender,
        name: String,
        span: std::ops::Range<usize>,
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
    ) -> Result<Contender> {
        let field = |f: &str| format!("contender[{i}].{f}");
        if let Some((what, at)) = first_written(c, true) {
            return Err(self.err(
                at,
                &field(what),
                format!("a recorded contender decides as the trace says: it takes no `{what}`"),
            ));
        }
        let synthetic = sources
            .unwrap_or_default()
            .iter()
            .find(|s| !matches!(s.arrivals, Arrivals::Replay { .. }));
        if let Some(source) = synthetic {
            return Err(self.err(
                span,
                &field("recorded"),
                format!(
                    "source `{}` is not a replay: only a replayed trace records production's decisions",
                    source.name
                ),
            ));
        }
        let (_, refuse_status) = self.outcome_fields(c, i)?;
        let params = Params {
            limit: policy.limit,
            window: policy.window,
            burst: policy.burst,
        };
        Ok(Contender {
            name,
            description: c
                .description
                .as_ref()
                .map(|d| d.get_ref().trim().to_string())
                .unwrap_or_default(),
            origin: Origin::Contender {
                index: i,
                imported: false,
            },
            shape: Shape::Recorded(params),
            refuse_status,
            notes: Vec::new(),
        })
    }

    /// A contender's `commit`.
    fn commit(&self, c: &RawContender, i: usize) -> Result<Commit> {
        Ok(
            match c.commit.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
                None | Some(("all_or_nothing", _)) => Commit::AllOrNothing,
                Some(("in_order", _)) => Commit::InOrder,
                Some(("every_rule", _)) => Commit::EveryRule,
                Some((other, span)) => {
                    return Err(self.err(
                        span,
                        &format!("contender[{i}].commit"),
                        format!(
                            "unknown commit `{other}` (expected all_or_nothing, in_order or every_rule)"
                        ),
                    ));
                }
            },
        )
    }

    /// A contender's `dry_run` and `refuse_status`.
    fn outcome_fields(&self, c: &RawContender, i: usize) -> Result<(bool, u16)> {
        let status = match &c.refuse_status {
            None => DEFAULT_REFUSE_STATUS,
            Some(s) => self.refuse_status(s, &format!("contender[{i}].refuse_status"))?,
        };
        Ok((c.dry_run.as_ref().is_some_and(|d| *d.get_ref()), status))
    }

    /// A `refuse_status` as written: an HTTP error status.
    fn refuse_status(&self, s: &S<Int>, field: &str) -> Result<u16> {
        Ok(self.whole(s, field, "an HTTP status", 400, 599)? as u16)
    }

    /// A `[[contender]]` with `import = "..."`: the configuration's one contender, validated
    /// from the TOML the import writes (errors name that text, as imported).
    fn imported(
        &self,
        i: usize,
        c: &RawContender,
        import: &S<String>,
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
        names: &mut HashSet<String>,
    ) -> Result<Contender> {
        let field = |f: &str| format!("contender[{i}].{f}");
        if let Some((name, span)) = first_written(c, false) {
            return Err(self.err(
                span,
                &field(name),
                format!(
                    "`{name}` comes from the imported configuration: leave it out beside `import`"
                ),
            ));
        }
        let (path, imported) = self.read_import(i, c, import)?;
        let one = match imported.contenders.as_slice() {
            [one] => one,
            many => {
                let found: Vec<&str> = many.iter().map(|c| c.name.as_str()).collect();
                return Err(self.err(
                    import.span(),
                    &field("import"),
                    format!(
                        "`{}` gives {} contenders ({}): pick one with `server` (and `location`)",
                        path.display(),
                        many.len(),
                        found.join(", ")
                    ),
                ));
            }
        };
        let text = one.to_toml(Some(c.name.get_ref().trim()))?;
        let label = std::path::PathBuf::from(format!("{} (as imported)", path.display()));
        let mut contender = written_contender((i, c), &text, &label, (policy, sources), names)?;
        if let Some(d) = &c.description {
            contender.description = d.get_ref().trim().to_string();
        }
        self.outcome_over_import(c, i, &mut contender)?;
        contender.origin = Origin::Contender {
            index: i,
            imported: true,
        };
        contender.notes = imported.notes.clone();
        contender.notes.extend(one.notes.iter().cloned());
        Ok(contender)
    }

    /// The configuration a `[[contender]]` imports (its `import`, read as its `kind` and with
    /// its `server` and `location`), and where it is.
    fn read_import(
        &self,
        i: usize,
        c: &RawContender,
        import: &S<String>,
    ) -> Result<(std::path::PathBuf, crate::import::Imported)> {
        let field = |f: &str| format!("contender[{i}].{f}");
        let kind = match &c.kind {
            None => None,
            Some(k) => Some(
                crate::import::Kind::parse(k.get_ref())
                    .map_err(|m| self.err(k.span(), &field("kind"), m))?,
            ),
        };
        let select = crate::import::Selection {
            server: c.server.as_ref().map(|s| s.get_ref().clone()),
            location: c.location.as_ref().map(|s| s.get_ref().clone()),
        };
        let dir = self.path.parent().unwrap_or(std::path::Path::new(""));
        let path = dir.join(import.get_ref());
        if !path.is_file() {
            return Err(self.err(
                import.span(),
                &field("import"),
                format!("`{}` is not a file", path.display()),
            ));
        }
        let imported = crate::import::import_file(&path, kind, &select)?;
        Ok((path, imported))
    }

    /// What the importing scenario says of the outcome (`dry_run`, `refuse_status`) holds for
    /// every imported rule.
    fn outcome_over_import(
        &self,
        c: &RawContender,
        i: usize,
        contender: &mut Contender,
    ) -> Result<()> {
        let (dry_run, status) = self.outcome_fields(c, i)?;
        let given = c.refuse_status.is_some();
        if given {
            contender.refuse_status = status;
        }
        if let Some(stack) = contender.stack_mut() {
            for r in &mut stack.rules {
                r.dry_run |= dry_run;
                if given {
                    r.refuse_status = status;
                }
            }
        }
        Ok(())
    }

    /// `kind` built from `params`; a profile is configured from them and its native ones.
    fn limiter(
        &self,
        kind: AlgorithmKind,
        params: Params,
        span: std::ops::Range<usize>,
        field: &str,
        native: Option<&RawNative>,
    ) -> Result<LimiterSpec> {
        let given: Vec<(String, ParamValue)> = native
            .map(|t| {
                t.get_ref()
                    .iter()
                    .map(|(k, v)| (k.clone(), super::policy::param_value(v.get_ref())))
                    .collect()
            })
            .unwrap_or_default();
        match kind {
            AlgorithmKind::Profile(p) => p
                .configure(params, &given)
                .map_err(|e| {
                    // A native parameter's own line, when the profile names it.
                    let at = e
                        .param
                        .as_deref()
                        .and_then(|name| native?.get_ref().get_key_value(name));
                    match at {
                        Some((name, v)) => self.err(
                            v.span(),
                            &format!("{}.profile.{name}", field.trim_end_matches(".limit")),
                            e.reason,
                        ),
                        None => self.err(span, field, format!("profile `{p}`: {}", e.reason)),
                    }
                })
                .map(|profile| LimiterSpec::profile(params, profile)),
            _ if native.is_some() => Err(self.err(
                native.map(|n| n.span()).unwrap_or(span),
                &format!("{}.profile", field.trim_end_matches(".limit")),
                format!("`{kind}` is not a library profile: it takes no native parameters"),
            )),
            _ => LimiterSpec::new(kind, params).map_err(|e| self.err(span, field, e.to_string())),
        }
    }

    pub(super) fn routes(&self, list: &[S<String>], field: &str) -> Result<Vec<Route>> {
        list.iter()
            .enumerate()
            .map(|(k, r)| {
                let text = r.get_ref();
                let stem = text.strip_suffix('*').unwrap_or(text);
                if text.is_empty() || stem.contains('*') {
                    return Err(self.err(
                        r.span(),
                        &format!("{field}[{k}]"),
                        format!(
                            "`{text}` is not a route pattern (a path, or a prefix ending in `*`)"
                        ),
                    ));
                }
                Ok(Route(text.clone()))
            })
            .collect()
    }

    fn bypass(&self, b: &RawBypass, field: &str) -> Result<Bypass> {
        let cidrs = b
            .cidrs
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let text = c.get_ref();
                text.parse::<IpNet>()
                    .or_else(|_| text.parse::<std::net::IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        self.err(
                            c.span(),
                            &format!("{field}.cidrs[{k}]"),
                            format!("`{text}` is not a CIDR block (`10.0.0.0/8`) or an address"),
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bypass {
            api_keys: b.api_keys.iter().map(|k| k.get_ref().clone()).collect(),
            cidrs,
            routes: self.routes(&b.routes, &format!("{field}.routes"))?,
        })
    }

    fn method_mask(&self, list: &S<Vec<S<String>>>, field: &str) -> Result<u8> {
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), field, "must list at least one method"));
        }
        let mut methods = Vec::new();
        for (k, m) in list.get_ref().iter().enumerate() {
            let method = Method::parse(m.get_ref())
                .map_err(|e| self.err(m.span(), &format!("{field}[{k}]"), e))?;
            methods.push(method);
        }
        Ok(Method::mask(&methods))
    }

    /// A `per_tier` entry's `tiers` (field `{tf}.tiers`), also added to `claimed`: a tier an
    /// earlier entry claimed, or one outside `allowed` (the rule's own `tiers`), is refused.
    pub(super) fn claim_tiers(
        &self,
        tiers: &S<Vec<S<String>>>,
        tf: &str,
        claimed: &mut Vec<String>,
        allowed: Option<&[String]>,
    ) -> Result<Vec<String>> {
        let list = self.tier_list(tiers, &format!("{tf}.tiers"))?;
        for (m, tier) in list.iter().enumerate() {
            let refused = if claimed.contains(tier) {
                "is already in an earlier per_tier entry"
            } else if allowed.is_some_and(|a| !a.contains(tier)) {
                "is not in the rule's `tiers`"
            } else {
                continue;
            };
            return Err(self.err(
                tiers.get_ref()[m].span(),
                &format!("{tf}.tiers[{m}]"),
                format!("tier `{tier}` {refused}"),
            ));
        }
        claimed.extend(list.iter().cloned());
        Ok(list)
    }

    pub(super) fn tier_list(&self, list: &S<Vec<S<String>>>, field: &str) -> Result<Vec<String>> {
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), field, "must list at least one tier"));
        }
        let mut out: Vec<String> = Vec::new();
        for (k, t) in list.get_ref().iter().enumerate() {
            if out.contains(t.get_ref()) {
                return Err(self.err(
                    t.span(),
                    &format!("{field}[{k}]"),
                    format!("tier `{}` is listed twice", t.get_ref()),
                ));
            }
            out.push(t.get_ref().clone());
        }
        Ok(out)
    }

    /// Validates one rule into `rules`: one entry, or one per `per_tier` entry plus the rule
    /// itself for the other tiers.
    fn rule(
        &self,
        r: &RawRule,
        prefix: &str,
        policy: &Policy,
        sources: Option<&[SourceSpec]>,
        (dry_run, refuse_status): (bool, u16),
        rules: &mut Vec<Rule>,
    ) -> Result<()> {
        let f = |name: &str| format!("{prefix}.{name}");
        let mut base = self.base_rule(r, prefix, policy)?;
        base.dry_run = r.dry_run.as_ref().map_or(dry_run, |d| *d.get_ref());
        base.refuse_status = match &r.refuse_status {
            Some(s) => self.refuse_status(s, &f("refuse_status"))?,
            None => refuse_status,
        };
        let kind = base.limiter.kind();
        base.unit = self.rule_unit(r, &f, kind, sources)?;
        if let Some(refunds) = r.refunds.as_ref().filter(|r| *r.get_ref()) {
            let why = if base.counts_requests() {
                "a rule counting requests charges 1 each and has nothing to give back: drop \
                 `refunds`, or count the cost"
                    .to_string()
            } else if matches!(base.unit, RuleUnit::Tokens(_)) {
                "a rule counting tokens gives back what its `accounting` says: drop `refunds`"
                    .to_string()
            } else if !kind.refunds() {
                format!(
                    "`{kind}` cannot give back units once charged (its library has no refund \
                     rlsim reproduces): drop `refunds`, or use an exact algorithm"
                )
            } else {
                String::new()
            };
            if !why.is_empty() {
                return Err(self.err(refunds.span(), &f("refunds"), why));
            }
            base.refunds = true;
        }
        if let (false, false, Some(costly)) = (
            base.counts_requests(),
            kind.weighs(),
            sources.and_then(costly_source),
        ) {
            return Err(self.err(
                r.algorithm.span(),
                &f("algorithm"),
                unweighed(kind, costly)
                    + ": set `unit = \"requests\"` on the rule to count its requests",
            ));
        }
        let (entries, claimed) = self.per_tier(r, prefix, &base)?;
        base.matcher.not_tiers = claimed;
        // Every request of the other tiers is the base rule's; when the entries cover every
        // tier the rule names, the base rule has nothing left and is dropped.
        let base_left = base
            .matcher
            .tiers
            .as_ref()
            .is_none_or(|t| t.iter().any(|x| !base.matcher.not_tiers.contains(x)));
        let span = r.name.span();
        for rule in base_left.then_some(base).into_iter().chain(entries) {
            if sources.is_some_and(|s| !could_match(&rule, s)) {
                return Err(self.err(
                    span.clone(),
                    &f("name"),
                    format!(
                        "rule `{}` matches no request of this scenario's traffic (check its routes, skip, tiers and signed_in against the sources)",
                        rule.name
                    ),
                ));
            }
            rules.push(rule);
        }
        Ok(())
    }

    /// A rule's limiter: its calendar's window, else its algorithm or profile from `params`.
    fn rule_limiter(
        &self,
        kind: AlgorithmKind,
        params: Params,
        calendar: Option<&'static crate::calendar::Calendar>,
        r: &RawRule,
        f: &dyn Fn(&str) -> String,
    ) -> Result<LimiterSpec> {
        let field = &f("limit");
        let ttl = match (&r.counter_ttl, calendar) {
            (Some(t), Some(_)) => Some(self.duration(t, &f("counter_ttl"), true)?),
            (Some(t), None) => {
                return Err(self.err(
                    t.span(),
                    &f("counter_ttl"),
                    "`counter_ttl` belongs to a calendar window: set `algorithm = \"calendar_window\"`, or drop it",
                ));
            }
            (None, _) => None,
        };
        match calendar {
            Some(c) => LimiterSpec::calendar(params, c)
                .map(|l| l.with_counter_ttl(ttl))
                .map_err(|e| self.err(r.limit.span(), field, e.to_string())),
            None => self.limiter(kind, params, r.limit.span(), field, r.profile.as_ref()),
        }
    }

    /// A rule as written, before its `per_tier` entries take their tiers from it.
    fn base_rule(&self, r: &RawRule, prefix: &str, policy: &Policy) -> Result<Rule> {
        let f = |name: &str| format!("{prefix}.{name}");
        let name = r.name.get_ref().clone();
        if !plain_name(&name) {
            return Err(self.err(
                r.name.span(),
                &f("name"),
                "must be letters, digits, `_`, `-` or `.`",
            ));
        }
        let kind: AlgorithmKind = r
            .algorithm
            .get_ref()
            .parse()
            .map_err(|m: String| self.err(r.algorithm.span(), &f("algorithm"), m))?;
        let limit = self.count(&r.limit, &f("limit"), u32::MAX as u64)?;
        let calendar = self.rule_calendar(kind, r, &f)?;
        let window = match calendar {
            Some(c) => c.longest(),
            None => self.duration(&r.window, &f("window"), true)?,
        };
        let burst = match &r.burst {
            Some(b) if !kind.uses_burst() => {
                return Err(self.err(
                    b.span(),
                    &f("burst"),
                    format!("`{kind}` has no burst parameter"),
                ));
            }
            Some(b) => self.count(b, &f("burst"), u32::MAX as u64)?,
            None => limit,
        };
        let params = Params {
            limit,
            window,
            burst,
        };
        let limiter = self.rule_limiter(kind, params, calendar, r, &f)?;
        let key = match &r.key {
            None => policy.key.clone(),
            Some(k) => self.key_spec(k, &f("key"))?,
        };
        let warn_from = match &r.warn_at {
            None => None,
            Some(w) => {
                let share = w.get_ref().0;
                if !(share > 0.0 && share <= 1.0) {
                    return Err(self.err(
                        w.span(),
                        &f("warn_at"),
                        format!("must be in (0, 1], got {share}"),
                    ));
                }
                // The one float: the share as written, turned into a whole count once.
                Some(((share * limit as f64).ceil() as u64).clamp(1, limit))
            }
        };
        let tiers = match &r.tiers {
            Some(t) => Some(self.tier_list(t, &f("tiers"))?),
            None => None,
        };
        let matcher = Matcher {
            routes: match &r.routes {
                Some(list) if list.get_ref().is_empty() => {
                    return Err(self.err(
                        list.span(),
                        &f("routes"),
                        "must list at least one route",
                    ));
                }
                Some(list) => self.routes(list.get_ref(), &f("routes"))?,
                None => Vec::new(),
            },
            skip: self.routes(&r.skip, &f("skip"))?,
            signed_in: r.signed_in.as_ref().map(|s| *s.get_ref()),
            tiers,
            not_tiers: Vec::new(),
            methods: match &r.methods {
                None => None,
                Some(list) => Some(self.method_mask(list, &f("methods"))?),
            },
            has_api_key: r.has_api_key.as_ref().map(|h| *h.get_ref()),
        };
        Ok(Rule {
            name,
            limiter,
            key,
            matcher,
            warn_from,
            dry_run: false,
            refuse_status: DEFAULT_REFUSE_STATUS,
            unit: RuleUnit::Cost,
            refunds: false,
        })
    }

    /// One rule per `per_tier` entry (`<rule>/<tier>+<tier>`), and the tiers they claim.
    fn per_tier(&self, r: &RawRule, prefix: &str, base: &Rule) -> Result<(Vec<Rule>, Vec<String>)> {
        let kind = base.limiter.kind();
        let mut claimed: Vec<String> = Vec::new();
        let mut entries = Vec::new();
        for (k, t) in r.per_tier.iter().enumerate() {
            let t = t.get_ref();
            let tf = format!("{prefix}.per_tier[{k}]");
            let list =
                self.claim_tiers(&t.tiers, &tf, &mut claimed, base.matcher.tiers.as_deref())?;
            let limit = self.count(&t.limit, &format!("{tf}.limit"), u32::MAX as u64)?;
            let calendar = match base.limiter.calendar_of() {
                Some(c) => {
                    Some(self.tier_calendar(c, t.window.as_ref(), &format!("{tf}.window"))?)
                }
                None => None,
            };
            let window = match (&t.window, calendar) {
                (_, Some(c)) => c.longest(),
                (Some(w), None) => self.duration(w, &format!("{tf}.window"), true)?,
                (None, None) => base.params().window,
            };
            let burst = match &t.burst {
                Some(b) if !kind.uses_burst() => {
                    return Err(self.err(
                        b.span(),
                        &format!("{tf}.burst"),
                        format!("`{kind}` has no burst parameter"),
                    ));
                }
                Some(b) => self.count(b, &format!("{tf}.burst"), u32::MAX as u64)?,
                None => limit,
            };
            let params = Params {
                limit,
                window,
                burst,
            };
            let limiter = match calendar {
                Some(c) => LimiterSpec::calendar(params, c)
                    .map(|l| l.with_counter_ttl(base.limiter.counter_ttl()))
                    .map_err(|e| self.err(t.limit.span(), &format!("{tf}.limit"), e.to_string()))?,
                None => self.limiter(
                    kind,
                    params,
                    t.limit.span(),
                    &format!("{tf}.limit"),
                    r.profile.as_ref(),
                )?,
            };
            let warn_from = r
                .warn_at
                .as_ref()
                .map(|w| ((w.get_ref().0 * limit as f64).ceil() as u64).clamp(1, limit));
            let mut matcher = base.matcher.clone();
            matcher.tiers = Some(list.clone());
            entries.push(Rule {
                name: format!("{}/{}", base.name, list.join("+")),
                limiter,
                warn_from,
                matcher,
                ..base.clone()
            });
        }
        Ok((entries, claimed))
    }
}

/// Whether some source could send a request `rule` applies to. Replayed traces can carry any
/// route, user and tier, so they could match anything.
fn could_match(rule: &Rule, sources: &[SourceSpec]) -> bool {
    // Whether a source sends API keys is not told here: `has_api_key` is not held against it.
    let mut matcher = rule.matcher.clone();
    matcher.has_api_key = None;
    sources.iter().any(|s| {
        if matches!(s.arrivals, Arrivals::Replay { .. }) {
            return true;
        }
        let pop = &s.population;
        let endpoints: Vec<&str> = if pop.endpoints.is_empty() {
            vec![pop.endpoint.as_str()]
        } else {
            pop.endpoints.iter().map(|(e, _)| e.as_str()).collect()
        };
        let tiers: Vec<Option<&str>> = if pop.tiers.is_empty() {
            vec![None]
        } else {
            pop.tiers.iter().map(|(t, _)| Some(t.as_str())).collect()
        };
        let users: Vec<&str> = match &pop.user {
            crate::traffic::IdGen::Fixed(u) => vec![u.as_str()],
            _ => vec!["user"],
        };
        let methods: Vec<Method> = if pop.methods.is_empty() {
            vec![Method::Get]
        } else {
            pop.methods.iter().map(|m| m.0).collect()
        };
        if !methods.iter().any(|m| matcher.takes_method(m.code())) {
            return false;
        }
        endpoints.iter().any(|&endpoint| {
            tiers.iter().any(|&tier| {
                users.iter().any(|&user| {
                    matcher.applies(&Facts {
                        ip: "",
                        user,
                        api_key: "",
                        endpoint,
                        tier,
                        source_signed_in: Some(pop.network.signed_in),
                    })
                })
            })
        })
    })
}

/// The first source whose requests may weigh more than 1.
pub(super) fn costly_source(sources: &[SourceSpec]) -> Option<&SourceSpec> {
    sources.iter().find(|s| s.has_costs())
}

/// Why `kind` cannot take the traffic of `costly`, a source with costs.
pub(super) fn unweighed(kind: AlgorithmKind, costly: &SourceSpec) -> String {
    let why = match kind {
        AlgorithmKind::Profile(p) => match p.weight() {
            Weight::Requests(why) => why,
            Weight::Takes(_) => "",
        },
        _ => "",
    };
    format!(
        "`{kind}` cannot weigh a request ({why}), and source `{}` sends requests that weigh more than 1",
        costly.name
    )
}

/// Contender `c` (number `i`) as rlsim wrote its rules (`text`, one `[[contender]]` table
/// named like it: an imported configuration, an LLM profile), validated against the text
/// itself, labelled `label` in messages.
pub(super) fn written_contender(
    (i, c): (usize, &RawContender),
    text: &str,
    label: &std::path::Path,
    (policy, sources): (&Policy, Option<&[SourceSpec]>),
    names: &mut HashSet<String>,
) -> Result<Contender> {
    #[derive(serde::Deserialize)]
    struct Wrapped {
        contender: Vec<S<RawContender>>,
    }
    let raw: Wrapped = toml::from_str(text).map_err(|e| {
        crate::error::Error::Internal(format!(
            "{}: the written TOML does not parse: {e}",
            label.display()
        ))
    })?;
    let inner = Ctx::new(text, label);
    // The name was taken by this very contender; the written table takes it again.
    names.remove(c.name.get_ref().trim());
    inner.contender(i, raw.contender[0].get_ref(), policy, sources, names)
}
