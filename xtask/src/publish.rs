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
pub(crate) fn published() -> Result<Vec<String>, String> {
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
    println!("==> what every package carries: licences, a README that works on crates.io");
    for c in &crates {
        shipped(c)?;
    }
    println!(
        "ok: {} packages carry both licences and a README",
        crates.len()
    );
    let mut cmd = cargo();
    cmd.args(["package", "--no-verify", "--allow-dirty", "--quiet"]);
    for c in &crates {
        cmd.args(["-p", c]);
    }
    step(&format!("package {} crates", crates.len()), cmd)
}

/// The files every published package carries besides its code.
const SHIPPED: [&str; 3] = ["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// Crate `name`'s package holds [`SHIPPED`], its licences are the workspace's, and its
/// README starts with how to add it and links nothing that breaks on crates.io.
fn shipped(name: &str) -> Result<(), String> {
    let output = cargo()
        .args(["package", "--list", "--allow-dirty", "-p", name])
        .output()
        .map_err(|e| format!("cargo package --list -p {name}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo package --list -p {name} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let listed = String::from_utf8_lossy(&output.stdout);
    for file in SHIPPED {
        if !listed.lines().any(|l| l.trim() == file) {
            return Err(format!("the {name} package does not carry {file}"));
        }
    }
    let dir = root().join("crates").join(name);
    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let ours =
            std::fs::read(dir.join(licence)).map_err(|e| format!("{name}/{licence}: {e}"))?;
        let workspace =
            std::fs::read(root().join(licence)).map_err(|e| format!("{licence}: {e}"))?;
        if ours != workspace {
            return Err(format!(
                "crates/{name}/{licence} differs from the workspace's {licence}"
            ));
        }
    }
    let readme = std::fs::read_to_string(dir.join("README.md"))
        .map_err(|e| format!("{name}/README.md: {e}"))?;
    readme_problems(name, &readme).map_or(Ok(()), |problem| {
        Err(format!("crates/{name}/README.md: {problem}"))
    })
}

/// What is wrong with a crate's README as crates.io and docs.rs show it: it must say
/// how to add the crate (`cargo add <name>`) within its first 15 lines, and link only
/// to full addresses or anchors (a relative link such as `../../docs/x.md` breaks there).
fn readme_problems(name: &str, readme: &str) -> Option<String> {
    let adds = readme
        .lines()
        .take(15)
        .any(|l| l.contains("cargo add") && l.split_whitespace().any(|w| w == name));
    if !adds {
        return Some(format!(
            "does not start with how to add it (`cargo add {name}`)"
        ));
    }
    let mut rest = readme;
    while let Some(at) = rest.find("](") {
        let target = &rest[at + 2..];
        let end = target.find(')').unwrap_or(target.len());
        let link = &target[..end];
        if !(link.starts_with("https://") || link.starts_with("http://") || link.starts_with('#')) {
            return Some(format!(
                "links to {link:?}, which breaks on crates.io and docs.rs"
            ));
        }
        rest = &target[end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::readme_problems;

    #[test]
    fn a_readme_says_how_to_add_the_crate_and_links_nowhere_relative() {
        let good = "# x-client\n\n```sh\ncargo add x-client\n```\n\nSee [the docs](https://docs.rs/x-client) and [below](#use).\n";
        assert_eq!(readme_problems("x-client", good), None);
        let no_add = "# x-client\n\nA client.\n";
        assert!(
            readme_problems("x-client", no_add)
                .unwrap()
                .contains("cargo add x-client")
        );
        let other_crate = "# x-client\n\ncargo add x-client-extra\n";
        assert!(readme_problems("x-client", other_crate).is_some());
        let relative = "# x-client\ncargo add x-client\n[wire](../../docs/x.md)\n";
        assert!(
            readme_problems("x-client", relative)
                .unwrap()
                .contains("../../docs/x.md")
        );
    }
}
