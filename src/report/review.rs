//! `report.md` and `report.html`: the run written up for a design review, verdict first.
//!
//! Order: the contents, the verdict (the recommended contender, the runner-up, why, and what to
//! mind), the key figures with the share served per source, the charts with what to see in
//! each, the headline figures (those the scenario's `expect` lines name), the expectations (a
//! summary with the failures listed, every line folded below), the full ranking, the
//! contenders' rules, the scenario's own story (its leading comment block), policy and
//! traffic, then what it takes to reproduce the run.

use super::charts::Chart;
use super::document::{self, Block};
use super::provenance::Provenance;
use super::ranking;
use super::table::Column;
use super::verdict::Verdict;
use super::{findings, story, yardstick};
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;

/// Both reports: `(report.md, report.html)`.
pub fn reports(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    charts: &[Chart],
    provenance: &Provenance,
    observed: Vec<Block>,
    verdict: &Verdict,
) -> (String, String) {
    let mut body = blocks(scenario, algorithms, charts, provenance, verdict);
    // Before "Reproducibility", the last section.
    let at = body.len().saturating_sub(2);
    body.splice(at..at, observed);
    let title = format!("rlsim report: {}", scenario.name);
    let mut blocks = vec![Block::Heading(1, title.clone())];
    if !scenario.description.is_empty() {
        blocks.push(Block::Paragraph(scenario.description.clone()));
    }
    blocks.push(document::contents(&body, 2));
    blocks.extend(body);
    (document::markdown(&blocks), document::html(&title, &blocks))
}

fn blocks(
    scenario: &Scenario,
    algorithms: &[AlgorithmReport],
    charts: &[Chart],
    provenance: &Provenance,
    verdict: &Verdict,
) -> Vec<Block> {
    let mut b = vec![Block::Heading(2, "Verdict".into())];
    b.extend(verdict.blocks());
    b.push(Block::Heading(2, "Key figures".into()));
    b.push(key_table(algorithms));
    let offered = match algorithms {
        [a, rest @ ..] if rest.iter().all(|r| r.offered == a.offered) => {
            format!("Every contender was offered {} requests. ", a.offered)
        }
        _ => String::new(),
    };
    b.push(Block::Paragraph(format!(
        "{offered}Violations, burst factor, needless and shared-key collateral are judged against the \
         intent: {}. Every figure is defined in rlsim's `docs/metrics.md`; `summary.json` holds \
         them all. `abuse leak` is n/a without abusive traffic; `shared-key collateral` counts \
         legit requests refused on a key another client shared (a NAT address, a shared API \
         key).",
        yardstick(scenario)
    )));
    b.push(Block::Heading(3, "Per source".into()));
    b.push(Block::Paragraph(
        "The share of each source's requests served (a request retried until admitted counts \
         once), with attempts per request and give-ups where clients retry."
            .into(),
    ));
    b.push(findings::per_source(algorithms));
    b.push(Block::Heading(2, "Charts".into()));
    for chart in charts {
        b.push(Block::Figure(chart.with_lead()));
    }
    if let Some(table) = findings::headline(scenario, algorithms) {
        b.push(Block::Heading(2, "Headline figures".into()));
        b.push(Block::Paragraph(
            "The figures the scenario's `expect` lines are about.".into(),
        ));
        b.push(table);
    }
    b.push(Block::Heading(2, "Expectations".into()));
    let results = crate::scenario::outcome::evaluate(scenario, algorithms);
    b.extend(findings::expectations(scenario, &results));
    b.push(Block::Heading(2, "Which algorithm".into()));
    let ranked = ranking::rank(&scenario.goals, algorithms);
    b.extend(which_algorithm(scenario, &ranked));
    b.extend(super::contenders::blocks(scenario, algorithms));
    b.extend(super::deployments::blocks(algorithms));
    b.extend(super::backtest::blocks(scenario, algorithms));
    b.push(Block::Heading(2, "About the scenario".into()));
    b.extend(story::blocks(scenario, algorithms));
    b.push(Block::Heading(2, "Reproducibility".into()));
    b.push(Block::Code(provenance.lines()));
    b
}

/// The key figures: one row per contender, the terminal's figures with readable headers.
fn key_table(algorithms: &[AlgorithmReport]) -> Block {
    // Offered is the same for every contender unless clients retry: then it is a figure.
    let same = algorithms.windows(2).all(|w| w[0].offered == w[1].offered);
    let columns = [
        (Column::Offered, "offered"),
        (Column::Admitted, "admitted"),
        (Column::Delayed, "delayed"),
        (Column::Rejected, "rejected"),
        (Column::CostAdmitted, "cost admitted"),
        (Column::CostSettled, "cost settled"),
        (Column::BurstFactor, "burst factor"),
        (Column::Violations, "violations"),
        (Column::Needless, "needless"),
        (Column::CostOverIntent, "cost over intent"),
        (Column::CostNeedless, "cost needlessly refused"),
        (Column::Collateral, "shared-key collateral"),
        (Column::LegitGoodput, "legit goodput"),
        (Column::AbuseLeak, "abuse leak"),
        (Column::LegitDelayP99, "legit p99 delay"),
        (Column::StatePerKey, "state/key"),
    ];
    let columns: Vec<_> = columns[usize::from(same && !algorithms.is_empty())..]
        .iter()
        .filter(|(c, _)| c.applies(algorithms))
        .collect();
    let mut header = vec!["contender".to_string()];
    header.extend(columns.iter().map(|(_, h)| h.to_string()));
    let rows = algorithms
        .iter()
        .map(|a| {
            let mut row = vec![format!("`{}`", a.algorithm)];
            row.extend(columns.iter().map(|(c, _)| c.cell(a)));
            row
        })
        .collect();
    Block::Table(header, rows)
}

fn which_algorithm(scenario: &Scenario, ranked: &[ranking::Ranked]) -> Vec<Block> {
    let goals = &scenario.goals;
    let intro = if goals.is_empty() {
        "The scenario states no `[goals]`, so the contenders are ranked by the default order \
         below."
            .to_string()
    } else {
        let list: Vec<String> = goals
            .iter()
            .map(|g| format!("`{}` ({})", g.describe(), g.name))
            .collect();
        format!(
            "Against the scenario's goals: {}. Contenders meeting every goal come first, then \
             by the number of goals missed, then by the default order below.",
            list.join(", ")
        )
    };
    let items = ranked
        .iter()
        .map(|r| {
            let tied: Vec<&str> = (ranked.iter())
                .filter(|o| o.rank == r.rank && o.report.algorithm != r.report.algorithm)
                .map(|o| o.report.algorithm.as_str())
                .collect();
            let tie = if tied.is_empty() {
                String::new()
            } else {
                format!(" (rank {}, tied with {})", r.rank, tied.join(", "))
            };
            format!("**{}**{tie}: {}", r.report.algorithm, r.reason)
        })
        .collect();
    vec![
        Block::Paragraph(intro),
        Block::List(true, items),
        Block::Paragraph(format!(
            "The default order treats harm as harm: a contender that delays legitimate requests \
             by a p99 over 10s ranks after every contender that does not (clients give up \
             before that). Then: higher legit goodput (differences under 0.05 percentage point \
             are ties), fewer violations (admitted beyond the intent, {}), less abusive traffic \
             let through (0.05 point), a shorter p99 delay of legitimate requests, fewer \
             needless rejections, fewer state bytes per key, and the scenario's order. \
             Contenders equal on all of these share a rank.",
            super::yardstick(scenario)
        )),
    ]
}
