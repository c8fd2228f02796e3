//! `--shard K/N`: which points one of N independent jobs runs. Round robin (point `p` belongs to
//! shard `p mod N + 1`), so shards get a fair mix of cheap and costly points whatever the axis
//! order, and any job can compute its share from K and N alone.

use crate::error::{Error, Result, must_be};
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
        // More shards than a sweep has points (grid::MAX_POINTS) would leave some empty.
        let max = super::grid::MAX_POINTS as u64;
        let n = crate::error::whole(n, 1, max).map_err(|why| {
            fail(&format!(
                "N is {why}: {}",
                must_be("a whole number", 1, max)
            ))
        })?;
        let k = crate::error::whole(k, 1, n).map_err(|why| {
            fail(&format!(
                "K is {why}: {}",
                must_be("a whole number", 1, "N")
            ))
        })?;
        let (k, n) = (k as usize, n as usize);
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
        let e = |text: &str| Shard::parse(text).unwrap_err().to_string();
        assert_eq!(
            e("1/1000001"),
            "--shard 1/1000001: N is too large: must be a whole number from 1 to 1000000"
        );
        assert_eq!(
            e("3/2"),
            "--shard 3/2: K is too large: must be a whole number from 1 to N"
        );
        assert_eq!(
            e("-1/2"),
            "--shard -1/2: K is too small: must be a whole number from 1 to N"
        );
        assert!(Shard::parse("1000000/1000000").is_ok());
    }
}
