//! "Did you mean ...?" hints for misspelt names.

/// The candidate closest to `name`, if any is close enough to be the likely intended one.
///
/// Jaro-Winkler favours a shared prefix, which is how names of one family differ
/// (`token_buckt` → `token_bucket`, `burst_factr` → `burst_factor`).
pub fn closest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `unknown KIND `name`: did you mean `x`?`, or the list of known names when none is close.
pub fn unknown<'a, I>(kind: &str, name: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    match closest(name, candidates.clone()) {
        Some(hint) => format!("unknown {kind} `{name}`: did you mean `{hint}`?"),
        None => {
            let known: Vec<&str> = candidates.into_iter().collect();
            format!("unknown {kind} `{name}` (known: {})", known.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_close_name_only() {
        let names = ["burst_factor", "legit_goodput", "policy_violations"];
        assert_eq!(closest("burst_factr", names), Some("burst_factor"));
        assert_eq!(closest("zzz", names), None);
        assert_eq!(
            unknown("metric", "legit_goodptu", names),
            "unknown metric `legit_goodptu`: did you mean `legit_goodput`?"
        );
        assert!(unknown("metric", "zzz", names).contains("(known: burst_factor, "));
    }
}
