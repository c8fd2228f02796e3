//! `rlsim traffic`: the requests a scenario generates, before any limiter, written in the CSV
//! replay format (`time,ip,user,api_key,endpoint,source,role,method`, `time` in nanoseconds,
//! and `status,decision,x_forwarded_for` when a source replays a trace, which may record
//! them), and `cost` when requests weigh more than one, so that generated traffic can be
//! replayed, inspected or fed to another tool, and recorded and generated traffic round-trip.

use super::method::Method;
use super::via::Wire;
use super::{
    Arrivals, Keeps, KeyLayout, KeySpace, Record, Role, Source, SourceSpec, Tokens, build_sources,
};
use crate::algorithms::Cost;
use crate::error::{Error, Result};
use crate::policy::{KeyField, KeySpec};
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::Path;
use strum::VariantArray;

/// One generated request with its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// When the request arrives, in ns of virtual time.
    pub time: Nanos,
    /// `ip`, `user`, `api_key`, `endpoint`.
    pub fields: &'a [Box<str>; 4],
    /// The name of the source that sent it.
    pub source: &'a str,
    /// The source's index in the scenario (as [`super::Arrival::source`]).
    pub source_index: u16,
    /// Whether its source is wanted traffic or an attack.
    pub role: Role,
    /// The method's code (`Method::code`).
    pub method: u8,
    /// The trace record it was replayed from (a replayed trace's status, decision, headers).
    pub record: Option<&'a Record>,
    /// What the origin sees of its client's network path (`via`), when the source has one.
    pub wire: Option<&'a Wire>,
    /// What the request weighs.
    pub cost: Cost,
    /// Whether the pass has costs: a source with costs, or a replayed trace whose first
    /// record has one (the same for every request of the pass).
    pub costed: bool,
    /// What its response gives back (the cost minus the actual cost).
    pub refund: Cost,
    /// Whether the pass has actual costs: a source that states them, or a replayed trace
    /// whose first record has one (the same for every request of the pass).
    pub settles: bool,
    /// An LLM request's tokens and stream; `None` for any other request.
    pub llm: Option<(Tokens, Nanos)>,
    /// Whether the pass has LLM requests: a source that states tokens, or a replayed trace
    /// whose first record has some (the same for every request of the pass).
    pub llm_pass: bool,
}

/// Refuses the replayed record at `line` that weighs more than one or settles less than its
/// cost (`cost`, `refund`) when the pass writes no such column (`costed`, `settles`): the
/// columns follow the first records, chosen before the rest is read, and a later record's
/// figure would be dropped without a word.
fn unannounced_cost(
    path: &Path,
    line: u64,
    (cost, refund): (Cost, Cost),
    (costed, settles): (bool, bool),
) -> Result<()> {
    let (field, first) = match () {
        _ if !costed && cost != 1 => ("cost", "a cost"),
        _ if !settles && refund != 0 => ("actual_cost", "an actual cost"),
        _ => return Ok(()),
    };
    Err(super::replay::trace_error(
        path,
        line,
        Some(field),
        format!(
            "the trace's first record has no `{field}` but this one has {first}: the written \
             trace's columns follow its first record, so give that one a `{field}` too"
        ),
    ))
}

/// What one pass over a scenario's traffic gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// The requests.
    pub requests: u64,
    /// Per source: the malformed lines it skipped ([`Source::skipped_lines`]).
    pub skipped_lines: Vec<u64>,
}

/// Calls `f` with every request of `specs` in time order (ties in source order, as the engine
/// takes them); how many there were, and the lines each source skipped.
pub fn for_each_request(
    specs: &[SourceSpec],
    seed: u64,
    mut f: impl FnMut(Request<'_>) -> Result<()>,
) -> Result<Pass> {
    let all = KeySpec::new(KeyField::ALL.to_vec()).expect("four fields");
    let mut keys = KeySpace::with_layout(KeyLayout::for_sources(specs, Keeps::Fields));
    let mut sources = build_sources(specs, &all, seed, &mut keys)?;
    let mut pending = Vec::with_capacity(sources.len());
    let mut queue = BinaryHeap::with_capacity(sources.len());
    let mut seq = 0u64;
    for (i, s) in sources.iter_mut().enumerate() {
        let a = s.next_arrival(&mut keys)?;
        if let Some(a) = &a {
            queue.push(Reverse((a.time, seq, i)));
            seq += 1;
        }
        pending.push(a);
    }
    let settles = specs.iter().any(|s| s.settles())
        || sources
            .iter()
            .any(|s| s.last_record().is_some_and(|r| r.actual_cost.is_some()));
    let costed = settles
        || specs.iter().any(|s| s.has_costs())
        || sources
            .iter()
            .any(|s| s.last_record().is_some_and(|r| r.cost.is_some()));
    let llm_record = |r: &Record| r.tokens[0].is_some() || r.tokens[3].is_some();
    let llm_pass = specs.iter().any(|s| s.population.tokens.is_some())
        || sources
            .iter()
            .any(|s| s.last_record().is_some_and(llm_record));
    let mut count = 0;
    while let Some(Reverse((_, _, i))) = queue.pop() {
        let a = pending[i].take().expect("queued");
        let fields = keys
            .fields(a.key)
            .ok_or_else(|| Error::Internal("a generated key has no recorded identity".into()))?;
        let record = sources[i].last_record();
        if let (Some(r), Arrivals::Replay { path, .. }) = (record, &specs[i].arrivals) {
            unannounced_cost(path, r.line, (a.cost, a.refund), (costed, settles))?;
            if llm_record(r) && !llm_pass {
                return Err(super::replay::trace_error(
                    path,
                    r.line,
                    Some("input_tokens"),
                    "the trace's first record states no tokens but this one does: the written \
                     trace's columns follow its first record, so give that one its tokens too"
                        .into(),
                ));
            }
        }
        let llm = specs[i].population.tokens.is_some() || record.is_some_and(llm_record);
        f(Request {
            time: a.time,
            fields,
            source: &specs[i].name,
            source_index: i as u16,
            role: specs[i].role,
            method: a.method,
            record,
            wire: keys.wire(a.key),
            cost: a.cost,
            costed,
            refund: a.refund,
            settles,
            // The whole response, its source's time to first token included: a replayed
            // request settles when the generated one did.
            llm: llm.then(|| {
                let to_first = specs[i].population.costs.response_time;
                (a.tokens, to_first.saturating_add(a.stream))
            }),
            llm_pass,
        })?;
        count += 1;
        pending[i] = sources[i].next_arrival(&mut keys)?;
        if let Some(next) = &pending[i] {
            queue.push(Reverse((next.time, seq, i)));
            seq += 1;
        }
    }
    Ok(Pass {
        requests: count,
        skipped_lines: sources.iter().map(Source::skipped_lines).collect(),
    })
}

/// Writes every request of `specs` as CSV to `out`; returns how many, and the lines each source
/// skipped. Write errors name `name` (the user's path for `out`).
pub fn write_trace(
    specs: &[SourceSpec],
    seed: u64,
    out: &mut dyn Write,
    name: &Path,
) -> Result<Pass> {
    let mut w = csv::Writer::from_writer(out);
    let io = |e: csv::Error| match e.into_kind() {
        csv::ErrorKind::Io(e) => Error::io(name, e),
        other => Error::Internal(format!("writing the trace: {other:?}")),
    };
    // A replayed trace's record of production: only a scenario that replays one has it.
    let recorded = specs
        .iter()
        .any(|s| matches!(s.arrivals, Arrivals::Replay { .. }));
    let header = |w: &mut csv::Writer<&mut dyn Write>, r: Option<&Request>| {
        let costed = r.is_some_and(|r| r.costed);
        let settles = r.is_some_and(|r| r.settles);
        let mut header = vec![
            "time", "ip", "user", "api_key", "endpoint", "source", "role", "method",
        ];
        if recorded {
            header.extend(["status", "decision", "x_forwarded_for"]);
        }
        if costed {
            header.push("cost");
        }
        if settles {
            header.push("actual_cost");
        }
        if r.is_some_and(|r| r.llm_pass) {
            header.extend(super::replay::TOKEN_FIELDS);
            header.push("stream");
        }
        w.write_record(&header).map_err(io)
    };
    let mut llm_cells: [String; 5] = Default::default();
    let mut headed = false;
    let (mut time, mut status, mut cost, mut actual) = (
        itoa::Buffer::new(),
        itoa::Buffer::new(),
        itoa::Buffer::new(),
        itoa::Buffer::new(),
    );
    let pass = for_each_request(specs, seed, |r| {
        if !headed {
            header(&mut w, Some(&r))?;
            headed = true;
        }
        if r.llm_pass {
            write_llm(&mut llm_cells, r.llm);
        }
        let llm = llm_cells.iter().take(if r.llm_pass { 5 } else { 0 });
        let [ip, user, api_key, endpoint] = r.fields;
        let method = Method::VARIANTS
            .get(r.method as usize)
            .map_or("", |m| m.name());
        let row = [
            time.format(r.time),
            ip,
            user,
            api_key,
            endpoint,
            r.source,
            r.role.name(),
            method,
        ];
        let actual = r.settles.then(|| actual.format(r.cost - r.refund));
        let costs = r
            .costed
            .then(|| cost.format(r.cost))
            .into_iter()
            .chain(actual);
        let costs = costs.chain(llm.map(String::as_str));
        if !recorded {
            return w.write_record(row.into_iter().chain(costs)).map_err(io);
        }
        let rec = r.record;
        let code = rec.and_then(|x| x.status).map_or("", |c| status.format(c));
        let decision = rec.and_then(|x| x.production).map_or("", |p| p.name());
        let xff = rec.map_or("", |x| x.forwarded_for.as_str());
        w.write_record(row.into_iter().chain([code, decision, xff]).chain(costs))
            .map_err(io)
    })?;
    if !headed {
        header(&mut w, None)?;
    }
    w.flush().map_err(|e| Error::io(name, e))?;
    Ok(pass)
}

/// An LLM request's cells (`input_tokens`, `cached_tokens`, `max_tokens`, `output_tokens`,
/// `stream`) into `cells`; empty for any other request, and `max_tokens` empty when unstated.
fn write_llm(cells: &mut [String; 5], llm: Option<(Tokens, Nanos)>) {
    use std::fmt::Write as _;
    for c in cells.iter_mut() {
        c.clear();
    }
    let Some((t, stream)) = llm else { return };
    let counts = [t.input, t.cached, t.max_output, t.output];
    for (i, n) in counts.into_iter().enumerate() {
        if i != 2 || t.states_max() {
            let _ = write!(cells[i], "{n}");
        }
    }
    cells[4].push_str(&crate::time::duration_text(stream));
}
