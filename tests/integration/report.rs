//! Charts: every SVG is read back as XML and checked against the run's figures.

use crate::svg::{self, Svg, peak};
use crate::util::{repo, rlsim};
use rlsim::report::charts::{self, OFFERED, REFERENCE, colour, hex};
use serde_json::Value;
use std::path::Path;

/// boundary.toml's charts; the last two are dashboard charts, drawn because it has an alert rule.
pub const CHARTS: [&str; 8] = [
    "admitted_rate.svg",
    "worst_moment.svg",
    "accuracy.svg",
    "who_was_hurt.svg",
    "memory.svg",
    "delays.svg",
    "refused_share.svg",
    "top_refused_keys.svg",
];

pub fn run_boundary(dir: &Path) {
    rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .arg("--out")
        .arg(dir)
        .assert()
        .success();
}

fn chart(dir: &Path, file: &str) -> Svg {
    svg::parse(&std::fs::read_to_string(dir.join("charts").join(file)).unwrap())
}

fn summary(dir: &Path) -> Vec<Value> {
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    v["algorithms"].as_array().unwrap().clone()
}

fn name(a: &Value) -> &str {
    a["algorithm"].as_str().unwrap()
}

fn near(measured: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (measured - expected).abs() <= tolerance,
        "{what}: drawn at {measured}, expected {expected} (± {tolerance})"
    );
}

#[test]
fn one_boundary_run_draws_every_chart_with_titles_axes_and_legends() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let algorithms = summary(dir.path());
    for file in CHARTS {
        let svg = chart(dir.path(), file);
        assert!(!svg.title.is_empty(), "{file} has a <title>");
        assert!(svg.has_text(&svg.title), "{file} shows its title");
        assert!(svg.title.ends_with(": boundary attack"), "{}", svg.title);
        for a in &algorithms {
            // The delay chart shows the algorithms that delayed requests, and only those.
            let expected = file != "delays.svg" || a["delay"]["count"].as_u64().unwrap() > 0;
            let legend = svg.texts.iter().any(|t| t.content.starts_with(name(a)));
            assert_eq!(legend, expected, "{file}: legend entry for {}", name(a));
        }
        // Text uses a generic family: no font file needed to draw or view it.
        let text = std::fs::read_to_string(dir.path().join("charts").join(file)).unwrap();
        assert!(!text.contains("font-family=\"") || text.contains("font-family=\"sans-serif\""));
        assert!(
            !text.contains("<image") && !text.contains("@font-face"),
            "{file}"
        );
    }
    let units = [
        (
            "admitted_rate.svg",
            ["time (min)", "requests/s (per 1s bucket)"],
        ),
        (
            "worst_moment.svg",
            [
                "time from the end of the algorithm's worst window (min)",
                "admitted in the rolling window (requests)",
            ],
        ),
        ("accuracy.svg", ["policy violations", "requests"]),
        (
            "who_was_hurt.svg",
            [
                "NAT collateral (rejected)",
                "share of the requests concerned (%)",
            ],
        ),
        ("memory.svg", ["per key (at peak)", "bytes (log scale)"]),
        (
            "delays.svg",
            ["percentile of delayed requests", "delay (s)"],
        ),
    ];
    for (file, labels) in units {
        let svg = chart(dir.path(), file);
        for label in labels {
            assert!(svg.has_text(label), "{file} lacks the label `{label}`");
        }
    }
}

#[test]
fn line_charts_draw_the_run_data_in_each_algorithms_colour() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let algorithms = summary(dir.path());

    // Chart 1: one line per algorithm, plus the offered load and the per-key limit.
    let rate = chart(dir.path(), "admitted_rate.svg");
    let timeseries = std::fs::read_to_string(dir.path().join("timeseries.csv")).unwrap();
    let header = timeseries.lines().next().unwrap();
    let admitted = header.split(',').position(|c| c == "admitted").unwrap();
    for a in &algorithms {
        let lines = rate.lines_in(&hex(colour(name(a))));
        // The data line and the legend mark.
        assert_eq!(lines.len(), 2, "{}: {lines:?}", name(a));
        let most = timeseries
            .lines()
            .filter(|l| l.starts_with(&format!("{},", name(a))))
            .map(|l| l.split(',').nth(admitted).unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        let (_, y) = peak(&rate, lines[0]);
        // Buckets are 1 s wide: the peak bucket's count is its rate per second.
        near(y, most, rate.y_per_pixel(), name(a));
    }
    assert!(!rate.lines_in(&hex(OFFERED)).is_empty());
    let limit = &rate.lines_in(&hex(REFERENCE))[0];
    near(
        rate.y_value(limit.points[0].1),
        100.0 / 60.0,
        rate.y_per_pixel(),
        "the per-key limit line",
    );
    let (lo, hi) = rate.y_tick_range();
    assert_eq!(lo, 0.0);
    assert!(hi >= 100.0, "the axis holds the 100/s peak: {hi}");
    assert_eq!(rate.x_value(limit.points[1].0).round(), 3.0, "3 minutes");

    // Chart 2: the worst moment. Each line peaks at its max_window_admitted, at the worst
    // window's end (x = 0); fixed_window's 2x is 200 against the limit line at 100.
    let worst = chart(dir.path(), "worst_moment.svg");
    for a in &algorithms {
        let line = worst.lines_in(&hex(colour(name(a))))[0];
        let (x, y) = peak(&worst, line);
        let expected = a["max_window_admitted"].as_f64().unwrap();
        near(y, expected, worst.y_per_pixel(), name(a));
        if name(a) == "fixed_window" {
            assert_eq!(expected, 200.0);
            near(x, 0.0, worst.x_per_pixel(), "the worst window's end");
        }
    }
    let limit = &worst.lines_in(&hex(REFERENCE))[0];
    near(
        worst.y_value(limit.points[0].1),
        100.0,
        worst.y_per_pixel(),
        "limit",
    );
    assert!(worst.has_text("fixed_window (peak 200)"));

    // Chart 6: one line and five markers for the only shaper.
    let delays = chart(dir.path(), "delays.svg");
    let leaky = hex(colour("leaky_bucket"));
    assert_eq!(delays.circles.iter().filter(|c| **c == leaky).count(), 5);
    let a = algorithms
        .iter()
        .find(|a| name(a) == "leaky_bucket")
        .unwrap();
    let (_, top) = svg::top(delays.lines_in(&leaky)[0]);
    let y = delays.y_value(top);
    let max_s = a["delay"]["max_ns"].as_f64().unwrap() / 1e9;
    near(y, max_s, delays.y_per_pixel(), "the maximum delay");
}

/// The value labels of a bar chart, per algorithm colour, in group order.
fn bar_labels(svg: &Svg, dir: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("charts").join(file)).unwrap();
    assert!(text.contains("<rect"));
    svg.texts
        .iter()
        .filter(|t| {
            t.anchor != "end" && t.content.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .map(|t| t.content.clone())
        .collect()
}

#[test]
fn bar_charts_show_each_figure_per_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let algorithms = summary(dir.path());
    let n = algorithms.len();

    let accuracy = chart(dir.path(), "accuracy.svg");
    for a in &algorithms {
        let fill = hex(colour(name(a)));
        // Two bars (violations, needless) and the legend box.
        let bars = accuracy.rects.iter().filter(|r| r.fill == fill).count();
        assert_eq!(bars, 3, "{}", name(a));
    }
    let labels = bar_labels(&accuracy, dir.path(), "accuracy.svg");
    let expected: Vec<String> = ["policy_violations", "needless_rejections"]
        .iter()
        .flat_map(|m| algorithms.iter().map(move |a| a[*m].to_string()))
        .collect();
    let mut sorted = labels.clone();
    sorted.sort();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(sorted, expected_sorted);
    // fixed_window's violations bar is the tallest: it reaches 100 on the axis.
    let fw = hex(colour("fixed_window"));
    let bar = accuracy
        .rects
        .iter()
        .filter(|r| r.fill == fw)
        .max_by(|a, b| a.height.total_cmp(&b.height))
        .unwrap();
    near(
        accuracy.y_value(bar.y),
        100.0,
        accuracy.y_per_pixel(),
        "violations bar",
    );

    let hurt = chart(dir.path(), "who_was_hurt.svg");
    let labels = bar_labels(&hurt, dir.path(), "who_was_hurt.svg");
    assert_eq!(labels.len(), 3 * n);
    for a in &algorithms {
        let goodput = format!(
            "{:.1}%",
            100.0 * a["roles"]["legit_goodput"].as_f64().unwrap()
        );
        let leak = format!(
            "{:.1}%",
            100.0 * a["roles"]["abusive_leakage"].as_f64().unwrap_or(0.0)
        );
        assert!(
            labels.contains(&goodput) && labels.contains(&leak),
            "{}",
            name(a)
        );
    }
    assert!(labels.contains(&"100.0%".to_string()) && labels.contains(&"50.0%".to_string()));

    let memory = chart(dir.path(), "memory.svg");
    let labels = bar_labels(&memory, dir.path(), "memory.svg");
    for a in &algorithms {
        let total = rlsim::report::human_bytes(a["peak_state_bytes"].as_u64().unwrap());
        assert!(
            labels.contains(&total),
            "{}: {total} in {labels:?}",
            name(a)
        );
    }
    // Log ticks are powers of ten.
    assert!(memory.has_text("100 B") && memory.has_text("1 kB"));
}

#[test]
fn a_long_run_is_downsampled_and_keeps_its_peak() {
    // One hour in 100 ms buckets: 36,000 points for a ~600 pixel wide plot, and one burst.
    let toml = r#"
        name = "long"
        duration = "1h"
        algorithms = ["fixed_window", "gcra"]
        [output]
        bucket = "100ms"
        [policy]
        limit = 1000
        window = "1m"
        [[traffic]]
        name = "steady"
        kind = "constant"
        rate = "10/s"
        [[traffic]]
        name = "spike"
        kind = "bursts"
        count = 500
        every = "1h"
        ip = "198.51.100.1"
    "#;
    let scenario = rlsim::Scenario::parse(toml, Path::new("long.toml")).unwrap();
    let reports = crate::util::run_scenario(&scenario);
    let charts = charts::all(&scenario, &reports).unwrap();
    assert_eq!(charts.len(), 5, "no shaper, no delay chart");
    let rate = svg::parse(&charts[0].svg);
    for a in &reports {
        let line = rate.lines_in(&hex(colour(&a.algorithm)))[0];
        assert!(
            line.points.len() <= 2 * charts::PLOT_PIXELS,
            "{} points",
            line.points.len()
        );
        let most = a.timeseries.iter().map(|b| b.admitted).max().unwrap() as f64 * 10.0;
        assert!(
            most >= 5000.0,
            "the 500-request burst is in one 100 ms bucket"
        );
        near(peak(&rate, line).1, most, rate.y_per_pixel(), &a.algorithm);
    }
}

#[test]
fn closed_loop_scenarios_get_the_retry_chart() {
    let path = repo().join("scenarios/retry_storm.toml");
    let scenario = rlsim::Scenario::load(&path).unwrap();
    let reports = crate::util::run_scenario(&scenario);
    let charts = charts::all(&scenario, &reports).unwrap();
    let chart = charts
        .iter()
        .find(|c| c.file == "retries.svg")
        .expect("a retry chart");
    let svg = svg::parse(&chart.svg);
    assert!(svg.has_text("first tries: attempts/s (per 100ms bucket)"));
    assert!(svg.has_text("retries: attempts/s (per 100ms bucket)"));
    assert!(svg.has_text("time (s)"));
    for a in &reports {
        // A line in each panel, and the legend mark.
        let lines = svg.lines_in(&hex(colour(&a.algorithm)));
        assert_eq!(lines.len(), 3, "{}", a.algorithm);
        let retries: u64 = a.timeseries.iter().map(|b| b.retries).sum();
        assert!(retries > 0, "{} saw retries", a.algorithm);
        // The retry panel's line rises off its baseline: some retries are drawn.
        let baseline = lines[1].points.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(svg::top(lines[1]).1 < baseline, "{}", a.algorithm);
    }
}

/// Every admission of every key, at the time it reaches the backend (a delayed one at its
/// release), as a decision sink sees them.
#[derive(Default)]
struct Admissions(Vec<(String, u64)>);

impl rlsim::sim::DecisionSink for Admissions {
    fn record(
        &mut self,
        arrival: &rlsim::traffic::Arrival,
        decision: &rlsim::Decision,
        _: &rlsim::sim::Detail<'_>,
        keys: &rlsim::traffic::KeySpace,
    ) -> rlsim::Result<()> {
        let at = match decision.outcome {
            rlsim::Outcome::Allow => arrival.time,
            rlsim::Outcome::Delay(d) => arrival.time + d,
            rlsim::Outcome::Reject { .. } => return Ok(()),
        };
        self.0.push((keys.name(arrival.key).to_string(), at));
        Ok(())
    }
}

#[test]
fn the_worst_moment_data_is_every_admission_of_the_worst_key_around_its_window() {
    for file in [
        "boundary.toml",
        "burst.toml",
        "nat.toml",
        "retry_storm.toml",
    ] {
        let scenario = rlsim::Scenario::load(&repo().join("scenarios").join(file)).unwrap();
        let window = scenario.policy.window;
        let (run, sinks) =
            rlsim::sim::run(&scenario, |_, _| Ok(Some(Admissions::default())), None).unwrap();
        for (a, sink) in run.algorithms.iter().zip(sinks) {
            let end = a.worst_window_end_ns;
            let mut expected: Vec<u64> = sink
                .unwrap()
                .0
                .into_iter()
                .filter(|(key, t)| {
                    *key == a.worst_window_key && *t + 2 * window > end && *t <= end + window
                })
                .map(|(_, t)| t)
                .collect();
            expected.sort_unstable();
            assert_eq!(
                a.worst_window_admissions, expected,
                "{file}: {}",
                a.algorithm
            );
            let steps = rlsim::report::charts::worst::rolling_count(&expected, end, window);
            let peak = steps.iter().map(|s| s.1).max().unwrap();
            assert_eq!(peak, a.max_window_admitted, "{file}: {}", a.algorithm);
        }
    }
}
