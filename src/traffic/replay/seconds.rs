//! Logs whose timestamps have one-second resolution (CloudFront, the combined log format, and
//! Cloudflare's `unix` and `rfc3339` times): the requests of one second are read together and
//! placed within it by `same_second`: spread evenly, kept together at its start, or at seeded
//! random instants (sorted, in log order). Only consecutive lines of one second are one batch.

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

/// A line-based reader of a format with one-second-resolution times: one second's requests at a
/// time. A record the format reports finer ([`LineFormat::whole_second`] false, a Cloudflare
/// `unixnano` time) is exact: it passes through as it is, and ends the second before it.
pub struct Seconds<F> {
    lines: Lines<F>,
    place: Placement,
    batch: VecDeque<Record>,
    spare: Vec<Record>,
    /// The record read past the last second's, and whether its time is whole seconds.
    lookahead: Option<(Record, bool)>,
    deferred: VecDeque<Error>,
}

/// `lines` as a reader: placed a second at a time when `seconds` (its format's times have
/// one-second resolution), else as they are.
pub(super) fn placed<F>(lines: Lines<F>, seconds: bool, place: Placement) -> Box<dyn RecordReader>
where
    F: LineFormat + Send + 'static,
    Lines<F>: RecordReader,
{
    if seconds {
        Box::new(Seconds::new(lines, place))
    } else {
        Box::new(lines)
    }
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

    /// Reads the next record into `r`: the outcome, and whether its time is whole seconds.
    fn next(&mut self, r: &mut Record) -> Result<(Outcome, bool)> {
        let outcome = self.lines.read(r)?;
        Ok((outcome, self.lines.format().whole_second()))
    }

    /// Reads the requests of the second that starts with `first` into `batch` (bad lines are
    /// deferred after it) and places them.
    fn gather(&mut self, first: Record) -> Result<()> {
        let second = first.epoch_ns;
        self.batch.push_back(first);
        loop {
            let mut r = self.spare.pop().unwrap_or_default();
            match self.next(&mut r)? {
                (Outcome::Record, true) if r.epoch_ns == second => self.batch.push_back(r),
                (Outcome::Record, whole) => {
                    self.lookahead = Some((r, whole));
                    break;
                }
                (Outcome::Eof, _) => break,
                (Outcome::Bad(e), _) => {
                    // Reported after this second's records, so that skipping it does not split
                    // the second in two.
                    self.spare.push(r);
                    self.deferred.push_back(e);
                }
            }
        }
        self.place.place(&mut self.batch);
        Ok(())
    }
}

impl<F: LineFormat> RecordReader for Seconds<F> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        if self.batch.is_empty() {
            if let Some(e) = self.deferred.pop_front() {
                return Ok(Outcome::Bad(e));
            }
            let first = match self.lookahead.take() {
                Some((mut r, false)) => {
                    std::mem::swap(rec, &mut r);
                    self.spare.push(r);
                    return Ok(Outcome::Record);
                }
                Some((r, true)) => r,
                None => match self.next(rec)? {
                    // An exact time needs no placing: read straight into `rec`.
                    (Outcome::Record, false) => return Ok(Outcome::Record),
                    (Outcome::Record, true) => {
                        let mut r = self.spare.pop().unwrap_or_default();
                        std::mem::swap(rec, &mut r);
                        r
                    }
                    (other, _) => return Ok(other),
                },
            };
            self.gather(first)?;
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
