//! The JSON schemas of docs/schema/: generated from the result models (schemars), so the shipped
//! files cannot drift from the code, and real outputs of shipped scenarios validate against them.
//!
//! After changing a result model, regenerate them with
//! `RLSIM_WRITE_SCHEMAS=1 cargo test --test integration schema::`.

use crate::util::{repo, rlsim};
use serde_json::Value;

/// Each shipped schema: its file under docs/schema/ and what `rlsim schema` prints for it.
fn schemas() -> [(&'static str, String); 3] {
    ["summary", "sweep", "check"].map(|document| {
        let out = rlsim().args(["schema", document]).output().unwrap();
        assert!(out.status.success(), "rlsim schema {document}");
        let name = match document {
            "summary" => "summary.schema.json",
            "sweep" => "sweep.schema.json",
            _ => "check.schema.json",
        };
        (name, String::from_utf8(out.stdout).unwrap())
    })
}

#[test]
fn shipped_schemas_are_the_generated_ones() {
    let write = std::env::var("RLSIM_WRITE_SCHEMAS").is_ok_and(|v| v == "1");
    for (name, generated) in schemas() {
        let path = repo().join("docs/schema").join(name);
        if write {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let shipped = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            shipped == generated,
            "docs/schema/{name} differs from the models' schema: regenerate it with \
             RLSIM_WRITE_SCHEMAS=1 cargo test --test integration schema::"
        );
        let value: Value = serde_json::from_str(&shipped).unwrap();
        let version = &value["properties"]["schema_version"];
        assert_eq!(version["type"], "integer", "{name} declares schema_version");
        assert!(
            value["required"]
                .as_array()
                .unwrap()
                .contains(&"schema_version".into())
        );
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("docs/schema").join(name)).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(validator: &jsonschema::Validator, what: &str, document: &[u8]) {
    let instance: Value = serde_json::from_slice(document).unwrap();
    assert_eq!(
        instance["schema_version"],
        rlsim::report::SCHEMA_VERSION,
        "{what}"
    );
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}:\n{}", errors.join("\n"));
}

/// Shipped scenarios between them use every part of the documents: alerts (boundary, nat),
/// contenders and their rules (nat, tiers), simulated deployments (redis_outage), a replayed
/// trace (replay), a sweep with goals (tune_limit) and a baseline comparison.
#[test]
fn outputs_of_shipped_scenarios_validate_against_the_schemas() {
    let scenarios = ["boundary", "nat", "redis_outage", "tiers", "replay"];
    let paths: Vec<_> = scenarios
        .iter()
        .map(|s| repo().join(format!("scenarios/{s}.toml")))
        .collect();
    let summary = validator("summary.schema.json");
    let dir = tempfile::tempdir().unwrap();
    for path in &paths {
        let out = rlsim()
            .arg("run")
            .arg(path)
            .args(["--quiet", "--format", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {out:?}", path.display());
        assert_valid(&summary, &path.display().to_string(), &out.stdout);
    }
    let baseline = dir.path().join("baseline.json");
    let check = rlsim()
        .arg("check")
        .args(&paths)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    std::fs::write(&baseline, &check.stdout).unwrap();
    let check_schema = validator("check.schema.json");
    assert_valid(&check_schema, "check --format json", &check.stdout);
    let compared = rlsim()
        .arg("check")
        .args(&paths)
        .args(["--format", "json", "--baseline"])
        .arg(&baseline)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&compared.stdout).unwrap();
    assert!(doc["baseline"]["compared"].as_u64().unwrap() > 0);
    assert_valid(&check_schema, "check --baseline", &compared.stdout);
    let out = dir.path().join("sweep");
    let sweep = rlsim()
        .arg("sweep")
        .arg(repo().join("scenarios/tune_limit.toml"))
        .args(["--set", "policy.limit=90,120", "--set", "policy.burst=60"])
        .args(["--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let _ = sweep;
    let sweep_schema = validator("sweep.schema.json");
    let file = std::fs::read(out.join("sweep.json")).unwrap();
    assert_valid(&sweep_schema, "sweep.json", &file);
    // A shard's file too (it has `shard` and no recommendation).
    let shard = dir.path().join("shard");
    rlsim()
        .arg("sweep")
        .arg(repo().join("scenarios/tune_limit.toml"))
        .args(["--set", "policy.limit=90,120", "--set", "policy.burst=60"])
        .args(["--quiet", "--shard", "1/2", "--out"])
        .arg(&shard)
        .assert()
        .success();
    assert_valid(
        &sweep_schema,
        "a shard's sweep.json",
        &std::fs::read(shard.join("sweep.json")).unwrap(),
    );
}

/// The validation above can fail: a document that breaks the schema is refused.
#[test]
fn a_document_breaking_the_schema_is_refused() {
    let summary = validator("summary.schema.json");
    let out = rlsim()
        .arg("run")
        .arg(repo().join("scenarios/boundary.toml"))
        .args(["--quiet", "--format", "json"])
        .output()
        .unwrap();
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary.is_valid(&doc));
    doc["algorithms"][0]["admitted"] = "many".into();
    assert!(!summary.is_valid(&doc));
    doc["algorithms"][0]["admitted"] = 1.into();
    doc.as_object_mut().unwrap().remove("schema_version");
    assert!(!summary.is_valid(&doc));
}

#[test]
fn an_unknown_document_is_refused_with_the_ones_there_are() {
    let out = rlsim().args(["schema", "summery"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("summery") && err.contains("summary, sweep, check"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
