//! The crate's layout: no import cycle between the top-level modules of `src/`, read from the
//! `crate::...` paths of their non-test code (the logic of the maintainers' module-cycles.py).

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
