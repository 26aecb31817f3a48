//! Deletes every project whose name starts with a prefix.
//!
//! ```sh
//! cargo run -p projects-client --example cleanup -- <prefix> [--dry-run]
//! ```
//!
//! With `--dry-run` it only lists what it would delete. It collects the matches first
//! and deletes afterwards, so deleting does not shift the pages being read; a project
//! already gone (404) counts as deleted. Against the local sandbox (no
//! `PROJECTS_BASE_URL`), it first creates a few projects so there is something to clean.

mod common;

use projects_client::{
    ErrorKind,
    projects::{NewProject, Project},
};

fn main() -> anyhow::Result<()> {
    let mut prefix = None;
    let mut dry_run = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--dry-run" | "-n" => dry_run = true,
            "-h" | "--help" => {
                println!("usage: cleanup <name-prefix> [--dry-run]");
                return Ok(());
            }
            _ if prefix.is_none() => prefix = Some(arg),
            _ => anyhow::bail!("unexpected argument {arg:?}; usage: cleanup <prefix> [--dry-run]"),
        }
    }
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
        anyhow::bail!(
            "usage: cleanup <name-prefix> [--dry-run] (an empty prefix would match everything)"
        );
    };

    let (client, sandbox) = common::client()?;
    let projects = client.projects();
    if sandbox.is_some() {
        for name in ["tmp-1", "tmp-2", "keep-me", "tmp-3"] {
            projects.create(&NewProject::new(name))?;
        }
        println!("seeded the sandbox with tmp-1, tmp-2, keep-me, tmp-3");
    }

    let matching: Vec<Project> = projects
        .iter()
        .filter(|p| p.as_ref().map_or(true, |p| p.name.starts_with(&prefix)))
        .collect::<Result<_, _>>()?;
    if matching.is_empty() {
        println!("no project name starts with {prefix:?}");
        return Ok(());
    }

    let mut deleted = 0;
    for project in &matching {
        if dry_run {
            println!("would delete {} ({})", project.id, project.name);
            continue;
        }
        match projects.delete(&project.id) {
            Ok(()) => {
                deleted += 1;
                println!("deleted {} ({})", project.id, project.name);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                deleted += 1;
                println!("{} ({}) was already gone", project.id, project.name);
            }
            Err(e) => return Err(e.into()),
        }
    }
    if dry_run {
        println!("dry run: {} project(s) would be deleted", matching.len());
    } else {
        println!("{deleted} project(s) deleted");
    }
    Ok(())
}
