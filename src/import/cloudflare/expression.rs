//! The part of Cloudflare's Rules language a rate limiting rule's `expression` is read in: the
//! request's path (`http.request.uri.path` with `eq`, `in {...}`, `starts_with(...)`,
//! `wildcard` with one trailing `*`, and `matches` of a literal `^/prefix` or `^/path$`) and
//! its method (`http.request.method` with `eq` or `in {...}`), joined by `or` within one field
//! and by `and` across the two. Anything else is refused by name: rlsim's rules select requests
//! by route and method only, and an expression that cannot be said so cannot be imported.

/// Which requests an expression matches, in rlsim's terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// rlsim route patterns (an exact path, or a prefix ending in `*`); empty: every route.
    pub routes: Vec<String>,
    /// HTTP methods; empty: every method.
    pub methods: Vec<String>,
}

/// What an expression can be, for the error message.
pub const SUPPORTED: &str = "rlsim imports `http.request.uri.path` with eq, in {...}, starts_with(...), wildcard \"/p*\" (one trailing `*`) and matches \"^/literal\" or \"^/literal$\", and `http.request.method` with eq or in {...}, joined by `or` (one field) and `and` (path and method)";

/// Reads `expr`; the error names the term that cannot be imported and why.
pub fn parse(expr: &str) -> Result<Selection, String> {
    let mut sel = Selection::default();
    let (mut path_seen, mut method_seen) = (false, false);
    for conjunct in split_top(strip_parens(expr.trim()), &[" and ", "&&"]) {
        let mut field = None;
        let mut values = Vec::new();
        for term in split_top(strip_parens(conjunct.trim()), &[" or ", "||"]) {
            let (f, mut v) = term_values(strip_parens(term.trim()))?;
            if field.is_some_and(|seen| seen != f) {
                return Err(format!(
                    "`{}`: an `or` of a path and a method is not one rlsim rule",
                    conjunct.trim()
                ));
            }
            field = Some(f);
            values.append(&mut v);
        }
        let (seen, out) = match field {
            Some(Field::Path) => (&mut path_seen, &mut sel.routes),
            Some(Field::Method) => (&mut method_seen, &mut sel.methods),
            None => return Err("an empty expression".into()),
        };
        if *seen {
            return Err(format!(
                "`{}`: a second `and` on the same field narrows what rlsim's routes or methods cannot",
                conjunct.trim()
            ));
        }
        *seen = true;
        *out = values;
    }
    Ok(sel)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Path,
    Method,
}

const PATH: &str = "http.request.uri.path";
const METHOD: &str = "http.request.method";

/// One comparison: its field and the routes (or methods) it matches.
fn term_values(term: &str) -> Result<(Field, Vec<String>), String> {
    if term.starts_with("not ") || term.starts_with('!') {
        return Err(format!(
            "`{term}`: a negation matches what rlsim's routes cannot list"
        ));
    }
    if let Some(args) = term
        .strip_prefix("starts_with(")
        .and_then(|a| a.strip_suffix(')'))
    {
        let (field, prefix) = args
            .split_once(',')
            .ok_or_else(|| format!("`{term}`: starts_with takes a field and a string"))?;
        if field.trim() != PATH {
            return Err(format!("`{term}`: {} is not the path", field.trim()));
        }
        let p = string(prefix.trim()).map_err(|e| format!("`{term}`: {e}"))?;
        return Ok((Field::Path, vec![route(&p, term)? + "*"]));
    }
    let mut words = term.splitn(3, char::is_whitespace);
    let (field, op, value) = (
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
        words.next().unwrap_or("").trim(),
    );
    let why = |e: String| format!("`{term}`: {e}");
    match (field, op) {
        (PATH, "eq" | "==") => Ok((
            Field::Path,
            vec![route(&string(value).map_err(why)?, term)?],
        )),
        (PATH, "in") => {
            let set = set(value).map_err(why)?;
            let routes = set
                .iter()
                .map(|p| route(p, term))
                .collect::<Result<_, _>>()?;
            Ok((Field::Path, routes))
        }
        (PATH, "wildcard") => Ok((
            Field::Path,
            vec![wildcard(&string(value).map_err(why)?, term)?],
        )),
        (PATH, "matches" | "~") => Ok((
            Field::Path,
            vec![regex(&string(value).map_err(why)?, term)?],
        )),
        (METHOD, "eq" | "==") => Ok((Field::Method, vec![string(value).map_err(why)?])),
        (METHOD, "in") => Ok((Field::Method, set(value).map_err(why)?)),
        (PATH | METHOD, op) => Err(format!("`{term}`: the operator `{op}` is not imported")),
        (field, _) => Err(format!(
            "`{term}`: the field `{field}` is not imported (rlsim's rules select by path and method only)"
        )),
    }
}

/// A literal path as an rlsim route: a `*` in it would be read as a prefix.
fn route(path: &str, term: &str) -> Result<String, String> {
    if !path.starts_with('/') || path.contains('*') {
        return Err(format!(
            "`{term}`: `{path}` is not a path rlsim can route (it starts with `/` and has no `*`)"
        ));
    }
    Ok(path.to_string())
}

/// `wildcard "/api/*"`: one trailing `*` is rlsim's prefix. (`wildcard` ignores case, rlsim's
/// routes do not: the caller notes it.)
fn wildcard(pattern: &str, term: &str) -> Result<String, String> {
    match pattern.strip_suffix('*') {
        Some(stem) => Ok(route(stem, term)? + "*"),
        None => route(pattern, term),
    }
}

/// `matches "^/api/"` (a prefix) or `"^/login$"` (exact), of literal characters only.
fn regex(re: &str, term: &str) -> Result<String, String> {
    let Some(body) = re.strip_prefix('^') else {
        return Err(format!(
            "`{term}`: a regular expression without `^` matches anywhere in the path"
        ));
    };
    let (mut body, mut exact) = match body.strip_suffix('$') {
        Some(b) if !b.ends_with('\\') => (b, true),
        _ => (body, false),
    };
    if let Some(b) = body.strip_suffix(".*") {
        (body, exact) = (b, false);
    }
    let mut lit = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if !e.is_ascii_alphanumeric() => lit.push(e),
                _ => return Err(not_literal(re, term)),
            },
            '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '^' | '$' => {
                return Err(not_literal(re, term));
            }
            _ => lit.push(c),
        }
    }
    let r = route(&lit, term)?;
    Ok(if exact { r } else { r + "*" })
}

fn not_literal(re: &str, term: &str) -> String {
    format!(
        "`{term}`: `{re}` is not a literal `^/prefix` or `^/path$`, the only regular expressions rlsim's routes can say"
    )
}

/// A quoted string of the Rules language (`"..."`, with `\"` and `\\`), alone.
fn string(s: &str) -> Result<String, String> {
    let (v, rest) = quoted(s)?;
    if !rest.trim().is_empty() {
        return Err(format!("unexpected `{}` after the string", rest.trim()));
    }
    Ok(v)
}

/// The quoted string at the start of `s`, and what follows it.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let inner = s
        .strip_prefix('"')
        .ok_or_else(|| format!("expected a quoted string, found `{s}`"))?;
    let mut out = String::new();
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &inner[i + 1..])),
            '\\' => out.push(chars.next().map(|(_, e)| e).unwrap_or('\\')),
            _ => out.push(c),
        }
    }
    Err(format!("an unterminated string `{s}`"))
}

/// `{"a" "b"}`: the strings of a set (separated by blanks or commas).
fn set(s: &str) -> Result<Vec<String>, String> {
    let mut rest = s
        .strip_prefix('{')
        .and_then(|r| r.trim_end().strip_suffix('}'))
        .ok_or_else(|| format!("expected a set `{{\"...\" \"...\"}}`, found `{s}`"))?;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        let (v, r) = quoted(rest)?;
        out.push(v);
        rest = r;
    }
    if out.is_empty() {
        return Err("an empty set".into());
    }
    Ok(out)
}

/// `s` without parentheses around all of it.
fn strip_parens(mut s: &str) -> &str {
    while s.starts_with('(') && s.ends_with(')') && closing(s) == Some(s.len() - 1) {
        s = s[1..s.len() - 1].trim();
    }
    s
}

/// Where the parenthesis opening `s` closes.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '(' | '{' if !quoted => depth += 1,
            ')' | '}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split on any of `words` outside strings, parentheses and sets.
fn split_top<'a>(s: &'a str, words: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0usize, false, false, 0);
    let mut i = 0;
    while i < s.len() {
        let c = s[i..].chars().next().unwrap_or(' ');
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '(' | '{' if !quoted => depth += 1,
            ')' | '}' if !quoted => depth = depth.saturating_sub(1),
            _ if !quoted && depth == 0 => {
                if let Some(w) = words.iter().find(|w| s[i..].starts_with(**w)) {
                    out.push(&s[start..i]);
                    i += w.len();
                    start = i;
                    continue;
                }
            }
            _ => {}
        }
        i += c.len_utf8();
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(e: &str) -> Vec<String> {
        parse(e).expect(e).routes
    }

    #[test]
    fn each_path_form_becomes_a_route() {
        assert_eq!(routes("(http.request.uri.path eq \"/login\")"), ["/login"]);
        assert_eq!(routes("http.request.uri.path == \"/login\""), ["/login"]);
        assert_eq!(
            routes("(http.request.uri.path in {\"/a\" \"/b\"})"),
            ["/a", "/b"]
        );
        assert_eq!(
            routes("(starts_with(http.request.uri.path, \"/api/\"))"),
            ["/api/*"]
        );
        assert_eq!(
            routes("(http.request.uri.path wildcard \"/api/*\")"),
            ["/api/*"]
        );
        assert_eq!(
            routes("(http.request.uri.path matches \"^/api/\")"),
            ["/api/*"]
        );
        assert_eq!(
            routes("(http.request.uri.path matches \"^/v1\\\\.0/x$\")"),
            ["/v1.0/x"]
        );
        assert_eq!(
            routes("(http.request.uri.path matches \"^/api/.*$\")"),
            ["/api/*"]
        );
        assert_eq!(
            routes("(http.request.uri.path eq \"/a\") or (http.request.uri.path eq \"/b\")"),
            ["/a", "/b"]
        );
    }

    #[test]
    fn a_method_joins_the_path_with_and() {
        let s = parse("(http.request.uri.path eq \"/login\" and http.request.method eq \"POST\")")
            .expect("parses");
        assert_eq!(
            (s.routes, s.methods),
            (vec!["/login".to_string()], vec!["POST".to_string()])
        );
        let s = parse("http.request.method in {\"POST\" \"PUT\"}").expect("parses");
        assert!(s.routes.is_empty());
        assert_eq!(s.methods, ["POST", "PUT"]);
    }

    #[test]
    fn anything_else_is_refused_by_name() {
        for (e, want) in [
            (
                "(http.host eq \"a.example\")",
                "the field `http.host` is not imported",
            ),
            (
                "(http.request.uri.path contains \"/api\")",
                "the operator `contains`",
            ),
            ("(http.request.uri.path matches \"/api\")", "without `^`"),
            (
                "(http.request.uri.path matches \"^/api/v[0-9]+/\")",
                "not a literal",
            ),
            ("(not http.request.uri.path eq \"/a\")", "a negation"),
            (
                "(http.request.uri.path eq \"/a\" or http.request.method eq \"POST\")",
                "an `or` of a path and a method",
            ),
            (
                "(http.request.uri.path eq \"/a\" and http.request.uri.path eq \"/b\")",
                "a second `and`",
            ),
            (
                "(http.request.uri.path wildcard \"/a/*/b\")",
                "is not a path rlsim can route",
            ),
        ] {
            let err = parse(e).unwrap_err();
            assert!(err.contains(want), "{e}: {err}");
        }
    }
}
