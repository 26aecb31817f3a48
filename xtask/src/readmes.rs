//! Every README's first example, run as its reader sees it: the block copied as shown
//! (no hidden lines: a `# ` line fails the check) into `src/main.rs` of a new project
//! outside the workspace whose only dependency is the README's crate, by path; built;
//! then run against the sandbox program started as the READMEs say (its default clock,
//! so at whatever hour the check runs), with the variables its banner prints.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::examples::Running;
use crate::{cargo, root};

/// Each README (relative to the root), the crate folder its program depends on, and
/// what its output must hold (a run that prints none of them did not reach its end).
const READMES: &[(&str, &str, &[&str])] = &[
    ("README.md", "social-client", &["posts in all"]),
    (
        "crates/social-client/README.md",
        "social-client",
        &["posts in all"],
    ),
    (
        "crates/projects-client/README.md",
        "projects-client",
        &["projects in all"],
    ),
    (
        "crates/vision-client/README.md",
        "vision-client",
        &["bbox", "["],
    ),
    (
        "crates/esign-client/README.md",
        "esign-client",
        &["bytes written to "],
    ),
    (
        "crates/trading-client/README.md",
        "trading-client",
        // At any hour: filled while the market is open, or told when it opens.
        &["filled Some(10)", "the market is closed until"],
    ),
    (
        "crates/worlds-client/README.md",
        "worlds-client",
        &["hello: "],
    ),
    (
        "crates/core-http/README.md",
        "core-http",
        &["posts on the first page"],
    ),
    (
        "crates/sandbox/README.md",
        "sandbox",
        &["social service at http://127.0.0.1:"],
    ),
];

/// The first ```rust block of a README, exactly as shown; an error when it has a
/// hidden line or is not a whole program.
pub(crate) fn first_example(readme: &str) -> Result<String, String> {
    let start = readme.find("```rust\n").ok_or("has no ```rust example")? + "```rust\n".len();
    let end = readme[start..]
        .find("\n```")
        .map(|e| start + e + 1)
        .ok_or("its first example never ends")?;
    let block = &readme[start..end];
    if let Some(line) = block
        .lines()
        .find(|l| l.trim_start() == "#" || l.trim_start().starts_with("# "))
    {
        return Err(format!(
            "its first example has a hidden line, which a reader sees and cannot paste: {line:?}"
        ));
    }
    if !block.contains("fn main()") {
        return Err("its first example is not a whole program (no `fn main()`)".into());
    }
    Ok(block.to_owned())
}

/// Starts the sandbox program as the READMEs say (on a free port, so that a run never
/// meets another's); the variables its banner's `export` lines set.
fn start_sandbox(target: &Path) -> Result<(Running, Vec<(String, String)>), String> {
    let mut build = cargo();
    build.args(["build", "-q", "-p", "service-clients-sandbox"]);
    crate::run::step("build the sandbox program", build)?;
    let program = target.join("debug").join(format!(
        "service-clients-sandbox{}",
        std::env::consts::EXE_SUFFIX
    ));
    let mut child = Command::new(&program)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let stdout = child.stdout.take().ok_or("the sandbox has no output")?;
    let running = Running(child);
    let mut vars = Vec::new();
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line.map_err(|e| format!("cannot read the sandbox's banner: {e}"))?;
        if let Some(exports) = line.trim_start().strip_prefix("export ") {
            for pair in exports.split_whitespace() {
                let (k, v) = pair
                    .split_once('=')
                    .ok_or(format!("the banner's export line is malformed: {line:?}"))?;
                vars.push((k.to_owned(), v.to_owned()));
            }
        }
        if line.starts_with("press Ctrl-C") {
            break;
        }
    }
    // Keep reading what it prints, so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    if vars.len() < 12 {
        return Err(format!("the sandbox's banner set only {vars:?}"));
    }
    Ok((running, vars))
}

/// A new project in `dir` whose only dependency is `crates/<krate>` by path, with the
/// workspace's lock file (the same versions) and `program` as its `src/main.rs`.
fn scratch_project(dir: &Path, krate: &str, program: &str) -> Result<(), String> {
    let package = crate::publish::published()?
        .into_iter()
        .find(|c| c.dir == krate)
        .ok_or(format!("crates/{krate} is not a published crate"))?
        .name;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("{dir:?}: {e}"))?;
    // The workspace's profiles too, so that the dependencies it has built with the
    // same features are reused rather than built again.
    let workspace = std::fs::read_to_string(root().join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    let profiles = workspace
        .find("\n[profile.")
        .map_or("", |at| &workspace[at..]);
    let manifest = format!(
        "[package]\nname = \"readme-{krate}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{package} = {{ path = {:?} }}\n\n[workspace]\n{profiles}",
        root().join("crates").join(krate).display().to_string()
    );
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{dir:?}/{name}: {e}"))
    };
    write("Cargo.toml", &manifest)?;
    write("src/main.rs", program)?;
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    Ok(())
}

/// Builds and runs every README's first example as described in the module docs.
pub(crate) fn run_all() -> Result<(), String> {
    println!("==> every README's first example, pasted into a new project and run");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let scratch =
        std::env::temp_dir().join(format!("service-clients-readmes-{}", std::process::id()));
    let mut programs = Vec::new();
    for (readme, krate, _) in READMES {
        let text = std::fs::read_to_string(root().join(readme))
            .map_err(|e| format!("cannot read {readme}: {e}"))?;
        let program = first_example(&text).map_err(|e| format!("{readme}: {e}"))?;
        let dir = scratch.join(readme.replace('/', "-").trim_end_matches(".md"));
        scratch_project(&dir, krate, &program)?;
        let mut build = cargo();
        build
            .args(["build", "-q", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target);
        crate::run::step(
            &format!("{readme}'s example builds with only {krate}"),
            build,
        )?;
        programs.push((readme, krate, dir));
    }
    let (_sandbox, vars) = start_sandbox(&target)?;
    let mut failures = Vec::new();
    for (readme, krate, dir) in programs {
        let expected = READMES
            .iter()
            .find(|(r, _, _)| r == readme)
            .map_or(&[][..], |(_, _, e)| *e);
        let binary = target
            .join("debug")
            .join(format!("readme-{krate}{}", std::env::consts::EXE_SUFFIX));
        let mut cmd = Command::new(binary);
        // Its temporary directory is its project's, removed with it.
        cmd.current_dir(&dir)
            .env("TMPDIR", &dir)
            .envs(vars.iter().cloned());
        match crate::scripts::run(&format!("{readme}'s example"), cmd) {
            Ok(out) if expected.iter().any(|e| out.contains(e)) => {}
            Ok(out) => failures.push(format!(
                "{readme}'s example printed none of {expected:?}:\n{out}"
            )),
            Err(e) => failures.push(e),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::first_example;

    #[test]
    fn a_first_example_is_taken_as_shown_and_must_be_a_whole_program() {
        let whole = "# x\n\n```sh\ncargo add x\n```\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n```rust\nlater();\n```\n";
        assert_eq!(
            first_example(whole).unwrap(),
            "fn main() {\n    println!(\"hi\");\n}\n"
        );
        let hidden = "```rust\n# let key = testkit::doc::social();\nfn main() {}\n```\n";
        assert!(first_example(hidden).unwrap_err().contains("hidden line"));
        let fragment = "```rust\nlet client = Client::from_env()?;\n```\n";
        assert!(
            first_example(fragment)
                .unwrap_err()
                .contains("whole program")
        );
        assert!(first_example("no code").is_err());
    }
}
