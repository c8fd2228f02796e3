//! Client reactions: what a source's clients do after a rejection (`on_reject`).
//!
//! These are traffic: they describe clients, as arrival processes do. The engine (`sim`) carries
//! them out; scenario validation builds them.

use crate::suggest;
use crate::time::Nanos;
use std::str::FromStr;
use strum::VariantArray;

/// How long to wait before retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Give up at the first rejection (open-loop traffic).
    GiveUp,
    /// Retry at once (after `rtt`).
    Immediately,
    /// Retry exactly when `Retry-After` says (plus `rtt`).
    AfterRetryAfter,
    /// Exponential backoff: `min(cap, base·2^n)` for the n-th retry (n from 0), with jitter.
    Backoff {
        /// The wait before the first retry, in ns.
        base: Nanos,
        /// The longest wait, in ns: `base·2^n` is capped to it.
        cap: Nanos,
        /// How the wait is randomised.
        jitter: Jitter,
    },
}

impl Retry {
    /// The names `retry = "..."` selects each variant by, in declaration order.
    pub const NAMES: [&'static str; 4] = ["give_up", "immediately", "retry_after", "backoff"];
}

/// AWS's jitter variants, declared in the order messages list them. `exp = min(cap, base·2^n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Jitter {
    /// Sleep `exp`.
    None,
    /// Sleep uniform in `[0, exp]`.
    Full,
    /// Sleep `exp/2 + uniform[0, exp/2]`.
    Equal,
    /// Sleep `min(cap, uniform[base, 3·previous sleep])`, the previous sleep starting at `base`.
    Decorrelated,
}

/// A source's clients' reaction to a rejection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaction {
    /// When, if at all, a client retries a rejected request.
    pub retry: Retry,
    /// Retries after the first try, at most.
    pub max_retries: u32,
    /// Added to every wait: the response's way back plus the client's reaction time.
    pub rtt: Nanos,
}

impl Default for Reaction {
    fn default() -> Self {
        Reaction {
            retry: Retry::GiveUp,
            max_retries: 0,
            rtt: 0,
        }
    }
}

impl Jitter {
    /// The name `jitter = "..."` selects it by.
    pub fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }
}

impl FromStr for Jitter {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Jitter::VARIANTS
            .iter()
            .copied()
            .find(|j| j.name() == s)
            .ok_or_else(|| suggest::unknown("jitter", s, Jitter::VARIANTS.iter().map(|v| v.name())))
    }
}
