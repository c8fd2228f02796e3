//! The reports' "About the scenario" section: the scenario's own story (the comment block its
//! file opens with), its policy and its traffic in words.

use super::document::Block;
use crate::metrics::AlgorithmReport;
use crate::scenario::Scenario;
use crate::time::format_duration;
use crate::traffic::{Arrivals, Intensity, SourceSpec};

/// The section's blocks, after its heading.
pub fn blocks(scenario: &Scenario, algorithms: &[AlgorithmReport]) -> Vec<Block> {
    let mut b = introduction(&scenario.introduction);
    b.push(Block::Paragraph(policy_in_words(scenario, algorithms)));
    let skipped = crate::metrics::skipped_lines(algorithms);
    b.push(Block::List(
        false,
        scenario
            .traffic
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let skipped = skipped.get(i).copied().unwrap_or(0);
                source_in_words(s, scenario.duration, skipped)
            })
            .collect(),
    ));
    b
}

/// The leading comment block as blocks: paragraphs, `- ` lists (continuation lines joined) and
/// indented lines as preformatted text. A paragraph about `expect` itself (how the claims are
/// checked) is left out: the "Expectations" section shows the claims with their results.
pub fn introduction(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    for para in text.split("\n\n") {
        let para = para.trim_end();
        if para.trim().is_empty() || para.trim_start().starts_with("`expect`") {
            continue;
        }
        let mut prose: Vec<String> = Vec::new();
        let mut items: Vec<String> = Vec::new();
        let mut code: Vec<&str> = Vec::new();
        let flush = |blocks: &mut Vec<Block>,
                     prose: &mut Vec<String>,
                     items: &mut Vec<String>,
                     code: &mut Vec<&str>| {
            if !prose.is_empty() {
                blocks.push(Block::Paragraph(prose.join(" ")));
                prose.clear();
            }
            if !items.is_empty() {
                blocks.push(Block::List(false, std::mem::take(items)));
            }
            if !code.is_empty() {
                blocks.push(Block::Code(code.join("\n") + "\n"));
                code.clear();
            }
        };
        for line in para.lines() {
            if let Some(item) = line.strip_prefix("- ") {
                if !code.is_empty() || !prose.is_empty() {
                    flush(&mut blocks, &mut prose, &mut items, &mut code);
                }
                items.push(item.trim().to_string());
            } else if line.starts_with("  ") && !items.is_empty() && code.is_empty() {
                // A list item's continuation.
                let last = items.last_mut().expect("not empty");
                last.push(' ');
                last.push_str(line.trim());
            } else if line.starts_with("  ") {
                if !prose.is_empty() || !items.is_empty() {
                    flush(&mut blocks, &mut prose, &mut items, &mut code);
                }
                code.push(line);
            } else {
                if !items.is_empty() || !code.is_empty() {
                    flush(&mut blocks, &mut prose, &mut items, &mut code);
                }
                prose.push(line.trim().to_string());
            }
        }
        flush(&mut blocks, &mut prose, &mut items, &mut code);
    }
    blocks
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

/// The source `s` in words; `skipped`: the malformed lines it skipped.
fn source_in_words(s: &SourceSpec, duration: u64, skipped: u64) -> String {
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
            let skipped = if options.skip_bad_lines && options.reports_skipped() {
                let s = if skipped == 1 { "" } else { "s" };
                format!(", {skipped} malformed line{s} skipped")
            } else {
                String::new()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::markdown;

    #[test]
    fn the_comment_block_becomes_paragraphs_lists_and_code() {
        let text = "Boundary attack: the fixed window's blind spot.\n\nThe policy allows 100\nper minute.\n\n\
What to read:\n- fixed_window admits 200,\n  burst_factor 2.00.\n- sliding_window_log admits 100.\n\n\
Configurations:\n  express  rateLimit({ limit: 100 })\n  nginx    rate=100r/m\n\n\
`expect` pins these claims; `rlsim check scenarios/` fails if a change breaks one.";
        let md = markdown(&introduction(text));
        assert_eq!(
            md,
            "Boundary attack: the fixed window's blind spot.\n\n\
The policy allows 100 per minute.\n\n\
What to read:\n\n\
- fixed_window admits 200, burst_factor 2.00.\n- sliding_window_log admits 100.\n\n\
Configurations:\n\n\
```text\n  express  rateLimit({ limit: 100 })\n  nginx    rate=100r/m\n```\n"
        );
        assert!(introduction("").is_empty());
    }
}
