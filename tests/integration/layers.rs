//! The layering of `src/` (docs/architecture.md): no module imports a higher layer, so import
//! cycles between modules cannot come back. A plain text scan of every `crate::<module>` path
//! outside comments (`super::` paths stay within a top-level module: `src/` has no
//! `super::super` out of one).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first. A module may import modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["time", "error", "suggest", "rng", "prefetch", "allocator"],
    &["policy", "output"],
    &["algorithms"],
    &["traffic"],
    &["metrics"],
    &["scenario"],
    &["sim"],
    &["observe", "store"],
    &["report"],
    &["sweep"],
    &["check", "bench"],
    &["terminal", "manpage"],
    &["commands"],
    &["cli"],
];

/// Known upward imports, each to be removed by the work that ends it. The test fails when one
/// no longer occurs, so the list cannot go stale.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names as `crate::<module>`, outside `//` comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `mycrate::`, not `crate::`
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                // `crate::{a, b}`: every name in the group.
                if let Some(group) = rest.strip_prefix('{') {
                    let group = group.split('}').next().unwrap_or("");
                    for part in group.split(',') {
                        let name = part.trim().split("::").next().unwrap_or("").trim();
                        if !name.is_empty() {
                            found.insert(name.to_string());
                        }
                    }
                }
            } else {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut seen_exceptions = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative.components().next().unwrap().as_os_str();
        let module = top.to_str().unwrap().trim_end_matches(".rs");
        if matches!(module, "lib" | "main") {
            continue;
        }
        let Some(own) = layer(module) else {
            violations.push(format!("{module}: not in the layer table of this test"));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for target in imports(&text) {
            if target == module || target == "self" {
                continue;
            }
            let Some(theirs) = layer(&target) else {
                violations.push(format!(
                    "{}: imports `crate::{target}`, not in the layer table",
                    relative.display()
                ));
                continue;
            };
            if theirs < own {
                continue;
            }
            if EXCEPTIONS.iter().any(|e| e.0 == module && e.1 == target) {
                seen_exceptions.insert((module.to_string(), target.clone()));
                continue;
            }
            violations.push(format!(
                "{}: `{module}` imports `crate::{target}`, which is not a lower layer",
                relative.display()
            ));
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    for (from, to, why) in EXCEPTIONS {
        assert!(
            seen_exceptions.contains(&(from.to_string(), to.to_string())),
            "`{from}` no longer imports `{to}` ({why}): remove the exception"
        );
    }
}

#[test]
fn the_scan_sees_every_form_of_path() {
    let text = "use crate::time::Nanos;\nuse crate::{policy::Policy, traffic};\n\
                let x = crate::sim::run(); // crate::check in a comment\n/// crate::report\n";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["policy", "sim", "time", "traffic"]);
}
