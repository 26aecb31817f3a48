//! A blocking client for the developer project service: list projects a page at a time
//! or lazily all of them, create them, delete them.
//!
//! ```
//! use projects_client::{Client, projects::{Environment, NewProject}};
//!
//! # let (base_url, api_key) = testkit::doc::projects();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env()
//! let project = client
//!     .projects()
//!     .create(&NewProject::new("billing").environment(Environment::Staging))?;
//! println!("{} is {}", project.id, project.status);
//! let mut seen = 0;
//! for listed in client.projects().iter() {
//!     let listed = listed?;
//!     println!("{} {} ({:?})", listed.id, listed.name, listed.environment);
//!     seen += usize::from(listed.id == project.id);
//! }
//! client.projects().delete(&project.id)?;
//! # assert_eq!(seen, 1);
//! # Ok::<(), projects_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `service-clients-sandbox` emulates the service
//! (`cargo run -p projects-client --example projects_quickstart`).
//!
//! # Behaviour
//! - **Writes.** `create` is never retried once the server may have acted on it, so it never
//!   creates two projects; after a dropped connection the error says
//!   `may_have_been_processed() == true`.
//! - **Retries.** `list`, `iter` and `delete` are retried on connection failures, 408, 429
//!   (after `Retry-After`) and 5xx, twice by default.
//! - **Checks.** Checked before sending: a name that is not blank, a page size of 1 to 100.
//! - **Decoding.** Only the id is required; unknown environments and statuses are kept as
//!   `Unknown("...")`. `list(&ListProjects::new().limit(50).offset(100))` returns one page
//!   with `meta`; `iter()` walks everything, 100 at a time. Counts decode exactly or fail:
//!   a negative, fractional or out-of-range `meta.total` is a decode error, never a total
//!   to stop at. Ids sent as JSON integers keep their digits (up to 64 bits; a larger one is a decode error).
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id. `delete(id)`: 204 or 200 is success; a 404 is `ErrorKind::NotFound`.
//! - **Limits.** `Plan::{Free, Pro, Enterprise}` paces calls under the documented 100/min
//!   (bursts of 150), 1,000/min (1,500) or no limit, so a script meets no 429.
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   `Client::from_env()` reads `PROJECTS_API_KEY`, `PROJECTS_BASE_URL`
//!   and optionally `PROJECTS_PLAN` (`free`, `pro`, `enterprise`), `PROJECTS_MAX_RETRIES`,
//!   `PROJECTS_TIMEOUT_SECS`, `PROJECTS_RATE_BUDGET`.
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin.
//! - **Logging.** The client logs through the `log` crate (calls and retry decisions at
//!   debug), never a key. No log of any crate holds one at any level: below the
//!   HTTP layer a credential is a stand-in, swapped for it only at the socket.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/projects.md`.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod client;
pub mod projects;

pub use client::{Client, Plan};

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
