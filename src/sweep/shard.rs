//! `--shard K/N`: which points one of N independent jobs runs. Round robin (point `p` belongs to
//! shard `p mod N + 1`), so shards get a fair mix of cheap and costly points whatever the axis
//! order, and any job can compute its share from K and N alone.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    /// 1-based: `1..=count`.
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with `1 <= K <= N`.
    pub fn parse(text: &str) -> Result<Shard> {
        let fail = |why: &str| Error::Usage(format!("--shard {text}: {why}"));
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| fail("expected K/N, e.g. `--shard 2/8`"))?;
        let k: usize = k
            .trim()
            .parse()
            .map_err(|_| fail("K is not a whole number"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| fail("N is not a whole number"))?;
        if n == 0 || k == 0 || k > n {
            return Err(fail("K must be between 1 and N"));
        }
        Ok(Shard { index: k, count: n })
    }

    pub fn owns(&self, point: usize) -> bool {
        point % self.count + 1 == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_points_exactly_once() {
        let shards: Vec<Shard> = (1..=3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        for p in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.owns(p)).count(), 1);
        }
        assert!(shards[0].owns(0) && shards[1].owns(1) && shards[0].owns(3));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
