//! The replicates and the sensitivity pass for people: the terminal section printed after the
//! table, and the report's section as blocks (plain text: no Markdown in either).

use super::sensitivity::Sensitivity;
use super::stats::Estimate;
use super::summary::{ContenderFigures, Replicates};
use crate::report::document::Block;
use crate::time::{Nanos, format_duration};

/// The figures the terminal shows per contender (the files have all of [`super::HEADLINE`]).
const SHOWN: [(&str, &str); 4] = [
    ("legit_goodput", "legit goodput"),
    ("abusive_leakage", "abusive leakage"),
    ("policy_violations", "violations"),
    ("legit_delay_p99_ns", "legit p99 delay"),
];

/// A figure's value in its unit: a share as a percentage, a delay as a duration, a count with
/// one decimal below 100.
fn value(figure: &str, v: f64) -> String {
    if figure == "legit_goodput" || figure == "abusive_leakage" {
        format!("{:.1}%", 100.0 * v)
    } else if figure.ends_with("_ns") {
        format_duration(v.max(0.0).round() as Nanos)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `mean ±half` (the 95% interval's half-width), or the mean alone from one replicate.
fn short(figure: &str, e: Option<&Estimate>) -> String {
    match e {
        None => "n/a".into(),
        Some(e) => match e.high {
            Some(high) => format!(
                "{} ±{}",
                value(figure, e.mean),
                value(figure, high - e.mean)
            ),
            None => value(figure, e.mean),
        },
    }
}

/// `mean [low, high]`.
fn long(figure: &str, e: Option<&Estimate>) -> String {
    match e {
        None => "n/a".into(),
        Some(e) => match (e.low, e.high) {
            (Some(low), Some(high)) => format!(
                "{} [{}, {}]",
                value(figure, e.mean),
                value(figure, low),
                value(figure, high)
            ),
            _ => value(figure, e.mean),
        },
    }
}

fn estimate<'a>(c: &'a ContenderFigures, figure: &str) -> Option<&'a Estimate> {
    c.figures.get(figure).and_then(|e| e.as_ref())
}

/// The terminal section: a line per contender (most often first) and the recommendation's
/// stability (its warnings are the verdict's).
pub fn terminal(r: &Replicates) -> String {
    let mut out = format!(
        "\nAcross {} (replicate 1 is seed {}; mean ±half of the 95% interval):\n",
        if r.replicates == 1 {
            "1 seed".to_string()
        } else {
            format!("{} seeds", r.replicates)
        },
        r.seed
    );
    let width = r
        .contenders
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max(9);
    let mut header = format!("  {:<width$}  {:>7}", "contender", "first");
    for (_, label) in SHOWN {
        header.push_str(&format!("  {label:>20}"));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for c in r.by_first() {
        let mut line = format!(
            "  {:<width$}  {:>7}",
            c.name,
            format!("{}/{}", c.ranked_first, r.replicates)
        );
        for (figure, _) in SHOWN {
            line.push_str(&format!("  {:>20}", short(figure, estimate(c, figure))));
        }
        out.push_str(&line);
        out.push('\n');
    }
    let s = &r.recommendation;
    out.push_str(&format!(
        "Recommended: {} in {} of {} replicates ({:.0}%{}).\n",
        s.recommended,
        s.chosen,
        s.of,
        100.0 * s.share,
        if s.stable { ", stable" } else { ", not stable" }
    ));
    // Its warnings are the verdict's, printed with it above.
    out
}

/// The sensitivity pass's lines.
pub fn sensitivity_terminal(s: &Sensitivity) -> String {
    let seeds = match s.seeds.len() {
        1 => "the scenario's seed".to_string(),
        n => format!("the same {n} seeds"),
    };
    let mut out = format!(
        "\nSensitivity (each value under {seeds}; as written: {}, {} of {}):\n",
        s.baseline.recommended, s.baseline.chosen, s.baseline.of
    );
    for t in &s.inputs {
        let verdict = if t.flips {
            format!(
                "recommended {} instead of {}",
                t.recommended, s.baseline.recommended
            )
        } else {
            format!("still {}", t.recommended)
        };
        out.push_str(&format!(
            "  {}={}: {verdict} ({} of {})\n",
            t.set, t.value, t.chosen, t.of
        ));
    }
    match s.flips.len() {
        0 => out.push_str("No uncertain input flips the recommendation.\n"),
        n => out.push_str(&format!(
            "warning: {n} of {} uncertain values flip the recommendation\n",
            s.inputs.len()
        )),
    }
    out
}

/// The report's section: the figures with their intervals, the stability and the sensitivity
/// pass (their warnings are the verdict's, at the top of the report).
pub fn blocks(r: &Replicates, s: Option<&Sensitivity>) -> Vec<Block> {
    let mut out = vec![
        Block::Heading(2, "Across seeds".into()),
        Block::Paragraph(format!(
            "{} replicates, seeds derived from seed {} (docs/replicates.md); each figure is the mean over the replicates with its 95% Student t interval. {} is recommended in {} of {} ({:.0}%).",
            r.replicates,
            r.seed,
            r.recommendation.recommended,
            r.recommendation.chosen,
            r.recommendation.of,
            100.0 * r.recommendation.share
        )),
    ];
    let mut header = vec!["contender".to_string(), "ranked first".to_string()];
    header.extend(super::HEADLINE.iter().map(|f| f.to_string()));
    let rows = r
        .by_first()
        .iter()
        .map(|c| {
            let mut row = vec![
                c.name.clone(),
                format!("{} of {}", c.ranked_first, r.replicates),
            ];
            row.extend(super::HEADLINE.iter().map(|f| long(f, estimate(c, f))));
            row
        })
        .collect();
    out.push(Block::Table(header, rows));
    if let Some(s) = s {
        out.push(Block::Heading(3, "Sensitivity".into()));
        let lines = s
            .inputs
            .iter()
            .map(|t| {
                format!(
                    "{}={}: {} ({} of {}){}",
                    t.set,
                    t.value,
                    t.recommended,
                    t.chosen,
                    t.of,
                    if t.flips {
                        ": flips the recommendation"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        out.push(Block::List(false, lines));
    }
    out
}
