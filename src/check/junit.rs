//! JUnit XML, the test report format CI systems display: one `<testsuite>` per scenario, one
//! `<testcase>` per expectation per algorithm, and with a baseline one more suite whose cases are
//! the compared metrics.

use super::ScenarioResult;
use super::baseline::{Comparison, Verdict};
use super::output::{number, percent};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

/// A case: its name, class (the group CI shows it under), file, and failure message if failed.
struct Case<'a> {
    name: String,
    classname: &'a str,
    file: Option<String>,
    failure: Option<String>,
}

/// The JUnit document for a check's results.
pub fn junit(results: &[ScenarioResult], comparison: Option<&Comparison>) -> Vec<u8> {
    let mut suites: Vec<(String, Vec<Case>)> = results
        .iter()
        .map(|r| {
            let file = r.scenario.path.display().to_string();
            let cases = r
                .expectations
                .iter()
                .map(|e| Case {
                    name: e.expectation.clone(),
                    classname: &r.scenario.name,
                    file: Some(file.clone()),
                    failure: (!e.passed).then(|| {
                        format!(
                            "measured {}, expected {}",
                            number(e.measured),
                            e.expectation
                        )
                    }),
                })
                .collect();
            (r.scenario.name.clone(), cases)
        })
        .collect();
    if let Some(c) = comparison {
        let cases = c
            .rows
            .iter()
            .map(|row| Case {
                name: format!("{} {} {}", row.scenario, row.algorithm, row.metric),
                classname: "baseline",
                file: None,
                failure: (row.verdict == Verdict::Regressed).then(|| {
                    format!(
                        "{} went from {} to {} ({}), beyond the tolerance of {}",
                        row.metric,
                        row.baseline,
                        row.current,
                        percent(row.change),
                        row.tolerance
                    )
                }),
            })
            .collect();
        suites.push(("baseline".to_string(), cases));
    }
    write(&suites)
}

fn write(suites: &[(String, Vec<Case>)]) -> Vec<u8> {
    let failed = |cases: &[Case]| cases.iter().filter(|c| c.failure.is_some()).count();
    let total: usize = suites.iter().map(|(_, c)| c.len()).sum();
    let failures: usize = suites.iter().map(|(_, c)| failed(c)).sum();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let mut ev = |e: Event| w.write_event(e).expect("writing to memory cannot fail");
    ev(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    ev(Event::Start(BytesStart::new("testsuites").with_attributes(
        [
            ("name", "rlsim check"),
            ("tests", total.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
            ("errors", "0"),
        ],
    )));
    for (name, cases) in suites {
        ev(Event::Start(BytesStart::new("testsuite").with_attributes(
            [
                ("name", name.as_str()),
                ("tests", cases.len().to_string().as_str()),
                ("failures", failed(cases).to_string().as_str()),
                ("errors", "0"),
                ("skipped", "0"),
            ],
        )));
        for case in cases {
            let mut start = BytesStart::new("testcase")
                .with_attributes([("name", case.name.as_str()), ("classname", case.classname)]);
            if let Some(file) = &case.file {
                start.push_attribute(("file", file.as_str()));
            }
            match &case.failure {
                None => ev(Event::Empty(start)),
                Some(message) => {
                    ev(Event::Start(start));
                    ev(Event::Start(BytesStart::new("failure").with_attributes([
                        ("message", message.as_str()),
                        ("type", "rlsim"),
                    ])));
                    ev(Event::Text(BytesText::new(message)));
                    ev(Event::End(BytesEnd::new("failure")));
                    ev(Event::End(BytesEnd::new("testcase")));
                }
            }
        }
        ev(Event::End(BytesEnd::new("testsuite")));
    }
    ev(Event::End(BytesEnd::new("testsuites")));
    let mut out = w.into_inner();
    out.push(b'\n');
    out
}
