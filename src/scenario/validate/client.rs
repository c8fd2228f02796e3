//! `on_reject`: how a source's clients react to a rejection (closed-loop traffic).
//!
//! ```toml
//! on_reject = { retry = "backoff", max_retries = 5, base = "100ms", cap = "10s", jitter = "full" }
//! ```
//! `retry` is `give_up` (the default without `on_reject`), `immediately`, `retry_after` (wait
//! exactly what the `Retry-After` header says) or `backoff`. `max_retries` (default 3) bounds the
//! retries after the first try; `rtt` (default 0) is added to every wait. For `backoff`, `base`
//! (default 100ms) and `cap` (default 10s) bound `min(cap, base·2^n)`, and `jitter` is `none`,
//! `full` (default), `equal` or `decorrelated`.

use super::ctx::Ctx;
use crate::error::Result;
use crate::scenario::raw::{RawReaction, S};
use crate::suggest;
use crate::time::{NANOS_PER_MILLI, Nanos};
use crate::traffic::{Jitter, Reaction, Retry};

const DEFAULT_MAX_RETRIES: u64 = 3;

impl Ctx<'_> {
    /// Validates `traffic[i].on_reject`.
    pub(super) fn reaction(
        &self,
        raw: Option<&S<RawReaction>>,
        i: usize,
        duration: Nanos,
    ) -> Result<Reaction> {
        let Some(raw) = raw else {
            return Ok(Reaction::default());
        };
        let f = |name: &str| format!("traffic[{i}].on_reject.{name}");
        let r = raw.get_ref();
        let retry = self.retry(raw, &f)?;
        let max_retries = match (&r.max_retries, retry) {
            (Some(m), _) => self.count(m, &f("max_retries"), 1_000)?,
            (None, Retry::GiveUp) => 0,
            (None, _) => DEFAULT_MAX_RETRIES,
        };
        let rtt = self.opt_duration(&r.rtt, &f("rtt"), 0)?;
        // The last retry can come `max_retries` waits after the scenario's end: refuse waits
        // that would carry it past the end of virtual time rather than wrap around.
        let fits = |wait: Nanos| {
            wait.checked_mul(max_retries)
                .and_then(|w| w.checked_add(duration))
                .is_some()
        };
        let too_long = |field: &str, span| {
            self.err(
                span,
                &f(field),
                format!(
                    "{max_retries} retries waiting this long after the scenario's end would pass the end of virtual time (2^64 ns, about 584 years)"
                ),
            )
        };
        if let Some(s) = &r.rtt
            && !fits(rtt)
        {
            return Err(too_long("rtt", s.span()));
        }
        if let Retry::Backoff { cap, .. } = retry
            && !cap.checked_add(rtt).is_some_and(fits)
        {
            let span = r.cap.as_ref().or(r.base.as_ref());
            return Err(too_long("cap", span.map_or(raw.span(), |c| c.span())));
        }
        Ok(Reaction {
            retry,
            max_retries: max_retries as u32,
            rtt,
        })
    }

    /// `retry` and, for `backoff`, its `base`, `cap` and `jitter`.
    fn retry(&self, raw: &S<RawReaction>, f: &dyn Fn(&str) -> String) -> Result<Retry> {
        let r = raw.get_ref();
        let backoff_only = [("base", &r.base), ("cap", &r.cap), ("jitter", &r.jitter)];
        let kind = r.retry.get_ref().as_str();
        if !Retry::NAMES.contains(&kind) {
            return Err(self.err(
                r.retry.span(),
                &f("retry"),
                suggest::unknown("reaction", kind, Retry::NAMES),
            ));
        }
        if kind != "backoff"
            && let Some((name, value)) = backoff_only
                .iter()
                .find_map(|(n, v)| v.as_ref().map(|v| (n, v)))
        {
            return Err(self.err(
                value.span(),
                &f(name),
                format!("only `retry = \"backoff\"` uses `{name}`"),
            ));
        }
        Ok(match kind {
            "give_up" => Retry::GiveUp,
            "immediately" => Retry::Immediately,
            "retry_after" => Retry::AfterRetryAfter,
            "backoff" => {
                let base = self.opt_duration(&r.base, &f("base"), 100 * NANOS_PER_MILLI)?;
                let cap = self.opt_duration(&r.cap, &f("cap"), 10_000 * NANOS_PER_MILLI)?;
                if base == 0 || cap < base {
                    let span = r.base.as_ref().map_or(raw.span(), |b| b.span());
                    return Err(self.err(span, &f("base"), "must be positive and at most `cap`"));
                }
                let jitter = match &r.jitter {
                    None => Jitter::Full,
                    Some(j) => j
                        .get_ref()
                        .parse()
                        .map_err(|m: String| self.err(j.span(), &f("jitter"), m))?,
                };
                Retry::Backoff { base, cap, jitter }
            }
            _ => unreachable!("checked above"),
        })
    }
}
