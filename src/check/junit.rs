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

/// `s` with every character XML 1.0 forbids (control characters other than tab, newline and
/// carriage return; U+FFFE and U+FFFF) written as a visible `\u{..}` escape: no parser accepts
/// them even as character references, and a scenario name may hold one.
fn xml_safe(s: &str) -> std::borrow::Cow<'_, str> {
    let forbidden = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if !s.contains(forbidden) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if forbidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.into()
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
                ("name", xml_safe(name).as_ref()),
                ("tests", cases.len().to_string().as_str()),
                ("failures", failed(cases).to_string().as_str()),
                ("errors", "0"),
                ("skipped", "0"),
            ],
        )));
        for case in cases {
            let mut start = BytesStart::new("testcase").with_attributes([
                ("name", xml_safe(&case.name).as_ref()),
                ("classname", xml_safe(case.classname).as_ref()),
            ]);
            if let Some(file) = &case.file {
                start.push_attribute(("file", xml_safe(file).as_ref()));
            }
            match &case.failure {
                None => ev(Event::Empty(start)),
                Some(message) => {
                    let message = xml_safe(message);
                    let message = message.as_ref();
                    ev(Event::Start(start));
                    ev(Event::Start(BytesStart::new("failure").with_attributes([
                        ("message", message),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_characters_become_visible_escapes() {
        assert_eq!(xml_safe("plain <&> é"), "plain <&> é");
        assert_eq!(xml_safe("a\u{1}b\tc\u{FFFF}"), "a\\u{1}b\tc\\u{ffff}");
        let case = |name: &str| Case {
            name: name.to_string(),
            classname: "s\u{7}",
            file: Some("f\u{0}.toml".into()),
            failure: Some("bad\u{1b}[31m".into()),
        };
        let xml = write(&[("suite\u{8}".to_string(), vec![case("c\u{2}")])]);
        let text = String::from_utf8(xml).unwrap();
        assert!(!text.chars().any(|c| c < ' ' && c != '\n'), "{text}");
        let mut reader = quick_xml::Reader::from_str(&text);
        let mut names = Vec::new();
        loop {
            match reader.read_event().unwrap() {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) => {
                    for a in e.attributes() {
                        let a = a.unwrap();
                        if a.key.as_ref() == "name" {
                            let value: &str = &a.value;
                            let value = quick_xml::escape::unescape(value).unwrap();
                            names.push(value.into_owned());
                        }
                    }
                }
                _ => {}
            }
        }
        assert_eq!(names, ["rlsim check", "suite\\u{8}", "c\\u{2}"]);
    }
}
