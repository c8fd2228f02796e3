//! The catalogue `rlsim algorithms` prints: every algorithm and profile, one line on what it
//! does, and the parameters a scenario can set for it (with their defaults).

use super::AlgorithmKind;
use super::profiles::{ParamSpec, ParamType, Weight};

/// One algorithm or profile.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    pub name: &'static str,
    /// `algorithm` (exact, parameters in `[algorithm.NAME]`) or `profile` (a library's
    /// behaviour, parameters in `[profile.NAME]`).
    pub kind: &'static str,
    pub description: &'static str,
    /// Where a scenario sets the parameters.
    pub table: String,
    pub parameters: Vec<ParamSpec>,
    /// What it does with a request's cost: `weighs: ...` or `counts requests: ...`.
    pub cost: String,
    /// Whether a rule with it can give back what a response did not cost (`refunds = true`).
    pub refunds: bool,
}

const LIMIT: ParamSpec = ParamSpec {
    name: "limit",
    ty: ParamType::Count,
    default: "policy limit",
    doc: "requests per window",
};
const WINDOW: ParamSpec = ParamSpec {
    name: "window",
    ty: ParamType::Duration,
    default: "policy window",
    doc: "the window's length",
};
const BURST: ParamSpec = ParamSpec {
    name: "burst",
    ty: ParamType::Count,
    default: "policy burst",
    doc: "requests admitted back to back",
};

/// The calendar window's parameters: its window is a period of a calendar, not a length.
const CALENDAR: [ParamSpec; 5] = [
    ParamSpec {
        name: "limit",
        ty: ParamType::Count,
        default: "required",
        doc: "requests (or units of the rule) per period",
    },
    ParamSpec {
        name: "window",
        ty: ParamType::Choice,
        default: "required",
        doc: "the calendar period: day, week, month or year",
    },
    ParamSpec {
        name: "time_zone",
        ty: ParamType::Choice,
        default: "UTC",
        doc: "the clocks the periods follow: an IANA name (America/Sao_Paulo) or an offset (-03:00)",
    },
    ParamSpec {
        name: "week_starts",
        ty: ParamType::Choice,
        default: "monday",
        doc: "the weekday a week starts on (ISO 8601: monday)",
    },
    ParamSpec {
        name: "month_starts",
        ty: ParamType::Count,
        default: "1",
        doc: "the day of the month a month starts on (1 to 31; past a short month's end, its last day)",
    },
];

/// Every algorithm, then every profile, in report order.
pub fn entries() -> Vec<Entry> {
    AlgorithmKind::every()
        .map(|kind| {
            let (kind_name, parameters) = match kind {
                AlgorithmKind::Profile(p) => ("profile", p.params().to_vec()),
                AlgorithmKind::CalendarWindow => ("algorithm", CALENDAR.to_vec()),
                k if k.uses_burst() => ("algorithm", vec![LIMIT, WINDOW, BURST]),
                _ => ("algorithm", vec![LIMIT, WINDOW]),
            };
            let table = match kind {
                AlgorithmKind::CalendarWindow => {
                    "[[contender.rule]] algorithm = \"calendar_window\"".to_string()
                }
                _ => format!("[{kind_name}.{}]", kind.name()),
            };
            let cost = match kind {
                AlgorithmKind::Profile(p) => match p.weight() {
                    Weight::Takes(how) => format!("weighs: {how}"),
                    Weight::Requests(why) => format!("counts requests: {why}"),
                },
                _ => "weighs: a cost of c is c requests at once, all or none; above the capacity, never".to_string(),
            };
            Entry {
                name: kind.name(),
                kind: kind_name,
                description: kind.description(),
                table,
                parameters,
                cost,
                refunds: kind.refunds(),
            }
        })
        .collect()
}

/// The catalogue for people: one line per entry, then one indented line per parameter.
pub fn text(entries: &[Entry]) -> String {
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for e in entries {
        out.push_str(&format!("{:<width$}  {}\n", e.name, e.description));
        for p in &e.parameters {
            out.push_str(&format!(
                "{:<width$}    {} = {} (default: {}): {}\n",
                "",
                p.name,
                p.ty.name(),
                p.default,
                p.doc
            ));
        }
        out.push_str(&format!("{:<width$}    cost: {}\n", "", e.cost));
        let refunds = match e.refunds {
            true => "yes: a rule with `refunds = true` gives back what a response did not cost",
            false => "no",
        };
        out.push_str(&format!("{:<width$}    refunds: {refunds}\n", ""));
    }
    out
}

/// The catalogue as JSON: an array of [`Entry`].
pub fn json(entries: &[Entry]) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(entries).expect("plain data serialises");
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_algorithm_and_profile_once() {
        let e = entries();
        assert_eq!(e.len(), AlgorithmKind::every().count());
        assert_eq!(e[0].name, "fixed_window");
        assert_eq!(e[0].parameters.len(), 2);
        let nginx = e.iter().find(|e| e.name == "nginx-limit-req").unwrap();
        assert_eq!(nginx.kind, "profile");
        assert_eq!(nginx.table, "[profile.nginx-limit-req]");
        let names: Vec<_> = nginx.parameters.iter().map(|p| p.name).collect();
        assert_eq!(names, ["rate", "burst", "nodelay", "delay"]);
        assert!(nginx.cost.starts_with("counts requests: nginx's limit_req"));
        let governor = e.iter().find(|e| e.name == "governor").unwrap();
        assert!(governor.cost.starts_with("weighs: check_n(n)"));
    }
}
