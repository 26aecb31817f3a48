//! A blocking client for the vision service: object detection, image classification,
//! text extraction (OCR), face analysis, and the service's status with the account's
//! usage.
//!
//! ```no_run
//! use vision_client::{Client, DetectRequest};
//!
//! let client = Client::new("https://api.example.com", "sk_live_...")?;
//! let found = client
//!     .detect(&DetectRequest::new("https://example.com/street.jpg").confidence_threshold(0.7))?;
//! for object in &found.objects {
//!     let [x1, y1, x2, y2] = object.bbox.xyxy();
//!     println!("{} {:.0}% at ({x1},{y1})-({x2},{y2})", object.label, object.confidence * 100.0);
//! }
//! let usage = client.status()?.usage;
//! println!("{}/{} calls used in {}", usage.calls_used, usage.calls_limit, usage.period);
//! # Ok::<(), vision_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `sandbox` crate emulates the service
//! (`cargo run -p vision-client --example vision_quickstart`).
//!
//! # Behaviour
//! - **Defaults** are the document's and are always sent, so a request says exactly what
//!   it asks for: `confidence_threshold` 0.5, `max_objects` 100, `top_n` 5, `taxonomy`
//!   `imagenet`, `output_format` `text`.
//! - **Checks before sending**: `image_url` must be an absolute http(s) URL,
//!   `confidence_threshold` within 0..=1, `max_objects` and `top_n` at least 1.
//! - **Quota**: when the account's calls for the period are used up the service answers
//!   429 `quota_exceeded`; that is [`ErrorKind::QuotaExceeded`] and is never retried
//!   (waiting seconds would not help). Other 429s are retried after `Retry-After`.
//! - **Retries**: the analyses only read, so they are retried on connection failures,
//!   408, 429 and 5xx, twice by default (a retried call may count twice against the
//!   quota, as on any service that counts calls).
//! - **Boxes**: [`BBox`] keeps the four numbers read as `[x, y, width, height]` in
//!   pixels (integers as sent, floats rounded to whole pixels), with [`BBox::xywh`] and
//!   [`BBox::xyxy`].
//! - **Tolerance**: unknown fields are ignored; unknown emotions, genders and statuses
//!   are kept in `Unknown(String)`; face attributes, gender and collection matches are
//!   optional.
//! - **Secrets**: the API key is never printed (`Debug` shows `***`), logged or put in a
//!   URL.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/vision.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod analyses;
mod bbox;
mod client;
mod status;

pub use analyses::{
    Classification, ClassifyRequest, DEFAULT_CONFIDENCE_THRESHOLD, DEFAULT_MAX_OBJECTS,
    DEFAULT_TAXONOMY, DEFAULT_TOP_N, DetectRequest, DetectedObject, Detection, Emotion, Face,
    FaceAttributes, FaceMatch, Faces, FacesRequest, Gender, OcrRequest, OcrResult, OutputFormat,
    Prediction, TextBlock,
};
pub use bbox::BBox;
pub use client::Client;
pub use status::{ServiceStatus, Status, Usage, UsagePeriod};

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
