//! An LLM request's tokens: its prompt (some read from a cache), the `max_tokens` it may ask
//! for, the output its response streams, and how long that stream lasts. Limits in front of
//! LLMs count these (requests and tokens per minute), each in its own way (`accounting` in
//! docs/llm.md). Only a source that states tokens draws, from its own `Stream::Tokens`
//! (`rng.rs`), so every other draw of every source is the one it always made.

use super::Arrival;
use super::cost::{CostDist, Draw};
use super::stamp::Stamp;
use crate::time::{Nanos, Rate};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// One LLM request's tokens. Every field is 0 for a request that is not an LLM call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Prompt tokens, cached ones included.
    pub input: u32,
    /// Of `input`, the tokens read from the provider's prompt cache.
    pub cached: u32,
    /// The request's `max_tokens`; 0 when it states none.
    pub max_output: u32,
    /// The output tokens its response streams (at most `max_output` when stated).
    pub output: u32,
}

/// Characters per prompt token in English prose, in thousandths (`chars_per_token = 4`): a
/// source's default.
pub const ENGLISH_MILLI_CHARS: u32 = 4000;

/// `tokens` of a prompt holding `milli_chars` thousandths of a character per token, as a
/// limiter estimating `per_token` characters to a token counts them: the characters rounded
/// to the nearest, then divided rounding up. Integer math: with English's 4 and a divisor of
/// 4 it is `tokens` exactly.
pub fn estimate_from_chars(tokens: u32, milli_chars: u32, per_token: u32) -> u32 {
    let chars = (u64::from(tokens) * u64::from(milli_chars) + 500) / 1000;
    chars
        .div_ceil(u64::from(per_token))
        .min(u64::from(u32::MAX)) as u32
}

impl Tokens {
    /// Whether the request states `max_tokens`.
    pub fn states_max(&self) -> bool {
        self.max_output > 0
    }
}

/// How a source's LLM requests are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenModel {
    /// Prompt tokens (`input_tokens`).
    pub input: CostDist,
    /// The share of the prompt read from the cache, rounded to the nearest token
    /// (`cached_share`). Floating point draws it; every count is whole.
    pub cached_share: f64,
    /// `max_tokens`, where requests state it (`max_tokens`); `None`: never.
    pub max_tokens: Option<CostDist>,
    /// The share of requests that state `max_tokens` (`max_tokens_share`), the others
    /// leaving it to the provider's default.
    pub max_tokens_share: f64,
    /// Output tokens (`output_tokens`), cut to the request's `max_tokens`.
    pub output: CostDist,
    /// How fast the output streams (`output_rate`): the response lasts `output / rate`
    /// beyond the source's `response_time` (the time to its first token). `None`: no stream.
    pub output_rate: Option<Rate>,
}

impl TokenModel {
    /// How long a stream of `output` tokens lasts, rounded up to a whole ns.
    pub fn stream_time(&self, output: u32) -> Nanos {
        self.output_rate.map_or(0, |r| {
            let ns = (u128::from(output) * u128::from(r.per)).div_ceil(u128::from(r.count));
            ns.min(u128::from(Nanos::MAX)) as Nanos
        })
    }
}

/// Sets each request's tokens and the length of its stream.
pub struct TokenDraws {
    model: TokenModel,
    input: Draw,
    max_tokens: Option<Draw>,
    output: Draw,
    rng: ChaCha8Rng,
}

impl TokenDraws {
    /// Tokens by `model`, drawn from `rng`.
    pub fn new(model: &TokenModel, rng: ChaCha8Rng) -> Self {
        TokenDraws {
            input: Draw::new(&model.input),
            max_tokens: model.max_tokens.as_ref().map(Draw::new),
            output: Draw::new(&model.output),
            model: model.clone(),
            rng,
        }
    }
}

impl Stamp for TokenDraws {
    fn stamp(&mut self, a: &mut Arrival) {
        let rng = &mut self.rng;
        let input = self.input.sample(rng);
        let cached = (f64::from(input) * self.model.cached_share).round() as u32;
        let states = match &self.max_tokens {
            Some(_) if self.model.max_tokens_share >= 1.0 => true,
            Some(_) => rng.random_bool(self.model.max_tokens_share.max(0.0)),
            None => false,
        };
        let max_output = match (&self.max_tokens, states) {
            (Some(d), true) => d.sample(rng).max(1),
            _ => 0,
        };
        let mut output = self.output.sample(rng);
        if max_output > 0 {
            output = output.min(max_output);
        }
        a.tokens = Tokens {
            input,
            cached: cached.min(input),
            max_output,
            output,
        };
        a.stream = self.model.stream_time(output);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::traffic::stamp::Stamped;
    use crate::traffic::{KeySpace, Source};
    use rand::SeedableRng;

    struct Plain(u64);
    impl Source for Plain {
        fn next_arrival(&mut self, _: &mut KeySpace) -> Result<Option<Arrival>> {
            self.0 = self.0.saturating_sub(1);
            Ok((self.0 > 0).then(|| Arrival::new(self.0, 0, 0, 0)))
        }
    }

    fn draws(model: &TokenModel, n: u64) -> Vec<(Tokens, Nanos)> {
        let mut keys = KeySpace::default();
        let rng = ChaCha8Rng::seed_from_u64(3);
        let mut s = Stamped::new(Box::new(Plain(n + 1)), TokenDraws::new(model, rng));
        std::iter::from_fn(|| s.next_arrival(&mut keys).unwrap())
            .map(|a| (a.tokens, a.stream))
            .collect()
    }

    fn model() -> TokenModel {
        TokenModel {
            input: CostDist::Fixed(1000),
            cached_share: 0.25,
            max_tokens: Some(CostDist::Fixed(300)),
            max_tokens_share: 1.0,
            output: CostDist::Uniform { min: 100, max: 500 },
            output_rate: Some(Rate {
                count: 40,
                per: 1_000_000_000,
            }),
        }
    }

    #[test]
    fn output_is_cut_to_max_tokens_and_streams_at_its_rate() {
        let drawn = draws(&model(), 2000);
        for (t, stream) in &drawn {
            assert_eq!((t.input, t.cached, t.max_output), (1000, 250, 300));
            assert!((100..=300).contains(&t.output), "{t:?}");
            // 40 tokens a second: 25 ms each.
            assert_eq!(*stream, u64::from(t.output) * 25_000_000);
        }
        // Uniform over 100..=500: half the draws reach 300 and are cut there.
        let cut = drawn.iter().filter(|(t, _)| t.output == 300).count();
        assert!((900..=1100).contains(&cut), "{cut}");
    }

    #[test]
    fn a_share_of_requests_leaves_max_tokens_unstated() {
        let m = TokenModel {
            max_tokens_share: 0.2,
            ..model()
        };
        let drawn = draws(&m, 5000);
        let stated = drawn.iter().filter(|(t, _)| t.states_max()).count();
        assert!((850..=1150).contains(&stated), "{stated}");
        // Unstated, the output is not cut.
        assert!(drawn.iter().any(|(t, _)| !t.states_max() && t.output > 300));
        let never = TokenModel {
            max_tokens: None,
            output_rate: None,
            ..model()
        };
        assert!(
            draws(&never, 100)
                .iter()
                .all(|(t, s)| !t.states_max() && *s == 0)
        );
    }
}
