//! Webhook receivers, the events logged and their deliveries' records: what the
//! delivery worker (`delivery`) posts and what the control endpoints show.

use std::sync::mpsc::Sender;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How many times a delivery is attempted before it is marked failed.
pub const MAX_ATTEMPTS: u32 = 6;

/// A registered receiver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookReceiver {
    /// The receiver's id (`wh_...`).
    pub id: String,
    /// Where deliveries are posted.
    pub url: String,
    /// The signing secret (`whsec_<base64>`).
    pub secret: String,
    /// The event types delivered to it; empty means every event.
    #[serde(default)]
    pub events: Vec<String>,
}

impl WebhookReceiver {
    pub(crate) fn wants(&self, event_type: &str) -> bool {
        self.events.is_empty() || self.events.iter().any(|e| e == event_type)
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not yet accepted by the receiver; more attempts will be made.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Every attempt failed.
    Failed,
}

/// One event on its way to one receiver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// The receiver's id.
    pub receiver_id: String,
    /// The event's `webhook-id` (the same on every attempt).
    pub message_id: String,
    /// The event type.
    pub event_type: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// The status of the last answer, if there was one.
    pub last_status: Option<u16>,
    /// Why the last attempt failed without an answer.
    pub last_error: Option<String>,
}

/// An event emitted by a service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The message id used as `webhook-id`.
    pub id: String,
    /// The event type, e.g. `post.published`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The sandbox time of the event (RFC 3339).
    pub timestamp: String,
    /// The payload.
    pub data: serde_json::Value,
}

impl EventRecord {
    /// The body that is posted: `{"type", "timestamp", "data"}`.
    pub(crate) fn body(&self) -> String {
        serde_json::json!({
            "type": self.event_type,
            "timestamp": self.timestamp,
            "data": self.data,
        })
        .to_string()
    }
}

pub(crate) struct Job {
    pub delivery: usize,
    pub generation: u64,
    pub url: String,
    pub secret: String,
    pub message_id: String,
    pub body: String,
    pub attempt: u32,
}

pub(crate) enum WorkerMsg {
    Deliver(Job),
    Shutdown,
}

/// Backoff before attempt `n + 1`: 250 ms, 500 ms, 1 s, 2 s, 4 s.
pub(crate) fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250u64 << attempt.saturating_sub(1).min(8))
}

/// A fresh `whsec_` secret derived from the sandbox's seeded generator.
pub(crate) fn make_secret(seed: u64) -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 24];
    let mut x = seed;
    for chunk in bytes.chunks_mut(8) {
        x = crate::ids::splitmix(x);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

pub(crate) type WorkerSender = Sender<WorkerMsg>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_250ms() {
        let delays: Vec<u128> = (1..MAX_ATTEMPTS).map(|a| backoff(a).as_millis()).collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000]);
    }

    #[test]
    fn secrets_are_valid_standard_webhooks_secrets() {
        let secret = make_secret(42);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(secret, make_secret(42));
        assert!(crate::signing::sign(&secret, "msg_1", 1, b"{}").is_ok());
    }
}
