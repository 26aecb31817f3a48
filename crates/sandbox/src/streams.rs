//! The open stream (WebSocket) sessions: a registry with a cancel handle per session, so
//! that a control endpoint can drop every open stream connection, or those of one
//! service, for reconnect tests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::service::Service;

/// The open sessions.
#[derive(Default)]
pub(crate) struct Streams {
    next: AtomicU64,
    open: Mutex<HashMap<u64, (Service, Arc<Notify>)>>,
}

/// A registered session: its cancel signal, and its removal from the registry on drop.
pub(crate) struct Session {
    id: u64,
    streams: Arc<Streams>,
    /// Notified when the session must end.
    pub(crate) cancel: Arc<Notify>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(mut open) = self.streams.open.lock() {
            open.remove(&self.id);
        }
    }
}

impl Streams {
    /// Registers a new session of `service`.
    pub(crate) fn register(self: &Arc<Self>, service: Service) -> Session {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = Arc::new(Notify::new());
        if let Ok(mut open) = self.open.lock() {
            open.insert(id, (service, cancel.clone()));
        }
        Session {
            id,
            streams: self.clone(),
            cancel,
        }
    }

    /// Drops every open session (of `service`, when given); returns how many.
    pub(crate) fn drop_all(&self, service: Option<Service>) -> usize {
        let Ok(open) = self.open.lock() else {
            return 0;
        };
        let mut dropped = 0;
        for (s, cancel) in open.values() {
            if service.is_none_or(|wanted| wanted == *s) {
                cancel.notify_one();
                dropped += 1;
            }
        }
        dropped
    }

    /// How many sessions are open (of `service`, when given).
    pub(crate) fn count(&self, service: Option<Service>) -> usize {
        self.open.lock().map_or(0, |open| {
            open.values()
                .filter(|(s, _)| service.is_none_or(|wanted| wanted == *s))
                .count()
        })
    }
}
