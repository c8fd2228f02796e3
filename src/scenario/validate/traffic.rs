//! Validation of one `[[traffic]]` source: which fields each kind accepts, its population and
//! identities. Arrival processes and replay options are in `process.rs`. Every refusal names
//! the file, line and field (`traffic[i].field`).

use super::ctx::Ctx;
use crate::error::Result;
use crate::policy::Policy;
use crate::scenario::raw::RawTraffic;
use crate::time::{self, Nanos, Rate};
use crate::traffic::{
    ArrivalKind, Arrivals, GENERATED_IPV4_SOURCES, IdGen, Intensity, Periods, Role, SourceSpec,
    TrafficKind,
};

/// Most requests one source may be expected to send: about 10^11, a few hours of simulation.
pub(super) const MAX_REQUESTS_PER_SOURCE: f64 = 1e11;
/// Most on/off or MMPP state switches one source may walk through: about a second of work.
/// Switches yield no request, so their count is bounded on its own, not against the output.
pub(super) const MAX_SWITCHES: f64 = 1e8;
/// Thinning may draw this many candidates per request it keeps, beyond [`MAX_SWITCHES`]
/// draws: a process whose peak far exceeds its mean spends its time drawing and dropping.
pub(super) const MAX_DRAWS_PER_REQUEST: f64 = 10.0;
/// Most clients of all sources together: each costs a key, an identity and limiter state.
pub(super) const MAX_CLIENTS: u64 = 4_000_000;

impl Ctx<'_> {
    pub(super) fn source(
        &self,
        i: usize,
        t: &RawTraffic,
        policy: &Policy,
        duration: Nanos,
    ) -> Result<SourceSpec> {
        let f = |name: &str| format!("traffic[{i}].{name}");
        let name = t.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.err(t.name.span(), &f("name"), "must not be empty"));
        }
        let kind: TrafficKind = t
            .kind
            .get_ref()
            .parse()
            .map_err(|m: String| self.err(t.kind.span(), &f("kind"), m))?;
        let role = self.role(t, kind, &f)?;
        if let Some((field, span)) = t
            .present_fields()
            .into_iter()
            .find(|(n, _)| !kind.accepts(n))
        {
            return Err(self.err(
                span,
                &f(field),
                format!("not used by traffic kind `{kind}`"),
            ));
        }
        let (start, stop) = self.active_span(t, duration, &f)?;
        let population = self.population(t, kind, &f)?;
        // Identity functions read addresses: a fixed `ip` must be one.
        if let (Some(ip), IdGen::Fixed(text)) = (&t.ip, &population.ip)
            && (policy.key.identity_fn().is_some() || kind.forges())
            && text.parse::<std::net::IpAddr>().is_err()
        {
            return Err(self.err(
                ip.span(),
                &f("ip"),
                format!("`{text}` is not an IP address, which the policy's identity function (or this forger) needs"),
            ));
        }
        // Generated IPv4 addresses give each source its own 10.<i>.0.0/16: 256 of them.
        let generates_ipv4 = !population.ipv6 && !matches!(population.ip, IdGen::Fixed(_));
        if kind != TrafficKind::Replay && generates_ipv4 && i >= GENERATED_IPV4_SOURCES {
            return Err(self.err(
                t.name.span(),
                &f("ip"),
                format!(
                    "only the first {} sources can have generated IPv4 addresses: set `ip`, or `ipv6 = true`",
                    GENERATED_IPV4_SOURCES
                ),
            ));
        }
        let arrivals = match kind {
            TrafficKind::Bursts => self.bursts(t, &f)?,
            TrafficKind::Boundary => self.boundary(t, policy, start, stop, &f)?,
            TrafficKind::Replay => self.replay(t, policy, &f)?,
            TrafficKind::Constant
            | TrafficKind::Poisson
            | TrafficKind::Nat
            | TrafficKind::Scraper
            | TrafficKind::CredentialStuffing
            | TrafficKind::XffRotator
            | TrafficKind::CdnBypass => {
                let arrival = self.arrival(t, kind, &f)?;
                let clients = population.clients as u64;
                let rate = self.kind_rate(t, kind, arrival, policy, clients, &f)?;
                self.process(t, arrival, rate, stop - start, &f)?
            }
        };
        let jitter_ppm = self.jitter(t, &arrivals, &population, &f)?;
        let spec = SourceSpec {
            name,
            kind,
            role,
            arrivals,
            start,
            stop,
            population,
            jitter_ppm,
        };
        // A typo like `1000/ns` would otherwise run for days before anyone noticed.
        if let Some(n) = spec.expected_requests()
            && n > MAX_REQUESTS_PER_SOURCE
        {
            return Err(self.err(
                t.rate.as_ref().map_or(t.kind.span(), |r| r.span()),
                &f("rate"),
                format!(
                    "would send about {n:.1e} requests (more than {MAX_REQUESTS_PER_SOURCE:.0e}): check the rate, the clients and the duration"
                ),
            ));
        }
        self.work_guard(i, t, &spec)?;
        Ok(spec)
    }

    /// Refuses a thinned Poisson process whose generation would do far more work than the
    /// requests it yields (estimated from its parameters, before any work): state switches
    /// beyond [`MAX_SWITCHES`], or candidates beyond [`MAX_DRAWS_PER_REQUEST`] per request
    /// (and [`MAX_SWITCHES`]). `on = "1ns"` sends little but would never end.
    fn work_guard(&self, i: usize, t: &RawTraffic, spec: &SourceSpec) -> Result<()> {
        let Arrivals::Poisson(intensity) = &spec.arrivals else {
            return Ok(());
        };
        let f = |name: &str| format!("traffic[{i}].{name}");
        let span = spec.stop - spec.start;
        let over = time::format_duration(span);
        let clients = spec.population.clients as f64;
        let work = intensity.work(span, clients);
        let requests = spec.expected_requests().unwrap_or(0.0);
        let at = |span: Option<std::ops::Range<usize>>| span.unwrap_or(t.kind.span());
        if work.switches > MAX_SWITCHES {
            let (field, span, what) = match intensity {
                Intensity::OnOff {
                    on, off, periods, ..
                } => {
                    let what = format!(
                        "`{}` on and `{}` off periods",
                        time::format_duration(*on),
                        time::format_duration(*off)
                    );
                    // Blame the shape when the same means with exponential periods would pass.
                    let exponential = Intensity::OnOff {
                        rate: 0.0,
                        on: *on,
                        off: *off,
                        periods: Periods::Exponential,
                    };
                    match periods {
                        Periods::Pareto { alpha }
                            if exponential.work(span, clients).switches <= MAX_SWITCHES =>
                        {
                            let what = format!("{what} with a Pareto shape of {alpha}");
                            let s = t.pareto_alpha.as_ref().map(|a| a.span());
                            ("pareto_alpha", at(s), what)
                        }
                        _ => ("on", at(t.on.as_ref().map(|s| s.span())), what),
                    }
                }
                Intensity::Mmpp { stay, .. } => (
                    "mmpp_stay",
                    at(t.mmpp_stay.as_ref().map(|s| s.span())),
                    format!(
                        "mean stays of `{}` and `{}`",
                        time::format_duration(stay[0]),
                        time::format_duration(stay[1])
                    ),
                ),
                _ => unreachable!("only on/off and MMPP processes switch"),
            };
            let per = if matches!(intensity, Intensity::OnOff { .. }) && clients > 1.0 {
                format!(" for {} clients", spec.population.clients)
            } else {
                String::new()
            };
            return Err(self.err(
                span,
                &f(field),
                format!(
                    "{what} over {over}{per} are about {:.1e} state switches to generate; at most {MAX_SWITCHES:.0e} allowed: lengthen the periods or shorten the source",
                    work.switches
                ),
            ));
        }
        let allowed = MAX_SWITCHES.max(MAX_DRAWS_PER_REQUEST * requests);
        if work.candidates > allowed {
            let (field, span) = match intensity {
                Intensity::Spike { .. } => ("peak", t.peak.as_ref().map(|s| s.span())),
                Intensity::Mmpp { .. } => ("mmpp_rates", t.mmpp_rates.as_ref().map(|s| s.span())),
                Intensity::Phases(_) => ("phases", t.phases.as_ref().map(|s| s.span())),
                Intensity::Ramp { .. } => ("rate_to", t.rate_to.as_ref().map(|s| s.span())),
                _ => ("rate", t.rate.as_ref().map(|s| s.span())),
            };
            return Err(self.err(
                at(span),
                &f(field),
                format!(
                    "thinning draws candidates at the peak rate ({:.3e}/s) over {over}: about {:.1e} draws for about {requests:.1e} requests; at most {MAX_SWITCHES:.0e} or {MAX_DRAWS_PER_REQUEST} per request allowed: lower the peak or shorten the source",
                    intensity.max_rate() * 1e9,
                    work.candidates
                ),
            ));
        }
        Ok(())
    }

    /// `[start, stop)`: when the source sends, within the scenario's duration.
    fn active_span(
        &self,
        t: &RawTraffic,
        duration: Nanos,
        f: &dyn Fn(&str) -> String,
    ) -> Result<(Nanos, Nanos)> {
        let start = match &t.start {
            Some(s) => self.duration(s, &f("start"), false)?,
            None => 0,
        };
        let stop = match &t.stop {
            Some(s) => self.duration(s, &f("stop"), true)?.min(duration),
            None => duration,
        };
        if start >= stop {
            let span = t.start.as_ref().map_or(t.name.span(), |s| s.span());
            return Err(self.err(
                span,
                &f("start"),
                "must be before the source's stop and the scenario's end",
            ));
        }
        Ok((start, stop))
    }

    /// `role`, or the kind's default.
    fn role(&self, t: &RawTraffic, kind: TrafficKind, f: &dyn Fn(&str) -> String) -> Result<Role> {
        Ok(
            match t.role.as_ref().map(|r| (r.get_ref().as_str(), r.span())) {
                None => kind.default_role(),
                Some(("legit", _)) => Role::Legit,
                Some(("abusive", _)) => Role::Abusive,
                Some((other, span)) => {
                    return Err(self.err(
                        span,
                        &f("role"),
                        format!("unknown role `{other}` (expected legit or abusive)"),
                    ));
                }
            },
        )
    }

    /// The per-client base rate of a rate-driven kind (`None` for processes that give their own
    /// rates: `mmpp`, `phases`).
    fn kind_rate(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        arrival: ArrivalKind,
        policy: &Policy,
        clients: u64,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Option<Rate>> {
        if kind == TrafficKind::Scraper {
            // `over` × the policy's rate, for the source as a whole, kept exact to 1/1000.
            let over = t.over.as_ref().map_or(1.1, |o| o.get_ref().0);
            if !(over > 0.0 && over <= 1000.0) {
                let span = t.over.as_ref().expect("default is valid").span();
                return Err(self.err(
                    span,
                    &f("over"),
                    format!("must be in (0, 1000], got {over}"),
                ));
            }
            let count = (policy.limit as f64 * over * 1000.0).round() as u64;
            let per = policy.window.saturating_mul(1000).saturating_mul(clients);
            let rate = Rate::new(count.max(1), per).expect("positive");
            return Ok(Some(rate));
        }
        if arrival.sets_own_rates() {
            if let Some(r) = &t.rate {
                return Err(self.err(
                    r.span(),
                    &f("rate"),
                    "not used by this arrival process: its rates come from its own fields",
                ));
            }
            return Ok(None);
        }
        let Some(r) = &t.rate else {
            return Err(self.err(
                t.kind.span(),
                &f("rate"),
                format!("traffic kind `{kind}` requires `rate`"),
            ));
        };
        let mut rate =
            time::parse_rate(r.get_ref()).map_err(|e| self.unit_err(r.span(), &f("rate"), e))?;
        if kind == TrafficKind::CredentialStuffing {
            // `rate` is the whole attack's; each address sends its share.
            rate = Rate::new(rate.count, rate.per.saturating_mul(clients)).expect("positive");
            let per_ip_window = rate.per_second() * policy.window as f64 / 1e9;
            if per_ip_window >= policy.limit as f64 {
                return Err(self.err(
                    r.span(),
                    &f("rate"),
                    format!(
                        "each of the {clients} addresses would send {per_ip_window:.1} per window, at or over the limit of {}: credential stuffing stays under per-IP limits (raise `ips` or lower `rate`)",
                        policy.limit
                    ),
                ));
            }
        }
        rate.times(clients).ok_or_else(|| {
            let why = format!(
                "rate × clients is too large: `{}` for {clients} clients must be at most 18446744073709551615 requests per its span in all",
                r.get_ref()
            );
            self.err(r.span(), &f("rate"), why)
        })?;
        Ok(Some(rate))
    }

    fn bursts(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<Arrivals> {
        let (Some(count), Some(every_s)) = (&t.count, &t.every) else {
            let missing = if t.count.is_none() { "count" } else { "every" };
            return Err(self.err(
                t.kind.span(),
                &f(missing),
                format!("traffic kind `bursts` requires `{missing}`"),
            ));
        };
        let every = self.duration(every_s, &f("every"), true)?;
        let spread = self.opt_duration(&t.spread, &f("spread"), 0)?;
        if spread >= every {
            let span = t.spread.as_ref().map_or(every_s.span(), |s| s.span());
            return Err(self.err(span, &f("spread"), "must be shorter than `every`"));
        }
        Ok(Arrivals::Bursts {
            count: self.count(count, &f("count"), 100_000_000)?,
            every,
            spread,
        })
    }

    fn boundary(
        &self,
        t: &RawTraffic,
        policy: &Policy,
        start: Nanos,
        stop: Nanos,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Arrivals> {
        let Some(count) = &t.count else {
            return Err(self.err(
                t.kind.span(),
                &f("count"),
                "traffic kind `boundary` requires `count`",
            ));
        };
        let at = self.opt_duration(&t.at, &f("at"), policy.window)?;
        let at_span = t.at.as_ref().map_or(t.kind.span(), |s| s.span());
        if at == 0 || at % policy.window != 0 {
            return Err(self.err(
                at_span,
                &f("at"),
                format!(
                    "must be a positive multiple of the policy window ({})",
                    time::format_duration(policy.window)
                ),
            ));
        }
        let lead = self.opt_duration(&t.lead, &f("lead"), 100 * time::NANOS_PER_MILLI)?;
        if lead == 0 || lead > at {
            let span = t.lead.as_ref().map_or(at_span, |s| s.span());
            return Err(self.err(span, &f("lead"), "must be positive and no later than `at`"));
        }
        let spread = self.opt_duration(&t.spread, &f("spread"), 0)?;
        if spread > lead {
            let span = t.spread.as_ref().map_or(at_span, |s| s.span());
            return Err(self.err(
                span,
                &f("spread"),
                "must be no longer than `lead`, so the two batches do not overlap",
            ));
        }
        let every = match &t.repeat {
            Some(r) if *r.get_ref() => {
                if lead + spread >= policy.window {
                    return Err(self.err(
                        r.span(),
                        &f("repeat"),
                        "`lead` + `spread` must be shorter than the policy window to repeat at every boundary",
                    ));
                }
                Some(policy.window)
            }
            _ => None,
        };
        if at - lead >= stop || at < start {
            return Err(self.err(
                at_span,
                &f("at"),
                format!(
                    "the attack at {} falls outside the source's [start, stop): it would send nothing",
                    time::format_duration(at)
                ),
            ));
        }
        Ok(Arrivals::Boundary {
            count: self.count(count, &f("count"), 100_000_000)?,
            at,
            lead,
            spread,
            every,
        })
    }
}
