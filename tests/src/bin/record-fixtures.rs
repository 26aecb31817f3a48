//! Records the per-endpoint fixtures of the client crates from a sandbox started
//! in-process with a frozen clock and a fixed seed, so a re-record changes a file only
//! when the service's answers really changed.
//!
//! `cargo xtask fixtures` writes them; `cargo xtask fixtures --check` fails, naming the
//! file, when one on disk differs from what the sandbox answers now.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use e2e::fixtures::{Fixture, GENERATED_NOTE, Recorder};

fn main() -> ExitCode {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("record-fixtures: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<bool> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the e2e crate has no parent folder")?
        .to_path_buf();
    let sets: Vec<(PathBuf, BTreeMap<String, Fixture>)> = vec![
        (
            root.join("crates/social-client/tests/fixtures"),
            e2e::fixtures::social(&Recorder::start()?)?,
        ),
        (
            root.join("crates/projects-client/tests/fixtures"),
            e2e::fixtures::projects(&Recorder::start()?)?,
        ),
        (
            root.join("crates/vision-client/tests/fixtures"),
            e2e::fixtures::vision(&Recorder::start()?)?,
        ),
        (
            root.join("crates/esign-client/tests/fixtures"),
            e2e::fixtures::esign(&Recorder::start()?)?,
        ),
        (
            root.join("crates/trading-client/tests/fixtures"),
            e2e::fixtures::trading(&Recorder::start()?)?,
        ),
        (
            root.join("crates/worlds-client/tests/fixtures"),
            e2e::fixtures::worlds(&Recorder::start()?)?,
        ),
    ];
    let mut clean = true;
    for (dir, fixtures) in sets {
        clean &= sync(&root, &dir, &fixtures, check)?;
    }
    // Stream transcripts: one file each, compared whole.
    let transcripts = [
        (
            root.join("crates/trading-client/tests/transcripts/stream.json"),
            e2e::fixtures::trading_transcript(&Recorder::start()?)?,
        ),
        (
            root.join("crates/worlds-client/tests/transcripts/realtime.json"),
            e2e::fixtures::worlds_transcript(&Recorder::start()?)?,
        ),
    ];
    for (path, transcript) in transcripts {
        let text = format!("{}\n", serde_json::to_string_pretty(&transcript)?);
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if check {
            eprintln!("{shown} is stale");
            clean = false;
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)?;
            println!("wrote {shown}");
        }
    }
    if check && !clean {
        eprintln!("fixtures are stale: run `cargo xtask fixtures` and review the diff");
    }
    Ok(clean)
}

/// Writes (or, with `check`, compares) one folder's generated fixtures. Hand-written
/// fixtures (without the generated note) are left alone.
fn sync(
    root: &Path,
    dir: &Path,
    fixtures: &BTreeMap<String, Fixture>,
    check: bool,
) -> Result<bool> {
    let mut clean = true;
    let shown = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    for (name, fixture) in fixtures {
        let path = dir.join(format!("{name}.json"));
        let text = fixture.to_pretty()?;
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if check {
            let why = if current.is_some() {
                "is stale"
            } else {
                "is missing"
            };
            eprintln!("{} {why}", shown(&path));
            clean = false;
        } else {
            std::fs::create_dir_all(dir)?;
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", shown(&path));
        }
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let generated = std::fs::read_to_string(&path).is_ok_and(|t| t.contains(GENERATED_NOTE));
        if generated && !fixtures.contains_key(stem) {
            if check {
                eprintln!("{} is no longer produced by the sandbox", shown(&path));
                clean = false;
            } else {
                std::fs::remove_file(&path)?;
                println!("removed {}", shown(&path));
            }
        }
    }
    if fixtures.is_empty() {
        bail!("no fixtures recorded for {}", dir.display());
    }
    Ok(clean)
}
