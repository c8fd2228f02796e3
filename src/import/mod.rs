//! Deployed limiters' configurations read into scenario contenders (`rlsim import`,
//! `[[contender]] import = "..."`): one file per kind. An import yields the contenders as the
//! scenario's own TOML tables (a `[[contender]]` with its `[[contender.rule]]`s over the library
//! profiles), each with where it came from and what users often misread of it; the scenario
//! layer validates them like any written contender, so `rlsim import`'s output and a direct
//! `import = "..."` decide the same by construction (docs/import.md).

pub mod aws;
pub mod cloudflare;
pub mod emit;
pub mod envoy_local;
pub mod envoy_ratelimit;
pub mod express;
pub mod haproxy;
pub mod json;
pub mod kong;
pub mod nestjs;
pub mod nginx;
pub mod traefik;
pub mod yaml;

pub use emit::{
    Bypass, Commit, ContenderField, ContenderTable, Identity, Key, Profile, RuleField, RuleTable,
    Who,
};

use crate::error::{Error, Location, Result};
use std::fmt::Write as _;
use std::path::Path;

/// The kinds of configuration rlsim imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// nginx `limit_req` (ngx_http_limit_req_module) with real_ip, map and geo.
    Nginx,
    /// express-rate-limit 8 options as JSON.
    Express,
    /// @nestjs/throttler 6 `ThrottlerModule.forRoot` options as JSON.
    Nestjs,
    /// HAProxy stick-table `http_req_rate` with `http-request track-sc` and `deny`.
    Haproxy,
    /// Traefik's `rateLimit` middleware in a dynamic configuration (YAML).
    Traefik,
    /// Cloudflare rate limiting rules (Rulesets API, phase `http_ratelimit`) as JSON.
    Cloudflare,
    /// Kong's `rate-limiting` plugin: a declarative configuration (YAML) or Admin API JSON.
    Kong,
    /// AWS API Gateway usage plans: `get-usage-plan` JSON or CloudFormation.
    AwsUsagePlan,
    /// Envoy's HTTP `local_ratelimit` filter in an Envoy configuration (YAML).
    EnvoyLocal,
    /// The envoyproxy/ratelimit service's descriptor configuration (YAML `domain`,
    /// `descriptors`), behind Envoy's global `ratelimit` filter.
    EnvoyRatelimit,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Nginx,
        Kind::Haproxy,
        Kind::Traefik,
        Kind::Express,
        Kind::Nestjs,
        Kind::Cloudflare,
        Kind::Kong,
        Kind::AwsUsagePlan,
        Kind::EnvoyLocal,
        Kind::EnvoyRatelimit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Nginx => "nginx",
            Kind::Express => "express-rate-limit",
            Kind::Nestjs => "nestjs-throttler",
            Kind::Haproxy => "haproxy",
            Kind::Traefik => "traefik",
            Kind::Cloudflare => "cloudflare",
            Kind::Kong => "kong",
            Kind::AwsUsagePlan => "aws-usage-plan",
            Kind::EnvoyLocal => "envoy-local",
            Kind::EnvoyRatelimit => "envoy-ratelimit",
        }
    }

    pub fn parse(text: &str) -> std::result::Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| crate::suggest::unknown("import kind", text, Kind::ALL.map(Kind::name)))
    }

    /// The kind `text` is written in, from its content; `None` when no kind recognises it.
    pub fn detect(text: &str) -> Option<Kind> {
        let t = text.trim_start();
        if t.starts_with('{') || t.starts_with('[') {
            return Kind::detect_json(text);
        }
        if text.contains("envoy.filters.http.local_ratelimit") {
            return Some(Kind::EnvoyLocal);
        }
        if text.contains("AWS::ApiGateway::UsagePlan") {
            return Some(Kind::AwsUsagePlan);
        }
        let section = |w: &str| text.lines().any(|l| l.starts_with(w));
        // The ratelimit service's file: only these two keys at its top level.
        if section("domain:") && section("descriptors:") {
            return Some(Kind::EnvoyRatelimit);
        }
        if Kind::is_kong(text) {
            return Some(Kind::Kong);
        }
        // YAML: its files hold none of nginx's or HAProxy's words.
        if text.contains("rateLimit:") && text.contains("http:") {
            return Some(Kind::Traefik);
        }
        if text.contains("stick-table") || section("frontend ") || section("listen ") {
            return Some(Kind::Haproxy);
        }
        let nginx = [
            "limit_req_zone",
            "limit_req ",
            "http {",
            "server {",
            "location ",
        ];
        nginx
            .iter()
            .any(|w| text.contains(w))
            .then_some(Kind::Nginx)
    }
}

impl Kind {
    /// The JSON kind `text` is, from the keys only that kind uses.
    fn detect_json(text: &str) -> Option<Kind> {
        let has = |k: &str| text.contains(&format!("\"{k}\""));
        if has("rate-limiting") && has("config") {
            return Some(Kind::Kong);
        }
        let aws_cfn = text.contains("AWS::ApiGateway::UsagePlan");
        if aws_cfn || has("apiStages") || (has("throttle") && has("burstLimit")) {
            return Some(Kind::AwsUsagePlan);
        }
        if has("http_ratelimit") || (has("ratelimit") && has("requests_per_period")) {
            return Some(Kind::Cloudflare);
        }
        if [
            "windowMs",
            "skipFailedRequests",
            "keyGenerator",
            "legacyHeaders",
            "standardHeaders",
        ]
        .iter()
        .any(|k| has(k))
        {
            return Some(Kind::Express);
        }
        if has("throttlers") || has("ttl") {
            return Some(Kind::Nestjs);
        }
        None
    }
}

impl Kind {
    /// A Kong declarative configuration naming the `rate-limiting` plugin.
    fn is_kong(text: &str) -> bool {
        let plugin = text.lines().any(|l| {
            let l = l.trim_start().trim_start_matches("- ");
            l.starts_with("name: rate-limiting") || l.starts_with("name: \"rate-limiting\"")
        });
        plugin && (text.contains("_format_version") || text.contains("plugins:"))
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

/// Everything one file yields.
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
    // nginx selects a server and a location, HAProxy a section (haproxy::import refuses a
    // location); every other kind is imported whole.
    let selects = matches!(kind, Kind::Nginx | Kind::Haproxy);
    if !selects && (select.server.is_some() || select.location.is_some()) {
        return Err(Error::Usage(format!(
            "{}: `server` and `location` (--server, --location) select part of an nginx configuration (`server`: also a HAProxy frontend or listen); a {} file is imported whole",
            path.display(),
            kind.name()
        )));
    }
    match kind {
        Kind::Nginx => nginx::import(path, select),
        Kind::Express => express::import(path),
        Kind::Nestjs => nestjs::import(path),
        Kind::Haproxy => haproxy::import(path, select),
        Kind::Traefik => traefik::import(path, select),
        Kind::Cloudflare => cloudflare::import(path),
        Kind::Kong => kong::import(path),
        Kind::AwsUsagePlan => aws::import(path),
        Kind::EnvoyLocal => envoy_local::import(path),
        Kind::EnvoyRatelimit => envoy_ratelimit::import(path),
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
