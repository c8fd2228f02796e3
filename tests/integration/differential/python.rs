//! Python `limits` from PyPI, driven by tests/differential/python/driver.py with a patched
//! `time.time()`: the moving window, fixed window and sliding window counter strategies.

use super::*;
use rlsim::algorithms::profiles::ParamValue::Str;

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

/// One trace: the limit string, the instant virtual time 0 stands for, and the hits.
struct Trace {
    limit: String,
    epoch_ns: u64,
    hits: Vec<Hit>,
}

/// The traces of the first tests: windows that divide 2026-01-01, replayed from it.
fn dividing_traces() -> Vec<Trace> {
    (0..TRACES)
        .map(|seed| {
            let amount = 1 + seed % 7;
            let (unit, seconds) = [
                ("second", 1),
                ("2 seconds", 2),
                ("minute", 60),
                ("5 seconds", 5),
            ][seed as usize % 4];
            Trace {
                limit: format!("{amount} per {unit}"),
                epoch_ns: rlsim::time::DEFAULT_START,
                hits: trace(seed + 3000, seconds * 1000, 1 + (seed % 5) as u32 * 6, HITS),
            }
        })
        .collect()
}

/// [`dividing_traces`] with half the hits weighing 1 to the limit + 2 (`hit(..., cost=n)`,
/// above the limit included).
fn costly_traces() -> Vec<Trace> {
    dividing_traces()
        .into_iter()
        .zip(0..)
        .map(|(t, seed)| {
            let amount = 1 + seed % 7;
            Trace {
                hits: with_costs(t.hits, seed, amount as Cost + 2),
                ..t
            }
        })
        .collect()
}

/// Windows that divide no usual start instant (11 s, 13 s, 17 min, the library's 30-day month
/// and 360-day year), from random absolute instants (any nanosecond between 2001 and 2033), so
/// that the epoch-aligned windows fall anywhere in virtual time.
fn absolute_traces() -> Vec<Trace> {
    traces_from(7000, |rng| {
        rng.random_range(1_000_000_000..2_000_000_000) * NANOS_PER_SEC
            + rng.random_range(0..NANOS_PER_SEC)
    })
}

/// The same windows from the Unix epoch itself, as a trace of relative times (from 0) is read:
/// the first window is the one whose previous key, `int((t - E) / E)`, is the current one.
fn epoch_traces() -> Vec<Trace> {
    traces_from(9000, |_| 0)
}

/// Traces over [`absolute_traces`]' windows, virtual time 0 at the instant `epoch` draws.
fn traces_from(seeds: u64, epoch: fn(&mut ChaCha8Rng) -> u64) -> Vec<Trace> {
    const UNITS: [(&str, u64); 5] = [
        ("11 seconds", 11),
        ("13 seconds", 13),
        ("17 minutes", 17 * 60),
        ("1 month", 30 * 86_400),
        ("1 year", 360 * 86_400),
    ];
    (0..2 * UNITS.len() as u64)
        .map(|seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed + seeds);
            let (unit, seconds) = UNITS[seed as usize % UNITS.len()];
            let epoch_ns = epoch(&mut rng);
            let w = seconds * NANOS_PER_SEC;
            let keys = 1 + (seed % 3) as u32 * 4;
            let mut at: Nanos = 0;
            let hits = (0..HITS / 3)
                .map(|_| {
                    let abs = epoch_ns + at;
                    // To the next epoch-aligned multiple of W/k: window edges (k = 1), and
                    // instants where the previous window weighs a round fraction, so that the
                    // weighted count can be exactly an integer.
                    let to_next = |k: u64| (w / k) - abs % (w / k);
                    at += match rng.random_range(0..12) {
                        0 | 1 => 0,
                        2 => rng.random_range(0..NANOS_PER_MILLI),
                        3 => to_next(1),
                        4 => to_next(1) - 1,
                        5 => to_next(1) + 1,
                        6 => to_next(2),
                        7 => to_next(4),
                        8 => to_next(10),
                        9 => rng.random_range(0..w / 4),
                        _ => rng.random_range(0..w / 40 + 1),
                    };
                    Hit {
                        at,
                        key: rng.random_range(0..keys),
                        cost: 1,
                        refund: 0,
                    }
                })
                .collect();
            Trace {
                limit: format!("{} per {unit}", 1 + seed % 4),
                epoch_ns,
                hits,
            }
        })
        .collect()
}

/// One strategy over every trace: decisions always; the remaining count and the reset time of
/// `get_window_stats` where rlsim's decision carries the same figure. Returns how many
/// decisions rlsim got wrong, reporting the first.
fn disagreements(
    kind: ProfileKind,
    name: &str,
    traces: &[Trace],
    compare_remaining: bool,
    compare_reset: bool,
    ours_from: impl Fn(&Trace) -> u64,
) -> Option<(usize, usize, String)> {
    let driver = python()?;
    let input: Vec<(String, Vec<Hit>)> = traces
        .iter()
        .map(|t| {
            (
                format!(
                    r#"{{"strategy":"{name}","limit":"{}","epoch_ns":{}}}"#,
                    t.limit, t.epoch_ns
                ),
                t.hits.clone(),
            )
        })
        .collect();
    let answers = run_driver(driver, &input, 1);
    let (mut total, mut wrong, mut first) = (0, 0, String::new());
    for (t, lines) in traces.iter().zip(&answers) {
        let given = [("limit", Str(t.limit.clone()))];
        let ours = decide_at(kind, &given, &t.hits, ours_from(t));
        for (i, ((h, d), line)) in t.hits.iter().zip(&ours).zip(lines).enumerate() {
            let f: Vec<&str> = line.split(' ').collect();
            let admitted = f[0] == "A";
            let remaining: u64 = f[1].parse().unwrap();
            let reset: f64 = f[2].parse().unwrap();
            let mut ok = admitted == d.outcome.is_admitted();
            if compare_remaining {
                ok &= remaining == d.remaining;
            }
            if compare_reset {
                // rlsim's reset is the first ns at which the library's reset time has passed
                // (`time.time()` at virtual time x: the float of the epoch's ns + x, in s).
                let at = |x: u64| (t.epoch_ns + x) as f64 / 1e9;
                ok &= reset <= at(d.reset_at) && (d.reset_at == h.at || at(d.reset_at - 1) < reset);
            }
            if !ok {
                if wrong == 0 {
                    first = format!(
                        "{kind} `{}` from epoch ns {}: hit #{i} (t={} ns, key k{}): rlsim {:?}, \
                         the library `{line}`",
                        t.limit, t.epoch_ns, h.at, h.key, d
                    );
                }
                wrong += 1;
            }
            total += 1;
        }
    }
    Some((total, wrong, first))
}

/// [`disagreements`], which must be none.
fn strategy(
    kind: ProfileKind,
    name: &str,
    traces: &[Trace],
    compare_remaining: bool,
    compare_reset: bool,
) {
    let Some((total, wrong, first)) =
        disagreements(kind, name, traces, compare_remaining, compare_reset, |t| {
            t.epoch_ns
        })
    else {
        return;
    };
    assert_eq!(
        wrong, 0,
        "{wrong} of {total} decisions differ; the first: {first}"
    );
    eprintln!(
        "{kind}: {total} decisions over {} traces, all identical to the library",
        traces.len()
    );
    assert_eq!(total, traces.iter().map(|t| t.hits.len()).sum::<usize>());
}

#[test]
fn python_limits_moving_window_agrees_with_the_pypi_package() {
    // get_window_stats counts entries strictly inside the window while acquire_entry refuses
    // on one at its edge: the figures differ at the edge, so only decisions are compared.
    for traces in [dividing_traces(), costly_traces()] {
        strategy(
            ProfileKind::PythonLimitsMovingWindow,
            "moving-window",
            &traces,
            false,
            false,
        );
    }
}

#[test]
fn python_limits_fixed_window_agrees_with_the_pypi_package() {
    for traces in [dividing_traces(), costly_traces()] {
        strategy(
            ProfileKind::PythonLimitsFixedWindow,
            "fixed-window",
            &traces,
            true,
            true,
        );
    }
}

#[test]
fn python_limits_sliding_window_counter_agrees_with_the_pypi_package() {
    // The stats' reset is a float modulo per window, not a decision figure rlsim carries.
    for traces in [dividing_traces(), costly_traces()] {
        strategy(
            ProfileKind::PythonLimitsSlidingWindow,
            "sliding-window-counter",
            &traces,
            true,
            false,
        );
    }
}

#[test]
fn python_limits_agree_at_absolute_times_with_windows_that_divide_no_start() {
    // The library reads the wall clock: the sliding counter aligns its windows to the Unix
    // epoch, and every strategy's floats round at the magnitude of the absolute time.
    let traces = absolute_traces();
    for (kind, name, remaining, reset) in [
        (
            ProfileKind::PythonLimitsSlidingWindow,
            "sliding-window-counter",
            true,
            false,
        ),
        (
            ProfileKind::PythonLimitsFixedWindow,
            "fixed-window",
            true,
            true,
        ),
        (
            ProfileKind::PythonLimitsMovingWindow,
            "moving-window",
            false,
            false,
        ),
    ] {
        strategy(kind, name, &traces, remaining, reset);
    }
}

#[test]
fn python_limits_agree_on_traces_from_the_epoch_itself() {
    // Relative times from 0: the sliding counter's previous window is its current one in the
    // epoch's first window, weighed by Python's floored modulo.
    let traces = epoch_traces();
    strategy(
        ProfileKind::PythonLimitsSlidingWindow,
        "sliding-window-counter",
        &traces,
        true,
        false,
    );
    strategy(
        ProfileKind::PythonLimitsFixedWindow,
        "fixed-window",
        &traces,
        true,
        true,
    );
}

#[test]
fn python_limits_sliding_counter_from_the_default_start_misjudges_absolute_traces() {
    // rlsim's decisions as if virtual time 0 were 2026-01-01 (what it did before it read a
    // trace's own time), the library's at the traces' own instants: they disagree, so the test
    // above has something to catch.
    let Some((total, wrong, first)) = disagreements(
        ProfileKind::PythonLimitsSlidingWindow,
        "sliding-window-counter",
        &absolute_traces(),
        false,
        false,
        |_| rlsim::time::DEFAULT_START,
    ) else {
        return;
    };
    eprintln!("from 2026-01-01: {wrong} of {total} decisions differ; the first: {first}");
    assert!(wrong * 100 > total, "{wrong} of {total}");
}
