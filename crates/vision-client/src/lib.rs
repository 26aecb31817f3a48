//! A blocking client for the vision service: object detection, image classification,
//! text extraction (OCR), face analysis, and the service's status with the account's
//! usage.
//!
//! ```
//! use vision_client::{Client, analyses::DetectRequest};
//!
//! # let (base_url, api_key) = testkit::doc::vision();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env()
//! let found = client
//!     .analyses()
//!     .detect(&DetectRequest::new("https://example.com/street.jpg").confidence_threshold(0.7))?;
//! for object in &found.objects {
//!     let [x1, y1, x2, y2] = object.bbox.xyxy();
//!     println!("{} {:.0}% at ({x1},{y1})-({x2},{y2})", object.label, object.confidence * 100.0);
//! }
//! let usage = client.status().get()?.usage;
//! println!("{}/{} calls used in {}", usage.calls_used, usage.calls_limit, usage.period);
//! # assert!(found.objects.iter().all(|o| o.confidence >= 0.7));
//! # assert!(usage.calls_used >= 1);
//! # Ok::<(), vision_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `service-clients-sandbox` emulates the service
//! (`cargo run -p vision-client --example vision_quickstart`).
//!
//! # Behaviour
//! - **Writes.** None: an analysis only reads the image, so nothing can happen twice
//!   (a retried call may count twice against the monthly quota).
//! - **Retries.** Analyses and `status` are retried on connection failures, 408, 429 (after
//!   `Retry-After`) and 5xx, twice by default.
//! - **Checks.** Checked before sending: an absolute http(s) `image_url`, a threshold in
//!   0..=1, `max_objects` and `top_n` of at least 1. Requests carry the document's
//!   defaults explicitly: `confidence_threshold` 0.5, `max_objects` 100, `top_n` 5,
//!   `taxonomy` `imagenet`, `output_format` `text`.
//! - **Decoding.** `BBox` keeps the four numbers read as `[x, y, width, height]` (floats
//!   rounded to whole pixels), with `xywh()` and `xyxy()`; unknown emotions, genders and
//!   statuses are kept as `Unknown("...")`. Counts decode exactly or fail: a count that
//!   is the answer (`calls_used`, `calls_limit`) and is negative, fractional or out of range
//!   is a decode error, never clamped. A figure that only describes the answer
//!   (`processing_time_ms`, `latency_ms`) and is out of range reads as `None`, and the
//!   answer is kept. A match's similarity the answer does not carry is `None`, never 0.
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id. The quota-exhausted 429 is `ErrorKind::QuotaExceeded` and is never retried.
//! - **Limits.** `client.status().get()?.usage` shows `calls_used`, `calls_limit` and the
//!   `period` (a parsed `YYYY-MM`). No rate limit is documented, so the crate has no `Plan`.
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   `Client::from_env()` reads `VISION_API_KEY` and `VISION_BASE_URL`
//!   (plus `VISION_MAX_RETRIES`, `VISION_TIMEOUT_SECS`, `VISION_RATE_BUDGET`).
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin.
//! - **Logging.** The client logs through the `log` crate (calls and retry decisions at
//!   debug), never a key. No log of any crate holds one at any level: below the
//!   HTTP layer a credential is a stand-in, swapped for it only at the socket.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/vision.md`.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod analyses;
mod bbox;
mod client;
pub mod status;

pub use client::Client;

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
