//! Closed-loop clients: what a client does after a rejection.
//!
//! A rejected request is either abandoned or retried later, as a new event on the virtual clock
//! tagged with its attempt number. The backoff formulas are those of AWS's "Exponential Backoff
//! And Jitter" (Marc Brooker, 2015), in integer nanoseconds. Jitter draws come from one ChaCha
//! stream per source, separate from the stream that generates its traffic, so adding retries to
//! a scenario does not change its first tries.

use crate::rng::{self, Stream};
use crate::time::Nanos;
use crate::traffic::{Arrival, Jitter, Reaction, Retry};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The reactions of every source of a run, with their jitter streams.
pub struct Clients {
    reactions: Vec<Reaction>,
    rngs: Vec<ChaCha8Rng>,
}

impl Clients {
    /// The reactions `reactions`, by source index, each source's jitter drawn from its own stream
    /// of `seed` (so sources stay independent).
    pub fn new(reactions: &[Reaction], seed: u64) -> Self {
        let rngs = (0..reactions.len())
            .map(|i| rng::rng(seed, Stream::Retry, i))
            .collect();
        Clients {
            reactions: reactions.to_vec(),
            rngs,
        }
    }

    /// What the client of `arrival` does after it was rejected with `retry_after`. `previous`
    /// is the last sleep of this request (decorrelated jitter). Returns the wait before the
    /// retry and the sleep to remember, or `None` when the client gives up.
    #[inline]
    pub fn on_reject(
        &mut self,
        arrival: &Arrival,
        retry_after: Nanos,
        previous: Nanos,
    ) -> Option<(Nanos, Nanos)> {
        let source = arrival.source as usize;
        // A source without a reaction gives up (the default reaction allows no retry).
        let reaction = self.reactions.get(source)?;
        if arrival.attempt >= reaction.max_retries {
            return None;
        }
        let reaction = *reaction;
        let rng = &mut self.rngs[source];
        let sleep = match reaction.retry {
            Retry::GiveUp => return None,
            Retry::Immediately => 0,
            Retry::AfterRetryAfter => retry_after,
            Retry::Backoff { base, cap, jitter } => {
                let exp = base
                    .saturating_mul(1u64.checked_shl(arrival.attempt).unwrap_or(u64::MAX))
                    .min(cap);
                match jitter {
                    Jitter::None => exp,
                    Jitter::Full => rng.random_range(0..=exp),
                    Jitter::Equal => exp / 2 + rng.random_range(0..=exp / 2),
                    Jitter::Decorrelated => {
                        let previous = if arrival.attempt == 0 { base } else { previous };
                        let high = previous.saturating_mul(3).max(base);
                        rng.random_range(base..=high).min(cap)
                    }
                }
            }
        };
        Some((sleep.saturating_add(reaction.rtt), sleep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(attempt: u32) -> Arrival {
        Arrival {
            attempt,
            ..Arrival::new(0, 0, 0, 0)
        }
    }

    fn clients(retry: Retry, max_retries: u32, rtt: Nanos) -> Clients {
        Clients::new(
            &[Reaction {
                retry,
                max_retries,
                rtt,
            }],
            1,
        )
    }

    #[test]
    fn give_up_and_retry_limits() {
        assert_eq!(
            clients(Retry::GiveUp, 5, 0).on_reject(&arrival(0), 10, 0),
            None
        );
        let mut c = clients(Retry::Immediately, 2, 7);
        assert_eq!(c.on_reject(&arrival(0), 10, 0), Some((7, 0)));
        assert_eq!(c.on_reject(&arrival(1), 10, 0), Some((7, 0)));
        assert_eq!(c.on_reject(&arrival(2), 10, 0), None, "two retries at most");
        let mut c = clients(Retry::AfterRetryAfter, 1, 0);
        assert_eq!(c.on_reject(&arrival(0), 1234, 0), Some((1234, 1234)));
    }

    #[test]
    fn exponential_backoff_without_jitter_doubles_up_to_the_cap() {
        let backoff = Retry::Backoff {
            base: 100,
            cap: 1000,
            jitter: Jitter::None,
        };
        let mut c = clients(backoff, 10, 0);
        let waits: Vec<Nanos> = (0..6)
            .map(|n| c.on_reject(&arrival(n), 0, 0).unwrap().0)
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn jitter_stays_within_its_bounds() {
        for (jitter, lo, hi) in [
            (Jitter::Full, 0, 400),
            (Jitter::Equal, 200, 400),
            (Jitter::Decorrelated, 100, 900),
        ] {
            let mut c = clients(
                Retry::Backoff {
                    base: 100,
                    cap: 1000,
                    jitter,
                },
                10,
                0,
            );
            for _ in 0..1000 {
                // Third retry: exp = min(1000, 100·4) = 400; decorrelated from a previous 300.
                let (wait, _) = c.on_reject(&arrival(2), 0, 300).unwrap();
                assert!((lo..=hi).contains(&wait), "{jitter:?}: {wait}");
            }
        }
    }
}
