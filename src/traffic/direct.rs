//! The engine's handle on a source: the commonest kinds called directly, the rest through
//! `dyn Source`. The kind is chosen where the source is built ([`super::build_sources`]).

use super::periodic::Constant;
use super::poisson::Poisson;
use super::{Arrival, Client, KeySpace, Source};
use crate::error::Result;

/// A source, by kind where the kind is one the engine calls directly (an indirect call per
/// request is a real share of a one-key run: docs/performance.md).
// A run holds one per traffic source, kept by value on purpose: no box to follow per request.
#[allow(clippy::large_enum_variant)]
pub enum Direct {
    /// A `constant` source (clients at one rate, phased evenly), called directly.
    Constant(Constant),
    /// A `poisson` source at a flat rate (no thinning), called directly.
    Poisson(Poisson),
    /// Any other kind, called through `dyn Source`.
    Other(Box<dyn Source>),
}

impl Direct {
    /// A source of a kind the engine calls through `dyn Source`.
    pub fn other(source: impl Source + 'static) -> Direct {
        Direct::Other(Box::new(source))
    }

    /// The source as a `dyn Source`, for a wrapper that takes any kind.
    pub fn boxed(self) -> Box<dyn Source> {
        match self {
            Direct::Constant(s) => Box::new(s),
            Direct::Poisson(s) => Box::new(s),
            Direct::Other(s) => s,
        }
    }

    /// [`Source::next_arrival`], by kind.
    pub fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        match self {
            Direct::Constant(s) => s.next_arrival(keys),
            Direct::Poisson(s) => s.next_arrival(keys),
            Direct::Other(s) => s.next_arrival(keys),
        }
    }

    /// [`Source::next_into`], without an indirect call for the direct kinds (inlined into the
    /// engine's loop, which is what the kinds are for).
    #[inline(always)]
    pub fn next_into(&mut self, keys: &mut KeySpace, out: &mut Arrival) -> Result<bool> {
        match self {
            Direct::Constant(s) => s.next_into(keys, out),
            Direct::Poisson(s) => s.next_into(keys, out),
            Direct::Other(s) => s.next_into(keys, out),
        }
    }

    /// [`Source::hint`] of the direct kinds (none for the others: not worth a call).
    #[inline(always)]
    pub fn hint(&self) -> Option<Client> {
        match self {
            Direct::Poisson(s) => s.hint(),
            Direct::Constant(_) | Direct::Other(_) => None,
        }
    }
}

impl Source for Direct {
    fn next_arrival(&mut self, keys: &mut KeySpace) -> Result<Option<Arrival>> {
        Direct::next_arrival(self, keys)
    }

    #[inline(always)]
    fn next_into(&mut self, keys: &mut KeySpace, out: &mut Arrival) -> Result<bool> {
        Direct::next_into(self, keys, out)
    }

    fn hint(&self) -> Option<Client> {
        Direct::hint(self)
    }

    fn skipped_lines(&self) -> u64 {
        match self {
            Direct::Constant(_) | Direct::Poisson(_) => 0,
            Direct::Other(s) => s.skipped_lines(),
        }
    }

    fn last_record(&self) -> Option<&super::Record> {
        match self {
            Direct::Constant(_) | Direct::Poisson(_) => None,
            Direct::Other(s) => s.last_record(),
        }
    }

    fn replay_end(&self) -> Option<super::ReplayEnd> {
        match self {
            Direct::Constant(_) | Direct::Poisson(_) => None,
            Direct::Other(s) => s.replay_end(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::poisson::LOOKAHEAD;
    use super::*;
    use crate::policy::{KeyField, KeySpec};
    use crate::traffic::tests::spec;
    use crate::traffic::{Arrivals, Intensity, Keeps, KeyLayout, build_sources};

    /// Each kind lands in its variant, and a source gives the same arrivals through `Direct`
    /// as through `dyn Source`.
    #[test]
    fn kinds_are_recognised_and_arrivals_unchanged() {
        let rate = crate::time::parse_rate("7/s").unwrap();
        let cases = [
            (Arrivals::Constant(rate), "constant"),
            (Arrivals::Poisson(Intensity::Flat(rate)), "poisson"),
            (
                Arrivals::Bursts {
                    count: 5,
                    every: 1_000_000_000,
                    spread: 0,
                },
                "other",
            ),
        ];
        let key_spec = KeySpec::new(vec![KeyField::Ip]).unwrap();
        for (arrivals, kind) in cases {
            let s = spec(arrivals, 4, 5_000_000_000);
            let build = |keys: &mut KeySpace| {
                build_sources(std::slice::from_ref(&s), &key_spec, 3, keys)
                    .unwrap()
                    .remove(0)
            };
            let layout = KeyLayout::for_sources(std::slice::from_ref(&s), Keeps::Names);
            let (mut k1, mut k2) = (KeySpace::with_layout(layout), KeySpace::with_layout(layout));
            let mut plain = build(&mut k1).boxed();
            let mut direct = build(&mut k2);
            let name = match direct {
                Direct::Constant(_) => "constant",
                Direct::Poisson(_) => "poisson",
                Direct::Other(_) => "other",
            };
            assert_eq!(name, kind);
            let mut out = Arrival::new(0, 0, 0, 0);
            let (mut arrivals, mut hints) = (Vec::new(), Vec::new());
            while let Some(a) = plain.next_arrival(&mut k1).unwrap() {
                assert!(direct.next_into(&mut k2, &mut out).unwrap());
                assert_eq!(out, a);
                arrivals.push(a);
                hints.push(direct.hint());
            }
            assert!(!direct.next_into(&mut k2, &mut out).unwrap());
            let n = arrivals.len();
            assert!(n > 2 * LOOKAHEAD, "{kind}: {n} arrivals");
            for (k, hint) in hints.iter().enumerate() {
                // The Poisson source names the client of the arrival `LOOKAHEAD - 1` after
                // the one returned with the hint (the last but one, near the end); the others
                // never hint.
                let ahead = (k + LOOKAHEAD - 1).min(n.saturating_sub(2));
                let want = (kind == "poisson" && ahead > k).then(|| {
                    let a = arrivals[ahead];
                    (a.key, a.client)
                });
                assert_eq!(hint.map(|c| (c.key, c.id)), want, "{kind}: hint {k} of {n}");
            }
        }
    }
}
