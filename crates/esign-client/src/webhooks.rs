//! Webhook events: verify a delivery's signature (Standard Webhooks) and parse it into a
//! typed [`Event`].
//!
//! ```
//! # let (secret, headers, body) = esign_client::webhooks::example_delivery();
//! use esign_client::webhooks::{self, Event};
//! match webhooks::verify_and_parse(&secret, &headers, &body)? {
//!     Event::Completed(document) => println!("{} is signed by everyone", document.id),
//!     other => println!("{}", other.event_type()),
//! }
//! # Ok::<(), esign_client::webhooks::WebhookError>(())
//! ```

pub use core_webhooks::{Envelope, WebhookError, WebhookEvent, WebhookHeaders};

use crate::models::Document;

core_webhooks::webhook_events! {
    /// An event delivered by webhook. Each carries the document as it stands after the
    /// event.
    pub enum Event {
        /// `document.sent`: the document went out to its signers.
        Sent(Document) = "document.sent",
        /// `document.viewed`: a signer opened it.
        Viewed(Document) = "document.viewed",
        /// `document.signed`: a signer signed (see the signers' `signed_at`).
        Signed(Document) = "document.signed",
        /// `document.completed`: everyone signed; the signed PDF can be downloaded.
        Completed(Document) = "document.completed",
        /// `document.declined`: a signer refused.
        Declined(Document) = "document.declined",
        /// `document.voided`: the sender withdrew it.
        Voided(Document) = "document.voided",
        /// `document.expired`: it was not completed in time.
        Expired(Document) = "document.expired",
    }
}

impl Event {
    /// The document, for the known event types.
    ///
    /// ```
    /// # let (secret, headers, body) = esign_client::webhooks::example_delivery();
    /// let event = esign_client::webhooks::verify_and_parse(&secret, &headers, &body)?;
    /// if let Some(document) = event.document() {
    ///     println!("{} is now {}", document.id, document.status);
    /// }
    /// # Ok::<(), esign_client::webhooks::WebhookError>(())
    /// ```
    pub fn document(&self) -> Option<&Document> {
        match self {
            Event::Sent(d)
            | Event::Viewed(d)
            | Event::Signed(d)
            | Event::Completed(d)
            | Event::Declined(d)
            | Event::Voided(d)
            | Event::Expired(d) => Some(d),
            Event::Unknown { .. } => None,
        }
    }
}

/// A signed example delivery, for documentation examples.
#[doc(hidden)]
pub fn example_delivery() -> (String, Vec<(String, String)>, Vec<u8>) {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
    let body = br#"{"type":"document.completed","timestamp":"2026-01-01T09:00:00Z","data":{"id":"doc_1","name":"NDA","status":"completed","signers":[{"name":"Ada","email":"ada@example.com","status":"signed","signed_at":"2026-01-01T09:00:00Z"}]}}"#.to_vec();
    let headers = core_webhooks::signed_headers(&secret, "msg_1", &body).unwrap_or_default();
    (secret, headers, body)
}
