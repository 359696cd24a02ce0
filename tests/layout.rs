//! The crate's layout: no import cycle between the top-level modules of `src/`, read from the
//! `crate::...` paths of their non-test code (the logic of the maintainers' module-cycles.py);
//! none among the modules of the kernels crate, and none among the files and folders inside each
//! top-level module of `src/` (read from `crate::`, `super::` and `self::` paths, resolved).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Code before the file's first `#[cfg(test)]`, without `//` comments (docs may name any
/// module without importing it).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first path segment after every `crate::`, including each of a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        out.insert(ident(&group[j..]).to_string());
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest).to_string());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            // Test folders and fixtures hold no library code.
            if name != "tests" && name != "testdata" {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "testutil.rs" {
            out.push(p);
        }
    }
}

/// Top-level module → the other top-level modules its non-test code names.
fn graph(src: &Path) -> Graph {
    let mut mods = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            mods.insert(name);
        } else if let Some(m) = name.strip_suffix(".rs").filter(|m| *m != "lib" && *m != "main") {
            mods.insert(m.to_string());
        }
    }
    let mut g: Graph = mods.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for m in &mods {
        let mut files = Vec::new();
        let dir = src.join(m);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        if src.join(format!("{m}.rs")).is_file() {
            files.push(src.join(format!("{m}.rs")));
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for t in crate_paths(&code(&text)) {
                if mods.contains(&t) && t != *m {
                    g.get_mut(m).unwrap().insert(t);
                }
            }
        }
    }
    g
}

/// Every cycle found by a depth-first search, as the path that closes it.
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    fn visit(g: &Graph, v: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>, out: &mut Vec<Vec<String>>) {
        if let Some(i) = path.iter().position(|p| p == v) {
            let mut c = path[i..].to_vec();
            c.push(v.to_string());
            out.push(c);
            return;
        }
        if done.contains(v) {
            return;
        }
        path.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            visit(g, w, path, done, out);
        }
        path.pop();
        done.insert(v.to_string());
    }
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for v in g.keys() {
        visit(g, v, &mut Vec::new(), &mut done, &mut out);
    }
    out
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    assert!(g.len() >= 10 && g["speculate"].contains("llm"), "the graph was not read: {g:?}");
    let found = cycles(&g);
    assert!(found.is_empty(), "import cycles between top-level modules of src/: {found:?}\n{g:#?}");
    for (from, to) in [("llm", "speculate"), ("llm", "bench")] {
        assert!(!g[from].contains(to), "{from}/ must not import {to}/ (it is the other way round)");
    }
}

#[test]
fn the_reader_sees_groups_and_skips_comments_and_tests() {
    let text = "use crate::{llm::Model, speculate};\n// crate::bench in a comment\nfn f() { crate::text::x() }\n\
                #[cfg(test)]\nmod tests { use crate::fetch; }";
    let got: Vec<String> = crate_paths(&code(text)).into_iter().collect();
    assert_eq!(got, ["llm", "speculate", "text"]);
    let g: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")].iter().fold(Graph::new(), |mut g, (a, b)| {
        g.entry(a.to_string()).or_default().insert(b.to_string());
        g.entry(b.to_string()).or_default();
        g
    });
    assert_eq!(cycles(&g), [["a", "b", "c", "a"]]);
}

/// Code without its unit tests: up to the first inline `#[cfg(test)] mod x {`, and without the
/// `#[cfg(test)] mod x;` declarations of test files (so a declaration near the top does not hide
/// the file's code, as it would from [`code`]).
fn code_without_tests(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]" {
            match lines.peek().map(|n| without_visibility(n.trim())) {
                Some(n) if n.starts_with("mod ") && n.ends_with('{') => break,
                Some(n) if n.starts_with("mod ") && n.ends_with(';') => {
                    lines.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(l.split("//").next().unwrap_or(""));
    }
    out.join("\n")
}

/// `mod x;` of `pub(crate) mod x;` or `pub mod x;`.
fn without_visibility(line: &str) -> &str {
    let line = line.strip_prefix("pub").unwrap_or(line);
    let line = if line.starts_with('(') { line.split_once(')').map_or(line, |(_, r)| r) } else { line };
    line.trim_start()
}

/// The modules a file declares only for tests (`#[cfg(test)] mod x;`), by their paths.
fn test_modules(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for w in lines.windows(2) {
        if let ("#[cfg(test)]", Some(name)) = (w[0], without_visibility(w[1]).strip_prefix("mod "))
            && let Some(name) = name.strip_suffix(';')
        {
            out.push([module, &[name.trim().to_string()]].concat());
        }
    }
    out
}

/// Every module path `code` names, resolved against `module` (the file's own module path):
/// `crate::a::b`, `super::a`, `self::a`, with `{a, b::c}` groups expanded.
fn resolved_paths(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    fn segments(rest: &str, prefix: Vec<String>, out: &mut BTreeSet<Vec<String>>) {
        let mut path = prefix;
        let mut rest = rest;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let (mut depth, mut start) = (0, 0);
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            segments(group[start..j].trim_start(), path.clone(), out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            segments(group[start..j].trim_start(), path.clone(), out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let id = ident(rest);
            if id.is_empty() || id == "self" {
                break;
            }
            path.push(id.to_string());
            match rest[id.len()..].strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        out.insert(path);
    }
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in code.match_indices(start) {
            // `self::` inside `super::self::`... and names that merely end in `crate` are not starts.
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':') {
                continue;
            }
            let mut base: Vec<String> = match start {
                "crate::" => Vec::new(),
                "self::" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &code[i + start.len()..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            segments(rest, base, &mut out);
        }
    }
    out
}

/// The non-test `.rs` files under `dir` with their module paths below `prefix` (`mod.rs`, `lib.rs`
/// and `main.rs` are their folder's module).
fn modules(dir: &Path, prefix: &[String]) -> Vec<(Vec<String>, PathBuf)> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(dir).unwrap().with_extension("");
            let mut m: Vec<String> = prefix.to_vec();
            m.extend(rel.iter().map(|c| c.to_string_lossy().into_owned()));
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            (m, f)
        })
        .collect()
}

/// Among the children of module `scope` (its files and folders; its own `mod.rs` is not one of
/// them): which child's code names which other child.
fn inner_graph(files: &[(Vec<String>, String)], scope: &[String]) -> Graph {
    let mut g = Graph::new();
    for (m, _) in files {
        if m.len() > scope.len() && m.starts_with(scope) {
            g.entry(m[scope.len()].clone()).or_default();
        }
    }
    for (m, code) in files {
        if m.len() <= scope.len() || !m.starts_with(scope) {
            continue;
        }
        let from = &m[scope.len()];
        for t in resolved_paths(code, m) {
            if t.len() > scope.len()
                && t.starts_with(scope)
                && t[scope.len()] != *from
                && g.contains_key(&t[scope.len()])
            {
                g.get_mut(from).unwrap().insert(t[scope.len()].clone());
            }
        }
    }
    g
}

/// The modules under `dir` and their code without tests; modules declared only for tests (and
/// what is inside them) are left out.
fn read_modules(dir: &Path, prefix: &[String]) -> Vec<(Vec<String>, String)> {
    let texts: Vec<(Vec<String>, String)> =
        modules(dir, prefix).into_iter().map(|(m, f)| (m, std::fs::read_to_string(f).unwrap())).collect();
    let tests: Vec<Vec<String>> = texts.iter().flat_map(|(m, t)| test_modules(t, m)).collect();
    texts
        .into_iter()
        .filter(|(m, _)| !tests.iter().any(|t| m.starts_with(t)))
        .map(|(m, t)| (m, code_without_tests(&t)))
        .collect()
}

#[test]
fn no_import_cycle_among_the_kernels_modules() {
    let files = read_modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/src"), &[]);
    let g = inner_graph(&files, &[]);
    assert!(g.len() >= 15 && g["avx2"].contains("part"), "the kernels' graph was not read: {g:#?}");
    let found = cycles(&g);
    assert!(found.is_empty(), "import cycles among the kernels' modules: {found:?}\n{g:#?}");
}

#[test]
fn no_import_cycle_inside_a_top_level_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_modules(&src, &[]);
    let (mut seen, mut found) = (0, Vec::new());
    for top in graph(&src).keys() {
        if !src.join(top).is_dir() {
            continue;
        }
        let g = inner_graph(&files, std::slice::from_ref(top));
        seen += g.values().map(BTreeSet::len).sum::<usize>();
        found.extend(cycles(&g).into_iter().map(|c| format!("src/{top}/: {}", c.join(" → "))));
    }
    assert!(seen >= 50, "the modules' insides were not read ({seen} edges)");
    assert!(found.is_empty(), "import cycles inside top-level modules: {found:#?}");
}

#[test]
fn the_inner_reader_resolves_paths_and_finds_a_made_up_cycle() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let code = "use super::{cache::KvCache, layers};\nuse crate::llm::{self, decoder::Row};\n\
                fn f() { super::super::pack::x(); self::inner::y(); }";
    let got: Vec<String> = resolved_paths(code, &m("llm::synthetic")).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        ["llm", "llm::cache::KvCache", "llm::decoder::Row", "llm::layers", "llm::synthetic::inner::y", "pack::x"]
    );

    // a.rs names b through super, b/mod.rs names a through crate::, c is only named: a cycle a ↔ b.
    let files: Vec<(Vec<String>, String)> = vec![
        (m("top"), "pub mod a; pub mod b; pub mod c; use a::X;".into()),
        (m("top::a"), "use super::b::Y;".into()),
        (m("top::b"), "use crate::top::{a::X, c};".into()),
        (m("top::b::deep"), "use super::super::c::Z;".into()),
        (m("top::c"), "pub struct Z;".into()),
    ];
    let g = inner_graph(&files, &m("top"));
    assert_eq!(cycles(&g), [["a", "b", "a"]], "{g:#?}");
    // Without b's import of a, no cycle is left; the module's own mod.rs is no node.
    let mut files = files;
    files[2].1 = "use crate::top::c;".into();
    let g = inner_graph(&files, &m("top"));
    assert!(cycles(&g).is_empty() && !g.contains_key("top") && g["b"].contains("c"), "{g:#?}");
    let text = "#[cfg(test)]\npub(crate) mod sample;\nuse crate::a;\n#[cfg(test)]\nmod tests {\n use crate::b;\n}";
    assert_eq!(code_without_tests(text).trim(), "use crate::a;");
    assert_eq!(test_modules(text, &m("top")), [m("top::sample")]);
}
