//! `--out DIR` hygiene: rlsim owns the files it wrote there and no others.
//!
//! Every run writes `.rlsim-manifest` last, listing (one per line, relative to DIR) the files
//! it wrote. The next run into the same directory first removes exactly those files, so a
//! chart the new scenario does not draw (the retry chart of an earlier retry scenario) cannot
//! linger beside the new report; anything else in DIR is left alone. A directory written before
//! manifests existed is cleaned of the file names rlsim wrote then.

use crate::error::{Error, Result};
use std::path::{Component, Path};

/// The manifest's file name in DIR.
pub const MANIFEST: &str = ".rlsim-manifest";
const HEADER: &str = "# files rlsim wrote in this directory; the next run into it removes them";

/// What an `--out` directory held before manifests: its fixed files and every chart a run
/// could draw then.
const LEGACY: [&str; 17] = [
    "summary.json",
    "summary.csv",
    "timeseries.csv",
    "delays.csv",
    "throughput.json",
    "report.md",
    "report.html",
    "charts/admitted_rate.svg",
    "charts/worst_moment.svg",
    "charts/accuracy.svg",
    "charts/who_was_hurt.svg",
    "charts/memory.svg",
    "charts/delays.svg",
    "charts/retries.svg",
    "charts/refused_share.svg",
    "charts/top_refused_keys.svg",
    "charts/retry_intervals.svg",
];

/// The manifest listing `files` (relative paths with `/`).
pub fn manifest(files: &[String]) -> Vec<u8> {
    let mut out = format!("{HEADER}\n");
    for f in files {
        out.push_str(f);
        out.push('\n');
    }
    out.into_bytes()
}

/// Removes what an earlier run wrote in `dir`: the files its manifest lists, or without one the
/// legacy names; then `charts/` if that left it empty. A listed path that is absolute or leaves
/// the directory (`..`) is ignored: the manifest is a file anyone could edit.
pub fn clean(dir: &Path) -> Result<()> {
    let listed = match std::fs::read_to_string(dir.join(MANIFEST)) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(str::to_string)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            LEGACY.iter().map(|s| s.to_string()).collect::<Vec<_>>()
        }
        Err(e) => return Err(Error::io(dir.join(MANIFEST), e)),
    };
    for rel in listed.iter().filter(|r| inside(Path::new(r))) {
        let path = dir.join(rel);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() || m.file_type().is_symlink() => {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
            _ => {}
        }
    }
    // Only if empty: `remove_dir` refuses a directory with anything left in it.
    let _ = std::fs::remove_dir(dir.join("charts"));
    Ok(())
}

/// A relative path that stays inside the directory it is relative to.
fn inside(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_)))
        && path.components().next().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_removed() {
        assert!(inside(Path::new("charts/rate.svg")));
        assert!(!inside(Path::new("../x")));
        assert!(!inside(Path::new("/etc/passwd")));
        assert!(!inside(Path::new("charts/../../x")));
        assert!(!inside(Path::new("")));
        assert_eq!(
            String::from_utf8(manifest(&["a".into(), "charts/b.svg".into()])).unwrap(),
            format!("{HEADER}\na\ncharts/b.svg\n")
        );
    }
}
