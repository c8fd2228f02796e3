//! `[intent]`: what each real client is entitled to, the yardstick of every contender's
//! per-client figures (`metrics::intent`). Absent, it is the policy's limit, window and burst
//! per real client.

use super::calendar::CalendarFields;
use super::ctx::{Ctx, Found};
use crate::calendar::{Calendar, Period};
use crate::error::Result;
use crate::metrics::{Entitlement, Intent, IntentUnit, Per, RouteEntitlement, TierEntitlement};
use crate::policy::Policy;
use crate::scenario::raw::{Int, RawIntent, RawKey, RawScenario, S};
use crate::time::Nanos;
use crate::traffic::{Arrivals, SourceSpec};

impl Ctx<'_> {
    /// `[intent]`, each field checked even when another is refused.
    pub(super) fn intent(
        &self,
        raw: &RawScenario,
        policy: &Policy,
        found: &mut Found,
    ) -> Option<Intent> {
        let Some(table) = &raw.intent else {
            return Some(Intent::of_policy(policy));
        };
        let i = table.get_ref();
        let limit = match &i.limit {
            Some(l) => found.ok(self.count(l, "intent.limit", u32::MAX as u64)),
            None => Some(policy.limit),
        };
        let calendar = found.ok(self.intent_calendar(i, policy.window));
        let window = match (&i.window, calendar) {
            (_, Some(Some(c))) => Some(c.longest()),
            (_, None) => None, // the calendar's error says what is wrong
            (Some(w), Some(None)) => found.ok(self.duration(w, "intent.window", true)),
            (None, Some(None)) => Some(policy.window),
        };
        let burst = match (&i.burst, limit) {
            _ if matches!(calendar, Some(Some(_))) => limit,
            (Some(b), _) => found.ok(self.count(b, "intent.burst", u32::MAX as u64)),
            // The policy's burst goes with the policy's limit; a limit of its own has none.
            (None, l) if i.limit.is_none() => l.map(|_| policy.burst),
            (None, l) => l,
        };
        let unit = match &i.unit {
            None => Some(IntentUnit::Requests),
            Some(u) => found.ok(match u.get_ref().as_str() {
                "requests" => Ok(IntentUnit::Requests),
                "cost" => Ok(IntentUnit::Cost),
                "input_tokens" => Ok(IntentUnit::InputTokens),
                "output_tokens" => Ok(IntentUnit::OutputTokens),
                "tokens" => Ok(IntentUnit::Tokens),
                other => Err(self.err(
                    u.span(),
                    "intent.unit",
                    format!(
                        "expected \"requests\", \"cost\", \"input_tokens\", \"output_tokens\" \
                         or \"tokens\", got \"{other}\""
                    ),
                )),
            }),
        };
        let per = match &i.per {
            None => Some(Per::Client),
            Some(k) => found.ok(self.per(k, policy)),
        };
        let base = Entitlement {
            limit: limit?,
            window: window?,
            burst: burst?,
            calendar: calendar?,
        };
        let per_tier = found.ok(self.intent_tiers(i, base));
        let per_route =
            found.ok(self.intent_routes(i, base, per_tier.as_ref().map_or(0, Vec::len)));
        if let (Some(Per::Key(_)), Some(first)) = (&per, i.per_tier.first()) {
            // A key has no tier: its clients may have several.
            found.ok::<()>(Err(self.err(
                first.span(),
                "intent.per_tier",
                "tiers entitle real clients: needs `per = \"client\"`",
            )));
            return None;
        }
        if let (Some(Per::Key(_)), Some(first)) = (&per, i.per_route.first()) {
            found.ok::<()>(Err(self.err(
                first.span(),
                "intent.per_route",
                "routes entitle real clients: needs `per = \"client\"`",
            )));
            return None;
        }
        Some(Intent {
            unit: unit?,
            base,
            per: per?,
            per_tier: per_tier?,
            per_route: per_route?,
        })
    }

    /// The calendar of an intent per calendar period (`window = "month"`, in `time_zone`, from
    /// `week_starts` or `month_starts`); `None` for one in rolling windows, which may carry no
    /// calendar field. An allowance per period states its own limit, and has no burst.
    fn intent_calendar(
        &self,
        i: &RawIntent,
        policy_window: Nanos,
    ) -> Result<Option<&'static Calendar>> {
        let fields = CalendarFields {
            time_zone: i.time_zone.as_ref(),
            week_starts: i.week_starts.as_ref(),
            month_starts: i.month_starts.as_ref(),
        };
        let f = |name: &str| format!("intent.{name}");
        let Some((window, period)) =
            (i.window.as_ref()).and_then(|w| Some((w, Period::parse(w.get_ref())?)))
        else {
            return match fields.first_written() {
                Some((name, span)) => Err(self.err(
                    span,
                    &f(name),
                    format!(
                        "`{name}` places a calendar period: write `window = \"month\"` (or \"day\", \"week\", \"year\") to allow the limit per period, or drop it"
                    ),
                )),
                None => Ok(None),
            };
        };
        if i.limit.is_none() {
            return Err(self.err(
                window.span(),
                "intent.limit",
                format!(
                    "an allowance per calendar {} states its own `limit`: the policy's is per {}",
                    period.word(),
                    crate::time::format_duration(policy_window)
                ),
            ));
        }
        if let Some(b) = &i.burst {
            return Err(self.err(
                b.span(),
                "intent.burst",
                "an allowance per calendar period has no burst: the whole limit may be used at any time of the period",
            ));
        }
        self.calendar_in(period, &fields, &f).map(Some)
    }

    /// A `per_tier` or `per_route` entry's window, burst and calendar (`rf`: its field): its
    /// own window, else the base's; its own burst, else its limit. Under a base per calendar
    /// period the entry counts per period too (its own period on the base's clocks), with no
    /// burst; under a rolling base it counts in a rolling window.
    fn entry_window(
        &self,
        base: Entitlement,
        limit: u64,
        (window, burst): (Option<&S<String>>, Option<&S<Int>>),
        rf: &str,
    ) -> Result<(Nanos, u64, Option<&'static Calendar>)> {
        if let Some(c) = base.calendar {
            if let Some(b) = burst {
                return Err(self.err(
                    b.span(),
                    &format!("{rf}.burst"),
                    "an allowance per calendar period has no burst",
                ));
            }
            let c = self.tier_calendar(c, window, &format!("{rf}.window"))?;
            return Ok((c.longest(), limit, Some(c)));
        }
        let window_ns = match window {
            Some(w) if Period::parse(w.get_ref()).is_some() => {
                return Err(self.err(
                    w.span(),
                    &format!("{rf}.window"),
                    format!(
                        "`{}` is a calendar period, but the intent's base counts in a rolling window: give the base a calendar `window` too (an intent counts per period or in rolling windows, not both)",
                        w.get_ref().trim()
                    ),
                ));
            }
            Some(w) => self.duration(w, &format!("{rf}.window"), true)?,
            None => base.window,
        };
        let burst = match burst {
            Some(b) => self.count(b, &format!("{rf}.burst"), u32::MAX as u64)?,
            None => limit,
        };
        Ok((window_ns, burst, None))
    }

    /// `per_route`: each entry's routes (patterns as a rule's `routes`) and entitlement
    /// (window and burst default to the base's window and to its own limit); `tiers` entries
    /// already hold some of the 254 bounds a judge tells apart.
    fn intent_routes(
        &self,
        i: &RawIntent,
        base: Entitlement,
        tiers: usize,
    ) -> Result<Vec<RouteEntitlement>> {
        let mut out = Vec::new();
        for (k, r) in i.per_route.iter().enumerate() {
            let r = r.get_ref();
            let rf = format!("intent.per_route[{k}]");
            let routes = self.routes(r.routes.get_ref(), &format!("{rf}.routes"))?;
            if routes.is_empty() {
                return Err(self.err(
                    r.routes.span(),
                    &format!("{rf}.routes"),
                    "names no route: give at least one path or prefix ending in `*`",
                ));
            }
            let limit = self.count(&r.limit, &format!("{rf}.limit"), u32::MAX as u64)?;
            let (window_ns, burst, calendar) =
                self.entry_window(base, limit, (r.window.as_ref(), r.burst.as_ref()), &rf)?;
            out.push(RouteEntitlement {
                routes: routes.into_iter().map(|r| r.0).collect(),
                limit,
                window_ns,
                burst,
                calendar,
            });
        }
        if tiers + out.len() > u8::MAX as usize - 1 {
            return Err(self.err(
                i.per_route[0].span(),
                "intent.per_route",
                format!("at most {} entries with per_tier's", u8::MAX - 1),
            ));
        }
        Ok(out)
    }

    /// An intent in tokens needs a source that can send them. With `per_route`, every
    /// source's requests must go to one entry (or none), since the judge reads a request's
    /// route from its source: a replayed trace, whose endpoints are only known per record, and
    /// an `endpoints` mix across entries are refused.
    pub(super) fn intent_sources(
        &self,
        raw: &RawScenario,
        intent: &Intent,
        sources: &[SourceSpec],
    ) -> Result<()> {
        if let (Some(unit), true) = (
            raw.intent.as_ref().and_then(|t| t.get_ref().unit.as_ref()),
            intent.unit.is_tokens(),
        ) && !sources
            .iter()
            .any(|s| s.population.tokens.is_some() || matches!(s.arrivals, Arrivals::Replay { .. }))
        {
            return Err(self.err(
                unit.span(),
                "intent.unit",
                "counts an LLM's tokens, but no source sends any: give a source `input_tokens` \
                 and `output_tokens`, or replay a trace with token columns (docs/llm.md)",
            ));
        }
        let Some(table) = raw.intent.as_ref().filter(|_| !intent.per_route.is_empty()) else {
            return Ok(());
        };
        let span = table.get_ref().per_route[0].span();
        for s in sources {
            let pop = &s.population;
            let why = if matches!(s.arrivals, Arrivals::Replay { .. }) {
                "replays a trace, whose endpoints are known only per record".to_string()
            } else if let Some((e, _)) = (pop.endpoints.iter())
                .find(|(e, _)| intent.route_of(e) != intent.route_of(&pop.endpoint))
            {
                format!(
                    "mixes endpoints of different entries (`{}` and `{e}`)",
                    pop.endpoint
                )
            } else {
                continue;
            };
            return Err(self.err(
                span,
                "intent.per_route",
                format!(
                    "source `{}` {why}: per_route judges a request by its source's endpoint, \
                     so give each route its own source",
                    s.name
                ),
            ));
        }
        Ok(())
    }

    /// `per`: `"client"`, or the policy's key (the figures then judge keys, as before).
    fn per(&self, k: &S<RawKey>, policy: &Policy) -> Result<Per> {
        if let RawKey::One(s) = k.get_ref()
            && s == "client"
        {
            return Ok(Per::Client);
        }
        let spec = self.key_spec(k, "intent.per")?;
        if spec != policy.key {
            return Err(self.err(
                k.span(),
                "intent.per",
                format!(
                    "must be \"client\" or the policy's key (`{}`): figures judge real clients, \
                     or the keys the policy counts on",
                    policy.key.describe("+")
                ),
            ));
        }
        Ok(Per::Key(spec.describe("+")))
    }

    /// `per_tier`: each entry's tiers (none twice) and entitlement (window and burst default
    /// to the base's window and to its own limit).
    fn intent_tiers(&self, i: &RawIntent, base: Entitlement) -> Result<Vec<TierEntitlement>> {
        let mut claimed: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for (k, t) in i.per_tier.iter().enumerate() {
            let t = t.get_ref();
            let tf = format!("intent.per_tier[{k}]");
            let list = self.claim_tiers(&t.tiers, &tf, &mut claimed, None)?;
            let limit = self.count(&t.limit, &format!("{tf}.limit"), u32::MAX as u64)?;
            let (window_ns, burst, calendar) =
                self.entry_window(base, limit, (t.window.as_ref(), t.burst.as_ref()), &tf)?;
            out.push(TierEntitlement {
                tiers: list,
                limit,
                window_ns,
                burst,
                calendar,
            });
        }
        if out.len() > u8::MAX as usize - 1 {
            return Err(self.err(
                i.per_tier[0].span(),
                "intent.per_tier",
                format!("at most {} entries", u8::MAX - 1),
            ));
        }
        Ok(out)
    }
}
