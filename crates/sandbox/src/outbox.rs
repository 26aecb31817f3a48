//! The outbox: what a service emits. Webhook events are logged and queued for every
//! receiver that wants them (the delivery worker posts them); stream events go to a
//! broadcast that WebSocket sessions read, each keeping what its tenant and channels ask
//! for. A session that falls behind the broadcast is closed rather than buffered forever.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::clock::rfc3339;
use crate::service::Service;
use crate::state::World;
use crate::webhooks::{Delivery, DeliveryStatus, EventRecord, Job};

/// How many stream events a session may lag behind before it is closed.
pub(crate) const STREAM_BACKLOG: usize = 65_536;

/// One event for stream sessions.
#[derive(Debug, Clone)]
pub(crate) struct StreamEvent {
    /// The service it belongs to.
    pub service: Service,
    /// The tenant (API key) it is for; `None` for every tenant.
    pub tenant: Option<String>,
    /// What sessions subscribe to (a channel name, a symbol, a world id: the service's
    /// own scheme).
    pub channel: String,
    /// The message.
    pub data: Value,
}

/// The outbox's sending half, part of the world.
pub(crate) struct Outbox {
    pub(crate) jobs: Vec<Job>,
    streams: broadcast::Sender<Arc<StreamEvent>>,
}

impl Outbox {
    pub(crate) fn new(streams: broadcast::Sender<Arc<StreamEvent>>) -> Self {
        Outbox {
            jobs: Vec::new(),
            streams,
        }
    }

    /// The broadcast's sender, kept across a reset so open sessions stay subscribed.
    pub(crate) fn sender(&self) -> broadcast::Sender<Arc<StreamEvent>> {
        self.streams.clone()
    }
}

impl World {
    /// Emits a webhook event: logs it and queues a delivery to every receiver that
    /// wants it.
    pub(crate) fn emit(&mut self, event_type: &str, data: Value) {
        let event = EventRecord {
            id: self.ids.next("msg"),
            event_type: event_type.to_owned(),
            timestamp: rfc3339(self.now()),
            data,
        };
        let body = event.body();
        for receiver in self.receivers.iter().filter(|r| r.wants(event_type)) {
            self.deliveries.push(Delivery {
                receiver_id: receiver.id.clone(),
                message_id: event.id.clone(),
                event_type: event.event_type.clone(),
                attempts: 0,
                status: DeliveryStatus::Pending,
                last_status: None,
                last_error: None,
            });
            self.outbox.jobs.push(Job {
                delivery: self.deliveries.len() - 1,
                generation: self.generation,
                url: receiver.url.clone(),
                secret: receiver.secret.clone(),
                message_id: event.id.clone(),
                body: body.clone(),
                attempt: 0,
            });
        }
        self.events.push(event);
    }

    /// Publishes a stream event to the sessions that want it (none listening is fine).
    pub(crate) fn publish(&mut self, event: StreamEvent) {
        let _ = self.outbox.streams.send(Arc::new(event));
    }
}
