//! Python `limits` from PyPI, driven by tests/differential/python/driver.py with a patched
//! `time.time()`: the moving window, fixed window and sliding window counter strategies.

use super::*;
use rlsim::algorithms::profiles::ParamValue::Str;
use rlsim::calendar::{Calendar, Period};
use rlsim::time::NANOS_PER_DAY;

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

/// The instant `text` (RFC 3339) names, in ns since the Unix epoch.
fn instant_ns(text: &str) -> u64 {
    let ts: jiff::Timestamp = text.parse().expect("an RFC 3339 instant");
    u64::try_from(ts.as_nanosecond()).expect("after the Unix epoch")
}

/// Where a replayed log may start: seconds (or a nanosecond) before a UTC month's end, the
/// end of a leap February and a year's end.
const CALENDAR_EDGES: [&str; 5] = [
    "2026-01-31T23:59:50Z",
    "2026-02-28T23:59:59.5Z",
    "2028-02-29T23:59:55Z",
    "2026-12-31T23:59:58Z",
    "2029-12-31T23:59:59.999999999Z",
];

/// Every form `limits.parse` takes for months and years (`N` the amount), with the expiry it
/// gives them in days: a month is 30 days, a year 12 of those.
const MONTH_AND_YEAR_RATES: [(&str, u64); 8] = [
    ("N/month", 30),
    ("N per month", 30),
    ("N per 2 months", 60),
    ("N/2 months", 60),
    ("N/year", 360),
    ("N per year", 360),
    ("N per 3 years", 1080),
    ("N per 12 months", 360),
];

/// Month and year windows replayed from their own time: virtual time 0 at each of
/// [`CALENDAR_EDGES`] and at three random instants in 2024–2030, for every rate form of
/// [`MONTH_AND_YEAR_RATES`]. The hits come in clusters of ties, sub-millisecond and
/// sub-second steps around an edge each: the UTC month's (or year's) end, which resets
/// nothing in the library, or one of the library's own (the next epoch-aligned multiple of the
/// expiry or of a round fraction of it, as [`traces_from`] jumps to, or a key's first hit plus
/// the expiry, where its fixed window ends), landed on exactly or from just before. Limits of
/// 1 to 25 over 1 to 4 keys; every other trace weighs half its hits 1 to the limit + 2. The
/// 3-year windows run on to the 2050s.
fn calendar_traces() -> Vec<Trace> {
    let month = Calendar::new(Period::Month(1), "UTC").unwrap();
    let year = Calendar::new(Period::Year, "UTC").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11_000);
    let (from, to) = (
        instant_ns("2024-01-01T00:00:00Z"),
        instant_ns("2031-01-01T00:00:00Z"),
    );
    let epochs: Vec<u64> = CALENDAR_EDGES
        .iter()
        .map(|e| instant_ns(e))
        .chain((0..3).map(|_| rng.random_range(from..to)))
        .collect();
    let mut traces = Vec::new();
    for (form, days) in MONTH_AND_YEAR_RATES {
        for &epoch_ns in &epochs {
            let seed = 11_000 + traces.len() as u64;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let w = days * NANOS_PER_DAY;
            let amount = [1, 3, 7, 12, 25][seed as usize % 5];
            let keys = 1 + (seed % 4) as u32;
            // Each key's fixed window: it starts at the key's first hit once the last one ended.
            let mut window_start: Vec<Option<Nanos>> = vec![None; keys as usize];
            // The first cluster walks over the UTC month's end right after virtual time 0.
            let mut edge = month.bounds(epoch_ns).1 - epoch_ns;
            let mut edge_key = None;
            let mut cluster: u32 = 40;
            let mut at: Nanos = 0;
            let mut hits = Vec::with_capacity(HITS / 12);
            for _ in 0..HITS / 12 {
                let abs = epoch_ns + at;
                let to_next = |k: u64| (w / k) - abs % (w / k);
                let mut key = rng.random_range(0..keys);
                if cluster == 0 {
                    cluster = rng.random_range(8..30);
                    edge_key = None;
                    let ahead = match rng.random_range(0..6) {
                        0 | 1 => {
                            let calendar = if days >= 360 && rng.random_bool(0.5) {
                                &year
                            } else {
                                &month
                            };
                            calendar.bounds(abs).1 - abs
                        }
                        2 => to_next(1),
                        3 => to_next([2, 4, 10][rng.random_range(0..3)]),
                        _ => {
                            let k = rng.random_range(0..keys);
                            match window_start[k as usize] {
                                Some(s) if s + w > at => {
                                    edge_key = Some(k);
                                    s + w - at
                                }
                                _ => to_next(1),
                            }
                        }
                    };
                    edge = at + ahead;
                    // Land on the edge, a nanosecond either side of it, or up to 3 s before.
                    at = match rng.random_range(0..6) {
                        0 => edge,
                        1 => edge + 1,
                        2 => edge - 1,
                        3 => edge.saturating_sub(NANOS_PER_MILLI),
                        _ => edge.saturating_sub(rng.random_range(0..3 * NANOS_PER_SEC)),
                    }
                    .max(at);
                    if let Some(k) = edge_key.filter(|_| rng.random_bool(0.7)) {
                        key = k;
                    }
                } else {
                    cluster -= 1;
                    at += match rng.random_range(0..10) {
                        0 | 1 => 0,
                        2 => rng.random_range(0..NANOS_PER_MILLI),
                        3 => NANOS_PER_MILLI,
                        4 | 5 if edge > at => {
                            if let Some(k) = edge_key.filter(|_| rng.random_bool(0.7)) {
                                key = k;
                            }
                            edge - at
                        }
                        _ => rng.random_range(0..NANOS_PER_SEC),
                    };
                }
                let start = &mut window_start[key as usize];
                if start.is_none_or(|s| at >= s + w) {
                    *start = Some(at);
                }
                hits.push(Hit {
                    at,
                    key,
                    cost: 1,
                    refund: 0,
                });
            }
            if seed % 2 == 1 {
                hits = with_costs(hits, seed, amount as Cost + 2);
            }
            traces.push(Trace {
                limit: form.replace('N', &amount.to_string()),
                epoch_ns,
                hits,
            });
        }
    }
    traces
}

/// The library's answer lines (`A|R REMAINING RESET`) for every trace under strategy `name`;
/// `None` when it is not installed.
fn library_says(name: &str, traces: &[Trace]) -> Option<Vec<Vec<String>>> {
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
    Some(run_driver(driver, &input, 1))
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
    let answers = library_says(name, traces)?;
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

/// The three strategies over `traces`, each compared on what its decision carries: the
/// remaining count where rlsim's decision has the library's, the reset for the fixed window.
fn every_strategy(traces: &[Trace]) {
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
        strategy(kind, name, traces, remaining, reset);
    }
}

#[test]
fn python_limits_agree_at_absolute_times_with_windows_that_divide_no_start() {
    // The library reads the wall clock: the sliding counter aligns its windows to the Unix
    // epoch, and every strategy's floats round at the magnitude of the absolute time.
    let traces = absolute_traces();
    every_strategy(&traces);
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

#[test]
fn python_limits_month_and_year_windows_agree_at_the_traces_own_times() {
    // A replayed log's own clock, seconds before a UTC month's or year's end: the library's
    // month is 30 days and its year 360, from the key's first hit (fixed window) or aligned to
    // the Unix epoch (sliding counter); the calendar's edges reset nothing.
    let traces = calendar_traces();
    every_strategy(&traces);
}

#[test]
fn python_limits_month_is_thirty_days_where_a_calendar_quota_resets_on_the_first() {
    // "1/month" from 2026-01-31T23:59:50Z, hits at +0 s and +20 s: the second is on 1 February
    // in UTC, a new calendar month, but inside the library's 30 days from the first hit.
    let epoch_ns = instant_ns("2026-01-31T23:59:50Z");
    let trace = Trace {
        limit: "1/month".to_string(),
        epoch_ns,
        hits: [0, 20 * NANOS_PER_SEC]
            .map(|at| Hit {
                at,
                key: 0,
                cost: 1,
                refund: 0,
            })
            .to_vec(),
    };
    let month = Calendar::new(Period::Month(1), "UTC").unwrap();
    let february = month.bounds(epoch_ns + 20 * NANOS_PER_SEC);
    assert_eq!(
        month.bounds(epoch_ns).1,
        february.0,
        "one calendar month each"
    );
    assert_eq!(february.0, instant_ns("2026-02-01T00:00:00Z"));

    let Some(said) = library_says("fixed-window", std::slice::from_ref(&trace)) else {
        return;
    };
    // Admitted with its window ending 30 days on (2026-03-02T23:59:50Z), then refused.
    assert_eq!(said[0], ["A 0 1772495990.0", "R 0 1772495990.0"]);
    assert_eq!(
        instant_ns("2026-03-02T23:59:50Z"),
        1_772_495_990 * NANOS_PER_SEC
    );
    let given = [("limit", Str(trace.limit.clone()))];
    let ours = decide_at(
        ProfileKind::PythonLimitsFixedWindow,
        &given,
        &trace.hits,
        epoch_ns,
    );
    assert_eq!(
        ours.iter()
            .map(|d| d.outcome.is_admitted())
            .collect::<Vec<_>>(),
        [true, false]
    );
    // Its reset: the first ns whose `time.time()` reaches the library's reset time. Floats
    // near 1.77e9 s are 238 ns apart, so that ns is 128 ns short of the 30 days.
    let seconds = |x: u64| (epoch_ns + x) as f64 / 1e9;
    assert_eq!(seconds(ours[0].reset_at), 1_772_495_990.0);
    assert!(seconds(ours[0].reset_at - 1) < 1_772_495_990.0);
    assert_eq!(30 * NANOS_PER_DAY - ours[0].reset_at, 128);

    // A calendar quota of 1 a month in UTC admits both: February is a new period.
    let calendar = rlsim::algorithms::CalendarWindow::new(
        Params {
            limit: 1,
            window: 30 * NANOS_PER_DAY,
            burst: 1,
        },
        month.intern(),
    )
    .unwrap()
    .starting_at(epoch_ns);
    let mut keyed = KeyedLimiter::new(calendar);
    let quota: Vec<Decision> = trace
        .hits
        .iter()
        .map(|h| keyed.decide_n(h.key, h.at, h.cost))
        .collect();
    assert!(quota.iter().all(|d| d.outcome.is_admitted()), "{quota:?}");
    assert_eq!(
        quota[0].reset_at,
        10 * NANOS_PER_SEC,
        "resets on 1 February"
    );
}
