//! Validation of arrival processes (`arrival = "..."` and its parameters) and of replay options.

use super::ctx::Ctx;
use crate::error::Result;
use crate::policy::Policy;
use crate::scenario::raw::{Num, RawTraffic, S};
use crate::time::{self, Nanos, Rate, UnitError};
use crate::traffic::{
    self, ArrivalKind, Arrivals, Intensity, Periods, Phase, ReplayOptions, SameSecond, TraceFormat,
    TrafficKind,
};
use std::path::{Path, PathBuf};
use strum::VariantArray;

impl Ctx<'_> {
    /// The arrival process of a rate-driven kind: `arrival`, or the kind's default. Refuses the
    /// process fields it does not use.
    pub(super) fn arrival(
        &self,
        t: &RawTraffic,
        kind: TrafficKind,
        f: &dyn Fn(&str) -> String,
    ) -> Result<ArrivalKind> {
        let arrival = match &t.arrival {
            Some(a) => a
                .get_ref()
                .parse()
                .map_err(|m: String| self.err(a.span(), &f("arrival"), m))?,
            None => kind.default_arrival().expect("a rate-driven kind"),
        };
        if kind == TrafficKind::Scraper && arrival.sets_own_rates() {
            return Err(self.err(
                arrival_span(t),
                &f("arrival"),
                format!("a scraper's rate comes from `over`: `{arrival}` sets its own rates"),
            ));
        }
        let used = arrival.fields();
        if let Some((field, span)) = t
            .present_fields()
            .into_iter()
            .find(|(n, _)| *n != "arrival" && ArrivalKind::is_process_field(n) && !used.contains(n))
        {
            return Err(self.err(span, &f(field), format!("not used by arrival `{arrival}`")));
        }
        Ok(arrival)
    }

    /// The arrival process `arrival` of a rate-driven kind. `rate` is the per-client base rate
    /// (`None` for processes that set their own rates); `length` is the source's active span.
    pub(super) fn process(
        &self,
        t: &RawTraffic,
        arrival: ArrivalKind,
        rate: Option<Rate>,
        length: Nanos,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Arrivals> {
        let base = rate.map_or(0.0, |r| 1.0 / r.mean_interval_ns());
        let intensity = match arrival {
            ArrivalKind::Constant => return Ok(Arrivals::Constant(rate.expect("rate-driven"))),
            ArrivalKind::Poisson => Intensity::Flat(rate.expect("rate-driven")),
            ArrivalKind::Ramp => Intensity::Ramp {
                from: base,
                to: self.rate_or_zero(req(self, t, &t.rate_to, "rate_to", f)?, &f("rate_to"))?,
                length,
            },
            ArrivalKind::Sine => self.sine(t, base, f)?,
            ArrivalKind::OnOff => self.onoff(t, base, f)?,
            ArrivalKind::Mmpp => self.mmpp(t, f)?,
            ArrivalKind::Spike => Intensity::Spike {
                base,
                peak: self.rate_or_zero(req(self, t, &t.peak, "peak", f)?, &f("peak"))?,
                at: self.duration(
                    req(self, t, &t.spike_at, "spike_at", f)?,
                    &f("spike_at"),
                    false,
                )?,
                rise: self.opt_duration(&t.rise, &f("rise"), 0)?,
                decay: self.duration(req(self, t, &t.decay, "decay", f)?, &f("decay"), true)?,
            },
            ArrivalKind::Phases => self.phases(t, f)?,
        };
        if intensity.max_rate() <= 0.0 {
            return Err(self.err(
                arrival_span(t),
                &f("arrival"),
                "the process never sends: every rate is zero",
            ));
        }
        Ok(Arrivals::Poisson(intensity))
    }

    fn sine(&self, t: &RawTraffic, mean: f64, f: &dyn Fn(&str) -> String) -> Result<Intensity> {
        let amplitude =
            self.rate_or_zero(req(self, t, &t.amplitude, "amplitude", f)?, &f("amplitude"))?;
        if amplitude > mean {
            let span = t.amplitude.as_ref().expect("required").span();
            return Err(self.err(
                span,
                &f("amplitude"),
                "must not exceed `rate` (the mean): a rate cannot go negative",
            ));
        }
        Ok(Intensity::Sine {
            mean,
            amplitude,
            period: self.duration(req(self, t, &t.period, "period", f)?, &f("period"), true)?,
            phase: self.opt_duration(&t.phase, &f("phase"), 0)?,
        })
    }

    fn onoff(&self, t: &RawTraffic, rate: f64, f: &dyn Fn(&str) -> String) -> Result<Intensity> {
        let periods = match t.on_dist.as_ref().map(|d| (d.get_ref().as_str(), d.span())) {
            None | Some(("exponential", _)) => {
                if let Some(a) = &t.pareto_alpha {
                    return Err(self.err(
                        a.span(),
                        &f("pareto_alpha"),
                        "only used with on_dist = \"pareto\"",
                    ));
                }
                Periods::Exponential
            }
            Some(("pareto", _)) => {
                let alpha = t.pareto_alpha.as_ref().map_or(1.5, |a| a.get_ref().0);
                if !(alpha > 1.0 && alpha <= 10.0) {
                    let span = t.pareto_alpha.as_ref().expect("default is valid").span();
                    return Err(self.err(
                        span,
                        &f("pareto_alpha"),
                        format!("must be in (1, 10] so periods have a mean, got {alpha}"),
                    ));
                }
                Periods::Pareto { alpha }
            }
            Some((other, span)) => {
                return Err(self.err(
                    span,
                    &f("on_dist"),
                    format!("unknown on_dist `{other}` (expected exponential or pareto)"),
                ));
            }
        };
        Ok(Intensity::OnOff {
            rate,
            on: self.duration(req(self, t, &t.on, "on", f)?, &f("on"), true)?,
            off: self.duration(req(self, t, &t.off, "off", f)?, &f("off"), true)?,
            periods,
        })
    }

    fn mmpp(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<Intensity> {
        let rates = req(self, t, &t.mmpp_rates, "mmpp_rates", f)?;
        let stay = req(self, t, &t.mmpp_stay, "mmpp_stay", f)?;
        for (s, field) in [(rates, "mmpp_rates"), (stay, "mmpp_stay")] {
            if s.get_ref().len() != 2 {
                return Err(self.err(
                    s.span(),
                    &f(field),
                    "must list exactly two values, one per state",
                ));
            }
        }
        let (r0, r1) = (&rates.get_ref()[0], &rates.get_ref()[1]);
        let (s0, s1) = (&stay.get_ref()[0], &stay.get_ref()[1]);
        let rate = |text: &str| self.rate_text_or_zero(text, rates.span(), &f("mmpp_rates"));
        let dur = |text: &str| {
            time::parse_positive_duration(text)
                .map_err(|e| self.unit_err(stay.span(), &f("mmpp_stay"), e))
        };
        Ok(Intensity::Mmpp {
            rates: [rate(r0)?, rate(r1)?],
            stay: [dur(s0)?, dur(s1)?],
        })
    }

    fn phases(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<Intensity> {
        let list = req(self, t, &t.phases, "phases", f)?;
        if list.get_ref().is_empty() {
            return Err(self.err(list.span(), &f("phases"), "must list at least one phase"));
        }
        let mut phases = Vec::new();
        for (i, p) in list.get_ref().iter().enumerate() {
            let field = |name: &str| f(&format!("phases[{i}].{name}"));
            let rate = self.rate_or_zero(&p.rate, &field("rate"))?;
            phases.push(Phase {
                duration: self.duration(&p.duration, &field("duration"), true)?,
                rate,
                ramp_to: match &p.ramp_to {
                    Some(r) => self.rate_or_zero(r, &field("ramp_to"))?,
                    None => rate,
                },
            });
        }
        Ok(Intensity::Phases(phases))
    }

    /// A rate in events per nanosecond; `0/s` is allowed (a ramp down to nothing).
    fn rate_or_zero(&self, s: &S<String>, field: &str) -> Result<f64> {
        self.rate_text_or_zero(s.get_ref(), s.span(), field)
    }

    fn rate_text_or_zero(
        &self,
        text: &str,
        span: std::ops::Range<usize>,
        field: &str,
    ) -> Result<f64> {
        match time::parse_rate(text) {
            Ok(r) => Ok(1.0 / r.mean_interval_ns()),
            Err(UnitError::Zero(_)) => Ok(0.0),
            Err(e) => Err(self.unit_err(span, field, e)),
        }
    }

    pub(super) fn replay(
        &self,
        t: &RawTraffic,
        policy: &Policy,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Arrivals> {
        let (path, format) = self.trace(t, f)?;
        let number = |v: &Option<S<Num>>,

                      field: &str,
                      default: f64,
                      ok: &dyn Fn(f64) -> bool,
                      rule: &str| {
            match v {
                Some(n) if !ok(n.get_ref().0) => Err(self.err(
                    n.span(),
                    &f(field),
                    format!("{rule}, got {}", n.get_ref().0),
                )),
                Some(n) => Ok(n.get_ref().0),
                None => Ok(default),
            }
        };
        let speed = number(
            &t.speed,
            "speed",
            1.0,
            &|x| x > 0.0 && x <= 1e6,
            "must be in (0, 1000000]",
        )?;
        let sample = number(
            &t.sample,
            "sample",
            1.0,
            &|x| x > 0.0 && x <= 1.0,
            "must be in (0, 1]",
        )?;
        let same_second = self.same_second(t, f)?;
        let loops = match &t.loops {
            Some(l) => self.count(l, &f("loop"), 1_000_000)? as u32,
            None => 1,
        };
        let abusive = self.abusive(t, f)?;
        let (log_format, haproxy_log_format) = self.log_format(t, format, f)?;
        let mut options = ReplayOptions {
            format,
            speed,
            offset: self.opt_duration(&t.offset, &f("offset"), 0)?,
            loops,
            sample,
            sample_rate: match &t.sample_rate {
                Some(n) => self.count(n, &f("sample_rate"), 1_000_000)? as u32,
                None => 1,
            },
            sort_window: self.opt_duration(&t.sort_window, &f("sort_window"), 0)?,
            max_gap: match &t.max_gap {
                Some(g) => Some(self.duration(g, &f("max_gap"), true)?),
                None => None,
            },
            same_second,
            align: policy.window,
            skip_bad_lines: false,
            abusive,
            log_format,
            haproxy_log_format,
            ..Default::default()
        };
        // Before reading the trace (by the named or extension's format), and once its content
        // has told the format.
        self.har_abusive(t, f, options.format)?;
        traffic::prepare_trace(&path, &policy.key, &mut options, t.format.is_none())?;
        self.har_abusive(t, f, options.format)?;
        Ok(Arrivals::Replay { path, options })
    }

    /// A replayed source's trace (`path`, relative to the scenario) and its format (`format`,
    /// else by the file's extension until its content tells).
    fn trace(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<(PathBuf, TraceFormat)> {
        let p = req(self, t, &t.path, "path", f)?;
        let base = self.path.parent().unwrap_or(Path::new("."));
        let path = base.join(p.get_ref());
        // Metadata only: opening a pipe here would consume what it carries.
        if let Err(e) = std::fs::metadata(&path) {
            // Name the scenario's line too: the trace path is relative to the scenario.
            return Err(self.err(
                p.span(),
                &f("path"),
                format!("cannot read the trace {}: {e}", path.display()),
            ));
        }
        let format = match &t.format {
            Some(s) => TraceFormat::parse(s.get_ref()).ok_or_else(|| {
                self.err(
                    s.span(),
                    &f("format"),
                    format!(
                        "unknown format `{}` (expected one of {})",
                        s.get_ref(),
                        TraceFormat::names()
                    ),
                )
            })?,
            // Detected from the content once the trace is opened (`prepare_trace`).
            None => TraceFormat::from_path(&path),
        };
        Ok((path, format))
    }

    /// `abusive` on a HAR file, which records no address.
    fn har_abusive(
        &self,
        t: &RawTraffic,
        f: &dyn Fn(&str) -> String,
        format: TraceFormat,
    ) -> Result<()> {
        match &t.abusive {
            Some(a) if format == TraceFormat::Har && !a.get_ref().is_empty() => Err(self.err(
                a.span(),
                &f("abusive"),
                "a HAR file records no client address to match",
            )),
            _ => Ok(()),
        }
    }
    /// `log_format`: the text template of an `nginx` trace, or the `log-format` of a
    /// `haproxy` one (only there).
    #[allow(clippy::type_complexity)]
    fn log_format(
        &self,
        t: &RawTraffic,
        format: TraceFormat,
        f: &dyn Fn(&str) -> String,
    ) -> Result<(
        Option<traffic::NginxLogFormat>,
        Option<traffic::HaproxyLogFormat>,
    )> {
        let Some(text) = &t.log_format else {
            return Ok((None, None));
        };
        let err = |m: String| self.err(text.span(), &f("log_format"), m);
        match format {
            TraceFormat::Nginx => traffic::NginxLogFormat::parse(text.get_ref())
                .map(|t| (Some(t), None))
                .map_err(err),
            TraceFormat::Haproxy => traffic::HaproxyLogFormat::parse(text.get_ref())
                .map(|t| (None, Some(t)))
                .map_err(err),
            _ => Err(err(
                "`log_format` is read only with `format = \"nginx\"` (a text nginx access log) or `format = \"haproxy\"`".into(),
            )),
        }
    }

    /// `same_second`: how a trace's requests logged in the same second are placed.
    fn same_second(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<SameSecond> {
        match t
            .same_second
            .as_ref()
            .map(|s| (s.get_ref().as_str(), s.span()))
        {
            None | Some(("spread", _)) => Ok(SameSecond::Spread),
            Some((name, span)) => SameSecond::VARIANTS
                .iter()
                .copied()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    self.err(
                        span,
                        &f("same_second"),
                        format!("unknown value `{name}` (expected spread, together or random)"),
                    )
                }),
        }
    }

    /// `abusive`: the addresses or networks whose replayed requests are abusive.
    fn abusive(&self, t: &RawTraffic, f: &dyn Fn(&str) -> String) -> Result<Vec<ipnet::IpNet>> {
        match &t.abusive {
            None => Ok(Vec::new()),
            Some(list) => list
                .get_ref()
                .iter()
                .enumerate()
                .map(|(k, net)| {
                    let text = net.get_ref().trim();
                    // A bare address is a network of one.
                    text.parse::<ipnet::IpNet>()
                        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                        .map_err(|_| {
                            self.err(
                                net.span(),
                                &f(&format!("abusive[{k}]")),
                                format!("`{text}` is neither an IP address nor a CIDR network (e.g. `203.0.113.0/24`)"),
                            )
                        })
                })
                .collect::<Result<Vec<_>>>(),
        }
    }
}

/// A field the process requires, or an error naming it.
fn req<'t, T>(
    ctx: &Ctx<'_>,
    t: &RawTraffic,
    v: &'t Option<S<T>>,
    field: &str,
    f: &dyn Fn(&str) -> String,
) -> Result<&'t S<T>> {
    v.as_ref().ok_or_else(|| {
        let what = t.arrival.as_ref().map_or_else(
            || format!("traffic kind `{}`", t.kind.get_ref()),
            |a| format!("arrival `{}`", a.get_ref()),
        );
        ctx.err(
            t.kind.span(),
            &f(field),
            format!("{what} requires `{field}`"),
        )
    })
}

/// Where to point an error about the source's arrival process.
fn arrival_span(t: &RawTraffic) -> std::ops::Range<usize> {
    t.arrival.as_ref().map_or(t.kind.span(), |a| a.span())
}
