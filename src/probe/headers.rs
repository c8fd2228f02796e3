//! What a response's rate-limit headers claim: how many requests remain and when the client may
//! come back. Read from the forms limiters emit: `Retry-After` (delay-seconds; an HTTP-date is
//! not read), `RateLimit-Remaining` / `RateLimit-Reset` (IETF draft 6, express-rate-limit's
//! `draft-6`), the combined `RateLimit: limit=10, remaining=5, reset=3` (draft 7), the
//! structured `RateLimit: "default";r=5;t=3` (draft 8 and later), and `X-RateLimit-Remaining`
//! (also Kong's per-period `X-RateLimit-Remaining-Minute`: the smallest of them counts).

use crate::time::{NANOS_PER_SEC, Nanos};

/// The claims of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claims {
    /// Requests the client may still send now.
    pub remaining: Option<u64>,
    /// When the quota resets, from the response.
    pub reset: Option<Nanos>,
    /// How long to wait before retrying, from the response.
    pub retry_after: Option<Nanos>,
}

impl Claims {
    /// The claims of `headers` (names in lower case).
    pub fn of(headers: &[(String, String)]) -> Claims {
        let mut c = Claims::default();
        let least = |a: Option<u64>, b: u64| Some(a.map_or(b, |a| a.min(b)));
        for (name, value) in headers {
            let value = value.trim();
            match name.as_str() {
                "retry-after" => c.retry_after = seconds(value),
                "ratelimit" => {
                    let (remaining, reset) = combined(value);
                    if let Some(r) = remaining {
                        c.remaining = least(c.remaining, r);
                    }
                    c.reset = c.reset.or(reset);
                }
                "ratelimit-reset" | "x-ratelimit-reset" => c.reset = c.reset.or(seconds(value)),
                n if n == "ratelimit-remaining"
                    || n.starts_with("x-ratelimit-remaining")
                    || n.starts_with("x-rate-limit-remaining") =>
                {
                    if let Ok(r) = value.parse::<u64>() {
                        c.remaining = least(c.remaining, r);
                    }
                }
                _ => {}
            }
        }
        c
    }
}

/// A whole number of seconds as nanoseconds (`Retry-After: 120`).
fn seconds(value: &str) -> Option<Nanos> {
    value.parse::<u64>().ok()?.checked_mul(NANOS_PER_SEC)
}

/// `remaining` and `reset` of a combined `RateLimit` field, draft 7 (`remaining=5, reset=3`)
/// or draft 8+ (`"policy";r=5;t=3`; the least remaining of several policies).
fn combined(value: &str) -> (Option<u64>, Option<Nanos>) {
    let (mut remaining, mut reset) = (None::<u64>, None);
    for item in value.split([',', ';']) {
        let Some((key, v)) = item.trim().split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches('"');
        match key.trim() {
            "remaining" | "r" => {
                if let Ok(r) = v.parse::<u64>() {
                    remaining = Some(remaining.map_or(r, |a| a.min(r)));
                }
            }
            "reset" | "t" => reset = reset.or(seconds(v)),
            _ => {}
        }
    }
    (remaining, reset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(headers: &[(&str, &str)]) -> Claims {
        let owned: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        Claims::of(&owned)
    }

    #[test]
    fn every_draft_and_the_x_family_are_read() {
        let s = NANOS_PER_SEC;
        let draft6 = claims(&[("ratelimit-remaining", "4"), ("ratelimit-reset", "9")]);
        assert_eq!((draft6.remaining, draft6.reset), (Some(4), Some(9 * s)));
        let draft7 = claims(&[("ratelimit", "limit=10, remaining=5, reset=3")]);
        assert_eq!((draft7.remaining, draft7.reset), (Some(5), Some(3 * s)));
        let draft8 = claims(&[("ratelimit", "\"default\";r=0;t=30")]);
        assert_eq!((draft8.remaining, draft8.reset), (Some(0), Some(30 * s)));
        let kong = claims(&[
            ("x-ratelimit-remaining-second", "2"),
            ("x-ratelimit-remaining-minute", "7"),
        ]);
        assert_eq!(kong.remaining, Some(2));
        let refused = claims(&[("retry-after", "12")]);
        assert_eq!(refused.retry_after, Some(12 * s));
        let date = claims(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
        assert_eq!(date, Claims::default());
    }
}
