//! What production logged of a replayed request (its limiter's decision and its route), packed
//! into one byte of [`crate::traffic::Arrival`] so an arrival keeps its 40 bytes: the engine copies
//! arrivals on its hot path, and a trace without decisions pays nothing.

use super::Production;

/// Production's record of one request: the decision (3 bits) and the route's number (5 bits,
/// [`crate::traffic::KeySpace::route_name`]). `Logged::NONE`: nothing recorded (a synthetic source, or a
/// trace line with neither a decision nor a status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Logged(u8);

/// Production's decision as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The limiter's own words (`decision`, nginx `$limit_req_status`).
    Decided(Production),
    /// Only the status: 503 (nginx's default `limit_req_status`).
    Status503,
    /// Only the status: 429.
    Status429,
}

/// Routes numbered per run: 1 to 31; the rest share number 0.
pub const ROUTES: usize = 32;

impl Logged {
    /// Nothing recorded: a synthetic request, or a trace line with neither a decision nor a status.
    pub const NONE: Logged = Logged(0);

    /// Packs a record's decision (else its status) and its route number (under [`ROUTES`]).
    pub fn new(production: Option<Production>, status: Option<u16>, route: u8) -> Logged {
        let code = match (production, status) {
            (Some(p), _) => match p {
                Production::Admitted => 1,
                Production::Delayed => 2,
                Production::Refused => 3,
                Production::WouldDelay => 4,
                Production::WouldRefuse => 5,
            },
            (None, Some(503)) => 6,
            (None, Some(429)) => 7,
            // Another status is served, as far as any limiter goes; so is 0 (no response was
            // sent: the client left first), since a limiter's refusal is an answer.
            (None, Some(_)) => 1,
            (None, None) => return Logged::NONE,
        };
        debug_assert!((route as usize) < ROUTES);
        Logged(code | (route << 3))
    }

    /// Whether production's decision is known.
    #[inline]
    pub fn is_some(self) -> bool {
        self.0 & 7 != 0
    }

    /// Production's decision of the request, decided or read from the status; `None` if not logged.
    pub fn verdict(self) -> Option<Verdict> {
        Some(match self.0 & 7 {
            0 => return None,
            1 => Verdict::Decided(Production::Admitted),
            2 => Verdict::Decided(Production::Delayed),
            3 => Verdict::Decided(Production::Refused),
            4 => Verdict::Decided(Production::WouldDelay),
            5 => Verdict::Decided(Production::WouldRefuse),
            6 => Verdict::Status503,
            _ => Verdict::Status429,
        })
    }

    /// The route's number (0: a route past the 31st of the run).
    #[inline]
    pub fn route(self) -> usize {
        (self.0 >> 3) as usize
    }
}

impl Verdict {
    /// Whether production's limiter refused the request, a status-only record being a refusal
    /// when its status is `refuse_status`. A dry-run refusal (`would_refuse`) counts: the
    /// back-test compares the limiter's decisions, enforced or not.
    pub fn refused(self, refuse_status: u16) -> bool {
        match self {
            Verdict::Decided(p) => matches!(p, Production::Refused | Production::WouldRefuse),
            Verdict::Status503 => refuse_status == 503,
            Verdict::Status429 => refuse_status == 429,
        }
    }

    /// Whether production held the request back before serving it.
    pub fn delayed(self) -> bool {
        matches!(
            self,
            Verdict::Decided(Production::Delayed | Production::WouldDelay)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decision_and_route_round_trips_through_one_byte() {
        for route in [0u8, 1, 17, 31] {
            for (p, s, v) in [
                (
                    Some(Production::Refused),
                    Some(200),
                    Verdict::Decided(Production::Refused),
                ),
                (
                    Some(Production::Delayed),
                    None,
                    Verdict::Decided(Production::Delayed),
                ),
                (
                    Some(Production::WouldRefuse),
                    None,
                    Verdict::Decided(Production::WouldRefuse),
                ),
                (None, Some(503), Verdict::Status503),
                (None, Some(429), Verdict::Status429),
                (None, Some(404), Verdict::Decided(Production::Admitted)),
            ] {
                let l = Logged::new(p, s, route);
                assert_eq!((l.verdict(), l.route()), (Some(v), route as usize));
            }
        }
        assert_eq!(Logged::new(None, None, 5), Logged::NONE);
        assert!(!Logged::NONE.is_some());
        assert!(Verdict::Status429.refused(429) && !Verdict::Status429.refused(503));
        assert!(Verdict::Status503.refused(503));
    }

    #[test]
    fn an_arrival_fits_one_cache_line() {
        // 40 bytes, and an LLM request's tokens and stream (24).
        assert_eq!(std::mem::size_of::<crate::traffic::Arrival>(), 64);
    }
}
