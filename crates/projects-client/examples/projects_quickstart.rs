//! Create projects, list a page, iterate them all, delete one.
//!
//! `cargo run -p projects-client --example quickstart` runs against a local sandbox; set
//! `PROJECTS_BASE_URL` and `PROJECTS_API_KEY` to use a real service.

mod common;

use projects_client::{
    ErrorKind,
    projects::{Environment, ListProjects, NewProject},
};

fn main() -> anyhow::Result<()> {
    let (client, _sandbox) = common::client()?;
    let projects = client.projects();

    let api = projects.create(
        &NewProject::new("quickstart-api")
            .description("The public API")
            .environment(Environment::Production),
    )?;
    println!("created {} ({}): {}", api.id, api.name, api.status);
    let scratch = projects.create(&NewProject::new("quickstart-scratch"))?;
    println!(
        "created {} ({}): {}",
        scratch.id, scratch.name, scratch.status
    );

    let page = projects.list(&ListProjects::new().limit(10))?;
    let total = page
        .meta
        .and_then(|m| m.total)
        .unwrap_or(page.data.len() as u64);
    println!(
        "{total} projects in all; the first page has {}",
        page.data.len()
    );

    for project in projects.iter() {
        let project = project?;
        let environment = project
            .environment
            .as_ref()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "?".into());
        println!("  {} {:<24} {environment}", project.id, project.name);
    }

    projects.delete(&scratch.id)?;
    println!("deleted {}", scratch.id);
    match projects.delete(&scratch.id) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            println!("deleting it again: not found, as expected")
        }
        other => anyhow::bail!("a second delete should be NotFound, got {other:?}"),
    }
    Ok(())
}
