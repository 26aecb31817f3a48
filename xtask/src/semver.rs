//! A step of `cargo xtask test`: the other crates' types that appear in the public API
//! of core-http and the six clients are exactly those docs/semver.md lists between its
//! `<!-- external-types -->` markers. A dependency whose type is in a public signature
//! is part of what a release promises (its major version is ours to bump with it), so
//! the list has to be true.
//!
//! Read from the text, as a reviewer reads it: a file's public signatures are its
//! `pub fn` heads, `pub` fields, `pub type`/`const`/`static` items, the bodies of its
//! `pub enum`s, its tuple structs' fields, its `impl From<..>`-style conversions and
//! its `pub use` of another crate; a name there that the file imported from a
//! dependency (or wrote as `dependency::Name`) is an external type in the public API.
//! `#[cfg(test)]` modules and comments do not count. A `pub fn` of a private module
//! counts too: the check errs on the side of listing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::root;
use crate::structure::{expand, rust_files, strip_tests};

pub(crate) fn check() -> Result<(), String> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The crates users depend on (the sandbox is a development tool and not held to it).
    for krate in crate::SHARED.into_iter().chain(crate::CLIENTS) {
        let dir = root().join("crates").join(krate);
        let manifest = fs::read_to_string(dir.join("Cargo.toml"))
            .map_err(|e| format!("{krate}/Cargo.toml: {e}"))?;
        let deps = dependencies(&manifest);
        for (path, text) in rust_files(&dir.join("src"))? {
            if path.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            for ty in external_types(&strip_tests(&text), &deps) {
                found.entry(ty).or_default().insert(krate.to_owned());
            }
        }
    }
    let doc_path = root().join("docs/semver.md");
    let doc = fs::read_to_string(&doc_path).map_err(|e| format!("{doc_path:?}: {e}"))?;
    let listed = listed(&doc).ok_or("docs/semver.md has no <!-- external-types --> block")?;
    let mut problems = Vec::new();
    for (ty, crates) in &found {
        if !listed.contains(ty) {
            let crates: Vec<&str> = crates.iter().map(String::as_str).collect();
            problems.push(format!(
                "`{ty}` is in the public API of {} but not listed in docs/semver.md",
                crates.join(", ")
            ));
        }
    }
    for ty in &listed {
        if !found.contains_key(ty) {
            problems.push(format!(
                "docs/semver.md lists `{ty}`, which no public signature uses"
            ));
        }
    }
    if problems.is_empty() {
        println!(
            "ok: the {} external types in public signatures are those docs/semver.md lists",
            found.len()
        );
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The crate names (as Rust spells them) of a manifest's `[dependencies]`, our shared
/// crates left out.
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name
                .trim()
                .split('.')
                .next()
                .unwrap_or("")
                .replace('-', "_");
            let ours = crate::SHARED.iter().any(|k| k.replace('-', "_") == name);
            if !name.is_empty() && !ours {
                out.insert(name);
            }
        }
    }
    out
}

/// The types in `text`'s public signatures that come from one of `deps`, as
/// `crate::path::Name`.
fn external_types(text: &str, deps: &BTreeSet<String>) -> BTreeSet<String> {
    let mut imported: BTreeMap<String, String> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (is_pub, body) in uses(text) {
        // A renamed import (`x as y`) is not followed by its new name: none of the
        // libraries renames a type it shows.
        let renamed = body.contains(" as ");
        for path in expand(&body) {
            let (Some(first), Some(last)) = (path.first(), path.last()) else {
                continue;
            };
            if !deps.contains(first) {
                continue;
            }
            let full = path.join("::");
            if is_pub {
                out.insert(full.clone());
            }
            // A module imported for its paths (`use serde::de;`) is not a type.
            if !renamed && last.starts_with(|c: char| c.is_ascii_uppercase()) {
                imported.insert(last.clone(), full);
            }
        }
    }
    let signatures = signatures(text);
    for (name, full) in &imported {
        if words(&signatures).any(|w| w == name) {
            out.insert(full.clone());
        }
    }
    for word in words(&signatures) {
        let mut parts = word.split("::");
        if let Some(first) = parts.next()
            && deps.contains(first)
            && let Some(last) = word.rsplit("::").next()
            && last.starts_with(|c: char| c.is_ascii_uppercase())
        {
            out.insert(word.to_owned());
        }
    }
    out
}

/// Each `use ..;` of `text`: whether it is `pub use`, and its body.
fn uses(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("use ") {
        let before = &text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let head = before[line_start..].trim();
        if !(head.is_empty() || head == "pub") {
            continue;
        }
        if let Some(end) = text[at..].find(';') {
            out.push((head == "pub", text[at + 4..at + end].to_owned()));
        }
    }
    out
}

/// The public signatures of `text`, one after another.
fn signatures(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let heads = [
            "pub fn ",
            "pub const fn ",
            "pub type ",
            "pub const ",
            "pub static ",
        ];
        if heads.iter().any(|h| line.starts_with(h)) {
            // Up to the body or the end of the item.
            let mut j = i;
            loop {
                let l = lines[j];
                let cut = l.find(['{', ';', '=']).map_or(l, |k| &l[..k]);
                out.push_str(cut);
                out.push('\n');
                if cut.len() < l.len() || j + 1 == lines.len() {
                    break;
                }
                j += 1;
            }
        } else if is_pub_field(line)
            || is_conversion(line)
            || line.starts_with("pub struct ") && line.contains('(')
        {
            out.push_str(line);
            out.push('\n');
        } else if let Some(self_type) = impl_for(line) {
            out.push_str(self_type);
            out.push('\n');
        } else if line.starts_with("pub enum ") {
            while i < lines.len() && lines[i] != "}" {
                out.push_str(lines[i]);
                out.push('\n');
                i += 1;
            }
        }
        i += 1;
    }
    out
}

/// The type an `impl Trait for Type` line implements a trait for: when it is another
/// crate's type, the trait (ours, or a conversion) makes that type part of our API.
fn impl_for(line: &str) -> Option<&str> {
    if !line.starts_with("impl") {
        return None;
    }
    let (_, self_type) = line.split_once(" for ")?;
    Some(self_type.split('{').next().unwrap_or(self_type))
}

/// `pub name: Type,`
fn is_pub_field(line: &str) -> bool {
    line.strip_prefix("pub ").is_some_and(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        !name.is_empty() && rest[name.len()..].trim_start().starts_with(':')
    })
}

/// `impl From<X> for Y` and the like: a conversion any user can call.
fn is_conversion(line: &str) -> bool {
    [
        "impl From<",
        "impl TryFrom<",
        "impl PartialEq<",
        "impl AsRef<",
    ]
    .iter()
    .any(|h| line.starts_with(h))
}

/// The words of a text: names and `a::b::C` paths.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '\''))
        .map(|w| w.trim_matches(':'))
        // A lifetime (`'de`) is not a name.
        .filter(|w| !w.is_empty() && !w.starts_with('\''))
}

/// The types listed between `<!-- external-types -->` and `<!-- /external-types -->`,
/// one per line as ``- `crate::Name` ...``.
fn listed(doc: &str) -> Option<BTreeSet<String>> {
    let block = doc
        .split("<!-- external-types -->")
        .nth(1)?
        .split("<!-- /external-types -->")
        .next()?;
    Some(
        block
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- `"))
            .filter_map(|l| l.split('`').next())
            .map(str::to_owned)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps() -> BTreeSet<String> {
        ["time", "serde_json", "serde"].map(str::to_owned).into()
    }

    #[test]
    fn finds_imported_and_written_out_types_in_public_signatures_only() {
        let text = "
use time::{Date, OffsetDateTime};
use serde_json::Value;
use serde::Serialize;
use std::time::Duration;

pub struct Event {
    pub at: OffsetDateTime,
    seen: Date,
}

pub fn data(v: &serde_json::Map<String, Value>) -> Duration {
    let d: Date = todo!();
}

fn private(s: impl Serialize) {}

pub fn visit<'de, D: serde::Deserializer<'de>>(d: D) {}
";
        let found = external_types(&strip_tests(text), &deps());
        let found: Vec<&str> = found.iter().map(String::as_str).collect();
        assert_eq!(
            found,
            [
                "serde::Deserializer",
                "serde_json::Map",
                "serde_json::Value",
                "time::OffsetDateTime"
            ]
        );
    }

    #[test]
    fn counts_enum_bodies_conversions_and_pub_use() {
        let text = "
pub use time::Month;
use serde_json::Error as JsonError;

pub enum Error {
    Decode { source: serde_json::Error },
}

impl From<time::Date> for Day {}

impl Headers for serde_json::Map<String, String> {}
";
        let found = external_types(&strip_tests(text), &deps());
        let found: Vec<&str> = found.iter().map(String::as_str).collect();
        assert_eq!(
            found,
            [
                "serde_json::Error",
                "serde_json::Map",
                "time::Date",
                "time::Month"
            ]
        );
    }

    #[test]
    fn reads_the_manifest_and_the_list() {
        let manifest = "[package]\nname = \"x\"\n[dependencies]\ncore-http.workspace = true\nserde_json = \"1\"\nrust-decimal = { version = \"1\" }\n[dev-dependencies]\nmockito = \"1\"\n";
        let deps: Vec<String> = dependencies(manifest).into_iter().collect();
        assert_eq!(deps, ["rust_decimal", "serde_json"]);
        let doc = "x\n<!-- external-types -->\n- `time::Date` (trading)\n- `serde_json::Value`\n<!-- /external-types -->\n";
        let listed: Vec<String> = listed(doc).unwrap().into_iter().collect();
        assert_eq!(listed, ["serde_json::Value", "time::Date"]);
    }
}
