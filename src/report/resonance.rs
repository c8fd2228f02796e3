//! Periodic sources that resonate with a window: a perfectly periodic source whose period fits
//! a window a whole number of times, so that a client reclaims its own expiring slots at the
//! same phase every window and the window-based figures depend on that alignment (nat.toml's
//! scraper at 60/min against a 1 min window). Every verdict carries these warnings.

use crate::scenario::Scenario;
use crate::time::{Nanos, format_duration};
use crate::traffic::{Arrivals, RateDist};
use std::collections::BTreeMap;

/// How close to a whole number of periods a window must be to resonate: within this share of
/// one period. A client's phase in the window then drifts by less than 2% of its period per
/// window, so it meets the same expiring slots for 50 windows and more.
pub const RESONANCE_TOLERANCE: f64 = 0.02;

/// The windows of the scenario and who uses each: the policy's and every contender rule's
/// (but a calendar rule's).
fn windows(scenario: &Scenario) -> BTreeMap<Nanos, Vec<String>> {
    let mut out: BTreeMap<Nanos, Vec<String>> = BTreeMap::new();
    out.entry(scenario.policy.window)
        .or_default()
        .push("the policy".into());
    for c in &scenario.algorithms {
        match c.stack() {
            Some(stack) => {
                for rule in stack
                    .rules
                    .iter()
                    // A calendar period has no one length to resonate with.
                    .filter(|r| {
                        r.limiter.as_profile().is_none() && r.limiter.calendar_of().is_none()
                    })
                {
                    let who = c.name.clone();
                    let users = out.entry(rule.params().window).or_default();
                    if !users.contains(&who) {
                        users.push(who);
                    }
                }
            }
            None if c.profile().is_none()
                && c.limiter().is_none_or(|l| l.calendar_of().is_none()) =>
            {
                out.entry(c.params().window)
                    .or_default()
                    .push(c.name.clone());
            }
            None => {}
        }
    }
    out.remove(&0);
    out
}

/// How a periodic source is periodic, which says what would break the resonance.
#[derive(Clone, Copy)]
enum Periodic {
    Constant,
    Bursts,
}

/// Each unjittered periodic source's period per client: a constant source with one rate for
/// all its clients, or bursts.
fn periods(scenario: &Scenario) -> Vec<(&str, f64, Periodic)> {
    scenario
        .traffic
        .iter()
        .filter(|s| s.jitter_ppm == 0)
        .filter_map(|s| match &s.arrivals {
            Arrivals::Constant(rate) if matches!(s.population.rates, RateDist::Same) => {
                Some((s.name.as_str(), rate.mean_interval_ns(), Periodic::Constant))
            }
            Arrivals::Bursts { every, .. } => {
                Some((s.name.as_str(), *every as f64, Periodic::Bursts))
            }
            _ => None,
        })
        .collect()
}

/// One periodic source and every window its period resonates with.
#[derive(Debug, Clone, PartialEq)]
pub struct Resonance {
    pub source: String,
    /// Its period per client, rounded to the nanosecond.
    pub period: Nanos,
    bursts: bool,
    /// Each window it resonates with (shortest first), the whole number of periods it holds
    /// and who uses it: `the policy` and contender names.
    pub windows: Vec<(Nanos, u64, Vec<String>)>,
    /// Every contender uses a resonating window (with the policy's).
    pub everyone: bool,
}

impl Resonance {
    /// The warning, one sentence without its full stop.
    pub fn text(&self) -> String {
        let source = &self.source;
        let (verb, advice) = if self.bursts {
            (
                "bursts exactly every",
                format!(
                    "compare with an every that does not divide the window (--set traffic.{source}.every=...)"
                ),
            )
        } else {
            (
                "sends exactly every",
                format!(
                    "add jitter = \"5%\" to the source, or compare with --set traffic.{source}.arrival=poisson"
                ),
            )
        };
        let windows: Vec<String> = (self.windows.iter())
            .map(|(window, k, users)| {
                let what = match k {
                    1 => "one period".to_string(),
                    k => format!("{k} of its periods"),
                };
                let users = if self.everyone && self.windows.len() == 1 {
                    "the policy and every contender".to_string()
                } else {
                    users.join(", ")
                };
                format!(
                    "the {} window of {users} is {what}",
                    format_duration(*window)
                )
            })
            .collect();
        format!(
            "source {source} {verb} {} per client, and {}: a perfectly periodic client reclaims its own expiring slots, so the figures depend on that alignment; {advice}",
            format_duration(self.period),
            windows.join("; ")
        )
    }
}

/// The periodic sources whose period resonates with a window, one each with all its windows:
/// a window within [`RESONANCE_TOLERANCE`] of a period of a whole number `k ≥ 1` of periods.
pub fn resonance(scenario: &Scenario) -> Vec<Resonance> {
    let windows = windows(scenario);
    let mut out = Vec::new();
    for (source, period, how) in periods(scenario) {
        let mut hits = Vec::new();
        for (&window, users) in &windows {
            let k = (window as f64 / period).round();
            if k < 1.0 || (window as f64 - k * period).abs() > RESONANCE_TOLERANCE * period {
                continue;
            }
            hits.push((window, k as u64, users.clone()));
        }
        if hits.is_empty() {
            continue;
        }
        let users: std::collections::BTreeSet<&String> =
            hits.iter().flat_map(|(_, _, u)| u).collect();
        let everyone = users.len() == scenario.algorithms.len() + 1;
        out.push(Resonance {
            source: source.to_string(),
            period: period.round() as Nanos,
            bursts: matches!(how, Periodic::Bursts),
            windows: hits,
            everyone,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(window: &str, traffic: &str) -> Scenario {
        let text = format!(
            "name = \"r\"\nduration = \"5m\"\nalgorithms = [\"fixed_window\"]\n\
             [policy]\nlimit = 10\nwindow = \"{window}\"\n[[traffic]]\nname = \"s\"\n{traffic}\n"
        );
        Scenario::parse(&text, Path::new("r.toml")).unwrap()
    }

    #[test]
    fn a_period_that_divides_the_window_resonates() {
        let constant = "kind = \"constant\"\nrate = \"60/min\"";
        let w: Vec<String> = resonance(&scenario("1m", constant))
            .iter()
            .map(Resonance::text)
            .collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("source s sends exactly every 1s per client, and the 1m window of the policy and every contender is 60 of its periods"),
            "{}",
            w[0]
        );
        // 60.01 s is within 2% of a period of 60 periods; 60.5 s is half a period off.
        assert_eq!(resonance(&scenario("60010ms", constant)).len(), 1);
        assert!(resonance(&scenario("60500ms", constant)).is_empty());
        // A window shorter than a period holds no whole period.
        assert!(resonance(&scenario("400ms", constant)).is_empty());
        // Bursts every 30 s against 1 min: two periods.
        let bursts = "kind = \"bursts\"\ncount = 5\nevery = \"30s\"";
        let w: Vec<String> = resonance(&scenario("1m", bursts))
            .iter()
            .map(Resonance::text)
            .collect();
        assert!(w[0].contains("is 2 of its periods"), "{w:?}");
    }

    #[test]
    fn random_or_jittered_timing_does_not_resonate() {
        let poisson = "kind = \"poisson\"\nrate = \"60/min\"";
        assert!(resonance(&scenario("1m", poisson)).is_empty());
        let jittered = "kind = \"constant\"\nrate = \"60/min\"\njitter = \"5%\"";
        assert!(resonance(&scenario("1m", jittered)).is_empty());
        let nat = Scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/nat.toml"))
            .unwrap();
        let w: Vec<String> = resonance(&nat).iter().map(Resonance::text).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("source scraper sends exactly every 1s"),
            "{w:?}"
        );
    }

    /// Three contenders on two windows that a 1 s period divides (10 s: 10 periods; 1 m: 60)
    /// and one on 90.5 s (half a period off): one warning for the source, naming both windows
    /// and their users, shortest window first.
    #[test]
    fn one_warning_per_source_names_every_window_and_contender() {
        let contender = |name: &str, window: &str| {
            format!(
                "[[contender]]\nname = \"{name}\"\n[[contender.rule]]\nname = \"r\"\n\
                 algorithm = \"fixed_window\"\nlimit = 10\nwindow = \"{window}\"\n"
            )
        };
        let text = format!(
            "name = \"r\"\nduration = \"5m\"\n[policy]\nlimit = 10\nwindow = \"1m\"\n{}{}{}{}\
             [[traffic]]\nname = \"s\"\nkind = \"constant\"\nrate = \"60/min\"\n\
             [[traffic]]\nname = \"p\"\nkind = \"poisson\"\nrate = \"60/min\"\n",
            contender("a", "1m"),
            contender("b", "10s"),
            contender("c", "10s"),
            contender("d", "90500ms"),
        );
        let s = Scenario::parse(&text, Path::new("r.toml")).unwrap();
        let r = resonance(&s);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].source, "s");
        assert_eq!(r[0].period, 1_000_000_000);
        let windows: Vec<(Nanos, u64, Vec<String>)> = r[0].windows.clone();
        assert_eq!(
            windows,
            [
                (10_000_000_000, 10, vec!["b".to_string(), "c".to_string()]),
                (
                    60_000_000_000,
                    60,
                    vec!["the policy".to_string(), "a".to_string()]
                ),
            ]
        );
        assert!(!r[0].everyone);
        assert_eq!(
            r[0].text(),
            "source s sends exactly every 1s per client, and the 10s window of b, c is 10 of its \
             periods; the 1m window of the policy, a is 60 of its periods: a perfectly periodic \
             client reclaims its own expiring slots, so the figures depend on that alignment; \
             add jitter = \"5%\" to the source, or compare with --set traffic.s.arrival=poisson"
        );
    }
}
