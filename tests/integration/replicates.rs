//! `rlsim run --replicates` and `--sensitivity` end to end (docs/replicates.md): the files are
//! byte-identical on 1 and 2 threads, the stability counts and the sensitivity flips of a
//! scenario built to flip, the resonance warning, and bad input refused with exit code 2.

use crate::util::{repo, rlsim, write};
use serde_json::Value;
use std::path::Path;

const PERIODIC: &str = "scenarios/periodic_scraper.toml";

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs `args` with `threads` rayon threads; standard output and the `--out` files.
fn run_on(threads: &str, out: &Path, args: &[&str]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let done = rlsim()
        .current_dir(repo())
        .env("RAYON_NUM_THREADS", threads)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let files = ["replicates.json", "replicates.csv", "sensitivity.json"]
        .iter()
        .map(|f| std::fs::read(out.join(f)).unwrap())
        .collect();
    (done.get_output().stdout.clone(), files)
}

#[test]
fn replicates_are_byte_identical_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let args = [PERIODIC, "--replicates", "5", "--sensitivity"];
    let one = run_on("1", &dir.path().join("one"), &args);
    let two = run_on("2", &dir.path().join("two"), &args);
    assert_eq!(one, two);
    let r = json(&dir.path().join("one/replicates.json"));
    assert_eq!(r["replicates"], 5);
    assert_eq!(r["seeds"].as_array().unwrap().len(), 5);
    assert_eq!(r["seeds"][0], 1, "replicate 1 is the scenario's seed");
    let stdout = String::from_utf8(one.0).unwrap();
    assert!(stdout.contains("Across 5 seeds"), "{stdout}");
    let manifest = std::fs::read_to_string(dir.path().join("one/.rlsim-manifest")).unwrap();
    assert!(manifest.contains("\nreplicates.json\n") && manifest.contains("\nsensitivity.json\n"));
    // Every interval holds its mean, and the CSV has a row per contender and figure.
    for c in r["contenders"].as_array().unwrap() {
        for (name, e) in c["figures"].as_object().unwrap() {
            if e.is_null() {
                continue;
            }
            let (low, mean, high) = (e["low"].as_f64(), e["mean"].as_f64(), e["high"].as_f64());
            assert!(low <= mean && mean <= high, "{}: {name} {e}", c["name"]);
        }
    }
    let csv = String::from_utf8(one.1[1].clone()).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 9, "{csv}");
}

/// With the scraper Poisson at 30/min the three contenders trade the first place: pinned
/// counts over 10 seeds, below the 80% a stable recommendation needs.
#[test]
fn an_unstable_recommendation_is_counted_and_warned() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let set = [
        "--set",
        "traffic.scraper.arrival=poisson",
        "--set",
        "traffic.scraper.rate=30/min",
    ];
    let mut args = vec![PERIODIC, "--replicates", "10"];
    args.extend(set);
    run_on("2", &out, &args);
    let r = json(&out.join("replicates.json"));
    let s = &r["recommendation"];
    assert_eq!(s["recommended"], "token_bucket");
    assert_eq!(
        (s["chosen"].as_u64(), s["of"].as_u64()),
        (Some(5), Some(10))
    );
    assert_eq!(s["stable"], false);
    let by: Vec<&str> = s["by_replicate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(by.len(), 10);
    let firsts: Vec<(String, u64)> = r["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().into(),
                c["ranked_first"].as_u64().unwrap(),
            )
        })
        .collect();
    for (name, k) in &firsts {
        assert_eq!(
            by.iter().filter(|b| *b == name).count() as u64,
            *k,
            "{name}"
        );
    }
    assert_eq!(
        firsts,
        [
            ("fixed_window".into(), 2),
            ("sliding_window_log".into(), 3),
            ("token_bucket".into(), 5)
        ]
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the recommendation is not stable: token_bucket is recommended in 5 of 10 replicates (50%, under the 80%"),
        "{warnings}"
    );
    assert!(
        warnings.contains("sliding_window_log in 3, fixed_window in 2"),
        "{warnings}"
    );
    // The run's own verdict (replicate 1 is the run) carries the same finding, structured.
    let v = &json(&out.join("summary.json"))["verdict"];
    let first = by[0];
    assert_eq!(v["recommended"], first);
    let chosen = by.iter().filter(|b| **b == first).count() as u64;
    assert_eq!(v["stability"]["chosen"].as_u64(), Some(chosen));
    assert_eq!(v["stability"]["of"], 10);
    assert_eq!(v["stability"]["stable"], false);
    let unstable: Vec<&Value> = (v["warnings"].as_array().unwrap().iter())
        .filter(|w| w["kind"] == "unstable")
        .collect();
    assert_eq!(unstable.len(), 1, "{}", v["warnings"]);
    let text = unstable[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "The recommendation is not stable across seeds: {first} ranks first in {chosen} of 10 replicates"
        )),
        "{text}"
    );
}

/// periodic_scraper.toml is built to flip: timed as Poisson, or at 30/min, its scraper makes
/// token_bucket the recommendation instead of fixed_window.
#[test]
fn the_sensitivity_pass_names_the_inputs_that_flip() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let done = rlsim()
        .current_dir(repo())
        .args(["run", PERIODIC, "--sensitivity", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(done.get_output().stdout.clone()).unwrap();
    let s = json(&out.join("sensitivity.json"));
    assert_eq!(s["baseline"]["recommended"], "fixed_window");
    assert_eq!(
        s["flips"],
        serde_json::json!([
            "traffic.scraper.arrival=poisson: recommended token_bucket instead of fixed_window",
            "traffic.scraper.rate=30/min: recommended token_bucket instead of fixed_window"
        ])
    );
    let inputs = s["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 3);
    assert_eq!(inputs[2]["value"], "90/min");
    assert_eq!(inputs[2]["flips"], false);
    assert!(
        stdout.contains("traffic.scraper.arrival=poisson: recommended token_bucket instead of fixed_window (1 of 1)"),
        "{stdout}"
    );
    assert!(stdout.contains("traffic.scraper.rate=90/min: still fixed_window"));
    // summary.json's verdict: one `sensitive` warning per input that flips, no stability
    // (one replicate), and the terminal's verdict says the same.
    let v = &json(&out.join("summary.json"))["verdict"];
    assert!(v.get("stability").is_none(), "{v}");
    let sensitive: Vec<&str> = (v["warnings"].as_array().unwrap().iter())
        .filter(|w| w["kind"] == "sensitive")
        .map(|w| w["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        sensitive,
        [
            "Input traffic.scraper.arrival flips the verdict at poisson (token_bucket instead of \
             fixed_window): the recommendation depends on it.",
            "Input traffic.scraper.rate flips the verdict at 30/min (token_bucket instead of \
             fixed_window): the recommendation depends on it."
        ]
    );
    let flat = stdout.replace("\n           ", " ");
    assert!(
        flat.contains("  warning: Input traffic.scraper.arrival flips the verdict at poisson"),
        "{stdout}"
    );
}

#[test]
fn nat_warns_of_its_resonant_scraper_and_poisson_traffic_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nat");
    run_on(
        "2",
        &out,
        &["scenarios/nat.toml", "--replicates", "1", "--sensitivity"],
    );
    let warnings = json(&out.join("replicates.json"))["warnings"].clone();
    assert_eq!(warnings.as_array().unwrap().len(), 1, "{warnings}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with("source scraper sends exactly every 1s per client, and the 1m window of the policy and every contender is 60 of its periods"),
        "{w}"
    );
    // Jittered, the same scraper no longer resonates.
    let jittered = dir.path().join("jittered");
    run_on(
        "2",
        &jittered,
        &[
            "scenarios/nat.toml",
            "--replicates",
            "1",
            "--sensitivity",
            "--set",
            "traffic.scraper.jitter=5%",
        ],
    );
    assert_eq!(
        json(&jittered.join("replicates.json"))["warnings"],
        serde_json::json!([])
    );
    let poisson = write(
        dir.path(),
        "poisson.toml",
        "name = \"p\"\nduration = \"2m\"\nalgorithms = [\"fixed_window\", \"gcra\"]\n\
         [policy]\nlimit = 10\nwindow = \"1m\"\n\
         [[traffic]]\nname = \"a\"\nkind = \"poisson\"\nrate = \"60/min\"\n",
    );
    let out = dir.path().join("p");
    rlsim()
        .args(["run", "--replicates", "3", "--out"])
        .arg(&out)
        .arg(&poisson)
        .assert()
        .success();
    assert_eq!(
        json(&out.join("replicates.json"))["warnings"],
        serde_json::json!([])
    );
}

#[test]
fn jitter_moves_a_constant_source_deterministically() {
    let traffic = |set: &[&str]| {
        let done = rlsim()
            .current_dir(repo())
            .args(["traffic", PERIODIC])
            .args(set)
            .assert()
            .success();
        String::from_utf8(done.get_output().stdout.clone()).unwrap()
    };
    let plain = traffic(&[]);
    let jittered = traffic(&["--set", "traffic.scraper.jitter=5%"]);
    assert_eq!(jittered, traffic(&["--set", "traffic.scraper.jitter=5%"]));
    assert_ne!(plain, jittered);
    let scraper = |t: &str| t.lines().filter(|l| l.contains(",scraper,")).count();
    assert_eq!(scraper(&plain), scraper(&jittered));
    // The users' Poisson traffic is drawn from its own stream: the same with or without.
    let users = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains(",users,"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(users(&plain), users(&jittered));
}

fn refused(args: &[&str], dir: &Path) -> String {
    let done = rlsim().current_dir(dir).args(args).assert().code(2);
    String::from_utf8(done.get_output().stderr.clone()).unwrap()
}

#[test]
fn bad_replicates_and_uncertain_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let periodic = repo().join(PERIODIC);
    let p = periodic.to_str().unwrap();
    for n in ["0", "10001", "many"] {
        let err = refused(&["run", p, "--replicates", n], dir.path());
        assert!(err.contains("--replicates <N>"), "{n}: {err}");
    }
    let base = std::fs::read_to_string(&periodic).unwrap();
    let cases = [
        (
            base.replace("seed = 1\n", "seed = 1\nreplicates = 0\n"),
            "periodic.toml:19:14: field `replicates`: 0 is too small: must be a whole number of seeds from 1 to 10000",
        ),
        (
            base.replace(
                "set = \"traffic.scraper.rate\"",
                "set = \"traffic.scraper.speed_limit\"",
            ),
            "field `uncertain[1].values[0]`: `traffic.scraper.speed_limit=30/min` does not fit the scenario:",
        ),
        (
            base.replace(
                "values = [\"30/min\", \"90/min\"]",
                "values = [\"30/min\", \"fast\"]",
            ),
            "field `uncertain[1].values[1]`: `traffic.scraper.rate=fast` does not fit the scenario:",
        ),
        (
            base.replace("set = \"traffic.scraper.arrival\"", "set = \"seed\""),
            "field `uncertain[0].set`: `seed` cannot be uncertain",
        ),
        (
            base.replace("values = [\"poisson\"]", "values = []"),
            "field `uncertain[0].values`: must list at least one value to try",
        ),
        (
            base.replace(
                "rate = \"60/min\"\n",
                "rate = \"60/min\"\njitter = \"80%\"\n",
            ),
            "field `traffic[1].jitter`: must be a share of the gap between requests, from \"0%\" to \"50%\", got `80%`",
        ),
        (
            base.replace(
                "rate = \"1.5/min\"\n",
                "rate = \"1.5/min\"\njitter = \"5%\"\n",
            ),
            "field `traffic[0].jitter`: applies only to a source with constant arrivals",
        ),
    ];
    for (text, wanted) in cases {
        let file = write(dir.path(), "periodic.toml", &text);
        let err = refused(&["run", file.to_str().unwrap()], dir.path());
        assert!(err.contains(wanted), "wanted {wanted}\ngot {err}");
    }
}
