//! `[[contender]] llm = { profile = "anthropic", rpm = 50, itpm = 30000, otpm = 8000 }`: the
//! rules an LLM provider or AI gateway documents, from the limits a team was given
//! (docs/llm.md "Profiles"). Each profile is written as rules (`[[contender.rule]]` TOML) and
//! validated as such, as an imported configuration is; where its documents disagree, a
//! `reading` picks one.

use super::ctx::Ctx;
use crate::error::Result;
use crate::policy::Policy;
use crate::scenario::model::scenario::Contender;
use crate::scenario::raw::{RawContender, RawLlm, S};
use crate::traffic::SourceSpec;
use std::collections::HashSet;
use std::fmt::Write as _;

/// A profile: its name, its readings (the first the default), the limits it takes (the
/// others refused) and which of them it needs, and its documentation.
struct Profile {
    name: &'static str,
    readings: &'static [&'static str],
    takes: &'static [&'static str],
    needs: &'static [&'static str],
    gateway: bool,
}

const PROFILES: [Profile; 6] = [
    Profile {
        name: "openai",
        readings: &["guide", "help_center"],
        takes: &["rpm", "tpm", "max_tokens_default"],
        needs: &["tpm"],
        gateway: false,
    },
    Profile {
        name: "azure_openai",
        readings: &["1s", "10s"],
        takes: &["rpm", "tpm", "max_tokens_default"],
        needs: &["tpm"],
        gateway: false,
    },
    Profile {
        name: "anthropic",
        readings: &["cache_reads_free", "cache_reads_counted"],
        takes: &["rpm", "itpm", "otpm"],
        needs: &[],
        gateway: false,
    },
    Profile {
        name: "envoy_ai_gateway",
        readings: &["at_limit"],
        takes: &["tpm"],
        needs: &["tpm"],
        gateway: true,
    },
    Profile {
        name: "litellm",
        readings: &["reserve", "v1"],
        takes: &["rpm", "tpm", "max_tokens_default"],
        needs: &[],
        gateway: true,
    },
    Profile {
        name: "kong_ai",
        readings: &["sliding", "fixed"],
        takes: &["tpm"],
        needs: &["tpm"],
        gateway: true,
    },
];

/// One rule's TOML.
fn rule(out: &mut String, name: &str, algorithm: &str, (limit, window): (u64, &str), rest: &str) {
    let _ = writeln!(
        out,
        "[[contender.rule]]\nname = \"{name}\"\nalgorithm = \"{algorithm}\"\nlimit = {limit}\n\
         window = \"{window}\""
    );
    if algorithm == "token_bucket" {
        let _ = writeln!(out, "burst = {limit}");
    }
    out.push_str(rest);
}

impl Ctx<'_> {
    /// The contender `c` (number `i`) whose rules its `llm` profile documents.
    pub(super) fn llm_contender(
        &self,
        i: usize,
        c: &RawContender,
        llm: &S<RawLlm>,
        (policy, sources): (&Policy, Option<&[SourceSpec]>),
        names: &mut HashSet<String>,
    ) -> Result<Contender> {
        let field = |f: &str| format!("contender[{i}].llm.{f}");
        if let Some(r) = c.rule.first() {
            let why = "the profile writes the rules: leave `[[contender.rule]]` out beside `llm`";
            return Err(self.err(r.span(), &format!("contender[{i}].rule"), why));
        }
        let l = llm.get_ref();
        let name = l.profile.get_ref().as_str();
        let Some(p) = PROFILES.iter().find(|p| p.name == name) else {
            let all: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
            let why = format!("unknown profile `{name}` (expected {})", all.join(", "));
            return Err(self.err(l.profile.span(), &field("profile"), why));
        };
        let limits = self.llm_limits(p, l, llm, &field)?;
        for (f, v) in [("unit", &l.unit), ("window", &l.window)] {
            if let (Some(v), false) = (v, p.gateway) {
                let why = format!("`{name}` counts what its documents say: leave `{f}` out");
                return Err(self.err(v.span(), &field(f), why));
            }
        }
        let reading = match &l.reading {
            None => p.readings[0],
            Some(r) => p
                .readings
                .iter()
                .find(|x| **x == r.get_ref())
                .ok_or_else(|| {
                    let why = format!(
                        "`{name}` reads its documents as {}",
                        p.readings.join(" or ")
                    );
                    self.err(r.span(), &field("reading"), why)
                })?,
        };
        let unit = match &l.unit {
            None => "tokens",
            Some(u) => match u.get_ref().as_str() {
                x @ ("tokens" | "input_tokens" | "output_tokens") => x,
                other => {
                    let why = format!(
                        "unknown unit `{other}` (expected tokens, input_tokens or output_tokens)"
                    );
                    return Err(self.err(u.span(), &field("unit"), why));
                }
            },
        };
        let window = l.window.as_ref().map_or("1m", |w| w.get_ref().as_str());
        if let Some(w) = &l.window {
            self.duration(w, &field("window"), true)?;
        }
        let [rpm, tpm, itpm, otpm, default] = limits;
        let text = match Self::profile_rules(
            p.name,
            reading,
            [rpm, tpm, itpm, otpm, default],
            (unit, window),
        ) {
            Ok(rules) => rules,
            Err((f, why)) => return Err(self.err(llm.span(), &field(f), why)),
        };
        let text = format!(
            "[[contender]]\nname = \"{}\"\n{}",
            c.name.get_ref().trim(),
            text
        );
        let label = std::path::PathBuf::from(format!("llm profile `{name}`"));
        let mut contender =
            super::contender::written_contender((i, c), &text, &label, (policy, sources), names)?;
        contender.description = match &c.description {
            Some(d) => d.get_ref().trim().to_string(),
            None => format!("{name} ({reading}), as its documentation states it (docs/llm.md)"),
        };
        Ok(contender)
    }

    /// The profile's limits as given, `[rpm, tpm, itpm, otpm, max_tokens_default]` (0: not
    /// given): refused where the profile takes no such limit or needs one not given.
    fn llm_limits(
        &self,
        p: &Profile,
        l: &RawLlm,
        llm: &S<RawLlm>,
        field: &dyn Fn(&str) -> String,
    ) -> Result<[u64; 5]> {
        let name = p.name;
        let given = [
            ("rpm", l.rpm.as_ref()),
            ("tpm", l.tpm.as_ref()),
            ("itpm", l.itpm.as_ref()),
            ("otpm", l.otpm.as_ref()),
            ("max_tokens_default", l.max_tokens_default.as_ref()),
        ];
        if let Some((f, v)) = given
            .iter()
            .find(|(f, v)| v.is_some() && !p.takes.contains(f))
        {
            let why = format!("`{name}` takes {}", p.takes.join(", "));
            let span = v.map(|v| v.span()).unwrap_or_default();
            return Err(self.err(span, &field(f), why));
        }
        let mut limits = [0u64; 5];
        for (k, (f, v)) in given.iter().enumerate() {
            match v {
                Some(v) if *f == "max_tokens_default" => {
                    let what = "a whole number of tokens";
                    limits[k] = self.whole(v, &field(f), what, 0, i64::from(u32::MAX))? as u64;
                }
                Some(v) => limits[k] = self.count(v, &field(f), u64::from(u32::MAX))?,
                None if p.needs.contains(f) => {
                    let why = format!("`{name}` needs `{f}`");
                    return Err(self.err(llm.span(), &field(f), why));
                }
                None => {}
            }
        }
        if limits[..4].iter().all(|&x| x == 0) {
            let why = format!("give at least one of {}", p.takes.join(", "));
            return Err(self.err(llm.span(), &field("profile"), why));
        }
        Ok(limits)
    }

    /// The rules of profile `name` read as `reading`, for its limits `[rpm, tpm, itpm, otpm,
    /// max_tokens_default]` (0: not given) and a gateway's `(unit, window)`; or the field a
    /// limit the profile cannot take is in, and why.
    fn profile_rules(
        name: &str,
        reading: &str,
        [rpm, tpm, itpm, otpm, default]: [u64; 5],
        (unit, window): (&str, &str),
    ) -> std::result::Result<String, (&'static str, String)> {
        let mut out = String::new();
        let default_line = if default > 0 {
            format!("max_tokens_default = {default}\n")
        } else {
            String::new()
        };
        let requests = "unit = \"requests\"\n";
        match name {
            // A bucket refilled continuously (the 429s' "try again in"), charged its estimate.
            "openai" => {
                if rpm > 0 {
                    rule(&mut out, "rpm", "token_bucket", (rpm, "1m"), requests);
                }
                let estimate = if reading == "guide" { "max" } else { "sum" };
                let rest = format!(
                    "unit = \"tokens\"\naccounting = \"reserve\"\nestimate = \"{estimate}\"\n\
                     {CHARS}{default_line}"
                );
                rule(&mut out, "tpm", "token_bucket", (tpm, "1m"), &rest);
            }
            // RPM over 1 s or 10 s windows; TPM a counter reset each minute.
            "azure_openai" => azure(&mut out, reading, (rpm, tpm), &default_line)?,
            // Token buckets; reservations set right when each response ends.
            "anthropic" => {
                if rpm > 0 {
                    rule(&mut out, "rpm", "token_bucket", (rpm, "1m"), requests);
                }
                if itpm > 0 {
                    let cached = reading == "cache_reads_counted";
                    let rest = format!(
                        "unit = \"input_tokens\"\naccounting = \"reconcile\"\ncached = {cached}\n"
                    );
                    rule(&mut out, "itpm", "token_bucket", (itpm, "1m"), &rest);
                }
                if otpm > 0 {
                    let rest = "unit = \"output_tokens\"\naccounting = \"reconcile\"\n";
                    rule(&mut out, "otpm", "token_bucket", (otpm, "1m"), rest);
                }
            }
            // envoyproxy/ratelimit's epoch-aligned fixed windows, hits_addend 0 up front.
            "envoy_ai_gateway" => {
                let rest =
                    format!("unit = \"{unit}\"\naccounting = \"after\"\ncheck = \"not_over\"\n");
                rule(&mut out, "tokens", "fixed_window", (tpm, window), &rest);
            }
            // Fixed minutes; v1 checks and counts after, the 2026 v3 reserves and sets right
            // (prompt + max_tokens or 1,024, cached prompt tokens left out).
            "litellm" => litellm(&mut out, reading, (rpm, tpm, default), (unit, window)),
            // Counted from the provider's usage, "only reflected during the next request".
            _ => {
                let algorithm = if reading == "sliding" {
                    "sliding_window_counter"
                } else {
                    "fixed_window"
                };
                let rest = format!("unit = \"{unit}\"\naccounting = \"after\"\n");
                rule(&mut out, "tokens", algorithm, (tpm, window), &rest);
            }
        }
        Ok(out)
    }
}

/// A prompt estimated from its characters, four to a token: OpenAI's "estimated number of
/// tokens based on the character count", Azure's estimate of the prompt, LiteLLM v3's
/// `len(text) / 4`.
const CHARS: &str = "estimate_chars_per_token = 4\n";

/// Azure OpenAI's rules: RPM over 1 s or 10 s windows (by `reading`), 6 per 1,000 TPM unless
/// given; TPM a counter reset each minute, charged prompt + `max_tokens` up front.
fn azure(
    out: &mut String,
    reading: &str,
    (rpm, tpm): (u64, u64),
    default_line: &str,
) -> std::result::Result<(), (&'static str, String)> {
    let requests = "unit = \"requests\"\n";
    let rpm = if rpm > 0 { rpm } else { tpm * 6 / 1000 };
    let (per, span) = if reading == "1s" {
        (60, "1s")
    } else {
        (6, "10s")
    };
    if rpm > 0 {
        if rpm % per != 0 {
            return Err((
                "rpm",
                format!(
                    "{rpm} requests a minute is not a whole number per {span}: give \
                                 an rpm divisible by {per}, or reading = \"{}\"",
                    if reading == "1s" { "10s" } else { "1s" }
                ),
            ));
        }
        rule(out, "rpm", "fixed_window", (rpm / per, span), requests);
    }
    let rest = format!(
        "unit = \"tokens\"\naccounting = \"reserve\"\nestimate = \"sum\"\n{CHARS}{default_line}"
    );
    rule(out, "tpm", "fixed_window", (tpm, "1m"), &rest);
    Ok(())
}

/// LiteLLM's rules: fixed minutes; `v1` checks and counts after, the 2026 v3 (`reserve`)
/// reserves prompt + `max_tokens` (1,024 without) and sets it right, cached prompt tokens
/// left out.
fn litellm(
    out: &mut String,
    reading: &str,
    (rpm, tpm, default): (u64, u64, u64),
    (unit, window): (&str, &str),
) {
    if rpm > 0 {
        rule(
            out,
            "rpm",
            "fixed_window",
            (rpm, window),
            "unit = \"requests\"\n",
        );
    }
    if tpm > 0 {
        let rest = if reading == "v1" {
            format!("unit = \"{unit}\"\naccounting = \"after\"\n")
        } else {
            let default = if default > 0 { default } else { 1024 };
            let chars = if unit == "output_tokens" { "" } else { CHARS };
            format!(
                "unit = \"{unit}\"\naccounting = \"reconcile\"\nestimate = \"sum\"\n\
                 cached = false\nmax_tokens_default = {default}\n{chars}"
            )
        };
        rule(out, "tpm", "fixed_window", (tpm, window), &rest);
    }
}
