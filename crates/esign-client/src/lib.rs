//! A blocking client for the e-signature service: send a document for signature, track
//! it, download the signed PDF safely, and verify webhook events.
//!
//! ```
//! use esign_client::{Client, documents::{DocumentSource, DocumentStatus, NewSigner, SendDocument}};
//!
//! # let (base_url, api_key) = testkit::doc::esign();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env()
//! let pdf = b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n".to_vec(); // or DocumentSource::path("contract.pdf")
//! let document = client.documents().send(
//!     &SendDocument::new(DocumentSource::bytes("contract.pdf", pdf))
//!         .signer(NewSigner::new("Ada Lovelace", "ada@example.com"))
//!         .subject("Please sign the contract"),
//! )?;
//! println!("sent {} ({:?})", document.id, document.status);
//! // ... later, or when the document.completed webhook arrives:
//! let status = client.documents().get(&document.id)?.status;
//! if status == DocumentStatus::Completed {
//!     let path = std::env::temp_dir().join("contract-signed.pdf");
//!     client.documents().download_to_path(&document.id, &path)?;
//! }
//! # Ok::<(), esign_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's sandbox (`service-clients-sandbox`) emulates
//! the service
//! (`cargo run -p esign-client --example esign_quickstart`).
//!
//! # Behaviour
//! - **Writes.** Never sent twice: every send carries an `Idempotency-Key`, the same on each
//!   retry, so a send retried after a dropped connection cannot create a second document.
//!   Give your own key with `SendDocument::idempotency_key` to resend safely after a
//!   restart.
//! - **Retries.** Sends (they always carry a key) and reads are retried on connection
//!   failures, 408, 429 (after `Retry-After`) and 5xx, twice by default. An upload must fit
//!   in the whole-call timeout (60 s by default); a download is bounded per read.
//! - **Checks.** Checked before sending: at least one signer, plausible and distinct
//!   emails, a non-empty file of at most 25 MiB (`SendDocument::max_size` changes it).
//! - **Decoding.** Only the documented fields are required; statuses added later are kept
//!   as `Unknown("...")`, and undocumented fields in `extra`. Numbers decode exactly or
//!   fail (a signer's `order` out of range is an error, never clamped); ids and names sent
//!   as JSON integers keep their digits (up to 64 bits; a larger one is a decode error).
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id; downloading a document that is not completed is `ErrorKind::Conflict`.
//! - **Limits.** `Plan::Business` paces calls under 10,000 an hour; `Plan::Enterprise` is
//!   unlimited.
//! - **Downloads.** Never a broken PDF: `download_to_path` writes to a temporary file in the
//!   same folder, checks the `%PDF-` signature, the `Content-Length` and the closing `%%EOF`,
//!   syncs and renames. On a 409 "not completed yet", a short read or a body that is not a
//!   PDF it returns an error and leaves nothing at the path. Memory stays constant: uploads
//!   are base64-encoded while the request body is written; downloads stream in 256 KiB
//!   chunks (a 1 GiB PDF in about 6 MiB of resident memory: see `docs/benchmarks.md`).
//! - **Webhooks.** `webhooks::verify_and_parse` checks a delivery's signature and timestamp
//!   and returns a typed `Event` (`Sent`, `Viewed`, `Signed`, `Completed`, `Declined`,
//!   `Voided`, `Expired`, or `Unknown` for types added later).
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   An API key, or OAuth 2.0 client credentials (`Client::with_oauth`):
//!   one token request shared by every thread and clone, refreshed before expiry and once
//!   on a 401. `Client::from_env()` reads `ESIGN_BASE_URL` and `ESIGN_API_KEY`, or
//!   `ESIGN_CLIENT_ID`, `ESIGN_CLIENT_SECRET` and `ESIGN_TOKEN_URL` (plus `ESIGN_SCOPE`,
//!   `ESIGN_PLAN`, `ESIGN_MAX_RETRIES`, `ESIGN_TIMEOUT_SECS`, `ESIGN_RATE_BUDGET`).
//! - **Secrets.** The API key, client secret and tokens are never printed (`Debug` shows
//!   `***`), put in a URL or an error, and go only to their own origin.
//! - **Logging.** The client logs through the `log` crate (calls and retry decisions at
//!   debug), never a key. No log of any crate holds one at any level: below the
//!   HTTP layer a credential is a stand-in, swapped for it only at the socket.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/esign.md`.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod client;
pub mod documents;
mod download;
mod encode;
mod models;
mod send;
#[cfg(feature = "webhooks")]
pub mod webhooks;

pub use client::{Client, Plan};

core_http::reexports!();

/// Feature `http`: the `http` crate, whose `HeaderMap` (axum, actix-web and hyper give
/// headers in one) [`webhooks::verify_and_parse`] takes as it is.
#[cfg(feature = "http")]
pub use core_webhooks::http;

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
