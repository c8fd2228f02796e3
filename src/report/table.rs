//! The terminal summary: one row per contender, the columns that matter in 120 columns by
//! default (`--wide`: every column; `--columns a,b,c`: those), a note naming the yardstick the
//! judged figures are measured against, and the verdict beside it (`commands::run`).

use crate::error::{Error, Result};
use crate::metrics::{AlgorithmReport, Throughput};
use crate::scenario::Scenario;
use crate::time::format_duration;
use anstyle::{AnsiColor, Style};
use std::fmt::Write;
use strum::VariantArray;

/// The terminal's width the default table and the verdict fit in.
pub const WIDTH: usize = 120;

/// A column of the terminal table. Its name is its header and what `--columns` takes; declared
/// in the order the table shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Column {
    /// `offered`: requests that arrived, retries included.
    Offered,
    /// `admitted`: requests allowed at once or after a delay.
    Admitted,
    /// `delayed`: requests a shaper admitted after a delay.
    Delayed,
    /// `rejected`: requests refused.
    Rejected,
    /// `cost_admitted`: the cost of the requests admitted (`cost.admitted`); shown only where
    /// requests weigh more than one.
    CostAdmitted,
    /// `cost_settled`: what the admitted requests actually cost (`cost.settled`); shown only
    /// where the traffic states actual costs.
    CostSettled,
    /// `burst_factor`: the worst client's most admissions in one rolling window over its
    /// entitlement, to two decimals.
    BurstFactor,
    /// `violations`: admissions beyond the client's entitlement (`policy_violations`).
    Violations,
    /// `needless`: rejections that, admitted alone, would have kept the client within its
    /// entitlement (`needless_rejections`).
    Needless,
    /// `cost_over_intent`: against an intent in units of cost, the units admitted beyond the
    /// clients' entitlements (`cost.over_intent`); shown only there.
    CostOverIntent,
    /// `cost_needless`: against an intent in units of cost, the units of the needless
    /// rejections (`cost.needless`); shown only there.
    CostNeedless,
    /// `collateral`: needless rejections of legit clients on a key another client had used
    /// (`collateral_rejections`).
    Collateral,
    /// `legit_goodput`: the share of legit requests admitted, to four decimals.
    LegitGoodput,
    /// `abuse_leak`: the share of abusive requests admitted (`abusive_leakage`), `n/a` without
    /// abusive traffic.
    AbuseLeak,
    /// `legit_delay_p99`: the 99th percentile of the delay added to legit requests, `-` when
    /// none was delayed.
    LegitDelayP99,
    /// `delay_p99`: the 99th percentile of the delay added to any request, `-` when none was
    /// delayed.
    DelayP99,
    /// `state_per_key`: peak keyspace bytes per peak live key (`state_bytes_per_key`).
    StatePerKey,
    /// `peak_state`: peak bytes of the limiter's keyspace (`peak_state_bytes`).
    PeakState,
}

impl Column {
    /// The default table: what was served and refused, the harm to each side, judged against
    /// the intent. When long contender names make it wider than [`WIDTH`], the columns of
    /// `Column::DROPPED_FIRST` go first, in that order.
    pub const DEFAULT: [Column; 8] = [
        Column::Admitted,
        Column::Rejected,
        Column::Violations,
        Column::Needless,
        Column::Collateral,
        Column::LegitGoodput,
        Column::AbuseLeak,
        Column::LegitDelayP99,
    ];

    const DROPPED_FIRST: [Column; 5] = [
        Column::Admitted,
        Column::Rejected,
        Column::Collateral,
        Column::Needless,
        Column::LegitDelayP99,
    ];

    /// The same where the table shows costs: requests and cost side by side are what such a
    /// scenario is about, so the delays and collateral go first.
    const COSTED_DROPPED_FIRST: [Column; 6] = [
        Column::LegitDelayP99,
        Column::Collateral,
        Column::CostSettled,
        Column::Needless,
        Column::Rejected,
        Column::Admitted,
    ];

    /// The column's header, and its name in `--columns`.
    pub fn name(self) -> &'static str {
        match self {
            Column::Offered => "offered",
            Column::Admitted => "admitted",
            Column::Delayed => "delayed",
            Column::Rejected => "rejected",
            Column::CostAdmitted => "cost_admitted",
            Column::CostSettled => "cost_settled",
            Column::BurstFactor => "burst_factor",
            Column::Violations => "violations",
            Column::Needless => "needless",
            Column::CostOverIntent => "cost_over_intent",
            Column::CostNeedless => "cost_needless",
            Column::Collateral => "collateral",
            Column::LegitGoodput => "legit_goodput",
            Column::AbuseLeak => "abuse_leak",
            Column::LegitDelayP99 => "legit_delay_p99",
            Column::DelayP99 => "delay_p99",
            Column::StatePerKey => "state_per_key",
            Column::PeakState => "peak_state",
        }
    }

    /// The column's figure of `a`, as the table and the report's key figures show it.
    pub fn cell(self, a: &AlgorithmReport) -> String {
        let delay = |count: u64, ns: u64| {
            if count > 0 {
                format_duration(ns)
            } else {
                "-".to_string()
            }
        };
        match self {
            Column::Offered => a.offered.to_string(),
            Column::Admitted => a.admitted.to_string(),
            Column::Delayed => a.delayed.to_string(),
            Column::Rejected => a.rejected.to_string(),
            Column::CostAdmitted => a.cost.map_or("-".into(), |c| c.admitted.to_string()),
            Column::CostSettled => a
                .cost
                .and_then(|c| c.settled)
                .map_or("-".into(), |s| s.to_string()),
            Column::BurstFactor => format!("{:.2}", a.burst_factor),
            Column::Violations => a.policy_violations.to_string(),
            Column::Needless => a.needless_rejections.to_string(),
            Column::CostOverIntent => {
                (a.cost.and_then(|c| c.over_intent)).map_or("-".into(), |u| u.to_string())
            }
            Column::CostNeedless => {
                (a.cost.and_then(|c| c.needless)).map_or("-".into(), |u| u.to_string())
            }
            Column::Collateral => a.collateral_rejections.to_string(),
            Column::LegitGoodput => format!("{:.4}", a.roles.legit_goodput),
            Column::AbuseLeak => a
                .roles
                .abusive_leakage
                .map_or_else(|| "n/a".to_string(), |l| format!("{l:.4}")),
            Column::LegitDelayP99 => delay(a.roles.legit_delayed, a.roles.legit_delay_p99_ns),
            Column::DelayP99 => delay(a.delay.count, a.delay.p99_ns),
            Column::StatePerKey => human_bytes(a.state_bytes_per_key.round() as u64),
            Column::PeakState => human_bytes(a.peak_state_bytes),
        }
    }

    /// Whether the column has a figure for some row of `algorithms` (the cost columns only
    /// where requests weigh more than one, or responses settle less).
    pub fn applies(self, algorithms: &[AlgorithmReport]) -> bool {
        match self {
            // An intent in tokens over requests of cost 1 has cost counts only to carry its
            // judged figures.
            Column::CostAdmitted => algorithms.iter().any(|a| {
                a.cost
                    .is_some_and(|c| !a.intent_unit.is_tokens() || c.offered != a.offered)
            }),
            Column::CostSettled => algorithms
                .iter()
                .any(|a| a.cost.is_some_and(|c| c.settled.is_some())),
            Column::CostOverIntent | Column::CostNeedless => judged_in_cost(algorithms),
            _ => true,
        }
    }

    /// Whether the figure is judged against the yardstick (the intent).
    pub fn judged(self) -> bool {
        matches!(
            self,
            Column::BurstFactor
                | Column::Violations
                | Column::Needless
                | Column::CostOverIntent
                | Column::CostNeedless
                | Column::Collateral
        )
    }

    /// The style of the column's cell of `a` when the terminal takes colour: red for a figure
    /// that breaks the intent, yellow for one that hurts legit users.
    fn style(self, a: &AlgorithmReport) -> Style {
        match self {
            Column::BurstFactor if a.burst_factor > 1.0 => BAD,
            Column::Violations if a.policy_violations > 0 => BAD,
            Column::Needless if a.needless_rejections > 0 => WARN,
            Column::CostOverIntent if a.cost.and_then(|c| c.over_intent) > Some(0) => BAD,
            Column::CostNeedless if a.cost.and_then(|c| c.needless) > Some(0) => WARN,
            Column::Collateral if a.collateral_rejections > 0 => WARN,
            Column::LegitGoodput if a.roles.legit_goodput < 1.0 => WARN,
            Column::LegitDelayP99 if crate::report::ranking::severe_delay(a) => BAD,
            _ => Style::new(),
        }
    }
}

/// Which columns the table shows (`rlsim run --wide`, `--columns`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Columns {
    /// [`Column::DEFAULT`], fitted to [`WIDTH`].
    #[default]
    Default,
    /// Every column.
    Wide,
    /// These, in this order.
    Chosen(Vec<Column>),
}

impl Columns {
    /// The choice of `--wide` and `--columns a,b,c`; an unknown name is a usage error with a
    /// "did you mean".
    pub fn choose(wide: bool, names: &[String]) -> Result<Columns> {
        if wide {
            return Ok(Columns::Wide);
        }
        if names.is_empty() {
            return Ok(Columns::Default);
        }
        let known = || Column::VARIANTS.iter().map(|c| c.name());
        let mut chosen = Vec::with_capacity(names.len());
        for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
            let Some(c) = Column::VARIANTS.iter().copied().find(|c| c.name() == name) else {
                let message = crate::suggest::unknown("column", name, known());
                return Err(Error::Usage(format!("--columns: {message}")));
            };
            if !chosen.contains(&c) {
                chosen.push(c);
            }
        }
        Ok(Columns::Chosen(chosen))
    }

    /// The columns for `algorithms`: the default ones lose [`Column::DROPPED_FIRST`] until the
    /// table fits [`WIDTH`] (or none is left to drop).
    fn resolve(&self, algorithms: &[AlgorithmReport]) -> Vec<Column> {
        match self {
            Columns::Wide => {
                let mut columns = Column::VARIANTS.to_vec();
                columns.retain(|c| c.applies(algorithms));
                columns
            }
            Columns::Chosen(c) => c.clone(),
            Columns::Default => {
                // Where requests have costs, what was admitted in cost follows the requests.
                let mut columns = Column::DEFAULT.to_vec();
                let costs = [Column::CostAdmitted, Column::CostSettled];
                let at = columns
                    .iter()
                    .position(|c| *c == Column::Rejected)
                    .map_or(0, |i| i + 1);
                for (k, c) in costs
                    .into_iter()
                    .filter(|c| c.applies(algorithms))
                    .enumerate()
                {
                    columns.insert(at + k, c);
                }
                // Against an intent in cost, the judged figures in its unit.
                let in_cost = judged_in_cost(algorithms);
                let in_unit = |c: Column| match c {
                    Column::Violations if in_cost => Column::CostOverIntent,
                    Column::Needless if in_cost => Column::CostNeedless,
                    other => other,
                };
                for c in &mut columns {
                    *c = in_unit(*c);
                }
                let order: &[Column] = match columns.contains(&Column::CostAdmitted) {
                    true => &Column::COSTED_DROPPED_FIRST,
                    false => &Column::DROPPED_FIRST,
                };
                for &drop in order {
                    let drop = in_unit(drop);
                    if table_width(&columns, algorithms) <= WIDTH {
                        break;
                    }
                    columns.retain(|c| *c != drop);
                }
                columns
            }
        }
    }
}

/// Whether the rows were judged against an intent in units of cost.
fn judged_in_cost(algorithms: &[AlgorithmReport]) -> bool {
    algorithms
        .iter()
        .any(crate::report::ranking::judged_in_cost)
}

/// The width of a table of `columns` over `algorithms` (no timing column).
fn table_width(columns: &[Column], algorithms: &[AlgorithmReport]) -> usize {
    let first = algorithms
        .iter()
        .map(|a| a.algorithm.chars().count())
        .chain([NAME.len()])
        .max()
        .unwrap_or(0);
    columns.iter().fold(first, |w, c| {
        let cells = algorithms.iter().map(|a| c.cell(a).chars().count());
        w + 2 + cells.chain([c.name().len()]).max().unwrap_or(0)
    })
}

/// The first column's header.
const NAME: &str = "contender";
/// The last column with `--timing`: wall-clock, so never in the default table.
const TIMING: &str = "decisions/s";

/// The summary table (default columns, no colour), with its title line and its note. With
/// `timing` (the run's measured throughput, one per contender), a last `decisions/s` column.
pub fn table(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    timing: Option<&[Throughput]>,
) -> String {
    styled_table(scenario, algorithms, &Columns::Default, timing, false)
}

/// Red for a figure that breaks the intent, yellow for one that hurts legit users.
const BAD: Style = AnsiColor::Red.on_default().bold();
const WARN: Style = AnsiColor::Yellow.on_default();
const HEAD: Style = Style::new().bold();

/// [`table`] with a choice of columns, and ANSI colour when `colour` (padding is computed on
/// the plain text, so columns stay aligned).
pub fn styled_table(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    columns: &Columns,
    timing: Option<&[Throughput]>,
    colour: bool,
) -> String {
    let p = &scenario.policy;
    let mut out = String::new();
    let title = if colour { HEAD } else { Style::new() };
    let head = format!(
        "{} (seed {}, {} simulated): limit {} per {} per {}, burst {}",
        scenario.name,
        scenario.seed,
        format_duration(scenario.duration),
        p.limit,
        format_duration(p.window),
        p.key.describe("+"),
        p.burst
    );
    let head = wrap(&head, WIDTH, "  ");
    let _ = writeln!(out, "{title}{}{title:#}", head.trim_end());
    let chosen = columns.resolve(algorithms);
    let mut header: Vec<&str> = vec![NAME];
    header.extend(chosen.iter().map(|c| c.name()));
    let timed = timing.is_some();
    if timed {
        header.push(TIMING);
    }
    let rows: Vec<Vec<String>> = algorithms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut row = vec![a.algorithm.clone()];
            row.extend(chosen.iter().map(|c| c.cell(a)));
            if let Some(t) = timing {
                row.push(t.get(i).map_or_else(String::new, decision_rate));
            }
            row
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str], report: Option<&AlgorithmReport>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let style = match (colour, report) {
                (false, _) => Style::new(),
                (true, None) => HEAD,
                (true, Some(a)) => (i.checked_sub(1))
                    .and_then(|c| chosen.get(c))
                    .map_or(Style::new(), |c| c.style(a)),
            };
            if i == 0 {
                let _ = write!(s, "{style}{cell:<w$}{style:#}");
            } else {
                let _ = write!(s, "  {style}{cell:>w$}{style:#}");
            }
        }
        s.push('\n');
        s
    };
    out.push_str(&line(&header, None));
    for (row, report) in rows.iter().zip(algorithms) {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&cells, Some(report)));
    }
    out.push_str(&note(scenario, &chosen, algorithms));
    out.push_str(&token_note(algorithms));
    out.push_str(&quota_note(algorithms));
    if timing.is_some_and(|t| t.iter().any(|t| t.decisions_timed < WELL_MEASURED)) {
        out.push_str(
            "* decisions/s timed on fewer than 10^6 decisions: indicative only \
             (rlsim bench measures decisions on purpose)\n",
        );
    }
    out
}

/// The line under the table: what the judged columns are judged against, and where the rest
/// is.
fn note(scenario: &Scenario, chosen: &[Column], algorithms: &[AlgorithmReport]) -> String {
    let judged: Vec<&str> = chosen
        .iter()
        .filter(|c| c.judged())
        .map(|c| c.name())
        .collect();
    let mut text = String::new();
    if !judged.is_empty() {
        let (last, rest) = judged.split_last().expect("not empty");
        let list = match rest {
            [] => format!("{last} is"),
            _ => format!("{} and {last} are", rest.join(", ")),
        };
        text.push_str(&format!(
            "{list} judged against the intent: {}.",
            crate::report::yardstick(scenario)
        ));
    }
    let all = Column::VARIANTS.iter().filter(|c| c.applies(algorithms));
    let hidden = all.filter(|c| !chosen.contains(c)).count();
    if hidden > 0 {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("{hidden} more columns: --wide."));
    }
    if text.is_empty() {
        return text;
    }
    wrap(&text, WIDTH, "")
}

/// Under the table, for the rules counting an LLM's tokens: what the admitted requests used,
/// the worst window against the rule's budget, and the refusals an exact charge would have
/// spared. Empty without such rules.
fn token_note(algorithms: &[AlgorithmReport]) -> String {
    let mut text = String::new();
    for a in algorithms {
        for r in &a.rules {
            let Some(t) = &r.tokens else { continue };
            if text.is_empty() {
                text.push_str("tokens, per rule counting them (each against its own budget per window and key):\n");
            }
            let mut line = format!(
                "  {}/{} ({}, accounting {}, {} per {}): used {}; worst window {}",
                a.algorithm,
                r.name,
                t.unit,
                t.accounting,
                r.limit,
                crate::time::format_duration(r.window_ns),
                t.used,
                t.max_window_used,
            );
            if let Some(key) = &t.worst_key {
                let _ = write!(line, " on key {}", shown_key(key));
            }
            let _ = write!(line, ", {:.2}x the budget", t.overshoot);
            let refused: u64 = t.sources.iter().map(|s| s.refused).sum();
            if let (Some(spared), true) = (t.refused_for_reservations, refused > 0) {
                let _ = write!(
                    line,
                    "; {spared} of its {refused} refusals an exact charge would have admitted"
                );
            }
            if t.sources.len() > 1 {
                let each: Vec<String> = t
                    .sources
                    .iter()
                    .map(|s| format!("{} {:.2}x", s.source, s.overshoot))
                    .collect();
                let _ = write!(line, "; by source: {}", each.join(", "));
            }
            text.push_str(&wrap(&line, WIDTH, "    "));
        }
    }
    text
}

/// Run-outs a quota's line names.
const RUN_OUTS_SHOWN: usize = 3;

/// Under the table, for the calendar rules (quotas): how many of their keys' periods ran out,
/// and the run-outs that left a key refused longest. Empty without such rules.
fn quota_note(algorithms: &[AlgorithmReport]) -> String {
    let mut text = String::new();
    for a in algorithms {
        for r in &a.rules {
            let Some(q) = &r.quota else { continue };
            if text.is_empty() {
                text.push_str("quotas, per calendar rule (each key's requests per period against the rule's limit):\n");
            }
            let mut line = format!(
                "  {}/{} ({} per {}, per key {}): {} of {} key periods ran out ({} keys)",
                a.algorithm,
                r.name,
                r.limit,
                q.calendar,
                r.key.describe("+"),
                q.ran_out,
                q.key_periods,
                q.keys_ran_out,
            );
            let mut worst: Vec<_> = q.run_outs.iter().collect();
            worst.sort_by(|x, y| y.refused_share.total_cmp(&x.refused_share));
            let shown: Vec<String> = (worst.iter().take(RUN_OUTS_SHOWN))
                .map(|o| {
                    format!(
                        "{} on day {} of {} (refused {:.0}% of the period)",
                        shown_key(&o.key),
                        o.day,
                        o.period,
                        100.0 * o.refused_share
                    )
                })
                .collect();
            if !shown.is_empty() {
                let _ = write!(line, "; longest refused: {}", shown.join(", "));
            }
            text.push_str(&wrap(&line, WIDTH, "    "));
        }
    }
    text
}

/// Decisions timed below this mark their figure as indicative.
const WELL_MEASURED: u64 = 1_000_000;

/// The decisions/s cell: marked `*` when timed on too few decisions to mean much (a short
/// scenario, or a slow algorithm that ran out of its timing budget).
fn decision_rate(t: &Throughput) -> String {
    let rate = human_rate(t.decisions_per_sec);
    if t.decisions_timed < WELL_MEASURED {
        format!("{rate}*")
    } else {
        rate
    }
}

/// `text` wrapped at spaces into lines of at most `width` columns (a longer word stands
/// alone), continuation lines indented by `indent`; each line ends with a newline.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    // Whether `line` holds a word yet (beyond the indent).
    let mut started = false;
    for word in text.split(' ') {
        if started && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            started = false;
        }
        if started {
            line.push(' ');
        }
        line.push_str(word);
        started = true;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The most characters of a key name that reports and charts show.
pub const KEY_SHOWN: usize = 160;

/// A key name as people read it: whole up to [`KEY_SHOWN`] characters, else its start, `…` and
/// its length (a replayed URL can be megabytes; the data files keep every key whole).
pub fn shown_key(key: &str) -> std::borrow::Cow<'_, str> {
    match key.char_indices().nth(KEY_SHOWN) {
        None => key.into(),
        Some((end, _)) => format!("{}… ({} bytes)", &key[..end], key.len()).into(),
    }
}

/// A byte count for people, in binary units: `512 B`, `1.5 KiB`, up to GiB (one decimal).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A measured number for people: an integer exactly, any other to 4 significant digits (never
/// fewer than its integer digits), so a message reads `0.9057`, not `0.9056341937274494`. Files
/// and JSON keep every digit.
pub fn human_number(v: f64) -> String {
    human_number_against(v, None)
}

/// [`human_number`], with as many more digits as it takes for the shown value to compare with
/// `bound` as the exact one does: `admitted_share < 1.0 (measured 0.99996)`, not `(measured 1)`.
pub fn human_number_against(v: f64, bound: Option<f64>) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let integer_digits = if v.abs() >= 1.0 {
        v.abs().log10().floor() as usize + 1
    } else {
        1
    };
    for digits in integer_digits.max(4)..=17 {
        let shown: f64 = format!("{:.*e}", digits - 1, v)
            .parse()
            .expect("a formatted float parses");
        if bound.is_none_or(|b| shown.partial_cmp(&b) == v.partial_cmp(&b)) {
            return shown.to_string();
        }
    }
    v.to_string()
}

/// A rate per second for people, scaled with a `k`, `M` or `G` suffix (`12.3 k`, `1.50 G`);
/// below 1000, a whole number.
pub fn human_rate(per_sec: f64) -> String {
    match per_sec {
        r if r >= 1e9 => format!("{:.2} G", r / 1e9),
        r if r >= 1e6 => format!("{:.1} M", r / 1e6),
        r if r >= 1e3 => format!("{:.1} k", r / 1e3),
        r => format!("{r:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_columns_show_only_where_requests_have_costs() {
        use crate::metrics::CostCounts;
        let plain = AlgorithmReport {
            algorithm: "a".into(),
            ..AlgorithmReport::default()
        };
        let costly = |settled| AlgorithmReport {
            cost: Some(CostCounts {
                offered: 50,
                admitted: 30,
                rejected: 20,
                settled,
                ..CostCounts::default()
            }),
            ..plain.clone()
        };
        let shown = |rows: &[AlgorithmReport], c: &Columns| {
            c.resolve(rows)
                .into_iter()
                .map(Column::name)
                .collect::<Vec<_>>()
        };
        let rows = [plain.clone()];
        for c in [Columns::Default, Columns::Wide] {
            assert!(!shown(&rows, &c).iter().any(|n| n.starts_with("cost")));
        }
        let rows = [costly(None)];
        let default = shown(&rows, &Columns::Default);
        assert_eq!(default[..3], ["admitted", "rejected", "cost_admitted"]);
        assert!(!default.contains(&"cost_settled"));
        let rows = [costly(Some(12))];
        assert_eq!(shown(&rows, &Columns::Default)[3], "cost_settled");
        assert!(shown(&rows, &Columns::Wide).contains(&"cost_settled"));
        assert_eq!(
            (
                Column::CostAdmitted.cell(&rows[0]),
                Column::CostSettled.cell(&rows[0])
            ),
            ("30".to_string(), "12".to_string())
        );
        assert_eq!(Column::CostAdmitted.cell(&plain), "-");
    }

    #[test]
    fn units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_rate(12_345_678.0), "12.3 M");
        assert_eq!(human_rate(999.0), "999");
    }

    #[test]
    fn numbers_for_people_are_rounded_but_keep_their_side_of_a_bound() {
        assert_eq!(human_number(0.7734572878488863), "0.7735");
        assert_eq!(human_number(0.06476275773074834), "0.06476");
        assert_eq!(human_number(2.0), "2");
        assert_eq!(human_number(123456789.0), "123456789");
        assert_eq!(human_number(12345.678), "12346");
        assert_eq!(human_number(-1.23456), "-1.235");
        // 4 digits would show 1 against `>= 0.99` (still true) but also `< 1.0` (not shown true).
        assert_eq!(human_number_against(0.9999966685322886, Some(0.99)), "1");
        assert_eq!(
            human_number_against(0.9999966685322886, Some(1.0)),
            "0.999997"
        );
        assert_eq!(
            human_number_against(0.10983333333333334, Some(0.11)),
            "0.1098"
        );
        // Exactly on the bound stays on it; a hair off it never shows as it.
        assert_eq!(human_number_against(0.25, Some(0.25)), "0.25");
        assert_eq!(
            human_number_against(0.25000000000000006, Some(0.25)),
            "0.2500000000000001"
        );
    }

    #[test]
    fn decision_rates_timed_on_few_decisions_are_marked() {
        let t = |decisions_timed| Throughput {
            algorithm: "gcra".into(),
            decisions_timed,
            decision_elapsed_ns: 1,
            decisions_per_sec: 2_000_000.0,
            simulation_elapsed_ns: 1,
            simulated_requests_per_sec: 1.0,
        };
        assert_eq!(decision_rate(&t(999_999)), "2.0 M*");
        assert_eq!(decision_rate(&t(1_000_000)), "2.0 M");
    }

    #[test]
    fn a_plain_style_writes_nothing() {
        // Plain output depends on this: an empty style renders as no escape code at all.
        assert_eq!(format!("{}x{:#}", Style::new(), Style::new()), "x");
        assert_eq!(format!("{BAD}x{BAD:#}"), "\u{1b}[1m\u{1b}[31mx\u{1b}[0m");
    }
}
