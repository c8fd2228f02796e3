//! haproxy.cfg as HAProxy's `readcfgfile` reads it: one directive a line, words split on
//! blanks, `#` starting a comment outside quotes, `"..."` and `'...'` quoting, `\` escaping the
//! next character, a section keyword (`frontend NAME`, `listen`, `backend`, `defaults`, ...)
//! opening a section that lasts until the next one.

use crate::error::Result;
use crate::import::config_error;
use std::path::Path;

/// One directive line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub words: Vec<String>,
    pub line: usize,
}

/// One section with its directives.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub kind: String,
    pub name: String,
    pub line: usize,
    pub lines: Vec<Line>,
}

const SECTIONS: [&str; 14] = [
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "peers",
    "resolvers",
    "userlist",
    "program",
    "mailers",
    "cache",
    "http-errors",
    "ring",
    "log-forward",
];

fn words(text: &str, path: &Path, line: usize) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '#') => break,
            (None, c) if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    out.push(w);
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.get_or_insert_with(String::new).push(c),
            (_, '\\') => {
                if let Some(n) = chars.next() {
                    word.get_or_insert_with(String::new).push(n);
                }
            }
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(config_error(
            path,
            line,
            out.first().map_or("\"", |w| w.as_str()),
            "unmatched quote on this line",
        ));
    }
    out.extend(word);
    Ok(out)
}

/// Reads `path` into its sections (directives before any section are refused).
pub fn sections(path: &Path, text: &str) -> Result<Vec<Section>> {
    let mut out: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let w = words(raw, path, line)?;
        let Some(first) = w.first() else { continue };
        if SECTIONS.contains(&first.as_str()) {
            out.push(Section {
                kind: first.clone(),
                name: w.get(1).cloned().unwrap_or_default(),
                line,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(config_error(
                path,
                line,
                first,
                "directive outside any section (HAProxy expects `global`, `defaults`, `frontend`, `backend` or `listen` first)",
            ));
        };
        section.lines.push(Line { words: w, line });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_haproxys_quoting() {
        let p = Path::new("h.cfg");
        assert_eq!(
            words(r#"  acl a  hdr(x) "a b" 'c\d' e\ f # no"#, p, 1).unwrap(),
            ["acl", "a", "hdr(x)", "a b", r"c\d", "e f"]
        );
        let e = words("acl a \"open", p, 3).unwrap_err().to_string();
        assert!(e.contains("h.cfg:3"), "{e}");
    }

    #[test]
    fn sections_gather_their_lines() {
        let s = sections(
            Path::new("h.cfg"),
            "global\n  daemon\n\nfrontend web\n  bind :80\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[1].kind.as_str(), s[1].name.as_str(), s[1].line),
            ("frontend", "web", 4)
        );
        assert_eq!(s[1].lines[0].line, 5);
        let e = sections(Path::new("h.cfg"), "  bind :80\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("h.cfg:1") && e.contains("bind"), "{e}");
    }
}
