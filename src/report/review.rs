//! `report.md` and `report.html`: the run written up for a design review. The scenario and
//! policy in words, the key figures, the charts, the algorithms ranked against the scenario's
//! goals, and what it takes to reproduce it.

use super::charts::Chart;
use super::document::{self, Block};
use super::provenance::Provenance;
use super::ranking;
use super::table::{human_bytes, key_figures};
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::{NANOS_PER_SEC, format_duration};
use crate::traffic::{Arrivals, Intensity, SourceSpec};

/// Both reports: `(report.md, report.html)`.
pub fn reports(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    charts: &[Chart],
    provenance: &Provenance,
    observed: Vec<Block>,
) -> (String, String) {
    let mut blocks = blocks(scenario, algorithms, charts, provenance);
    // Before "Reproducibility", the last section.
    let at = blocks.len().saturating_sub(2);
    blocks.splice(at..at, observed);
    let title = format!("rlsim report: {}", scenario.name);
    (document::markdown(&blocks), document::html(&title, &blocks))
}

fn blocks(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    charts: &[Chart],
    provenance: &Provenance,
) -> Vec<Block> {
    let mut b = vec![Block::Heading(
        1,
        format!("rlsim report: {}", scenario.name),
    )];
    if !scenario.description.is_empty() {
        b.push(Block::Paragraph(scenario.description.clone()));
    }
    b.push(Block::Heading(2, "Scenario and policy".into()));
    b.push(Block::Paragraph(policy_in_words(scenario, algorithms)));
    b.push(Block::List(
        false,
        scenario
            .traffic
            .iter()
            .map(|s| source_in_words(s, scenario.duration))
            .collect(),
    ));
    b.push(Block::Heading(2, "Key figures".into()));
    b.push(key_table(algorithms));
    b.push(Block::Paragraph(
        "Every figure is defined in rlsim's `docs/metrics.md`; `summary.json` holds them all."
            .into(),
    ));
    b.extend(super::contenders::blocks(scenario, algorithms));
    b.extend(super::deployments::blocks(algorithms));
    b.push(Block::Heading(2, "Charts".into()));
    let mut links = Vec::with_capacity(charts.len());
    for chart in charts {
        links.push(format!("{}: `charts/{}`", chart.title, chart.file));
    }
    b.push(Block::List(false, links));
    for chart in charts {
        b.push(Block::Figure(chart.clone()));
    }
    b.push(Block::Heading(2, "Which algorithm".into()));
    b.extend(which_algorithm(scenario, algorithms));
    b.push(Block::Heading(2, "Reproducibility".into()));
    b.push(Block::Code(provenance.lines()));
    b
}

fn policy_in_words(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> String {
    let p = &scenario.policy;
    let names: Vec<String> = algorithms
        .iter()
        .map(|a| format!("`{}`", a.algorithm))
        .collect();
    format!(
        "The policy allows at most **{} requests per {} per {}** (rolling window), with a burst \
         allowance of {} for the algorithms that have one. The run simulates {} of traffic \
         (seed {}) through {} algorithms: {}. Traffic:",
        p.limit,
        format_duration(p.window),
        p.key.describe(" + "),
        p.burst,
        format_duration(scenario.duration),
        scenario.seed,
        algorithms.len(),
        names.join(", ")
    )
}

fn source_in_words(s: &SourceSpec, duration: u64) -> String {
    let clients = s.population.clients;
    let who = if clients == 1 {
        "one client".to_string()
    } else {
        format!("{clients} clients, each")
    };
    let what = match &s.arrivals {
        Arrivals::Constant(rate) => format!("{who} sending at a constant {rate}"),
        Arrivals::Poisson(Intensity::Flat(rate)) => {
            format!("{who} sending as a Poisson process at {rate}")
        }
        Arrivals::Poisson(_) => format!(
            "{who} sending as a Poisson process with a time-varying rate (`{}`)",
            s.kind
        ),
        Arrivals::Bursts {
            count,
            every,
            spread,
        } => format!(
            "{who} sending {count} requests every {} (spread over {})",
            format_duration(*every),
            format_duration(*spread)
        ),
        Arrivals::Boundary {
            count,
            at,
            lead,
            every,
            ..
        } => format!(
            "{who} sending {count} requests {} before the window boundary at {} and \
             {count} at it{}",
            format_duration(*lead),
            format_duration(*at),
            every.map_or(String::new(), |e| format!(
                ", again every {}",
                format_duration(e)
            ))
        ),
        Arrivals::Replay { path, options } => {
            let part = match &options.part {
                Some(p) if !p.source.is_empty() => {
                    format!(" (its records of source `{}`)", p.source)
                }
                Some(p) => format!(" (its {} requests)", p.role.name()),
                None => String::new(),
            };
            let skipped = match options.skipped_lines() {
                Some(n) if options.skip_bad_lines => {
                    format!(
                        ", {n} malformed line{} skipped",
                        if n == 1 { "" } else { "s" }
                    )
                }
                _ => String::new(),
            };
            format!(
                "recorded traffic replayed from `{}`{part}{skipped}",
                path.display()
            )
        }
    };
    let span = if s.start > 0 || s.stop < duration {
        format!(
            ", from {} to {}",
            format_duration(s.start),
            format_duration(s.stop)
        )
    } else {
        String::new()
    };
    format!("**{}** ({}): {what}{span}.", s.name, s.role.name())
}

fn key_table(algorithms: &[AlgorithmReport]) -> Block {
    let header = [
        "algorithm",
        "offered",
        "admitted",
        "delayed",
        "rejected",
        "burst factor",
        "violations",
        "needless",
        "legit goodput",
        "abuse leak",
        "NAT collateral",
        "state/key",
        "peak state",
        "delay p99",
    ];
    let rows = algorithms
        .iter()
        .map(|a| {
            let mut row = vec![format!("`{}`", a.algorithm)];
            row.extend(key_figures(a));
            row.extend([
                a.collateral_rejections.to_string(),
                human_bytes(a.state_bytes_per_key.round() as u64),
                human_bytes(a.peak_state_bytes),
                if a.delay.count > 0 {
                    format!("{:.3} s", a.delay.p99_ns as f64 / NANOS_PER_SEC as f64)
                } else {
                    "-".into()
                },
            ]);
            row
        })
        .collect();
    Block::Table(header.iter().map(|h| h.to_string()).collect(), rows)
}

fn which_algorithm(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<Block> {
    let goals = &scenario.goals;
    let intro = if goals.is_empty() {
        "The scenario states no `[goals]`, so the algorithms are ranked by the tie-break order \
         alone."
            .to_string()
    } else {
        let list: Vec<String> = goals
            .iter()
            .map(|g| format!("`{}` ({})", g.describe(), g.name))
            .collect();
        format!(
            "Against the scenario's goals: {}. Algorithms meeting every goal come first, then \
             by the number of goals missed.",
            list.join(", ")
        )
    };
    let ranked = ranking::rank(goals, algorithms);
    let items = ranked
        .iter()
        .map(|r| format!("**{}**: {}", r.report.algorithm, r.reason))
        .collect();
    vec![
        Block::Paragraph(intro),
        Block::List(true, items),
        Block::Paragraph(
            "Ties are broken by fewer policy violations, then higher legit goodput, fewer \
             needless rejections, fewer state bytes per key, and the scenario's order."
                .into(),
        ),
    ]
}
