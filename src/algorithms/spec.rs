//! A limiter checked once: the algorithm already built from its parameters, so whatever runs
//! it later (the engine, a stack's rules, a deployment) cannot meet invalid parameters.

use super::{
    AlgorithmKind, CalendarWindow, FixedWindow, Gcra, LeakyBucket, LimiterVisitor, Params,
    ParamsError, Profile, SlidingWindowCounter, SlidingWindowLog, TokenBucket, params_error,
};
use crate::time::Nanos;

/// The concrete limiter of a [`LimiterSpec`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Built {
    FixedWindow(FixedWindow),
    SlidingWindowLog(SlidingWindowLog),
    SlidingWindowCounter(SlidingWindowCounter),
    TokenBucket(TokenBucket),
    LeakyBucket(LeakyBucket),
    Gcra(Gcra),
    Profile(Profile),
    CalendarWindow(CalendarWindow),
}

/// One limiter with the parameters it was built from: an exact algorithm, or a library's
/// profile configured from the policy's parameters and its own native ones. Only built
/// through [`LimiterSpec::new`] or [`LimiterSpec::profile`], so visiting it cannot fail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterSpec {
    params: Params,
    built: Built,
}

impl LimiterSpec {
    /// `kind` built from `params` (a profile configured without native parameters).
    pub fn new(kind: AlgorithmKind, params: Params) -> Result<LimiterSpec, ParamsError> {
        let built = match kind {
            AlgorithmKind::FixedWindow => Built::FixedWindow(FixedWindow::new(params)?),
            AlgorithmKind::SlidingWindowLog => {
                Built::SlidingWindowLog(SlidingWindowLog::new(params)?)
            }
            AlgorithmKind::SlidingWindowCounter => {
                Built::SlidingWindowCounter(SlidingWindowCounter::new(params)?)
            }
            AlgorithmKind::TokenBucket => Built::TokenBucket(TokenBucket::new(params)?),
            AlgorithmKind::LeakyBucket => Built::LeakyBucket(LeakyBucket::new(params)?),
            AlgorithmKind::Gcra => Built::Gcra(Gcra::new(params)?),
            AlgorithmKind::CalendarWindow => {
                return Err(params_error(
                    kind,
                    "counts per calendar period: its window is a calendar period \
                     (`window = \"month\"`, with `time_zone`), not a length"
                        .to_string(),
                ));
            }
            // Everything derives from the policy's parameters.
            AlgorithmKind::Profile(p) => Built::Profile(
                p.configure(params, &[])
                    .map_err(|e| params_error(kind, e.to_string()))?,
            ),
        };
        Ok(LimiterSpec { params, built })
    }

    /// A profile already configured (with its native parameters) from `params`.
    pub fn profile(params: Params, profile: Profile) -> LimiterSpec {
        LimiterSpec {
            params,
            built: Built::Profile(profile),
        }
    }

    /// A calendar window of `params.limit` per period of `calendar`; `params.window` becomes
    /// the calendar's longest period (what figures over one window length use).
    pub fn calendar(
        params: Params,
        calendar: &'static crate::calendar::Calendar,
    ) -> Result<LimiterSpec, ParamsError> {
        let params = Params {
            window: calendar.longest(),
            burst: 0,
            ..params
        };
        Ok(LimiterSpec {
            params,
            built: Built::CalendarWindow(CalendarWindow::new(params, calendar)?),
        })
    }

    /// A calendar window whose period counter lives `ttl` from its first admission (Kong's
    /// month and year); any other limiter as it is.
    pub fn with_counter_ttl(self, ttl: Option<Nanos>) -> LimiterSpec {
        match self.built {
            Built::CalendarWindow(c) => LimiterSpec {
                built: Built::CalendarWindow(c.with_counter_ttl(ttl)),
                ..self
            },
            _ => self,
        }
    }

    /// A calendar window's counter lifetime from its period's first admission, if it has one.
    pub fn counter_ttl(&self) -> Option<Nanos> {
        match self.built {
            Built::CalendarWindow(c) => c.counter_ttl(),
            _ => None,
        }
    }

    /// The calendar a calendar window counts on; `None` for any other limiter.
    pub fn calendar_of(&self) -> Option<&'static crate::calendar::Calendar> {
        self.calendar_clock().map(|(calendar, _)| calendar)
    }

    /// A calendar window's calendar and the instant its virtual time 0 stands for (ns since
    /// the Unix epoch); `None` for any other limiter.
    pub fn calendar_clock(&self) -> Option<(&'static crate::calendar::Calendar, u64)> {
        match self.built {
            Built::CalendarWindow(c) => Some((c.calendar(), c.epoch_ns())),
            _ => None,
        }
    }

    /// The same limiter built from other parameters: the same algorithm, profile (configured
    /// from them alone) or calendar, from the same start instant.
    pub fn with_params(self, params: Params) -> Result<LimiterSpec, ParamsError> {
        match self.built {
            Built::CalendarWindow(c) => Ok(LimiterSpec::calendar(params, c.calendar())?
                .starting_at(c.epoch_ns())
                .with_counter_ttl(c.counter_ttl())),
            _ => LimiterSpec::new(self.kind(), params),
        }
    }

    /// The algorithm or profile this spec builds.
    pub fn kind(&self) -> AlgorithmKind {
        match self.built {
            Built::FixedWindow(_) => AlgorithmKind::FixedWindow,
            Built::SlidingWindowLog(_) => AlgorithmKind::SlidingWindowLog,
            Built::SlidingWindowCounter(_) => AlgorithmKind::SlidingWindowCounter,
            Built::TokenBucket(_) => AlgorithmKind::TokenBucket,
            Built::LeakyBucket(_) => AlgorithmKind::LeakyBucket,
            Built::Gcra(_) => AlgorithmKind::Gcra,
            Built::Profile(p) => AlgorithmKind::Profile(p.kind()),
            Built::CalendarWindow(_) => AlgorithmKind::CalendarWindow,
        }
    }

    /// The limit, window and burst it was built from (a profile's policy parameters).
    pub fn params(&self) -> Params {
        self.params
    }

    /// The configured profile; `None` for an exact algorithm.
    pub fn as_profile(&self) -> Option<Profile> {
        match self.built {
            Built::Profile(p) => Some(p),
            _ => None,
        }
    }

    /// The same limiter with virtual time 0 at the wall-clock `start` (see
    /// [`Profile::starting_at`]; the exact algorithms do not read it).
    pub fn starting_at(self, start: Nanos) -> LimiterSpec {
        match self.built {
            Built::Profile(p) => LimiterSpec::profile(self.params, p.starting_at(start)),
            Built::CalendarWindow(c) => LimiterSpec {
                built: Built::CalendarWindow(c.starting_at(start)),
                ..self
            },
            _ => self,
        }
    }

    /// The same limiter with the parameters it ignores set to 0 (the burst of an algorithm
    /// without one; every policy figure of a profile, which its configuration holds): two
    /// limiters that decide alike compare equal.
    pub fn without_ignored_params(self) -> LimiterSpec {
        let mut params = self.params;
        match self.built {
            Built::Profile(_) => {
                params = Params {
                    limit: 0,
                    window: 0,
                    burst: 0,
                }
            }
            _ if !self.kind().uses_burst() => params.burst = 0,
            _ => {}
        }
        LimiterSpec { params, ..self }
    }

    /// Calls `visitor` with the concrete limiter.
    pub fn visit<V: LimiterVisitor>(self, visitor: V) -> V::Output {
        match self.built {
            Built::FixedWindow(l) => visitor.visit(l),
            Built::SlidingWindowLog(l) => visitor.visit(l),
            Built::SlidingWindowCounter(l) => visitor.visit(l),
            Built::TokenBucket(l) => visitor.visit(l),
            Built::LeakyBucket(l) => visitor.visit(l),
            Built::Gcra(l) => visitor.visit(l),
            Built::Profile(p) => p.visit(visitor),
            Built::CalendarWindow(l) => visitor.visit(l),
        }
    }
}
