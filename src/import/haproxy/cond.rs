//! `if` / `unless` conditions of `http-request` rules: named acls and anonymous `{ ... }` ones,
//! read into what rlsim models (the rate comparison, path, method and source terms).

/// One acl test, as written: `fetch [flags] values...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub fetch: String,
    pub values: Vec<String>,
}

/// One term of a condition, after negation and acl names are resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// `sc_http_req_rate(N)`, `scN_http_req_rate`, `src_http_req_rate(table)` compared.
    Rate {
        tracker: Tracker,
        ge: bool,
        threshold: u64,
    },
    /// `path_beg` (prefixes), `path` (exact paths).
    Path {
        patterns: Vec<String>,
        negated: bool,
    },
    Method {
        methods: Vec<String>,
        negated: bool,
    },
    Src {
        cidrs: Vec<String>,
        negated: bool,
    },
}

/// Which counter a rate fetch reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tracker {
    /// `scN`, with an optional table argument.
    Sc(u8, Option<String>),
    /// `src_http_req_rate([table])`: the entry keyed by the source address.
    Src(Option<String>),
}

/// The argument list of `name(args)`, or `None` without parentheses.
fn args_of<'a>(fetch: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let rest = fetch.strip_prefix(name)?;
    if rest.is_empty() {
        return Some(vec![]);
    }
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

fn rate_fetch(fetch: &str) -> Option<Tracker> {
    if let Some(a) = args_of(fetch, "sc_http_req_rate") {
        let n = a.first()?.parse().ok()?;
        return Some(Tracker::Sc(n, a.get(1).map(|s| s.to_string())));
    }
    if let Some(a) = args_of(fetch, "src_http_req_rate") {
        return Some(Tracker::Src(a.first().map(|s| s.to_string())));
    }
    for n in 0..3u8 {
        if let Some(a) = args_of(fetch, &format!("sc{n}_http_req_rate")) {
            return Some(Tracker::Sc(n, a.first().map(|s| s.to_string())));
        }
    }
    None
}

/// Reads one test into a term; `Err` says what is not modelled.
pub fn term(test: &Test, negated: bool) -> Result<Term, String> {
    let values: Vec<String> = test
        .values
        .iter()
        .filter(|v| !v.starts_with('-'))
        .cloned()
        .collect();
    if let Some(flag) = test.values.iter().find(|v| v.starts_with('-')) {
        return Err(format!("acl flag `{flag}` is not modelled"));
    }
    if let Some(tracker) = rate_fetch(&test.fetch) {
        let [op, n] = values.as_slice() else {
            return Err(format!(
                "`{}` must be compared as `gt N` or `ge N`",
                test.fetch
            ));
        };
        // The threshold becomes the rule's limit, which counts to u32::MAX.
        let threshold = crate::error::whole(n, 0, u32::MAX.into()).map_err(|why| {
            let range = crate::error::must_be("a whole number of requests", 0, u32::MAX);
            format!("`{n}` is {why}: {range}")
        })?;
        let ge = match (op.as_str(), negated) {
            ("gt", false) => false,
            ("ge", false) => true,
            // !(rate le N) is rate gt N; !(rate lt N) is rate ge N.
            ("le", true) => false,
            ("lt", true) => true,
            _ => {
                return Err(format!(
                    "`{} {op}` {}is not modelled: a deny rule is modelled when it refuses above a rate (`gt N` or `ge N`)",
                    test.fetch,
                    if negated { "negated " } else { "" }
                ));
            }
        };
        return Ok(Term::Rate {
            tracker,
            ge,
            threshold,
        });
    }
    match test.fetch.as_str() {
        "path_beg" => Ok(Term::Path {
            patterns: values.iter().map(|v| format!("{v}*")).collect(),
            negated,
        }),
        "path" => Ok(Term::Path {
            patterns: values,
            negated,
        }),
        "method" => Ok(Term::Method {
            methods: values.iter().map(|m| m.to_ascii_uppercase()).collect(),
            negated,
        }),
        "src" => Ok(Term::Src {
            cidrs: values,
            negated,
        }),
        other => Err(format!(
            "acl fetch `{other}` is not modelled (rlsim reads sc_http_req_rate, scN_http_req_rate, src_http_req_rate, path_beg, path, method and src)"
        )),
    }
}

/// The words after `if` / `unless`: acl names (`!` negated) and `{ fetch values }` blocks,
/// ANDed. `||` / `or` is refused by the caller.
pub fn split(words: &[String]) -> Result<Vec<(bool, Item)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let mut w = words[i].as_str();
        let mut negated = false;
        if let Some(rest) = w.strip_prefix('!') {
            negated = true;
            w = rest;
            if w.is_empty() {
                i += 1;
                w = words.get(i).map_or("", |s| s.as_str());
            }
        }
        if w == "||" || w.eq_ignore_ascii_case("or") {
            return Err("`||` in a condition is not modelled (only terms ANDed)".into());
        }
        if w == "{" {
            let end = words[i..]
                .iter()
                .position(|x| x == "}")
                .ok_or("`{` without its closing `}`")?;
            let inner = &words[i + 1..i + end];
            let Some((fetch, values)) = inner.split_first() else {
                return Err("an empty `{ }` acl".into());
            };
            out.push((
                negated,
                Item::Test(Test {
                    fetch: fetch.clone(),
                    values: values.to_vec(),
                }),
            ));
            i += end + 1;
            continue;
        }
        out.push((negated, Item::Acl(w.to_string())));
        i += 1;
    }
    Ok(out)
}

/// A condition item before acl names are looked up.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Test(Test),
    Acl(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn rate_fetches_read_their_tracker() {
        let t = |f: &str, v: &str| {
            term(
                &Test {
                    fetch: f.into(),
                    values: w(v),
                },
                false,
            )
        };
        assert_eq!(
            t("sc_http_req_rate(0)", "gt 10"),
            Ok(Term::Rate {
                tracker: Tracker::Sc(0, None),
                ge: false,
                threshold: 10
            })
        );
        assert_eq!(
            t("sc1_http_req_rate(st)", "ge 5"),
            Ok(Term::Rate {
                tracker: Tracker::Sc(1, Some("st".into())),
                ge: true,
                threshold: 5
            })
        );
        assert_eq!(
            t("src_http_req_rate(st)", "gt 1"),
            Ok(Term::Rate {
                tracker: Tracker::Src(Some("st".into())),
                ge: false,
                threshold: 1
            })
        );
        assert!(
            t("sc_http_req_rate(0)", "lt 10")
                .unwrap_err()
                .contains("lt")
        );
        assert!(t("hdr_cnt(x)", "gt 1").unwrap_err().contains("hdr_cnt"));
        assert_eq!(
            t("path_beg", "/api /v2"),
            Ok(Term::Path {
                patterns: vec!["/api*".into(), "/v2*".into()],
                negated: false
            })
        );
    }

    #[test]
    fn conditions_split_into_acls_and_blocks() {
        let items = split(&w("!ok { sc0_http_req_rate gt 3 } api")).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0], (true, Item::Acl("ok".into())));
        assert!(matches!(&items[1], (false, Item::Test(t)) if t.fetch == "sc0_http_req_rate"));
        assert!(split(&w("a || b")).unwrap_err().contains("||"));
        assert!(split(&w("{ src 1.2.3.4")).unwrap_err().contains("}"));
    }
}
