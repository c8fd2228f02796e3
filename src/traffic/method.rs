//! HTTP methods: what a request does, for rules that match on it (`methods = ["POST"]`).
//!
//! A request carries its method as a one-byte code on the [`Arrival`]. A source sends `GET`
//! unless it says `method = "POST"` or a weighted mix `methods = [...]`; only a mix draws, from
//! the source's own `Stream::Methods` (`rng.rs`), so a source without one
//! sends exactly the requests it always did.

use super::Arrival;
use super::population::Picker;
use super::stamp::Stamp;
use crate::suggest;
use rand_chacha::ChaCha8Rng;
use strum::VariantArray;

/// The methods rlsim knows, by code (`Method as u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, strum::VariantArray)]
#[repr(u8)]
pub enum Method {
    /// `GET` (code 0): what a source sends unless it sets `method` or `methods`.
    #[default]
    Get,
    /// `POST` (code 1).
    Post,
    /// `PUT` (code 2).
    Put,
    /// `PATCH` (code 3).
    Patch,
    /// `DELETE` (code 4).
    Delete,
    /// `HEAD` (code 5).
    Head,
    /// `OPTIONS` (code 6).
    Options,
}

impl Method {
    /// The method's name in uppercase, as HTTP writes it (`POST`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }

    /// The code an [`Arrival`] carries.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// A method by name, in any case (`post`, `POST`).
    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        Method::named(s)
            .ok_or_else(|| suggest::unknown("method", s, Method::VARIANTS.iter().map(|v| v.name())))
    }

    /// A method by name, in any case; `None` for one rlsim does not model. Allocates nothing:
    /// trace readers call it once per line.
    pub fn named(s: &str) -> Option<Method> {
        Method::VARIANTS
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(s))
    }

    /// A set of methods as a bit mask (bit `code`).
    pub fn mask(methods: &[Method]) -> u8 {
        methods.iter().fold(0, |m, x| m | (1 << x.code()))
    }
}

/// Sets each request's method: one for the whole source, or one drawn per request.
pub struct Methods {
    codes: Vec<u8>,
    picker: Picker,
    rng: ChaCha8Rng,
}

impl Methods {
    /// `methods` with their weights (one entry: every request has it, nothing is drawn).
    pub fn new(methods: &[(Method, u32)], rng: ChaCha8Rng) -> Self {
        let weights: Vec<f64> = methods.iter().map(|m| f64::from(m.1)).collect();
        Methods {
            codes: methods.iter().map(|m| m.0.code()).collect(),
            picker: Picker::new(&weights),
            rng,
        }
    }
}

impl Stamp for Methods {
    fn stamp(&mut self, a: &mut Arrival) {
        a.method = match self.codes.as_slice() {
            [only] => *only,
            codes => codes[self.picker.pick(&mut self.rng)],
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_and_masks() {
        for (i, m) in Method::VARIANTS.iter().copied().enumerate() {
            assert_eq!(m.code() as usize, i);
            assert_eq!(Method::parse(&m.name().to_lowercase()), Ok(m));
        }
        assert_eq!(Method::default(), Method::Get);
        assert_eq!(Method::mask(&[Method::Get, Method::Post]), 0b11);
        assert_eq!(
            Method::parse("PSOT"),
            Err("unknown method `PSOT`: did you mean `POST`?".into())
        );
    }
}
