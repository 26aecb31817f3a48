//! `cargo xtask structure` (and a step of `test`): no crate's modules import each other
//! in a circle, and none of core-http's functions is longer than [`MAX_FN_LINES`].
//!
//! Read from the text, as a reviewer reads it: a file's imports are its `use crate::..`
//! and `use super::..` paths and every other `crate::a::b` path; a name the crate root
//! re-exports counts as the module it comes from. Comments and `#[cfg(test)] mod`
//! blocks are not the design and are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::root;

/// The longest function core-http may hold, in lines from its `fn` to its closing brace.
pub(crate) const MAX_FN_LINES: usize = 80;

type Module = Vec<String>;

pub(crate) fn check() -> Result<(), String> {
    let src = root().join("crates/core-http/src");
    let files = rust_files(&src)?;
    let mut problems = Vec::new();
    let crates = crate_dirs()?;
    for krate in &crates {
        let krate_src = root().join("crates").join(krate).join("src");
        for circle in circles(&krate_src, &rust_files(&krate_src)?)? {
            problems.push(format!(
                "{krate}'s modules import each other in a circle: {}",
                circle.join(" -> ")
            ));
        }
    }
    for (path, text) in &files {
        for (name, line, len) in long_functions(&strip_tests(text)) {
            problems.push(format!(
                "{}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES})",
                path.strip_prefix(root()).unwrap_or(path).display()
            ));
        }
    }
    if problems.is_empty() {
        println!(
            "ok: {} crates, no import circle; core-http: {} files, no function over \
             {MAX_FN_LINES} lines",
            crates.len(),
            files.len(),
        );
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The workspace's crates, by folder name under `crates/`.
fn crate_dirs() -> Result<Vec<String>, String> {
    let dir = root().join("crates");
    let mut out = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        if entry.path().join("src").is_dir() {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(out)
}

pub(crate) fn rust_files(dir: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|e| format!("cannot read {d:?}: {e}"))?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&p).map_err(|e| format!("{p:?}: {e}"))?;
                out.push((p, text));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The module a file is: `ws/conn.rs` is `[ws, conn]`, `ws/mod.rs` and `lib.rs` their
/// folder's.
fn module_of(src: &Path, path: &Path) -> Module {
    let rel = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// Removes `#[cfg(test)] mod x { .. }` blocks and line comments.
pub(crate) fn strip_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        if !after.starts_with("mod ") || after.find('{').is_none_or(|b| after[..b].contains(';')) {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(&rest[..at]);
        let open = rest.len() - after.len() + after.find('{').unwrap_or(0);
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a::{b, c::{d, e}}` as the paths it names.
pub(crate) fn expand(body: &str) -> Vec<Module> {
    // `x as y` names `x`: the rename is dropped, then the spaces.
    let mut words = Vec::new();
    let mut tokens = body.split_whitespace();
    while let Some(word) = tokens.next() {
        if word == "as" {
            if let Some(renamed) = tokens.next() {
                // Keep what follows the new name (`,` or `}`).
                let tail: String = renamed
                    .chars()
                    .skip_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                words.push(tail);
            }
        } else {
            words.push(word.to_owned());
        }
    }
    let body: String = words.concat();
    let mut out = Vec::new();
    walk(&mut out, &[], &body);
    out
}

fn walk(out: &mut Vec<Module>, prefix: &[String], s: &str) {
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    for part in parts.iter().filter(|p| !p.is_empty()) {
        if let Some((head, tail)) = part.split_once('{') {
            let mut p = prefix.to_vec();
            p.extend(segments(head));
            walk(out, &p, tail.strip_suffix('}').unwrap_or(tail));
        } else {
            let mut p = prefix.to_vec();
            p.extend(segments(part));
            out.push(p);
        }
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::to_owned)
        .filter(|s| !s.is_empty() && s != "self" && s != "*")
        .collect()
}

/// Every `use <root>::..;` body, and every other `<root>::a::b` path, of `text`.
fn paths(text: &str, root: &str) -> Vec<Module> {
    let mut out = Vec::new();
    let use_prefix = format!("use {root}::");
    let mut rest = text;
    while let Some(at) = rest.find(&use_prefix) {
        let body_start = at + use_prefix.len();
        let end = rest[body_start..]
            .find(';')
            .map_or(rest.len(), |e| body_start + e);
        out.extend(expand(&rest[body_start..end]));
        rest = &rest[end..];
    }
    if root == "crate" {
        let bytes = text.as_bytes();
        for (i, _) in text.match_indices("crate::") {
            let before = i.checked_sub(1).map(|b| bytes[b] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                || text[..i].ends_with("use ")
            {
                continue;
            }
            let path: String = text[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(segments(&path));
        }
    }
    out
}

fn circles(src: &Path, files: &[(PathBuf, String)]) -> Result<Vec<Vec<String>>, String> {
    let modules: BTreeSet<Module> = files.iter().map(|(p, _)| module_of(src, p)).collect();
    // Names the root re-exports, and the module each comes from.
    let mut reexported: BTreeMap<String, Module> = BTreeMap::new();
    if let Some((_, lib)) = files.iter().find(|(p, _)| module_of(src, p).is_empty()) {
        let lib = strip_tests(lib);
        let mut rest = lib.as_str();
        while let Some(at) = rest.find("pub use ") {
            let start = at + "pub use ".len();
            let end = rest[start..].find(';').map_or(rest.len(), |e| start + e);
            for path in expand(&rest[start..end]) {
                if path.len() > 1 && path[0] != "crate" {
                    let name = path[path.len() - 1].clone();
                    reexported.insert(name, path[..path.len() - 1].to_vec());
                }
            }
            rest = &rest[end..];
        }
    }
    let resolve = |path: &Module| -> Option<Module> {
        let mut path = path.clone();
        if let Some(first) = path.first()
            && !modules.contains(&vec![first.clone()])
            && let Some(from) = reexported.get(first)
        {
            let mut full = from.clone();
            full.extend(path);
            path = full;
        }
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| modules.contains(m))
    };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (path, text) in files {
        let module = module_of(src, path);
        let text = strip_tests(text);
        // `super` of `ws/conn.rs` is `ws`; of `ws/mod.rs`, the root.
        let here: Module = module
            .iter()
            .take(module.len().saturating_sub(1))
            .cloned()
            .collect();
        let mut targets = paths(&text, "crate");
        for mut p in paths(&text, "super") {
            let mut full = here.clone();
            // `super::super::x`: one level up for each further `super`.
            while p.first().is_some_and(|s| s == "super") {
                p.remove(0);
                full.pop();
            }
            full.extend(p);
            targets.push(full);
        }
        let set = edges.entry(module.clone()).or_default();
        for t in targets {
            if let Some(r) = resolve(&t)
                && r != module
                && !r.is_empty()
            {
                set.insert(r);
            }
        }
    }
    Ok(strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.iter().map(|m| format!("{}.rs", m.join("/"))).collect())
        .collect())
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next {
                let Some((w, _)) = s.edges.get_key_value(w) else {
                    continue;
                };
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// The functions of `text` (with its line comments and test modules left out): (index
/// of the `fn` line, name, index of the line closing its body, or `None` for a trait's
/// declaration without one).
fn functions(text: &str) -> Vec<(usize, String, Option<usize>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut rest = line.trim_start();
        for word in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
            rest = rest.strip_prefix(word).unwrap_or(rest);
        }
        let Some(after) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // From the `fn` line to the brace that closes its body; a `;` outside brackets
        // before the body (not the one in `[u8; 3]`) ends a declaration.
        let (mut braces, mut brackets) = (0i32, 0i32);
        let mut end = None;
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            for c in code_chars(l) {
                match c {
                    '{' => braces += 1,
                    '}' => {
                        braces -= 1;
                        if braces == 0 {
                            end = Some(j);
                            break 'scan;
                        }
                    }
                    '(' | '[' => brackets += 1,
                    ')' | ']' => brackets -= 1,
                    ';' if braces == 0 && brackets == 0 => break 'scan,
                    _ => {}
                }
            }
        }
        out.push((i, name, end));
    }
    out
}

/// The characters of a line of code outside its string and character literals (a
/// `'{'` opens no block), as far as one line shows them.
fn code_chars(line: &str) -> Vec<char> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            // A character literal (`'{'`, `'\''`), not a lifetime (`'a`).
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 3,
            '\'' if chars.get(i + 1) == Some(&'\\') => {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Functions longer than [`MAX_FN_LINES`]: (name, first line, length).
fn long_functions(text: &str) -> Vec<(String, usize, usize)> {
    functions(text)
        .into_iter()
        .filter_map(|(i, name, end)| Some((name, i + 1, end? - i + 1)))
        .filter(|(_, _, len)| *len > MAX_FN_LINES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_bodies_expand_to_paths() {
        let got = expand("a::{b, c::{d, e as f}}, g");
        let want: Vec<Module> = [
            vec!["a", "b"],
            vec!["a", "c", "d"],
            vec!["a", "c", "e"],
            vec!["g"],
        ]
        .iter()
        .map(|p| p.iter().map(|s| (*s).to_owned()).collect())
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_long_function_is_found_and_tests_are_left_out() {
        let body = "    x();\n".repeat(MAX_FN_LINES);
        let text = format!(
            "fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}    }}\n}}\n"
        );
        let found = long_functions(&strip_tests(&text));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "long");
    }

    #[test]
    fn braces_in_literals_open_no_block() {
        let text = "fn a(b: &[u8]) -> bool {\n    b == b\"{\" || b[0] == b'{' || b[0] == b'\\''\n}\nfn c<'x>(d: &'x str) {}\n";
        let found = functions(text);
        assert_eq!(
            found.iter().map(|f| (f.0, f.2)).collect::<Vec<_>>(),
            [(0, Some(2)), (3, Some(3))]
        );
    }

    #[test]
    fn a_circle_is_found_through_root_reexports_and_super() {
        let src = Path::new("/x");
        let file = |p: &str, t: &str| (src.join(p), t.to_owned());
        let files = vec![
            file("lib.rs", "mod a; mod b; pub use b::c::C;"),
            file("a.rs", "use crate::C;"),
            file("b/mod.rs", "mod c;"),
            file("b/c.rs", "use super::super::a::A;"),
        ];
        let found = circles(src, &files).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains(&"a.rs".to_owned()), "{found:?}");
        // Without the way back, none.
        let acyclic = vec![
            files[0].clone(),
            files[1].clone(),
            files[2].clone(),
            file("b/c.rs", "fn f() {}"),
        ];
        assert!(circles(src, &acyclic).unwrap().is_empty());
    }
}
