//! Why a webhook delivery was rejected: [`WebhookError`], with the kind of each failure.

use std::time::Duration;

/// Why a webhook delivery was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// A required header is missing.
    #[error("missing webhook header {0}")]
    MissingHeader(&'static str),
    /// A header is present but malformed.
    #[error("invalid webhook header {name}: {reason}")]
    InvalidHeader {
        /// The header.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The signing secret is not `whsec_<base64>` (or plain base64).
    #[error("invalid webhook secret: {0}")]
    InvalidSecret(String),
    /// The timestamp is more than 5 minutes in the past (a possible replay).
    #[error("webhook timestamp is too old ({age:?} ago)")]
    TimestampTooOld {
        /// How old it is.
        age: Duration,
    },
    /// The timestamp is more than 5 minutes in the future.
    #[error("webhook timestamp is too far in the future ({ahead:?} ahead)")]
    TimestampTooNew {
        /// How far ahead it is.
        ahead: Duration,
    },
    /// No signature matched: the body or headers were altered, or the secret is wrong.
    #[error("no webhook signature matched")]
    SignatureMismatch,
    /// The signature matched but the body is not a valid event envelope.
    #[error("invalid webhook payload: {0}")]
    InvalidPayload(#[from] serde_json::Error),
}

impl WebhookError {
    /// What kind of failure this is: [`ErrorKind::Webhook`](core_http::ErrorKind::Webhook)
    /// for a delivery that failed verification, [`ErrorKind::Config`](core_http::ErrorKind::Config)
    /// for an unusable secret, [`ErrorKind::Decode`](core_http::ErrorKind::Decode) for a
    /// signed body that is not an event.
    pub fn kind(&self) -> core_http::ErrorKind {
        core_http::service::Failure::kind(self)
    }
}

/// A delivery's failure travels in a client's `Error` (`?` in a function returning one),
/// with its kind: [`Error::downcast_ref`](core_http::Error::downcast_ref) gets it back.
impl From<WebhookError> for core_http::Error {
    fn from(e: WebhookError) -> Self {
        core_http::Error::Other(Box::new(e))
    }
}

impl core_http::service::Failure for WebhookError {
    fn kind(&self) -> core_http::ErrorKind {
        match self {
            WebhookError::InvalidSecret(_) => core_http::ErrorKind::Config,
            WebhookError::InvalidPayload(_) => core_http::ErrorKind::Decode,
            _ => core_http::ErrorKind::Webhook,
        }
    }
}
