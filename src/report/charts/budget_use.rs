//! Budgets used over time: one panel per rule of a kind (rules of the same name and budget in
//! several contenders share a panel, so contenders compare side by side), each line per time bucket
//! the most one rule key used of the rule's limit, as a share of it. The token budgets and
//! the calendar quotas are two such charts.

use super::{
    LegendEntry, Mark, Marks, REFERENCE, Timeline, caption_size, colour_among, draw_steps, notes,
    panel, panel_top, panels, reference_line, render, row_names, tie_note, ties,
};
use crate::error::Result;
use crate::metrics::{AlgorithmReport, RuleReport};
use crate::scenario::Scenario;

/// What one budget chart shows.
pub(super) struct Budget {
    /// The chart's file name under `charts/`.
    pub file: &'static str,
    /// The title, before the scenario's name.
    pub title: &'static str,
    /// A rule's per-bucket most, if the rule is of the chart's kind.
    pub series: fn(&RuleReport) -> Option<&[u64]>,
    /// A panel's caption, from its rule.
    pub caption: fn(&RuleReport) -> String,
    /// The reference line's legend (at 1).
    pub reference: &'static str,
    /// The y axis, given the bucket's length.
    pub y_desc: fn(&str) -> String,
    /// A point's tooltip noun: "used 0.42 of its {noun}".
    pub noun: &'static str,
    /// The chart's caption.
    pub chart_caption: &'static str,
}

impl Budget {
    /// Whether any contender has a rule of the chart's kind.
    pub fn applies(&self, algorithms: &[AlgorithmReport]) -> bool {
        algorithms
            .iter()
            .any(|a| a.rules.iter().any(|r| (self.series)(r).is_some()))
    }

    fn panels_of<'a>(
        &self,
        timeline: &Timeline,
        algorithms: &'a [AlgorithmReport],
    ) -> Vec<Panel<'a>> {
        let mut out: Vec<Panel> = Vec::new();
        for a in algorithms {
            for rule in &a.rules {
                let Some(busiest) = (self.series)(rule) else {
                    continue;
                };
                let limit = rule.limit as f64;
                let points =
                    timeline.series(|i| busiest.get(i).copied().unwrap_or(0) as f64 / limit);
                let line = (a.algorithm.as_str(), points);
                let caption = (self.caption)(rule);
                match (out.iter_mut()).find(|p| p.rule == rule.name && p.caption == caption) {
                    Some(p) => p.lines.push(line),
                    None => out.push(Panel {
                        rule: &rule.name,
                        caption,
                        lines: vec![line],
                    }),
                }
            }
        }
        out
    }

    /// The chart with its `lead`, or `None` when no contender has a rule of its kind.
    pub fn chart(
        &self,
        scenario: &Scenario,
        algorithms: &[AlgorithmReport],
        lead: Option<String>,
    ) -> Result<Option<super::Chart>> {
        if !self.applies(algorithms) {
            return Ok(None);
        }
        let file = self.file;
        let names = row_names(algorithms);
        let title = format!("{}: {}", self.title, scenario.name);
        let timeline = Timeline::new(scenario);
        let panels_data = self.panels_of(&timeline, algorithms);
        let mut legend: Vec<LegendEntry> = Vec::new();
        for p in &panels_data {
            for (name, _) in &p.lines {
                if !legend.iter().any(|e| e.label == *name) {
                    legend.push(LegendEntry::algorithm(&names, name, Mark::Line));
                }
            }
        }
        legend.push(LegendEntry::other(self.reference, REFERENCE, Mark::Line));
        let y_desc = (self.y_desc)(&crate::time::format_duration(scenario.bucket));
        let x_desc = format!("time ({})", timeline.unit_name);
        let x_max = timeline.x_max;
        let share = |v: &f64| format!("{v:.1}");
        let svg = render(file, &title, &legend, |area, marks: &mut Marks| {
            let areas = panels(file, area, &title, &x_desc, &y_desc, panels_data.len())?;
            let size = caption_size(panels_data.len());
            for (panel_area, p) in areas.iter().zip(&panels_data) {
                let y_max = p
                    .lines
                    .iter()
                    .flat_map(|(_, s)| s)
                    .map(|pt| pt.1)
                    .fold(1.0, f64::max);
                let mut chart = panel(
                    file,
                    panel_area,
                    &p.caption,
                    size,
                    0.0..x_max,
                    0.0..panel_top(y_max),
                    &share,
                    5,
                )?;
                let tied = ties(&p.lines.iter().map(|(n, s)| (*n, s)).collect::<Vec<_>>());
                let lines: Vec<String> = p
                    .lines
                    .iter()
                    .zip(&tied)
                    .filter_map(|((name, _), tie)| Some(format!("{name} {}", tie_note(tie, 2)?)))
                    .collect();
                notes(file, panel_area, &chart, &lines)?;
                reference_line(
                    file,
                    &mut chart,
                    panel_area,
                    marks,
                    self.reference,
                    1.0,
                    (0.0, x_max),
                )?;
                for (name, points) in &p.lines {
                    let rule = p.rule;
                    draw_steps(
                        file,
                        &mut chart,
                        panel_area,
                        marks,
                        name,
                        points,
                        timeline.width(),
                        colour_among(&names, name),
                        |x, y| {
                            format!(
                                "{name}, rule {rule}, {}: busiest key used {y:.2} of its {}",
                                timeline.at(x),
                                self.noun
                            )
                        },
                    )?;
                }
            }
            Ok(())
        })?;
        Ok(Some(super::Chart {
            file,
            lead,
            caption: self.chart_caption.to_string(),
            title,
            svg,
        }))
    }
}

/// One panel: a rule's name, and per contender that has it, its series.
struct Panel<'a> {
    rule: &'a str,
    caption: String,
    lines: Vec<(&'a str, Vec<(f64, f64)>)>,
}
