//! One trace, several sources: a trace written by `rlsim traffic` carries each request's
//! `source` and `role`, and an access log can name its abusive clients (`abusive` addresses and
//! networks). Figures are kept per source and per role, so such a trace is replayed as one
//! source per (`source`, role) pair it holds, in order of first appearance, each reading the
//! whole trace (the same timeline: alignment, gaps and loops are the trace's) and keeping its
//! own records. Finding the pairs reads the trace once more, at validation, and only for traces
//! that can hold them (a CSV header with `source` or `role`, JSON Lines, or `abusive` set).

use super::{Outcome, Part, Record, open, trace_error};
use crate::error::Result;
use crate::traffic::{Arrivals, Role, SourceSpec};
use std::collections::HashSet;

/// The most (source, role) pairs one trace may split into.
pub const MAX_PARTS: usize = 256;

/// The sources of a scenario with every splittable replay split, and for each resulting
/// source, the index of the scenario source it comes from.
pub fn split_sources(specs: Vec<SourceSpec>) -> Result<(Vec<SourceSpec>, Vec<usize>)> {
    let mut out = Vec::with_capacity(specs.len());
    let mut origin = Vec::with_capacity(specs.len());
    for (i, mut spec) in specs.into_iter().enumerate() {
        let Arrivals::Replay { path, options } = &mut spec.arrivals else {
            out.push(spec);
            origin.push(i);
            continue;
        };
        options.default_role = spec.role;
        let parts = scan(path, options)?;
        let whole = match parts.as_slice() {
            [] => true,
            [(source, role)] => source.is_empty() && *role == spec.role,
            _ => false,
        };
        if whole {
            out.push(spec);
            origin.push(i);
            continue;
        }
        let path = path.clone();
        for (k, (source, role)) in parts.iter().enumerate() {
            let both_roles = parts.iter().filter(|(s, _)| s == source).count() > 1;
            let base = if source.is_empty() {
                &spec.name
            } else {
                source
            };
            let name =
                if source.is_empty() && *role != spec.role || !source.is_empty() && both_roles {
                    format!("{base} ({})", role.name())
                } else {
                    base.clone()
                };
            let mut part = spec.clone();
            part.name = name;
            part.role = *role;
            if let Arrivals::Replay { options, .. } = &mut part.arrivals {
                options.part = Some(Part {
                    source: source.clone(),
                    role: *role,
                    first: k == 0,
                });
            }
            out.push(part);
            origin.push(i);
        }
        let mut names = HashSet::new();
        if let Some(dup) = out.iter().find(|s| !names.insert(s.name.as_str())) {
            return Err(trace_error(
                &path,
                1,
                Some("source"),
                format!(
                    "the trace's source `{}` has the name of another source of the scenario",
                    dup.name
                ),
            ));
        }
    }
    if out.len() > u16::MAX as usize {
        return Err(crate::error::Error::Usage(format!(
            "the replayed traces split into {} sources, more than 65535",
            out.len()
        )));
    }
    Ok((out, origin))
}

/// The (source, role) pairs of a trace in order of first appearance; empty when its format
/// cannot tell them apart. Malformed lines are left to the replay (to report or skip).
fn scan(path: &std::path::Path, options: &super::ReplayOptions) -> Result<Vec<(String, Role)>> {
    let mut reader = open(path, None, options)?;
    if !reader.has_parts() && options.abusive.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts: Vec<(String, Role)> = Vec::new();
    let mut rec = Record::default();
    loop {
        match reader.read(&mut rec)? {
            Outcome::Eof => return Ok(parts),
            Outcome::Bad(_) => {}
            Outcome::Record => {
                let role = options.role_of(&rec);
                if parts.iter().any(|(s, r)| *s == rec.source && *r == role) {
                    continue;
                }
                if parts.len() == MAX_PARTS {
                    return Err(trace_error(
                        path,
                        rec.line,
                        Some("source"),
                        format!(
                            "more than {MAX_PARTS} distinct (source, role) pairs: replay them as separate traces"
                        ),
                    ));
                }
                parts.push((rec.source.clone(), role));
            }
        }
    }
}
