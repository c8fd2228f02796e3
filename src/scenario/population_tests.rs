//! Populations, identities and attack kinds, from the scenario syntax to the requests they send.

use super::model::scenario::Scenario;
use crate::time::NANOS_PER_SEC;
use crate::traffic::tests::arrivals;
use crate::traffic::{self, Arrival, KeySpace};

const SEC: u64 = NANOS_PER_SEC;

fn scenario(traffic: &str, key: &str) -> Scenario {
    let text = format!(
        "name = \"t\"\nduration = \"10m\"\nseed = 1\n[policy]\nlimit = 100\nwindow = \"1m\"\nkey = {key}\n[[traffic]]\nname = \"s\"\n{traffic}\n"
    );
    Scenario::parse(&text, "t.toml".as_ref()).unwrap()
}

fn run(s: &Scenario) -> (Vec<Arrival>, KeySpace) {
    let mut keys = KeySpace::new();
    let mut sources = traffic::build_sources(&s.traffic, &s.policy.key, s.seed, &mut keys).unwrap();
    let mut out = Vec::new();
    while let Some(a) = sources[0].next_arrival(&mut keys).unwrap() {
        out.push(a);
    }
    (out, keys)
}

#[test]
fn constant_clients_with_zipf_rates_keep_their_own_exact_rate() {
    // Zipf exponent 1 over 2 clients: multipliers 4/3 and 2/3 of 3/s, i.e. 4/s and 2/s.
    let s = scenario(
        "kind = \"constant\"\nusers = 2\nrate = \"3/s\"\nrate_dist = \"zipf\"\nzipf_exponent = 1",
        "\"ip\"",
    );
    let (a, keys) = run(&s);
    let count = |ip: &str| a.iter().filter(|x| keys.name(x.key) == ip).count();
    assert_eq!((count("10.0.0.1"), count("10.0.0.2")), (2400, 1200));
    assert!(a.windows(2).all(|w| w[0].time <= w[1].time));
    // Client 0 at 0, 250 ms, ...; client 1 phased by half of its own 500 ms gap.
    let first: Vec<u64> = a.iter().take(4).map(|x| x.time).collect();
    assert_eq!(first, [0, 250_000_000, 250_000_000, 500_000_000]);
}

#[test]
fn endpoint_mix_follows_the_weights() {
    // 1:3 over 6000 requests: /a is binomial(6000, 1/4), sd 33.5; five sd = 168.
    let s = scenario(
        "kind = \"constant\"\nrate = \"10/s\"\nendpoints = [{ path = \"/a\", weight = 1 }, { path = \"/b\", weight = 3 }]",
        "[\"ip\", \"endpoint\"]",
    );
    let (a, keys) = run(&s);
    assert_eq!(a.len(), 6000);
    let on_a = a
        .iter()
        .filter(|x| keys.name(x.key) == "10.0.0.1|/a")
        .count() as i64;
    let on_b = a
        .iter()
        .filter(|x| keys.name(x.key) == "10.0.0.1|/b")
        .count() as i64;
    assert_eq!(on_a + on_b, 6000);
    assert!((on_a - 1500).abs() < 168, "{on_a}");
}

#[test]
fn ipv6_botnet_is_one_user_over_many_addresses() {
    let s = scenario(
        "kind = \"poisson\"\nrate = \"1/h\"\nbotnet = 100000\nipv6 = true",
        "\"ip\"",
    );
    let (a, keys) = run(&s);
    assert_eq!(keys.clients(), 1, "one attacker");
    assert_eq!(keys.len(), 100_000, "each client its own address");
    assert!(
        keys.name(a[0].key).starts_with("2001:db8:0::")
            || keys.name(a[0].key).starts_with("2001:db8::")
    );
    // The same user behind every address.
    let users = crate::policy::KeySpec::new(vec![crate::policy::KeyField::User]).unwrap();
    let mut k = KeySpace::new();
    let mut src = traffic::build_sources(&s.traffic, &users, 1, &mut k).unwrap();
    let first = src[0].next_arrival(&mut k).unwrap().unwrap();
    assert_eq!(k.name(first.key), "s");
}

#[test]
fn credential_stuffing_stays_under_the_per_ip_limit() {
    let s = scenario(
        "kind = \"credential_stuffing\"\nips = 1000\nrate = \"20000/min\"",
        "\"ip\"",
    );
    assert_eq!(s.traffic[0].role, traffic::Role::Abusive);
    assert_eq!(s.traffic[0].population.endpoint, "/login");
    let (a, keys) = run(&s);
    // 20 000/min for 10 min over 1000 addresses: ~200 000 requests, 20/min per address.
    assert!((a.len() as f64 - 200_000.0).abs() < 5.0 * 200_000f64.sqrt());
    assert_eq!(keys.len(), 1000);
    let err = Scenario::parse(
        "name = \"t\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1m\"\n[[traffic]]\nname = \"s\"\nkind = \"credential_stuffing\"\nips = 10\nrate = \"100/min\"\n",
        "t.toml".as_ref(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("t.toml:10:8: field `traffic[0].rate`"),
        "{err}"
    );
    assert!(err.contains("at or over the limit of 10"), "{err}");
}

#[test]
fn scraper_runs_just_over_the_limit() {
    // 1.1 × 100 per minute, constant: 110/min for 10 minutes.
    let s = scenario("kind = \"scraper\"\nip = \"198.51.100.9\"", "\"ip\"");
    let (a, _) = run(&s);
    assert_eq!(a.len(), 1100);
    assert_eq!(a[1].time, 60 * SEC / 110);
}

#[test]
fn boundary_repeats_at_every_window_boundary() {
    let s = scenario("kind = \"boundary\"\ncount = 2\nrepeat = true", "\"ip\"");
    let (a, _) = arrivals(&s.traffic[0], 0);
    let times: Vec<u64> = a.iter().map(|x| x.time).collect();
    // 100 ms before and at each minute boundary from 1:00 to 9:00, and the lead batch of 10:00,
    // which is at 9:59.9, before the end.
    assert_eq!(times.len(), 9 * 4 + 2);
    assert_eq!(
        &times[..4],
        [59_900_000_000, 59_900_000_000, 60 * SEC, 60 * SEC]
    );
    assert_eq!(times[35], 540 * SEC);
    assert_eq!(times[37], 599_900_000_000);
}

#[test]
fn tiers_take_consecutive_shares_of_the_clients() {
    let s = scenario(
        "kind = \"poisson\"\nusers = 8\nrate = \"1/s\"\ntiers = [{ name = \"free\", weight = 3 }, { name = \"pro\" }]",
        "\"ip\"",
    );
    let pop = &s.traffic[0].population;
    let tiers: Vec<&str> = (0..8).map(|j| pop.tier(j).unwrap()).collect();
    assert_eq!(
        tiers,
        ["free", "free", "free", "free", "free", "free", "pro", "pro"]
    );
}

#[test]
fn process_fields_are_checked_per_arrival() {
    let err = |traffic: &str| {
        Scenario::parse(
            &format!("name = \"t\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1m\"\n[[traffic]]\nname = \"s\"\n{traffic}\n"),
            "t.toml".as_ref(),
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("kind = \"poisson\"\nrate = \"1/s\"\narrival = \"ramp\"\nperiod = \"1m\"");
    assert!(
        e.contains("t.toml:11:10: field `traffic[0].period`: not used by arrival `ramp`"),
        "{e}"
    );
    let e = err("kind = \"poisson\"\nrate = \"1/s\"\narrival = \"ramp\"");
    assert!(
        e.contains("field `traffic[0].rate_to`: arrival `ramp` requires `rate_to`"),
        "{e}"
    );
    let e = err(
        "kind = \"poisson\"\nrate = \"1/s\"\narrival = \"sine\"\namplitude = \"2/s\"\nperiod = \"1m\"",
    );
    assert!(e.contains("must not exceed `rate`"), "{e}");
    let e = err(
        "kind = \"poisson\"\narrival = \"phases\"\nphases = [{ duration = \"1m\", rate = \"1/s\", ramp = \"2/s\" }]",
    );
    assert!(e.contains("t.toml:10:"), "{e}");
    let e = err("kind = \"bursts\"\ncount = 1\nevery = \"1s\"\narrival = \"sine\"");
    assert!(
        e.contains("field `traffic[0].arrival`: not used by traffic kind `bursts`"),
        "{e}"
    );
    let e = err(
        "kind = \"poisson\"\nrate = \"1/s\"\narrival = \"onoff\"\non = \"1s\"\noff = \"1s\"\non_dist = \"pareto\"\npareto_alpha = 0.5",
    );
    assert!(
        e.contains("field `traffic[0].pareto_alpha`: must be in (1, 10]"),
        "{e}"
    );
}
