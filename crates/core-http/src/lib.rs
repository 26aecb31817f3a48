//! Blocking HTTP plumbing shared by the service clients: transport on `ureq`,
//! authentication, retries that never repeat an action, typed errors, pagination,
//! and client-side rate limiting. Streams (`core-streams`), webhooks (`core-webhooks`) and
//! budgets shared beyond the process (`core-budgets`) are crates of their own on this
//! one, through what `service` and `net` offer crates built on core-http.
//!
//! Service crates wrap an [`HttpClient`] and re-export what their users meet (through
//! [`reexports!`]); users mostly see this crate through [`Error`] and the builder every
//! service client shares.
//!
//! ```
//! use core_http::HttpClient;
//! use serde_json::Value;
//!
//! # let (base_url, api_key) = testkit::doc::social();
//! let client = HttpClient::builder()
//!     .base_url(base_url) // e.g. "https://api.example.com"
//!     .api_key(api_key)
//!     .build()?;
//! let posts: Value = client.get("/v1/posts").query("limit", 10).send_json()?;
//! println!("{posts}");
//! # assert!(posts["data"].is_array());
//! # Ok::<(), core_http::Error>(())
//! ```
//!
//! # The rules every call follows
//! - **Retries**: 2 retries by default, with backoff `min(0.5 s * 2^n, 8 s)` and jitter,
//!   on connection errors, timeouts, 408, 429, 500, 502, 503 and 504. A server's
//!   `retry-after-ms` / `Retry-After` is honoured up to 60 s; a longer wait ends the call
//!   with an [`ApiError`] carrying `retry_after`. A 429 whose code mentions a quota is
//!   not retried.
//! - **No action twice**: a POST is repeated only when the server cannot have acted on
//!   it (no connection, 429, 503 on the original request), or when it carries an
//!   idempotency key the service honours. Once a redirect was followed, the original
//!   request has reached the server: the decision is made for it, not for the last hop.
//!   [`Error::may_have_been_processed`] is `true` when the action may have been carried
//!   out (no answer says what happened, or one says it was done); a refusal (4xx) or a
//!   request that never left is `false`.
//! - **Timeouts**: connect 10 s, whole call 60 s: every attempt, redirect hop, wait,
//!   error body and OAuth token request of a call fits in it.
//! - **HTTPS only**, except to loopback hosts or when explicitly allowed; credentials
//!   (the auth header, any header named like a key, token or secret) go only to the
//!   origin they were configured for, and a body holding credentials never follows a
//!   redirect to another origin.
//! - **Secrets** never appear in `Debug`, `Display`, errors, logs or URLs; a credential
//!   a server echoes back is blanked out of error texts.
//!
//! # Logging
//! Requests, answers, request ids and retry decisions are logged at `debug` through the
//! `log` facade (target `core_http`), headers at `trace`, with credentials shown as `***`.
//! No log of any crate holds a credential at any level: `ureq-proto`, underneath, dumps
//! every byte of a request and its answer at `trace`, but below the HTTP layer a
//! credential is a stand-in of its length, swapped for it only as the bytes reach the
//! socket, and a credential a server echoes (or a token endpoint answers) is hidden as
//! it is read.
//!
//! # Features
//! - `compression`: calls ask for `gzip, br` and decode what comes back as they read it,
//!   every size cap counting decoded bytes ([`ClientBuilder::compression`] turns the
//!   asking off). Every client crate turns it on by default.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod api_error;
mod attempt;
mod auth;
mod backoff;
mod builder;
mod bulk;
mod call;
mod client;
pub mod config;
mod connector;
pub mod de;
mod encoding;
mod envelope;
mod error;
mod error_body;
mod headers;
mod kind;
mod macros;
mod masks;
mod method;
pub mod net;
mod observe;
pub mod pagination;
#[cfg(test)]
mod properties;
mod proxy;
mod random;
mod rate_limit;
mod redact;
mod request;
mod response;
mod retry;
pub mod service;
mod setup;
mod time;
pub mod timestamp;
pub mod transport;
mod url;
pub mod wait;
mod wire;

#[doc(hidden)]
pub mod __private {
    //! What the exported macros expand to; not part of the API.
    pub use crate::url::path_segment;
    pub use serde;

    /// The error for a plan name that is none of `names`: built here, once, rather than
    /// in every crate declaring its plans.
    pub fn unknown_plan(service: &str, wanted: &str, names: &[&str]) -> crate::Error {
        let listed = match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        crate::Error::Config(format!(
            "unknown {service} plan {wanted:?}: expected {listed}"
        ))
    }
    pub use serde_json;
    pub use time;
}

/// The `serde_json` whose `Value` the calls read and write (`send_json`, `.json(..)`):
/// a program needs no dependency of its own for `Value` or `json!`.
pub use serde_json;

pub use bulk::BulkOutcome;
pub use client::HttpClient;
pub use error::{ApiError, CutShort, Delivery, Error, ErrorKind, ItemFailure, Result};
pub use setup::ClientBuilder;

/// Compile-time check that the client can be shared across threads and cloned.
#[allow(dead_code)]
fn _ensure_send_sync_clone() {
    fn client<T: Send + Sync + Clone + 'static>() {}
    fn error<T: Send + Sync + std::error::Error + 'static>() {}
    client::<HttpClient>();
    error::<Error>();
}

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
