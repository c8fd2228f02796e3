//! What a scenario declares for `rlsim run --replicates` and `--sensitivity`: how many seeds
//! to run by default (`replicates = N`) and the inputs it is unsure of (`[[uncertain]]`), each
//! with where it was written. The runs themselves are `crate::replicate`'s.

use crate::error::Location;

/// Most replicates one run may ask for (`--replicates`, `replicates = N`).
pub const MAX_REPLICATES: u32 = 10_000;

/// Most values all `[[uncertain]]` entries may have together (each value is one more run).
pub const MAX_UNCERTAIN_VALUES: usize = 1_000;

/// The scenario's replicate settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplicateSpec {
    /// `replicates = N`: what `rlsim run` does without `--replicates`.
    pub count: Option<u32>,
    /// `[[uncertain]]`, in file order.
    pub uncertain: Vec<Uncertain>,
}

/// One `[[uncertain]] set = "FIELD" values = [...]`: each value is tried as `--set FIELD=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Uncertain {
    /// The dotted path, as `--set` takes it (`traffic.scraper.rate`).
    pub field: String,
    /// The values to try, in file order.
    pub values: Vec<UncertainValue>,
    /// Where `set` was written.
    pub at: Location,
    /// `uncertain[i]`, for errors.
    pub name: String,
}

/// One value of an `[[uncertain]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct UncertainValue {
    /// As TOML, the way `--set` splices it (`"90/min"` quoted, `60` bare).
    pub toml: String,
    /// As people read it (`90/min`).
    pub shown: String,
    /// Where it was written.
    pub at: Location,
}
