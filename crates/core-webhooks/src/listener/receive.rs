//! What the listener does with a request that arrived whole: verified, handed over
//! once, counted.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::SystemTime;

use super::head::Status;
use super::{QUEUE, REMEMBERED};
use crate::{Envelope, WebhookError, WebhookEvent, verify};

/// What a listener has done so far ([`Listener::stats`](super::Listener::stats)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ListenerStats {
    /// Deliveries verified and handed over (answered `200`).
    pub delivered: u64,
    /// Deliveries received again and dropped (answered `200`).
    pub redelivered: u64,
    /// Deliveries refused because no signature matched or the timestamp was outside the
    /// tolerance (answered `401`): many of these and no `delivered` means the secret is
    /// not the endpoint's.
    pub refused_signature: u64,
    /// Requests refused for what they are (not a delivery, a malformed head, missing
    /// webhook headers, a body over the limit: answered `4xx`).
    pub refused_request: u64,
    /// Deliveries turned away because the queue was full (answered `503`).
    pub busy: u64,
    /// Connections closed before their request arrived whole (too slow, or closed to
    /// make room for another).
    pub dropped: u64,
}

/// The counters, shared with the listener's thread.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) delivered: AtomicU64,
    pub(super) redelivered: AtomicU64,
    pub(super) refused_signature: AtomicU64,
    pub(super) refused_request: AtomicU64,
    pub(super) busy: AtomicU64,
    pub(super) dropped: AtomicU64,
}

impl Counters {
    pub(super) fn add(counter: &AtomicU64) -> u64 {
        counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn read(&self) -> ListenerStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ListenerStats {
            delivered: get(&self.delivered),
            redelivered: get(&self.redelivered),
            refused_signature: get(&self.refused_signature),
            refused_request: get(&self.refused_request),
            busy: get(&self.busy),
            dropped: get(&self.dropped),
        }
    }
}

/// The ids of deliveries received, the oldest forgotten first.
#[derive(Default)]
pub(super) struct Remembered {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Remembered {
    fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    fn insert(&mut self, id: &str) {
        if self.ids.insert(id.to_owned()) {
            self.order.push_back(id.to_owned());
            if self.order.len() > REMEMBERED
                && let Some(oldest) = self.order.pop_front()
            {
                self.ids.remove(&oldest);
            }
        }
    }
}

/// Verifies deliveries and hands them over.
pub(super) struct Receiving<E> {
    pub(super) secret: String,
    pub(super) max_body: usize,
    pub(super) seen: Remembered,
    pub(super) events: SyncSender<Result<E, WebhookError>>,
    pub(super) counters: Arc<Counters>,
}

impl<E: WebhookEvent> Receiving<E> {
    /// Receives deliveries signed with `secret`, bodies up to `max_body`, handing them
    /// over to `events`.
    pub(super) fn new(
        secret: &str,
        max_body: usize,
        events: SyncSender<Result<E, WebhookError>>,
        counters: Arc<Counters>,
    ) -> Self {
        Receiving {
            secret: secret.to_owned(),
            max_body,
            seen: Remembered::default(),
            events,
            counters,
        }
    }

    /// Verifies a delivery and hands it over: the status to answer.
    pub(super) fn take(&mut self, headers: &[(String, String)], body: &[u8]) -> Status {
        if let Err(e) = verify(&self.secret, headers, body, SystemTime::now()) {
            return self.refused(&e);
        }
        let id = crate::WebhookHeaders::header(headers, "webhook-id").unwrap_or_default();
        if self.seen.contains(id) {
            log::debug!("webhook listener: delivery {id} received again; dropped");
            Counters::add(&self.counters.redelivered);
            return Status(200, None);
        }
        let event = serde_json::from_slice::<Envelope>(body)
            .map_err(WebhookError::from)
            .and_then(E::from_envelope);
        match self.events.try_send(event) {
            Ok(()) => {
                self.seen.insert(id);
                Counters::add(&self.counters.delivered);
                Status(200, None)
            }
            Err(TrySendError::Full(_)) => {
                log::warn!(
                    "webhook listener: {QUEUE} deliveries wait to be read; asked the service to come back"
                );
                Counters::add(&self.counters.busy);
                Status(503, Some(5))
            }
            Err(TrySendError::Disconnected(_)) => Status(503, Some(5)),
        }
    }

    /// A delivery that failed verification: counted, and a signature that never matches
    /// said out loud.
    fn refused(&self, e: &WebhookError) -> Status {
        match e {
            WebhookError::MissingHeader(_) | WebhookError::InvalidHeader { .. } => {
                log::info!("webhook listener: a request failed verification: {e}");
                Counters::add(&self.counters.refused_request);
                Status(400, None)
            }
            _ => {
                let refused = Counters::add(&self.counters.refused_signature);
                let delivered = self.counters.delivered.load(Ordering::Relaxed);
                if refused.is_power_of_two() {
                    log::warn!(
                        "webhook listener: {refused} deliveries refused ({e}), {delivered} \
                         accepted: if every delivery is refused, the secret is not this \
                         endpoint's"
                    );
                } else {
                    log::info!("webhook listener: a delivery failed verification: {e}");
                }
                Status(401, None)
            }
        }
    }
}
