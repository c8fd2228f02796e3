//! Headers tally: whether what the limiter advertised (`remaining`, `Retry-After`) held true for
//! the key's next requests.

use crate::algorithms::{Decision, Outcome};
use crate::time::Nanos;

/// What the key's last decision advertised (kept with the key's other state, so packed: 16
/// bytes, not the 32 of two `Option`s).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Advertised {
    /// The key's last decision advertised `remaining > 0` (all that is judged of it).
    said_room: bool,
    /// `retry_at` holds a promise: the key's last rejection said a retry would succeed then.
    promised: bool,
    retry_at: Nanos,
}

#[derive(Debug, Default)]
pub(super) struct Headers {
    remaining_lies: u64,
    retries_at_retry_after: u64,
    retries_at_retry_after_admitted: u64,
}

pub(super) struct HeadersPart {
    pub remaining_lies: u64,
    pub retries_at_retry_after: u64,
    pub retries_at_retry_after_admitted: u64,
}

impl Headers {
    /// A decision at `t` on a key whose last advertisement is `k`.
    #[inline]
    pub fn on_decision(&mut self, k: &mut Advertised, t: Nanos, decision: &Decision) {
        let admitted = decision.outcome.is_admitted();
        // Honesty: the previous decision said `remaining > 0` and this one rejects.
        if k.said_room && !admitted {
            self.remaining_lies += 1;
        }
        k.said_room = decision.remaining > 0;
        if k.promised && k.retry_at == t {
            // Only the first request at the advertised time is the retry it was promised to.
            k.promised = false;
            self.retries_at_retry_after += 1;
            self.retries_at_retry_after_admitted += admitted as u64;
        }
        if let Outcome::Reject { retry_after } = decision.outcome {
            k.promised = true;
            k.retry_at = t.saturating_add(retry_after);
        }
    }

    pub fn finish(&self) -> HeadersPart {
        HeadersPart {
            remaining_lies: self.remaining_lies,
            retries_at_retry_after: self.retries_at_retry_after,
            retries_at_retry_after_admitted: self.retries_at_retry_after_admitted,
        }
    }
}
