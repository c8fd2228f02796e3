//! Charts: every SVG is read back as XML and checked against the run's figures.

use crate::svg::{self, Svg};
use crate::util::{repo, rlsim};
use rlsim::report::charts::{self, OFFERED, REFERENCE, colour, hex};
use serde_json::Value;
use std::path::Path;

/// boundary.toml's charts; the last two are dashboard charts, drawn because it has an alert rule.
pub const CHARTS: [&str; 9] = [
    "admitted_rate.svg",
    "busiest_key.svg",
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
            let named = svg.texts.iter().any(|t| t.content.starts_with(name(a)));
            assert_eq!(named, expected, "{file}: legend entry for {}", name(a));
            // The interactive hooks: the row's group, with a hover title per point or bar.
            assert_eq!(
                !svg.titles_of(name(a)).is_empty(),
                expected,
                "{file}: hover titles of {}",
                name(a)
            );
        }
        // Text uses a generic family: no font file needed to draw or view it.
        let text = std::fs::read_to_string(dir.path().join("charts").join(file)).unwrap();
        assert!(!text.contains("font-family=\"") || text.contains("font-family=\"sans-serif\""));
        assert!(
            !text.contains("<image") && !text.contains("@font-face"),
            "{file}"
        );
        assert!(
            !text.contains("rlsim-mark-"),
            "{file}: every marker replaced"
        );
    }
    let units = [
        (
            "admitted_rate.svg",
            vec!["time (min)", "admitted requests/s (per 1s bucket)"],
        ),
        (
            "busiest_key.svg",
            vec![
                "most admitted by one key in 1m (per 1s bucket)",
                "policy limit (100 per 1m)",
            ],
        ),
        (
            "worst_moment.svg",
            vec![
                "time from the end of the row's worst window (min)",
                "admitted in the rolling window (requests)",
            ],
        ),
        (
            "accuracy.svg",
            vec!["policy violations", "needless rejections", "requests"],
        ),
        (
            "who_was_hurt.svg",
            vec![
                "shared-key collateral",
                "% of legit admitted",
                "% of abusive admitted",
                "% of legit rejected",
            ],
        ),
        ("memory.svg", vec!["per key (at peak)", "bytes (B)"]),
        (
            "delays.svg",
            vec![
                "percentile of the role's delayed requests",
                "delay (each panel on its own scale)",
                "legit clients",
                "p99.9",
            ],
        ),
    ];
    for (file, labels) in units {
        let svg = chart(dir.path(), file);
        for label in labels {
            assert!(svg.has_text(label), "{file} lacks the label `{label}`");
        }
    }
}

/// The numbers in hover titles that follow `": "`, e.g. `gcra, 1 min: 340 req/s` -> 340.
fn title_values(titles: &[&str]) -> Vec<f64> {
    titles
        .iter()
        .map(|t| {
            let tail = t.rsplit(": ").next().unwrap();
            tail.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// Every hover point of a group sits on a vertex of its line: the line is drawn where the
/// titles say.
fn points_on_line(svg: &Svg, series: &str) {
    for g in svg.groups_of(series) {
        let Some(line) = g.polylines.first() else {
            continue;
        };
        for &(x, y) in &g.circles {
            assert!(
                line.points
                    .iter()
                    .any(|p| (p.0 - x).abs() <= 1.0 && (p.1 - y).abs() <= 1.0),
                "{series}: hover point ({x}, {y}) off the line"
            );
        }
    }
}

#[test]
fn line_charts_draw_the_run_data_in_each_algorithms_colour() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let algorithms = summary(dir.path());

    // Chart 1: a panel per algorithm: its line, over the offered load, up to the run's end.
    let rate = chart(dir.path(), "admitted_rate.svg");
    let timeseries = std::fs::read_to_string(dir.path().join("timeseries.csv")).unwrap();
    let header: Vec<&str> = timeseries.lines().next().unwrap().split(',').collect();
    let col = |c: &str| header.iter().position(|h| *h == c).unwrap();
    let (admitted, start) = (col("admitted"), col("bucket_start_ns"));
    for a in &algorithms {
        let groups = rate.groups_of(name(a));
        // The panel's line and the legend mark, in the row's colour.
        assert_eq!(groups.len(), 2, "{}", name(a));
        assert_eq!(groups[0].polylines[0].stroke, hex(colour(name(a))));
        let most = timeseries
            .lines()
            .filter(|l| l.starts_with(&format!("{},", name(a))))
            .filter(|l| l.split(',').nth(start).unwrap().parse::<u64>().unwrap() < 180_000_000_000)
            .map(|l| l.split(',').nth(admitted).unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        // Buckets are 1 s wide: the peak bucket's count is its rate per second.
        let titles = rate.titles_of(name(a));
        let drawn = title_values(&titles).into_iter().fold(0.0, f64::max);
        assert_eq!(drawn, most, "{}", name(a));
        assert!(
            titles
                .iter()
                .all(|t| t.starts_with(&format!("{}, ", name(a))))
        );
        assert!(titles.iter().all(|t| t.ends_with(" req/s")));
        points_on_line(&rate, name(a));
    }
    // The offered load is drawn in every panel, and the x axis ends at the run's 3 minutes.
    assert_eq!(rate.lines_in(&hex(OFFERED)).len(), algorithms.len() + 1);
    let last_tick = rate
        .texts
        .iter()
        .filter(|t| t.anchor == "middle")
        .filter_map(|t| t.content.parse::<f64>().ok())
        .fold(0.0, f64::max);
    assert_eq!(last_tick, 3.0, "the time axis ends at 3 min");
    // Tied rows are called out: gcra's timeline is token_bucket's or an earlier one's.
    assert!(rate.texts.iter().any(|t| t.content.starts_with("gcra (= ")));

    // The busiest key: the limit line in every panel; fixed_window's key peaks at 200.
    let busiest = chart(dir.path(), "busiest_key.svg");
    assert_eq!(
        busiest.lines_in(&hex(REFERENCE)).len(),
        algorithms.len() + 1,
        "a limit line per panel, and the legend's"
    );
    for a in &algorithms {
        let titles = busiest.titles_of(name(a));
        assert!(titles[0].contains("busiest key held"), "{}", titles[0]);
        // Titles read `..., t: busiest key held N of 100 in its window`.
        let peak = titles
            .iter()
            .map(|t| {
                let held = t.split("held ").nth(1).unwrap();
                held.split(' ').next().unwrap().parse::<f64>().unwrap()
            })
            .fold(0.0, f64::max);
        assert_eq!(
            peak,
            a["max_window_admitted"].as_f64().unwrap(),
            "{}",
            name(a)
        );
        points_on_line(&busiest, name(a));
    }

    // Chart 2: the worst moment, a panel per row naming the key and the time; each line
    // peaks at its max_window_admitted; fixed_window's 2x is 200 against the limit at 100.
    let worst = chart(dir.path(), "worst_moment.svg");
    for a in &algorithms {
        let titles = worst.titles_of(name(a));
        let peak = titles
            .iter()
            .map(|t| {
                let n = t.rsplit(": ").next().unwrap();
                n.split(' ').next().unwrap().parse::<f64>().unwrap()
            })
            .fold(0.0, f64::max);
        assert_eq!(
            peak,
            a["max_window_admitted"].as_f64().unwrap(),
            "{}",
            name(a)
        );
        let key = a["worst_window_key"].as_str().unwrap();
        assert!(
            worst
                .texts
                .iter()
                .any(|t| t.content.starts_with(&format!("key {key} at "))),
            "{}: the key is named",
            name(a)
        );
        points_on_line(&worst, name(a));
    }
    assert!(worst.has_text("fixed_window (peak 200)"));
    assert_eq!(worst.lines_in(&hex(REFERENCE)).len(), algorithms.len() + 1);

    // Chart 6: dots, not lines, for the only shaper: five percentiles for legit clients.
    let delays = chart(dir.path(), "delays.svg");
    let leaky = algorithms
        .iter()
        .find(|a| name(a) == "leaky_bucket")
        .unwrap();
    let groups = delays.groups_of("leaky_bucket");
    assert!(
        groups.iter().all(|g| g.polylines.is_empty()),
        "no joining lines"
    );
    let titles = delays.titles_of("leaky_bucket");
    let legit: Vec<&&str> = titles
        .iter()
        .filter(|t| t.contains(", legit clients, "))
        .collect();
    assert_eq!(legit.len(), 5, "{titles:?}");
    let max = rlsim::time::format_duration(leaky["roles"]["legit_delay_max_ns"].as_u64().unwrap());
    assert!(
        legit[4].starts_with(&format!("leaky_bucket, legit clients, max: {max} (")),
        "{}",
        legit[4]
    );
    let abusive = titles
        .iter()
        .filter(|t| t.contains(", abusive clients, "))
        .count();
    let legit_count = leaky["roles"]["legit_delayed"].as_u64().unwrap();
    let all_count = leaky["delay"]["count"].as_u64().unwrap();
    assert_eq!(
        abusive > 0,
        all_count > legit_count,
        "an abusive panel iff attackers waited"
    );
}

#[test]
fn bar_charts_show_each_figure_per_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    run_boundary(dir.path());
    let algorithms = summary(dir.path());

    // Each row's bars carry `name, figure: value`; bar lengths are proportional to values.
    let accuracy = chart(dir.path(), "accuracy.svg");
    for (figure, field) in [
        ("policy violations", "policy_violations"),
        ("needless rejections", "needless_rejections"),
    ] {
        let mut bars = Vec::new();
        for a in &algorithms {
            let titles = accuracy.titles_of(name(a));
            let expected = format!("{}, {figure}: {}", name(a), a[field]);
            assert!(
                titles.contains(&expected.as_str()),
                "{expected} in {titles:?}"
            );
            let group = accuracy
                .groups_of(name(a))
                .into_iter()
                .find(|g| g.titles.contains(&expected))
                .unwrap();
            assert_eq!(group.rects[0].fill, hex(colour(name(a))));
            bars.push((a[field].as_f64().unwrap(), group.rects[0].width));
        }
        let (most, widest) = bars
            .iter()
            .copied()
            .fold((0.0f64, 0.0f64), |m, b| (m.0.max(b.0), m.1.max(b.1)));
        for (v, w) in bars {
            if most > 0.0 {
                near(w, widest * v / most, 1.0, figure);
            }
        }
    }
    // fixed_window's violations: 100.
    assert!(
        accuracy
            .titles_of("fixed_window")
            .contains(&"fixed_window, policy violations: 100")
    );

    let hurt = chart(dir.path(), "who_was_hurt.svg");
    for a in &algorithms {
        let goodput = format!(
            "{}, legit goodput: {:.1}%",
            name(a),
            100.0 * a["roles"]["legit_goodput"].as_f64().unwrap()
        );
        let leak = format!(
            "{}, abusive leakage: {:.1}%",
            name(a),
            100.0 * a["roles"]["abusive_leakage"].as_f64().unwrap()
        );
        let titles = hurt.titles_of(name(a));
        assert!(
            titles.contains(&goodput.as_str()),
            "{goodput} in {titles:?}"
        );
        assert!(titles.contains(&leak.as_str()), "{leak} in {titles:?}");
    }
    // One fixed 0-100% axis in every panel.
    for tick in ["0", "50", "100"] {
        assert_eq!(
            hurt.texts.iter().filter(|t| t.content == tick).count(),
            3,
            "tick {tick}"
        );
    }
    assert!(
        !hurt.has_text("n/a"),
        "boundary has legit and abusive traffic"
    );

    let memory = chart(dir.path(), "memory.svg");
    for a in &algorithms {
        let total = rlsim::report::human_bytes(a["peak_state_bytes"].as_u64().unwrap());
        let expected = format!("{}, total (peak): {total}", name(a));
        assert!(
            memory.titles_of(name(a)).contains(&expected.as_str()),
            "{expected}"
        );
    }
    // Binary units everywhere: no decimal kB/MB ticks.
    assert!(
        !memory
            .texts
            .iter()
            .any(|t| t.content.ends_with(" kB") || t.content.ends_with(" MB"))
    );
}

#[test]
fn who_was_hurt_reads_n_a_where_a_role_has_no_requests() {
    // retry_storm has no abusive traffic: leakage is not 0%, it is not applicable.
    let scenario = rlsim::Scenario::load(&repo().join("scenarios/retry_storm.toml")).unwrap();
    let reports = crate::util::run_scenario(&scenario);
    let charts = charts::all(&scenario, &reports).unwrap();
    let hurt = charts
        .iter()
        .find(|c| c.file == "who_was_hurt.svg")
        .unwrap();
    let svg = svg::parse(&hurt.svg);
    assert_eq!(
        svg.texts.iter().filter(|t| t.content == "n/a").count(),
        reports.len()
    );
    for a in &reports {
        let titles = svg.titles_of(&a.algorithm);
        assert!(
            titles.iter().all(|t| !t.contains("abusive leakage")),
            "{titles:?}"
        );
        assert_eq!(titles.len(), 2, "goodput and collateral bars only");
    }
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
    assert_eq!(charts.len(), 6, "no shaper, no delay chart");
    let rate = svg::parse(&charts[0].svg);
    for a in &reports {
        let group = rate.groups_of(&a.algorithm)[0];
        let line = &group.polylines[0];
        assert!(
            line.points.len() <= 2 * charts::PLOT_PIXELS,
            "{} points",
            line.points.len()
        );
        assert!(
            group.titles.len() <= 130,
            "{} hover points",
            group.titles.len()
        );
        let most = a.timeseries.iter().map(|b| b.admitted).max().unwrap() as f64 * 10.0;
        assert!(
            most >= 5000.0,
            "the 500-request burst is in one 100 ms bucket"
        );
        let titles: Vec<&str> = group.titles.iter().map(String::as_str).collect();
        let drawn = title_values(&titles).into_iter().fold(0.0, f64::max);
        assert_eq!(drawn, most, "{}", a.algorithm);
        points_on_line(&rate, &a.algorithm);
    }
}

#[test]
fn closed_loop_scenarios_get_the_retry_chart_by_source() {
    let path = repo().join("scenarios/retry_storm.toml");
    let scenario = rlsim::Scenario::load(&path).unwrap();
    let reports = crate::util::run_scenario(&scenario);
    let charts = charts::all(&scenario, &reports).unwrap();
    let chart = charts
        .iter()
        .find(|c| c.file == "retries.svg")
        .expect("a retry chart");
    let svg = svg::parse(&chart.svg);
    assert!(svg.has_text("retries/s (per 100ms bucket)"));
    assert!(svg.has_text("time (s)"));
    let naive = "naive-spike (retries at once)";
    let polite = "polite-spike (backs off)";
    for series in [naive, polite] {
        // A line in each algorithm's panel, and the legend's.
        assert_eq!(svg.groups_of(series).len(), reports.len() + 1, "{series}");
    }
    let sources: Vec<&str> = scenario.traffic.iter().map(|s| s.name.as_str()).collect();
    let at = |n: &str| sources.iter().position(|s| *s == n).unwrap();
    for a in &reports {
        // The per-source tally adds up to the run's retries, bucket by bucket.
        let total: u64 = a.retries_by_source.iter().flatten().sum();
        assert_eq!(total, a.retries, "{}", a.algorithm);
        for (i, b) in a.timeseries.iter().enumerate() {
            let by_source: u64 = a
                .retries_by_source
                .iter()
                .map(|s| s.get(i).copied().unwrap_or(0))
                .sum();
            assert_eq!(by_source, b.retries, "{} bucket {i}", a.algorithm);
        }
        assert_eq!(
            a.retries_by_source[at("naive-spike")].iter().sum::<u64>(),
            a.sources[at("naive-spike")].retries
        );
        // Hover titles name the row and the source; naive clients retry harder at their peak.
        let peak = |series: &str| {
            let titles: Vec<&str> = svg
                .titles_of(series)
                .into_iter()
                .filter(|t| t.starts_with(&format!("{}, ", a.algorithm)))
                .collect();
            assert!(!titles.is_empty());
            title_values(&titles).into_iter().fold(0.0, f64::max)
        };
        assert!(peak(naive) > peak(polite), "{}", a.algorithm);
    }
}

#[test]
fn the_busiest_key_and_per_role_delays_match_every_admission() {
    let window_count = |times: &[u64], t: u64, w: u64| {
        times.iter().filter(|&&b| b + w > t && b <= t).count() as u64
    };
    for file in ["boundary.toml", "retry_storm.toml"] {
        let scenario = rlsim::Scenario::load(&repo().join("scenarios").join(file)).unwrap();
        let (w, bucket) = (scenario.policy.window, scenario.bucket);
        let last = rlsim::metrics::final_bucket(scenario.duration, bucket);
        let options =
            rlsim::sim::RunOptions::new().with_sinks(|_, _| Ok(Some(Admissions::default())));
        let (run, sinks) = rlsim::sim::run_all(&scenario, options).unwrap();
        for (a, sink) in run.algorithms.iter().zip(sinks) {
            let mut by_key: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
            let mut by_client: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
            for (key, client, t) in sink.unwrap().0 {
                by_key.entry(key).or_default().push(t);
                by_client.entry(client).or_default().push(t);
            }
            let mut expected = vec![0u64; a.busiest_key.len()];
            for times in by_key.values_mut() {
                times.sort_unstable();
                for &t in times.iter() {
                    let i = ((t / bucket) as usize).min(last);
                    expected[i] = expected[i].max(window_count(times, t, w));
                }
            }
            assert_eq!(a.busiest_key, expected, "{file}: {}", a.algorithm);
            // The busiest key is per key; the worst window is the worst real client's (one
            // entitlement for all here).
            let worst_client = by_client
                .values_mut()
                .flat_map(|times| {
                    times.sort_unstable();
                    let times = &*times;
                    times.iter().map(move |&t| window_count(times, t, w))
                })
                .max()
                .unwrap_or(0);
            assert_eq!(
                worst_client, a.max_window_admitted,
                "{file}: {}",
                a.algorithm
            );
            // The per-role delays add up and agree with the summary's legit figures.
            assert_eq!(a.legit_delay.count + a.abusive_delay.count, a.delay.count);
            assert_eq!(a.legit_delay.count, a.roles.legit_delayed);
            assert_eq!(a.legit_delay.max_ns, a.roles.legit_delay_max_ns);
            assert_eq!(a.legit_delay.p99_ns, a.roles.legit_delay_p99_ns);
        }
    }
}

/// Every admission of every key, with its real client, at the time it reaches the backend (a
/// delayed one at its release), as a decision sink sees them.
#[derive(Default)]
struct Admissions(Vec<(String, String, u64)>);

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
        let client = keys.client_name(arrival.client).to_string();
        self.0
            .push((keys.name(arrival.key).to_string(), client, at));
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
        let options =
            rlsim::sim::RunOptions::new().with_sinks(|_, _| Ok(Some(Admissions::default())));
        let (run, sinks) = rlsim::sim::run_all(&scenario, options).unwrap();
        for (a, sink) in run.algorithms.iter().zip(sinks) {
            let end = a.worst_window_end_ns;
            let mut expected: Vec<u64> = sink
                .unwrap()
                .0
                .into_iter()
                .filter(|(key, client, t)| {
                    // The worst real client; named like its key while clients are their keys.
                    let worst = *client == a.worst_window_key || *key == a.worst_window_key;
                    worst && *t + 2 * window > end && *t <= end + window
                })
                .map(|(_, _, t)| t)
                .collect();
            expected.sort_unstable();
            assert_eq!(
                a.worst_window_admissions, expected,
                "{file}: {}",
                a.algorithm
            );
            let steps = rlsim::report::charts::worst::rolling_count(&expected, &[], end, window);
            let peak = steps.iter().map(|s| s.1).max().unwrap();
            assert_eq!(peak, a.max_window_admitted, "{file}: {}", a.algorithm);
        }
    }
}

/// Every text of every chart stays on its canvas (legends wrap and the canvas grows), and no
/// row's name is cut: libraries.toml has fifteen rows with names up to 36 characters, nine of
/// them tied, and nat.toml runs an alert rule (the dashboard charts too).
#[test]
fn no_chart_text_leaves_the_canvas_or_loses_a_letter() {
    for file in ["libraries.toml", "nat.toml"] {
        let scenario = rlsim::Scenario::load(&repo().join("scenarios").join(file)).unwrap();
        let (run, _) = rlsim::sim::run_all(&scenario, rlsim::sim::RunOptions::new()).unwrap();
        let charts = charts::all(&scenario, &run.algorithms).unwrap();
        for c in &charts {
            let svg = svg::parse(&c.svg);
            let off = svg.texts_off_canvas();
            assert!(off.is_empty(), "{file} {}: {off:?}", c.file);
            assert!(
                !svg.texts.iter().any(|t| t.content.contains('…')),
                "{file} {}: a cut text",
                c.file
            );
            // Every row is named in full somewhere in the chart's text.
            let text: String = svg
                .texts
                .iter()
                .map(|t| t.content.as_str())
                .collect::<Vec<_>>()
                .join("");
            for a in &run.algorithms {
                let joined: String = a.algorithm.split_whitespace().collect();
                assert!(
                    text.replace(' ', "").contains(&joined)
                        || c.file == "delays.svg" && a.delay.count == 0,
                    "{file} {}: {} not named in full",
                    c.file,
                    a.algorithm
                );
            }
        }
    }
}

/// The worst-moment legend of libraries.toml names every row tied with the first one, in full,
/// and the canvas is tall enough for it.
#[test]
fn tied_rows_are_all_named_in_the_legend() {
    let scenario = rlsim::Scenario::load(&repo().join("scenarios/libraries.toml")).unwrap();
    let (run, _) = rlsim::sim::run_all(&scenario, rlsim::sim::RunOptions::new()).unwrap();
    let charts = charts::all(&scenario, &run.algorithms).unwrap();
    let worst = charts
        .iter()
        .find(|c| c.file == "worst_moment.svg")
        .unwrap();
    let svg = svg::parse(&worst.svg);
    // The legend's lines, joined: each entry may wrap.
    let legend: String = svg
        .texts
        .iter()
        .filter(|t| t.x > f64::from(charts::SIZE.0 - 270))
        .map(|t| t.content.clone())
        .collect::<Vec<_>>()
        .join(" ");
    let tied: Vec<&str> = run
        .algorithms
        .iter()
        .skip(1)
        .filter(|a| {
            (
                &a.worst_window_key,
                a.worst_window_end_ns,
                &a.worst_window_admissions,
            ) == (
                &run.algorithms[0].worst_window_key,
                run.algorithms[0].worst_window_end_ns,
                &run.algorithms[0].worst_window_admissions,
            )
        })
        .map(|a| a.algorithm.as_str())
        .collect();
    assert!(tied.len() >= 2, "{tied:?}");
    let first = &run.algorithms[0].algorithm;
    let squeezed = legend.replace(' ', "");
    let expected = format!("{first}(={}", tied.join(","));
    assert!(squeezed.contains(&expected), "{expected} in {legend}");
    assert!(svg.height >= f64::from(charts::SIZE.1));
}
