//! Logs whose timestamps have one-second resolution (CloudFront, the combined log format): the
//! requests of one second are read together and placed within it by `same_second`: spread
//! evenly, kept together at its start, or at seeded random instants (sorted, in log order).

use super::input::{LineFormat, Lines};
use super::{Outcome, Record, RecordReader, ReplayOptions, SameSecond};
use crate::error::{Error, Result};
use crate::time::NANOS_PER_SEC;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// How a second's requests are placed, with what `random` draws from.
#[derive(Debug, Clone)]
pub struct Placement {
    same_second: SameSecond,
    seed: u64,
    draws: Vec<u64>,
}

impl Placement {
    pub fn of(options: &ReplayOptions) -> Placement {
        Placement {
            same_second: options.same_second,
            seed: options.seed,
            draws: Vec::new(),
        }
    }

    /// Places the records of one second (all with the second's time).
    pub fn place(&mut self, batch: &mut VecDeque<Record>) {
        let n = batch.len() as u64;
        match self.same_second {
            SameSecond::Together => {}
            SameSecond::Spread => {
                for (k, r) in batch.iter_mut().enumerate() {
                    r.epoch_ns += k as u64 * NANOS_PER_SEC / n;
                }
            }
            SameSecond::Random => {
                let Some(first) = batch.front() else { return };
                // One stream per second: a second's placement does not depend on the others.
                let second = first.epoch_ns / NANOS_PER_SEC;
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                    self.seed ^ second.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                );
                self.draws.clear();
                self.draws
                    .extend((0..n).map(|_| rng.random_range(0..NANOS_PER_SEC)));
                self.draws.sort_unstable();
                for (r, d) in batch.iter_mut().zip(&self.draws) {
                    r.epoch_ns += d;
                }
            }
        }
    }
}

/// A line-based reader of a one-second-resolution format: one second's requests at a time.
pub struct Seconds<F> {
    lines: Lines<F>,
    place: Placement,
    batch: VecDeque<Record>,
    spare: Vec<Record>,
    lookahead: Option<Record>,
    deferred: VecDeque<Error>,
}

impl<F: LineFormat> Seconds<F> {
    pub fn new(lines: Lines<F>, place: Placement) -> Seconds<F> {
        Seconds {
            lines,
            place,
            batch: VecDeque::new(),
            spare: Vec::new(),
            lookahead: None,
            deferred: VecDeque::new(),
        }
    }

    /// Reads the requests of the next second into `batch` (bad lines are deferred after it).
    fn gather(&mut self) -> Result<Option<Outcome>> {
        let first = match self.lookahead.take() {
            Some(r) => r,
            None => {
                let mut r = self.spare.pop().unwrap_or_default();
                match self.lines.read(&mut r)? {
                    Outcome::Record => r,
                    other => return Ok(Some(other)),
                }
            }
        };
        let second = first.epoch_ns;
        self.batch.push_back(first);
        loop {
            let mut r = self.spare.pop().unwrap_or_default();
            match self.lines.read(&mut r)? {
                Outcome::Record if r.epoch_ns == second => self.batch.push_back(r),
                Outcome::Record => {
                    self.lookahead = Some(r);
                    break;
                }
                Outcome::Eof => break,
                Outcome::Bad(e) => {
                    // Reported after this second's records, so that skipping it does not split
                    // the second in two.
                    self.spare.push(r);
                    self.deferred.push_back(e);
                }
            }
        }
        self.place.place(&mut self.batch);
        Ok(None)
    }
}

impl<F: LineFormat> RecordReader for Seconds<F> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        if self.batch.is_empty() {
            if let Some(e) = self.deferred.pop_front() {
                return Ok(Outcome::Bad(e));
            }
            if let Some(done) = self.gather()? {
                return Ok(done);
            }
        }
        let mut out = self.batch.pop_front().expect("filled above");
        std::mem::swap(rec, &mut out);
        self.spare.push(out);
        Ok(Outcome::Record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(n: usize, at: u64) -> VecDeque<Record> {
        (0..n)
            .map(|i| Record {
                epoch_ns: at,
                line: i as u64,
                ..Record::default()
            })
            .collect()
    }

    fn placed(same_second: SameSecond, seed: u64, n: usize, at: u64) -> Vec<u64> {
        let options = ReplayOptions {
            same_second,
            seed,
            ..ReplayOptions::default()
        };
        let mut batch = second(n, at);
        Placement::of(&options).place(&mut batch);
        batch.iter().map(|r| r.epoch_ns - at).collect()
    }

    /// Spread is `k/n` s, together is 0, random is seeded: in order, within the second, the
    /// same for the same seed and second, different for another seed.
    #[test]
    fn placements_within_the_second() {
        let at = 7 * NANOS_PER_SEC;
        assert_eq!(
            placed(SameSecond::Spread, 0, 4, at),
            [0, 250_000_000, 500_000_000, 750_000_000]
        );
        assert_eq!(placed(SameSecond::Together, 0, 3, at), [0, 0, 0]);
        let a = placed(SameSecond::Random, 1, 50, at);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert!(a.iter().all(|&t| t < NANOS_PER_SEC));
        assert_eq!(a, placed(SameSecond::Random, 1, 50, at));
        assert_ne!(a, placed(SameSecond::Random, 2, 50, at));
        assert_ne!(a, placed(SameSecond::Random, 1, 50, at + NANOS_PER_SEC));
    }
}
