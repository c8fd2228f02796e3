//! JSON configurations (express-rate-limit and NestJS options, Kong plugin objects): read with
//! serde_json into a kind's typed structs through `serde_path_to_error`, so a syntax or type
//! error names the file, line, column and the field path; a small scan of the text finds the
//! line of any field path for the semantic errors and the rules' comments.

use super::{Identity, Who};
use crate::error::{Error, Location, Result};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A JSON file read: its path and the line of every field path (`throttlers[1].ttl`).
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    lines: HashMap<String, usize>,
}

/// Reads `path` as `T`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<(T, Source)> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(path, &text)
}

/// Parses `text` (the content of `path`) as `T`.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<(T, Source)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        let field = e.path().to_string();
        Error::Scenario {
            location: Location {
                path: path.to_path_buf(),
                line: Some(inner.line().max(1)),
                column: Some(inner.column().max(1)),
            },
            message: number_message(&field, inner, text).unwrap_or_else(|| {
                inner
                    .to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or("")
                    .to_string()
            }),
            field: (field != ".").then_some(field),
        }
    })?;
    de.end().map_err(|e| Error::Scenario {
        location: Location {
            path: path.to_path_buf(),
            line: Some(e.line()),
            column: Some(e.column()),
        },
        field: None,
        message: "trailing characters after the JSON value".into(),
    })?;
    Ok((
        value,
        Source {
            path: path.to_path_buf(),
            lines: lines(text),
        },
    ))
}

/// The number fields of the JSON kinds, by their last name, and the range each one's import
/// checks: a value serde refuses (a string, `1e400`, `-1` for a count) is refused with it.
const NUMBER_FIELDS: &[(&str, &str)] = &[
    (
        "windowMs",
        "a whole number of milliseconds from 0 to 4294967295",
    ),
    ("limit", "a whole number of requests from 1 to 4294967295"),
    ("max", "a whole number of requests from 1 to 4294967295"),
    ("ttl", "a whole number of milliseconds from 1 to 4294967295"),
    (
        "blockDuration",
        "a whole number of milliseconds from 1 to 4294967295",
    ),
    ("statusCode", "an HTTP status from 400 to 599"),
    ("status_code", "an HTTP status from 400 to 599"),
    (
        "period",
        "a period of 10, 60, 120, 300, 600 or 3600 seconds",
    ),
    (
        "requests_per_period",
        "a whole number of requests from 1 to 4294967295",
    ),
    (
        "mitigation_timeout",
        "a whole number of seconds from 0 to 86400",
    ),
];

/// rlsim's words for serde's refusal of a number field's value (`invalid type: floating point
/// `1e+20`, expected u64`, `number out of range`): the value as written, and the field's range.
fn number_message(field: &str, e: &serde_json::Error, text: &str) -> Option<String> {
    let name = field.rsplit('.').next().unwrap_or(field);
    let (_, range) = NUMBER_FIELDS.iter().find(|(n, _)| *n == name)?;
    let message = e.to_string();
    let about_number = message.starts_with("number out of range")
        || ["f64", "u64", "i64", "u32", "u16"]
            .iter()
            .any(|t| message.contains(&format!("expected {t}")));
    if !about_number || e.line() == 0 {
        return None;
    }
    // The value ends where serde stopped: the line's text up to the column, back to a separator.
    let line = text.lines().nth(e.line() - 1).unwrap_or_default();
    let upto = line.get(..e.column().min(line.len())).unwrap_or(line);
    let written = upto
        .rsplit([' ', '\t', ':', ',', '[', '{'])
        .next()
        .unwrap_or(upto);
    let why = match written.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        true => "is out of range",
        false => "is not a number",
    };
    Some(format!("{written} {why}: must be {range}"))
}

impl Source {
    /// The line `field` is written on: the nearest enclosing field's when it is not written
    /// (a default), else line 1.
    pub fn line(&self, field: &str) -> usize {
        let mut f = field;
        loop {
            if let Some(&l) = self.lines.get(f) {
                return l;
            }
            match f.rfind(['.', '[']) {
                Some(i) => f = &f[..i],
                None => return 1,
            }
        }
    }

    /// `file:line` of `field`, as the comments and notes name it.
    pub fn at(&self, field: &str) -> String {
        format!("{}:{}", self.path.display(), self.line(field))
    }

    /// An error about `field` (exit 2), naming the file, the field's line and its path.
    pub fn error(&self, field: &str, message: impl Into<String>) -> Error {
        Error::Scenario {
            location: Location {
                path: self.path.clone(),
                line: Some(self.line(field)),
                column: None,
            },
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
}

/// The line of every value of a JSON text that parsed, by its path as `serde_path_to_error`
/// writes it (`a.b[0].c`); a member's line is its key's.
fn lines(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    let mut scan = Scan {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
    };
    scan.value(String::new(), &mut out);
    out
}

struct Scan {
    chars: Vec<char>,
    i: usize,
    line: usize,
}

impl Scan {
    fn blank(&mut self) {
        while let Some(&c) = self.chars.get(self.i) {
            if !c.is_whitespace() {
                break;
            }
            if c == '\n' {
                self.line += 1;
            }
            self.i += 1;
        }
    }

    /// A string at `i` (its opening quote), unescaped as far as keys need.
    fn string(&mut self) -> String {
        let mut s = String::new();
        self.i += 1;
        while let Some(&c) = self.chars.get(self.i) {
            self.i += 1;
            match c {
                '"' => break,
                '\\' => {
                    if let Some(&e) = self.chars.get(self.i) {
                        s.push(e);
                    }
                    self.i += 1;
                }
                _ => s.push(c),
            }
        }
        s
    }

    fn value(&mut self, path: String, out: &mut HashMap<String, usize>) {
        self.blank();
        out.entry(path.clone()).or_insert(self.line);
        match self.chars.get(self.i) {
            Some('{') => {
                self.i += 1;
                loop {
                    self.blank();
                    match self.chars.get(self.i) {
                        Some('"') => {
                            let line = self.line;
                            let key = self.string();
                            let p = if path.is_empty() {
                                key
                            } else {
                                format!("{path}.{key}")
                            };
                            out.insert(p.clone(), line);
                            self.blank();
                            self.i += 1; // ':'
                            self.value(p, out);
                        }
                        Some(',') => self.i += 1,
                        Some('}') | None => {
                            self.i += 1;
                            return;
                        }
                        Some(_) => self.i += 1,
                    }
                }
            }
            Some('[') => {
                self.i += 1;
                let mut n = 0;
                loop {
                    self.blank();
                    match self.chars.get(self.i) {
                        Some(',') => self.i += 1,
                        Some(']') | None => {
                            self.i += 1;
                            return;
                        }
                        Some(_) => {
                            self.value(format!("{path}[{n}]"), out);
                            n += 1;
                        }
                    }
                }
            }
            Some('"') => {
                self.string();
            }
            Some(_) => {
                while let Some(&c) = self.chars.get(self.i) {
                    if matches!(c, ',' | '}' | ']') || c.is_whitespace() {
                        break;
                    }
                    self.i += 1;
                }
            }
            None => {}
        }
    }
}

/// Express's `trust proxy` setting (`app.set('trust proxy', ...)`), which decides `req.ip`,
/// the address express-rate-limit and NestJS key on (Express's `compileTrust`, proxy-addr).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum TrustProxy {
    /// `true`: the leftmost X-Forwarded-For entry; `false` (Express's default): the peer.
    All(bool),
    /// A hop count: that many proxies in front of the app are trusted.
    Hops(u32),
    /// Addresses, CIDRs and proxy-addr's names (`loopback`, `linklocal`, `uniquelocal`),
    /// as a list or a comma-separated string.
    List(Vec<String>),
    One(String),
}

/// The identity table `req.ip` is under `trust`, IPv6 cut to `ipv6_prefix`; the comment lines
/// say what it means.
pub fn request_ip(
    trust: Option<&TrustProxy>,
    ipv6_prefix: u32,
    src: &Source,
    field: &str,
) -> Result<(Identity, String)> {
    let (mut id, says) = match trust {
        None | Some(TrustProxy::All(false)) => (
            Identity::new(Who::Peer),
            "req.ip with `trust proxy` false (Express's default) is the socket peer: behind a proxy, load balancer or CDN every client shares the proxy's address".to_string(),
        ),
        Some(TrustProxy::All(true)) => (
            Identity::new(Who::FirstXff),
            "`trust proxy` true makes req.ip the leftmost X-Forwarded-For entry, which the client writes: anyone can send a fresh one per request".to_string(),
        ),
        Some(TrustProxy::Hops(n)) => (
            Identity {
                trusted_hops: Some(u64::from(*n)),
                ..Identity::new(Who::Xff)
            },
            format!(
                "`trust proxy` {n}: req.ip is the address {n} hop(s) in from the peer in X-Forwarded-For; right only when exactly {n} proxy hop(s) always stand in front (a client that connects directly forges the entry)"
            ),
        ),
        Some(TrustProxy::List(l)) => trusted_list(l, src, field)?,
        Some(TrustProxy::One(s)) => {
            let l: Vec<String> = s.split(',').map(|x| x.trim().to_string()).collect();
            trusted_list(&l, src, field)?
        }
    };
    id.ipv6_prefix = Some(ipv6_prefix);
    Ok((id, says))
}

fn trusted_list(list: &[String], src: &Source, field: &str) -> Result<(Identity, String)> {
    let mut cidrs = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let named: &[&str] = match e.as_str() {
            "loopback" => &["127.0.0.1/8", "::1/128"],
            "linklocal" => &["169.254.0.0/16", "fe80::/10"],
            "uniquelocal" => &["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
            _ => &[],
        };
        if !named.is_empty() {
            cidrs.extend(named.iter().map(|c| c.to_string()));
        } else if e.parse::<ipnet::IpNet>().is_ok() || e.parse::<std::net::IpAddr>().is_ok() {
            cidrs.push(e.clone());
        } else {
            return Err(src.error(
                &format!("{field}[{i}]"),
                format!(
                    "`{e}` is not an address, a CIDR, nor one of loopback, linklocal, uniquelocal"
                ),
            ));
        }
    }
    let id = Identity {
        trusted: Some(cidrs),
        ..Identity::new(Who::Xff)
    };
    let says = format!(
        "`trust proxy` {}: req.ip walks X-Forwarded-For from the peer past every trusted address (proxy-addr), the leftmost entry when all are trusted",
        list.join(", ")
    );
    Ok((id, says))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_path_has_its_line() {
        let text = "{\n  \"a\": 1,\n  \"b\": [\n    {\"c\": 2},\n    {\n      \"c\": \"x\\\"y\"\n    }\n  ]\n}\n";
        let l = lines(text);
        assert_eq!(l["a"], 2);
        assert_eq!(l["b"], 3);
        assert_eq!(l["b[0].c"], 4);
        assert_eq!(l["b[1]"], 5);
        assert_eq!(l["b[1].c"], 6);
        let src = Source {
            path: "x.json".into(),
            lines: l,
        };
        // An unwritten field: its parent's line.
        assert_eq!(src.line("b[1].d"), 5);
        assert_eq!(src.line("z"), 1);
    }

    #[test]
    fn a_type_error_names_line_column_and_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct T {
            a: Vec<u32>,
        }
        let e = parse::<T>(Path::new("x.json"), "{\n \"a\": [1,\n -2]}").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("x.json:3:"), "{s}");
        assert!(s.contains("field `a[1]`"), "{s}");
        assert!(s.contains("-2"), "{s}");
    }
}
