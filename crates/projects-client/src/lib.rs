//! A blocking client for the developer project service: list projects a page at a time
//! or lazily all of them, create them, delete them.
//!
//! ```no_run
//! use projects_client::{Client, Environment, NewProject};
//!
//! let client = Client::new("https://api.example.com", "sk_live_...")?;
//! let project = client
//!     .projects()
//!     .create(&NewProject::new("billing").environment(Environment::Staging))?;
//! println!("{} is {}", project.id, project.status);
//! for project in client.projects().iter() {
//!     let project = project?;
//!     println!("{} {} ({:?})", project.id, project.name, project.environment);
//! }
//! client.projects().delete(&project.id)?;
//! # Ok::<(), projects_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `sandbox` crate emulates the service
//! (`cargo run -p projects-client --example projects_quickstart`).
//!
//! # Behaviour
//! - **Pages**: [`Projects::list`] takes a limit of 1 to 100 (the service's default is
//!   20); anything else is refused before a request is sent. [`Projects::iter`] walks
//!   every project 100 at a time and stops at `meta.total`, an empty page or a short one.
//! - **Rate limits**: [`Plan`] sets the client-side token bucket to the plan's documented
//!   rate and burst (`.rate_limit(Plan::Free)`, or `PROJECTS_PLAN=free`). A 429 is
//!   retried after its `Retry-After`.
//! - **Retries**: reads and deletes are retried on connection failures, 408, 429 and
//!   5xx, twice by default. Creating a project is retried only when the server cannot
//!   have acted (no connection made, 429, 503): the service documents no idempotency
//!   key, so a retry never creates a second project.
//! - **Deleting**: 204, or 200 with or without a body, is success. A 404 is
//!   [`ErrorKind::NotFound`], which callers cleaning up can treat as already deleted.
//! - **Errors**: [`Error`] carries the status, the server's code and message and the
//!   request id; [`Error::kind`] sorts them (`ErrorKind::BadRequest`,
//!   `ErrorKind::Unauthorized`, `ErrorKind::NotFound`, `ErrorKind::RateLimited`,
//!   `ErrorKind::Server`, ...). Input refused before sending is
//!   [`Error::InvalidRequest`].
//! - **Tolerance**: unknown fields are ignored; unknown environments and statuses are
//!   kept in `Unknown(String)`; a list without `meta` still decodes.
//! - **Secrets**: the API key is never printed (`Debug` shows `***`), logged or put in a
//!   URL.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/projects.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod client;
mod projects;

pub use client::{Client, Plan};
pub use projects::{
    Environment, ListParams, MAX_PAGE_SIZE, NewProject, Project, ProjectId, ProjectPage,
    ProjectStatus, Projects,
};
pub use time::OffsetDateTime;

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
