//! The charts and `sweep.md`/`sweep.html` of a whole sweep, from its rows.

use super::file::SweepFile;
use super::grid::{Row, json_value, numeric};
use crate::error::Result;
use crate::report::charts::{Chart, frontier, heatmap, sweep_line};
use crate::report::document::{Block, html, markdown};
use crate::scenario::goals::trim_number;
use serde_json::Value;

/// Contender names in row order, each once.
fn contenders(rows: &[Row]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.name()) {
            names.push(r.name());
        }
    }
    names
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The point other axes are held at in the line chart and heatmap: the recommended one, else 0.
fn anchor(file: &SweepFile) -> usize {
    file.recommendation
        .as_ref()
        .and_then(|r| r.recommended.as_ref())
        .map_or(0, |p| p.point)
}

fn held(file: &SweepFile, rows: &[Row], skip: &[usize]) -> String {
    let Some(row) = rows.iter().find(|r| r.point == anchor(file)) else {
        return String::new();
    };
    let parts: Vec<String> = file
        .axes
        .iter()
        .enumerate()
        .filter(|(i, _)| !skip.contains(i))
        .map(|(i, a)| format!("`{}` = {}", a.field, text(&row.values[i])))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(", with {}", parts.join(", "))
    }
}

/// Rows whose other axes match the anchor point's.
fn at_anchor<'a>(file: &SweepFile, rows: &'a [Row], free: &[usize]) -> Vec<&'a Row> {
    let Some(base) = rows.iter().find(|r| r.point == anchor(file)) else {
        return Vec::new();
    };
    // A contender with no row at the anchor's value of an axis has that axis collapsed (it does
    // not apply to it, see `sweep::run`): its row at the first value stands for the anchor's.
    let at_base: Vec<std::collections::HashSet<&str>> = (0..file.axes.len())
        .map(|i| {
            rows.iter()
                .filter(|r| r.values[i] == base.values[i])
                .map(Row::name)
                .collect()
        })
        .collect();
    let firsts: Vec<serde_json::Value> =
        file.axes.iter().map(|a| json_value(&a.values[0])).collect();
    let stands_for = |r: &Row, i: usize| {
        r.values[i] == base.values[i] || r.values[i] == firsts[i] && !at_base[i].contains(r.name())
    };
    rows.iter()
        .filter(|r| (0..file.axes.len()).all(|i| free.contains(&i) || stands_for(r, i)))
        .collect()
}

/// One contender's frontier points, one line per value of the axes after the first, each in
/// the order of the first axis (rows come in point order, the first axis slowest), each point
/// labelled with its values (`10, 30s`).
fn frontier_lines<'a>(rows: impl Iterator<Item = &'a Row>) -> Vec<Vec<frontier::Point>> {
    let mut lines: Vec<(&[Value], Vec<frontier::Point>)> = Vec::new();
    for r in rows {
        let (Some(leakage), Some(goodput)) =
            (r.figure("abusive_leakage"), r.figure("legit_goodput"))
        else {
            continue;
        };
        let point = frontier::Point {
            at: (leakage, goodput),
            label: r.values.iter().map(text).collect::<Vec<_>>().join(", "),
        };
        let rest = r.values.get(1..).unwrap_or(&[]);
        match lines.iter_mut().find(|(held, _)| *held == rest) {
            Some((_, points)) => points.push(point),
            None => lines.push((rest, vec![point])),
        }
    }
    lines.into_iter().map(|(_, points)| points).collect()
}

pub fn charts(file: &SweepFile, rows: &[Row]) -> Result<Vec<Chart>> {
    let names = contenders(rows);
    let series: Vec<frontier::Series> = names
        .iter()
        .map(|n| frontier::Series {
            name: n,
            lines: frontier_lines(rows.iter().filter(|r| r.name() == *n)),
        })
        .collect();
    let fields: Vec<&str> = file.axes.iter().map(|a| a.field.as_str()).collect();
    let mut out = vec![frontier::chart(
        &file.scenario,
        &fields.join(", "),
        &series,
    )?];
    // The line chart over the first numeric axis.
    if let Some(x) =
        (0..file.axes.len()).find(|&i| rows.iter().all(|r| numeric(&r.values[i]).is_some()))
    {
        let line_rows = at_anchor(file, rows, &[x]);
        let series: Vec<(&str, Vec<(f64, f64)>)> = names
            .iter()
            .map(|n| {
                let points = line_rows
                    .iter()
                    .filter(|r| r.name() == *n)
                    .filter_map(|r| Some((numeric(&r.values[x])?, r.figure(&file.chart)?)))
                    .collect();
                (*n, points)
            })
            .collect();
        out.push(sweep_line::chart(
            &file.axes[x].field,
            &file.chart,
            &series,
            &held(file, rows, &[x]),
        )?);
    }
    if file.axes.len() >= 2 {
        let contender = file
            .recommendation
            .as_ref()
            .and_then(|r| r.recommended.as_ref())
            .map_or(names.first().copied().unwrap_or(""), |p| p.name.as_str());
        let (x, y) = (&file.axes[0], &file.axes[1]);
        let cell_rows = at_anchor(file, rows, &[0, 1]);
        let cells = y
            .values
            .iter()
            .map(|yv| {
                let yv = json_value(yv);
                x.values
                    .iter()
                    .map(|xv| {
                        let xv = json_value(xv);
                        cell_rows
                            .iter()
                            .find(|r| {
                                r.name() == contender && r.values[0] == xv && r.values[1] == yv
                            })
                            .and_then(|r| r.figure(&file.chart))
                    })
                    .collect()
            })
            .collect();
        let label = |v: &String| text(&json_value(v));
        out.push(heatmap::chart(&heatmap::Heatmap {
            figure: &file.chart,
            contender,
            x_field: &x.field,
            x_labels: x.values.iter().map(label).collect(),
            y_field: &y.field,
            y_labels: y.values.iter().map(label).collect(),
            cells,
            note: &held(file, rows, &[0, 1]),
        })?);
    }
    Ok(out)
}

/// One line on the recommendation, for the reports and the terminal.
pub fn summary(file: &SweepFile, rows: &[Row]) -> String {
    let goals = file.goals();
    let Some(rec) = &file.recommendation else {
        return String::new();
    };
    if goals.is_empty() {
        return "No `[goals]` in the scenario: nothing to recommend against.".into();
    }
    let describe = |row: &Row| {
        let values: Vec<String> = file
            .axes
            .iter()
            .zip(&row.values)
            .map(|(a, v)| format!("`{}` = {}", a.field, text(v)))
            .collect();
        format!(
            "**{}** with {} (point {})",
            row.name(),
            values.join(", "),
            row.point
        )
    };
    let figures = |row: &Row| {
        goals
            .iter()
            .map(|g| {
                let v = row
                    .figure(&g.metric)
                    .map_or("none".into(), |v| trim_number((v * 1e4).round() / 1e4));
                format!("{} = {v}", g.metric)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(p) = &rec.recommended {
        let row = &rows[p.row];
        let mut out = format!(
            "Recommended: {}: {} of {} rows meet every goal, and this one is best on `{}` ({}).",
            describe(row),
            rec.meeting,
            rows.len(),
            rec.prefer.as_deref().unwrap_or(""),
            figures(row)
        );
        if !rec.edges.is_empty() {
            let ends: Vec<String> = rec
                .edges
                .iter()
                .map(|e| {
                    format!(
                        "`{}` = {} is the {} value swept",
                        e.field,
                        text(&e.value),
                        e.end
                    )
                })
                .collect();
            out.push_str(&format!(
                " Warning: it sits on the edge of the grid ({}): a better point may lie beyond; extend the range.",
                ends.join(", ")
            ));
        }
        return out;
    }
    let mut out = String::from("No point meets every goal.");
    for u in &rec.unmet {
        let g = super::recommend::GoalSpec {
            goal: u.goal.clone(),
            bound: u.bound,
        }
        .to_goal();
        match (&u.at, u.nearest) {
            (Some(at), Some(v)) => out.push_str(&format!(
                " No point meets `{}`: the nearest is {} at point {} ({}), {} from the bound.",
                g.describe(),
                crate::report::human_number_against(v, Some(u.bound)),
                at.point,
                at.name,
                crate::report::human_number((v - u.bound).abs())
            )),
            _ => out.push_str(&format!(" No point has a value for `{}`.", g.metric)),
        }
    }
    if let Some(p) = &rec.nearest {
        out.push_str(&format!(
            " Nearest: {}, missing {} ({}).",
            describe(&rows[p.row]),
            rec.nearest_misses.join(", "),
            figures(&rows[p.row])
        ));
    }
    out
}

/// [`summary`] for the terminal: plain text (no Markdown), with its newline.
pub fn summary_line(file: &SweepFile, rows: &[Row]) -> String {
    crate::report::document::plain(&summary(file, rows)) + "\n"
}

pub fn documents(file: &SweepFile, rows: &[Row], charts: &[Chart]) -> (String, String) {
    let title = format!("Sweep: {}", file.scenario);
    let mut blocks = vec![Block::Heading(1, title.clone())];
    let axes: Vec<String> = file
        .axes
        .iter()
        .map(|a| {
            let values: Vec<String> = a.values.iter().map(|v| text(&json_value(v))).collect();
            format!("`{}`: {}", a.field, values.join(", "))
        })
        .collect();
    blocks.push(Block::Paragraph(format!(
        "{} points × {} contenders = {} rows, seed {}. Every figure of every row is in `sweep.csv` and `sweep.json`.",
        file.points,
        contenders(rows).len(),
        rows.len(),
        file.seed
    )));
    blocks.push(Block::List(false, axes));
    blocks.push(Block::Heading(2, "Recommendation".into()));
    let goals = file.goals();
    if !goals.is_empty() {
        blocks.push(Block::List(
            false,
            goals
                .iter()
                .map(|g| format!("`{}`", g.describe()))
                .collect(),
        ));
    }
    blocks.push(Block::Paragraph(summary(file, rows)));
    let meeting: Vec<&Row> = rows
        .iter()
        .filter(|r| !goals.is_empty() && goals.iter().all(|g| g.met(r.figure(&g.metric))))
        .take(20)
        .collect();
    if !meeting.is_empty() {
        let mut header = vec!["contender".to_string(), "point".into()];
        header.extend(file.axes.iter().map(|a| a.field.clone()));
        header.extend(goals.iter().map(|g| g.metric.clone()));
        let table = meeting
            .iter()
            .map(|r| {
                let mut cells = vec![r.name().to_string(), r.point.to_string()];
                cells.extend(r.values.iter().map(text));
                cells.extend(goals.iter().map(|g| {
                    r.figure(&g.metric)
                        .map_or("none".into(), |v| format!("{v:.4}"))
                }));
                cells
            })
            .collect();
        blocks.push(Block::Paragraph(
            "Rows meeting every goal (the first 20, in point order):".into(),
        ));
        blocks.push(Block::Table(header, table));
    }
    blocks.push(Block::Heading(2, "Charts".into()));
    blocks.extend(charts.iter().cloned().map(Block::Figure));
    (markdown(&blocks), html(&title, &blocks))
}
