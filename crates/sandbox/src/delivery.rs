//! The webhook delivery worker: a background thread that signs each queued event with
//! the Standard Webhooks scheme and posts it to its receiver, retrying with exponential
//! backoff when the receiver fails or cannot be reached.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Weak;
use std::sync::mpsc::{Receiver as Inbox, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::state::Shared;
use crate::webhooks::{Job, MAX_ATTEMPTS, WorkerMsg, backoff};

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
