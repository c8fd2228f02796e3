//! What the format tests share: reading a text as one format, and checking its bad lines.

use super::{Outcome, Production, Record, ReplayOptions, TraceFormat, open};
use crate::traffic::method::Method;

/// Every outcome of reading `text` (written to a file named `t`) as `format`.
pub fn outcomes(format: TraceFormat, text: &str) -> Vec<Result<Record, String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t");
    std::fs::write(&path, text).unwrap();
    let options = ReplayOptions {
        format,
        ..ReplayOptions::default()
    };
    read_file(&path, &options)
}

/// Every outcome of reading the file at `path` with `options`.
fn read_file(path: &std::path::Path, options: &ReplayOptions) -> Vec<Result<Record, String>> {
    let mut reader = open(path, None, options).unwrap();
    let mut out = Vec::new();
    loop {
        let mut rec = Record::default();
        match reader.read(&mut rec).unwrap() {
            Outcome::Record => out.push(Ok(rec)),
            Outcome::Eof => return out,
            Outcome::Bad(e) => out.push(Err(e.to_string())),
        }
    }
}

/// Every outcome of reading `text` with `options` as it is, as gzip (in two members, as rotated
/// logs are concatenated) and as zstd, under file names that say nothing: the three must read
/// identically (each written to a file named `t`, so errors read `t:LINE:`).
pub fn outcomes_in_every_form(options: &ReplayOptions, text: &str) -> Vec<Result<Record, String>> {
    use std::io::Write;
    let half = text.len() / 2;
    let mut gz = Vec::new();
    for part in [&text.as_bytes()[..half], &text.as_bytes()[half..]] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(part).unwrap();
        gz.extend(e.finish().unwrap());
    }
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let mut forms = [text.as_bytes().to_vec(), gz, zst]
        .into_iter()
        .map(|bytes| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t");
            std::fs::write(&path, bytes).unwrap();
            read_file(&path, options)
        });
    let plain = forms.next().unwrap();
    for (form, other) in ["gzip", "zstd"].into_iter().zip(forms) {
        assert_eq!(other, plain, "the {form} copy reads otherwise");
    }
    plain
}

/// A record of an address and an endpoint (the identity fields most native logs record), as a
/// reader must give it.
pub fn record(
    line: u64,
    epoch_ns: u64,
    ip: &str,
    endpoint: &str,
    method: Option<Method>,
    status: Option<u16>,
    production: Option<Production>,
) -> Record {
    Record {
        epoch_ns,
        fields: [ip, "", "", endpoint].map(String::from),
        status,
        production,
        method,
        line,
        ..Record::default()
    }
}

/// Reads `header` then each case's line, each of which must be reported as a bad line naming
/// the file, its line number and (when given) the field; returns how many were.
pub fn bad_lines(format: TraceFormat, header: &str, cases: &[(&str, Option<&str>)]) -> usize {
    let mut text = header.to_string();
    for (line, _) in cases {
        text.push_str(line);
        text.push('\n');
    }
    let out = outcomes(format, &text);
    let first = header.lines().count() + 1;
    let errors: Vec<&String> = out.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), cases.len(), "{out:?}");
    for (k, ((_, field), e)) in cases.iter().zip(&errors).enumerate() {
        assert!(e.contains(&format!("t:{}:", first + k)), "case {k}: {e}");
        if let Some(field) = field {
            assert!(e.contains(&format!("`{field}`")), "case {k}: {e}");
        }
    }
    errors.len()
}

/// The shipped samples (`scenarios/data/native/`) and their formats.
const SAMPLES: [(&str, TraceFormat); 10] = [
    ("alb.log", TraceFormat::Alb),
    ("cloudfront.log", TraceFormat::Cloudfront),
    ("cloudflare.jsonl", TraceFormat::Cloudflare),
    ("envoy.log", TraceFormat::Envoy),
    ("envoy.jsonl", TraceFormat::EnvoyJson),
    ("gclb.jsonl", TraceFormat::Gclb),
    ("k6.jsonl", TraceFormat::K6),
    ("nginx.log", TraceFormat::Nginx),
    ("vegeta.jsonl", TraceFormat::Vegeta),
    ("vegeta.csv", TraceFormat::VegetaCsv),
];

fn sample(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/data/native");
    std::fs::read(dir.join(name)).unwrap()
}

/// Every record of `path`, its format detected, with `same_second = "random"` (seeded).
fn records_of(path: &std::path::Path) -> (TraceFormat, Vec<Result<Record, String>>) {
    let data = super::TraceData::default();
    let format = super::detect_format(path, &data).unwrap();
    let options = ReplayOptions {
        format,
        same_second: super::SameSecond::Random,
        seed: 7,
        ..ReplayOptions::default()
    };
    (format, read_file(path, &options))
}

/// Each sample is detected as its format and parses whole; a gzip copy (in two members, as
/// rotated logs are concatenated) and a zstd copy, under a name that says nothing, read the
/// same records; production's refusals are where the generator wrote them.
#[test]
fn samples_are_detected_and_compressed_copies_read_the_same() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in SAMPLES {
        let bytes = sample(name);
        let plain = dir.path().join("plain");
        std::fs::write(&plain, &bytes).unwrap();
        let (detected, records) = records_of(&plain);
        assert_eq!(detected, format, "{name}");
        assert!(records.len() > 400, "{name}: {}", records.len());
        assert!(records.iter().all(Result::is_ok), "{name}");
        let half = bytes.len() / 2;
        let mut gz = Vec::new();
        for part in [&bytes[..half], &bytes[half..]] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(part).unwrap();
            gz.extend(e.finish().unwrap());
        }
        let zst = zstd::encode_all(&bytes[..], 3).unwrap();
        for (suffix, packed) in [("gz", gz), ("zst", zst)] {
            let path = dir.path().join(format!("copy-{suffix}.txt"));
            std::fs::write(&path, packed).unwrap();
            assert_eq!(
                records_of(&path),
                (format, records.clone()),
                "{name} {suffix}"
            );
        }
        let refused = records
            .iter()
            .filter(|r| r.as_ref().unwrap().production == Some(super::Production::Refused))
            .count();
        let expected = match format {
            TraceFormat::Cloudfront
            | TraceFormat::K6
            | TraceFormat::Vegeta
            | TraceFormat::VegetaCsv => 0,
            // nginx's own limit_req (1r/s, burst 60): every other request of the scraper past
            // its burst (scenarios/replay_nginx.toml derives it).
            TraceFormat::Nginx => 60,
            _ => 120,
        };
        assert_eq!(refused, expected, "{name}");
    }
}

/// Bad lines among a sample's are skipped under `--skip-bad-lines` and counted, and the replay
/// is the sample's; without it the first stops the replay naming the file and line.
#[test]
fn bad_lines_in_samples_are_skipped_and_counted() {
    use crate::traffic::{KeySpace, Source};
    let dir = tempfile::tempdir().unwrap();
    let spec = crate::policy::KeySpec::new(vec![crate::policy::KeyField::Endpoint]).unwrap();
    for (name, format) in SAMPLES {
        let text = String::from_utf8(sample(name)).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let at = lines.len() / 2;
        lines.insert(at, "garbage that no format reads");
        lines.insert(at + 1, "{\"also\": \"not a record\"");
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        let clean = dir.path().join(format!("clean-{name}"));
        std::fs::write(&clean, &text).unwrap();
        let replay = |path: &std::path::Path, skip: bool| {
            let options = ReplayOptions {
                format,
                skip_bad_lines: skip,
                ..ReplayOptions::default()
            };
            let mut keys = KeySpace::new();
            let mut source =
                super::ReplaySource::open(path, 0, 0, u64::MAX, &spec, &options).unwrap();
            let mut times = Vec::new();
            loop {
                match source.next_arrival(&mut keys) {
                    Ok(Some(a)) => times.push((a.time, a.method)),
                    Ok(None) => return Ok((times, source.skipped_lines())),
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        let (times, skipped) = replay(&path, true).unwrap();
        assert_eq!(skipped, 2, "{name}");
        assert_eq!((times, 0), replay(&clean, false).unwrap(), "{name}");
        let err = replay(&path, false).unwrap_err();
        assert!(
            err.contains(&format!("{name}:{}:", at + 1)) && err.contains("--skip-bad-lines"),
            "{name}: {err}"
        );
    }
}
