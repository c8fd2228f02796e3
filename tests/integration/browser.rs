//! report.html in a real browser: every shipped scenario's report, loaded by headless Chromium,
//! renders with no console message, makes no network request, and holds every chart and table
//! the Markdown report has once its script has run.
//!
//! Chromium is driven from the command line: `--dump-dom` prints the DOM after load (and after
//! the inline script), `--enable-logging=stderr` prints every console message as a `CONSOLE`
//! line, and `--log-net-log` records every request the network stack saw, with a resolver and a
//! proxy that lead nowhere so nothing leaves the machine. The browser's own background requests
//! carry no page initiator (`not an origin`); a request from the page has one. A canary page
//! with a console error and an image URL proves both detectors fire.
//! Skipped (and listed at the end of `cargo test`) when Chromium is missing, unless
//! `RLSIM_REQUIRE_EXTERNAL=1`.

use rlsim::report::charts::Chart;
use rlsim::report::document::{self, Block};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The browser's command, if one is installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| crate::external::on_path(c))
}

/// What the browser saw of one page.
struct Load {
    dom: String,
    /// The `CONSOLE` lines of its log.
    console: Vec<String>,
    /// The URLs the page asked the network for.
    requests: Vec<String>,
}

fn load(browser: &str, page: &Path, work: &Path) -> Load {
    let net_log = work.join("net.json");
    let profile = work.join("profile");
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--log-net-log={}", net_log.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed on {}",
        page.display()
    );
    let log = String::from_utf8_lossy(&out.stderr);
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let net: Value = serde_json::from_slice(&std::fs::read(&net_log).expect("a net log"))
        .expect("the net log is JSON");
    let mut requests = Vec::new();
    for e in net["events"].as_array().into_iter().flatten() {
        let p = &e["params"];
        if let (Some(url), Some(initiator)) = (p["url"].as_str(), p["initiator"].as_str())
            && initiator != "not an origin"
        {
            requests.push(url.to_string());
        }
    }
    Load {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
        requests,
    }
}

#[test]
fn every_shipped_report_renders_offline_in_chromium_with_its_charts_and_tables() {
    let browser = chromium();
    if !crate::external::require_external(browser.is_some(), "chromium", "apt-get install chromium")
    {
        return;
    }
    let browser = browser.unwrap();
    let dir = tempfile::tempdir().unwrap();

    // The detectors work: a page that logs an error and asks for an image is caught twice.
    let canary = dir.path().join("canary.html");
    std::fs::write(
        &canary,
        "<!DOCTYPE html><html><body><img src=\"http://canary.invalid/x.png\">\
         <script>console.error('canary')</script></body></html>",
    )
    .unwrap();
    let seen = load(browser, &canary, &dir.path().join("canary"));
    assert!(
        seen.console.iter().any(|l| l.contains("canary")),
        "{:?}",
        seen.console
    );
    assert_eq!(seen.requests, ["http://canary.invalid/x.png"]);

    // The script against the charts' contract: series groups (legend entry included) get one
    // toggle button each, and a chart without groups gets none.
    let marked = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 10 10\">\
        <g class=\"series\" data-series=\"gcra\"><circle cx=\"1\" cy=\"1\" r=\"1\">\
        <title>gcra, 1s: 3 req/s</title></circle><text>gcra</text></g>\
        <g class=\"series\" data-series=\"token_bucket\"><rect width=\"1\" height=\"1\"/></g>\
        <g class=\"series\" data-series=\"gcra\"><text>legend: gcra</text></g></svg>";
    let chart = |file: &'static str, svg: &str| {
        Block::Figure(Chart {
            file,
            title: file.into(),
            caption: "c".into(),
            lead: None,
            svg: svg.into(),
        })
    };
    let page = document::html(
        "contract",
        &[
            chart("marked.svg", marked),
            chart("plain.svg", "<svg viewBox=\"0 0 1 1\"><rect/></svg>"),
        ],
    );
    let contract = dir.path().join("contract.html");
    std::fs::write(&contract, page).unwrap();
    let seen = load(browser, &contract, &dir.path().join("contract"));
    assert!(seen.console.is_empty(), "{:?}", seen.console);
    assert!(seen.dom.contains("data-rlsim=\"ready\""));
    let figure = |id: &str| {
        let at = seen.dom.find(&format!("<figure id=\"{id}\">")).unwrap();
        seen.dom[at..at + seen.dom[at..].find("</figure>").unwrap()].to_string()
    };
    let marked = figure("marked.svg");
    assert_eq!(marked.matches("<button").count(), 2, "{marked}");
    assert!(
        marked.contains("data-series=\"gcra\">gcra</button>"),
        "{marked}"
    );
    assert!(marked.contains("data-series=\"token_bucket\">token_bucket</button>"));
    assert!(!figure("plain.svg").contains("<button"));

    // A page's load mostly waits on the browser starting: three at a time.
    let runs = crate::shipped::runs();
    let pages: Vec<Load> = std::thread::scope(|s| {
        let loaders: Vec<_> = runs
            .chunks(runs.len().div_ceil(3))
            .map(|part| {
                let work = dir.path().join("b");
                s.spawn(move || {
                    part.iter()
                        .map(|run| {
                            load(browser, &run.out.join("report.html"), &work.join(&run.name))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        loaders
            .into_iter()
            .flat_map(|l| l.join().unwrap())
            .collect()
    });
    for (run, seen) in runs.iter().zip(&pages) {
        let name = &run.name;
        let md = std::fs::read_to_string(run.out.join("report.md")).unwrap();
        assert!(seen.console.is_empty(), "{name}: {:?}", seen.console);
        assert!(seen.requests.is_empty(), "{name}: {:?}", seen.requests);
        let dom = &seen.dom;
        assert!(
            dom.contains("data-rlsim=\"ready\""),
            "{name}: the script ran to its end"
        );
        // Every chart of the Markdown report is drawn, under its id, and every table is there.
        let charts: Vec<&str> = md
            .lines()
            .filter_map(|l| {
                l.strip_prefix("![")?
                    .split("](charts/")
                    .nth(1)?
                    .strip_suffix(')')
            })
            .collect();
        assert!(charts.len() >= 5, "{name}: {charts:?}");
        for file in &charts {
            let at = dom
                .find(&format!("<figure id=\"{file}\">"))
                .unwrap_or_else(|| panic!("{name}: no figure {file}"));
            let figure = &dom[at..at + dom[at..].find("</figure>").unwrap()];
            assert!(figure.contains("<svg"), "{name}: {file} has no SVG");
            // A chart that marks its series gets the toggles.
            if figure.contains("data-series=") {
                assert!(figure.contains("class=\"toggles\""), "{name}: {file}");
            }
        }
        assert_eq!(dom.matches("<svg").count(), charts.len(), "{name}");
        let tables = md.lines().filter(|l| l.starts_with("|---")).count();
        // Key figures and per source at least; headline figures with `expect` lines.
        assert!(tables >= 2, "{name}: {tables} tables");
        assert_eq!(dom.matches("<table>").count(), tables, "{name}");
        assert_eq!(
            dom.matches("<div class=\"table\">").count(),
            tables,
            "{name}: every table scrolls in its own box"
        );
    }
}
