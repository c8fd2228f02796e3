//! Python `limits` from PyPI, driven by tests/differential/python/driver.py with a patched
//! `time.time()`: the moving window, fixed window and sliding window counter strategies.

use super::*;
use rlsim::algorithms::profiles::ParamValue::Str;
use rlsim::algorithms::profiles::python_limits::py_time;

/// The Python driver, if python3 and `limits` are installed.
fn python() -> Option<Command> {
    let has = Command::new("python3")
        .args(["-c", "import limits"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !require_external(
        has,
        "python3 with the `limits` package",
        "python3 -m pip install limits==5.8.0",
    ) {
        return None;
    }
    let mut cmd = Command::new("python3");
    cmd.arg(driver_dir("python").join("driver.py"));
    Some(cmd)
}

/// One strategy over every trace: decisions always; the remaining count and the reset time of
/// `get_window_stats` where rlsim's decision carries the same figure.
fn strategy(kind: ProfileKind, name: &str, compare_remaining: bool, compare_reset: bool) {
    let Some(driver) = python() else { return };
    let cases: Vec<Case> = (0..TRACES)
        .map(|seed| {
            let amount = 1 + seed % 7;
            let (unit, seconds) = [
                ("second", 1),
                ("2 seconds", 2),
                ("minute", 60),
                ("5 seconds", 5),
            ][seed as usize % 4];
            let limit = format!("{amount} per {unit}");
            Case {
                config: format!(r#"{{"strategy":"{name}","limit":"{limit}"}}"#),
                given: vec![("limit", Str(limit))],
                hits: trace(seed + 3000, seconds * 1000, 1 + (seed % 5) as u32 * 6, HITS),
            }
        })
        .collect();
    let traces: Vec<(String, Vec<Hit>)> = cases
        .iter()
        .map(|c| (c.config.clone(), c.hits.clone()))
        .collect();
    let answers = run_driver(driver, &traces, 1);
    let mut total = 0;
    for (case, lines) in cases.iter().zip(&answers) {
        let ours = decide(kind, &case.given, &case.hits);
        for (i, ((h, d), line)) in case.hits.iter().zip(&ours).zip(lines).enumerate() {
            let f: Vec<&str> = line.split(' ').collect();
            let admitted = f[0] == "A";
            let remaining: u64 = f[1].parse().unwrap();
            let reset: f64 = f[2].parse().unwrap();
            let mut ok = admitted == d.outcome.is_admitted();
            if compare_remaining {
                ok &= remaining == d.remaining;
            }
            if compare_reset {
                // rlsim's reset is the first ns at which the library's reset time has passed.
                ok &= reset <= py_time(d.reset_at)
                    && (d.reset_at == h.at || py_time(d.reset_at - 1) < reset);
            }
            assert!(
                ok,
                "{kind} {}: first mismatch at hit #{i} (t={} ns, key k{}): rlsim {:?}, \
                 the library `{line}`",
                case.config, h.at, h.key, d
            );
            total += 1;
        }
    }
    eprintln!(
        "{kind}: {total} decisions over {} traces, all identical to the library",
        cases.len()
    );
    assert_eq!(total, TRACES as usize * HITS);
}

#[test]
fn python_limits_moving_window_agrees_with_the_pypi_package() {
    // get_window_stats counts entries strictly inside the window while acquire_entry refuses
    // on one at its edge: the figures differ at the edge, so only decisions are compared.
    strategy(
        ProfileKind::PythonLimitsMovingWindow,
        "moving-window",
        false,
        false,
    );
}

#[test]
fn python_limits_fixed_window_agrees_with_the_pypi_package() {
    strategy(
        ProfileKind::PythonLimitsFixedWindow,
        "fixed-window",
        true,
        true,
    );
}

#[test]
fn python_limits_sliding_window_counter_agrees_with_the_pypi_package() {
    // The stats' reset is a float modulo per window, not a decision figure rlsim carries.
    strategy(
        ProfileKind::PythonLimitsSlidingWindow,
        "sliding-window-counter",
        true,
        false,
    );
}
