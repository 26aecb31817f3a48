//! Webhook events: verify a delivery's signature (Standard Webhooks) and parse it into a
//! typed [`Event`].
//!
//! ```
//! # let (secret, headers, body) = social_client::webhooks::example_delivery();
//! use social_client::webhooks::{self, Event};
//! match webhooks::verify_and_parse(&secret, &headers, &body)? {
//!     Event::PostPublished(post) => println!("{} is live", post.id),
//!     other => println!("{other:?}"),
//! }
//! # Ok::<(), social_client::webhooks::WebhookError>(())
//! ```

use std::time::SystemTime;

use core_http::webhook::{Envelope, verify_envelope_at};
pub use core_http::webhook::{WebhookError, WebhookHeaders};

use crate::accounts::Account;
use crate::analytics::AnalyticsOverview;
use crate::posts::Post;

/// An event delivered by webhook.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// `post.published`: a post went live.
    PostPublished(Post),
    /// `post.scheduled`: a post was scheduled.
    PostScheduled(Post),
    /// `analytics.updated`: the daily analytics refresh happened.
    AnalyticsUpdated(AnalyticsOverview),
    /// `account.disconnected`: an account was unlinked.
    AccountDisconnected(Account),
    /// An event type this version does not know, kept whole.
    Unknown {
        /// The event type as sent.
        event_type: String,
        /// The event's data as sent.
        data: serde_json::Value,
    },
}

impl Event {
    /// The event type on the wire (`post.published`, ...).
    pub fn event_type(&self) -> &str {
        match self {
            Event::PostPublished(_) => "post.published",
            Event::PostScheduled(_) => "post.scheduled",
            Event::AnalyticsUpdated(_) => "analytics.updated",
            Event::AccountDisconnected(_) => "account.disconnected",
            Event::Unknown { event_type, .. } => event_type,
        }
    }

    /// Types a verified envelope. A known type whose data does not decode is an error,
    /// not `Unknown`, so a changed payload is noticed.
    pub fn from_envelope(envelope: Envelope) -> Result<Event, WebhookError> {
        let Envelope {
            event_type, data, ..
        } = envelope;
        let event = match event_type.to_ascii_lowercase().as_str() {
            "post.published" => Event::PostPublished(serde_json::from_value(data)?),
            "post.scheduled" => Event::PostScheduled(serde_json::from_value(data)?),
            "analytics.updated" => Event::AnalyticsUpdated(serde_json::from_value(data)?),
            "account.disconnected" => Event::AccountDisconnected(serde_json::from_value(data)?),
            _ => Event::Unknown { event_type, data },
        };
        Ok(event)
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
    let body = br#"{"type":"post.published","timestamp":"2026-01-01T09:00:00Z","data":{"id":"post_1","content":"hi","platform":"x","status":"published"}}"#.to_vec();
    let headers = core_http::webhook::signed_headers(&secret, "msg_1", &body).unwrap_or_default();
    (secret, headers, body)
}
