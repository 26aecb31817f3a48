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

use std::time::SystemTime;

use core_http::webhook::{Envelope, verify_envelope_at};
pub use core_http::webhook::{WebhookError, WebhookHeaders};

use crate::documents::Document;

/// An event delivered by webhook. Each carries the document as it stands after the
/// event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// `document.sent`: the document went out to its signers.
    Sent(Document),
    /// `document.viewed`: a signer opened it.
    Viewed(Document),
    /// `document.signed`: a signer signed (see the signers' `signed_at`).
    Signed(Document),
    /// `document.completed`: everyone signed; the signed PDF can be downloaded.
    Completed(Document),
    /// `document.declined`: a signer refused.
    Declined(Document),
    /// `document.voided`: the sender withdrew it.
    Voided(Document),
    /// `document.expired`: it was not completed in time.
    Expired(Document),
    /// An event type this version does not know, kept whole.
    Unknown {
        /// The event type as sent.
        event_type: String,
        /// The event's data as sent.
        data: serde_json::Value,
    },
}

impl Event {
    /// The event type on the wire (`document.signed`, ...).
    pub fn event_type(&self) -> &str {
        match self {
            Event::Sent(_) => "document.sent",
            Event::Viewed(_) => "document.viewed",
            Event::Signed(_) => "document.signed",
            Event::Completed(_) => "document.completed",
            Event::Declined(_) => "document.declined",
            Event::Voided(_) => "document.voided",
            Event::Expired(_) => "document.expired",
            Event::Unknown { event_type, .. } => event_type,
        }
    }

    /// The document, for the known event types.
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

    /// Types a verified envelope. A known type whose data does not decode is an error,
    /// not `Unknown`, so a changed payload is noticed.
    pub fn from_envelope(envelope: Envelope) -> Result<Event, WebhookError> {
        let Envelope {
            event_type, data, ..
        } = envelope;
        let kind: fn(Document) -> Event = match event_type.to_ascii_lowercase().as_str() {
            "document.sent" => Event::Sent,
            "document.viewed" => Event::Viewed,
            "document.signed" => Event::Signed,
            "document.completed" => Event::Completed,
            "document.declined" => Event::Declined,
            "document.voided" => Event::Voided,
            "document.expired" => Event::Expired,
            _ => return Ok(Event::Unknown { event_type, data }),
        };
        Ok(kind(serde_json::from_value(data)?))
    }
}

/// Verifies a delivery's signature and timestamp (5 minutes' tolerance) with the
/// endpoint's `whsec_...` secret, then parses the event. Pass the raw body bytes, exactly
/// as received.
pub fn verify_and_parse<H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
) -> Result<Event, WebhookError> {
    verify_and_parse_at(secret, headers, body, SystemTime::now())
}

/// As [`verify_and_parse`], judging the timestamp against `now` (for replaying stored
/// deliveries in tests).
pub fn verify_and_parse_at<H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Result<Event, WebhookError> {
    Event::from_envelope(verify_envelope_at(secret, headers, body, now)?)
}

/// A signed example delivery, for documentation examples.
#[doc(hidden)]
pub fn example_delivery() -> (String, Vec<(String, String)>, Vec<u8>) {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
    let body = br#"{"type":"document.completed","timestamp":"2026-01-01T09:00:00Z","data":{"id":"doc_1","name":"NDA","status":"completed","signers":[{"name":"Ada","email":"ada@example.com","status":"signed","signed_at":"2026-01-01T09:00:00Z"}]}}"#.to_vec();
    let headers = core_http::webhook::signed_headers(&secret, "msg_1", &body).unwrap_or_default();
    (secret, headers, body)
}
