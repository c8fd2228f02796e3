//! The shape of `src/` (docs/architecture.md), read with `syn` from the crate's module tree
//! (from `lib.rs`, following `mod` declarations and `#[path]`):
//!
//! - **layers**: no module imports a higher layer, so import cycles between top-level modules
//!   cannot come back;
//! - **no import circles** inside a folder: between the files of a folder, and between a
//!   folder's subfolders and files;
//! - **no function over 100 lines**, except the engine's loop and the recorder's schema literal.
//!
//! An import is every `use` (multi-line groups included), every path in code that starts at
//! `crate::`, `super::` or `self::` or names a child module, and every `crate::`/`super::` path
//! inside a macro's tokens; each is resolved to the file of the module it names. Comments and
//! string literals are not code, so they are never read as imports.
//!
//! Known offenders are listed with what they are today, each to be removed by the work that
//! ends it: the tests fail when one no longer occurs, so the lists cannot go stale.

use proc_macro2::{Span, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Top-level modules by layer, lowest first. A module may import modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["time", "error", "suggest", "rng", "prefetch", "allocator"],
    &["policy", "output", "calendar"],
    &["algorithms"],
    &["traffic"],
    &["metrics", "import"],
    &["scenario"],
    &["sim"],
    &["observe", "store", "drive"],
    &["report"],
    &["sweep", "replicate", "probe"],
    &["check", "bench"],
    &["terminal", "manpage"],
    &["commands"],
    &["cli"],
];

/// Known upward imports, each to be removed by the work that ends it. The test fails when one
/// no longer occurs, so the list cannot go stale.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// The longest a function may be, in lines from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 100;

/// Functions allowed to be longer for good: the engine's loop (one loop, read top to bottom) and
/// the recorder's schema literal (one field per line of the report).
const LONG_BY_DESIGN: &[&str] = &["sim/engine.rs::simulate", "metrics/recorder.rs::finish"];

/// Functions over [`MAX_FUNCTION_LINES`] today, with their length: each is being cut by the
/// work on its area. The test fails when one grows, when one is gone or short enough (remove it
/// from this list), and when a function not listed is too long.
const LONG_FUNCTIONS: &[(&str, usize)] = &[];

/// Import circles today, each as the sorted files and folders (`dir/`) of one circle, inside
/// the folder that holds them: being removed by the work on that folder. The test fails when
/// one changes or is gone (update or remove it here), and when a circle not listed appears.
const CIRCLES: &[&[&str]] = &[];

/// One file of the crate: its path under `src/`, its module path, its syntax tree.
struct SourceFile {
    path: String,
    module: Vec<String>,
    ast: syn::File,
}

/// One import: the module path it names (resolved to an absolute path) and its line.
#[derive(Debug, Clone)]
struct Import {
    path: Vec<String>,
    line: usize,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file of the library's module tree, from `lib.rs` (`main.rs` is the binary's crate).
fn crate_files() -> Vec<SourceFile> {
    let root = src().join("lib.rs");
    let mut files = Vec::new();
    walk(&root, Vec::new(), true, &mut files);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// Adds `file` (module `module`) and, through its `mod` declarations, every file below it.
/// `owns_dir`: the file is `lib.rs` or a `mod.rs`, whose children live beside it.
fn walk(file: &Path, module: Vec<String>, owns_dir: bool, out: &mut Vec<SourceFile>) {
    let ast = parse(file);
    let dir = file.parent().unwrap().to_path_buf();
    let children_dir = if owns_dir {
        dir.clone()
    } else {
        dir.join(file.file_stem().unwrap())
    };
    let mut children = Vec::new();
    declared_mods(&ast.items, &dir, &children_dir, &module, &mut children);
    let relative = file.strip_prefix(src()).unwrap();
    out.push(SourceFile {
        path: relative.to_str().unwrap().replace('\\', "/"),
        module,
        ast,
    });
    for (path, module, owns_dir) in children {
        walk(&path, module, owns_dir, out);
    }
}

/// The files of the `mod name;` declarations among `items`, inline modules' included.
fn declared_mods(
    items: &[syn::Item],
    dir: &Path,
    children_dir: &Path,
    module: &[String],
    out: &mut Vec<(PathBuf, Vec<String>, bool)>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let mut child = module.to_vec();
        child.push(m.ident.to_string());
        if let Some((_, inner)) = &m.content {
            let nested = children_dir.join(m.ident.to_string());
            declared_mods(inner, &nested, &nested, &child, out);
            continue;
        }
        let explicit = m.attrs.iter().find_map(|a| {
            let syn::Meta::NameValue(nv) = &a.meta else {
                return None;
            };
            if !nv.path.is_ident("path") {
                return None;
            }
            match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            }
        });
        let name = m.ident.to_string();
        let (path, owns_dir) = match explicit {
            Some(p) => (dir.join(p), false),
            None if children_dir.join(format!("{name}.rs")).exists() => {
                (children_dir.join(format!("{name}.rs")), false)
            }
            None => (children_dir.join(&name).join("mod.rs"), true),
        };
        out.push((path, child, owns_dir));
    }
}

fn line(span: Span) -> usize {
    span.start().line
}

/// Collects the imports of one file (see the module's doc).
struct Imports<'a> {
    /// The module path of the code being read: the file's, then its inline modules'.
    module: Vec<String>,
    /// Every module of the crate, to read a leading child module name.
    modules: &'a BTreeSet<Vec<String>>,
    found: Vec<Import>,
}

impl Imports<'_> {
    /// The absolute module path `segments` name from the current module, if it is a path into
    /// the crate: `crate::`, `super::`, `self::`, or (for `use` and paths of two segments or
    /// more) a child module of the current module.
    fn resolve(&self, segments: &[String], in_use: bool) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut base = self.module.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            name => {
                let mut child = self.module.clone();
                child.push(name.to_string());
                if (in_use || segments.len() >= 2) && self.modules.contains(&child) {
                    let mut path = child;
                    path.extend(segments[1..].iter().cloned());
                    return Some(path);
                }
                return None;
            }
        };
        base.extend(segments[1..].iter().cloned());
        Some(base)
    }

    fn add(&mut self, segments: &[String], line: usize, in_use: bool) {
        if let Some(path) = self.resolve(segments, in_use) {
            self.found.push(Import { path, line });
        }
    }

    /// Every path a `use` tree names, flattened: `crate::{a, b::{c, d}}` is `crate::a`,
    /// `crate::b::c` and `crate::b::d`.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" || path.is_empty() {
                    path.push(n.ident.to_string());
                }
                self.add(&path, line(n.ident.span()), true);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" || path.is_empty() {
                    path.push(r.ident.to_string());
                }
                self.add(&path, line(r.ident.span()), true);
            }
            syn::UseTree::Glob(g) => {
                let path = prefix.clone();
                self.add(&path, line(g.star_token.span), true);
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix);
                }
            }
        }
    }

    /// `crate::a::b` and `super::a` sequences in a macro's tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            if let TokenTree::Group(g) = &tokens[i] {
                self.tokens(g.stream());
                i += 1;
                continue;
            }
            let TokenTree::Ident(id) = &tokens[i] else {
                i += 1;
                continue;
            };
            let after_dollar =
                i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
            if (id != "crate" && id != "super") || after_dollar {
                i += 1;
                continue;
            }
            let mut segments = vec![id.to_string()];
            let mut j = i + 1;
            while let (
                Some(TokenTree::Punct(a)),
                Some(TokenTree::Punct(b)),
                Some(TokenTree::Ident(next)),
            ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
            {
                if a.as_char() != ':' || b.as_char() != ':' {
                    break;
                }
                segments.push(next.to_string());
                j += 3;
            }
            if segments.len() > 1 {
                self.add(&segments, line(id.span()), false);
            }
            i = j.max(i + 1);
        }
    }
}

impl<'ast> Visit<'ast> for Imports<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.module.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if u.leading_colon.is_none() {
            self.use_tree(&u.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let at = p.segments.first().map_or(0, |s| line(s.ident.span()));
            self.add(&segments, at, false);
        }
        syn::visit::visit_path(self, p);
    }

    /// `pub(crate)`, `pub(super)`: who may see an item, not an import.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

fn imports(file: &SourceFile, modules: &BTreeSet<Vec<String>>) -> Vec<Import> {
    let mut v = Imports {
        module: file.module.clone(),
        modules,
        found: Vec::new(),
    };
    v.visit_file(&file.ast);
    v.found
}

/// The crate's files, their modules, and each file's imports resolved to the file they name
/// (the file of the longest module prefix of the path).
struct Crate {
    files: Vec<SourceFile>,
    by_module: BTreeMap<Vec<String>, usize>,
    imports: Vec<Vec<Import>>,
}

impl Crate {
    fn read() -> Self {
        let files = crate_files();
        let by_module: BTreeMap<Vec<String>, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        let modules: BTreeSet<Vec<String>> = by_module.keys().cloned().collect();
        let imports = files.iter().map(|f| imports(f, &modules)).collect();
        Crate {
            files,
            by_module,
            imports,
        }
    }

    /// The file that module path `path` is in.
    fn file_of(&self, path: &[String]) -> usize {
        (0..=path.len())
            .rev()
            .find_map(|n| self.by_module.get(&path[..n]).copied())
            .expect("lib.rs is the module of the empty path")
    }
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

#[test]
fn no_module_imports_a_higher_layer() {
    let krate = Crate::read();
    let mut violations = Vec::new();
    let mut seen_exceptions = BTreeSet::new();
    for (file, imports) in krate.files.iter().zip(&krate.imports) {
        let Some(module) = file.module.first().map(String::as_str) else {
            continue; // lib.rs
        };
        let Some(own) = layer(module) else {
            violations.push(format!("{module}: not in the layer table of this test"));
            continue;
        };
        let mut reported = BTreeSet::new();
        for import in imports {
            let target_file = &krate.files[krate.file_of(&import.path)];
            let Some(target) = target_file.module.first().map(String::as_str) else {
                violations.push(format!(
                    "src/{}:{}: imports `crate::{}` from the crate's root: name its module",
                    file.path,
                    import.line,
                    import.path.join("::")
                ));
                continue;
            };
            if target == module || !reported.insert(target) {
                continue;
            }
            let Some(theirs) = layer(target) else {
                violations.push(format!(
                    "src/{}:{}: imports `crate::{target}`, not in the layer table",
                    file.path, import.line
                ));
                continue;
            };
            if theirs < own {
                continue;
            }
            if EXCEPTIONS.iter().any(|e| e.0 == module && e.1 == target) {
                seen_exceptions.insert((module.to_string(), target.to_string()));
                continue;
            }
            violations.push(format!(
                "src/{}:{}: `{module}` imports `crate::{}`, which is not a lower layer",
                file.path,
                import.line,
                import.path.join("::")
            ));
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    for (from, to, why) in EXCEPTIONS {
        assert!(
            seen_exceptions.contains(&(from.to_string(), to.to_string())),
            "`{from}` no longer imports `{to}` ({why}): remove the exception"
        );
    }
}

/// Every module of the crate is in the table of docs/architecture.md, on the layer this test
/// gives it, so the document cannot drift from the test.
#[test]
fn the_architecture_document_has_the_layers_of_this_test() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let mut documented = BTreeSet::new();
    for row in doc.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(n), Some(module)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let (Ok(n), Some(module)) = (n.parse::<usize>(), module.strip_prefix('`')) else {
            continue;
        };
        documented.insert((n, module.trim_end_matches('`').to_string()));
    }
    let tested: BTreeSet<(usize, String)> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(n, modules)| modules.iter().map(move |m| (n, m.to_string())))
        .collect();
    assert_eq!(
        documented, tested,
        "docs/architecture.md's table against LAYERS"
    );
    let top: BTreeSet<String> = crate_files()
        .into_iter()
        .filter(|f| f.module.len() == 1)
        .map(|f| f.module[0].clone())
        .collect();
    let layered: BTreeSet<String> = tested.into_iter().map(|(_, m)| m).collect();
    assert_eq!(top, layered, "the crate's top-level modules against LAYERS");
}

/// A folder's units: its child modules, each a file or (with modules of its own) a folder.
fn unit_name(krate: &Crate, module: &[String]) -> String {
    let file = &krate.files[krate.by_module[module]];
    let has_children = krate
        .files
        .iter()
        .any(|f| f.module.len() > module.len() && f.module.starts_with(module));
    if has_children {
        match file.path.strip_suffix("mod.rs") {
            Some(dir) => dir.to_string(),
            None => format!("{}/", file.path.trim_end_matches(".rs")),
        }
    } else {
        file.path.clone()
    }
}

/// The import circles of the crate: in each folder (module with child modules), the strongly
/// connected groups of its units, where unit A imports unit B when a file inside A imports a
/// file inside B. The folder's own file (`mod.rs`, `lib.rs`) is no unit: it declares its
/// children and holds what they share. Each circle comes with the imports that close it.
fn circles(krate: &Crate) -> Vec<(Vec<String>, Vec<String>)> {
    let folders: BTreeSet<Vec<String>> = krate
        .files
        .iter()
        .filter(|f| !f.module.is_empty())
        .map(|f| f.module[..f.module.len() - 1].to_vec())
        .collect();
    let mut found = Vec::new();
    for folder in &folders {
        let depth = folder.len();
        let inside = |m: &[String]| m.len() > depth && m.starts_with(folder);
        // Unit → unit, with one example import for each edge.
        let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
        for (file, imports) in krate.files.iter().zip(&krate.imports) {
            if !inside(&file.module) {
                continue;
            }
            let from = file.module[depth].clone();
            for import in imports {
                let target = &krate.files[krate.file_of(&import.path)].module;
                if !inside(target) || target[depth] == from {
                    continue;
                }
                edges
                    .entry((from.clone(), target[depth].clone()))
                    .or_insert_with(|| {
                        format!(
                            "src/{}:{} imports {}",
                            file.path,
                            import.line,
                            import.path.join("::")
                        )
                    });
            }
        }
        for group in strongly_connected(&edges) {
            let mut evidence = Vec::new();
            for ((a, b), example) in &edges {
                if group.contains(a) && group.contains(b) {
                    evidence.push(example.clone());
                }
            }
            let mut names: Vec<String> = group
                .iter()
                .map(|u| {
                    let mut m = folder.clone();
                    m.push(u.clone());
                    unit_name(krate, &m)
                })
                .collect();
            names.sort();
            found.push((names, evidence));
        }
    }
    found.sort();
    found
}

/// The groups of two nodes or more that reach each other (Tarjan's algorithm).
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct State<'a> {
        next: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        groups: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for &w in &s.next[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                group.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                s.groups.push(group);
            }
        }
    }
    let mut s = State {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        groups: Vec::new(),
    };
    for v in next.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.groups
}

#[test]
fn no_import_circles() {
    let krate = Crate::read();
    let found = circles(&krate);
    let listed: Vec<Vec<String>> = CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut problems = Vec::new();
    for (names, evidence) in &found {
        if !listed.contains(names) {
            problems.push(format!(
                "an import circle between {}:\n  {}",
                names.join(", "),
                evidence.join("\n  ")
            ));
        }
    }
    for names in &listed {
        if !found.iter().any(|(n, _)| n == names) {
            problems.push(format!(
                "no circle between exactly {} any more: update or remove it in CIRCLES",
                names.join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every function's length in lines, from `fn` to its closing brace, nested functions and
/// test functions included: `(file::name, lines, line)`.
fn function_lengths(file: &SourceFile) -> Vec<(String, usize, usize)> {
    struct Lengths<'a> {
        file: &'a str,
        found: Vec<(String, usize, usize)>,
    }
    impl Lengths<'_> {
        fn add(&mut self, sig: &syn::Signature, block: &syn::Block) {
            let start = line(sig.fn_token.span);
            let end = block.brace_token.span.close().end().line;
            self.found.push((
                format!("{}::{}", self.file, sig.ident),
                end - start + 1,
                start,
            ));
        }
    }
    impl<'ast> Visit<'ast> for Lengths<'_> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            self.add(&f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            self.add(&f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
        fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
            if let Some(block) = &f.default {
                self.add(&f.sig, block);
            }
            syn::visit::visit_trait_item_fn(self, f);
        }
        /// Functions written inside a macro (`proptest! { fn name(x in ...) { ... } }`): from
        /// `fn` to the first braced group after it.
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.macro_fns(m.tokens.clone());
        }
    }
    impl Lengths<'_> {
        fn macro_fns(&mut self, tokens: TokenStream) {
            let tokens: Vec<TokenTree> = tokens.into_iter().collect();
            for (i, t) in tokens.iter().enumerate() {
                if let TokenTree::Group(g) = t {
                    self.macro_fns(g.stream());
                }
                let (TokenTree::Ident(f), Some(TokenTree::Ident(name))) = (t, tokens.get(i + 1))
                else {
                    continue;
                };
                if f != "fn" {
                    continue;
                }
                let body = tokens[i + 2..].iter().find_map(|t| match t {
                    TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                        Some(g.span_close())
                    }
                    _ => None,
                });
                if let Some(close) = body {
                    let start = line(f.span());
                    let lines = close.end().line - start + 1;
                    self.found
                        .push((format!("{}::{name}", self.file), lines, start));
                }
            }
        }
    }
    let mut v = Lengths {
        file: &file.path,
        found: Vec::new(),
    };
    v.visit_file(&file.ast);
    v.found
}

#[test]
fn no_function_is_over_100_lines() {
    let mut long: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for file in crate_files() {
        for (name, lines, at) in function_lengths(&file) {
            if lines > MAX_FUNCTION_LINES && !LONG_BY_DESIGN.contains(&name.as_str()) {
                let e = long.entry(name).or_insert((lines, at));
                if lines > e.0 {
                    *e = (lines, at);
                }
            }
        }
    }
    let mut problems = Vec::new();
    for (name, (lines, at)) in &long {
        let (file, _) = name.split_once("::").unwrap();
        match LONG_FUNCTIONS.iter().find(|(n, _)| n == name) {
            None => problems.push(format!(
                "src/{file}:{at}: `{name}` is {lines} lines (at most {MAX_FUNCTION_LINES})"
            )),
            Some((_, was)) if lines > was => problems.push(format!(
                "src/{file}:{at}: `{name}` grew to {lines} lines (listed at {was}; at most \
                 {MAX_FUNCTION_LINES})"
            )),
            Some(_) => {}
        }
    }
    for (name, was) in LONG_FUNCTIONS {
        if !long.contains_key(*name) && !LONG_BY_DESIGN.contains(name) {
            problems.push(format!(
                "`{name}` (listed at {was} lines) is gone or at most {MAX_FUNCTION_LINES} \
                 lines: remove it from LONG_FUNCTIONS"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The top-level modules `text` imports, read as a file of module `module` in a crate with
/// modules `modules`.
fn top_modules(text: &str, module: &[&str], modules: &[&[&str]]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = modules
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let file = SourceFile {
        path: "test.rs".into(),
        module: module.iter().map(|s| s.to_string()).collect(),
        ast: syn::parse_file(text).unwrap(),
    };
    let found: BTreeSet<String> = imports(&file, &modules)
        .into_iter()
        .filter_map(|i| i.path.first().cloned())
        .collect();
    found.into_iter().collect()
}

#[test]
fn the_scan_sees_every_form_of_path() {
    let text = "use crate::time::Nanos;\nuse crate::{policy::Policy, traffic};\n\
                fn f() { let x = crate::sim::run(); } // crate::check in a comment\n\
                /// crate::report\nfn g() {}\n";
    assert_eq!(
        top_modules(text, &["cli"], &[]),
        ["policy", "sim", "time", "traffic"]
    );
    // Multi-line nested groups, paths in types and macros; strings and comments are not code.
    let text = r#"
        use crate::{
            metrics::{AlgorithmReport, names::{self, Name}},
            rng::Stream,
        };
        /* crate::cli in a block comment */
        fn f(r: &crate::report::Table) -> crate::error::Result<()> {
            let s = "crate::bench in a string";
            println!("{}", crate::output::path());
            Ok(())
        }
    "#;
    assert_eq!(
        top_modules(text, &["sweep"], &[]),
        ["error", "metrics", "output", "report", "rng"]
    );
    // `super::`, `self::` and child modules resolve from the file's own module path.
    let text = "use super::a::X;\nuse self::b::Y;\nuse c::Z;\nfn f() { d::g(); super::super::e::h(); }\n\
                mod tests { use super::*; }";
    let crate_modules: &[&[&str]] = &[&["m", "s", "b"], &["m", "s", "c"], &["m", "s", "d"]];
    let file = SourceFile {
        path: "m/s.rs".into(),
        module: vec!["m".into(), "s".into()],
        ast: syn::parse_file(text).unwrap(),
    };
    let modules = crate_modules
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let paths: Vec<String> = imports(&file, &modules)
        .into_iter()
        .map(|i| i.path.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "m::a::X",
            "m::s::b::Y",
            "m::s::c::Z",
            "m::s::d::g",
            "e::h",
            "m::s"
        ]
    );
}

#[test]
fn circles_are_found_between_files_and_folders() {
    let mut edges = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")] {
        edges.insert((a.to_string(), b.to_string()), String::new());
    }
    let groups = strongly_connected(&edges);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].iter().collect::<Vec<_>>(), ["a", "b", "c"]);
}

#[test]
fn lengths_count_nested_test_and_macro_functions() {
    let text = "fn outer() {\n    fn inner() {\n    }\n}\n\
                proptest! {\n    #[test]\n    fn prop(x in 0..3u8) {\n        let _ = x;\n    }\n}\n\
                impl S {\n    fn method(&self) {}\n}\n";
    let file = SourceFile {
        path: "f.rs".into(),
        module: Vec::new(),
        ast: syn::parse_file(text).unwrap(),
    };
    let found: Vec<(String, usize, usize)> = function_lengths(&file);
    assert_eq!(
        found,
        [
            ("f.rs::outer".to_string(), 4, 1),
            ("f.rs::inner".to_string(), 2, 2),
            ("f.rs::prop".to_string(), 3, 7),
            ("f.rs::method".to_string(), 1, 12),
        ]
    );
}
