//! The files of `rlsim sweep --out DIR`, and `rlsim merge`.
//!
//! Everything is rendered from one [`SweepFile`] (the rows in point order plus what the sweep
//! was): `sweep.json` holds all of it, so merging shards is reading their `sweep.json` files,
//! checking that they belong together, and rendering the union. An unsharded sweep and merged
//! shards thus write the same bytes.

use super::file::read;
use crate::error::{Error, Result};
use crate::output::Batch;
use std::path::{Path, PathBuf};

pub use super::file::{SweepFile, schema, sweep_csv, sweep_json};

/// Writes a sweep's files into `dir`: a shard writes `sweep.json` and `sweep.csv`; a whole sweep
/// also its charts and `sweep.md`/`sweep.html`. Everything is rendered before anything is written.
pub fn write(dir: &Path, file: &SweepFile) -> Result<()> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (dir.join("sweep.json"), sweep_json(file)),
        (dir.join("sweep.csv"), sweep_csv(file)),
    ];
    if file.shard.is_none() {
        let rows = file.rows()?;
        let charts = super::report::charts(file, &rows)?;
        let (md, html) = super::report::documents(file, &rows, &charts);
        for c in &charts {
            files.push((dir.join("charts").join(c.file), c.svg.clone().into_bytes()));
        }
        files.push((dir.join("sweep.md"), md.into_bytes()));
        files.push((dir.join("sweep.html"), html.into_bytes()));
    }
    // All on disk under temporary names before any appears: a failure leaves no partial sweep.
    let mut batch = Batch::new();
    for (path, bytes) in files {
        batch.add(&path, &bytes)?;
    }
    batch.commit()
}

/// `rlsim merge DIR...`: the shards of one sweep, every one present once, as the whole sweep.
pub fn merge(dirs: &[PathBuf]) -> Result<SweepFile> {
    let files: Vec<(PathBuf, SweepFile)> = dirs
        .iter()
        .map(|d| read(d).map(|f| (d.clone(), f)))
        .collect::<Result<_>>()?;
    let Some((first_dir, first)) = files.first() else {
        return Err(Error::Usage("merge: no shard directory given".into()));
    };
    let refuse = |dir: &Path, what: &str, a: String, b: String| {
        Error::Usage(format!(
            "merge: {} and {} are shards of different sweeps: different {what} ({a} vs {b})",
            first_dir.display(),
            dir.display()
        ))
    };
    let Some(count) = first.shard.map(|s| s.count) else {
        return Err(Error::Usage(format!(
            "merge: {} holds a whole sweep, not a shard (`--shard K/N`)",
            first_dir.display()
        )));
    };
    let mut seen = vec![None::<&Path>; count];
    for (dir, f) in &files {
        let checks = [
            ("scenario", &first.scenario, &f.scenario),
            ("scenario file", &first.scenario_sha256, &f.scenario_sha256),
            ("rlsim version", &first.rlsim_version, &f.rlsim_version),
        ];
        for (what, a, b) in checks {
            if a != b {
                return Err(refuse(dir, what, a.clone(), b.clone()));
            }
        }
        if f.seed != first.seed {
            return Err(refuse(
                dir,
                "seed",
                first.seed.to_string(),
                f.seed.to_string(),
            ));
        }
        let Some(shard) = f.shard else {
            return Err(Error::Usage(format!(
                "merge: {} holds a whole sweep, not a shard",
                dir.display()
            )));
        };
        if shard.count != count {
            return Err(refuse(
                dir,
                "shard count",
                count.to_string(),
                shard.count.to_string(),
            ));
        }
        if f.axes != first.axes || f.overrides != first.overrides {
            return Err(refuse(
                dir,
                "swept values",
                format!("{:?}", first.overrides),
                format!("{:?}", f.overrides),
            ));
        }
        match &mut seen[shard.index - 1] {
            Some(other) => {
                return Err(Error::Usage(format!(
                    "merge: {} and {} are both shard {}/{count}",
                    other.display(),
                    dir.display(),
                    shard.index
                )));
            }
            slot => *slot = Some(dir),
        }
    }
    if let Some(missing) = seen.iter().position(Option::is_none) {
        return Err(Error::Usage(format!(
            "merge: shard {}/{count} is missing",
            missing + 1
        )));
    }
    let mut rows = Vec::new();
    for (_, f) in &files {
        rows.extend(f.rows()?);
    }
    // Point order; within a point, the contenders keep their order (a stable sort).
    rows.sort_by_key(|r| r.point);
    let mut whole = first.clone();
    whole.shard = None;
    Ok(whole.with_rows(&rows))
}
