//! The back-test's outputs (docs/backtest.md): the terminal section after the table, the
//! report's "Back-test against production" section and `backtest.csv`. Absent when no replayed
//! request carries production's decision.
//!
//! The calibration comes first: the model (`[backtest] model`, else the first contender) and
//! how much of production it reproduces, with the causes of the rest. Then the what-if: for each
//! other contender, who it would have served or refused differently, by client and by route.

use super::document::{Block, plain};
use crate::metrics::{AlgorithmReport, BacktestReport, BacktestRow, Cause};
use crate::scenario::Scenario;
use crate::time::format_duration;

/// The contenders with a back-test, the model first.
fn ordered<'a>(
    scenario: &Scenario,
    algorithms: &'a [AlgorithmReport],
) -> Vec<(&'a AlgorithmReport, &'a BacktestReport)> {
    let mut rows: Vec<_> = algorithms
        .iter()
        .filter_map(|a| a.backtest.as_ref().map(|b| (a, b)))
        .collect();
    if let Some(model) = &scenario.backtest_model
        && let Some(i) = rows.iter().position(|(a, _)| a.algorithm == *model)
    {
        let first = rows.remove(i);
        rows.insert(0, first);
    }
    rows
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// "3 within 1 ms of a slot edge, 1 logged within 1 ms ..." (every cause that occurred).
fn causes(b: &BacktestReport) -> String {
    let counts = [
        (Cause::SlotEdge, b.cause_slot_edge),
        (Cause::LogOrder, b.cause_log_order),
        (Cause::DelayedTime, b.cause_delayed_time),
        (Cause::AfterEarlier, b.cause_after_earlier),
        (Cause::Unexplained, b.cause_unexplained),
    ];
    let named: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{n} {}", c.explain()))
        .collect();
    named.join(", ")
}

/// The calibration line of the model.
pub fn calibration(a: &AlgorithmReport, b: &BacktestReport) -> String {
    let mut line = format!(
        "modelled as `{}`: {} of production's decisions reproduced ({} of {})",
        a.algorithm,
        percent(b.agreement),
        b.both_admitted + b.both_refused,
        b.decisions
    );
    let rest = b.only_production_refused + b.only_contender_refused;
    if rest > 0 {
        line.push_str(&format!("; the rest: {}", causes(b)));
    }
    line
}

/// A what-if line: how another contender would have decided differently.
fn what_if(a: &AlgorithmReport, b: &BacktestReport) -> String {
    let mut line = format!(
        "what if `{}`: {} agree; it would refuse {} production served and serve {} production refused",
        a.algorithm,
        percent(b.agreement),
        b.only_contender_refused,
        b.only_production_refused
    );
    if let Some(c) = b.clients.first() {
        line.push_str(&format!(
            "; most changed client {} ({})",
            c.name,
            c.only_contender_refused + c.only_production_refused
        ));
    }
    if let Some(r) = most_changed(&b.routes) {
        line.push_str(&format!(
            ", route {} ({})",
            r.name,
            r.only_contender_refused + r.only_production_refused
        ));
    }
    line
}

fn most_changed(rows: &[BacktestRow]) -> Option<&BacktestRow> {
    rows.iter()
        .filter(|r| r.only_contender_refused + r.only_production_refused > 0)
        .max_by_key(|r| r.only_contender_refused + r.only_production_refused)
}

/// The terminal section (empty without a back-test).
pub fn lines(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> String {
    let rows = ordered(scenario, algorithms);
    let Some(((model, mb), others)) = rows.split_first() else {
        return String::new();
    };
    let mut out = String::from("\nback-test against production (docs/backtest.md):\n");
    let width = super::table::WIDTH;
    out.push_str(&super::table::wrap(
        &format!("  {}", plain(&calibration(model, mb))),
        width,
        "    ",
    ));
    for d in mb.disagreements.iter().take(3) {
        out.push_str(&super::table::wrap(
            &format!("    {}", instant(d)),
            width,
            "      ",
        ));
    }
    for (a, b) in others {
        out.push_str(&super::table::wrap(
            &format!("  {}", plain(&what_if(a, b))),
            width,
            "    ",
        ));
    }
    out
}

fn instant(d: &crate::metrics::BacktestDisagreement) -> String {
    format!(
        "at {} {} {}: production {}, model {} ({})",
        format_duration(d.time_ns),
        d.client,
        d.route,
        d.production,
        d.contender,
        d.cause.replace('_', " ")
    )
}

const MATRIX: [&str; 6] = [
    "",
    "both admitted",
    "both refused",
    "only production refused",
    "only contender refused",
    "agreement",
];

fn matrix_row(name: &str, r: &BacktestRow) -> Vec<String> {
    vec![
        name.to_string(),
        r.both_admitted.to_string(),
        r.both_refused.to_string(),
        r.only_production_refused.to_string(),
        r.only_contender_refused.to_string(),
        percent(r.agreement),
    ]
}

fn total_row(b: &BacktestReport) -> BacktestRow {
    BacktestRow {
        name: "all".into(),
        both_admitted: b.both_admitted,
        both_refused: b.both_refused,
        only_production_refused: b.only_production_refused,
        only_contender_refused: b.only_contender_refused,
        agreement: b.agreement,
    }
}

fn header(first: &str) -> Vec<String> {
    let mut h: Vec<String> = MATRIX.iter().map(|s| s.to_string()).collect();
    h[0] = first.to_string();
    h
}

/// The report's section (empty without a back-test).
pub fn blocks(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<Block> {
    let rows = ordered(scenario, algorithms);
    let Some(((model, mb), _)) = rows.split_first() else {
        return Vec::new();
    };
    let mut b = vec![
        Block::Heading(2, "Back-test against production".into()),
        Block::Paragraph(format!(
            "The replayed log records what production's limiter decided; each contender's \
             decisions are compared with it request by request (docs/backtest.md). {}.",
            calibration(model, mb)
        )),
        Block::Table(
            header("contender"),
            rows.iter()
                .map(|(a, b)| matrix_row(&a.algorithm, &total_row(b)))
                .collect(),
        ),
    ];
    for (a, bt) in &rows {
        let mut folded = vec![Block::Table(
            header("route"),
            bt.routes.iter().map(|r| matrix_row(&r.name, r)).collect(),
        )];
        if !bt.clients.is_empty() {
            folded.push(Block::Table(
                header("client"),
                bt.clients.iter().map(|r| matrix_row(&r.name, r)).collect(),
            ));
        }
        if !bt.disagreements.is_empty() {
            folded.push(Block::List(
                true,
                bt.disagreements.iter().map(instant).collect(),
            ));
        }
        let summary = format!(
            "`{}`: by route, by client, and its first disagreements",
            a.algorithm
        );
        b.push(Block::Details(summary, folded));
    }
    b
}

/// `backtest.csv`: per contender its whole matrix, each route's and each listed client's; `None`
/// without a back-test.
pub fn csv(algorithms: &[AlgorithmReport]) -> Option<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "contender",
        "scope",
        "name",
        "both_admitted",
        "both_refused",
        "only_production_refused",
        "only_contender_refused",
        "agreement",
    ])
    .ok()?;
    let mut any = false;
    for a in algorithms {
        let Some(b) = &a.backtest else { continue };
        any = true;
        let scoped = std::iter::once(("all", total_row(b)))
            .chain(b.routes.iter().map(|r| ("route", r.clone())))
            .chain(b.clients.iter().map(|r| ("client", r.clone())));
        for (scope, r) in scoped {
            w.write_record([
                a.algorithm.as_str(),
                scope,
                r.name.as_str(),
                &r.both_admitted.to_string(),
                &r.both_refused.to_string(),
                &r.only_production_refused.to_string(),
                &r.only_contender_refused.to_string(),
                &format!("{:.6}", r.agreement),
            ])
            .ok()?;
        }
    }
    if !any {
        return None;
    }
    w.into_inner().ok()
}
