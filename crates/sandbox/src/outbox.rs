//! The outbox: what a service emits. Webhook events are logged and queued for every
//! receiver that wants them (the delivery worker posts them); stream events go to a
//! broadcast that WebSocket sessions read, each keeping what its tenant and channels ask
//! for. A session that falls behind the broadcast is closed rather than buffered forever.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::service::Service;
use crate::webhooks::Job;

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

    /// Sends a stream event to the sessions listening (none listening is fine).
    pub(crate) fn send(&self, event: StreamEvent) {
        let _ = self.streams.send(Arc::new(event));
    }
}
