//! Webhook receivers and deliveries: every event is signed with the Standard Webhooks
//! scheme and posted to each receiver by a background worker thread, which retries with
//! exponential backoff when a receiver fails or cannot be reached.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Weak;
use std::sync::mpsc::{Receiver as Inbox, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::state::Shared;

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

/// Starts the delivery worker; it ends on `Shutdown` or when every sender is gone.
pub(crate) fn spawn_worker(inbox: Inbox<WorkerMsg>, shared: Weak<Shared>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("sandbox-webhooks".into())
        .spawn(move || run_worker(inbox, shared))?;
    Ok(())
}

struct Due(Instant, u64, Job);
impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.0, self.1) == (other.0, other.1)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(other.0, other.1))
    }
}

fn run_worker(inbox: Inbox<WorkerMsg>, shared: Weak<Shared>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .max_redirects(0)
        .user_agent("sandbox-webhooks/0.1")
        .build()
        .into();
    let mut queue: BinaryHeap<Reverse<Due>> = BinaryHeap::new();
    let mut order = 0u64;
    loop {
        let wait = queue
            .peek()
            .map(|Reverse(Due(at, _, _))| at.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600));
        match inbox.recv_timeout(wait) {
            Ok(WorkerMsg::Deliver(job)) => {
                order += 1;
                queue.push(Reverse(Due(Instant::now(), order, job)));
            }
            Ok(WorkerMsg::Shutdown) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        while queue
            .peek()
            .is_some_and(|Reverse(Due(at, _, _))| *at <= Instant::now())
        {
            let Some(Reverse(Due(_, _, mut job))) = queue.pop() else {
                break;
            };
            let Some(shared) = shared.upgrade() else {
                return;
            };
            job.attempt += 1;
            let (status, error) = attempt(&agent, &job);
            let delivered = status.is_some_and(|s| (200..300).contains(&s));
            let retry = !delivered && job.attempt < MAX_ATTEMPTS;
            let current = shared.record_attempt(&job, status, error, delivered, retry);
            if retry && current {
                order += 1;
                queue.push(Reverse(Due(
                    Instant::now() + backoff(job.attempt),
                    order,
                    job,
                )));
            }
        }
    }
}

fn attempt(agent: &ureq::Agent, job: &Job) -> (Option<u16>, Option<String>) {
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let signature =
        match crate::signing::sign(&job.secret, &job.message_id, timestamp, job.body.as_bytes()) {
            Ok(signature) => signature,
            Err(e) => return (None, Some(format!("cannot sign: {e}"))),
        };
    let result = agent
        .post(&job.url)
        .header("content-type", "application/json")
        .header("webhook-id", &job.message_id)
        .header("webhook-timestamp", &timestamp.to_string())
        .header("webhook-signature", &signature)
        .send(job.body.as_bytes());
    match result {
        Ok(response) => (Some(response.status().as_u16()), None),
        Err(e) => (None, Some(e.to_string())),
    }
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
