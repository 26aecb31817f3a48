//! Documentation that can go stale is checked against the code: the list of error
//! variants in docs/architecture.md names every variant of `Error`, and only those;
//! every `Error::X` and `ErrorKind::X` named anywhere in the workspace's docs and doc
//! comments exists; the e2e README names every test file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_architecture_doc_lists_every_error_variant() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let doc = std::fs::read_to_string(format!("{root}/docs/architecture.md")).unwrap();
    let listed = doc
        .split("<!-- error-variants")
        .nth(1)
        .and_then(|s| s.split("<!-- /error-variants -->").next())
        .expect("the error-variants block");
    let mut documented: Vec<String> = listed
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let source =
        std::fs::read_to_string(format!("{}/src/error/mod.rs", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let body = source
        .split("pub enum Error {")
        .nth(1)
        .and_then(|s| s.split("\n}\n").next())
        .unwrap();
    let mut variants: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("///") && !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            (!name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_uppercase())
                && (l[name.len()..].starts_with(['(', ' ', '{']) || l.len() == name.len() + 1))
                .then_some(name)
        })
        .collect();
    documented.sort();
    documented.dedup();
    variants.sort();
    variants.dedup();
    assert_eq!(
        documented, variants,
        "docs/architecture.md's error list is stale"
    );
}

/// The variant names of `pub enum <name>` in core-http's error folder (`Error` in its
/// `mod.rs`, `Delivery` and `CutShort` in `facts.rs`) or kind.rs (`ErrorKind`).
fn variants(name: &str) -> Vec<String> {
    let file = match name {
        "ErrorKind" => "kind.rs",
        "Error" => "error/mod.rs",
        _ => "error/facts.rs",
    };
    let source =
        std::fs::read_to_string(format!("{}/src/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let body = source
        .split(&format!("pub enum {name} {{"))
        .nth(1)
        .and_then(|s| s.split("\n}\n").next())
        .unwrap();
    body.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("///") && !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            (!name.is_empty() && name.starts_with(|c: char| c.is_ascii_uppercase())).then_some(name)
        })
        .collect()
}

/// Every Markdown file and Rust source of the workspace (not `target`).
fn workspace_texts() -> Vec<(String, String)> {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    stack.push(path);
                }
            } else if (name.ends_with(".md") || name.ends_with(".rs"))
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn every_error_and_error_kind_named_in_the_docs_exists() {
    let errors = variants("Error");
    let kinds = variants("ErrorKind");
    let mut stale = Vec::new();
    for (path, text) in workspace_texts() {
        // Markdown, and the doc comments of Rust files.
        let docs: String = if path.ends_with(".md") {
            text
        } else {
            text.lines()
                .filter(|l| {
                    let l = l.trim_start();
                    l.starts_with("///") || l.starts_with("//!")
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        for (prefix, known) in [("ErrorKind::", &kinds), ("Error::", &errors)] {
            for (i, _) in docs.match_indices(prefix) {
                // Only ours: not `io::ErrorKind`, `WsError::`, `ureq::Error`...
                let before = docs[..i].chars().next_back();
                if before.is_some_and(|c| c == ':' || c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let name: String = docs[i + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.len() > 1
                    && !known.contains(&name)
                {
                    stale.push(format!("{path}: {prefix}{name}"));
                }
            }
        }
    }
    assert!(stale.is_empty(), "names that do not exist: {stale:#?}");
}

#[test]
fn the_e2e_readme_names_every_test_file() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    for entry in std::fs::read_dir(format!("{root}/tests"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") {
            assert!(
                readme.contains(&format!("tests/{name}")),
                "tests/README.md does not mention tests/{name}"
            );
        }
    }
}

/// The `pub fn`s of `source` (outside `#[cfg(test)]` and `#[doc(hidden)]`) whose doc
/// comment has no example.
fn methods_without_an_example(path: &str, source: &str) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut missing = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let Some(rest) = line.trim_start().strip_prefix("pub fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The doc comment and attributes right above.
        let above: Vec<&str> = lines[..i]
            .iter()
            .rev()
            .take_while(|l| {
                let l = l.trim_start();
                l.starts_with("///") || l.starts_with("#[")
            })
            .copied()
            .collect();
        if above.iter().any(|l| l.contains("doc(hidden)")) {
            continue;
        }
        // A constructor or a setter of parameters (`new(..) -> Self`, `x(mut self, ..) ->
        // Self`, `all(self) -> Self`) and an id's `as_str` are shown in their type's example: an example of
        // their own could only check that a field was set.
        let signature: String = lines[i..]
            .iter()
            .take_while(|l| !l.trim_end().ends_with('{') && !l.trim_end().ends_with(';'))
            .chain(lines[i..].iter().find(|l| l.trim_end().ends_with('{')))
            .copied()
            .collect();
        let plain = (signature.contains("-> Self")
            && (name == "new" || signature.contains("(mut self") || signature.contains("(self)")))
            || (name == "as_str" && signature.contains("(&self) -> &str"));
        if plain {
            continue;
        }
        if !above.iter().any(|l| l.contains("```")) {
            missing.push(format!("{path}: {name}"));
        }
    }
    missing
}

#[test]
fn every_public_method_of_every_client_has_an_example() {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut missing = Vec::new();
    let mut checked = 0;
    // The methods the clients get from core-http's macros (`new`, `builder`, `from_env`,
    // ids, enums, plans), the builder, authentication and rate-limit types every client
    // re-exports, and every client crate's own.
    let mut files: Vec<_> = ["macros.rs", "setup/mod.rs", "auth.rs", "rate_limit/mod.rs"]
        .iter()
        .map(|f| root.join("crates/core-http/src").join(f))
        .collect();
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        if entry.file_name().to_string_lossy().ends_with("-client") {
            let mut stack = vec![entry.path().join("src")];
            while let Some(dir) = stack.pop() {
                for file in std::fs::read_dir(&dir).unwrap().flatten() {
                    let path = file.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push(path);
                    }
                }
            }
        }
    }
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        checked += source.matches("pub fn ").count();
        missing.extend(methods_without_an_example(
            &path.display().to_string(),
            &source,
        ));
    }
    assert!(
        checked > 150,
        "only {checked} methods found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "methods without an example: {missing:#?}"
    );
}

/// The labels every client README's "Behaviour" list has, in this order; a service's own
/// (streams, downloads, webhooks...) go between `Limits` and `Configuration`.
const BEHAVIOUR: [&str; 9] = [
    "Writes",
    "Retries",
    "Checks",
    "Decoding",
    "Errors",
    "Limits",
    "Configuration",
    "Secrets",
    "Logging",
];

#[test]
fn every_client_readme_has_its_sections_and_its_behaviour_in_the_shared_order() {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut readmes = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with("-client") {
            continue;
        }
        readmes += 1;
        let readme = std::fs::read_to_string(entry.path().join("README.md")).unwrap();
        let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
        let position = |h: &str| headings.iter().position(|x| *x == h);
        let (behaviour, examples) = (position("## Behaviour"), position("## Examples"));
        assert!(
            behaviour.is_some() && examples.is_some() && behaviour < examples,
            "{name}: README needs ## Behaviour, then ## Examples: {headings:?}"
        );
        let section = readme
            .split("## Behaviour\n")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap();
        let labels: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| {
                l.strip_prefix("**")
                    .and_then(|l| l.split(".**").next())
                    .unwrap_or_else(|| panic!("{name}: a Behaviour bullet without a label: {l}"))
            })
            .collect();
        let shared: Vec<&str> = labels
            .iter()
            .copied()
            .filter(|l| BEHAVIOUR.contains(l))
            .collect();
        assert_eq!(shared, BEHAVIOUR, "{name}: Behaviour labels {labels:?}");
        // The crate's docs carry the same list, word for word.
        let lib = std::fs::read_to_string(entry.path().join("src/lib.rs")).unwrap();
        let in_docs: Vec<String> = lib
            .lines()
            .skip_while(|l| *l != "//! # Behaviour")
            .skip(1)
            .skip_while(|l| !l.starts_with("//! - "))
            .take_while(|l| l.starts_with("//! - ") || l.starts_with("//!   "))
            .map(|l| l["//! ".len()..].to_owned())
            .collect();
        let in_readme: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("- "))
            .take_while(|l| l.starts_with("- ") || l.starts_with("  "))
            .collect();
        assert_eq!(
            in_docs, in_readme,
            "{name}: the crate docs' Behaviour differs from the README's"
        );
        let limits = labels.iter().position(|l| *l == "Limits").unwrap();
        let configuration = labels.iter().position(|l| *l == "Configuration").unwrap();
        for (i, label) in labels.iter().enumerate() {
            assert!(
                BEHAVIOUR.contains(label) || (limits < i && i < configuration),
                "{name}: {label} goes between Limits and Configuration"
            );
        }
    }
    assert_eq!(readmes, 6, "six client crates");
}

/// The code map in docs/architecture.md: a section (`### `) names each crate
/// (`` `crates/<name>` ``) and every folder of its `src` (`` `stream/` ``, core-http's as
/// `` `src/net/` ``), and no folder that none of its crates has; core-http's section also
/// names each file at the root of its `src`, and no file it does not have.
#[test]
fn the_architecture_code_map_names_every_crate_and_folder_and_only_those() {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let map = doc.split("## Code map").nth(1).expect("a code map");
    let map = map.split("\n## ").next().unwrap_or(map);
    let ticked = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    // Every folder under `dir`, relative to it, with a trailing slash.
    fn folders(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                let relative = path.strip_prefix(base).unwrap();
                out.push(format!(
                    "{}/",
                    relative.to_string_lossy().replace('\\', "/")
                ));
                folders(&path, base, out);
            }
        }
    }
    let mut problems = Vec::new();
    let mut named_crates = std::collections::BTreeSet::new();
    for section in map.split("\n### ").skip(1) {
        let tokens = ticked(section);
        let crates: Vec<String> = tokens
            .iter()
            .filter_map(|t| t.strip_prefix("crates/"))
            .filter(|t| !t.contains('/'))
            .map(str::to_owned)
            .collect();
        let mut present = Vec::new();
        for krate in &crates {
            named_crates.insert(krate.clone());
            let src = root.join("crates").join(krate).join("src");
            let mut here = Vec::new();
            folders(&src, &src, &mut here);
            for folder in &here {
                let named = tokens
                    .iter()
                    .any(|t| t == folder || t.strip_prefix("src/") == Some(folder.as_str()));
                if !named {
                    problems.push(format!("{krate}: folder {folder} not named"));
                }
            }
            present.extend(here);
            if krate == "core-http" {
                for entry in std::fs::read_dir(&src).unwrap().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.ends_with(".rs") && name != "lib.rs" && !tokens.contains(&name) {
                        problems.push(format!("core-http: file {name} not named"));
                    }
                }
                for token in tokens
                    .iter()
                    .filter(|t| t.ends_with(".rs") && !t.contains('/'))
                {
                    if !src.join(token).is_file() {
                        problems.push(format!("core-http: file {token} named but absent"));
                    }
                }
            }
        }
        for token in tokens
            .iter()
            .filter(|t| t.ends_with('/') && !t.contains(' '))
        {
            let folder = token.strip_prefix("src/").unwrap_or(token);
            let at_root = root.join(folder.trim_end_matches('/')).is_dir();
            if !present.iter().any(|p| p == folder) && !at_root {
                problems.push(format!("folder {token} named but absent"));
            }
        }
    }
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().join("src").is_dir() && !named_crates.contains(&name) {
            problems.push(format!("crate {name} has no section"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/architecture.md's code map: {problems:#?}"
    );
}
