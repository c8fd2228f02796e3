//! Deployed limiters' configurations read into scenario contenders (`rlsim import`,
//! `[[contender]] import = "..."`): one file per kind (`kong.rs`), or one folder with its
//! `mod.rs` (`nginx/`), listed once in `kinds!`. An import yields the contenders as the
//! scenario's own TOML tables (a `[[contender]]` with its `[[contender.rule]]`s over the library
//! profiles), each with where it came from and what users often misread of it; the scenario
//! layer validates them like any written contender, so `rlsim import`'s output and a direct
//! `import = "..."` decide the same by construction (docs/import.md).

pub(crate) mod aws;
pub(crate) mod cloudflare;
pub(crate) mod emit;
pub(crate) mod envoy_local;
pub(crate) mod envoy_ratelimit;
pub(crate) mod express;
pub(crate) mod haproxy;
pub(crate) mod json;
pub(crate) mod kong;
pub(crate) mod nestjs;
pub(crate) mod nginx;
pub(crate) mod traefik;
pub(crate) mod yaml;

pub use emit::{
    Bypass, Commit, ContenderField, ContenderTable, Identity, Key, Profile, RuleField, RuleTable,
    Who,
};

use crate::error::{Error, Location, Result};
use std::fmt::Write as _;
use std::path::Path;

/// Declares the kinds once, as `Variant => module` in `--kind`'s listing order: the `Kind`
/// enum, `Kind::ALL`, and the dispatch to each kind's module, which has the same three items:
/// `NAME` (its `--kind` name), `detect` (its rank for a text it recognises, see [`Text`]) and
/// `import` (its contenders from a file, keeping a [`Selection`] or refusing one with
/// [`Selection::whole`]). Each module is declared above with `pub mod`, where the layer test
/// (tests/integration/layers.rs) reads the crate's modules.
macro_rules! kinds {
    ($($(#[doc = $doc:literal])* $variant:ident => $module:ident,)*) => {
        /// The kinds of configuration rlsim imports.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Kind {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Kind {
            pub const ALL: [Kind; [$(stringify!($variant)),*].len()] = [$(Kind::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $module::NAME,)*
                }
            }

            fn rank(self, text: &Text<'_>) -> Option<u8> {
                match self {
                    $(Kind::$variant => $module::detect(text),)*
                }
            }

            fn read(self, path: &Path, select: &Selection) -> Result<Imported> {
                let contents = match self {
                    $(Kind::$variant => $module::import(path, select)?,)*
                };
                Ok(Imported {
                    kind: self,
                    contenders: contents.contenders,
                    notes: contents.notes,
                })
            }
        }
    };
}

kinds! {
    /// nginx `limit_req` (ngx_http_limit_req_module) with real_ip, map and geo.
    Nginx => nginx,
    /// HAProxy stick-table `http_req_rate` with `http-request track-sc` and `deny`.
    Haproxy => haproxy,
    /// Traefik's `rateLimit` middleware in a dynamic configuration (YAML).
    Traefik => traefik,
    /// express-rate-limit 8 options as JSON.
    Express => express,
    /// @nestjs/throttler 6 `ThrottlerModule.forRoot` options as JSON.
    Nestjs => nestjs,
    /// Cloudflare rate limiting rules (Rulesets API, phase `http_ratelimit`) as JSON.
    Cloudflare => cloudflare,
    /// Kong's `rate-limiting` plugin: a declarative configuration (YAML) or Admin API JSON.
    Kong => kong,
    /// AWS API Gateway usage plans: `get-usage-plan` JSON or CloudFormation.
    AwsUsagePlan => aws,
    /// Envoy's HTTP `local_ratelimit` filter in an Envoy configuration (YAML).
    EnvoyLocal => envoy_local,
    /// The envoyproxy/ratelimit service's descriptor configuration (YAML `domain`,
    /// `descriptors`), behind Envoy's global `ratelimit` filter.
    EnvoyRatelimit => envoy_ratelimit,
}

impl Kind {
    pub fn parse(text: &str) -> std::result::Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| crate::suggest::unknown("import kind", text, Kind::ALL.map(Kind::name)))
    }

    /// The kind `text` is written in, from its content; `None` when no kind recognises it.
    pub fn detect(text: &str) -> Option<Kind> {
        let text = Text::new(text);
        Kind::ALL
            .into_iter()
            .filter_map(|k| Some((k.rank(&text)?, k)))
            .min_by_key(|&(rank, _)| rank)
            .map(|(_, k)| k)
    }
}

/// A configuration's text as the kinds' `detect` read it. A kind claims a text it recognises
/// with a rank, and the lowest rank wins, so that a kind whose sign is the more specific is
/// chosen first: JSON is claimed by kong (1: the plugin with its config), aws-usage-plan (2),
/// cloudflare (3), express-rate-limit (4) and nestjs-throttler (5); other texts by envoy-local
/// (1: the filter's name), aws-usage-plan (2: the CloudFormation type), envoy-ratelimit (3),
/// kong (4), traefik (5: YAML holds none of nginx's or HAProxy's words), haproxy (6) and
/// nginx (7).
pub struct Text<'a> {
    pub text: &'a str,
    /// An object or an array.
    pub json: bool,
}

impl<'a> Text<'a> {
    fn new(text: &'a str) -> Text<'a> {
        let t = text.trim_start();
        Text {
            text,
            json: t.starts_with('{') || t.starts_with('['),
        }
    }

    /// `"key"`, as JSON writes a key.
    pub fn has_key(&self, key: &str) -> bool {
        self.text.contains(&format!("\"{key}\""))
    }

    /// A line starting with `start` (a top-level YAML key, an HAProxy section).
    pub fn has_line(&self, start: &str) -> bool {
        self.text.lines().any(|l| l.starts_with(start))
    }
}

/// Which part of a configuration to import when it has several (nginx: `server_name`, a
/// location's URI as written; HAProxy: a frontend's or listen's name in `server`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub server: Option<String>,
    pub location: Option<String>,
}

/// One rule of an imported contender.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedRule {
    /// Comment lines: where the rule came from and how it maps.
    pub comments: Vec<String>,
    pub table: RuleTable,
    /// The fields after `key`, in the order written.
    pub fields: Vec<RuleField>,
}

/// One imported contender: its table, its rules and its notes.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedContender {
    pub name: String,
    /// Comment lines: where it came from.
    pub comments: Vec<String>,
    pub table: ContenderTable,
    /// The fields after `commit`, in the order written.
    pub fields: Vec<ContenderField>,
    pub rules: Vec<ImportedRule>,
    /// What users often misread of this configuration; the run's warnings carry them.
    pub notes: Vec<String>,
}

/// What a kind's importer reads from one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents {
    pub contenders: Vec<ImportedContender>,
    /// Notes about the whole file (directives ignored or not modelled).
    pub notes: Vec<String>,
}

/// Everything one file yields, with the kind it was read as.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub kind: Kind,
    pub contenders: Vec<ImportedContender>,
    /// Notes about the whole file (directives ignored or not modelled).
    pub notes: Vec<String>,
}

/// Reads `path` as `kind` (detected from its content when `None`), keeping `select`.
pub fn import_file(path: &Path, kind: Option<Kind>, select: &Selection) -> Result<Imported> {
    let kind = match kind {
        Some(k) => k,
        None => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            Kind::detect(&text).ok_or_else(|| {
                Error::Usage(format!(
                    "{}: cannot tell which kind of configuration this is; give --kind (one of {})",
                    path.display(),
                    Kind::ALL.map(Kind::name).join(", ")
                ))
            })?
        }
    };
    kind.read(path, select)
}

impl Selection {
    /// Refuses a selection for a kind whose files are imported whole.
    pub(crate) fn whole(&self, path: &Path, kind: &str) -> Result<()> {
        if self.server.is_none() && self.location.is_none() {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "{}: `server` and `location` (--server, --location) select part of an nginx configuration (`server`: also a HAProxy frontend or listen); a {kind} file is imported whole",
            path.display()
        )))
    }
}

/// A name as rlsim's names are written (letters, digits, `_`, `-` and `.`; anything else `_`),
/// `fallback` when nothing is left.
pub(crate) fn plain_name(name: &str, fallback: &str) -> String {
    let n: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() { fallback.into() } else { n }
}

/// The error of a configuration that cannot be imported, naming the file, the line and the
/// directive or field (every text kind's errors: nginx, HAProxy, YAML).
pub(crate) fn config_error(
    file: &Path,
    line: usize,
    directive: &str,
    message: impl Into<String>,
) -> Error {
    Error::Config {
        location: Location {
            path: file.to_path_buf(),
            line: Some(line),
            column: None,
        },
        directive: directive.to_string(),
        message: message.into(),
    }
}

fn comment(out: &mut String, lines: &[String]) {
    for l in lines {
        for part in l.lines() {
            let _ = writeln!(out, "# {part}");
        }
    }
}

impl ImportedContender {
    /// The contender as a `[[contender]]` table with its rules, comments included; named
    /// `name` (the importing scenario's) when given.
    pub fn to_toml(&self, name: Option<&str>) -> Result<String> {
        let mut out = String::new();
        comment(&mut out, &self.comments);
        for n in &self.notes {
            comment(&mut out, &[format!("note: {n}")]);
        }
        out.push_str("[[contender]]\n");
        let name = toml::Value::String(name.unwrap_or(&self.name).to_string());
        let _ = writeln!(out, "name = {name}");
        let unwritable = |e: toml::ser::Error| {
            Error::Internal(format!(
                "contender `{}` cannot be written as TOML: {e}",
                self.name
            ))
        };
        emit::table(&mut out, &self.table, &self.fields).map_err(unwritable)?;
        for r in &self.rules {
            out.push('\n');
            comment(&mut out, &r.comments);
            out.push_str("[[contender.rule]]\n");
            emit::table(&mut out, &r.table, &r.fields).map_err(unwritable)?;
        }
        Ok(out)
    }
}

impl Imported {
    /// Every contender as scenario TOML, the file's notes first.
    pub fn to_toml(&self, source: &Path) -> Result<String> {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# Imported by `rlsim import` from {} ({}): paste into a scenario, or use it\n# directly with `[[contender]] import = \"{}\"` (docs/import.md).",
            source.display(),
            self.kind.name(),
            source.display()
        );
        for n in &self.notes {
            comment(&mut out, &[format!("note: {n}")]);
        }
        for c in &self.contenders {
            out.push('\n');
            out.push_str(&c.to_toml(None)?);
        }
        Ok(out)
    }
}
