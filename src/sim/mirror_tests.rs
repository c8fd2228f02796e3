//! Clients that mirror keys ([`crate::metrics`]' per-key entries keep no client entry while
//! every decision's client has its key's id) give every figure a run with client entries
//! kept from the start gives: the same scenarios, run both ways, give the same reports.

use super::{RunOptions, run_all};
use crate::metrics::{MIRRORED_AT_FINISH, NO_MIRROR};
use crate::scenario::Scenario;

use proptest::prelude::*;

/// The reports of `text` as JSON, and how many algorithms finished with mirrored clients.
fn reports(text: &str, mirror: bool) -> (String, u32) {
    let scenario = Scenario::parse(text, "t.toml".as_ref()).unwrap();
    // The switches are per thread: one thread runs every algorithm.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        NO_MIRROR.set(!mirror);
        MIRRORED_AT_FINISH.set(0);
        let (report, _) = run_all(&scenario, RunOptions::new()).unwrap();
        let json = serde_json::to_string(&report.algorithms).unwrap();
        (json, MIRRORED_AT_FINISH.get())
    })
}

const KEYS: [&str; 4] = [
    "\"user\"",
    "\"ip\"",
    "[\"user\", \"endpoint\"]",
    "\"endpoint\"",
];

/// One traffic source: kind, users, rate (per second, or per ten seconds: keys seen once or
/// never), whether it retries (and gives up).
fn source() -> impl Strategy<Value = String> {
    let rate = prop_oneof![
        (1u32..8).prop_map(|r| format!("{r}/s")),
        (1u32..4).prop_map(|r| format!("{r}/10s")),
    ];
    (0usize..3, 1u32..6, rate, any::<bool>(), 0usize..3).prop_map(
        |(kind, users, rate, retries, endpoint)| {
            let kind = match kind {
                0 => format!("kind = \"poisson\"\nusers = {users}"),
                1 => format!("kind = \"constant\"\nusers = {users}"),
                _ => format!(
                    "kind = \"nat\"\nusers = {users}\nips = {}",
                    users.div_ceil(2)
                ),
            };
            let retry = if retries {
                "on_reject = { retry = \"immediately\", max_retries = 2, rtt = \"10ms\" }\n"
            } else {
                ""
            };
            format!("{kind}\nrate = \"{rate}\"\nendpoint = \"/e{endpoint}\"\n{retry}")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn mirrored_clients_change_no_figure(
        key in 0usize..KEYS.len(),
        contender_key in proptest::option::of(0usize..KEYS.len()),
        limit in 1u32..6,
        sources in proptest::collection::vec(source(), 1..4),
    ) {
        let mut text = format!(
            "name = \"m\"\nduration = \"6s\"\n[policy]\nlimit = {limit}\nwindow = \"1s\"\nkey = {}\n",
            KEYS[key]
        );
        for (i, s) in sources.iter().enumerate() {
            let role = if i == 1 { "abusive" } else { "legit" };
            text.push_str(&format!("[[traffic]]\nname = \"s{i}\"\nrole = \"{role}\"\n{s}"));
        }
        if let Some(k) = contender_key {
            text.push_str(&format!(
                "[[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\n\
                 algorithm = \"gcra\"\nlimit = {limit}\nwindow = \"1s\"\nkey = {}\n",
                KEYS[k]
            ));
        }
        let (mirrored, _) = reports(&text, true);
        let (kept, none) = reports(&text, false);
        prop_assert_eq!(none, 0);
        prop_assert_eq!(mirrored, kept);
    }
}

/// Keyed by user, one client per user: every algorithm finishes with clients still mirrored
/// (the test above compares such runs, not only ones that gave mirroring up).
#[test]
fn a_run_keyed_by_user_keeps_no_client_entries() {
    let text = "name = \"m\"\nduration = \"5s\"\n[policy]\nlimit = 2\nwindow = \"1s\"\nkey = \"user\"\n\
                [[traffic]]\nname = \"p\"\nkind = \"poisson\"\nusers = 5\nrate = \"4/s\"\n";
    let (_, mirrored) = reports(text, true);
    assert_eq!(mirrored, 6, "all six algorithms");
    // Keyed by address, many users behind few addresses: not mirrored.
    let nat = text.replace("key = \"user\"", "key = \"ip\"").replace(
        "kind = \"poisson\"\nusers = 5",
        "kind = \"nat\"\nusers = 5\nips = 2",
    );
    assert_eq!(reports(&nat, true).1, 0);
}
