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
        std::fs::read_to_string(format!("{}/src/error.rs", env!("CARGO_MANIFEST_DIR"))).unwrap();
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

/// The variant names of `pub enum <name>` in core-http's error.rs.
fn variants(name: &str) -> Vec<String> {
    let source =
        std::fs::read_to_string(format!("{}/src/error.rs", env!("CARGO_MANIFEST_DIR"))).unwrap();
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
