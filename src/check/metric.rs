//! Metric values for expectations and baselines: [`Flat`], an [`AlgorithmReport`](crate::metrics::AlgorithmReport) flattened
//! with its scopes. It lives in `metrics` (`metrics::flat`) so that reports can rank by it
//! without importing `check`; this module keeps the name the rest of `check` uses.

pub use crate::metrics::{Flat, Values};
#[cfg(test)]
use crate::scenario::Scope;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::traffic::Role;
    use serde_json::json;

    fn sample() -> Flat {
        Flat::of_json(&json!({
            "algorithm": "gcra",
            "burst_factor": 1.5,
            "policy_violations": 3,
            "delay": {"count": 0, "p99_ns": 7},
            "roles": {"legit_goodput": 0.75, "abusive_leakage": null},
            "sources": [
                {"name": "a", "role": "legit", "offered": 10, "admitted": 5, "admitted_share": 0.5},
                {"name": "b", "role": "legit", "offered": 30, "admitted": 25, "admitted_share": 0.83},
                {"name": "c", "role": "abusive", "offered": 4, "admitted": 0, "admitted_share": 0.0},
            ],
        }))
    }

    #[test]
    fn flattening_rules() {
        let f = sample();
        let all = Scope::Algorithm;
        assert_eq!(f.get(&all, "burst_factor"), Some(Some(1.5)));
        assert_eq!(f.get(&all, "policy_violations"), Some(Some(3.0)));
        assert_eq!(f.get(&all, "delay_p99_ns"), Some(Some(7.0)));
        assert_eq!(f.get(&all, "legit_goodput"), Some(Some(0.75)));
        assert_eq!(f.get(&all, "abusive_leakage"), Some(None));
        assert_eq!(f.get(&all, "algorithm"), None, "strings are not metrics");
        assert_eq!(f.get(&all, "p99_ns"), None);
        let b = Scope::Source("b".into());
        assert_eq!(f.get(&b, "admitted"), Some(Some(25.0)));
        assert_eq!(f.get(&Scope::Source("zz".into()), "admitted"), None);
    }

    #[test]
    fn role_totals_sum_counts_and_recompute_shares() {
        let f = sample();
        let legit = Scope::Role(Role::Legit);
        assert_eq!(f.get(&legit, "offered"), Some(Some(40.0)));
        assert_eq!(f.get(&legit, "admitted"), Some(Some(30.0)));
        assert_eq!(f.get(&legit, "admitted_share"), Some(Some(0.75)));
        let abusive = Scope::Role(Role::Abusive);
        assert_eq!(f.get(&abusive, "admitted_share"), Some(Some(0.0)));
        assert_eq!(f.names(&legit), ["admitted", "admitted_share", "offered"]);
    }

    /// The metric names validation offers for scenario `text`, and its first row, run and
    /// flattened.
    fn names_and_first_row(text: &str) -> (crate::metrics::MetricNames, Flat) {
        let scenario = Scenario::parse(text, "n.toml".as_ref()).unwrap();
        let names = crate::scenario::metric_names(&scenario);
        let options = crate::sim::RunOptions::new();
        let report = crate::sim::run_all(&scenario, options).unwrap().0;
        (names, Flat::of_report(&report.algorithms[0]))
    }

    /// The names validation offers (`metrics::metric_names`) are the names `Flat` reads.
    #[test]
    fn metric_names_match_the_flattened_report() {
        let text = r#"
            name = "n"
            duration = "10s"
            [policy]
            limit = 5
            window = "1s"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "1/s"
            [[traffic]]
            name = "b"
            kind = "scraper"
        "#;
        let (names, flat) = names_and_first_row(text);
        for scope in [
            Scope::Algorithm,
            Scope::Source("b".into()),
            Scope::Role(Role::Legit),
            Scope::Role(Role::Abusive),
        ] {
            assert_eq!(names.of(&scope), flat.names(&scope), "{scope:?}");
        }
        assert!(
            names
                .of(&Scope::Algorithm)
                .contains(&"mean_rate_error".to_string())
        );
        assert!(
            names
                .of(&Scope::Role(Role::Legit))
                .contains(&"admitted_share".to_string())
        );
    }

    /// A rule's names (`rule=`) are the names its entry in `rules[]` flattens to, token
    /// figures included.
    #[test]
    fn rule_names_match_a_token_rules_flattened_entry() {
        let text = r#"
            name = "n"
            duration = "10s"
            [policy]
            limit = 5
            window = "1s"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "2/s"
            input_tokens = 10
            output_tokens = 5
            [[contender]]
            name = "llm"
            [[contender.rule]]
            name = "tpm"
            algorithm = "fixed_window"
            limit = 20
            window = "1s"
            unit = "tokens"
            accounting = "after"
        "#;
        let (names, flat) = names_and_first_row(text);
        let tpm = Scope::Rule("tpm".into());
        let offered = |prefix: &str| -> Vec<String> {
            let all = names.of(&tpm);
            all.iter()
                .filter(|n| !n.starts_with(prefix))
                .cloned()
                .collect()
        };
        assert_eq!(offered("quota_"), flat.names(&tpm));
        assert_eq!(flat.get(&tpm, "tokens_used"), Some(Some(300.0)));
        assert_eq!(flat.get(&tpm, "tokens_overshoot"), Some(Some(1.5)));
        assert_eq!(flat.get(&Scope::Rule("rpm".into()), "applied"), None);
    }

    /// A calendar rule's entry flattens to the rule names without the token figures, its
    /// quota's included.
    #[test]
    fn rule_names_match_a_calendar_rules_flattened_entry() {
        let text = r#"
            name = "n"
            duration = "10s"
            [policy]
            limit = 5
            window = "1s"
            [[traffic]]
            name = "a"
            kind = "constant"
            rate = "2/s"
            [[contender]]
            name = "plan"
            [[contender.rule]]
            name = "quota"
            algorithm = "calendar_window"
            limit = 15
            window = "day"
        "#;
        let (names, flat) = names_and_first_row(text);
        let quota = Scope::Rule("quota".into());
        let offered: Vec<String> = (names.of(&quota).iter())
            .filter(|n| !n.starts_with("tokens_"))
            .cloned()
            .collect();
        assert_eq!(offered, flat.names(&quota));
        assert_eq!(flat.get(&quota, "quota_ran_out"), Some(Some(1.0)));
        assert_eq!(flat.get(&quota, "quota_keys_ran_out"), Some(Some(1.0)));
        assert_eq!(flat.get(&quota, "refused"), Some(Some(5.0)));
    }
}
