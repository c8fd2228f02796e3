//! `report.md` and `report.html`: the run written up for a design review, verdict first.
//!
//! Order: the verdict (the recommended contender and why), the key figures, the per-source
//! table, the headline figures (those the scenario's `expect` lines name), the expectation
//! results, the charts with what to see in each, the full ranking, the contenders' rules, the
//! scenario's own story (its leading comment block), policy and traffic, then what it takes to
//! reproduce the run.

use super::charts::Chart;
use super::document::{self, Block};
use super::provenance::Provenance;
use super::ranking;
use super::table::{human_bytes, key_figures};
use super::{story, verdict};
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;

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
    let ranked = ranking::rank(&scenario.goals, algorithms);
    b.push(Block::Heading(2, "Verdict".into()));
    b.push(verdict::verdict(scenario, &ranked));
    b.push(Block::Heading(2, "Key figures".into()));
    b.push(key_table(algorithms));
    b.push(Block::Paragraph(
        "Every figure is defined in rlsim's `docs/metrics.md`; `summary.json` holds them all. \
         `abuse leak` is n/a without abusive traffic; `shared-key collateral` counts legit \
         requests refused on a key another client shared (a NAT address, a shared API key)."
            .into(),
    ));
    b.push(Block::Heading(2, "Per source".into()));
    b.push(Block::Paragraph(
        "The share of each source's requests served (a request retried until admitted counts \
         once), with attempts per request and give-ups where clients retry."
            .into(),
    ));
    b.push(verdict::per_source(algorithms));
    if let Some(table) = verdict::headline(scenario, algorithms) {
        b.push(Block::Heading(2, "Headline figures".into()));
        b.push(Block::Paragraph(
            "The figures the scenario's `expect` lines are about.".into(),
        ));
        b.push(table);
    }
    b.push(Block::Heading(2, "Expectations".into()));
    let results = crate::scenario::outcome::evaluate(scenario, algorithms);
    b.extend(verdict::expectations(scenario, &results));
    b.push(Block::Heading(2, "Charts".into()));
    let mut links = Vec::with_capacity(charts.len());
    for chart in charts {
        links.push(format!("{}: `charts/{}`", chart.title, chart.file));
    }
    b.push(Block::List(false, links));
    for chart in charts {
        b.push(Block::Figure(chart.with_lead()));
    }
    b.push(Block::Heading(2, "Which algorithm".into()));
    b.extend(which_algorithm(scenario, &ranked));
    b.extend(super::contenders::blocks(scenario, algorithms));
    b.extend(super::deployments::blocks(algorithms));
    b.push(Block::Heading(2, "About the scenario".into()));
    b.extend(story::blocks(scenario, algorithms));
    b.push(Block::Heading(2, "Reproducibility".into()));
    b.push(Block::Code(provenance.lines()));
    b
}

fn key_table(algorithms: &[AlgorithmReport]) -> Block {
    let header = [
        "contender",
        "offered",
        "admitted",
        "delayed",
        "rejected",
        "burst factor",
        "violations",
        "needless",
        "legit goodput",
        "abuse leak",
        "shared-key collateral",
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
                    format_duration(a.delay.p99_ns)
                } else {
                    "-".into()
                },
            ]);
            row
        })
        .collect();
    Block::Table(header.iter().map(|h| h.to_string()).collect(), rows)
}

fn which_algorithm(scenario: &Scenario, ranked: &[ranking::Ranked]) -> Vec<Block> {
    let goals = &scenario.goals;
    let intro = if goals.is_empty() {
        "The scenario states no `[goals]`, so the contenders are ranked by the default order: \
         legit goodput, then policy violations, then delay."
            .to_string()
    } else {
        let list: Vec<String> = goals
            .iter()
            .map(|g| format!("`{}` ({})", g.describe(), g.name))
            .collect();
        format!(
            "Against the scenario's goals: {}. Contenders meeting every goal come first, then \
             by the number of goals missed, then by the default order.",
            list.join(", ")
        )
    };
    let items = ranked
        .iter()
        .map(|r| format!("**{}**: {}", r.report.algorithm, r.reason))
        .collect();
    vec![
        Block::Paragraph(intro),
        Block::List(true, items),
        Block::Paragraph(
            "The default order: higher legit goodput (differences under 0.05 percentage point \
             are ties), fewer policy violations, a shorter p99 delay of legitimate requests, \
             fewer needless rejections, fewer state bytes per key, and the scenario's order."
                .into(),
        ),
    ]
}
