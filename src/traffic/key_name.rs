//! A key's (or client's) text as the keyspace stores it: inline when short, on the heap when not.
//!
//! Replaying a log interns every line's key, and with a few hundred thousand addresses the
//! lookup's cost was cache misses: the table, then the entry, then the entry's string on the
//! heap. Short names (every IPv4 address, most others) are kept in the entry itself, so the
//! comparison reads memory the lookup has already loaded; long ones keep one heap allocation.

use indexmap::Equivalent;
use std::hash::{Hash, Hasher};

/// Bytes kept inline: the whole name fits in 32 bytes.
const INLINE: usize = 30;

#[derive(Debug, Clone)]
pub(super) enum Name {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Name {
    pub(super) fn new(text: &str) -> Name {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Name::Inline {
                len: text.len() as u8,
                bytes,
            }
        } else {
            Name::Heap(text.into())
        }
    }

    /// The text's bytes, unchecked: what a lookup compares.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Name::Inline { len, bytes } => &bytes[..*len as usize],
            Name::Heap(s) => s.as_bytes(),
        }
    }

    #[inline]
    pub(super) fn as_str(&self) -> &str {
        match self {
            Name::Inline { len, bytes } => {
                // Always a copy of a whole `&str` (see `new`), so valid UTF-8.
                std::str::from_utf8(&bytes[..*len as usize]).expect("copied from a str")
            }
            Name::Heap(s) => s,
        }
    }
}

// Hashes and compares as its text, so a `&str` finds it (`Equivalent`) without building one.
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Name {}

impl Equivalent<Name> for str {
    #[inline]
    fn equivalent(&self, key: &Name) -> bool {
        self.as_bytes() == key.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fits_in_32_bytes() {
        assert_eq!(std::mem::size_of::<Name>(), 32);
    }

    proptest! {
        /// Any text round-trips, short or long, and hashes as the `str` it holds.
        #[test]
        fn holds_its_text(text in "\\PC{0,40}") {
            let name = Name::new(&text);
            prop_assert_eq!(name.as_str(), text.as_str());
            prop_assert_eq!(matches!(name, Name::Inline { .. }), text.len() <= INLINE);
            let hash = |h: &dyn Fn(&mut std::hash::DefaultHasher)| {
                let mut s = std::hash::DefaultHasher::new();
                h(&mut s);
                s.finish()
            };
            prop_assert_eq!(hash(&|s| name.hash(s)), hash(&|s| text.as_str().hash(s)));
            prop_assert!(text.as_str().equivalent(&name));
        }
    }
}
