//! A blocking client for the social publishing service: create and schedule posts on
//! several platforms, list them, read engagement analytics, manage connected accounts,
//! and verify webhook events.
//!
//! ```
//! use social_client::{Client, posts::{NewPost, Platform}};
//!
//! # let (base_url, api_key) = testkit::doc::social();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env()
//! let posts = client.posts().create(&NewPost::new("Hello!", [Platform::X, Platform::LinkedIn]))?;
//! println!("one post per platform: {}", posts.len());
//! for post in client.posts().iter() {
//!     let post = post?;
//!     println!("{} {:?} {}", post.id, post.platform, post.status);
//! }
//! let stats = client.analytics().overview()?;
//! if let (Some(shown), Some(rate)) = (stats.impressions, stats.engagement_rate) {
//!     println!("{shown} impressions, {:.1}% engagement", rate * 100.0);
//! }
//! # assert_eq!(posts.len(), 2);
//! # Ok::<(), social_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `service-clients-sandbox` emulates the service
//! (`cargo run -p social-client --example social_quickstart`).
//!
//! # Behaviour
//! - **Writes.** A post is never created twice by a retry. The service documents no
//!   idempotency key, so `create` is retried only when the server cannot have acted (no
//!   connection made, 429, 503). After a dropped connection or a 500 the error says
//!   `may_have_been_processed() == true`: list the posts before trying again.
//! - **Retries.** Reads are retried on connection failures, 408, 429 (after `Retry-After`)
//!   and 5xx, twice by default, within the call's 60 s timeout.
//! - **Checks.** Checked before sending: non-empty content, at least one platform, a page
//!   size of 1 to 100.
//! - **Decoding.** Unknown fields are ignored; unknown platforms, statuses and periods are
//!   kept as `Unknown("...")`; accounts keep undocumented fields in `extra`. Timestamps are
//!   `time::OffsetDateTime`, sent in UTC with a `Z`. Counts decode exactly or fail: a
//!   follower count that is negative, fractional or beyond its type is a decode error,
//!   never clamped; a figure the answer does not carry is `None`, never zero; a negative
//!   `meta.total` is an error, not a total. Ids sent as JSON integers keep their digits (up to 64 bits; a larger one is a decode error).
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id; `error.kind()` sorts them (`BadRequest`, `NotFound`, `RateLimited`, ...).
//!   Disconnecting an account that is not connected is `ErrorKind::NotFound`.
//! - **Limits.** `Plan::{Starter, Pro, Enterprise}` sets the client-side limiter to the
//!   documented 100/1,000/10,000 requests per minute.
//! - **Webhooks.** `webhooks::verify_and_parse` checks a delivery's signature and timestamp
//!   and returns a typed `Event` (the `webhooks` feature, on by default).
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   `Client::from_env()` reads `SOCIAL_BASE_URL` and `SOCIAL_API_KEY`
//!   (plus `SOCIAL_PLAN`, `SOCIAL_MAX_RETRIES`, `SOCIAL_TIMEOUT_SECS`, `SOCIAL_RATE_BUDGET`).
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin.
//! - **Logging.** The client logs through the `log` crate (calls and retry decisions at
//!   debug), never a key. No log of any crate holds one at any level: below the
//!   HTTP layer a credential is a stand-in, swapped for it only at the socket.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/social.md`.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod accounts;
pub mod analytics;
mod client;
mod models;
pub mod posts;
pub mod schedule;
#[cfg(feature = "webhooks")]
pub mod webhooks;

pub use client::{Client, Plan};

core_http::reexports!();

/// Feature `http`: the `http` crate, whose `HeaderMap` (axum, actix-web and hyper give
/// headers in one) [`webhooks::verify_and_parse`] takes as it is.
#[cfg(feature = "http")]
pub use core_webhooks::http;

/// The workspace README's examples, compiled as doc tests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
