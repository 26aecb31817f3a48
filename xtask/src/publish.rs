//! Ready to publish: the crates users depend on carry their metadata and package
//! cleanly, inside `cargo xtask test`.

use crate::run::step;
use crate::{cargo, root};

/// What every published crate's manifest must say (`repository` comes once the public
/// address is known).
const REQUIRED: [&str; 7] = [
    "description",
    "license",
    "readme",
    "documentation",
    "keywords",
    "categories",
    "rust-version",
];

/// The workspace's crates that are published (`publish = true` in their manifest).
fn published() -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let crates = root().join("crates");
    let entries = std::fs::read_dir(&crates).map_err(|e| format!("{crates:?}: {e}"))?;
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        if !text.lines().any(|l| l.trim() == "publish = true") {
            continue;
        }
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|key| {
                !text.lines().any(|l| {
                    l.trim_start().starts_with(&format!("{key} "))
                        || l.trim_start().starts_with(&format!("{key}."))
                })
            })
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{manifest:?} is published but has no {}",
                missing.join(", ")
            ));
        }
        if !text.contains("[package.metadata.docs.rs]") {
            return Err(format!(
                "{manifest:?} is published but says nothing to docs.rs"
            ));
        }
        out.push(entry.file_name().to_string_lossy().into_owned());
    }
    out.sort();
    Ok(out)
}

/// Every published crate packaged as crates.io would take it (path dependencies with
/// their versions, unpublished dev-dependencies dropped, the README inside), without
/// building each again: the test run has just built and tested the same code.
pub(crate) fn packaging() -> Result<(), String> {
    let crates = published()?;
    if crates.len() < 8 {
        return Err(format!(
            "expected core-http, the six clients and the sandbox to be published, found {crates:?}"
        ));
    }
    let mut cmd = cargo();
    cmd.args(["package", "--no-verify", "--allow-dirty", "--quiet"]);
    for c in &crates {
        cmd.args(["-p", c]);
    }
    step(&format!("package {} crates", crates.len()), cmd)
}
