//! The registry of traffic kinds (`kind = "..."`) and arrival processes (`arrival = "..."`):
//! each owns its name, the fields it accepts and its defaults, so a new kind or process is one
//! variant here and the compiler points at every `match` that must learn it.

use super::Role;
use crate::suggest;
use std::fmt;
use std::str::FromStr;
use strum::VariantArray;

/// What a `[[traffic]]` source is, declared in the order error messages list the kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum TrafficKind {
    /// Each client at exactly `rate` (constant arrivals by default).
    Constant,
    /// Each client a Poisson process at `rate`.
    Poisson,
    /// Many `users` behind few `ips`: Poisson by default.
    Nat,
    /// Every `every`, `count` requests per client spread over `spread`.
    Bursts,
    /// `count` requests just before a window boundary `at` and `count` at it.
    Boundary,
    /// One abusive client at `over` × the policy's rate.
    Scraper,
    /// An abusive `rate` spread over `ips` addresses, each under the per-IP limit, on `/login`.
    CredentialStuffing,
    /// Records read from a trace file (`path`).
    Replay,
    /// An abusive client forging a fresh first `X-Forwarded-For` entry on every request.
    XffRotator,
    /// An abusive client that skips the CDN (always direct) and forges a fresh
    /// `CF-Connecting-IP` on every request.
    CdnBypass,
}

/// Identity and population fields, used by every synthetic kind.
const IDENTITY: &[&str] = &[
    "users",
    "ips",
    "ip",
    "user",
    "api_key",
    "endpoint",
    "endpoints",
    "ipv6",
    "botnet",
    "tier",
    "tiers",
    "rate_dist",
    "rate_sigma",
    "zipf_exponent",
    "via",
    "cdn_range",
    "proxy_range",
    "forge_xff",
    "forge_real_ip",
    "forge_cf",
    "signed_in",
    "method",
    "methods",
    "cost",
    "cost_dist",
    "cost_min",
    "cost_max",
    "cost_sigma",
    "cost_exponent",
    "costs",
    "actual_cost",
    "actual_share",
    "actual_share_min",
    "response_time",
    "input_tokens",
    "cached_share",
    "max_tokens",
    "max_tokens_share",
    "output_tokens",
    "output_rate",
    "chars_per_token",
];

/// The replay options.
const REPLAY: &[&str] = &[
    "path",
    "response_time",
    "format",
    "speed",
    "offset",
    "loop",
    "sample",
    "sample_rate",
    "sort_window",
    "max_gap",
    "same_second",
    "log_format",
    "abusive",
    "chars_per_token",
];

impl TrafficKind {
    /// The name `kind = "..."` selects it by.
    pub fn name(self) -> &'static str {
        match self {
            TrafficKind::Constant => "constant",
            TrafficKind::Poisson => "poisson",
            TrafficKind::Nat => "nat",
            TrafficKind::Bursts => "bursts",
            TrafficKind::Boundary => "boundary",
            TrafficKind::Scraper => "scraper",
            TrafficKind::CredentialStuffing => "credential_stuffing",
            TrafficKind::Replay => "replay",
            TrafficKind::XffRotator => "xff_rotator",
            TrafficKind::CdnBypass => "cdn_bypass",
        }
    }

    /// The role of its requests without `role = "..."`.
    pub fn default_role(self) -> Role {
        match self {
            TrafficKind::Scraper
            | TrafficKind::CredentialStuffing
            | TrafficKind::XffRotator
            | TrafficKind::CdnBypass => Role::Abusive,
            TrafficKind::Constant
            | TrafficKind::Poisson
            | TrafficKind::Nat
            | TrafficKind::Bursts
            | TrafficKind::Boundary
            | TrafficKind::Replay => Role::Legit,
        }
    }

    /// The arrival process without `arrival = "..."`, for the kinds timed by a rate and an
    /// arrival process; `None` for the kinds that time their requests by their own fields.
    pub fn default_arrival(self) -> Option<ArrivalKind> {
        match self {
            TrafficKind::Constant
            | TrafficKind::Scraper
            | TrafficKind::XffRotator
            | TrafficKind::CdnBypass => Some(ArrivalKind::Constant),
            TrafficKind::Poisson | TrafficKind::Nat | TrafficKind::CredentialStuffing => {
                Some(ArrivalKind::Poisson)
            }
            TrafficKind::Bursts | TrafficKind::Boundary | TrafficKind::Replay => None,
        }
    }

    /// Its own fields, besides the identity fields and (for rate-driven kinds) the arrival
    /// process fields.
    fn own_fields(self) -> &'static [&'static str] {
        match self {
            TrafficKind::Constant
            | TrafficKind::Poisson
            | TrafficKind::Nat
            | TrafficKind::CredentialStuffing
            | TrafficKind::XffRotator
            | TrafficKind::CdnBypass => &["rate"],
            TrafficKind::Scraper => &["over"],
            TrafficKind::Bursts => &["count", "every", "spread"],
            TrafficKind::Boundary => &["count", "at", "lead", "spread", "repeat"],
            TrafficKind::Replay => REPLAY,
        }
    }

    /// Whether it accepts the optional field `field` (`name`, `role`, `kind`, `start`, `stop`
    /// and `on_reject` are accepted by every kind and not asked about).
    pub fn accepts(self, field: &str) -> bool {
        let process = self.default_arrival().is_some() && ArrivalKind::is_process_field(field);
        let identity = self != TrafficKind::Replay && IDENTITY.contains(&field);
        // A forger re-keys each request itself, so it has no endpoint mix; a CDN bypass is
        // direct by definition.
        let refused = match self {
            TrafficKind::XffRotator => field == "endpoints",
            TrafficKind::CdnBypass => field == "endpoints" || field == "via",
            _ => false,
        };
        if refused {
            return false;
        }
        self.own_fields().contains(&field) || process || identity
    }

    /// The fields it requires besides its timing (`users` and `ips` of a NAT).
    pub fn required_population(self) -> &'static [&'static str] {
        match self {
            TrafficKind::Nat => &["users", "ips"],
            TrafficKind::CredentialStuffing => &["ips"],
            TrafficKind::Constant
            | TrafficKind::Poisson
            | TrafficKind::Bursts
            | TrafficKind::Boundary
            | TrafficKind::Scraper
            | TrafficKind::Replay
            | TrafficKind::XffRotator
            | TrafficKind::CdnBypass => &[],
        }
    }

    /// Whether it forges an address per request.
    pub fn forges(self) -> bool {
        matches!(self, TrafficKind::XffRotator | TrafficKind::CdnBypass)
    }

    /// The endpoint of its requests without `endpoint` or `endpoints`.
    pub fn default_endpoint(self) -> &'static str {
        match self {
            TrafficKind::CredentialStuffing => "/login",
            _ => "/",
        }
    }
}

impl fmt::Display for TrafficKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TrafficKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        find(TrafficKind::VARIANTS, s, TrafficKind::name, "traffic kind")
    }
}

/// How a rate-driven source's requests are spaced in time (`arrival = "..."`), declared in the
/// order error messages list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum ArrivalKind {
    /// Exactly periodic at `rate`.
    Constant,
    /// Poisson at `rate`.
    Poisson,
    /// From `rate` to `rate_to` over the source's span.
    Ramp,
    /// `rate ± amplitude`, a sine of `period`.
    Sine,
    /// `rate` during on periods, nothing during off periods.
    OnOff,
    /// A two-state Markov-modulated Poisson process with its own rates.
    Mmpp,
    /// A flash crowd: up to `peak` at `spike_at`, then an exponential decay.
    Spike,
    /// Consecutive phases with their own rates.
    Phases,
}

impl ArrivalKind {
    /// The name `arrival = "..."` selects it by.
    pub fn name(self) -> &'static str {
        match self {
            ArrivalKind::Constant => "constant",
            ArrivalKind::Poisson => "poisson",
            ArrivalKind::Ramp => "ramp",
            ArrivalKind::Sine => "sine",
            ArrivalKind::OnOff => "onoff",
            ArrivalKind::Mmpp => "mmpp",
            ArrivalKind::Spike => "spike",
            ArrivalKind::Phases => "phases",
        }
    }

    /// The process fields it uses, besides `arrival` itself.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            ArrivalKind::Constant | ArrivalKind::Poisson => &[],
            ArrivalKind::Ramp => &["rate_to"],
            ArrivalKind::Sine => &["amplitude", "period", "phase"],
            ArrivalKind::OnOff => &["on", "off", "on_dist", "pareto_alpha"],
            ArrivalKind::Mmpp => &["mmpp_rates", "mmpp_stay"],
            ArrivalKind::Spike => &["spike_at", "peak", "rise", "decay"],
            ArrivalKind::Phases => &["phases"],
        }
    }

    /// Whether `field` belongs to some arrival process (`arrival` included).
    pub fn is_process_field(field: &str) -> bool {
        field == "arrival"
            || ArrivalKind::VARIANTS
                .iter()
                .any(|a| a.fields().contains(&field))
    }

    /// Whether its rates come from its own fields rather than `rate`.
    pub fn sets_own_rates(self) -> bool {
        match self {
            ArrivalKind::Mmpp | ArrivalKind::Phases => true,
            ArrivalKind::Constant
            | ArrivalKind::Poisson
            | ArrivalKind::Ramp
            | ArrivalKind::Sine
            | ArrivalKind::OnOff
            | ArrivalKind::Spike => false,
        }
    }
}

impl fmt::Display for ArrivalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ArrivalKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        find(ArrivalKind::VARIANTS, s, ArrivalKind::name, "arrival")
    }
}

/// The entry of `all` named `s`, or an "unknown ...: did you mean" message.
fn find<T: Copy>(all: &[T], s: &str, name: fn(T) -> &'static str, what: &str) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|k| name(*k) == s)
        .ok_or_else(|| suggest::unknown(what, s, all.iter().map(|k| name(*k))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &kind in TrafficKind::VARIANTS {
            assert_eq!(kind.name().parse::<TrafficKind>(), Ok(kind));
        }
        for &arrival in ArrivalKind::VARIANTS {
            assert_eq!(arrival.name().parse::<ArrivalKind>(), Ok(arrival));
        }
    }

    #[test]
    fn unknown_names_get_a_hint_or_the_list() {
        assert_eq!(
            "credential_stufing".parse::<TrafficKind>(),
            Err(
                "unknown traffic kind `credential_stufing`: did you mean `credential_stuffing`?"
                    .into()
            )
        );
        assert_eq!(
            "zzz".parse::<ArrivalKind>(),
            Err("unknown arrival `zzz` (known: constant, poisson, ramp, sine, onoff, mmpp, spike, phases)".into())
        );
    }

    #[test]
    fn fields_follow_the_kind() {
        use TrafficKind::*;
        assert!(Constant.accepts("rate") && Constant.accepts("mmpp_stay"));
        assert!(Scraper.accepts("over") && !Scraper.accepts("rate"));
        assert!(Bursts.accepts("users") && !Bursts.accepts("arrival"));
        assert!(Boundary.accepts("repeat") && !Boundary.accepts("every"));
        assert!(Replay.accepts("loop") && !Replay.accepts("users"));
        assert_eq!(CredentialStuffing.default_role(), Role::Abusive);
        assert_eq!(CredentialStuffing.default_endpoint(), "/login");
        assert_eq!(Nat.default_arrival(), Some(ArrivalKind::Poisson));
        assert_eq!(Replay.default_arrival(), None);
    }
}
