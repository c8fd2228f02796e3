//! LLM token budgets end to end (docs/llm.md): traces of LLM requests (prompt, `max_tokens`,
//! output, stream) through rules counting tokens under each accounting, every decision
//! computed by hand from the documented rule it models.

use crate::util::{rlsim, write};

const S: u64 = 1_000_000_000;

/// One contender per `(name, rule body)`, each one rule `tpm` keyed by API key.
fn scenario(trace: &str, duration: &str, contenders: &[(&str, &str)]) -> String {
    let mut text = format!(
        "name = \"llm\"\nduration = \"{duration}\"\n[policy]\nlimit = 100\nwindow = \"1m\"\n\
         key = \"api_key\"\n[[traffic]]\nname = \"team\"\nkind = \"replay\"\npath = \"{trace}\"\n"
    );
    for (name, rule) in contenders {
        text.push_str(&format!(
            "[[contender]]\nname = \"{name}\"\n[[contender.rule]]\nname = \"tpm\"\n{rule}\n"
        ));
    }
    text
}

/// Every decision of `contender`: `(time, outcome, retry_after, remaining)`.
fn decisions(toml: &str, trace: &str, contender: &str) -> Vec<(u64, String, Option<u64>, u64)> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", trace);
    let path = write(dir.path(), "s.toml", toml);
    let out = rlsim()
        .args(["run", "--quiet", "--decisions", "-"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (t, alg, outcome, retry, remaining) = (
        col("time_ns"),
        col("algorithm"),
        col("outcome"),
        col("retry_after_ns"),
        col("remaining"),
    );
    rows.records()
        .map(|r| r.unwrap())
        .filter(|r| &r[alg] == contender)
        .map(|r| {
            (
                r[t].parse().unwrap(),
                r[outcome].to_string(),
                r[retry].parse().ok(),
                r[remaining].parse().unwrap(),
            )
        })
        .collect()
}

fn outcomes(toml: &str, trace: &str, contender: &str) -> Vec<String> {
    decisions(toml, trace, contender)
        .into_iter()
        .map(|d| d.1)
        .collect()
}

/// Runs `rlsim COMMAND path`, which must refuse it as bad input (exit 2); its stderr. `case`
/// names the case in a failure.
fn refused(command: &str, path: &std::path::Path, case: &str) -> String {
    let out = rlsim().arg(command).arg(path).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
    stderr
}

/// LiteLLM's report (BerriAI/litellm#18730): a team limited to 100 tokens a minute, 5
/// concurrent requests, 663 tokens used. Each of 100 prompt tokens, about 33 out, streamed
/// for 3 s; a sixth request at 5 s.
const FIVE: &str = "time,api_key,user,input_tokens,max_tokens,output_tokens,stream
0,team,a,100,200,33,3s
1000000,team,b,100,200,33,3s
2000000,team,c,100,200,30,3s
3000000,team,d,100,200,33,3s
4000000,team,e,100,200,34,3s
5000000000,team,a,10,200,10,1s
";

#[test]
fn five_concurrent_requests_pass_a_check_and_overshoot_six_times() {
    // Checked before (the minute's count 0 < 100), charged after: all five pass, as their
    // responses have not ended; at 3 s the count is 500 + 163 = 663, and the sixth request is
    // refused until the minute ends (55 s).
    let after = "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\nunit = \"tokens\"\n\
                 accounting = \"after\"";
    // Reserving prompt + max_tokens (300 each) and setting it right at the end, under 400:
    // the first is admitted (300), the next four refused (600 > 400); at 3 s its 167 unused
    // tokens come back (133 counted), so the sixth's 210 fit (343).
    let reconcile = "algorithm = \"fixed_window\"\nlimit = 400\nwindow = \"1m\"\n\
                     unit = \"tokens\"\naccounting = \"reconcile\"";
    // Reserving without setting right: 300 stay counted, the sixth's 210 do not fit.
    let reserve = "algorithm = \"fixed_window\"\nlimit = 400\nwindow = \"1m\"\n\
                   unit = \"tokens\"\naccounting = \"reserve\"";
    let toml = scenario(
        "trace.csv",
        "1m",
        &[
            ("after", after),
            ("reconcile", reconcile),
            ("reserve", reserve),
        ],
    );
    let d = decisions(&toml, FIVE, "after");
    let allow = |t: u64, remaining: u64| (t, "allow".to_string(), None, remaining);
    assert_eq!(
        d,
        [
            allow(0, 100),
            allow(1_000_000, 100),
            allow(2_000_000, 100),
            allow(3_000_000, 100),
            allow(4_000_000, 100),
            (5 * S, "reject".into(), Some(55 * S), 0),
        ]
    );
    assert_eq!(
        outcomes(&toml, FIVE, "reconcile"),
        ["allow", "reject", "reject", "reject", "reject", "allow"]
    );
    assert_eq!(
        outcomes(&toml, FIVE, "reserve"),
        ["allow", "reject", "reject", "reject", "reject", "reject"]
    );
    // The figures in tokens: `after` let the key use 663 in its minute, 6.63 times its
    // budget. `reconcile` charged 300 + 210 up front and gave back 167 + 190; of its four
    // refusals, two (b at 266, c at 396) an exact charge of what each used would have
    // admitted under 400.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    let summary = crate::util::summary(&write(dir.path(), "s.toml", &toml));
    let tokens = |name: &str| crate::util::row(&summary, name)["rules"][0]["tokens"].clone();
    let after = tokens("after");
    assert_eq!(after["used"], 663);
    assert_eq!(after["max_window_used"], 663);
    assert_eq!(after["overshoot"], 6.63);
    assert_eq!(after["charged_after"], 663);
    assert_eq!(after["worst_key"], "team");
    assert!(after["refused_for_reservations"].is_null());
    let reconcile = tokens("reconcile");
    assert_eq!(reconcile["charged_up_front"], 510);
    assert_eq!(reconcile["given_back"], 357);
    assert_eq!(reconcile["used"], 153);
    assert_eq!(reconcile["refused_for_reservations"], 2);
    assert_eq!(reconcile["sources"][0]["refused"], 4);
    let reserve = tokens("reserve");
    assert_eq!(
        (reserve["used"].clone(), reserve["given_back"].clone()),
        (133.into(), 0.into())
    );
    assert_eq!(reserve["refused_for_reservations"], 2);
}

#[test]
fn a_missing_max_tokens_reserves_the_stated_default() {
    // LiteLLM's fixed 1,024-token estimate for a request without `max_tokens` (PR #28805):
    // under 1,000 tokens a minute, a 10-token prompt without it reserves 1,034 and is refused
    // however idle the key; stating `max_tokens = 100` it reserves 110 and passes.
    let trace = "time,api_key,input_tokens,max_tokens,output_tokens
0,team,10,,20
1000000000,team,10,100,20
";
    let rule = "algorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1m\"\nunit = \"tokens\"\n\
                accounting = \"reconcile\"\nmax_tokens_default = 1024";
    let no_default = "algorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1m\"\n\
                      unit = \"tokens\"\naccounting = \"reconcile\"";
    let toml = scenario(
        "trace.csv",
        "1m",
        &[("default", rule), ("no_default", no_default)],
    );
    assert_eq!(outcomes(&toml, trace, "default"), ["reject", "allow"]);
    // Without a default the first reserves its prompt only.
    assert_eq!(outcomes(&toml, trace, "no_default"), ["allow", "allow"]);
}

#[test]
fn envoy_checks_at_the_limit_and_charges_where_the_stream_ends() {
    // Envoy AI Gateway: a request costs 0 up front (envoyproxy/ratelimit over only when
    // count > limit) and its tokens are charged when the response ends. The documented case:
    // 1,000 tokens an hour, a 1,200-token stream succeeds, and leaves the hour 200 over. A
    // request exactly at the limit (1000 counted) passes the `not_over` check, not `under`.
    let trace = "time,api_key,input_tokens,output_tokens,stream
0,team,200,1000,10s
20000000000,team,1,1,0s
3600000000000,team,400,600,1s
3602000000000,team,1,1,0s
3603000000000,team,1,1,0s
";
    let envoy = "algorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1h\"\n\
                 unit = \"tokens\"\naccounting = \"after\"\ncheck = \"not_over\"";
    let under = "algorithm = \"fixed_window\"\nlimit = 1000\nwindow = \"1h\"\n\
                 unit = \"tokens\"\naccounting = \"after\"";
    let toml = scenario("trace.csv", "2h", &[("envoy", envoy), ("under", under)]);
    // 1,200 charged at 10 s: the request at 20 s is refused for the rest of the hour. In the
    // next hour 1,000 are charged at 3601 s: exactly the limit. The request at 3602 s passes
    // Envoy's check and is charged 2 (1,002); the one at 3603 s is over.
    let d = decisions(&toml, trace, "envoy");
    let got: Vec<_> = d.iter().map(|d| (d.1.as_str(), d.2)).collect();
    assert_eq!(
        got,
        [
            ("allow", None),
            ("reject", Some(3580 * S)),
            ("allow", None),
            ("allow", None),
            ("reject", Some(3597 * S)),
        ]
    );
    assert_eq!(
        outcomes(&toml, trace, "under"),
        ["allow", "reject", "allow", "reject", "reject"]
    );
}

#[test]
fn openai_refuses_when_used_and_requested_exceed_the_limit_and_says_when() {
    // OpenAI's 429s: "Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s"
    // (FoundationAgents/MetaGPT#523): a bucket of 10,000 refilled at 10,000 a minute,
    // charged max(max_tokens, prompt) up front. 8,554 used, then 3,082 requested: refused,
    // 1,636 tokens short at 6 ms a token. The 30,000-TPM case of BuilderIO/micro-agent#86:
    // used 29,937, requested 385, "try again in 644ms".
    let trace = "time,api_key,input_tokens,max_tokens,output_tokens
0,team,8554,100,100
0,team,3082,100,100
0,other,29937,,1
0,other,100,385,1
";
    let openai = |limit: u32| {
        format!(
            "algorithm = \"token_bucket\"\nlimit = {limit}\nwindow = \"1m\"\nburst = {limit}\n\
             unit = \"tokens\"\naccounting = \"reserve\"\nestimate = \"max\""
        )
    };
    let (small, large) = (openai(10_000), openai(30_000));
    let toml = scenario("trace.csv", "1m", &[("small", &small), ("large", &large)]);
    let d = decisions(&toml, trace, "small");
    assert_eq!(d[1].1, "reject");
    assert_eq!(d[1].2, Some(9_816_000_000));
    let d = decisions(&toml, trace, "large");
    assert_eq!((d[3].1.as_str(), d[3].2), ("reject", Some(644_000_000)));
}

#[test]
fn cached_prompt_tokens_count_unless_the_rule_leaves_them_out() {
    // Anthropic's input limits leave cache reads out: a 900-token prompt with 800 cached
    // weighs 100 against 500 input tokens a minute; counted whole, it does not fit.
    let trace = "time,api_key,input_tokens,cached_tokens,output_tokens
0,team,900,800,10
";
    let rule = |cached: bool| {
        format!(
            "algorithm = \"token_bucket\"\nlimit = 500\nwindow = \"1m\"\nburst = 500\n\
             unit = \"input_tokens\"\naccounting = \"reconcile\"\ncached = {cached}"
        )
    };
    let (without, with) = (rule(false), rule(true));
    let toml = scenario("trace.csv", "1m", &[("without", &without), ("with", &with)]);
    assert_eq!(outcomes(&toml, trace, "without"), ["allow"]);
    assert_eq!(outcomes(&toml, trace, "with"), ["reject"]);
}

/// A synthetic LLM scenario: a tenant with long prompts, half cached, `max_tokens` on 70% of
/// its requests and streamed outputs, among small clients; two contenders (`after`, and
/// `reconcile` with a default reservation next to a request limit).
const SYNTHETIC: &str = r#"
name = "synth llm"
seed = 3
duration = "5m"
[policy]
limit = 20000
window = "1m"
key = "api_key"
[[traffic]]
name = "tenant"
kind = "poisson"
users = 4
api_key = "big"
rate = "6/min"
input_tokens = { dist = "lognormal", mean = 3000, sigma = 0.8, max = 30000 }
cached_share = 0.5
max_tokens = 2000
max_tokens_share = 0.7
output_tokens = { dist = "uniform", min = 50, max = 3000 }
output_rate = "60/s"
response_time = "400ms"
[[traffic]]
name = "small"
kind = "poisson"
users = 20
rate = "10/min"
input_tokens = { dist = "zipf", max = 2000, exponent = 1.1 }
output_tokens = 200
max_tokens = 500
[[contender]]
name = "after"
[[contender.rule]]
name = "tpm"
algorithm = "sliding_window_counter"
limit = 20000
window = "1m"
unit = "tokens"
accounting = "after"
[[contender]]
name = "reconcile"
[[contender.rule]]
name = "tpm"
algorithm = "token_bucket"
limit = 20000
window = "1m"
burst = 20000
unit = "tokens"
accounting = "reconcile"
max_tokens_default = 4096
[[contender.rule]]
name = "rpm"
algorithm = "fixed_window"
limit = 30
window = "1m"
unit = "requests"
"#;

#[test]
fn generated_llm_traffic_round_trips_through_a_trace() {
    // `rlsim traffic` writes each request's tokens and the whole of its response (time to
    // first token and stream); replayed, every contender decides every request as it did.
    let dir = tempfile::tempdir().unwrap();
    let synthetic = write(dir.path(), "synth.toml", SYNTHETIC);
    let out = rlsim().arg("traffic").arg(&synthetic).output().unwrap();
    assert!(out.status.success());
    let trace = String::from_utf8(out.stdout).unwrap();
    assert!(trace.starts_with(
        "time,ip,user,api_key,endpoint,source,role,method,input_tokens,cached_tokens,\
         max_tokens,output_tokens,stream\n"
    ));
    // Some requests leave `max_tokens` unstated: an empty cell.
    assert!(
        trace
            .lines()
            .any(|l| l.contains(",big,") && l.contains(",,"))
    );
    write(dir.path(), "synth.csv", &trace);
    let head = &SYNTHETIC[..SYNTHETIC.find("[[traffic]]").unwrap()];
    let tail = &SYNTHETIC[SYNTHETIC.find("[[contender]]").unwrap()..];
    let replayed = format!(
        "{head}[[traffic]]\nname = \"all\"\nkind = \"replay\"\npath = \"synth.csv\"\n{tail}"
    );
    let replayed = write(dir.path(), "replayed.toml", &replayed);
    let decisions = |path: &std::path::Path| {
        let out = rlsim()
            .args(["run", "--quiet", "--decisions", "-"])
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every column but the source's name.
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect::<Vec<_>>()
    };
    let (generated, replayed) = (decisions(&synthetic), decisions(&replayed));
    assert!(generated.len() > 2000);
    assert!(generated.iter().any(|l| l.contains(",reject,")));
    assert_eq!(generated, replayed);
}

#[test]
fn bad_token_fields_name_their_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 7] = [
        ("output_tokens = 10\n", "", "traffic[0].output_tokens"),
        (
            "input_tokens = { dist = \"normal\", max = 10 }\noutput_tokens = 1\n",
            "",
            "traffic[0].input_tokens",
        ),
        (
            "input_tokens = 10\noutput_tokens = 1\nmax_tokens_share = 0.5\n",
            "",
            "traffic[0].max_tokens_share",
        ),
        (
            "input_tokens = 10\noutput_tokens = 1\n",
            "unit = \"tokens\"\naccounting = \"later\"\n",
            "contender[0].rule[0].accounting",
        ),
        (
            "input_tokens = 10\noutput_tokens = 1\n",
            "unit = \"tokens\"\naccounting = \"after\"\ncheck = \"not_over\"\nalgorithm = \"gcra\"\n",
            "contender[0].rule[0].check",
        ),
        ("", "unit = \"tokens\"\n", "contender[0].rule[0].unit"),
        (
            "input_tokens = 10\noutput_tokens = 1\n",
            "unit = \"tokens\"\nalgorithm = \"sliding_window_log\"\n",
            "contender[0].rule[0].algorithm",
        ),
    ];
    for (source, rule, field) in cases {
        let algorithm = if rule.contains("algorithm") {
            ""
        } else {
            "algorithm = \"fixed_window\"\n"
        };
        let text = format!(
            "name = \"bad\"\nduration = \"1m\"\n[policy]\nlimit = 10\nwindow = \"1m\"\n\
             [[traffic]]\nname = \"s\"\nkind = \"constant\"\nrate = \"1/s\"\n{source}\
             [[contender]]\nname = \"c\"\n[[contender.rule]]\nname = \"r\"\nlimit = 10\n\
             window = \"1m\"\n{algorithm}{rule}"
        );
        let path = write(dir.path(), "bad.toml", &text);
        let stderr = refused("run", &path, field);
        assert!(stderr.contains("bad.toml:"), "{stderr}");
        assert!(stderr.contains(&format!("`{field}`")), "{field}: {stderr}");
    }
}

#[test]
fn the_terminal_names_each_token_rule_with_its_worst_window() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    let after = "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\nunit = \"tokens\"\n\
                 accounting = \"after\"";
    let path = write(
        dir.path(),
        "s.toml",
        &scenario("trace.csv", "1m", &[("after", after)]),
    );
    let out = rlsim().arg("run").arg(&path).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(
            "  after/tpm (tokens, accounting after, 100 per 1m): used 663; worst window 663 on \
             key team, 6.63x the budget\n"
        ),
        "{stdout}"
    );
}

/// The budget chart draws each token rule's busiest key against its budget: the five
/// requests' 663 tokens, 6.63 budgets, under `after`; 300 of 400 under `reserve`.
#[test]
fn the_budget_chart_draws_each_rule_against_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    let after = "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\nunit = \"tokens\"\n\
                 accounting = \"after\"";
    let reserve = "algorithm = \"fixed_window\"\nlimit = 400\nwindow = \"1m\"\n\
                   unit = \"tokens\"\naccounting = \"reserve\"";
    let toml = scenario("trace.csv", "1m", &[("after", after), ("reserve", reserve)]);
    let path = write(dir.path(), "s.toml", &toml);
    let out = dir.path().join("out");
    let run = rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let svg = std::fs::read_to_string(out.join("charts/token_budget.svg")).unwrap();
    assert!(svg.contains("tpm (tokens per 1m)"), "{svg}");
    assert!(
        svg.contains("after, rule tpm, 3s: busiest key used 6.63 of its budget"),
        "{svg}"
    );
    // Only the first request counts under `reserve`: 100 + 200 reserved, 133 used.
    assert!(
        svg.contains("reserve, rule tpm, 0s: busiest key used 0.33 of its budget"),
        "{svg}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("under `after`, one key of rule `tpm` used 6.63 times its budget"),
        "{report}"
    );
    // Without a token rule there is no such chart.
    let plain = scenario(
        "trace.csv",
        "1m",
        &[(
            "fw",
            "algorithm = \"fixed_window\"\nlimit = 3\nwindow = \"1m\"",
        )],
    );
    let path = write(dir.path(), "plain.toml", &plain);
    let run = rlsim()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!out.join("charts/token_budget.svg").exists());
}

/// `expect` reads a rule's token figures with `rule=`: the five concurrent requests' 6.63,
/// measured and checked; a rule or figure the contender lacks is refused when loaded.
#[test]
fn expectations_read_a_rules_token_figures() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    let after = "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\nunit = \"tokens\"\n\
                 accounting = \"after\"";
    let requests = "[[contender.rule]]\nname = \"rpm\"\nalgorithm = \"fixed_window\"\n\
                    limit = 10\nwindow = \"1m\"\nunit = \"requests\"";
    let with = |expect: &[&str]| {
        let list: Vec<String> = expect.iter().map(|e| format!("{e:?}")).collect();
        let body = scenario(
            "trace.csv",
            "1m",
            &[("after", &format!("{after}\n{requests}"))],
        );
        let text = format!("expect = [{}]\n{body}", list.join(", "));
        write(dir.path(), "s.toml", &text)
    };
    let path = with(&[
        "after rule=tpm tokens_overshoot == 6.63",
        "after rule=tpm tokens_used > 663",
        "* rule=rpm admitted == 5",
    ]);
    let out = rlsim()
        .args(["check", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = json["scenarios"][0]["expectations"].as_array().unwrap();
    let got: Vec<_> = results
        .iter()
        .map(|r| {
            (
                r["rule"].clone(),
                r["measured"].clone(),
                r["passed"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("tpm".into(), 6.63.into(), true.into()),
            ("tpm".into(), 663.0.into(), false.into()),
            ("rpm".into(), 5.0.into(), true.into()),
        ]
    );
    for (expect, message) in [
        (
            "after rule=tmp tokens_used > 1",
            "unknown rule `tmp` (known: tpm, rpm) (in contender `after`)",
        ),
        (
            "after rule=rpm tokens_used > 1",
            "rule `rpm` of contender `after` counts requests, not tokens: it has no `tokens_used`",
        ),
        (
            "after rule=tpm tokens_usd > 1",
            "unknown per-rule metric `tokens_usd`",
        ),
    ] {
        let stderr = refused("check", &with(&[expect]), expect);
        assert!(
            stderr.contains("s.toml:1:11: field `expect[0]`"),
            "{stderr}"
        );
        assert!(stderr.contains(message), "{expect}: {stderr}");
    }
}

/// An intent in tokens judges each contender by the tokens its admitted requests used: the
/// five requests of 133, 133, 130, 133 and 134 tokens (users a to e) and a sixth of 20 (a,
/// at 5 s), against 200 tokens a minute.
#[test]
fn an_intent_in_tokens_judges_the_tokens_admitted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    let after = "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\nunit = \"tokens\"\n\
                 accounting = \"after\"";
    let reserve = "algorithm = \"fixed_window\"\nlimit = 400\nwindow = \"1m\"\n\
                   unit = \"tokens\"\naccounting = \"reserve\"";
    let body = scenario("trace.csv", "1m", &[("after", after), ("reserve", reserve)]);
    let judged = |intent: &str| {
        let text = body.replacen("[[traffic]]", &format!("{intent}\n[[traffic]]"), 1);
        let summary = crate::util::summary(&write(dir.path(), "s.toml", &text));
        let figures = |name: &str| {
            let row = crate::util::row(&summary, name);
            let cost = &row["cost"];
            (
                cost["over_intent"].as_u64().unwrap(),
                cost["needless"].as_u64().unwrap(),
                row["max_window_admitted"].as_u64().unwrap(),
            )
        };
        (
            figures("after"),
            figures("reserve"),
            summary["intent"]["unit"].clone(),
        )
    };
    // Per client: `after` admits all five, each client within 200, and refuses a's second
    // (133 + 20 ≤ 200: needless). `reserve` admits only a's first (300 reserved of 400): b
    // to e (530 tokens) and a's second were all refused needlessly.
    let per_client = "[intent]\nunit = \"tokens\"\nlimit = 200\nwindow = \"1m\"";
    assert_eq!(
        judged(per_client),
        ((0, 20, 134), (0, 550, 133), "tokens".into())
    );
    // Per API key, the five share one budget: 663 used, 463 over it (66 of the second, then
    // the other three whole), and a's 20 on top is not needless; `reserve`'s refusals of 130
    // or more on top of 133 are not needless either, a's 20 is.
    let per_key = format!("{per_client}\nper = \"api_key\"");
    assert_eq!(
        judged(&per_key),
        ((463, 0, 663), (0, 20, 133), "tokens".into())
    );
    // Input tokens only: 100 per request (10 for the sixth), 500 in the key's minute under
    // `after`. Under `reserve` the key holds 100, so each refusal alone (100, or 10) would
    // have kept it within 200: all five needless (each judged alone, as every needless
    // rejection is).
    let input = per_key.replace("unit = \"tokens\"", "unit = \"input_tokens\"");
    assert_eq!(
        judged(&input),
        ((300, 0, 500), (0, 410, 100), "input_tokens".into())
    );
    // The yardstick names the unit.
    let out = rlsim()
        .arg("run")
        .arg(dir.path().join("s.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("judged against the intent: 200 input tokens per 1m per key api_key,"),
        "{stdout}"
    );
}

/// The intent's judge and a rule's token tally are two independent measures of one quantity:
/// the shipped scenario's intent is its `itpm` rule's budget (100,000 input tokens a minute,
/// each tenant one API key), so each contender's worst window is the same in both.
#[test]
fn an_intent_in_tokens_and_a_rule_measure_the_same_worst_window() {
    let summary = crate::util::summary(std::path::Path::new("scenarios/llm_tokens.toml"));
    let mut peaks = Vec::new();
    for row in summary["algorithms"].as_array().unwrap() {
        let rules = row["rules"].as_array().unwrap();
        let itpm = rules.iter().find(|r| r["name"] == "itpm").unwrap();
        assert_eq!(
            row["max_window_admitted"], itpm["tokens"]["max_window_used"],
            "{}",
            row["algorithm"]
        );
        peaks.push(row["max_window_admitted"].as_u64().unwrap());
    }
    assert_eq!(peaks, [94_034, 116_264, 238_276]);
}

/// `chars_per_token` and `estimate_chars_per_token` are refused by file, line and field
/// where they cannot apply.
#[test]
fn character_estimates_are_refused_where_they_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    for (source, rule, message) in [
        (
            "chars_per_token = 0\n",
            "",
            "field `traffic[0].chars_per_token`: must be in (0, 100] characters per token, got 0",
        ),
        (
            "",
            "estimate_chars_per_token = 4\n",
            "field `contender[0].rule[0].estimate_chars_per_token`: estimates a prompt: a rule \
             counting output tokens has none",
        ),
    ] {
        let rule = format!(
            "algorithm = \"fixed_window\"\nlimit = 100\nwindow = \"1m\"\n\
             unit = \"output_tokens\"\n{rule}"
        );
        let text = scenario("trace.csv", "1m", &[("c", &rule)]).replace(
            "path = \"trace.csv\"\n",
            &format!("path = \"trace.csv\"\n{source}"),
        );
        let stderr = refused("run", &write(dir.path(), "s.toml", &text), message);
        assert!(stderr.contains(message), "{stderr}");
    }
    // A generated source without tokens has no prompts to describe.
    let plain = "name = \"n\"\nduration = \"1m\"\n[policy]\nlimit = 5\nwindow = \"1m\"\n\
                 [[traffic]]\nname = \"a\"\nkind = \"constant\"\nrate = \"1/s\"\n\
                 chars_per_token = 2\n";
    let stderr = refused(
        "run",
        &write(dir.path(), "p.toml", plain),
        "chars_per_token",
    );
    assert!(
        stderr.contains("p.toml:10:19: field `traffic[0].chars_per_token`: describes an LLM"),
        "{stderr}"
    );
}

/// An intent in tokens without a source that sends any is refused by file, line and field.
#[test]
fn an_intent_in_tokens_needs_traffic_with_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        "name = \"n\"\nduration = \"1m\"\n[policy]\nlimit = 5\nwindow = \"1m\"\n\
         [intent]\nunit = \"tokens\"\n[[traffic]]\nname = \"a\"\nkind = \"constant\"\n\
         rate = \"1/s\"\n",
    );
    let stderr = refused("run", &path, "intent.unit");
    assert!(
        stderr.contains(
            "s.toml:7:8: field `intent.unit`: counts an LLM's tokens, but no source sends any"
        ),
        "{stderr}"
    );
}

/// The decisions of one `llm` profile contender on `trace` (the policy keys by API key).
fn profile_outcomes(trace: &str, duration: &str, llm: &str) -> Vec<(String, Option<u64>)> {
    let toml = format!(
        "name = \"llm\"\nduration = \"{duration}\"\n[policy]\nlimit = 100\nwindow = \"1m\"\n\
         key = \"api_key\"\n[[traffic]]\nname = \"team\"\nkind = \"replay\"\n\
         path = \"trace.csv\"\n[[contender]]\nname = \"p\"\nllm = {llm}\n"
    );
    decisions(&toml, trace, "p")
        .into_iter()
        .map(|d| (d.1, d.2))
        .collect()
}

fn allowed(n: usize) -> Vec<(String, Option<u64>)> {
    vec![("allow".to_string(), None); n]
}

#[test]
fn the_openai_profile_answers_as_its_429s() {
    // Limit 10000, Used 8554, Requested 3082: "try again in 9.816s"; the help center's
    // reading (prompt + max_tokens) asks 3,182 of the same request: 9.816 + 0.6 s.
    let trace = "time,api_key,input_tokens,max_tokens,output_tokens\n0,team,8554,100,100\n\
                 0,team,3082,100,100\n";
    let guide = profile_outcomes(trace, "1m", "{ profile = \"openai\", tpm = 10000 }");
    assert_eq!(guide[1], ("reject".into(), Some(9_816_000_000)));
    let help = "{ profile = \"openai\", tpm = 10000, reading = \"help_center\" }";
    let help = profile_outcomes(trace, "1m", help);
    // 8,654 charged first (8,554 + 100): 1,346 left, 3,182 asked: 1,836 short.
    assert_eq!(help[1], ("reject".into(), Some(11_016_000_000)));
}

/// OpenAI estimates a prompt from its characters, four to a token: English prompts are
/// charged their tokens, prompts of one character a token (Chinese, Japanese) a quarter of
/// them, so a budget of 1,000 tokens a minute lets five 850-token requests through at once.
#[test]
fn a_prompt_estimated_from_its_characters_undercounts_dense_scripts() {
    // Six requests at 0: prompts of 800 tokens, max_tokens 100, 50 output tokens each.
    let mut trace = String::from("time,api_key,input_tokens,max_tokens,output_tokens\n");
    for _ in 0..6 {
        trace.push_str("0,team,800,100,50\n");
    }
    let run = |chars: &str| {
        let toml = format!(
            "name = \"llm\"\nduration = \"1m\"\n[policy]\nlimit = 100\nwindow = \"1m\"\n\
             key = \"api_key\"\n[[traffic]]\nname = \"team\"\nkind = \"replay\"\n\
             path = \"trace.csv\"\n{chars}[[contender]]\nname = \"p\"\n\
             llm = {{ profile = \"openai\", tpm = 1000 }}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "trace.csv", &trace);
        let summary = crate::util::summary(&write(dir.path(), "s.toml", &toml));
        let row = crate::util::row(&summary, "p");
        let t = row["rules"][0]["tokens"].clone();
        (
            row["admitted"].clone(),
            t["charged_up_front"].clone(),
            t["overshoot"].clone(),
        )
    };
    // English: max(100, 800) = 800 charged, one admitted, 850 used of 1,000.
    assert_eq!(run(""), (1.into(), 800.into(), 0.85.into()));
    // One character a token: max(100, ceil(800 / 4)) = 200 each, five admitted (1,000),
    // 4,250 tokens used in the minute: 4.25 budgets.
    assert_eq!(
        run("chars_per_token = 1\n"),
        (5.into(), 1000.into(), 4.25.into())
    );
    // Code, about 3 characters a token: 600 each, one admitted.
    assert_eq!(
        run("chars_per_token = 3\n"),
        (1.into(), 600.into(), 0.85.into())
    );
}

#[test]
fn the_azure_profile_refuses_the_eleventh_request_of_a_second_at_600_rpm() {
    // "rate limiting will occur for a 600-RPM deployment if more than 10 requests are
    // received during each 1-second period": 11 requests in the first second, 1 in the next.
    let mut trace = String::from("time,api_key,input_tokens,max_tokens,output_tokens\n");
    for i in 0..11u64 {
        trace.push_str(&format!("{},team,10,10,10\n", i * 50_000_000));
    }
    trace.push_str("1000000000,team,10,10,10\n");
    let azure = "{ profile = \"azure_openai\", rpm = 600, tpm = 100000 }";
    let d = profile_outcomes(&trace, "1m", azure);
    let mut expected = allowed(10);
    expected.push(("reject".into(), Some(500_000_000)));
    expected.push(("allow".into(), None));
    assert_eq!(d, expected);
    // Read as 10 s windows: 100 per 10 s, all twelve pass.
    let ten = "{ profile = \"azure_openai\", rpm = 600, tpm = 100000, reading = \"10s\" }";
    assert_eq!(profile_outcomes(&trace, "1m", ten), allowed(12));
}

#[test]
fn the_anthropic_profile_leaves_cache_reads_out_and_reserves_max_tokens() {
    // "with a 200K token cached document and a 50 token user question, you'd see
    // input_tokens: 50": 200,050 prompt tokens fit 1,000 input tokens a minute. OTPM
    // reserves max_tokens (4,000 of 5,000): a second request at 0.5 s is refused; the
    // first's 100 output tokens settle at 1 s, giving 3,900 back, so a third at 2 s fits.
    let trace = "time,api_key,input_tokens,cached_tokens,max_tokens,output_tokens,stream
0,team,200050,200000,4000,100,1s
500000000,team,10,0,4000,100,1s
2000000000,team,10,0,4000,100,1s
";
    let anthropic = "{ profile = \"anthropic\", itpm = 1000, otpm = 5000 }";
    let d = profile_outcomes(trace, "1m", anthropic);
    let kinds: Vec<&str> = d.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(kinds, ["allow", "reject", "allow"]);
    // Cache reads counted (Haiku 3's reading): the first prompt alone is beyond the bucket.
    let counted = "{ profile = \"anthropic\", itpm = 1000, reading = \"cache_reads_counted\" }";
    let d = profile_outcomes(trace, "1m", counted);
    assert_eq!(d[0].0, "reject");
}

#[test]
fn the_gateway_profiles_pass_what_is_in_flight() {
    // Envoy: "with a 1,000-token hourly limit, a request that is admitted while the bucket
    // is empty can stream 1,200 tokens successfully"; the next is limited for the hour.
    let trace = "time,api_key,input_tokens,output_tokens,stream
0,team,200,1000,10s
20000000000,team,1,1,0s
";
    let envoy = "{ profile = \"envoy_ai_gateway\", tpm = 1000, window = \"1h\" }";
    let d = profile_outcomes(trace, "1h", envoy);
    assert_eq!(
        d,
        [("allow".into(), None), ("reject".into(), Some(3580 * S))]
    );
    // LiteLLM v1 and Kong: the five concurrent requests all pass, the sixth does not.
    for llm in [
        "{ profile = \"litellm\", tpm = 100, reading = \"v1\" }",
        "{ profile = \"kong_ai\", tpm = 100, reading = \"fixed\" }",
        "{ profile = \"kong_ai\", tpm = 100 }",
    ] {
        let d = profile_outcomes(FIVE, "1m", llm);
        assert_eq!(&d[..5], allowed(5), "{llm}");
        assert_eq!(d[5].0, "reject", "{llm}");
    }
    // LiteLLM's reservations (its 2026 limiter): the 1,024 floor refuses a first request
    // without max_tokens under 1,000 tokens a minute (PR 28805).
    let trace = "time,api_key,input_tokens,max_tokens,output_tokens\n0,team,1,,20\n";
    let d = profile_outcomes(trace, "1m", "{ profile = \"litellm\", tpm = 1000 }");
    assert_eq!(d[0].0, "reject");
}

#[test]
fn a_profile_refuses_limits_it_does_not_take_by_field() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "trace.csv", FIVE);
    for (llm, field, words) in [
        (
            "{ profile = \"openai\", itpm = 10 }",
            "contender[0].llm.itpm",
            "takes",
        ),
        (
            "{ profile = \"openai\", rpm = 10 }",
            "contender[0].llm.tpm",
            "needs",
        ),
        (
            "{ profile = \"gemini\", tpm = 10 }",
            "contender[0].llm.profile",
            "unknown",
        ),
        (
            "{ profile = \"kong_ai\", tpm = 10, reading = \"x\" }",
            "contender[0].llm.reading",
            "reads",
        ),
        (
            "{ profile = \"azure_openai\", tpm = 10000, rpm = 100 }",
            "contender[0].llm.rpm",
            "divisible",
        ),
        (
            "{ profile = \"anthropic\", rpm = 5, window = \"1h\" }",
            "contender[0].llm.window",
            "leave",
        ),
    ] {
        let toml = scenario("trace.csv", "1m", &[])
            + &format!("[[contender]]\nname = \"p\"\nllm = {llm}\n");
        let path = write(dir.path(), "s.toml", &toml);
        let stderr = refused("run", &path, llm);
        assert!(stderr.contains("s.toml:"), "{stderr}");
        assert!(
            stderr.contains(&format!("`{field}`")) && stderr.contains(words),
            "{llm}: {stderr}"
        );
    }
}
