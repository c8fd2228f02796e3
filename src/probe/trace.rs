//! What a probe leaves behind to judge it: the exchanges as a trace in the CSV replay format
//! (`probe_trace.csv`: each request at the instant it was sent, with its response's status) and
//! a scenario replaying it (`probe_scenario.toml`): the scenario as written, its traffic
//! replaced by the trace, with the service as a recorded contender beside its own. A plain
//! `rlsim run` of that scenario judges the service and back-tests the models against it.

use super::{Probe, ProbeOptions};
use crate::error::{Error, Result};
use crate::scenario::{Origin, Scenario};
use crate::time::Nanos;
use std::path::Path;

/// The trace file's name, beside the probe's scenario.
pub const TRACE: &str = "probe_trace.csv";
/// The probe's scenario.
pub const SCENARIO: &str = "probe_scenario.toml";

/// `probe_trace.csv`: every exchange in send order, `time` in ns since the Unix epoch (`base`
/// plus the instant it was sent on the scenario's clock), `decision` the service's as the
/// probe read its status (`refused` for 429 or `--refuse-status`), so that every contender is
/// back-tested against the same truth whatever status it refuses with itself.
pub fn trace_csv(
    scenario: &Scenario,
    probe: &Probe,
    options: &ProbeOptions,
    base: Nanos,
) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "time",
        "ip",
        "user",
        "api_key",
        "endpoint",
        "source",
        "role",
        "method",
        "status",
        "decision",
        "x_forwarded_for",
    ];
    w.write_record(header)
        .expect("writing to memory cannot fail");
    for p in &probe.exchanges {
        let source = scenario
            .traffic
            .get(p.source as usize)
            .map_or("", |s| s.name.as_str());
        let [ip, user, api_key, endpoint] = &p.fields;
        let time = (base + p.sent).to_string();
        let status = p.status.to_string();
        let row = [
            time.as_str(),
            ip,
            user,
            api_key,
            endpoint,
            source,
            p.role.name(),
            p.method.as_str(),
            status.as_str(),
            if options.refuses(p.status) {
                "refused"
            } else {
                "admitted"
            },
            p.forwarded_for.as_str(),
        ];
        w.write_record(row).expect("writing to memory cannot fail");
    }
    w.into_inner().expect("writing to memory cannot fail")
}

/// The name the service goes by among the contenders: `service`, unless one is called so.
pub fn service_name(scenario: &Scenario) -> String {
    let taken = |n: &str| scenario.algorithms.iter().any(|c| c.name == n);
    ["service", "probed-service", "probed-service-2"]
        .into_iter()
        .find(|n| !taken(n))
        .unwrap_or("probed")
        .to_string()
}

/// `probe_scenario.toml` from the scenario's effective text (`--set` applied): its traffic is
/// the trace, its `duration` covers the trace, the service is a recorded contender refusing with
/// `options.refuse_status`, the back-test's model is the scenario's first contender, and a
/// contender's relative `import` is made absolute (the file moves to the output directory).
/// `[sweep]`, `replicates` and `[[uncertain]]` vary the traffic, which a trace cannot: left out.
pub fn scenario_toml(
    text: &str,
    scenario: &Scenario,
    probe: &Probe,
    options: &ProbeOptions,
    duration: Nanos,
) -> Result<String> {
    let mut table: toml::Table = toml::from_str(text)
        .map_err(|e| Error::Internal(format!("a validated scenario no longer parses: {e}")))?;
    for dropped in ["traffic", "sweep", "replicates", "uncertain", "start"] {
        table.remove(dropped);
    }
    let mut replay = toml::Table::new();
    replay.insert("name".into(), "probe".into());
    replay.insert("kind".into(), "replay".into());
    replay.insert("path".into(), TRACE.into());
    replay.insert("format".into(), "csv".into());
    table.insert("traffic".into(), vec![toml::Value::Table(replay)].into());
    table.insert("duration".into(), format!("{duration}ns").into());
    if let Ok(seed) = i64::try_from(scenario.seed) {
        table.insert("seed".into(), toml::Value::Integer(seed));
    }
    // A contender among the short form's defaults would take their place: name them.
    if !table.contains_key("algorithms") && !table.contains_key("contender") {
        let all: Vec<toml::Value> = scenario
            .algorithms
            .iter()
            .filter(|c| c.origin == Origin::ShortForm && c.deployment().is_none())
            .map(|c| c.name.clone().into())
            .collect();
        table.insert("algorithms".into(), all.into());
    }
    let base = scenario.path.parent().unwrap_or(Path::new("."));
    let contenders = table
        .entry("contender")
        .or_insert_with(|| toml::Value::Array(Vec::new()));
    let Some(contenders) = contenders.as_array_mut() else {
        return Err(Error::Internal(
            "`contender` is not an array of tables".into(),
        ));
    };
    for c in contenders.iter_mut().filter_map(toml::Value::as_table_mut) {
        if let Some(toml::Value::String(import)) = c.get_mut("import")
            && Path::new(import.as_str()).is_relative()
        {
            let absolute = std::path::absolute(base.join(&*import))
                .map_err(|e| Error::io(base.join(&*import), e))?;
            *import = absolute.display().to_string();
        }
    }
    let name = service_name(scenario);
    let mut service = toml::Table::new();
    service.insert("name".into(), name.clone().into());
    let described = format!("the live service at {}, probed", probe.target);
    service.insert("description".into(), described.into());
    service.insert("recorded".into(), true.into());
    let status = i64::from(options.refuse_status);
    service.insert("refuse_status".into(), toml::Value::Integer(status));
    contenders.push(toml::Value::Table(service));
    if let Some(first) = scenario.algorithms.first()
        && !table.contains_key("backtest")
    {
        let mut backtest = toml::Table::new();
        backtest.insert("model".into(), first.name.clone().into());
        table.insert("backtest".into(), backtest.into());
    }
    let body = toml::to_string(&table).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(format!(
        "# The probe of {} by `rlsim probe` at speed {}: the scenario {} with its traffic\n\
         # replaced by what was sent ({TRACE}: each request at the instant it went out, with the\n\
         # service's status), the service judged as the recorded contender `{}`.\n\n{body}",
        probe.target,
        probe.speed,
        scenario.path.display(),
        name,
    ))
}
