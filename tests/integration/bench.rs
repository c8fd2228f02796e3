//! `rlsim bench`: the table has every measurement asked for, and bad arguments are refused.

use crate::util::rlsim;

#[test]
fn bench_prints_decisions_and_end_to_end_rows() {
    let out = rlsim()
        .args(["bench", "--requests", "20000", "--algorithm", "gcra"])
        .args(["--algorithm", "fixed_window"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("decisions/s: bare KeyedLimiter::decide, 20000 decisions"));
    for column in [
        "uniform@1",
        "uniform@10^3",
        "uniform@10^6",
        "zipf@1",
        "zipf@10^6",
    ] {
        assert!(lines[1].contains(column), "{column} in {}", lines[1]);
    }
    // Two algorithm rows per table, in the order given, each with one rate per column.
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("gcra") || l.starts_with("fixed_window"))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].starts_with("gcra") && rows[1].starts_with("fixed_window"));
    assert_eq!(rows[0].matches(" M").count(), 6);
    assert_eq!(rows[2].matches(" M").count(), 3);
    assert!(text.contains("end to end"));
}

#[test]
fn bench_refuses_zero_requests_and_unknown_algorithms() {
    rlsim().args(["bench", "--requests", "0"]).assert().code(2);
    rlsim()
        .args(["bench", "--algorithm", "gcr"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("gcra"));
}
