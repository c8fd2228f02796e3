//! The reproducibility block every report carries: what ran, on what, and how to run it again.

use crate::scenario::Scenario;
use sha2::{Digest, Sha256};

/// What ran, on what, and how to run it again: the reports' reproducibility block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The version of rlsim that ran (the crate's `CARGO_PKG_VERSION`).
    pub rlsim_version: &'static str,
    /// The scenario's path as given on the command line.
    pub scenario_path: String,
    /// SHA-256 of the scenario file's bytes, in hex.
    pub scenario_sha256: String,
    /// The seed the run used (the scenario's, after `--seed`).
    pub seed: u64,
    /// The command line, quoted for a POSIX shell, the program named by its file name.
    pub command_line: String,
}

impl Provenance {
    /// `scenario_bytes` are the file's bytes as read (the library does not read them again, so a
    /// scenario parsed from text can be described too); `args` the process arguments.
    pub fn new(scenario: &Scenario, scenario_bytes: &[u8], args: &[String]) -> Provenance {
        let digest = Sha256::digest(scenario_bytes);
        let mut hex = String::with_capacity(64);
        for byte in digest.iter() {
            hex.push_str(&format!("{byte:02x}"));
        }
        Provenance {
            rlsim_version: env!("CARGO_PKG_VERSION"),
            scenario_path: scenario.path.display().to_string(),
            scenario_sha256: hex,
            seed: scenario.seed,
            command_line: command_line(args),
        }
    }

    /// The block as `key: value` lines.
    pub fn lines(&self) -> String {
        format!(
            "rlsim version: {}\nscenario: {}\nscenario sha256: {}\nseed: {}\ncommand: {}\n",
            self.rlsim_version,
            self.scenario_path,
            self.scenario_sha256,
            self.seed,
            self.command_line
        )
    }
}

/// Arguments joined for a POSIX shell. The program is named by its file name: where the binary
/// lives differs between machines, and the same command must give the same report.
pub fn command_line(args: &[String]) -> String {
    let mut words = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let word = if i == 0 {
            std::path::Path::new(arg)
                .file_name()
                .map_or(arg.clone(), |n| n.to_string_lossy().into_owned())
        } else {
            arg.clone()
        };
        words.push(quote(&word));
    }
    words.join(" ")
}

fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let args: Vec<String> = ["/usr/local/bin/rlsim", "run", "my scenario.toml", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            command_line(&args),
            r"rlsim run 'my scenario.toml' 'it'\''s'"
        );
    }
}
