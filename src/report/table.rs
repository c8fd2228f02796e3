//! The terminal summary: one row per algorithm.

use crate::metrics::{AlgorithmReport, Throughput};
use crate::scenario::Scenario;
use crate::time::format_duration;
use anstyle::{AnsiColor, Style};
use std::fmt::Write;

/// The columns; the last, `decisions/s`, is wall-clock and shown only when asked (`--timing`), so
/// the default table is byte-reproducible like every output file.
const HEADERS: [&str; 12] = [
    "algorithm",
    "offered",
    "admitted",
    "delayed",
    "rejected",
    "burst_factor",
    "violations",
    "needless",
    "legit_goodput",
    "abuse_leak",
    "peak state",
    "decisions/s",
];

/// The summary table, with a one-line header describing the scenario and policy. With `timing`
/// (the run's measured throughput, one per algorithm), a last `decisions/s` column.
pub fn table(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    timing: Option<&[Throughput]>,
) -> String {
    styled_table(scenario, algorithms, timing, false)
}

/// Red for a figure that breaks the policy, yellow for one that hurts legit users.
const BAD: Style = AnsiColor::Red.on_default().bold();
const WARN: Style = AnsiColor::Yellow.on_default();
const HEAD: Style = Style::new().bold();

/// The style of a cell, when the terminal takes colour: the header, and figures that are off.
fn cell_style(row: Option<&AlgorithmReport>, column: usize) -> Style {
    let Some(a) = row else {
        return HEAD;
    };
    match HEADERS[column] {
        "burst_factor" if a.burst_factor > 1.0 => BAD,
        "violations" if a.policy_violations > 0 => BAD,
        "needless" if a.needless_rejections > 0 => WARN,
        "legit_goodput" if a.roles.legit_goodput < 1.0 => WARN,
        _ => Style::new(),
    }
}

/// [`table`], with ANSI colour when `colour` (padding is computed on the plain text, so columns
/// stay aligned).
pub fn styled_table(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    timing: Option<&[Throughput]>,
    colour: bool,
) -> String {
    let p = &scenario.policy;
    let mut out = String::new();
    let title = if colour { HEAD } else { Style::new() };
    let _ = writeln!(
        out,
        "{title}{}{title:#} (seed {}, {} simulated): limit {} per {} per {}, burst {}",
        scenario.name,
        scenario.seed,
        format_duration(scenario.duration),
        p.limit,
        format_duration(p.window),
        p.key.describe("+"),
        p.burst
    );
    let columns = if timing.is_some() {
        HEADERS.len()
    } else {
        HEADERS.len() - 1
    };
    let rows: Vec<Vec<String>> = algorithms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let [o, ad, d, r, b, v, n, g, l] = key_figures(a);
            let mut row = vec![
                a.algorithm.clone(),
                o,
                ad,
                d,
                r,
                b,
                v,
                n,
                g,
                l,
                human_bytes(a.peak_state_bytes),
            ];
            if let Some(t) = timing.and_then(|t| t.get(i)) {
                row.push(decision_rate(t));
            }
            row.resize(columns, String::new());
            row
        })
        .collect();
    let mut widths = HEADERS.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &[&str], report: Option<&AlgorithmReport>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).take(columns).enumerate() {
            let style = if colour {
                cell_style(report, i)
            } else {
                Style::new()
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
    out.push_str(&line(&HEADERS, None));
    for (row, report) in rows.iter().zip(algorithms) {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&cells, Some(report)));
    }
    if timing.is_some_and(|t| t.iter().any(|t| t.decisions_timed < WELL_MEASURED)) {
        out.push_str(
            "* decisions/s timed on fewer than 10^6 decisions: indicative only \
             (`rlsim bench` measures decisions on purpose)\n",
        );
    }
    out
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

/// The figures both the terminal table and the report's key table show, formatted alike:
/// offered, admitted, delayed, rejected, burst factor, violations, needless rejections, legit
/// goodput and abusive leakage.
pub fn key_figures(a: &AlgorithmReport) -> [String; 9] {
    [
        a.offered.to_string(),
        a.admitted.to_string(),
        a.delayed.to_string(),
        a.rejected.to_string(),
        format!("{:.2}", a.burst_factor),
        a.policy_violations.to_string(),
        a.needless_rejections.to_string(),
        format!("{:.4}", a.roles.legit_goodput),
        a.roles
            .abusive_leakage
            .map_or_else(|| "n/a".to_string(), |l| format!("{l:.4}")),
    ]
}

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
