//! A blocking client for the e-signature service: send a document for signature, track
//! it, download the signed PDF safely, and verify webhook events.
//!
//! ```no_run
//! use esign_client::{Client, DocumentSource, DocumentStatus, NewSigner, SendDocument};
//!
//! let client = Client::new("https://api.example.com/v1", "sk_live_...")?;
//! let document = client.documents().send(
//!     &SendDocument::new(DocumentSource::path("contract.pdf"))
//!         .signer(NewSigner::new("Ada Lovelace", "ada@example.com"))
//!         .subject("Please sign the contract"),
//! )?;
//! // ... later, or when the document.completed webhook arrives:
//! if client.documents().get(&document.id)?.status == DocumentStatus::Completed {
//!     client.documents().download_to_path(&document.id, "contract-signed.pdf")?;
//! }
//! # Ok::<(), esign_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `sandbox` crate emulates the service
//! (`cargo run -p esign-client --example esign_quickstart`).
//!
//! # Behaviour
//! - **Never twice**: every send carries an `Idempotency-Key`, the same on each retry,
//!   so a send retried after a dropped connection or a 5xx cannot create a second
//!   document. Pass your own key with [`SendDocument::idempotency_key`] to resend safely
//!   after a restart.
//! - **Never a broken PDF**: [`Documents::download_to_path`] writes to a temporary file
//!   in the same folder, checks the `%PDF-` signature, the `Content-Length` and the
//!   closing `%%EOF`, syncs the file and renames it into place. On any error (a 409 "not
//!   completed yet", a short read, a body that is not a PDF) nothing is left at the path.
//! - **Memory**: uploads are base64-encoded while the request is written and downloads
//!   are streamed in 64 KiB chunks; neither holds the document in memory.
//! - **Timeouts**: a send must finish within the call's timeout (60 s by default; raise
//!   it with [`Client::with_options`] for large files on slow links); a download has no
//!   overall limit, but each read must make progress within the timeout.
//! - **Authentication**: an API key (Bearer) or OAuth 2.0 client credentials
//!   ([`Client::with_oauth`]); the token is fetched once, shared by all threads and
//!   clones, refreshed before expiry and once on a 401.
//! - **Checks before sending**: at least one signer, plausible and distinct emails, a
//!   non-empty file of at most 25 MiB ([`SendDocument::max_size`]), an absolute http(s)
//!   URL.
//! - **Rate limits**: [`Plan::Business`] paces the client at 10,000 requests an hour.
//! - **Secrets**: the API key, client secret and tokens are never printed (`Debug`
//!   shows `***`), logged or put in a URL.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/esign.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod client;
mod documents;
mod download;
mod encode;
mod models;
mod send;
#[cfg(feature = "webhooks")]
pub mod webhooks;

pub use client::{Client, Plan};
pub use documents::Documents;
pub use download::{Download, DownloadRequest};
pub use models::{Document, DocumentId, DocumentStatus, Signer, SignerStatus};
pub use send::{DEFAULT_MAX_DOCUMENT_SIZE, DocumentSource, NewSigner, SendDocument};
pub use time::OffsetDateTime;

core_http::reexports!();
/// Feature `http`: the `http` crate, whose `HeaderMap` (axum, actix-web and hyper give
/// headers in one) [`webhooks::verify_and_parse`] takes as it is.
#[cfg(feature = "http")]
pub use core_http::http;

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
