//! Replay of recorded traffic, streamed one record at a time in any of several formats.
//!
//! A format reader (one file per format: [`csv_trace`], [`jsonl`], [`clf`], [`har`]) turns the
//! trace into [`Record`]s (epoch nanoseconds, the four identity fields, and the `source` and
//! `role` columns `rlsim traffic` writes) behind the [`RecordReader`] trait. Each format's file
//! declares its names, the fields it records, how it is recognised and its reader in one
//! [`format::Format`]; the `trace_formats!` list below makes [`TraceFormat`] of them, and
//! [`open`] dispatches on it. [`ReplaySource`] applies the options: sorting within a bounded
//! window, idle gaps capped, keys sampled by hash, speed, offset and loops. Memory is bounded by the sort
//! window, by the requests of one second (for spreading a one-second-resolution log) and by
//! [`MAX_LINE`], never by the file's size, except for traces held in memory on purpose
//! ([`input`]: a pipe, which can be read only once, or a small looped file). Virtual time 0 is
//! the first record's time rounded down to a multiple of the policy window, which keeps the
//! trace aligned to the window grid fixed windows saw in production (`floor(epoch/W)`); a trace
//! of small nanosecond values (under one window) is used as is.
//!
//! Module dependencies point one way: the format files and [`input`] use only this file's types
//! (and [`format`]'s); this file dispatches to them; [`source`] and [`split`] sit on top.

mod ahead;
mod alb;
mod clf;
mod clf_time;
mod cloudflare;
mod cloudfront;
mod common;
mod csv_trace;
mod detect;
mod envoy;
mod format;
mod gclb;
mod haproxy;
mod har;
mod input;
mod jsonl;
mod k6;
mod local_keys;
mod logged;
mod nginx;
mod seconds;
mod source;
mod split;
mod tape;
#[cfg(test)]
mod tests_common;
mod vegeta;
mod vegeta_csv;

pub use detect::detect_format;
pub use haproxy::{HTTPLOG, Template as HaproxyLogFormat};
pub use input::{MAX_IN_MEMORY, MAX_LINE, TraceData};
pub use logged::{Logged, ROUTES, Verdict};
pub use nginx::{DEFAULT_LOG_FORMAT, Template as NginxLogFormat};
pub use source::{ReplayEnd, ReplaySource, Stopped};
pub use split::split_sources;

use super::Role;
use super::method::Method;
use super::tokens::Tokens;
use crate::algorithms::Cost;
use crate::error::{Error, Location, Result};
use crate::policy::{KeyField, KeySpec};
use crate::time::{NANOS_PER_DAY, Nanos};
use ipnet::IpNet;
use std::path::Path;
use strum::VariantArray;

format::trace_formats! {
    /// CSV with a header: `time` and any of `ip`, `user`, `api_key`, `endpoint`, `source`, `role`.
    Csv => csv_trace::FORMAT,
    /// One JSON object per line: `time` and any of the same fields (plus ignored others).
    Jsonl => jsonl::FORMAT,
    /// nginx/Apache combined (or common) log format, one-second resolution.
    Clf => clf::FORMAT,
    /// HAR 1.2, a JSON document: `log.entries[].startedDateTime`.
    Har => har::FORMAT,
    /// AWS Application Load Balancer access logs (space-separated, microseconds).
    Alb => alb::FORMAT,
    /// Amazon CloudFront standard logs (tab-separated W3C with a `#Fields` header, seconds).
    Cloudfront => cloudfront::FORMAT,
    /// Cloudflare Logpush `http_requests` (JSON lines).
    Cloudflare => cloudflare::FORMAT,
    /// Envoy access logs, default text format.
    Envoy => envoy::TEXT,
    /// Envoy access logs, JSON (`json_format` with the default format's fields).
    EnvoyJson => envoy::JSON,
    /// Google Cloud HTTP(S) load balancer request logs (JSON lines of `LogEntry`).
    Gclb => gclb::FORMAT,
    /// k6 `--out json` results: the `http_reqs` points.
    K6 => k6::FORMAT,
    /// vegeta `encode --to json` results.
    Vegeta => vegeta::FORMAT,
    /// vegeta `encode --to csv` results (no header, vegeta's twelve columns).
    VegetaCsv => vegeta_csv::FORMAT,
    /// An nginx access log in a text `log_format` with `$msec` (the source's `log_format`).
    Nginx => nginx::TEXT,
    /// An nginx access log in a JSON `log_format`, keys named like nginx's variables.
    NginxJson => nginx::JSON,
    /// A HAProxy log: `option httplog`, or the source's `log_format` (HAProxy's `log-format`).
    Haproxy => haproxy::FORMAT,
}

impl TraceFormat {
    /// The name `format = "..."` takes.
    pub fn name(self) -> &'static str {
        self.format().name
    }

    /// The format `format = "..."` names: by its name or an alias (`ndjson`, `combined`).
    pub fn parse(name: &str) -> Option<TraceFormat> {
        TraceFormat::VARIANTS.iter().copied().find(|f| {
            let format = f.format();
            format.name == name || format.aliases.contains(&name)
        })
    }

    /// The names `format` accepts, for error messages.
    pub fn names() -> String {
        let names: Vec<&str> = TraceFormat::VARIANTS.iter().map(|f| f.name()).collect();
        names.join(", ")
    }

    /// By the extensions the formats read (`.jsonl`, `.log`, `.har`, ...), anything else CSV (a
    /// `.gz` or `.zst` suffix is looked through).
    pub fn from_path(path: &Path) -> TraceFormat {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name
            .strip_suffix(".gz")
            .or_else(|| name.strip_suffix(".zst"))
            .unwrap_or(name);
        let extension = Path::new(name).extension().and_then(|e| e.to_str());
        TraceFormat::VARIANTS
            .iter()
            .copied()
            .find(|f| extension.is_some_and(|e| f.format().extensions.contains(&e)))
            .unwrap_or(TraceFormat::Csv)
    }

    /// Whether the format's timestamps can have one-second resolution (its requests of a second
    /// are placed by `same_second`).
    pub fn seconds_only(self) -> bool {
        self.format().seconds_only
    }

    /// The identity fields the format records (a policy keyed on another is refused).
    fn fields(self) -> &'static [KeyField] {
        self.format().fields
    }

    /// How error messages name the format.
    fn title(self) -> &'static str {
        self.format().title
    }

    /// How its content is recognised.
    fn detect(self) -> &'static format::Detect {
        &self.format().detect
    }
}

/// What to do with requests logged in the same second (one-second-resolution formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum SameSecond {
    /// `n` requests in one second go at `k/n` s, `k = 0..n`.
    Spread,
    /// All at the start of the second: the burst as the log shows it.
    Together,
    /// `n` uniform draws within the second, sorted and given to the requests in log order;
    /// seeded by the scenario's seed, the source's index and the second, so a run repeats.
    Random,
}

impl SameSecond {
    /// The value's name in scenarios (`same_second = "spread"`).
    pub fn name(self) -> &'static str {
        match self {
            SameSecond::Spread => "spread",
            SameSecond::Together => "together",
            SameSecond::Random => "random",
        }
    }
}

/// The records of one trace that one source replays, when a trace is split into several
/// sources (see [`split_sources`]): those with this `source` value and this role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The trace's `source` value; empty when the trace has none.
    pub source: String,
    /// The role of the records it replays, as [`ReplayOptions::role_of`] gives it.
    pub role: Role,
    /// The first part of its trace reports the skipped lines (every part reads them all).
    pub first: bool,
}

/// The options of a `replay` source.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// The trace's format (`csv`, `nginx`, ...): given or detected.
    pub format: TraceFormat,
    /// 2.0 replays twice as fast.
    pub speed: f64,
    /// Added to every virtual time.
    pub offset: Nanos,
    /// Times to play the trace; each repetition starts at the previous one's last record.
    pub loops: u32,
    /// Fraction of keys kept, chosen by a hash of the key so a key is all in or all out.
    pub sample: f64,
    /// The log keeps 1 request in this many (declared `sample_rate`): each kept record stands
    /// for this many requests (see [`super::Source`] and docs/traffic.md on what stays valid).
    pub sample_rate: u32,
    /// Seeds `same_second = "random"` (the scenario's seed mixed with the source's index).
    pub seed: u64,
    /// Records up to this much out of order are sorted; 0 refuses any.
    pub sort_window: Nanos,
    /// Idle gaps longer than this are cut to it.
    pub max_gap: Option<Nanos>,
    /// How requests logged in the same second are spread in time (one-second-resolution formats).
    pub same_second: SameSecond,
    /// Virtual time 0 is the first record's time rounded down to a multiple of this (the
    /// policy window), so fixed windows see the trace's boundaries where production did.
    pub align: Nanos,
    /// Count and skip malformed lines instead of failing (the source reports the count when
    /// it finishes: [`crate::traffic::Source::skipped_lines`]).
    pub skip_bad_lines: bool,
    /// Records whose `ip` is in one of these networks are abusive (when they have no `role`).
    pub abusive: Vec<IpNet>,
    /// The role of records with no `role` column and no `abusive` match: the source's.
    pub default_role: Role,
    /// Which records this source replays, when the trace is split (`None`: all of them).
    pub part: Option<Part>,
    /// The trace's bytes when they are held in memory (read once at validation).
    pub data: TraceData,
    /// The text `log_format` of an `nginx` trace (`None`: [`DEFAULT_LOG_FORMAT`]).
    pub log_format: Option<NginxLogFormat>,
    /// The `log-format` of a `haproxy` trace (the source's `log_format`; `None`: `option httplog`'s format).
    pub haproxy_log_format: Option<HaproxyLogFormat>,
    /// Set by the run, not the scenario: the keyspace the source interns into tells identities
    /// apart by their path (a `[[contender]]`'s, [`crate::traffic::Keeps::FieldsAndPaths`]), so
    /// a record's `X-Forwarded-For` is part of its identity.
    pub identity_paths: bool,
    /// The first contender that cannot weigh a request (a library profile that counts
    /// requests, not under `unit = "requests"`), when the scenario has one: a record that
    /// weighs more than 1 is then an error naming it.
    pub unweighed: Option<String>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            format: TraceFormat::Csv,
            speed: 1.0,
            offset: 0,
            loops: 1,
            sample: 1.0,
            sample_rate: 1,
            seed: 0,
            sort_window: 0,
            max_gap: None,
            same_second: SameSecond::Spread,
            align: NANOS_PER_DAY,
            skip_bad_lines: false,
            abusive: Vec::new(),
            default_role: Role::Legit,
            part: None,
            data: TraceData::default(),
            log_format: None,
            haproxy_log_format: None,
            identity_paths: false,
            unweighed: None,
        }
    }
}

impl ReplayOptions {
    /// Whether this source reports the lines its trace skipped: not a part that is not its
    /// trace's first (every part reads every line; the first reports for all).
    pub fn reports_skipped(&self) -> bool {
        !matches!(&self.part, Some(p) if !p.first)
    }

    /// Whether the trace's times have one-second resolution: its format's, or an `nginx` or
    /// `haproxy` log format whose only time is to the second.
    pub fn seconds_only(&self) -> bool {
        self.format.seconds_only()
            || (self.format == TraceFormat::Nginx
                && self.log_format.as_ref().is_some_and(|t| t.seconds_only()))
            || (self.format == TraceFormat::Haproxy && self.haproxy_template().seconds_only())
    }

    /// The log-format a `haproxy` trace is read by: the source's, else `option httplog`'s.
    pub fn haproxy_template(&self) -> HaproxyLogFormat {
        match &self.haproxy_log_format {
            Some(t) => t.clone(),
            None => HaproxyLogFormat::parse(HTTPLOG).expect("httplog parses"),
        }
    }

    /// The role of a record: its `role` column, else `abusive` by address, else the source's.
    pub fn role_of(&self, rec: &Record) -> Role {
        if let Some(role) = rec.role {
            return role;
        }
        if !self.abusive.is_empty()
            && let Ok(ip) = rec.fields[field_index(KeyField::Ip)].parse::<std::net::IpAddr>()
            && self.abusive.iter().any(|net| net.contains(&ip))
        {
            return Role::Abusive;
        }
        self.default_role
    }
}

/// One trace record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// The request's time in the log, in ns since the Unix epoch (or as written, for small values).
    pub epoch_ns: u64,
    /// Indexed like `KeyField::ALL`.
    pub fields: [String; 4],
    /// The `source` column (empty without one).
    pub source: String,
    /// The `role` column, if the record has one.
    pub role: Option<Role>,
    /// The HTTP status production answered with, when the log records it.
    pub status: Option<u16>,
    /// What production's limiter decided, when the log records it (the back-test's truth).
    pub production: Option<Production>,
    /// The request's method; `None` for one rlsim does not model (replayed as `GET`) or a
    /// format that does not record it.
    pub method: Option<Method>,
    /// The `X-Forwarded-For` header as logged (empty without one).
    pub forwarded_for: String,
    /// What the request weighs, when the trace says (a `cost` column or field).
    pub cost: Option<Cost>,
    /// What the request cost once its response settled, when the trace says (an
    /// `actual_cost` column or field): at most `cost`, the rest given back.
    pub actual_cost: Option<Cost>,
    /// An LLM request's tokens, read from the `input_tokens`, `cached_tokens`, `max_tokens`
    /// and `output_tokens` columns or fields (each `None` when empty or absent).
    pub tokens: [Option<u32>; 4],
    /// How long its response streamed (a `stream` duration: `2.5s`, `800ms`); 0 without.
    pub stream: Nanos,
    /// The record's line in the trace file, from 1 (for messages).
    pub line: u64,
}

/// What a deployed limiter decided for one logged request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Production {
    /// Served at once.
    Admitted,
    /// Served after a delay (nginx `DELAYED`).
    Delayed,
    /// Refused.
    Refused,
    /// Served at once, but a dry-run limiter would have delayed it (nginx `DELAYED_DRY_RUN`).
    WouldDelay,
    /// Served, but a dry-run limiter would have refused it (nginx `REJECTED_DRY_RUN`, Envoy
    /// `shadow_mode`).
    WouldRefuse,
}

impl Production {
    /// rlsim's word for the decision (what `rlsim traffic` writes).
    pub fn name(self) -> &'static str {
        match self {
            Production::Admitted => "admitted",
            Production::Delayed => "delayed",
            Production::Refused => "refused",
            Production::WouldDelay => "would_delay",
            Production::WouldRefuse => "would_refuse",
        }
    }

    /// The words a log or a trace uses: rlsim's own (`admitted`, `delayed`, `refused`,
    /// `would_delay`, `would_refuse`) and nginx's `$limit_req_status` values. Empty is no decision.
    pub fn parse(raw: &str) -> std::result::Result<Option<Production>, String> {
        Ok(Some(match raw {
            "" | "-" => return Ok(None),
            "admitted" | "PASSED" => Production::Admitted,
            "delayed" | "DELAYED" => Production::Delayed,
            "would_delay" | "DELAYED_DRY_RUN" => Production::WouldDelay,
            "refused" | "REJECTED" => Production::Refused,
            "would_refuse" | "REJECTED_DRY_RUN" => Production::WouldRefuse,
            other => {
                return Err(format!(
                    "unknown decision `{other}` (expected admitted, delayed, refused, \
                     would_delay, would_refuse or an nginx $limit_req_status: PASSED, DELAYED, REJECTED, \
                     DELAYED_DRY_RUN, REJECTED_DRY_RUN)"
                ));
            }
        }))
    }

    /// Whether production refused the request.
    pub fn refused(self) -> bool {
        self == Production::Refused
    }
}

impl Record {
    fn clear(&mut self) {
        for f in &mut self.fields {
            f.clear();
        }
        self.source.clear();
        self.role = None;
        self.status = None;
        self.production = None;
        self.method = None;
        self.forwarded_for.clear();
        self.cost = None;
        self.actual_cost = None;
        self.tokens = [None; 4];
        self.stream = 0;
    }

    /// Sets the token column or field `name` (one of [`TOKEN_FIELDS`]) from `raw`, or
    /// `stream`.
    fn set_llm(&mut self, name: &str, raw: &str) -> std::result::Result<(), String> {
        if raw.is_empty() || raw == "-" {
            return Ok(());
        }
        if name == "stream" {
            self.stream = crate::time::parse_duration(raw).map_err(|e| e.to_string())?;
            return Ok(());
        }
        let i = TOKEN_FIELDS.iter().position(|&f| f == name).unwrap_or(0);
        let n = raw.parse::<u32>().map_err(|_| {
            format!(
                "{name} `{raw}` is not a whole number of tokens from 0 to {}",
                u32::MAX
            )
        })?;
        self.tokens[i] = Some(n);
        Ok(())
    }

    /// The record's tokens, if it is an LLM request (it states input or output tokens).
    fn llm(&self) -> std::result::Result<Option<Tokens>, (&'static str, String)> {
        let [input, cached, max, output] = self.tokens;
        if input.is_none() && output.is_none() {
            if let Some(i) = self.tokens.iter().position(Option::is_some) {
                let why = "an LLM request states `input_tokens` or `output_tokens`";
                return Err((TOKEN_FIELDS[i], why.to_string()));
            }
            return Ok(None);
        }
        let t = Tokens {
            input: input.unwrap_or(0),
            cached: cached.unwrap_or(0),
            max_output: max.unwrap_or(0),
            output: output.unwrap_or(0),
        };
        if t.cached > t.input {
            let why = format!("{} cached tokens of a {}-token prompt", t.cached, t.input);
            return Err(("cached_tokens", why));
        }
        if t.states_max() && t.output > t.max_output {
            let why = format!(
                "{} output tokens beyond its max_tokens {}",
                t.output, t.max_output
            );
            return Err(("output_tokens", why));
        }
        Ok(Some(t))
    }
}

/// A trace's LLM token columns or fields, in the order of [`Record::tokens`].
pub const TOKEN_FIELDS: [&str; 4] = [
    "input_tokens",
    "cached_tokens",
    "max_tokens",
    "output_tokens",
];

/// What one read gave.
pub enum Outcome {
    Record,
    Eof,
    /// A malformed line: an error, or a skipped line with `--skip-bad-lines`.
    Bad(Error),
}

/// A stream of trace records, one format's reader.
pub trait RecordReader: Send {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome>;

    /// Whether records can carry `source` or `role` (a CSV header says; any JSON line may).
    fn has_parts(&self) -> bool {
        false
    }

    /// The local number of the last record's key, when the reader numbers keys
    /// ([`ahead::ParseAhead`] with a key spec): records with the same number have the same
    /// key and client.
    fn local_key(&self) -> Option<u32> {
        None
    }

    /// The local number of the key `n` records on, when already parsed: a hint, to ask for
    /// its entry in a table early (it may belong to a malformed line).
    fn local_key_ahead(&self, _n: usize) -> Option<u32> {
        None
    }
}

/// Opens a trace in its format; with `key_spec`, a CSV header must have a column for each of
/// its fields.
pub fn open(
    path: &Path,
    key_spec: Option<&KeySpec>,
    options: &ReplayOptions,
) -> Result<Box<dyn RecordReader>> {
    let input = input::open(path, &options.data)?;
    (options.format.format().open)(path, input, key_spec, options)
}

/// Opens a trace to replay: a file large enough is read and parsed on a second thread
/// ([`ahead`]), which with `keys` also numbers the records' keys as that spec reads them.
pub(crate) fn open_ahead(
    path: &Path,
    options: &ReplayOptions,
    keys: Option<&KeySpec>,
) -> Result<Box<dyn RecordReader>> {
    let reader = open(path, None, options)?;
    if !input::worth_a_thread(path, &options.data) {
        return Ok(reader);
    }
    let numbering = keys.map(|spec| local_keys::LocalKeys::new(spec, options.identity_paths));
    Ok(Box::new(ahead::ParseAhead::new(path, reader, numbering)?))
}

/// Reads the trace once if it must be held in memory (see [`TraceData::load`]), detects its
/// format from its content when `detect` (the source named none: [`detect_format`]), then
/// checks that it can supply `time` and every field `key_spec` uses. Called once, at validation.
pub fn prepare_trace(
    path: &Path,
    key_spec: &KeySpec,
    options: &mut ReplayOptions,
    detect: bool,
) -> Result<()> {
    options.data = TraceData::load(path, options.loops)?;
    if detect {
        options.format = detect_format(path, &options.data)?;
    }
    check_key(path, key_spec, options)?;
    open(path, Some(key_spec), options).map(|_| ())
}

/// What a run of a replayed trace must say of its figures, one line per source: a sampled
/// log's (`sample_rate`), which figures stay valid and which do not. `name` and `options` of
/// each replay source.
pub fn replay_warnings<'a>(
    sources: impl Iterator<Item = (&'a str, &'a ReplayOptions)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, o) in sources {
        let n = o.sample_rate;
        if n > 1 {
            out.push(format!(
                "source `{name}` is a sampled log (1 request in {n} kept): its request counts are \
                 of the kept requests (about {n}x as many reached production); shares (the \
                 fractions refused, goodput, leakage) stay valid as estimates; per-key limiter \
                 decisions do not: each key arrives at 1/{n} of its real rate, so a limiter \
                 here meets 1/{n} of each key's load and refuses far less than production's did \
                 (to model it, divide the policy's limit by {n})"
            ));
        }
        if o.format == TraceFormat::Haproxy {
            let template = o.haproxy_template();
            if !template.exact_time() {
                out.push(format!(
                    "source `{name}` is a HAProxy log timed from {}, the request's logged date, \
                     not the instant the http-request rules ran: a back-test from %tr cannot be \
                     exact (log a variable set by `http-request set-var(txn.t) date(0,ms)` \
                     before the deny, written `%[date(0,ms)]` in log_format)",
                    template.time_source()
                ));
            }
        }
    }
    out
}

/// Malformed lines [`trace_start`] passes over looking for the first record before it gives up
/// (the replay then reports them, or skips them with `--skip-bad-lines`).
const START_BAD_LINES: u32 = 1000;

/// The instant (ns since the Unix epoch) a replay's virtual time 0 stands for: the first record
/// in time order, as [`ReplaySource`] releases it, rounded down to `align`, less `offset`. `None`
/// for a trace with no record among its first lines. Read at validation, so that limiters of
/// libraries that align windows to the epoch see the trace's own time.
pub fn trace_start(path: &Path, options: &ReplayOptions) -> Result<Option<Nanos>> {
    let mut reader = open(path, None, options)?;
    let mut rec = Record::default();
    let (mut first, mut newest, mut bad) = (None::<u64>, 0, 0);
    // An error ends the look-ahead: it is the replay's to report, where it always has been (a
    // HAR document's, at run).
    while let Ok(outcome) = reader.read(&mut rec) {
        match outcome {
            Outcome::Eof => break,
            Outcome::Bad(_) => {
                bad += 1;
                if bad > START_BAD_LINES {
                    break;
                }
            }
            Outcome::Record => {
                let min = first.map_or(rec.epoch_ns, |f| f.min(rec.epoch_ns));
                first = Some(min);
                newest = newest.max(rec.epoch_ns);
                // The earliest record is final once one later than it by more than
                // `sort_window` has been read (an earlier one after that is refused).
                if newest - min > options.sort_window || options.sort_window == 0 {
                    break;
                }
            }
        }
    }
    Ok(first.map(|f| (f - f % options.align.max(1)).saturating_sub(options.offset)))
}

/// Refuses a key the format cannot supply: formats with a fixed set of fields cannot key on the
/// others (checked when the scenario is loaded; `rlsim traffic` reads every field regardless).
fn check_key(path: &Path, key_spec: &KeySpec, options: &ReplayOptions) -> Result<()> {
    let has = options.format.fields();
    if let Some(field) = key_spec.fields().iter().find(|f| !has.contains(f)) {
        let format = options.format.title();
        return Err(trace_error(
            path,
            1,
            None,
            format!("the policy keys on `{field}`, which {format} does not record"),
        ));
    }
    Ok(())
}

pub(crate) fn trace_error(path: &Path, line: u64, field: Option<&str>, message: String) -> Error {
    Error::Trace {
        location: Location {
            path: path.to_path_buf(),
            line: Some(line as usize),
            column: None,
        },
        field: field.map(str::to_string),
        message,
    }
}

/// Parses a trace timestamp into nanoseconds since the Unix epoch.
fn parse_time(raw: &str) -> std::result::Result<u64, String> {
    if raw.bytes().all(|b| b.is_ascii_digit()) && !raw.is_empty() {
        return raw
            .parse::<u64>()
            .map_err(|_| format!("`{raw}` is too large for nanoseconds"));
    }
    if let Some(ns) = decimal_seconds(raw) {
        return ns;
    }
    let dt = chrono::DateTime::parse_from_rfc3339(raw).map_err(|e| {
        format!(
            "`{raw}` is neither integer nanoseconds, decimal epoch seconds nor an RFC 3339 timestamp ({e})"
        )
    })?;
    to_epoch_ns(dt, raw)
}

/// Decimal epoch seconds (`1733112345.123`, nginx's `$msec`): digits, a point, 1 to 9 digits.
/// Exact: the fraction is scaled as an integer, never through a float. `None`: not this shape.
fn decimal_seconds(raw: &str) -> Option<std::result::Result<u64, String>> {
    let (secs, frac) = raw.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(secs) || !digits(frac) || frac.len() > 9 {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    let ns = secs
        .parse::<u64>()
        .ok()
        .and_then(|s| s.checked_mul(1_000_000_000))
        .and_then(|s| s.checked_add(frac.parse::<u64>().ok()? * scale));
    Some(ns.ok_or_else(|| format!("`{raw}` is too large for nanoseconds since 1970")))
}

/// Decimal seconds as nanoseconds (nginx's `$request_time`, `0.004`): like [`decimal_seconds`],
/// whole seconds accepted too.
fn seconds_ns(raw: &str) -> std::result::Result<u64, String> {
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        return raw
            .parse::<u64>()
            .ok()
            .and_then(|s| s.checked_mul(1_000_000_000))
            .ok_or_else(|| format!("`{raw}` is too many seconds"));
    }
    decimal_seconds(raw).unwrap_or_else(|| Err(format!("`{raw}` is not a number of seconds")))
}

fn to_epoch_ns(
    dt: chrono::DateTime<chrono::FixedOffset>,
    raw: &str,
) -> std::result::Result<u64, String> {
    dt.timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("`{raw}` is outside the supported range (1970 to 2262)"))
}

/// A `status` column's value: an HTTP status code, `0` (or CloudFront's `000`: no response was
/// sent, as Envoy, CloudFront, k6 and vegeta log a request that got no answer), or empty.
fn parse_status(raw: &str) -> std::result::Result<Option<u16>, String> {
    if raw.is_empty() || raw == "-" {
        return Ok(None);
    }
    if !raw.is_empty() && raw.bytes().all(|b| b == b'0') && raw.len() <= 3 {
        return Ok(Some(0));
    }
    match raw.parse::<u16>() {
        Ok(code) if (100..=599).contains(&code) => Ok(Some(code)),
        _ => Err(format!(
            "`{raw}` is not an HTTP status code (100 to 599, or 0: no response)"
        )),
    }
}

/// A `cost` column's value: empty or `-` for none, else a whole number from 1.
fn parse_cost(raw: &str) -> std::result::Result<Option<Cost>, String> {
    match raw {
        "" | "-" => Ok(None),
        _ => match raw.parse::<Cost>() {
            Ok(c) if c >= 1 => Ok(Some(c)),
            _ => Err(format!(
                "cost `{raw}` is not a whole number from 1 to {}",
                Cost::MAX
            )),
        },
    }
}

/// An `actual_cost` column's value: empty or `-` for none, else a whole number from 0.
fn parse_actual_cost(raw: &str) -> std::result::Result<Option<Cost>, String> {
    match raw {
        "" | "-" => Ok(None),
        _ => raw.parse::<Cost>().map(Some).map_err(|_| {
            format!(
                "actual cost `{raw}` is not a whole number from 0 to {}",
                Cost::MAX
            )
        }),
    }
}

/// A `method` column's value: a method rlsim models, `None` for another or none.
fn parse_method(raw: &str) -> Option<Method> {
    Method::named(raw)
}

/// A numeric status as a record's: an HTTP status code, or 0 (no response was sent).
fn status_code(code: u64) -> std::result::Result<Option<u16>, String> {
    if code == 0 {
        return Ok(Some(0));
    }
    parse_status(&code.to_string())
}

/// A `role` column's value.
fn parse_role(raw: &str) -> std::result::Result<Option<Role>, String> {
    match raw {
        "" => Ok(None),
        "legit" => Ok(Some(Role::Legit)),
        "abusive" => Ok(Some(Role::Abusive)),
        other => Err(format!(
            "unknown role `{other}` (expected legit or abusive)"
        )),
    }
}

pub(crate) fn field_index(field: KeyField) -> usize {
    KeyField::ALL
        .iter()
        .position(|f| *f == field)
        .expect("known field")
}

#[cfg(test)]
mod production_tests {
    use super::tests_common::outcomes as read_all;
    use super::*;

    fn decided(
        out: &[std::result::Result<Record, String>],
    ) -> Vec<(Option<u16>, Option<Production>)> {
        out.iter()
            .map(|r| {
                r.as_ref()
                    .map_or((None, None), |r| (r.status, r.production))
            })
            .collect()
    }

    #[test]
    fn csv_status_and_decision_columns_are_production_record() {
        let out = read_all(
            TraceFormat::Csv,
            "time,ip,status,decision\n1,a,200,PASSED\n2,a,503,REJECTED\n3,a,,\n4,a,200,would_refuse\n5,a,200,DELAYED_DRY_RUN\n6,a,600,admitted\n7,a,200,maybe\n",
        );
        assert_eq!(
            decided(&out[..5]),
            [
                (Some(200), Some(Production::Admitted)),
                (Some(503), Some(Production::Refused)),
                (None, None),
                (Some(200), Some(Production::WouldRefuse)),
                (Some(200), Some(Production::WouldDelay)),
            ]
        );
        let bad: Vec<&String> = out[5..].iter().map(|r| r.as_ref().unwrap_err()).collect();
        assert!(
            bad[0].contains("t:7:") && bad[0].contains("`status`"),
            "{}",
            bad[0]
        );
        assert!(
            bad[1].contains("t:8:") && bad[1].contains("`decision`"),
            "{}",
            bad[1]
        );
        assert!(bad[1].contains("unknown decision `maybe`"), "{}", bad[1]);
    }

    #[test]
    fn decimal_epoch_seconds_are_exact_nanoseconds() {
        assert_eq!(parse_time("1733112345.123"), Ok(1_733_112_345_123_000_000));
        assert_eq!(
            parse_time("1733112345.000000001"),
            Ok(1_733_112_345_000_000_001)
        );
        assert_eq!(parse_time("0.5"), Ok(500_000_000));
        assert_eq!(
            parse_time("1733112345"),
            Ok(1733112345),
            "integers stay nanoseconds"
        );
        assert!(parse_time("1.0000000001").is_err(), "more than 9 decimals");
        assert!(
            parse_time("99999999999999.1")
                .unwrap_err()
                .contains("too large")
        );
        assert!(parse_time("1.2.3").is_err());
        assert_eq!(seconds_ns("0.004"), Ok(4_000_000));
        assert_eq!(seconds_ns("2"), Ok(2_000_000_000));
        assert!(seconds_ns("-1").is_err());
    }

    #[test]
    fn jsonl_status_may_be_a_number_or_a_string() {
        let out = read_all(
            TraceFormat::Jsonl,
            concat!(
                "{\"time\":1,\"status\":429,\"decision\":\"refused\"}\n",
                "{\"time\":2,\"status\":\"200\",\"decision\":\"DELAYED\"}\n",
                "{\"time\":3}\n",
                "{\"time\":4,\"status\":\"ok\"}\n",
            ),
        );
        assert_eq!(
            decided(&out[..3]),
            [
                (Some(429), Some(Production::Refused)),
                (Some(200), Some(Production::Delayed)),
                (None, None),
            ]
        );
        let bad = out[3].as_ref().unwrap_err();
        assert!(bad.contains("t:4:") && bad.contains("`status`"), "{bad}");
    }
}
