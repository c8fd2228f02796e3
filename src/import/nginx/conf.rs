//! nginx's configuration syntax, as `ngx_conf_read_token` reads it: words separated by
//! whitespace, `;` ending a directive, `{ ... }` a block, `#` a comment to the end of the line
//! where a word may start, `"..."` and `'...'` quoted with `\` escapes, `${var}` inside a word.
//! `include` is expanded in place: a relative path is taken from the main file's directory
//! (nginx's configuration prefix, `ngx_conf_full_name`), and `*`, `?` in its last part match
//! files in sorted order, as `glob(3)` gives them to nginx.

use crate::error::{Error, Result};
use crate::import::config_error;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One directive with its arguments and, for a block, its children.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub name: String,
    pub args: Vec<String>,
    pub file: Rc<PathBuf>,
    pub line: usize,
    pub block: Option<Vec<Directive>>,
}

impl Directive {
    /// `file:line`, as the notes and comments name a directive.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }

    /// An error about this directive (exit 2).
    pub fn error(&self, message: impl Into<String>) -> Error {
        config_error(&self.file, self.line, &self.name, message)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String, usize),
    Semicolon(usize),
    Open(usize),
    Close(usize),
}

/// Splits `text` into tokens; `file` names errors.
fn tokenize(text: &str, file: &Path) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => line += 1,
            ' ' | '\t' | '\r' => {}
            ';' => out.push(Token::Semicolon(line)),
            '{' => out.push(Token::Open(line)),
            '}' => out.push(Token::Close(line)),
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' | '\'' => {
                let start = line;
                let mut word = String::new();
                i += 1;
                loop {
                    let Some(&ch) = chars.get(i) else {
                        return Err(config_error(
                            file,
                            start,
                            "\"",
                            "unexpected end of file, expecting a closing quote",
                        ));
                    };
                    match ch {
                        '\\' if matches!(chars.get(i + 1), Some(&q) if q == c || q == '\\') => {
                            word.push(chars[i + 1]);
                            i += 1;
                        }
                        _ if ch == c => break,
                        '\n' => {
                            line += 1;
                            word.push(ch);
                        }
                        _ => word.push(ch),
                    }
                    i += 1;
                }
                out.push(Token::Word(word, start));
            }
            _ => {
                let mut word = String::new();
                while let Some(&ch) = chars.get(i) {
                    if ch.is_whitespace() || matches!(ch, ';' | '{' | '}') {
                        // `${name}` keeps its braces inside the word.
                        if ch == '{' && word.ends_with('$') {
                            while let Some(&b) = chars.get(i) {
                                word.push(b);
                                i += 1;
                                if b == '}' {
                                    break;
                                }
                            }
                            continue;
                        }
                        break;
                    }
                    if ch == '\\' && i + 1 < chars.len() {
                        word.push(ch);
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
                out.push(Token::Word(word, line));
                continue;
            }
        }
        i += 1;
    }
    Ok(out)
}

/// Reads `path` (the main file) and every file it includes into one tree.
pub fn read(path: &Path) -> Result<Vec<Directive>> {
    let prefix = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut depth = 0;
    read_file(path, &prefix, &mut depth)
}

fn read_file(path: &Path, prefix: &Path, depth: &mut usize) -> Result<Vec<Directive>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file = Rc::new(path.to_path_buf());
    let tokens = tokenize(&text, path)?;
    let mut pos = 0;
    let tree = parse_block(&tokens, &mut pos, &file, false)?;
    expand(tree, prefix, depth)
}

/// Directives up to the end of the file (`nested = false`) or the closing `}`.
fn parse_block(
    tokens: &[Token],
    pos: &mut usize,
    file: &Rc<PathBuf>,
    nested: bool,
) -> Result<Vec<Directive>> {
    let mut out = Vec::new();
    let mut words: Vec<(String, usize)> = Vec::new();
    while let Some(t) = tokens.get(*pos) {
        *pos += 1;
        match t {
            Token::Word(w, line) => words.push((w.clone(), *line)),
            Token::Semicolon(line) | Token::Open(line) => {
                let Some(((name, first), args)) = words.split_first() else {
                    return Err(config_error(file, *line, "", "unexpected \";\" or \"{\""));
                };
                let block = match t {
                    Token::Open(_) => Some(parse_block(tokens, pos, file, true)?),
                    _ => None,
                };
                out.push(Directive {
                    name: name.clone(),
                    args: args.iter().map(|(a, _)| a.clone()).collect(),
                    file: file.clone(),
                    line: *first,
                    block,
                });
                words.clear();
            }
            Token::Close(line) => {
                if !nested || !words.is_empty() {
                    return Err(config_error(file, *line, "}", "unexpected \"}\""));
                }
                return Ok(out);
            }
        }
    }
    if let Some((name, line)) = words.first() {
        return Err(config_error(
            file,
            *line,
            name,
            "unexpected end of file, expecting \";\" or \"}\"",
        ));
    }
    if nested {
        let line = tokens.iter().next_back().map(|t| match t {
            Token::Word(_, l) | Token::Semicolon(l) | Token::Open(l) | Token::Close(l) => *l,
        });
        return Err(config_error(
            file,
            line.unwrap_or(1),
            "{",
            "unexpected end of file, expecting \"}\"",
        ));
    }
    Ok(out)
}

/// Replaces each `include` by the directives of the files it names, in blocks too.
fn expand(tree: Vec<Directive>, prefix: &Path, depth: &mut usize) -> Result<Vec<Directive>> {
    let mut out = Vec::new();
    for mut d in tree {
        if d.name == "include" {
            let [pattern] = d.args.as_slice() else {
                return Err(d.error("takes one file name or pattern"));
            };
            *depth += 1;
            if *depth > 64 {
                return Err(d.error("includes nest more than 64 deep (an include cycle?)"));
            }
            let files = include_files(&prefix.join(pattern)).map_err(|m| d.error(m))?;
            for f in files {
                out.extend(read_file(&f, prefix, depth)?);
            }
            *depth -= 1;
            continue;
        }
        if let Some(block) = d.block.take() {
            d.block = Some(expand(block, prefix, depth)?);
        }
        out.push(d);
    }
    Ok(out)
}

/// The files `pattern` names: itself, or the sorted matches of its last part's `*` and `?`.
fn include_files(pattern: &Path) -> std::result::Result<Vec<PathBuf>, String> {
    let name = pattern
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains(['*', '?']) {
        if !pattern.is_file() {
            return Err(format!(
                "\"{}\" is not a file nginx could open",
                pattern.display()
            ));
        }
        return Ok(vec![pattern.to_path_buf()]);
    }
    let dir = pattern.parent().unwrap_or(Path::new("."));
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            !n.starts_with('.') && wildcard(name.as_bytes(), n.as_bytes())
        })
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    // nginx accepts a pattern that matches nothing.
    files.sort();
    Ok(files)
}

/// `*` (any run) and `?` (one byte) matching, as a shell glob's last part.
fn wildcard(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => wildcard(&p[1..], s) || (!s.is_empty() && wildcard(p, &s[1..])),
        (Some(b'?'), Some(_)) => wildcard(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => wildcard(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Token> {
        tokenize(text, Path::new("t.conf")).unwrap()
    }

    #[test]
    fn quotes_escapes_comments_and_braces() {
        let t = words("a \"b c\" 'd\\'e' f#g; # note\n x ${y}z {\n}");
        assert_eq!(
            t,
            vec![
                Token::Word("a".into(), 1),
                Token::Word("b c".into(), 1),
                Token::Word("d'e".into(), 1),
                Token::Word("f#g".into(), 1),
                Token::Semicolon(1),
                Token::Word("x".into(), 2),
                Token::Word("${y}z".into(), 2),
                Token::Open(2),
                Token::Close(3),
            ]
        );
    }

    #[test]
    fn a_tree_of_blocks_with_lines() {
        let toks = words("http {\n  server {\n    listen 80;\n  }\n}\n");
        let file = Rc::new(PathBuf::from("t.conf"));
        let tree = parse_block(&toks, &mut 0, &file, false).unwrap();
        let server = &tree[0].block.as_ref().unwrap()[0];
        assert_eq!((server.name.as_str(), server.line), ("server", 2));
        let listen = &server.block.as_ref().unwrap()[0];
        assert_eq!(
            (listen.args.clone(), listen.line),
            (vec!["80".to_string()], 3)
        );
    }

    #[test]
    fn unbalanced_braces_and_a_missing_semicolon_are_errors() {
        let file = Rc::new(PathBuf::from("t.conf"));
        for text in ["http {", "}", "a b"] {
            assert!(
                parse_block(&words(text), &mut 0, &file, false).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn wildcards() {
        assert!(wildcard(b"*.conf", b"a.conf"));
        assert!(wildcard(b"z?.conf", b"z1.conf"));
        assert!(!wildcard(b"*.conf", b"a.conf.bak"));
    }
}
