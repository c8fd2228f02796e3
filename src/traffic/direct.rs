//! The engine's handle on a source: the commonest kinds called directly, the rest through
//! `dyn Source`.
//!
//! A one-key run spends a tenth of its time in the indirect call to the source for its next
//! request; called directly, a constant or Poisson source's step is inlined into the loop.

use super::periodic::Constant;
use super::poisson::Poisson;
use super::{Arrival, KeySpace, Source};
use crate::error::Result;
use std::any::Any;

/// A source, by kind where the kind is one the engine calls directly.
// A run holds one per traffic source, kept by value on purpose: no box to follow per request.
#[allow(clippy::large_enum_variant)]
pub enum Direct {
    Constant(Constant),
    Poisson(Poisson),
    Other(Box<dyn Source>),
}

impl Direct {
    /// `source`, called directly if its kind allows.
    pub fn new(source: Box<dyn Source>) -> Direct {
        if let Some(s) = take::<Constant>(&*source) {
            return Direct::Constant(s(source));
        }
        if let Some(s) = take::<Poisson>(&*source) {
            return Direct::Poisson(s(source));
        }
        Direct::Other(source)
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
}

/// If `source` is a `T`, what takes it out of its box.
fn take<T: Source>(source: &dyn Source) -> Option<fn(Box<dyn Source>) -> T> {
    let any: &dyn Any = source;
    any.is::<T>().then_some(|source| {
        let any: Box<dyn Any> = source;
        *any.downcast::<T>().expect("checked to be a T")
    })
}
