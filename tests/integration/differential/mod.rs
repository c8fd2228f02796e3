//! Differential tests: rlsim's profiles against the real libraries, decision by decision.
//!
//! Each test generates seeded random traces (many keys, ties, sub-millisecond offsets, hits
//! exactly one window apart), runs them through the profile and through the library (a Node or
//! Python driver under tests/differential/, run as a subprocess with a faked clock), and requires
//! every decision, and every reset / retry-after value the library exposes, to be identical.
//! A missing tool skips the test (listed at the end of `cargo test`), unless
//! `RLSIM_REQUIRE_EXTERNAL=1` (crate::external).

mod go;
mod harm;
mod java;
mod node;
mod python;

pub use crate::external::{on_path, require_external};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsim::algorithms::profiles::{ParamValue, Profile};
use rlsim::algorithms::{
    Cost, Decision, KeyedLimiter, Limiter, LimiterVisitor, Outcome, ProfileKind,
};
use rlsim::time::{NANOS_PER_MILLI, NANOS_PER_SEC, Nanos};
use rlsim::{Params, time::NANOS_PER_MIN};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Traces per configuration set and hits per trace.
pub const TRACES: u64 = 24;
pub const HITS: usize = 3000;

/// One hit: virtual time (ns), key index and what it weighs (1 for a plain request); or,
/// with `refund` above 0, no request but that many units given back to the key (a response
/// settling less than it was charged: rate-limiter-flexible's `reward`).
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub at: Nanos,
    pub key: u32,
    pub cost: Cost,
    pub refund: Cost,
}

/// `hits` with random costs drawn from `rng`: half of them 1, the others 1 to `most` (give it
/// above the library's capacity to reach its costliest edge).
pub fn with_costs(hits: Vec<Hit>, seed: u64, most: Cost) -> Vec<Hit> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xC057);
    hits.into_iter()
        .map(|h| Hit {
            cost: if rng.random_bool(0.5) {
                1
            } else {
                rng.random_range(1..=most)
            },
            ..h
        })
        .collect()
}

/// `hits` with about one in four turned into a refund of 1 to `most` units to its key.
pub fn with_refunds(hits: Vec<Hit>, seed: u64, most: Cost) -> Vec<Hit> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5E77);
    hits.into_iter()
        .map(|h| Hit {
            refund: if rng.random_bool(0.25) {
                rng.random_range(1..=most)
            } else {
                0
            },
            ..h
        })
        .collect()
}

/// A random trace whose gaps favour the edges: ties, sub-millisecond steps, one millisecond, and
/// exactly one window (±1 ms) between hits. `window_ms` is the library's window.
pub fn trace(seed: u64, window_ms: u64, keys: u32, hits: usize) -> Vec<Hit> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut at: Nanos = rng.random_range(0..5 * NANOS_PER_SEC);
    let mut out = Vec::with_capacity(hits);
    let w = window_ms * NANOS_PER_MILLI;
    for _ in 0..hits {
        let gap = match rng.random_range(0..10) {
            0 | 1 => 0,
            2 => rng.random_range(0..NANOS_PER_MILLI),
            3 => NANOS_PER_MILLI,
            4 => w,
            5 => w - NANOS_PER_MILLI,
            6 => w + NANOS_PER_MILLI,
            7 => rng.random_range(0..w / 4 + 1),
            // A key's window may start at its own first hit: align the next hit to a whole
            // number of milliseconds so edges of other keys can be hit exactly too.
            8 => (NANOS_PER_MILLI - at % NANOS_PER_MILLI) % NANOS_PER_MILLI,
            _ => rng.random_range(0..w / 20 + 1),
        };
        at += gap;
        out.push(Hit {
            at,
            key: rng.random_range(0..keys),
            cost: 1,
            refund: 0,
        });
    }
    out
}

/// What the library said about one hit; `None` where it exposes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub admitted: bool,
    pub remaining: Option<u64>,
    pub instant_ms: Option<u64>,
    pub seconds: Option<u64>,
}

impl Said {
    pub fn parse(line: &str) -> Said {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "driver line `{line}`");
        let num =
            |s: &str| (s != "-").then(|| s.parse::<u64>().unwrap_or_else(|_| panic!("`{line}`")));
        Said {
            admitted: match f[0] {
                "A" => true,
                "R" => false,
                other => panic!("driver decision `{other}`"),
            },
            remaining: num(f[1]),
            instant_ms: num(f[2]),
            seconds: num(f[3]),
        }
    }
}

/// Runs a driver over several traces (each a config line then `TIME KEY` per hit, TIME in units
/// of `unit` ns, and `TIME KEY COST` for a hit of cost above 1); returns its answer lines per
/// trace. One process for all traces: Node takes a second to load a framework.
pub fn run_driver(
    mut cmd: Command,
    traces: &[(String, Vec<Hit>)],
    unit: Nanos,
) -> Vec<Vec<String>> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("driver starts");
    let mut input = String::new();
    for (config, hits) in traces {
        input.push_str(config);
        input.push('\n');
        for h in hits {
            match (h.refund, h.cost) {
                (0, 1) => input.push_str(&format!("{} k{}\n", h.at / unit, h.key)),
                (0, c) => input.push_str(&format!("{} k{} {c}\n", h.at / unit, h.key)),
                (r, _) => input.push_str(&format!("{} k{} -{r}\n", h.at / unit, h.key)),
            }
        }
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut said = text.lines().map(str::to_string);
    let answers: Vec<Vec<String>> = traces
        .iter()
        .map(|(_, hits)| said.by_ref().take(hits.len()).collect())
        .collect();
    assert!(
        answers
            .iter()
            .zip(traces)
            .all(|(a, (_, h))| a.len() == h.len())
            && said.next().is_none(),
        "the driver answered every hit"
    );
    answers
}

/// rlsim's decisions for `hits` under profile `kind` configured with `given`.
pub fn decide(kind: ProfileKind, given: &[(&str, ParamValue)], hits: &[Hit]) -> Vec<Decision> {
    decide_at(kind, given, hits, rlsim::time::DEFAULT_START)
}

/// [`decide`] with virtual time 0 at `epoch_ns` after the Unix epoch (the scenario's start).
pub fn decide_at(
    kind: ProfileKind,
    given: &[(&str, ParamValue)],
    hits: &[Hit],
    epoch_ns: u64,
) -> Vec<Decision> {
    struct Run<'a>(&'a [Hit]);
    impl LimiterVisitor for Run<'_> {
        type Output = Vec<Decision>;
        fn visit<L: Limiter + 'static>(self, limiter: L) -> Vec<Decision> {
            let mut keyed = KeyedLimiter::new(limiter);
            self.0
                .iter()
                .map(|h| match h.refund {
                    0 => keyed.decide_n(h.key, h.at, h.cost),
                    // What the key says right after: a request of no cost, looked at only.
                    r => {
                        keyed.refund(h.key, h.at, h.at, r);
                        keyed.peek_n(h.key, h.at, 0)
                    }
                })
                .collect()
        }
    }
    configure(kind, given)
        .starting_at(epoch_ns)
        .visit(Run(hits))
}

/// Profile `kind` configured with `given`, as every differential test configures it.
pub fn configure(kind: ProfileKind, given: &[(&str, ParamValue)]) -> Profile {
    // The policy only fills parameters the test leaves out; every test gives them all.
    let policy = Params {
        limit: 100,
        window: NANOS_PER_MIN,
        burst: 1,
    };
    let given: Vec<(String, ParamValue)> = given
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    kind.configure(policy, &given)
        .expect("valid test parameters")
}

/// The instant (ms) a refused hit may retry at, from rlsim's decision.
pub fn retry_instant_ms(hit: &Hit, d: &Decision) -> Option<u64> {
    match d.outcome {
        Outcome::Reject { retry_after } => {
            let at = hit.at + retry_after;
            assert_eq!(
                at % NANOS_PER_MILLI,
                0,
                "a ms-clock library retries on a ms"
            );
            Some(at / NANOS_PER_MILLI)
        }
        _ => None,
    }
}

/// `ceil(ms / 1000)`, as the libraries turn milliseconds into header seconds.
pub fn ceil_seconds(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

/// Compares, reporting the first mismatch with its context. Returns the decisions compared.
pub fn compare(
    label: &str,
    hits: &[Hit],
    ours: &[Decision],
    said: &[Said],
    expect: impl Fn(&Hit, &Decision, &Said) -> Said,
) -> usize {
    for (i, ((h, d), s)) in hits.iter().zip(ours).zip(said).enumerate() {
        let want = expect(h, d, s);
        if &want != s {
            let from = i.saturating_sub(5);
            let context: Vec<String> = (from..=i)
                .map(|j| {
                    format!(
                        "  #{j} t={}ns ({} ms) key k{}: rlsim {:?}, library {:?}",
                        hits[j].at,
                        hits[j].at / NANOS_PER_MILLI,
                        hits[j].key,
                        ours[j],
                        said[j]
                    )
                })
                .collect();
            panic!(
                "{label}: first mismatch at hit #{i}: rlsim says {want:?}, the library {s:?}\n{}",
                context.join("\n")
            );
        }
    }
    hits.len()
}

/// The directory of a driver, relative to the repository.
pub fn driver_dir(sub: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/differential")
        .join(sub)
}

/// One trace and the profile's configuration, as the driver and as rlsim take it.
pub struct Case {
    /// The driver's JSON config line.
    pub config: String,
    pub given: Vec<(&'static str, ParamValue)>,
    pub hits: Vec<Hit>,
}

/// Runs every case through the driver (one process) and the profile; panics at the first
/// mismatch. Returns the number of decisions compared.
pub fn differential(
    driver: Command,
    kind: ProfileKind,
    cases: &[Case],
    expect: impl Fn(&Hit, &Decision) -> Said,
) -> usize {
    let traces: Vec<(String, Vec<Hit>)> = cases
        .iter()
        .map(|c| (c.config.clone(), c.hits.clone()))
        .collect();
    let answers = run_driver(driver, &traces, NANOS_PER_MILLI);
    let mut total = 0;
    for (case, lines) in cases.iter().zip(&answers) {
        let said: Vec<Said> = lines.iter().map(|l| Said::parse(l)).collect();
        let said = &said;
        let ours = decide(kind, &case.given, &case.hits);
        let label = format!("{kind} {}", case.config);
        total += compare(&label, &case.hits, &ours, said, |h, d, _| expect(h, d));
    }
    eprintln!(
        "{kind}: {total} decisions over {} traces, all identical to the library",
        cases.len()
    );
    total
}
