//! The one owner of random stream numbers.
//!
//! Every random draw of a run comes from a ChaCha8 generator keyed by the scenario seed; the
//! ChaCha *stream* says what the draws are for and for which source. Giving each purpose its own
//! stream keeps purposes independent: adding retries to a scenario does not change its first
//! tries, and per-client rates do not shift the arrivals. Stream ids are chosen here only, so two
//! modules can never pick the same one (they once did: setup draws and retry jitter shared
//! `index | 1 << 32`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What a random stream is for. Every variant has its own block of 2^32 stream ids, one per
/// source index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Stream {
    /// A source's arrival times and client choices.
    Arrivals,
    /// A source's endpoint choices (`endpoints = [...]`).
    Endpoints,
    /// A source's clients' retry jitter (`on_reject` backoff).
    Retry,
    /// A source's setup draws: per-client rates (`rate_dist = "lognormal"`).
    Setup,
    /// A source's forged addresses that change per request (`xff_rotator`, `cdn_bypass`).
    Forgery,
    /// A source's HTTP methods, drawn per request (`methods = [...]`).
    Methods,
    /// A deployment's draws (not per source): index 0 the round-trip times, 1 the random
    /// balancer, 2 the replica deaths of `incr_then_expire` (see `sim::deployment`).
    Deployment,
    /// The seeds of `rlsim run --replicates` (not per source: index 0), drawn from the
    /// scenario's seed (see docs/replicates.md). Its numbers must never change: they say which
    /// seeds a replicate ran.
    Replicates,
    /// A constant source's timing jitter (`jitter = "5%"`), per source.
    Timing,
    /// A source's request costs, drawn per request (`cost_dist`, `costs = [...]`).
    Costs,
    /// A source's actual shares of its requested costs (`actual_share_min`).
    Settles,
    /// An LLM source's tokens, drawn per request (`input_tokens`, `output_tokens`, ...).
    Tokens,
}

impl Stream {
    /// The block of this kind: the high 32 bits of its stream ids. Arrivals, endpoints and retry
    /// keep the numbers they always had, so seeds keep their traffic; setup draws moved off the
    /// retry block (1) to 3.
    const fn block(self) -> u64 {
        match self {
            Stream::Arrivals => 0,
            Stream::Retry => 1,
            Stream::Endpoints => 2,
            Stream::Setup => 3,
            Stream::Forgery => 4,
            Stream::Methods => 5,
            Stream::Deployment => 6,
            Stream::Replicates => 7,
            Stream::Timing => 8,
            Stream::Costs => 9,
            Stream::Settles => 10,
            Stream::Tokens => 11,
        }
    }
}

/// The ChaCha stream id of `stream` for source `source`: distinct for every (kind, source) pair.
pub fn stream_id(stream: Stream, source: usize) -> u64 {
    let source = u32::try_from(source).expect("validated: at most 65535 sources");
    (stream.block() << 32) | u64::from(source)
}

/// The generator of `stream` for source `source` under `seed`.
pub fn rng(seed: u64, stream: Stream, source: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id(stream, source));
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use std::collections::HashSet;
    use strum::VariantArray;

    #[test]
    fn every_stream_id_is_distinct() {
        let mut seen = HashSet::new();
        for source in 0..=u16::MAX as usize {
            for &stream in Stream::VARIANTS {
                assert!(
                    seen.insert(stream_id(stream, source)),
                    "{stream:?} of source {source} reuses a stream id"
                );
            }
        }
        assert_eq!(seen.len(), Stream::VARIANTS.len() * 65536);
    }

    #[test]
    fn existing_numbers_are_kept() {
        // Shipped scenarios' outputs depend on these: changing one changes their figures.
        assert_eq!(stream_id(Stream::Arrivals, 7), 7);
        assert_eq!(stream_id(Stream::Retry, 7), (1 << 32) + 7);
        assert_eq!(stream_id(Stream::Endpoints, 7), 7 | (2 << 32));
        assert_eq!(stream_id(Stream::Replicates, 0), 7 << 32);
        assert_eq!(stream_id(Stream::Timing, 3), (8 << 32) + 3);
    }

    #[test]
    fn setup_and_retry_draws_differ() {
        let mut a = rng(42, Stream::Setup, 0);
        let mut b = rng(42, Stream::Retry, 0);
        let (a, b): (Vec<u64>, Vec<u64>) = (
            (0..8).map(|_| a.random()).collect(),
            (0..8).map(|_| b.random()).collect(),
        );
        assert_ne!(a, b);
    }
}
