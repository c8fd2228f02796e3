//! Adding and comparing memory figures, field by field: a stack's rules hold their keys
//! together, and a peak is the most of each figure over the run.

use crate::algorithms::MemoryUsage;
use std::ops::{Add, AddAssign};

impl Add for MemoryUsage {
    type Output = MemoryUsage;
    fn add(self, o: MemoryUsage) -> MemoryUsage {
        MemoryUsage {
            live_keys: self.live_keys + o.live_keys,
            state_bytes: self.state_bytes + o.state_bytes,
            redis_bytes: self.redis_bytes + o.redis_bytes,
        }
    }
}

impl AddAssign for MemoryUsage {
    fn add_assign(&mut self, o: MemoryUsage) {
        *self = *self + o;
    }
}

impl std::iter::Sum for MemoryUsage {
    fn sum<I: Iterator<Item = MemoryUsage>>(iter: I) -> MemoryUsage {
        iter.fold(MemoryUsage::default(), Add::add)
    }
}

impl MemoryUsage {
    /// The larger of each figure (each on its own, as a peak is noted).
    pub fn max(self, o: MemoryUsage) -> MemoryUsage {
        MemoryUsage {
            live_keys: self.live_keys.max(o.live_keys),
            state_bytes: self.state_bytes.max(o.state_bytes),
            redis_bytes: self.redis_bytes.max(o.redis_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_and_takes_maxima_field_by_field() {
        let a = MemoryUsage {
            live_keys: 1,
            state_bytes: 50,
            redis_bytes: 7,
        };
        let b = MemoryUsage {
            live_keys: 3,
            state_bytes: 20,
            redis_bytes: 9,
        };
        let sum = MemoryUsage {
            live_keys: 4,
            state_bytes: 70,
            redis_bytes: 16,
        };
        assert_eq!(a + b, sum);
        assert_eq!([a, b].into_iter().sum::<MemoryUsage>(), sum);
        let mut c = a;
        c += b;
        assert_eq!(c, sum);
        let peak = MemoryUsage {
            live_keys: 3,
            state_bytes: 50,
            redis_bytes: 9,
        };
        assert_eq!(a.max(b), peak);
    }
}
