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

pub use core_webhooks::{Envelope, WebhookError, WebhookEvent, WebhookHeaders};

use crate::models::Account;
use crate::models::AnalyticsOverview;
use crate::models::Post;

core_webhooks::webhook_events! {
    /// An event delivered by webhook.
    pub enum Event {
        /// `post.published`: a post went live.
        PostPublished(Post) = "post.published",
        /// `post.scheduled`: a post was scheduled.
        PostScheduled(Post) = "post.scheduled",
        /// `analytics.updated`: the daily analytics refresh happened.
        AnalyticsUpdated(AnalyticsOverview) = "analytics.updated",
        /// `account.disconnected`: an account was unlinked.
        AccountDisconnected(Account) = "account.disconnected",
    }
}

/// A signed example delivery, for documentation examples.
#[doc(hidden)]
pub fn example_delivery() -> (String, Vec<(String, String)>, Vec<u8>) {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
    let body = br#"{"type":"post.published","timestamp":"2026-01-01T09:00:00Z","data":{"id":"post_1","content":"hi","platform":"x","status":"published"}}"#.to_vec();
    let headers = core_webhooks::signed_headers(&secret, "msg_1", &body).unwrap_or_default();
    (secret, headers, body)
}
