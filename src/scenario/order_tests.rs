//! A scenario with several mistakes reports every one it can find, in file order, each with
//! its file, line and field (issue: errors came out in the validator's order, not the file's).

use super::model::scenario::Scenario;

/// The `(line, field)` of each error `text` gives, in the order they are reported.
fn reported(text: &str) -> Vec<(usize, String)> {
    let e = Scenario::parse(text, "bad.toml".as_ref()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    e.to_string()
        .lines()
        .map(|l| {
            let l = l.strip_prefix("error: ").unwrap_or(l);
            let rest = l.strip_prefix("bad.toml:").unwrap_or_else(|| panic!("{l}"));
            let line: usize = rest.split(':').next().unwrap().parse().unwrap();
            let field = l
                .split('`')
                .nth(1)
                .unwrap_or_else(|| panic!("{l}"))
                .to_string();
            (line, field)
        })
        .collect()
}

fn lines(text: &str) -> Vec<usize> {
    reported(text).into_iter().map(|(l, _)| l).collect()
}

const TRAFFIC: &str = "[[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n";

#[test]
fn traffic_before_the_policy_reports_the_traffic_first() {
    let text = "name = \"x\"\nduration = \"1m\"\n\
                [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"fast\"\n\
                [policy]\nlimit = 0\nwindow = \"1s\"\n";
    assert_eq!(
        reported(text),
        [(6, "traffic[0].rate".into()), (8, "policy.limit".into())]
    );
}

#[test]
fn policy_fields_in_file_order() {
    let text = format!(
        "name = \"x\"\nduration = \"1m\"\n[policy]\nwindow = \"soon\"\nlimit = 0\n{TRAFFIC}"
    );
    assert_eq!(
        reported(&text),
        [(4, "policy.window".into()), (5, "policy.limit".into())]
    );
}

#[test]
fn two_sources_each_report_their_mistake() {
    let text = "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n\
                [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"fast\"\n\
                [[traffic]]\nname = \"b\"\nkind = \"poisson\"\nrate = \"slow\"\n";
    assert_eq!(
        reported(text),
        [
            (9, "traffic[0].rate".into()),
            (13, "traffic[1].rate".into())
        ]
    );
}

#[test]
fn a_reaction_before_a_later_source_comes_first() {
    let text = "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n\
                [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n\
                on_reject = { retry = \"sometimes\" }\n\
                [[traffic]]\nname = \"b\"\nkind = \"poisson\"\nrate = \"slow\"\n";
    assert_eq!(lines(text), [10, 14]);
}

#[test]
fn an_expect_line_before_a_contender_comes_first() {
    let text = format!(
        "name = \"x\"\nduration = \"1m\"\nexpect = [\"* legit_goodput >= lots\"]\n\
         [policy]\nlimit = 10\nwindow = \"1s\"\n{TRAFFIC}\
         [[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\n\
         algorithm = \"gcra\"\nlimit = 0\nwindow = \"1s\"\n"
    );
    assert_eq!(
        reported(&text),
        [
            (3, "expect[0]".into()),
            (16, "contender[0].rule[0].limit".into())
        ]
    );
}

#[test]
fn a_start_before_the_traffic_comes_first() {
    let text = "name = \"x\"\nduration = \"1m\"\nstart = \"yesterday\"\n\
                [policy]\nlimit = 10\nwindow = \"1s\"\n\
                [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"fast\"\n";
    assert_eq!(lines(text), [3, 10]);
}

#[test]
fn an_alert_before_a_contender_comes_first() {
    let text = format!(
        "name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1s\"\n{TRAFFIC}\
         [[alert]]\nname = \"a\"\ncount = \"everything\"\nthreshold = 1\nwindow = \"1m\"\n\
         [[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\n\
         algorithm = \"gcra\"\nlimit = 0\nwindow = \"1s\"\n"
    );
    assert_eq!(lines(&text), [12, 20]);
}

#[test]
fn one_mistake_is_reported_alone_as_before() {
    let text =
        format!("name = \"x\"\nduration = \"1m\"\n[policy]\nlimit = 0\nwindow = \"1s\"\n{TRAFFIC}");
    let e = Scenario::parse(&text, "bad.toml".as_ref()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.toml:4:9: field `policy.limit`: 0 is too small: must be a whole number of requests from 1 to 4294967295"
    );
}
