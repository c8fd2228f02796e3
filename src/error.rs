//! Errors the library reports. Every input error names the file, the line and the field.

use std::fmt;
use std::path::PathBuf;

/// Where in an input file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The input file, as given on the command line or resolved from the scenario.
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        Ok(())
    }
}

/// Everything that can go wrong in rlsim.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario file is malformed or inconsistent.
    #[error("{location}: {}{message}", field_prefix(field))]
    Scenario {
        /// The scenario file and, when known, the line and column of the fault.
        location: Location,
        /// Dotted path of the offending field (`policy.window`, `traffic[1].rate`).
        field: Option<String>,
        /// What is wrong, for a reader of the scenario.
        message: String,
    },
    /// A trace (recorded traffic) file has a line rlsim cannot read.
    #[error("{location}: {}{message}", field_prefix(field))]
    Trace {
        /// The trace file and the 1-based line that cannot be read.
        location: Location,
        /// The column or field of the line at fault, when one is.
        field: Option<String>,
        /// What is wrong with the line.
        message: String,
    },
    /// A deployed limiter's configuration (`rlsim import`) that cannot be imported.
    #[error("{location}: directive `{directive}`: {message}")]
    Config {
        /// The configuration file and the 1-based line of the directive.
        location: Location,
        /// The directive or field at fault (`limit_req_zone`, `stick-table`, a YAML key).
        directive: String,
        /// Why it cannot be imported.
        message: String,
    },
    /// A baseline file (`rlsim check --baseline`) is not one rlsim can compare with.
    #[error("{location}: {message}")]
    Baseline {
        /// The baseline file and, when known, the line and column at fault.
        location: Location,
        /// Why it cannot be compared with.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A command-line value is invalid.
    #[error("{0}")]
    Usage(String),
    /// The external store (`--store redis://...`) is unusable: a bad address, unreachable, or
    /// refusing the scripts (exit 2, found before anything runs); or it failed in the middle
    /// of a run (`during_run`, exit 3). Nothing is written either way.
    #[error("store {url}: {message}")]
    Store {
        /// The store's address as given to `--store`.
        url: String,
        /// What went wrong.
        message: String,
        /// Whether it failed after the run had started (exit 3) rather than before (exit 2).
        during_run: bool,
    },
    /// The live service a probe drives (`rlsim probe --target`) is unusable: unreachable or
    /// refusing connections before any request (exit 2), or failing requests in the middle of
    /// the probe (`during_run`, exit 3). Nothing is written either way.
    #[error("target {target}: {message}")]
    Target {
        /// The service's base URL as given to `--target` (`http://host:port`).
        target: String,
        /// What went wrong.
        message: String,
        /// Whether it failed after the probe's first request (exit 3) rather than before (exit 2).
        during_run: bool,
    },
    /// Several inputs were bad (`rlsim check DIR` with several broken scenarios): each one,
    /// in order, one per line (the binary's `error: ` prefix starts the first).
    #[error("{}", several(.0))]
    Several(Vec<Error>),
    /// A broken invariant inside rlsim: a bug to report, not an input problem.
    #[error("internal error (please report): {0}")]
    Internal(String),
}

fn several(errors: &[Error]) -> String {
    let lines: Vec<String> = errors.iter().map(Error::to_string).collect();
    lines.join("\nerror: ")
}

fn field_prefix(field: &Option<String>) -> String {
    match field {
        Some(f) => format!("field `{f}`: "),
        None => String::new(),
    }
}

impl Error {
    /// The process exit code for this error: 2 for bad input or an unusable path (the user's
    /// to fix), 70 (`EX_SOFTWARE`) for a broken invariant inside rlsim (a bug to report).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Internal(_) => 70,
            Error::Several(errors) => errors.iter().map(Error::exit_code).max().unwrap_or(2),
            Error::Store {
                during_run: true, ..
            }
            | Error::Target {
                during_run: true, ..
            } => 3,
            _ => 2,
        }
    }

    /// A write to a pipe whose reader has gone (`rlsim ... | head`): not a failure of rlsim.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// An [`Error::Io`] naming `path`, the file the failed operation was on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The library's result type: [`Error`] unless stated otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A whole number as a user wrote it (a flag, a directive of an imported configuration), in
/// `min..=max`; else why not (`too large`, `too small`, `not a whole number`), for a message
/// that states the whole range ([`must_be`]). Decimal digits only, as nginx's `ngx_atoi` and
/// the flags' documentation take them: no sign, exponent or fraction.
pub fn whole(text: &str, min: u64, max: u64) -> Result<u64, &'static str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let t = text.trim();
    if t.strip_prefix('-').is_some_and(digits) {
        return Err("too small");
    }
    if !digits(t) {
        return Err("not a whole number");
    }
    match t.parse::<u64>() {
        Ok(v) if v < min => Err("too small"),
        Ok(v) if v <= max => Ok(v),
        _ => Err("too large"),
    }
}

/// The range a number must be in, as messages state it: `must be a whole number of requests
/// from 1 to 4294967295`.
pub fn must_be(what: &str, min: impl fmt::Display, max: impl fmt::Display) -> String {
    format!("must be {what} from {min} to {max}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_say_why_they_are_refused() {
        assert_eq!(whole("0", 0, 5), Ok(0));
        assert_eq!(whole(" 5 ", 1, 5), Ok(5));
        assert_eq!(whole("6", 1, 5), Err("too large"));
        assert_eq!(whole("18446744073709551616", 0, u64::MAX), Err("too large"));
        assert_eq!(whole("0", 1, 5), Err("too small"));
        assert_eq!(whole("-1", 0, 5), Err("too small"));
        for bad in ["", "1e3", "1.5", "+1", "abc", "nan", "inf", "-"] {
            assert_eq!(whole(bad, 0, 5), Err("not a whole number"), "{bad}");
        }
    }
}
