//! YAML configurations (Envoy, Traefik, and any other YAML kind) read with saphyr's
//! `MarkedYamlOwned`, which keeps each node's line, behind typed getters whose errors name the
//! file, the line and the field's path (`descriptors[1].rate_limit.unit`), so a bad YAML config
//! is reported like a bad nginx directive (`Error::Config`, exit 2).

use crate::error::{Error, Result};
use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use std::path::{Path, PathBuf};

/// A loaded YAML file: its first document.
#[derive(Debug, Clone)]
pub struct Doc {
    file: PathBuf,
    root: MarkedYamlOwned,
}

/// One node of a [`Doc`] with its path from the root (empty for the root itself).
#[derive(Debug, Clone)]
pub struct Node<'a> {
    file: &'a Path,
    path: String,
    node: &'a MarkedYamlOwned,
    /// The line of the key a mapping's value is under (a nested mapping starts below it).
    key_line: Option<usize>,
}

/// Reads and parses `path`; a YAML syntax error names its line.
pub fn load(path: &Path) -> Result<Doc> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(path, &text)
}

/// Parses `text` as the content of `path` (which is only named in errors).
pub fn parse(path: &Path, text: &str) -> Result<Doc> {
    let docs = MarkedYamlOwned::load_from_str(text)
        .map_err(|e| super::config_error(path, e.marker().line(), "yaml", e.info().to_string()))?;
    let root = docs
        .into_iter()
        .next()
        .ok_or_else(|| super::config_error(path, 1, "yaml", "the file holds no YAML document"))?;
    Ok(Doc {
        file: path.to_path_buf(),
        root,
    })
}

impl Doc {
    pub fn root(&self) -> Node<'_> {
        Node {
            file: &self.file,
            path: String::new(),
            node: &self.root,
            key_line: None,
        }
    }
}

/// The text of a scalar as written (numbers and booleans printed back).
fn scalar_text(s: &ScalarOwned) -> Option<String> {
    match s {
        ScalarOwned::String(t) => Some(t.clone()),
        ScalarOwned::Integer(i) => Some(i.to_string()),
        ScalarOwned::FloatingPoint(f) => Some(f.to_string()),
        ScalarOwned::Boolean(b) => Some(b.to_string()),
        ScalarOwned::Null => None,
    }
}

fn kind_name(data: &YamlDataOwned<MarkedYamlOwned>) -> &'static str {
    match data {
        YamlDataOwned::Value(ScalarOwned::Null) => "null",
        YamlDataOwned::Value(ScalarOwned::String(_)) | YamlDataOwned::Representation(..) => {
            "a string"
        }
        YamlDataOwned::Value(ScalarOwned::Integer(_)) => "an integer",
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(_)) => "a number",
        YamlDataOwned::Value(ScalarOwned::Boolean(_)) => "a boolean",
        YamlDataOwned::Sequence(_) => "a list",
        YamlDataOwned::Mapping(_) => "a mapping",
        YamlDataOwned::Tagged(..) => "a tagged node",
        YamlDataOwned::Alias(_) => "an alias",
        YamlDataOwned::BadValue => "an unreadable value",
    }
}

impl<'a> Node<'a> {
    pub fn file(&self) -> &'a Path {
        self.file
    }

    /// The field's path from the root (`descriptors[1].rate_limit`; `(top level)` for the root).
    pub fn path(&self) -> &str {
        if self.path.is_empty() {
            "(top level)"
        } else {
            &self.path
        }
    }

    /// The 1-based line the node starts on (a mapping value: its key's line).
    pub fn line(&self) -> usize {
        self.key_line.unwrap_or(self.node.span.start.line()).max(1)
    }

    /// `file:line` of the node, for rule comments and notes.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line())
    }

    /// An error naming this node's file, line and path.
    pub fn error(&self, message: impl Into<String>) -> Error {
        super::config_error(self.file, self.line(), self.path(), message)
    }

    fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.node.data, YamlDataOwned::Value(ScalarOwned::Null))
    }

    pub fn is_mapping(&self) -> bool {
        matches!(self.node.data, YamlDataOwned::Mapping(_))
    }

    /// The mapping's entries in order, each with its path; an error unless a mapping.
    pub fn entries(&self) -> Result<Vec<(String, Node<'a>)>> {
        let YamlDataOwned::Mapping(m) = &self.node.data else {
            return Err(self.error(format!(
                "expected a mapping, found {}",
                kind_name(&self.node.data)
            )));
        };
        let mut out = Vec::new();
        for (k, v) in m {
            let name = match &k.data {
                YamlDataOwned::Value(s) => scalar_text(s),
                _ => None,
            }
            .ok_or_else(|| self.error("a mapping key is not a plain scalar"))?;
            let path = self.child_path(&name);
            out.push((
                name,
                Node {
                    file: self.file,
                    path,
                    node: v,
                    key_line: Some(k.span.start.line()),
                },
            ));
        }
        Ok(out)
    }

    /// The value of `key` in this mapping; `None` when absent or null (YAML's `key:`).
    pub fn get(&self, key: &str) -> Result<Option<Node<'a>>> {
        Ok(self
            .entries()?
            .into_iter()
            .find(|(k, v)| k == key && !v.is_null())
            .map(|(_, v)| v))
    }

    /// The value of `key`, which must be there.
    pub fn req(&self, key: &str) -> Result<Node<'a>> {
        self.get(key)?.ok_or_else(|| {
            super::config_error(
                self.file,
                self.line(),
                &self.child_path(key),
                format!("`{key}` is required here"),
            )
        })
    }

    /// The keys of this mapping that are not in `known`, with their nodes: a caller names them
    /// in an error or a note, never drops them silently.
    pub fn unknown(&self, known: &[&str]) -> Result<Vec<(String, Node<'a>)>> {
        Ok(self
            .entries()?
            .into_iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .collect())
    }

    /// An error for the first key not in `known`.
    pub fn only(&self, known: &[&str]) -> Result<()> {
        match self.unknown(known)?.first() {
            None => Ok(()),
            Some((k, v)) => Err(v.error(format!(
                "`{k}` is not supported (known here: {})",
                known.join(", ")
            ))),
        }
    }

    /// The sequence's items, each with its path `path[i]`; an error unless a list.
    pub fn items(&self) -> Result<Vec<Node<'a>>> {
        let YamlDataOwned::Sequence(s) = &self.node.data else {
            return Err(self.error(format!(
                "expected a list, found {}",
                kind_name(&self.node.data)
            )));
        };
        Ok(s.iter()
            .enumerate()
            .map(|(i, n)| Node {
                file: self.file,
                path: format!("{}[{i}]", self.path),
                node: n,
                key_line: None,
            })
            .collect())
    }

    /// A string scalar; numbers and booleans are taken as written (`value: 5` is `"5"`).
    pub fn str(&self) -> Result<String> {
        match &self.node.data {
            YamlDataOwned::Value(s) => scalar_text(s),
            YamlDataOwned::Representation(t, ..) => Some(t.clone()),
            _ => None,
        }
        .ok_or_else(|| {
            self.error(format!(
                "expected a string, found {}",
                kind_name(&self.node.data)
            ))
        })
    }

    /// A non-negative integer (a quoted one too, as protobuf's JSON mapping allows).
    pub fn u64(&self) -> Result<u64> {
        let bad = || {
            self.error(format!(
                "expected a non-negative integer, found {}",
                kind_name(&self.node.data)
            ))
        };
        match &self.node.data {
            YamlDataOwned::Value(ScalarOwned::Integer(i)) => u64::try_from(*i).map_err(|_| bad()),
            YamlDataOwned::Value(ScalarOwned::String(t)) => t.trim().parse().map_err(|_| bad()),
            _ => Err(bad()),
        }
    }

    /// A whole number from `min` to `max` (a quoted one too), refused with the range and
    /// unit: `1e+30 is too large: must be a whole number of tokens from 1 to 4294967295`.
    pub fn whole(&self, what: &str, min: u64, max: u64) -> Result<u64> {
        let written = match &self.node.data {
            YamlDataOwned::Value(ScalarOwned::Integer(i)) => i.to_string(),
            // YAML reads an integer past i64 as a float: say its digits.
            YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => f.into_inner().to_string(),
            YamlDataOwned::Value(ScalarOwned::String(t)) => t.trim().to_string(),
            d => kind_name(d).to_string(),
        };
        crate::error::whole(&written, min, max).map_err(|why| {
            let range = crate::error::must_be(what, min, max);
            self.error(format!("{written} is {why}: {range}"))
        })
    }

    /// An integer, possibly negative.
    pub fn i64(&self) -> Result<i64> {
        match &self.node.data {
            YamlDataOwned::Value(ScalarOwned::Integer(i)) => Ok(*i),
            YamlDataOwned::Value(ScalarOwned::String(t)) if t.trim().parse::<i64>().is_ok() => {
                Ok(t.trim().parse().expect("checked"))
            }
            d => Err(self.error(format!("expected an integer, found {}", kind_name(d)))),
        }
    }

    /// A number (integer or float).
    pub fn f64(&self) -> Result<f64> {
        match &self.node.data {
            YamlDataOwned::Value(ScalarOwned::Integer(i)) => Ok(*i as f64),
            YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => Ok(f.into_inner()),
            d => Err(self.error(format!("expected a number, found {}", kind_name(d)))),
        }
    }

    pub fn bool(&self) -> Result<bool> {
        match &self.node.data {
            YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Ok(*b),
            d => Err(self.error(format!("expected true or false, found {}", kind_name(d)))),
        }
    }

    /// `key`'s string, if present.
    pub fn opt_str(&self, key: &str) -> Result<Option<String>> {
        self.get(key)?.map(|c| c.str()).transpose()
    }

    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        self.get(key)?.map(|c| c.u64()).transpose()
    }

    pub fn opt_i64(&self, key: &str) -> Result<Option<i64>> {
        self.get(key)?.map(|c| c.i64()).transpose()
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        self.get(key)?.map(|c| c.bool()).transpose()
    }

    pub fn req_str(&self, key: &str) -> Result<String> {
        self.req(key)?.str()
    }

    #[cfg(test)]
    pub fn req_u64(&self, key: &str) -> Result<u64> {
        self.req(key)?.u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        parse(Path::new("c.yaml"), text).unwrap()
    }

    #[test]
    fn getters_name_file_line_and_path() {
        let d = doc(
            "domain: d\ndescriptors:\n  - key: a\n  - key: b\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: many\n",
        );
        let r = d.root();
        assert_eq!(r.req_str("domain").unwrap(), "d");
        let items = r.req("descriptors").unwrap().items().unwrap();
        assert_eq!(items.len(), 2);
        let rl = items[1].req("rate_limit").unwrap();
        assert_eq!(rl.req_str("unit").unwrap(), "fortnight");
        let e = rl.req_u64("requests_per_unit").unwrap_err().to_string();
        assert_eq!(
            e,
            "c.yaml:7: directive `descriptors[1].rate_limit.requests_per_unit`: expected a non-negative integer, found a string"
        );
        let e = items[0].req("value").unwrap_err().to_string();
        assert_eq!(
            e,
            "c.yaml:3: directive `descriptors[0].value`: `value` is required here"
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = parse(Path::new("c.yaml"), "a: 1\nb: [1, 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.yaml:"), "{e}");
        assert!(e.contains("directive `yaml`"), "{e}");
    }

    #[test]
    fn unknown_keys_are_named() {
        let d = doc("a: 1\nzzz: 2\n");
        let e = d.root().only(&["a"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "c.yaml:2: directive `zzz`: `zzz` is not supported (known here: a)"
        );
        // Null is absent; numbers read as strings when a string is wanted.
        let d = doc("a:\nb: 5\nc: '7'\n");
        assert!(d.root().get("a").unwrap().is_none());
        assert_eq!(d.root().req_str("b").unwrap(), "5");
        assert_eq!(d.root().req_u64("c").unwrap(), 7);
    }
}

/// Where a node is, kept for errors found after reading it.
#[derive(Debug, Clone)]
pub struct Loc {
    file: std::path::PathBuf,
    line: usize,
    field: String,
}

impl Loc {
    pub fn of(n: &Node<'_>) -> Loc {
        Loc {
            file: n.file().to_path_buf(),
            line: n.line(),
            field: n.path().to_string(),
        }
    }

    /// `file:line`, for notes and comments.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }

    pub fn error(&self, m: impl Into<String>) -> crate::error::Error {
        super::config_error(&self.file, self.line, &self.field, m)
    }
}
