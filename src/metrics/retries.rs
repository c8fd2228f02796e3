//! Retries tally: the herd of closed-loop retries and how long it outlived the original traffic.

use crate::time::Nanos;

#[derive(Debug, Default)]
pub(super) struct Retries {
    peak_pending: u64,
    last_first_try: Nanos,
    last_retry: Option<Nanos>,
}

/// This tally's part of the report.
pub(super) struct RetriesPart {
    pub peak_pending_retries: u64,
    pub retry_backlog_drain_ns: Nanos,
}

impl Retries {
    /// A request (first try or retry) arrives at `t`.
    #[inline]
    pub fn on_request(&mut self, t: Nanos, retry: bool) {
        if retry {
            self.last_retry = Some(t);
        } else {
            self.last_first_try = t;
        }
    }

    /// A retry was scheduled; `pending` retries are now waiting.
    pub fn on_scheduled(&mut self, pending: u64) {
        self.peak_pending = self.peak_pending.max(pending);
    }

    pub fn finish(&self) -> RetriesPart {
        RetriesPart {
            peak_pending_retries: self.peak_pending,
            retry_backlog_drain_ns: self
                .last_retry
                .map_or(0, |t| t.saturating_sub(self.last_first_try)),
        }
    }
}
