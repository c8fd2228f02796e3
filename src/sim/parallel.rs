//! The entry point: every contender of a scenario in parallel, each on its own copy of the
//! traffic, through [`super::contest::run`].

use super::contest;
use super::engine::{DecisionSink, Detail};
use super::harness::{Row, Setup};
use super::remote::RemoteFactory;
use super::{Progress, RunReport};
use crate::algorithms::Decision;
use crate::error::Result;
use crate::scenario::{Contender, Scenario};
use crate::traffic::{Arrival, KeySpace};
use rayon::prelude::*;

/// A decision sink that is never built: the sink type of a run without one.
#[derive(Debug)]
pub enum NoSink {}

impl DecisionSink for NoSink {
    fn record(&mut self, _: &Arrival, _: &Decision, _: &Detail<'_>, _: &KeySpace) -> Result<()> {
        match *self {}
    }
}

type MakeSink<'a, S> = dyn Fn(usize, &Contender) -> Result<Option<S>> + Sync + 'a;

/// How [`run_all`] runs a scenario's contenders. [`RunOptions::new`] runs every contender
/// untimed, in memory, without decision sinks.
pub struct RunOptions<'a, S = NoSink> {
    make_sink: Box<MakeSink<'a, S>>,
    timed: bool,
    progress: Option<&'a Progress>,
    remote: Option<&'a dyn RemoteFactory>,
    keep: Option<&'a (dyn Fn(usize) -> bool + Sync)>,
}

impl Default for RunOptions<'_, NoSink> {
    fn default() -> Self {
        RunOptions::new()
    }
}

impl<'a> RunOptions<'a, NoSink> {
    /// Every contender untimed, in memory, without decision sinks, progress or a kept subset.
    pub fn new() -> Self {
        RunOptions {
            make_sink: Box::new(|_, _| Ok(None)),
            timed: false,
            progress: None,
            remote: None,
            keep: None,
        }
    }
}

impl<'a, S> RunOptions<'a, S> {
    /// Each contender then timed on its own over the run's first arrivals (about 40 ms of wall
    /// time); otherwise the decision figures are zero.
    pub fn timed(self, timed: bool) -> Self {
        RunOptions { timed, ..self }
    }

    /// Updated as the engines go (for a progress bar on another thread).
    pub fn progress(self, progress: &'a Progress) -> Self {
        RunOptions {
            progress: Some(progress),
            ..self
        }
    }

    /// Every decision made by `remote` (an external store) as well as in memory; the run
    /// follows the remote's decisions (see [`super::Remote`]).
    pub fn through(self, remote: Option<&'a dyn RemoteFactory>) -> Self {
        RunOptions { remote, ..self }
    }

    /// Only the contenders whose index `keep` accepts run and have a row.
    pub fn only(self, keep: &'a (dyn Fn(usize) -> bool + Sync)) -> Self {
        RunOptions {
            keep: Some(keep),
            ..self
        }
    }

    /// `make_sink` may give each contender (by index) a decision sink; the sinks are handed
    /// back, in order, for the caller to finish.
    pub fn with_sinks<T>(
        self,
        make_sink: impl Fn(usize, &Contender) -> Result<Option<T>> + Sync + 'a,
    ) -> RunOptions<'a, T> {
        RunOptions {
            make_sink: Box::new(make_sink),
            timed: self.timed,
            progress: self.progress,
            remote: self.remote,
            keep: self.keep,
        }
    }
}

/// Simulates the contenders of `scenario` in parallel, each on its own copy of the traffic:
/// the report in the scenario's order, and each contender's sink. With a remote, a contender
/// that decides in memory only is refused before anything runs.
pub fn run_all<S: DecisionSink + Send>(
    scenario: &Scenario,
    options: RunOptions<'_, S>,
) -> Result<(RunReport, Vec<Option<S>>)> {
    if options.remote.is_some() {
        for c in &scenario.algorithms {
            c.through_store(&scenario.path)?;
        }
    }
    let kept: Vec<(usize, &Contender)> = scenario
        .algorithms
        .iter()
        .enumerate()
        .filter(|(i, _)| options.keep.is_none_or(|keep| keep(*i)))
        .collect();
    let rows: Vec<Row<S>> = kept
        .into_par_iter()
        .map(|(index, contender)| {
            let sink = (options.make_sink)(index, contender)?;
            let setup = Setup {
                scenario,
                contender,
                index,
                timed: options.timed,
                progress: options.progress,
                remote: options.remote,
            };
            contest::run(&setup, sink)
        })
        .collect::<Result<_>>()?;
    let mut report = RunReport {
        algorithms: Vec::with_capacity(rows.len()),
        throughput: Vec::with_capacity(rows.len()),
        stored: Vec::with_capacity(rows.len()),
    };
    let mut sinks = Vec::with_capacity(rows.len());
    for row in rows {
        report.algorithms.push(row.report);
        report.throughput.push(row.throughput);
        report.stored.push(row.stored);
        sinks.push(row.sink);
    }
    Ok((report, sinks))
}
