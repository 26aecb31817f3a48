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

/// A published crate: its folder under `crates/` and its package name.
pub(crate) struct Published {
    /// The folder, `crates/<dir>`.
    pub(crate) dir: String,
    /// The package name, as `cargo -p` and crates.io know it.
    pub(crate) name: String,
}

/// The package name a manifest declares (`name = "..."` under `[package]`).
fn package_name(manifest: &str) -> Option<String> {
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[package]")
        .find_map(|l| l.trim().strip_prefix("name = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
}

/// The workspace's crates that are published (`publish = true` in their manifest).
pub(crate) fn published() -> Result<Vec<Published>, String> {
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
        let name = package_name(&text).ok_or(format!("{manifest:?} has no package name"))?;
        out.push(Published {
            dir: entry.file_name().to_string_lossy().into_owned(),
            name,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Every published crate packaged as crates.io would take it (path dependencies with
/// their versions, unpublished dev-dependencies dropped, the README inside), without
/// building each again: the test run has just built and tested the same code.
pub(crate) fn packaging() -> Result<(), String> {
    let crates = published()?;
    if crates.len() < 8 {
        return Err(format!(
            "expected core-http, the six clients and the sandbox to be published, found {:?}",
            crates.iter().map(|c| &c.name).collect::<Vec<_>>()
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
        cmd.args(["-p", &c.name]);
    }
    step(&format!("package {} crates", crates.len()), cmd)
}

/// The files every published package carries besides its code.
const SHIPPED: [&str; 3] = ["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// A crate's package holds [`SHIPPED`], its licences are the workspace's, and its
/// README starts with how to add it and links nothing that breaks on crates.io.
fn shipped(krate: &Published) -> Result<(), String> {
    let name = krate.name.as_str();
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
    let dir = root().join("crates").join(&krate.dir);
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
    // docs.rs shows which feature each gated item needs.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .map_err(|e| format!("{}/Cargo.toml: {e}", krate.dir))?;
    if manifest.contains("\n[features]") {
        let lib = std::fs::read_to_string(dir.join("src/lib.rs"))
            .map_err(|e| format!("{}/src/lib.rs: {e}", krate.dir))?;
        if !manifest.contains(r#"rustdoc-args = ["--cfg", "docsrs"]"#)
            || !lib.contains("#![cfg_attr(docsrs, feature(doc_cfg))]")
        {
            return Err(format!(
                "crates/{} has features but docs.rs would not say which item needs which \
                 (rustdoc-args --cfg docsrs and #![cfg_attr(docsrs, feature(doc_cfg))])",
                krate.dir
            ));
        }
    }
    let readme = std::fs::read_to_string(dir.join("README.md"))
        .map_err(|e| format!("{}/README.md: {e}", krate.dir))?;
    readme_problems(&krate.dir, &readme).map_or(Ok(()), |problem| {
        Err(format!("crates/{}/README.md: {problem}", krate.dir))
    })
}

/// What is wrong with a crate's README as crates.io and docs.rs show it: it must say
/// how to add the crate from `crates/<dir>` by path (`cargo add --path .../crates/<dir>`)
/// within its first 15 lines, and link only to full addresses or anchors (a relative
/// link such as `../../docs/x.md` breaks there).
fn readme_problems(dir: &str, readme: &str) -> Option<String> {
    let folder = format!("/crates/{dir}");
    let adds = readme.lines().take(15).any(|l| {
        l.contains("cargo add")
            && l.contains("--path")
            && l.split_whitespace().any(|w| w.ends_with(&folder))
    });
    if !adds {
        return Some(format!(
            "does not start with how to add it (`cargo add --path <clone>/crates/{dir}`)"
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

/// Names on crates.io that belong to other people's crates: an install line that fetches
/// one of them by name installs a stranger's code. `trading-client` is one of the six
/// names this family was asked to have, so until the family is published where its
/// names are its own, every install line of ours is a path dependency.
const TAKEN: [&str; 3] = ["trading-client", "sandbox", "testkit"];

/// Every install line in the workspace's READMEs, docs and crate documentation depends
/// on our crates by path (or git), never by a name crates.io would resolve; and no
/// crate of ours besides the six clients is named after a taken name.
pub(crate) fn install_lines() -> Result<(), String> {
    let ours: Vec<String> = published()?.into_iter().map(|c| c.name).collect();
    for name in &ours {
        if TAKEN.contains(&name.as_str()) && !crate::CLIENTS.contains(&name.as_str()) {
            return Err(format!(
                "crate {name} is named after someone else's crate on crates.io"
            ));
        }
    }
    let mut names: Vec<&str> = ours.iter().map(String::as_str).collect();
    names.extend(TAKEN);
    let mut files = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    collect(&root().join("docs"), &mut files, "md");
    collect(&root().join("crates"), &mut files, "md");
    collect(&root().join("crates"), &mut files, "rs");
    let mut checked = 0;
    let mut problems = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(problem) = install_line_problem(line, &names) {
                let shown = file.strip_prefix(root()).unwrap_or(file);
                problems.push(format!("{}:{}: {problem}", shown.display(), n + 1));
            }
            checked += usize::from(is_install_line(line, &names));
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "install lines that fetch from crates.io:\n{}",
            problems.join("\n")
        ));
    }
    println!("ok: {checked} install lines, each a path dependency");
    Ok(())
}

/// Files under `dir` ending in `.ext`, skipping build output.
fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>, ext: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                collect(&path, out, ext);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Whether `line` adds or installs one of `names`: a `cargo add`/`cargo install`
/// naming it, or a TOML dependency line with it as the key.
fn is_install_line(line: &str, names: &[&str]) -> bool {
    let text =
        line.trim_start_matches(|c: char| c == '/' || c == '!' || c == '#' || c.is_whitespace());
    let words: Vec<&str> = text.split_whitespace().collect();
    let cargo_add = words
        .windows(2)
        .any(|w| w[0] == "cargo" && (w[1] == "add" || w[1] == "install"));
    let names_ours = |w: &&str| {
        let w = w.trim_matches(|c: char| c == '`' || c == '"');
        names.contains(&w) || names.iter().any(|n| w.ends_with(&format!("/{n}")))
    };
    if cargo_add {
        return words.iter().any(names_ours);
    }
    let key = text.split('=').next().unwrap_or("").trim();
    text.contains('=') && names.contains(&key) && (text.contains('"') || text.contains('{'))
}

/// What is wrong with an install line: it names one of ours or a taken name and would
/// be resolved on crates.io (no `--path`/`--git`, no `path =`/`git =`).
fn install_line_problem(line: &str, names: &[&str]) -> Option<String> {
    if !is_install_line(line, names) {
        return None;
    }
    let by_path = ["--path", "--git", "path =", "git ="]
        .iter()
        .any(|p| line.contains(p));
    if by_path {
        return None;
    }
    let taken = TAKEN.iter().find(|t| {
        line.split(|c: char| c.is_whitespace() || c == '`' || c == '=' || c == '"')
            .any(|w| w == **t)
    });
    Some(match taken {
        Some(t) => format!(
            "`{}` fetches crates.io's {t}, someone else's crate",
            line.trim()
        ),
        None => format!(
            "`{}` fetches from crates.io, where the family is not published yet",
            line.trim()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::{install_line_problem, readme_problems};

    #[test]
    fn every_install_line_of_the_workspace_is_a_path_dependency() {
        super::install_lines().unwrap();
    }

    #[test]
    fn an_install_line_of_ours_or_a_taken_name_must_be_by_path() {
        let names = [
            "trading-client",
            "service-clients-sandbox",
            "sandbox",
            "testkit",
        ];
        for bad in [
            "cargo add trading-client",
            "cargo add --dev sandbox   # a development tool",
            "//! cargo add testkit",
            "trading-client = \"0.1\"",
            "sandbox = { version = \"0.1\" }",
            "cargo install service-clients-sandbox",
        ] {
            assert!(install_line_problem(bad, &names).is_some(), "{bad}");
        }
        assert!(
            install_line_problem("cargo add trading-client", &names)
                .unwrap()
                .contains("someone else's crate")
        );
        for good in [
            "cargo add --path service-clients/crates/trading-client",
            "cargo install --path crates/sandbox",
            "trading-client = { path = \"../service-clients/crates/trading-client\" }",
            "cargo install cargo-nextest",
            "let sandbox = Sandbox::start()?;",
            "the sandbox answers",
        ] {
            assert_eq!(install_line_problem(good, &names), None, "{good}");
        }
    }

    #[test]
    fn a_readme_says_how_to_add_the_crate_and_links_nowhere_relative() {
        let good = "# x-client\n\n```sh\ncargo add --path service-clients/crates/x-client\n```\n\nSee [the docs](https://docs.rs/x-client) and [below](#use).\n";
        assert_eq!(readme_problems("x-client", good), None);
        let no_add = "# x-client\n\nA client.\n";
        assert!(
            readme_problems("x-client", no_add)
                .unwrap()
                .contains("cargo add --path <clone>/crates/x-client")
        );
        let by_name = "# x-client\n\ncargo add x-client\n";
        assert!(readme_problems("x-client", by_name).is_some());
        let other_crate = "# x-client\n\ncargo add --path s/crates/x-client-extra\n";
        assert!(readme_problems("x-client", other_crate).is_some());
        let relative = "# x-client\ncargo add --path s/crates/x-client\n[wire](../../docs/x.md)\n";
        assert!(
            readme_problems("x-client", relative)
                .unwrap()
                .contains("../../docs/x.md")
        );
    }
}
